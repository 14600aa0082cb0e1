"""Daemon benchmark: how fast an edit becomes searchable, and how fast it is committed.

Generates a synthetic vault (the generator of index_bench.py), makes it a git repository, starts the real
daemon in-process on a loopback port and edits notes one at a time:
- edit-to-searchable: from the write returning to the edited word being found by search (p50/p95 of
  --edits edits); bar p95 ≤ 1 s;
- edit-to-commit: from the write to the commit that holds it (over --commit-edits edits); bar ≤ the
  commit debounce + 1 s.
The floor, measured in the same run on the same vault, is a direct reconcile pass after one edit (what
the daemon must do at least, without the watcher and debounce).

    .venv/bin/python bench/daemon_bench.py [--notes 10000] [--edits 100] [--commit-edits 15]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_bench import generate, git, percentile, wait_for

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.settings import resolve


def main() -> int:
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=100)
    ap.add_argument("--commit-edits", type=int, default=15)
    ap.add_argument("--debounce", type=float, default=1.0)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="agentmd-dbench-"))
    vault = tmp / "vault"
    vault.mkdir()
    generate(vault, args.notes)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "start")
    os.environ.update({"XDG_STATE_HOME": str(tmp / "state"), "XDG_CACHE_HOME": str(tmp / "cache")})
    settings = resolve(vault=str(vault))
    notes = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md"))
    rng = random.Random(5)

    # floor: a direct reconcile pass after one edit, no watcher, no daemon
    floor = []
    with Store(tmp / "floor-cache") as store:
        reconcile(vault, store)
        for i in range(10):
            p = vault / rng.choice(notes)
            p.write_text(p.read_text() + f"\nfloortoken{i}\n")
            t0 = time.perf_counter()
            reconcile(vault, store)
            floor.append(time.perf_counter() - t0)
    git(vault, "commit", "-qam", "floor edits")

    daemon = Daemon(settings, port=0, commit_debounce=args.debounce)
    t0 = time.perf_counter()
    daemon.start()
    wait_for(lambda: not daemon.health()["index_stale"], 600)
    cold = time.perf_counter() - t0
    wait_for(lambda: git(vault, "status", "--porcelain") == "", 60)

    def found(token: str) -> bool:
        assert daemon.store is not None
        return bool(daemon.store.index.search([token], limit=1, include_walled=True).hits)

    searchable = []
    for i in range(args.edits):
        p = vault / rng.choice(notes)
        token = f"zqedit{i}x"
        text = p.read_text()
        t0 = time.perf_counter()
        p.write_text(text + f"\n{token}\n")
        wait_for(lambda token=token: found(token), 30)
        searchable.append(time.perf_counter() - t0)

    wait_for(lambda: git(vault, "status", "--porcelain") == "", 60)
    committed = []
    for i in range(args.commit_edits):
        head = git(vault, "rev-parse", "HEAD")
        p = vault / rng.choice(notes)
        t0 = time.perf_counter()
        p.write_text(p.read_text() + f"\ncommitted{i}\n")
        wait_for(
            lambda head=head: git(vault, "rev-parse", "HEAD") != head and git(vault, "status", "--porcelain") == "", 60
        )
        committed.append(time.perf_counter() - t0)
    daemon.stop()

    result = {
        "notes": args.notes,
        "cold_start_to_first_pass_s": round(cold, 3),
        "floor_direct_reconcile_ms": {"p50": round(statistics.median(floor) * 1000, 1)},
        "edit_to_searchable_ms": {
            "p50": round(percentile(searchable, 0.5) * 1000, 1),
            "p95": round(percentile(searchable, 0.95) * 1000, 1),
            "n": len(searchable),
        },
        "edit_to_commit_ms": {
            "p50": round(percentile(committed, 0.5) * 1000, 1),
            "max": round(max(committed) * 1000, 1),
            "n": len(committed),
            "debounce_ms": args.debounce * 1000,
        },
    }
    result["ratio_searchable_p50_to_floor"] = round(
        result["edit_to_searchable_ms"]["p50"] / result["floor_direct_reconcile_ms"]["p50"], 2
    )
    result["pass"] = {
        "searchable_p95_le_1s": result["edit_to_searchable_ms"]["p95"] <= 1000,
        "commit_le_debounce_plus_1s": result["edit_to_commit_ms"]["max"] <= (args.debounce + 1) * 1000,
    }
    print(json.dumps(result, indent=2))
    s, c = result["edit_to_searchable_ms"], result["edit_to_commit_ms"]
    print(
        f"\n{args.notes} notes: cold start to first pass {cold:.2f}s\n"
        f"  edit -> searchable p50 {s['p50']} ms, p95 {s['p95']} ms over {s['n']} edits (bar p95 <= 1000 ms);"
        f" floor (direct pass) {result['floor_direct_reconcile_ms']['p50']} ms\n"
        f"  edit -> commit p50 {c['p50']} ms, max {c['max']} ms over {c['n']} edits"
        f" (bar <= debounce {args.debounce * 1000:.0f} ms + 1000 ms)"
    )
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
