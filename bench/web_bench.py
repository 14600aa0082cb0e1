"""The page's first paint: how soon "Today" shows at 10,000 notes.

Generates a synthetic vault (index_bench.py's generator), commits it, adds a fortnight of history (commits of
several origins spread over the last 14 days, as the timeline draws them), starts the real daemon in-process
and, once its first pass is done:
- server: the time to answer `GET /ui/` (Today: health line, timeline, recent changes) with the page's
  cookie, p50/p95 over --requests requests; the floor, measured in the same run, is `GET /health` (the
  listener's own round trip);
- browser: headless Chromium (Debian's package) loads Today --loads times; first-contentful-paint from the
  browser's own paint timing, p50/p95 (the bar: ≤ 300 ms); the floor is the paint of a static page served by
  the same daemon (the enter page).

    .venv/bin/python bench/web_bench.py [--notes 10000] [--commits 300] [--requests 40] [--loads 15]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from index_bench import generate, git, percentile, wait_for

from agentmd.engine.client import DaemonClient, access_token
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import resolve
from agentmd.engine.web.session import COOKIE, session_value

ORIGINS = ("capture", "capture", "capture", "enrich", "confirm", "sync", "manual", "retire")


def history(vault: Path, notes: list[str], commits: int) -> None:
    """`commits` small commits over the last 14 days, each with an origin trailer."""
    rng = random.Random(3)
    now = dt.datetime.now(dt.UTC)
    for i in range(commits):
        path = vault / rng.choice(notes)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\nedit {i}\n")
        when = (now - dt.timedelta(days=14 * (commits - i) / commits)).isoformat(timespec="seconds")
        origin = ORIGINS[i % len(ORIGINS)]
        env = {
            **os.environ,
            "GIT_AUTHOR_DATE": when,
            "GIT_COMMITTER_DATE": when,
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "b@example.com",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "b@example.com",
        }
        message = f"{origin}: edit {i}\n\norigin: {origin}\nhost: bench\n"
        subprocess.run(["git", "-C", str(vault), "commit", "-qam", message], check=True, env=env)


def timed_get(port: int, path: str, headers: dict[str, str]) -> float:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers)
    began = time.perf_counter()
    with opener.open(req, timeout=30) as resp:
        resp.read()
        assert resp.status == 200
    return (time.perf_counter() - began) * 1000


def paints(port: int, ticket: str, loads: int, profile: Path) -> tuple[list[float], list[float]]:
    from cdp_helpers import CHROMIUM, browser

    if CHROMIUM is None:
        return [], []
    today, floor = [], []
    fcp = "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0"
    with browser(profile) as b:
        b.open(f"http://127.0.0.1:{port}/ui/enter#{ticket}")
        b.wait("location.pathname === '/ui/' && !!document.getElementById('health')")
        for _ in range(loads):
            b.open(f"http://127.0.0.1:{port}/ui/")
            today.append(float(b.wait(fcp)))
            b.open(f"http://127.0.0.1:{port}/ui/enter")
            floor.append(float(b.wait(fcp)))
    return today, floor


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 0.5), 1), "p95": round(percentile(values, 0.95), 1)} if values else {}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--loads", type=int, default=15)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="agentmd-webbench-"))
    vault = tmp / "vault"
    vault.mkdir()
    generate(vault, args.notes)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "start")
    notes = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md"))
    history(vault, notes, args.commits)
    os.environ.update({"XDG_STATE_HOME": str(tmp / "state"), "XDG_CACHE_HOME": str(tmp / "cache")})
    # lexical only: embedding 10,000 notes would keep the machine busy for the whole run ("a quiet machine")
    settings = dataclasses.replace(resolve(vault=str(vault)), dense=False)
    daemon = Daemon(settings, port=0, commit_debounce=1.0, probe_interval=0)
    daemon.start()
    try:
        wait_for(lambda: not daemon.health()["index_stale"], 900, 0.2)
        wait_for(lambda: "queue" in daemon.status(), 300, 0.2)
        token = access_token(settings.state_dir) or ""
        cookie = {"Cookie": f"{COOKIE}={session_value(token)}"}
        for _ in range(3):
            timed_get(daemon.port, "/ui/", cookie)  # warm
        server = [timed_get(daemon.port, "/ui/", cookie) for _ in range(args.requests)]
        floor = [timed_get(daemon.port, "/health", {}) for _ in range(args.requests)]
        ticket = DaemonClient(daemon.port, token=token).post("/v1/page-ticket", {})["ticket"]
        today, static = paints(daemon.port, ticket, args.loads, tmp / "profile")
    finally:
        daemon.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    out = {
        "notes": args.notes,
        "commits_in_history": args.commits + 1,
        "server_ms": summary(server),
        "server_floor_health_ms": summary(floor),
        "first_paint_today_ms": summary(today),
        "first_paint_floor_static_ms": summary(static),
        "bar_first_paint_ms": 300,
        "ratio_p50_to_floor": round(percentile(today, 0.5) / max(percentile(static, 0.5), 0.1), 2) if today else None,
        "met": bool(today) and percentile(today, 0.95) <= 300,
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
