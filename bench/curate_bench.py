"""Curation benchmark: `groom --propose` and `clusters` on a synthetic 10,000-note vault and `ingest` of the
largest shared vault, each beside a floor measured in the same run.

Floors:
- groom and clusters must read every note and parse it: reading every file and running the note parser over
  it (`parse_note`, what the index itself does) is their floor;
- ingest must write every note it makes, commit them and index them: writing the same bytes as plain files,
  one `git add -A && git commit`, and a reconcile of them is its floor.

Prints one JSON object, then a human summary. Medians of --runs runs (default 3).

    .venv/bin/python bench/curate_bench.py [--notes 10000] [--runs 3] [--corpus vaultofknowledge]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_bench import generate, git

from agentmd.engine.curate.clusters import clusters
from agentmd.engine.curate.groom import propose
from agentmd.engine.curate.host import run_steps
from agentmd.engine.curate.ingest import plan_ingest
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.settings import resolve
from agentmd.rules import load_contract
from agentmd.vault_schema import parse_note

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"


def timed(fn: Callable[[], object], runs: int) -> float:
    values = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        values.append(time.perf_counter() - start)
    return statistics.median(values)


def read_and_parse(root: Path, paths: list[str]) -> None:
    for p in paths:
        parse_note(p, (root / p).read_bytes(), 0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--corpus", default="vaultofknowledge")
    opts = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="curate-bench-"))
    try:
        vault = tmp / "vault"
        generate(vault, opts.notes)
        contract = load_contract(vault).contract
        with Store(tmp / "idx") as store:
            reconcile(vault, store)
            paths = [p for p, *_ in store.catalog.review_rows()]
            floor_read = timed(lambda: read_and_parse(vault, paths), opts.runs)
            groom_s = timed(lambda: propose(vault, store.catalog, contract), opts.runs)
            clusters_s = timed(lambda: clusters(vault, store, tmp / "state"), opts.runs)
            first = json.dumps(clusters(vault, store, tmp / "state"), sort_keys=True)
            same = first == json.dumps(clusters(vault, store, tmp / "state"), sort_keys=True)

        source = CORPORA / opts.corpus
        ing_vault = tmp / "ingest"
        ing_vault.mkdir()
        git(ing_vault, "init", "-q", "-b", "main")
        (ing_vault / "README.md").write_text("# v\n")
        git(ing_vault, "add", "-A")
        git(ing_vault, "commit", "-q", "-m", "start")
        settings = resolve(vault=str(ing_vault), index=str(tmp / "ing-idx"))
        ing_contract = load_contract(ing_vault).contract
        start = time.perf_counter()
        report, step = plan_ingest(ing_vault, [source], ing_contract)
        run_steps(settings, [step])
        ingest_s = time.perf_counter() - start
        start = time.perf_counter()
        _again, again_step = plan_ingest(ing_vault, [source], ing_contract)
        rerun_s = time.perf_counter() - start

        floor_vault = tmp / "floor"
        floor_vault.mkdir()
        git(floor_vault, "init", "-q", "-b", "main")
        start = time.perf_counter()
        for edit in step.edits:
            target = floor_vault / edit.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(edit.text, encoding="utf-8")
        git(floor_vault, "add", "-A")
        git(floor_vault, "commit", "-q", "-m", "floor")
        with Store(tmp / "floor-idx") as fstore:
            reconcile(floor_vault, fstore)
        ingest_floor = time.perf_counter() - start
        result = {
            "notes": opts.notes,
            "groom_propose_s": round(groom_s, 3),
            "clusters_s": round(clusters_s, 3),
            "read_parse_floor_s": round(floor_read, 3),
            "clusters_identical": same,
            "ingest_corpus": opts.corpus,
            "ingest_notes": len(step.edits),
            "ingest_s": round(ingest_s, 3),
            "ingest_floor_s": round(ingest_floor, 3),
            "ingest_rerun_s": round(rerun_s, 3),
            "ingest_rerun_writes": len(again_step.edits),
            "ingest_rejected": dict(report.rejected),
        }
        print(json.dumps(result))
        print(
            f"groom --propose {groom_s:.2f} s, clusters {clusters_s:.2f} s at {opts.notes} notes "
            f"(floor: read and parse every note {floor_read:.2f} s; clusters identical: {same})\n"
            f"ingest of {opts.corpus}: {len(step.edits)} notes in {ingest_s:.2f} s (floor: write, commit and index "
            f"the same notes {ingest_floor:.2f} s); re-ingest {rerun_s:.2f} s, {len(again_step.edits)} writes"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
