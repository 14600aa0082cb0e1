"""Names benchmark: is a note found when the query is its own name?

For each of the four note vaults under the shared corpora (ailurus-zh, dendron-site, obsidian-tasks,
vaultofknowledge), 40 notes outside the walls are sampled with a fixed seed. Each is searched twice with the
default search, as `agentmd search` runs it (its confidence floor included): by its file name read as words
(`dendron.topic.sidebar.graph-panel.md` -> `dendron topic sidebar graph panel`) and by its title. A hit is
the note among the first 1 / first 5 results. The floor, measured in the same run, is a plain search of the
same words: BM25 over any of them
with the index's field boosts (`SearchIndex.search`, no plan, no name match). Latency is per query, p50 and
p99 over both kinds of query.

A third kind asks for the note by its title inside an ordinary question ("what do I know about {title}",
"who is {title}", "notes on {title}", ...: one of QUESTION_FORMS a note, in turn). The floor does not run it.

Bars: found in the top 5 for at least 39 of 40 notes per vault by file name; by a question about its title,
at least 38 of 40.

Prints one JSON object, then a summary.

    .venv/bin/python bench/names_bench.py [--corpora DIR] [--sample 40] [--seed 7] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentmd.engine.index.reconcile import reconcile  # noqa: E402
from agentmd.engine.index.store import Store  # noqa: E402
from agentmd.engine.search.query import search  # noqa: E402
from agentmd.engine.search.searcher import SearchRequest  # noqa: E402
from agentmd.rules import load_contract  # noqa: E402

VAULTS = ("ailurus-zh", "dendron-site", "obsidian-tasks", "vaultofknowledge")
BAR_TOP5 = 39  # of 40, by file name
BAR_QUESTION_TOP5 = 38  # of 40, a title inside a question
SPACERS = str.maketrans({"-": " ", "_": " ", ".": " "})
QUESTION_FORMS = (
    "what do I know about {}",
    "who is {}",
    "notes on {}",
    "summarise what I wrote about {}",
    "what did I note about {} last time",
    "tell me about {} please",
    "remind me what {} is",
    "where did I write about {}",
)


def file_words(path: str) -> str:
    """A note's file name as words: the stem with `-`, `_` and `.` read as spaces."""
    name = path.rsplit("/", 1)[-1]
    stem = name[:-3] if name.lower().endswith(".md") else name
    return " ".join(stem.translate(SPACERS).split())


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_vault(vault: Path, sample: int, seed: int) -> dict[str, Any]:
    contract = load_contract(vault).contract
    with tempfile.TemporaryDirectory(prefix="agentmd-names-") as tmp, Store(Path(tmp)) as store:
        reconcile(vault, store, allow_mass_delete=True)
        rows = [store.catalog.get(p) for p in store.catalog.paths()]
        eligible = sorted(r.path for r in rows if r is not None and r.wall is None and "probe" not in r.flags)
        picked = random.Random(seed).sample(eligible, min(sample, len(eligible)))
        titles = {p: (store.catalog.get(p).title if store.catalog.get(p) else "") for p in picked}
        out: dict[str, Any] = {"notes": len(eligible), "sampled": len(picked)}
        for arm in ("search", "floor"):
            latencies: list[float] = []
            per_kind: dict[str, dict[str, Any]] = {}
            for kind in ("file name", "title", "question") if arm == "search" else ("file name", "title"):
                top1 = top5 = 0
                misses: list[dict[str, Any]] = []
                for n, path in enumerate(picked):
                    query = {
                        "file name": file_words(path),
                        "title": titles[path],
                        "question": QUESTION_FORMS[n % len(QUESTION_FORMS)].format(titles[path]),
                    }[kind]
                    start = time.perf_counter()
                    if arm == "search":
                        response = search(store.index, contract, SearchRequest(query, limit=5), store.catalog)
                        found = [r.note for r in response.results]
                    else:
                        hits = store.index.search(query.split(), limit=5, conjunction=False)
                        found = [hits.load(i).path for i in range(len(hits))]
                    latencies.append(1000 * (time.perf_counter() - start))
                    top1 += bool(found[:1] == [path])
                    top5 += path in found[:5]
                    if path not in found[:5]:
                        misses.append({"path": path, "query": query, "got": found[:3]})
                per_kind[kind] = {"top1": top1, "top5": top5, "misses": misses}
            out[arm] = {
                **per_kind,
                "p50_ms": round(statistics.median(latencies), 3) if latencies else 0.0,
                "p99_ms": round(_pct(latencies, 0.99), 3),
            }
        out["meets_bar"] = out["search"]["file name"]["top5"] >= BAR_TOP5 * len(picked) / 40
        out["meets_question_bar"] = out["search"]["question"]["top5"] >= BAR_QUESTION_TOP5 * len(picked) / 40
        return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()
    corpora = args.corpora if args.corpora.is_dir() else Path("/work/shared/corpora")
    report = {
        "seed": args.seed,
        "bar": f"file name in top 5 for >= {BAR_TOP5}/40 per vault; title in a question >= {BAR_QUESTION_TOP5}/40",
        "vaults": {v: run_vault(corpora / v, args.sample, args.seed) for v in VAULTS},
    }
    text = json.dumps(report, ensure_ascii=False, indent=2)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n", encoding="utf-8")
    print()
    head = ("vault", "arm", "file@1", "file@5", "title@1", "title@5", "quest@1", "quest@5", "p50 ms", "p99 ms")
    print(f"{head[0]:<18} {head[1]:<7} " + " ".join(f"{h:>7}" for h in head[2:]))
    for name, r in report["vaults"].items():
        for arm in ("search", "floor"):
            a = r[arm]
            q = a.get("question", {"top1": "-", "top5": "-"})
            print(
                f"{name:<18} {arm:<7} {a['file name']['top1']:>7} {a['file name']['top5']:>7} {a['title']['top1']:>7}"
                f" {a['title']['top5']:>7} {q['top1']:>7} {q['top5']:>7} {a['p50_ms']:>7.2f} {a['p99_ms']:>7.2f}"
            )
        print(
            f"{'':<18} of {r['sampled']} sampled; file-name bar {'met' if r['meets_bar'] else 'NOT met'},"
            f" question bar {'met' if r['meets_question_bar'] else 'NOT met'}"
        )
    return 0 if all(r["meets_bar"] for r in report["vaults"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
