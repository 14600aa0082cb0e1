"""Capture benchmark: an agent's capture through the daemon's MCP door, and how soon it can be found.

Generates a synthetic vault (the generator of index_bench.py), makes it a git repository, starts the real
daemon in-process on a loopback port and, over one MCP client session:
- capture latency: --captures `memory_capture` calls (distinct titles and bodies, a unique token in each),
  timed as the MCP round trip; bars p50 ≤ 50 ms, p95 ≤ 150 ms;
- capture-to-searchable: right after each capture returns, one `memory_search` for its token must return
  the new path (bar: every capture searchable on return), with that search's round trip;
- committed: after the loop, once git is clean, every captured path is in a commit carrying
  `origin: capture`.
The floor, measured in the same run against the same daemon: the MCP round trip of a trivial call (a
`memory_search` for a word that matches nothing: the protocol alone), and `Capturer.capture` called
in-process for --floor-captures notes of the same kind (same type shape, own folder and titles: the work
alone, without the protocol).

    .venv/bin/python bench/capture_bench.py [--notes 10000] [--captures 200] [--floor-captures 50]
                                            [--profile FILE]

With --clients N, the concurrent run instead: N clients (half HTTP, half MCP) against `agentmd serve` for
--seconds (bench/capture_load.py, which takes the rest of the arguments); bars p99 <= 500 ms, 0 errors,
every acknowledged capture searchable on return and committed.

--profile wraps the daemon's capture and search entry points (they run in the daemon's thread pool) in
cProfile and writes the combined stats to FILE, plus a top-of-list summary on stderr.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
from index_bench import generate, git, percentile, vocabulary, wait_for
from mcp import Client

from agentmd.engine.client import access_token
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import resolve
from agentmd.engine.write.capture import CaptureRequest

CAPTURE_TYPE = "decision"  # MCP captures: memory/decisions
FLOOR_TYPE = "convention"  # in-process floor captures: memory/conventions (same shape, another folder)
NO_MATCH = "zqnomatchzzqv"


def payload(result: Any) -> dict[str, Any]:
    if getattr(result, "is_error", False):
        raise RuntimeError(" ".join(getattr(c, "text", "") for c in result.content) or "tool error")
    data = result.structured_content
    if data is None:
        data = json.loads(result.content[0].text)
    return dict(data)


def ms(values: list[float], *qs: float) -> dict[str, float]:
    out = {f"p{round(q * 100)}": round(percentile(values, q) * 1000, 2) for q in qs}
    out["max"] = round(max(values) * 1000, 2)
    out["n"] = len(values)
    return out


class NoteMaker:
    """Distinct titles and bodies (Zipf-ish words from the vault's vocabulary), one unique token each."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.vocab = vocabulary(random.Random(7))
        self.weights = [1 / (i + 1) for i in range(len(self.vocab))]

    def words(self, k: int) -> str:
        return " ".join(self.rng.choices(self.vocab, weights=self.weights, k=k))

    def make(self, prefix: str, i: int) -> tuple[dict[str, Any], str]:
        token = f"zq{prefix.replace(' ', '')}tok{i:05d}x"
        title = f"{prefix} {i} {self.words(3)}"
        body = (
            f"{self.words(self.rng.randint(20, 50)).capitalize()}.\n\n"
            f"Marker {token}. {self.words(self.rng.randint(30, 80)).capitalize()}.\n"
        )
        return {"title": title, "body": body, "why": f"benchmark note {i}: {self.words(6)}"}, token


class Profiler:
    """One cProfile.Profile switched on around each daemon-side call (the calls never overlap here)."""

    def __init__(self) -> None:
        self.prof = cProfile.Profile()
        self.lock = threading.Lock()

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def inner(*a: Any, **kw: Any) -> Any:
            with self.lock:
                self.prof.enable()
                try:
                    return fn(*a, **kw)
                finally:
                    self.prof.disable()

        return inner


class Timed:
    """Wall time of each call of a daemon-side method (it runs in the daemon's thread pool)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.times: list[float] = []

    def __call__(self, *a: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return self.fn(*a, **kw)
        finally:
            self.times.append(time.perf_counter() - t0)


async def mcp_session(url: str, daemon: Daemon, args: argparse.Namespace) -> dict[str, Any]:
    """The measured loop. Both floors are interleaved with it, so a busy host weighs on all three alike."""
    maker, floor_maker = NoteMaker(11), NoteMaker(23)
    stride = max(1, args.captures // max(1, args.floor_captures))
    out: dict[str, Any] = {
        "capture": [],
        "search": [],
        "trivial": [],
        "inproc": [],
        "searchable": 0,
        "paths": [],
        "misses": [],
    }
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    headers = {"Authorization": f"Bearer {access_token(daemon.settings.state_dir)}"}  # as a configured client sends
    async with Client(streamable_http_client(url, http_client=create_mcp_http_client(headers))) as client:
        # warm-up: the first calls pay for the session, the thread pool's start and caches
        for _ in range(5):
            payload(await client.call_tool("memory_search", {"query": NO_MATCH, "limit": 3, "mode": "fusion"}))

        for i in range(args.captures):
            # floor 1: the protocol alone (a lexical search that matches nothing; the dense arm always finds
            # something near, and embedding the query is search work, not protocol)
            t0 = time.perf_counter()
            r = payload(await client.call_tool("memory_search", {"query": NO_MATCH, "limit": 3, "mode": "fusion"}))
            out["trivial"].append(time.perf_counter() - t0)
            assert not r.get("results"), r

            fields, token = maker.make("bench capture", i)
            t0 = time.perf_counter()
            got = payload(await client.call_tool("memory_capture", {**fields, "type": CAPTURE_TYPE}))
            t1 = time.perf_counter()
            found = payload(await client.call_tool("memory_search", {"query": token, "limit": 3}))
            t2 = time.perf_counter()
            out["capture"].append(t1 - t0)
            out["search"].append(t2 - t1)
            path = got["path"]
            out["paths"].append(path)
            if path in [h["path"] for h in found.get("results", [])]:
                out["searchable"] += 1
            else:
                out["misses"].append({"path": path, "token": token, "indexed": got.get("indexed")})

            # floor 2: the work alone, in-process (the Capturer the tool reaches; own folder and titles)
            if i % stride == stride - 1 and len(out["inproc"]) < args.floor_captures:
                f_fields, _ = floor_maker.make("floor capture", len(out["inproc"]))
                req = CaptureRequest(**f_fields, type=FLOOR_TYPE)
                t0 = time.perf_counter()
                res = daemon.capturer.capture(req)
                out["inproc"].append(time.perf_counter() - t0)
                assert res.indexed and not res.reinforced, res
    return out


def main() -> int:
    import logging

    if any(a == "--clients" or a.startswith("--clients=") for a in sys.argv[1:]):
        from capture_load import main as concurrent

        return concurrent(sys.argv[1:])

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for h in logging.getLogger().handlers:  # the daemon turns `agentmd` up to INFO for its own log file
        h.setLevel(logging.WARNING)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--captures", type=int, default=200)
    ap.add_argument("--floor-captures", type=int, default=50)
    ap.add_argument("--debounce", type=float, default=1.0)
    ap.add_argument("--profile", metavar="FILE", help="cProfile the daemon-side capture/search calls into FILE")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="agentmd-cbench-"))
    vault = tmp / "vault"
    vault.mkdir()
    generate(vault, args.notes)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "start")
    os.environ.update(
        {
            "XDG_STATE_HOME": str(tmp / "state"),
            "XDG_CACHE_HOME": str(tmp / "cache"),
            "AGENTMD_DAILY_WRITE_CAP": str(10 * (args.captures + args.floor_captures) + 100),
        }
    )
    settings = resolve(vault=str(vault))

    daemon = Daemon(settings, port=0, commit_debounce=args.debounce, probe_interval=0)
    profiler = Profiler() if args.profile else None
    if profiler is not None:
        daemon.capture = profiler.wrap(daemon.capture)  # type: ignore[method-assign]
        daemon.search = profiler.wrap(daemon.search)  # type: ignore[method-assign]
    inside = Timed(daemon.capture)  # the tool's call into the daemon, as the server's thread pool runs it
    daemon.capture = inside  # type: ignore[method-assign]
    t0 = time.perf_counter()
    daemon.start()
    try:
        wait_for(lambda: not daemon.health()["index_stale"], 600)
        cold = time.perf_counter() - t0
        wait_for(lambda: git(vault, "status", "--porcelain") == "", 60)

        url = f"http://127.0.0.1:{daemon.port}/mcp"
        passes_before = daemon.passes
        load_before = os.getloadavg()[0]
        run = anyio.run(mcp_session, url, daemon, args)
        load_after = os.getloadavg()[0]
        passes_during = daemon.passes - passes_before  # indexer passes the watcher ran beside the captures

        t_clean = time.perf_counter()
        wait_for(lambda: git(vault, "status", "--porcelain") == "", 120)
        clean_after = time.perf_counter() - t_clean
    finally:
        daemon.stop()

    capture_commits = git(vault, "log", "--format=%H", "--grep=^origin: capture$").split()
    committed_paths = set(git(vault, "log", "--format=", "--name-only", "--grep=^origin: capture$").split("\n"))
    committed_paths.discard("")
    bench_paths = set(run["paths"])
    uncommitted = sorted(bench_paths - committed_paths)

    cap, srch, triv, inproc = run["capture"], run["search"], run["trivial"], run["inproc"]
    result: dict[str, Any] = {
        "notes": args.notes,
        "cold_start_to_first_pass_s": round(cold, 3),
        "loadavg_1m": {"before": round(load_before, 2), "after": round(load_after, 2), "cpus": os.cpu_count()},
        "capture_mcp_ms": ms(cap, 0.5, 0.95),
        "capture_daemon_side_ms": ms(inside.times, 0.5, 0.95),
        "search_after_capture_mcp_ms": ms(srch, 0.5, 0.95),
        "searchable_on_return": {"n": run["searchable"], "of": len(cap), "misses": run["misses"][:10]},
        "indexer_passes_during_loop": passes_during,
        "floor": {
            "trivial_mcp_call_ms": ms(triv, 0.5, 0.95),
            "inprocess_capture_ms": ms(inproc, 0.5, 0.95),
        },
        "commits": {
            "origin_capture_commits": len(capture_commits),
            "captured_paths": len(bench_paths),
            "captured_paths_committed": len(bench_paths & committed_paths),
            "uncommitted": uncommitted[:10],
            "git_clean_after_loop_s": round(clean_after, 3),
            "debounce_s": args.debounce,
        },
    }
    p50_cap = result["capture_mcp_ms"]["p50"]
    p50_triv = result["floor"]["trivial_mcp_call_ms"]["p50"]
    p50_work = result["floor"]["inprocess_capture_ms"]["p50"]
    result["breakdown_p50_ms"] = {
        "capture_round_trip": p50_cap,
        "protocol_floor": p50_triv,
        "inprocess_work_floor": p50_work,
        "other": round(p50_cap - p50_triv - p50_work, 2),
        "daemon_side": result["capture_daemon_side_ms"]["p50"],
    }
    result["ratio_capture_p50_to_floor_sum"] = round(p50_cap / (p50_triv + p50_work), 2)
    result["pass"] = {
        "capture_p50_le_50ms": p50_cap <= 50,
        "capture_p95_le_150ms": result["capture_mcp_ms"]["p95"] <= 150,
        "all_searchable_on_return": run["searchable"] == len(cap),
        "all_captures_committed": not uncommitted and len(bench_paths) == len(cap),
    }
    print(json.dumps(result, indent=2))

    c, d, s = result["capture_mcp_ms"], result["capture_daemon_side_ms"], result["search_after_capture_mcp_ms"]
    t, w = result["floor"]["trivial_mcp_call_ms"], result["floor"]["inprocess_capture_ms"]
    ok = result["pass"]

    def mark(b: bool) -> str:
        return "PASS" if b else "FAIL"

    print(
        f"\n{args.notes} notes: cold start to first pass {cold:.2f}s;"
        f" load average {load_before:.2f} -> {load_after:.2f} on {os.cpu_count()} CPUs\n"
        f"  capture over MCP   p50 {c['p50']} ms  [{mark(ok['capture_p50_le_50ms'])} <= 50]"
        f"  p95 {c['p95']} ms  [{mark(ok['capture_p95_le_150ms'])} <= 150]  max {c['max']} ms  (n={c['n']});"
        f" inside the daemon p50 {d['p50']} ms, p95 {d['p95']} ms\n"
        f"  searchable on return {run['searchable']}/{len(cap)}  [{mark(ok['all_searchable_on_return'])} all];"
        f" search round trip p50 {s['p50']} ms, p95 {s['p95']} ms\n"
        f"  floor: trivial MCP call p50 {t['p50']} ms, p95 {t['p95']} ms;"
        f" in-process Capturer.capture p50 {w['p50']} ms, p95 {w['p95']} ms (n={w['n']})\n"
        f"  p50: {p50_cap} ms = protocol {p50_triv} + work {p50_work} + {result['breakdown_p50_ms']['other']} other"
        f" ({result['ratio_capture_p50_to_floor_sum']}x the floors); {passes_during} watcher passes ran beside\n"
        f"  committed: {len(bench_paths & committed_paths)}/{len(bench_paths)} captured paths in"
        f" {len(capture_commits)} `origin: capture` commits  [{mark(ok['all_captures_committed'])} all];"
        f" git clean {clean_after:.2f}s after the loop"
    )

    if profiler is not None:
        profiler.prof.dump_stats(args.profile)
        buf = io.StringIO()
        pstats.Stats(args.profile, stream=buf).sort_stats("cumulative").print_stats(40)
        print(buf.getvalue(), file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if all(ok.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
