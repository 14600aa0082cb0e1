"""A huge note in a running daemon: time to searchable by size, the cost of a search that finds it, and the
daemon's memory before, with and after it.

A vault of `--notes` generated notes is served by a real daemon (lexical only: the dense arm embeds every
window of a note, which is linear in its size and measured by bench/dense_bench.py). Then, for each size in
`--sizes` (MB), a note of many short sections (`## Heading i` and a line, the shape of a long log or an
exported chat) is written whole into the vault, and the bench measures:

- searchable_s: from the write until a word of its last section finds it (the index's own work, per MB:
  linear when s_per_mb stays level across sizes);
- search p50/p95 of queries whose best result is a deep section of the huge note, against queries whose best
  result is a small note (the floor, in the same run): `huge_over_small` is the ratio of the p50s;
- the daemon's RSS before the note, with it (after the searches) and after it is deleted and gone from
  search: `rss_after_delete_mib - rss_before_mib` is what the daemon kept.

    python bench/huge_note_bench.py --notes 500 --sizes 1 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hook_bench import bench_env, daemon_pid, stop_daemon, wait_for_daemon
from index_bench import generate, percentile

from agentmd.engine.client import DaemonClient, access_token
from agentmd.engine.settings import resolve

LINE = "entry {i} records the {w} reading of gauge {i} at the station"
WORDS = ("quartz", "amber", "cobalt", "saffron", "indigo", "umber", "viridian", "ochre")


def huge_text(mb: float) -> tuple[str, int]:
    """A note of about `mb` MB: many short sections; (text, sections)."""
    parts = ["---\ntitle: Station log\n---\n"]
    size, i = 0, 0
    while size < mb * 1_000_000:
        part = f"## Reading {i}\n" + LINE.format(i=i, w=WORDS[i % len(WORDS)]) + "\n\n"
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts), i


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def found(client: DaemonClient, query: str, path: str) -> bool:
    rows = client.post("/v1/search", {"query": query, "limit": 5, "floor": 0}).get("results", [])
    return any(str(r.get("path", "")).split("#", 1)[0] == path for r in rows)  # a path may end in #section


def timed(client: DaemonClient, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        client.post("/v1/search", {"query": q, "limit": 5})
        out.append((time.perf_counter() - t0) * 1000)
    return out


def wait(pred, timeout: float) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    deadline = t0 + timeout
    while time.perf_counter() < deadline:
        if pred():
            return time.perf_counter() - t0
        time.sleep(0.05)
    raise SystemExit(f"not done within {timeout:.0f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=500)
    ap.add_argument("--sizes", type=float, nargs="+", default=[1.0, 5.0], help="sizes of the huge note, in MB")
    ap.add_argument("--queries", type=int, default=20)
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a `timeout` still stops the daemon (finally)
    work = Path(tempfile.mkdtemp(prefix="agentmd-huge-bench-"))
    vault = work / "vault"
    env = {**bench_env(work, vault), "AGENTMD_DENSE": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    serve: subprocess.Popen[bytes] | None = None
    try:
        titles = generate(vault, args.notes)
        settings = resolve(vault=str(vault), env=env)
        serve = subprocess.Popen(
            [sys.executable, "-m", "agentmd", "serve", "--port", "0"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        port = wait_for_daemon(settings.state_dir, serve)
        pid = daemon_pid(settings.state_dir)
        client = DaemonClient(port, timeout=120.0, token=access_token(settings.state_dir))
        small = [t for t in titles if len(t.split()) >= 3][: args.queries]
        timed(client, small[:5])  # warm
        small_ms = timed(client, small)
        rss_before = rss_mib(pid)
        rows = []
        for mb in args.sizes:
            text, sections = huge_text(mb)
            rel = f"logs/station-{mb:g}mb.md"
            target = vault / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            t0 = time.perf_counter()
            os.replace(tmp, target)
            last = sections - 1
            probe = f"gauge {last} {WORDS[last % len(WORDS)]}"
            wait(lambda probe=probe, rel=rel: found(client, probe, rel), 900)
            searchable_s = time.perf_counter() - t0
            deep = [sections * (k + 1) // (args.queries + 1) for k in range(args.queries)]
            queries = [f"gauge {i} {WORDS[i % len(WORDS)]} reading" for i in deep]
            hits = sum(found(client, q, rel) for q in queries[:5])
            huge_ms = timed(client, queries)
            rss_with = rss_mib(pid)
            target.unlink()
            wait(lambda probe=probe, rel=rel: not found(client, probe, rel), 300)
            time.sleep(2.0)  # let the allocator return what the pass freed
            rows.append({
                "mb": mb, "sections": sections, "searchable_s": round(searchable_s, 2),
                "s_per_mb": round(searchable_s / mb, 2), "found_of_5": hits,
                "huge_p50_ms": round(percentile(huge_ms, 0.5), 1), "huge_p95_ms": round(percentile(huge_ms, 0.95), 1),
                "huge_over_small": round(percentile(huge_ms, 0.5) / max(percentile(small_ms, 0.5), 0.01), 2),
                "rss_with_mib": rss_with, "rss_after_delete_mib": rss_mib(pid),
            })  # fmt: skip
        print(json.dumps({
            "notes": args.notes,
            "small_p50_ms": round(percentile(small_ms, 0.5), 1), "small_p95_ms": round(percentile(small_ms, 0.95), 1),
            "rss_before_mib": rss_before, "sizes": rows,
        }, indent=2))  # fmt: skip
        return 0
    finally:
        stop_daemon(serve)  # before the work folder goes, so no daemon outlives the bench
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
