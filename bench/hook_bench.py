"""Recall hook benchmark: end-to-end latency of the UserPromptSubmit hook, process start to exit.

Generates a synthetic vault (the generator of index_bench.py), starts the real daemon (`agentmd serve`) in
its own process on a loopback port, and runs the hook the way Claude Code does: a new process per prompt
(`agentmd-hook recall`, i.e. `hooks.entry:main`), the payload on stdin, its stdout read to the end.
Prompts are written like real ones: a question built from words that occur in the vault, with code
blocks, URLs and paths the hook must strip. Reported:

- with the daemon up: p50/p95 over --prompts prompts; bar p95 <= 300 ms (Python start-up included);
- the floor of the same run: a bare `python -c pass` start-up and the light entry point's imports alone;
- without a daemon (the in-process fallback): p50/p95 over a few prompts, for reference.

Prints one JSON object, then a human summary.

    .venv/bin/python bench/hook_bench.py [--notes 10000] [--prompts 50] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_bench import generate, percentile

from agentmd.engine.settings import resolve

HOOK = [sys.executable, "-c", "import sys; from hooks.entry import main; sys.exit(main())", "recall"]
BAR_P95_MS = 300.0


def prompts(titles: list[str], n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    shapes = [
        "How did we decide on {a}? I remember something about {b}.",
        "Fix the failing test around {a} and {b}; see https://ci.example.org/run/{n} for the log.",
        "Can you refactor src/{w}/handler.py so {a} no longer depends on {b}?",
        "why does {a} break when {b} is enabled\n```python\nraise {w}Error('boom')\n```",
        "Please write up the convention for {a} vs {b} before we merge #{n}.",
    ]
    out = []
    for i in range(n):
        a, b = rng.choice(titles), rng.choice(titles)
        out.append(shapes[i % len(shapes)].format(a=a, b=b, w=a.split()[0], n=rng.randint(100, 999)))
    return out


def payload(prompt: str, cwd: str, i: int) -> bytes:
    return json.dumps(
        {
            "session_id": f"bench-{i:04d}",
            "transcript_path": f"/tmp/bench-{i:04d}.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    ).encode()


def run_once(cmd: list[str], data: bytes, env: dict[str, str]) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=data, capture_output=True, env=env, timeout=30)
    ms = (time.perf_counter() - t0) * 1000
    return ms, proc.returncode, proc.stdout.decode("utf-8", "replace")


def wait_for_daemon(state_dir: Path, proc: subprocess.Popen[bytes], timeout: float = 600.0) -> int:
    import urllib.request

    deadline = time.monotonic() + timeout
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"agentmd serve exited with {proc.returncode}")
        try:
            port = json.loads((state_dir / "daemon.json").read_text())["port"]
            with opener.open(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
                if not json.loads(resp.read())["index_stale"]:
                    return int(port)
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    raise SystemExit("the daemon did not finish its first pass in time")


def daemon_pid(state_dir: Path) -> int:
    """The pid of the daemon itself (from its daemon.json): `agentmd serve` runs it in a child process
    (engine/daemon/supervisor.py), so the process a benchmark started is not the one to measure."""
    return int(json.loads((state_dir / "daemon.json").read_text())["pid"])


def bench_env(work: Path, vault: Path) -> dict[str, str]:
    """The environment of a benchmark's processes: its own home, cache, state and config under `work`."""
    return {
        **os.environ,
        "HOME": str(work / "home"),
        "XDG_CACHE_HOME": str(work / "cache"),
        "XDG_STATE_HOME": str(work / "state"),
        "XDG_CONFIG_HOME": str(work / "config"),
        "AGENTMD_VAULT": str(vault),
    }


def stop_daemon(serve: subprocess.Popen[bytes] | None, timeout: float = 60.0) -> None:
    """SIGTERM the benchmark's daemon and wait for it; kill it when it does not finish in `timeout`."""
    if serve is None:
        return
    serve.send_signal(signal.SIGTERM)
    try:
        serve.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        serve.kill()


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 0.50), 1),
        "p95_ms": round(percentile(values, 0.95), 1),
        "mean_ms": round(statistics.fmean(values), 1),
        "max_ms": round(max(values), 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--prompts", type=int, default=50)
    ap.add_argument("--fallback-prompts", type=int, default=10, help="prompts for the no-daemon path (0 skips)")
    ap.add_argument("--keep", help="generate the vault here and keep it")
    args = ap.parse_args()

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="agentmd-hook-bench-"))
    vault = work / "vault"
    env = {**bench_env(work, vault), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("AGENTMD_DAILY_WRITE_CAP", None)
    serve: subprocess.Popen[bytes] | None = None
    try:
        if not vault.is_dir():
            titles = generate(vault, args.notes)
        else:
            titles = [p.stem.rsplit("-", 1)[0].replace("-", " ") for p in vault.rglob("*.md")]
        settings = resolve(vault=str(vault), env=env)
        cwd = work / "code" / "atlas" / "src"  # bound to projects/atlas by its folder name
        cwd.mkdir(parents=True, exist_ok=True)
        (cwd.parent / ".git").mkdir(exist_ok=True)
        texts = prompts(titles, args.prompts)

        bare = [run_once([sys.executable, "-c", "pass"], b"", env)[0] for _ in range(10)]
        imports = [
            run_once([sys.executable, "-c", "import hooks.entry, hooks.recall, engine.settings"], b"", env)[0]
            for _ in range(10)
        ]

        t0 = time.perf_counter()
        serve = subprocess.Popen(
            [sys.executable, "-m", "agentmd", "serve", "--port", "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        port = wait_for_daemon(settings.state_dir, serve)
        cold_build_s = time.perf_counter() - t0

        run_once(HOOK, payload(texts[0], str(cwd), 0), env)  # warm the page cache and the walls cache
        up, empty = [], 0
        for i, text in enumerate(texts):
            ms, code, out = run_once(HOOK, payload(text, str(cwd), i), env)
            if code != 0:
                raise SystemExit(f"hook exited {code} on prompt {i}")
            empty += "Prior learnings" not in out
            up.append(ms)

        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=120)
        serve = None
        down = []
        for i, text in enumerate(texts[: args.fallback_prompts]):
            ms, code, _out = run_once(HOOK, payload(text, str(cwd), i), env)
            if code != 0:
                raise SystemExit(f"hook exited {code} on prompt {i} (no daemon)")
            down.append(ms)

        result = {
            "notes": args.notes,
            "prompts": len(up),
            "prompts_with_learnings": len(up) - empty,
            "daemon_port": port,
            "daemon_first_pass_s": round(cold_build_s, 1),
            "hook_daemon_up": summary(up),
            "python_bare_start": summary(bare),
            "light_imports": summary(imports),
            "hook_no_daemon": summary(down) if down else None,
            "bar_p95_ms": BAR_P95_MS,
            "pass": percentile(up, 0.95) <= BAR_P95_MS,
        }
        print(json.dumps(result))
        h = result["hook_daemon_up"]
        print(
            f"\nhook with the daemon up, {args.notes} notes, {len(up)} prompts: p50 {h['p50_ms']} ms, p95 "
            f"{h['p95_ms']} ms (bar {BAR_P95_MS:.0f} ms: {'pass' if result['pass'] else 'FAIL'}); "
            f"{result['prompts_with_learnings']} prompts got learnings"
        )
        print(
            f"floor: bare python start-up p50 {result['python_bare_start']['p50_ms']} ms; "
            f"light entry imports p50 {result['light_imports']['p50_ms']} ms"
        )
        if down:
            d = result["hook_no_daemon"]
            print(f"no daemon (in-process fallback), {len(down)} prompts: p50 {d['p50_ms']} ms, p95 {d['p95_ms']} ms")
        return 0 if result["pass"] else 1
    finally:
        stop_daemon(serve)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
