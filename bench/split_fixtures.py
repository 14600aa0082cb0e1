"""Split a combined fixture file into its dev part and its holdout part, the same way every time.

    .venv/bin/python bench/split_fixtures.py ALL.jsonl

A fifth of each (corpus, category) group, drawn with a fixed seed, goes to `bench/fixtures/holdout-<corpus>.jsonl`,
the rest to `bench/fixtures/dev-<corpus>-2.jsonl`. Lines keep their order inside each file.
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

SEED = 20240607
HOLDOUT_SHARE = 0.2
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def holdout_ids(cases: list[dict[str, Any]], seed: int = SEED) -> set[str]:
    """The ids held out: round(share * n) of each (corpus, category) group, drawn in id order with one generator."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for case in cases:
        groups[(case["corpus"], case["category"])].append(case["id"])
    rng = random.Random(seed)
    chosen: set[str] = set()
    for key in sorted(groups):
        ids = sorted(groups[key])
        chosen.update(rng.sample(ids, round(len(ids) * HOLDOUT_SHARE)))
    return chosen


def main(argv: list[str]) -> int:
    source = Path(argv[1])
    cases = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    held = holdout_ids(cases)
    for corpus in sorted({c["corpus"] for c in cases}):
        mine = [c for c in cases if c["corpus"] == corpus]
        for name, part in ((f"dev-{corpus}-2.jsonl", False), (f"holdout-{corpus}.jsonl", True)):
            lines = [json.dumps(c, ensure_ascii=False) + "\n" for c in mine if (c["id"] in held) == part]
            (FIXTURES / name).write_text("".join(lines), encoding="utf-8")
            print(f"{name}: {len(lines)} queries")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
