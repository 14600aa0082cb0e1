"""Start-up benchmark: how soon a daemon on a vault whose index is already built answers.

Generates a synthetic vault (the generator of index_bench.py), makes it a git repository, builds its index
(`agentmd reindex --no-dense` in its own process) and lets a first daemon run its first pass and stop, so the
next start finds the index, the catalog and the stat snapshot as a daemon leaves them. Then it starts
`agentmd serve` again (`--starts` times) and measures, from the moment the command is launched:

- `health_s`: `/health` answers;
- `search_s`: `/v1/search` for the title of a note in the vault answers with results (the index is open);
- `status_s`: `/status` answers (and with which colour: it must not be red while the start-up pass runs);
- `pass_s`: the start-up pass has ended (`/health` no longer says `index_stale`);
- `dense_s` (with `--dense`): the dense arm has loaded (status's `dense.state` is past `loading`);
- RSS of the daemon process when search first answered, when the pass ended and when the dense arm loaded.

Bar (issue #39): at 100,000 notes a daemon on a built index answers a search and `/status` within 10 s.
The daemon runs lexical only by default (AGENTMD_DENSE=0): with `--dense` the dense arm is on too (it loads
the model and embeds in the background; what is measured here is that it does not hold the start back).

With `--compare PYTHON` the starts alternate between this checkout's daemon and the one PYTHON runs (another
checkout's venv, e.g. the code before a change), so both sides see the same load on a shared machine.

    .venv/bin/python bench/start_bench.py [--notes 20000] [--starts 3] [--keep DIR] [--dense [--vectors]]
        [--compare OTHER/.venv/bin/python] [--no-prime]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hook_bench import bench_env, stop_daemon, wait_for_daemon
from index_bench import generate, git
from search_bench import fill_vectors, rss_kib

from agentmd.engine.client import access_token
from agentmd.engine.index.store import Store
from agentmd.engine.settings import resolve

BAR_S = 10.0
POLL = 0.05


def build(vault: Path, notes: int, env: dict[str, str], prime: bool = True) -> dict[str, float]:
    """The vault, its git history and its index, as a daemon that ran once and stopped leaves them."""
    out: dict[str, float] = {}
    if not (vault / ".complete").is_file():
        t0 = time.perf_counter()
        vault.mkdir(parents=True, exist_ok=True)
        generate(vault, notes)
        git(vault, "init", "-q", "-b", "main")
        git(vault, "add", "-A")
        git(vault, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "start")
        (vault / ".complete").write_text(str(notes), encoding="utf-8")
        out["generate_s"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "agentmd", "reindex", "--no-dense"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        out["build_s"] = round(time.perf_counter() - t0, 1)
    if not prime and "generate_s" not in out:
        return out
    settings = resolve(vault=str(vault), env=env)
    t0 = time.perf_counter()
    proc = launch(env)
    try:
        wait_for_daemon(settings.state_dir, proc, timeout=3600)  # the first daemon's first pass
    finally:
        stop_daemon(proc, timeout=600)
    out["first_daemon_s"] = round(time.perf_counter() - t0, 1)
    return out


def launch(env: dict[str, str], python: str = sys.executable) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [python, "-m", "agentmd", "serve", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def call(port: int, token: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """One request to the daemon; None when it does not answer with 200 (yet)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method="GET" if body is None else "POST")
    req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=30) as resp:
            return dict(json.loads(resp.read()))
    except (OSError, ValueError, urllib.error.HTTPError):
        return None


def one_start(
    env: dict[str, str], state_dir: Path, query: str, timeout: float, dense: bool, python: str = sys.executable
) -> dict[str, Any]:
    (state_dir / "daemon.json").unlink(missing_ok=True)  # left by a daemon that was killed, not stopped
    t0 = time.perf_counter()
    proc = launch(env, python)
    got: dict[str, Any] = {}
    port = pid = 0
    token = ""
    try:
        while time.perf_counter() - t0 < timeout:
            if proc.poll() is not None:
                raise SystemExit(f"agentmd serve exited with {proc.returncode}")
            now = lambda: round(time.perf_counter() - t0, 3)  # noqa: E731
            if not port:
                try:
                    info = json.loads((state_dir / "daemon.json").read_text())
                    port, pid = int(info["port"]), int(info["pid"])
                    token = access_token(state_dir) or ""
                except (OSError, ValueError, KeyError):
                    time.sleep(POLL)
                    continue
            health = call(port, token, "/health")
            if health is not None and "health_s" not in got:
                got["health_s"] = now()
            if "search_s" not in got:
                answer = call(port, token, "/v1/search", {"query": query, "mode": "fusion", "count_usage": False})
                if answer is not None and answer.get("results"):
                    got["search_s"] = now()
                    got["search_index_stale"] = answer.get("index_stale")
                    got["rss_at_search_mib"] = round(rss_kib(pid) / 1024, 1)
            if "status_s" not in got:
                status = call(port, token, "/status")
                if status is not None:
                    got["status_s"] = now()
                    got["status_color"] = status.get("color")
                    got["status_red"] = status.get("red")
            if health is not None and health.get("index_stale") is False and "search_s" in got and "pass_s" not in got:
                got["pass_s"] = now()
                got["rss_at_pass_end_mib"] = round(rss_kib(pid) / 1024, 1)
            if "pass_s" in got:
                if not dense:
                    break
                state = ((call(port, token, "/status") or {}).get("dense") or {}).get("state")
                if state not in (None, "loading"):
                    got["dense_s"] = now()  # the dense arm loaded (model and vectors): hybrid searches fuse both
                    got["dense_state"] = state
                    got["rss_at_dense_mib"] = round(rss_kib(pid) / 1024, 1)
                    break
            time.sleep(POLL)
    finally:
        stop_daemon(proc, timeout=600)
    return got


def medians(starts: list[dict[str, Any]]) -> dict[str, float]:
    out = {}
    keys = ("health_s", "search_s", "status_s", "pass_s", "dense_s")
    for key in (*keys, "rss_at_search_mib", "rss_at_pass_end_mib", "rss_at_dense_mib"):
        values = [s[key] for s in starts if key in s]
        if values:
            out[key] = round(statistics.median(values), 3)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=20_000)
    ap.add_argument("--starts", type=int, default=3, help="starts measured (each on the same built index)")
    ap.add_argument("--dense", action="store_true", help="leave the dense arm on (the model loads and embeds)")
    ap.add_argument(
        "--vectors",
        action="store_true",
        help="with --dense: fill the vector store with search_bench's stand-in vectors first (every chunk covered, "
        "as after hours of embedding), so each start loads a full store",
    )
    ap.add_argument(
        "--no-prime", action="store_true", help="a kept vault: skip the first daemon's run before the starts"
    )
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds one start may take to its pass's end")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (a vault built there is reused)")
    ap.add_argument(
        "--compare",
        metavar="PYTHON",
        help="also start the daemon with this interpreter (another checkout's venv: the code before a change), "
        "its starts interleaved with this one's, each side's medians reported apart",
    )
    args = ap.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="agentmd-start-"))
    work.mkdir(parents=True, exist_ok=True)
    vault = work / "vault"
    env = bench_env(work, vault)
    if not args.dense:
        env["AGENTMD_DENSE"] = "0"
    try:
        result: dict[str, Any] = {"notes": args.notes, "dense": args.dense}
        result["load_average_1min_at_start"] = round(os.getloadavg()[0], 2)
        result |= build(vault, args.notes, env, prime=not args.no_prime)
        settings = resolve(vault=str(vault), env=env)
        if args.dense and args.vectors and not (settings.cache_dir / "vectors.npz").exists():
            with Store(settings.cache_dir) as store:
                hashes = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
            t0 = time.perf_counter()
            result["vectors"] = fill_vectors(settings.cache_dir, vault, hashes, real=False)
            result["vectors"]["fill_s"] = round(time.perf_counter() - t0, 1)
        note = next(p for p in sorted(vault.rglob("*.md")) if "/." not in str(p))
        query = note.stem.rsplit("-", 1)[0].replace("-", " ")
        sides = {"this": sys.executable, **({"compared": args.compare} if args.compare else {})}
        runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
        for i in range(args.starts):
            order = list(sides.items())
            for side, python in order[::-1] if i % 2 else order:  # each side goes first in every other round
                runs[side].append(one_start(env, settings.state_dir, query, args.timeout, args.dense, python))
        for side, starts in runs.items():
            out = result if side == "this" else result.setdefault("compared", {"python": args.compare})
            out["starts"] = starts
            out |= medians(starts)
        result["bar_s"] = BAR_S
        result["pass"] = max(result.get("search_s", 1e9), result.get("status_s", 1e9)) <= BAR_S
        result["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)  # the machine is shared
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
