"""Sync pull benchmark: another machine changed 1,000 notes; how soon are they searchable here, and what does
the pull do to search meanwhile?

Generates a vault of --notes notes (the generator of index_bench.py), pushes it to a bare remote and clones
it twice: the other machine's clone changes --changed notes (a line with a unique word each) and pushes. On
this machine the real daemon runs in-process on the first vault (its own `sync` job switched off, so the
round runs when the bench asks); the bench asks for one round (`POST /v1/sync`, as `agentmd sync` does)
and measures:

- sync-to-searchable: from the request to every changed note being found by its new word;
- search latency (`POST /v1/search`, a thread asking one query after another) before the pull and while
  it runs (p50/p99), and while the daemon re-embeds the changed chunks afterwards;
- whether the round made the daemon walk the whole vault (a full pass recorded meanwhile) and how many
  chunks it queued for embedding (only the changed notes' chunks should be).

The floors, measured in the same run on a third clone: `git pull --ff-only` of the same commit, and a
direct reconcile of the changed paths into an index of the vault (`reconcile(only=...)`), the least the
daemon must do.

    .venv/bin/python bench/sync_pull_bench.py [--notes 3000] [--changed 1000] [--no-dense]
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
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_bench import generate, git, percentile, wait_for

from agentmd.engine.client import DaemonClient, access_token
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.reconcile import last_pass, reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.settings import resolve

ALL = "zqpullall"  # a word every changed note gets, to count them in one search


def _ms(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "p50": round(percentile(values, 0.5) * 1000, 2),
        "p99": round(percentile(values, 0.99) * 1000, 2),
        "max": round(max(values) * 1000, 2),
        "n": len(values),
    }


class Searcher(threading.Thread):
    """Asks the daemon one search after another, recording (start, seconds) of each."""

    def __init__(self, client: DaemonClient, queries: list[str]) -> None:
        super().__init__(daemon=True)
        self.client, self.queries = client, queries
        self.stop = threading.Event()
        self.samples: list[tuple[float, float]] = []

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            q = self.queries[i % len(self.queries)]
            i += 1
            t0 = time.perf_counter()
            self.client.post("/v1/search", {"query": q, "limit": 10, "count_usage": False})
            self.samples.append((t0, time.perf_counter() - t0))

    def between(self, start: float, end: float) -> list[float]:
        return [s for t, s in list(self.samples) if start <= t < end]


def _dense_done(daemon: Daemon) -> bool:
    dense = daemon.status().get("dense") or {}
    if dense.get("state") in (None, "off", "unavailable", "stopped") or "chunks_total" not in dense:
        return dense.get("state") not in ("loading",)
    return bool(dense["chunks_total"]) and dense["chunks_done"] >= dense["chunks_total"]


def main() -> int:
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=3000)
    ap.add_argument("--changed", type=int, default=1000)
    ap.add_argument("--baseline-searches", type=int, default=400)
    ap.add_argument("--floor-runs", type=int, default=3)
    ap.add_argument("--no-dense", action="store_true", help="the daemon searches lexical-only (no embedding)")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="agentmd-pullbench-"))
    vault, bare, other, floor_clone = tmp / "vault", tmp / "remote.git", tmp / "other", tmp / "floor"
    vault.mkdir()
    generate(vault, args.notes)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "start")
    git(tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    git(vault, "remote", "add", "origin", str(bare))
    git(vault, "push", "-q", "origin", "main")
    git(tmp, "clone", "-q", str(bare), str(other))
    git(tmp, "clone", "-q", str(bare), str(floor_clone))
    start = git(vault, "rev-parse", "HEAD").strip()

    notes = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md"))
    rng = random.Random(11)
    changed = rng.sample(notes, min(args.changed, len(notes)))
    for i, rel in enumerate(changed):
        p = other / rel
        p.write_text(p.read_text() + f"\nchanged on the other machine zqpull{i}x {ALL}\n")
    git(other, "commit", "-q", "-am", f"{len(changed)} notes changed")
    git(other, "push", "-q", "origin", "main")
    pulled = git(other, "rev-parse", "HEAD").strip()

    # the floors: git bringing the commit in, and a direct reconcile of the changed paths
    floor_git, floor_reconcile = [], []
    with Store(tmp / "floor-cache") as store:
        reconcile(floor_clone, store)
        for _ in range(args.floor_runs):
            t0 = time.perf_counter()
            git(floor_clone, "pull", "-q", "--ff-only", "origin", "main")
            floor_git.append(time.perf_counter() - t0)
            paths = set(git(floor_clone, "diff", "--name-only", start, pulled).split())
            t0 = time.perf_counter()
            report = reconcile(floor_clone, store, only=paths)
            floor_reconcile.append(time.perf_counter() - t0)
            assert report.updated == len(changed), report.to_dict()
            git(floor_clone, "reset", "-q", "--hard", start)  # back, for the next run
            reconcile(floor_clone, store, only=paths)

    env = {"XDG_STATE_HOME": str(tmp / "state"), "XDG_CACHE_HOME": str(tmp / "cache"), "HOME": str(tmp / "home")}
    env["XDG_CONFIG_HOME"] = str(tmp / "config")
    if args.no_dense:
        env["AGENTMD_DENSE"] = "0"
    os.environ.update(env)
    jobs = tmp / "config" / "agentmd" / "jobs"
    jobs.mkdir(parents=True)
    (jobs / "sync.toml").write_text("enabled = false\n")  # the round runs when the bench asks, not on schedule
    (jobs.parent / "config.toml").write_text("")  # the jobs folder is read beside a config file
    settings = resolve(vault=str(vault))
    daemon = Daemon(settings, port=0, commit_debounce=1.0, probe_interval=0, health_interval=0)
    daemon.start()
    try:
        wait_for(lambda: not daemon.health()["index_stale"], 600)
        started = time.perf_counter()
        wait_for(lambda: _dense_done(daemon), 1800, step=0.5)
        initial_embed = time.perf_counter() - started
        client = DaemonClient(daemon.port, timeout=600, token=access_token(settings.state_dir))
        texts = [(vault / rel).read_text().split() for rel in rng.sample(notes, 200)]
        queries = [" ".join(rng.sample(words, 2)) for words in texts if len(words) >= 2]
        assert daemon.store is not None
        store = daemon.store
        full_pass_before = (last_pass(store) or {}).get("at")

        searcher = Searcher(client, queries)
        searcher.start()
        wait_for(lambda: len(searcher.samples) >= args.baseline_searches, 600, step=0.05)
        t0 = time.perf_counter()
        answer: dict[str, Any] = {}

        def ask() -> None:
            answer.update(client.post("/v1/sync", {}))
            answer["_returned"] = time.perf_counter()

        asker = threading.Thread(target=ask)
        asker.start()
        wait_for(
            lambda: len(store.index.search([ALL], limit=len(changed) + 10, include_walled=True).hits) >= len(changed),
            600,
        )
        t_searchable = time.perf_counter()
        asker.join()
        full_pass_after = (last_pass(store) or {}).get("at")  # before the wait below, which a scheduled pass may end
        t_reembed_start = time.perf_counter()
        dense_after = dict(daemon.status().get("dense") or {})
        if not args.no_dense:  # the embedder takes the changed notes up once the round's pass has woken it
            queued: dict[str, Any] = {}

            def seen() -> bool:
                queued.update(daemon.status().get("dense") or {})
                return (queued.get("chunks_done") or 0) < (queued.get("chunks_total") or 0)

            try:
                wait_for(seen, 30, step=0.01)
                dense_after = dict(queued)
            except TimeoutError:
                pass  # embedded before it could be seen: the counts below say so
        wait_for(lambda: _dense_done(daemon), 1800, step=0.1)
        t_reembedded = time.perf_counter()
        searcher.stop.set()
        searcher.join()
        missing = [
            i for i in range(len(changed)) if not store.index.search([f"zqpull{i}x"], limit=1, include_walled=True).hits
        ]
        before = searcher.between(0.0, t0)
        during = searcher.between(t0, t_searchable)
        reembed = searcher.between(t_reembed_start, t_reembedded)
    finally:
        daemon.stop()

    to_searchable = t_searchable - t0
    floor_r = statistics.median(floor_reconcile)
    floor_g = statistics.median(floor_git)
    result: dict[str, Any] = {
        "notes": len(notes),
        "changed": len(changed),
        "dense": not args.no_dense,
        "sync_outcome": answer.get("outcome"),
        "sync_changed_paths": len(answer.get("changed") or []),
        "floor_git_pull_s": round(floor_g, 3),
        "floor_reconcile_changed_s": round(floor_r, 3),
        "sync_call_s": round(answer["_returned"] - t0, 3),
        "sync_to_all_searchable_s": round(to_searchable, 3),
        "ratio_searchable_to_reconcile_floor": round(to_searchable / floor_r, 2),
        "ratio_searchable_to_git_plus_reconcile_floor": round(to_searchable / (floor_g + floor_r), 2),
        "not_searchable_after": len(missing),
        "full_pass_during_sync": full_pass_after != full_pass_before,
        "dense_after_sync": {k: dense_after.get(k) for k in ("state", "chunks_done", "chunks_total", "notes_total")},
        "dense_chunks_queued_after_sync": (dense_after.get("chunks_total") or 0)
        - (dense_after.get("chunks_done") or 0),
        "initial_embed_s": round(initial_embed, 3),
        "reembed_s": round(t_reembedded - t_reembed_start, 3),
        "search_ms_before": _ms(before),
        "search_ms_during_pull": _ms(during),
        "search_ms_during_reembed": _ms(reembed),
    }
    if before and during:
        result["ratio_search_p50_during_to_before"] = round(percentile(during, 0.5) / percentile(before, 0.5), 2)
        result["ratio_search_p99_during_to_before"] = round(percentile(during, 0.99) / percentile(before, 0.99), 2)
    if before and reembed:
        result["ratio_search_p99_reembed_to_before"] = round(percentile(reembed, 0.99) / percentile(before, 0.99), 2)
    print(json.dumps(result, indent=2))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
