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

`--profile` instead says where a hook run's time goes (`profile`), as JSON: over `--rounds` interleaved
rounds a bare `python -c pass`, `python -S -c pass` (the cost of `site`), the light entry's imports alone and
the whole hook, each also as a ratio to the bare start of the same rounds; the hook cut into its phases in a
process of its own (imports, the vault lease, payload and token, the `/v1/recall` request in which the daemon
does the whole recall); `-X importtime` of the entry by group; and the daemon's own side (a `/health` round
trip, a whole recall) asked from this warm process. `--compare DIR` runs other copies of the hook beside it
(before/after).

    .venv/bin/python bench/hook_bench.py [--notes 10000] [--prompts 50] [--keep DIR]
    .venv/bin/python bench/hook_bench.py --profile [--rounds 40] [--compare DIR ...]   (where the time goes)
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

# what the installed `agentmd-hook recall` runs (its console script imports only `re` and `sys` besides)
HOOK = [sys.executable, "-c", "import sys; from agentmd.hooks.entry import main; sys.exit(main())", "recall"]
# the light entry's imports alone, with the daemon up (hooks/entry.py -> hooks/recall/light.py)
HOOK_IMPORTS = "import agentmd.hooks.entry, agentmd.hooks.recall.light"
# One hook run cut into its phases, in a new process like the hook's: the same public functions the light path
# calls (hooks/recall/light.py), each timed, printed as JSON. Interpreter start is not in here: the parent
# measures a bare start beside it.
PHASES = r"""
import json, os, sys, time
t0 = time.perf_counter()
from agentmd.hooks.recall import light
from agentmd.engine.client import DaemonClient, access_token
t = {"imports": time.perf_counter() - t0}
def lap(name, since):
    now = time.perf_counter()
    t[name] = t.get(name, 0.0) + now - since
    return now
s = time.perf_counter()
opts = light.parse_hook_args([])
port, state_dir = light.the_daemon(opts)
s = lap("lease", s)
payload = json.loads(sys.stdin.read())
token = access_token(state_dir)
s = lap("payload_and_token", s)
body = {"prompt": payload["prompt"], "cwd": payload["cwd"], "session_id": payload["session_id"]}
answer = DaemonClient(port, token=token).post("/v1/recall", body, timeout=30)
s = lap("recall_request", s)
if answer["counted"]:
    t["shown"] = 1
print(json.dumps({k: (round(v * 1000, 2) if isinstance(v, float) else v) for k, v in t.items()}))
"""
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


def run_once(cmd: list[str], data: bytes, env: dict[str, str], cwd: str = "/") -> tuple[float, int, str]:
    """Run `cmd` once with `data` on stdin: milliseconds, exit code, stdout. It runs outside this checkout (as
    Claude Code runs a hook in the project's folder): from here, `python -c` would import the checkout's own
    `agentmd` folder ahead of the package on $PYTHONPATH, and --compare would compare this code with itself."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=data, capture_output=True, env=env, timeout=30, cwd=cwd)
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


def compile_package(*folders: str) -> None:
    """Compile the agentmd package's modules (the installed ones, and those under `folders`: --compare copies)
    to bytecode once, as an installed package is: a process started with PYTHONDONTWRITEBYTECODE set, or
    from a checkout nobody imported from yet, would otherwise compile every module it imports on each run,
    tens of milliseconds that no installed hook pays."""
    import compileall
    import importlib.util

    places = {Path(f) for f in folders}
    for name in ("agentmd", "agentmd.engine", "agentmd.hooks", "agentmd.rules", "agentmd.vault_schema"):
        spec = importlib.util.find_spec(name)
        if spec is not None:
            places.update(Path(p) for p in spec.submodule_search_locations or [])
    for place in sorted(places):
        compileall.compile_dir(str(place), quiet=1, workers=1)


def bench_env(work: Path, vault: Path) -> dict[str, str]:
    """The environment of a benchmark's processes: its own home, cache, state and config under `work`. The
    package is compiled to bytecode first (`compile_package`)."""
    compile_package()
    return {
        **os.environ,
        "HOME": str(work / "home"),
        "XDG_CACHE_HOME": str(work / "cache"),
        "XDG_STATE_HOME": str(work / "state"),
        "XDG_CONFIG_HOME": str(work / "config"),
        "AGENTMD_VAULT": str(vault),
    }


def copy_env(env: dict[str, str], folder: str, i: int) -> dict[str, str]:
    """The environment of another copy's hook (--compare): its package from $PYTHONPATH, and a state folder of its
    own. The walls cache there is keyed by the contract files, the packaged one among them, so copies sharing one
    would each find the other's entry stale and parse the contract on every prompt. The daemon is found through
    the vault's lease whatever the state folder."""
    return {**env, "PYTHONPATH": folder, "XDG_STATE_HOME": f"{env['XDG_STATE_HOME']}-copy{i}"}


def stop_daemon(serve: subprocess.Popen[bytes] | None, timeout: float = 60.0) -> None:
    """SIGTERM the benchmark's daemon and wait for it; kill it when it does not finish in `timeout`."""
    if serve is None:
        return
    serve.send_signal(signal.SIGTERM)
    try:
        serve.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        serve.kill()


def import_times(code: str, env: dict[str, str], runs: int = 7) -> dict[str, object]:
    """`python -X importtime -c code`, medians over `runs`, in ms: the interpreter's own start-up imports (every
    module listed up to `site`, which the report lists after its children), the standard library and other
    packages the code loads after it, agentmd's own modules, and the modules costing most by their own time."""
    own: dict[str, list[float]] = {}
    groups: dict[str, list[float]] = {"startup": [], "stdlib_and_packages": [], "agentmd": []}
    for _ in range(runs):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], capture_output=True, env=env, cwd="/"
        ).stderr
        sums = dict.fromkeys(groups, 0.0)
        started = False
        for line in err.decode().splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _cum, name = line[len("import time:") :].split("|")
            ms = int(self_us) / 1000
            name = name.strip()
            if not started:
                sums["startup"] += ms
                started = name == "site"
                continue
            own.setdefault(name, []).append(ms)
            sums["agentmd" if name.startswith("agentmd") else "stdlib_and_packages"] += ms
        for k, v in sums.items():
            groups[k].append(v)
    top = sorted(own.items(), key=lambda kv: -statistics.median(kv[1]))[:15]
    return {
        **{f"{k}_ms": round(statistics.median(v), 1) for k, v in groups.items()},
        "top_self_ms": {k: round(statistics.median(v), 2) for k, v in top},
    }


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 0.50), 1),
        "p95_ms": round(percentile(values, 0.95), 1),
        "mean_ms": round(statistics.fmean(values), 1),
        "max_ms": round(max(values), 1),
    }


def profile(
    env: dict[str, str], texts: list[str], cwd: str, settings: object, rounds: int, compare: list[str]
) -> dict[str, object]:
    """Where a hook run's time goes, with the daemon up. Interleaved, `rounds` times: a bare `python -c pass`,
    `python -S -c pass` (no site), the light entry's imports alone, the whole hook, and the hook cut into its
    phases (PHASES); once: `-X importtime` of the entry, and the daemon's own side asked from this (warm)
    process. Every figure also as a ratio to the bare start of the same rounds."""
    from agentmd.engine.client import locate

    kinds: dict[str, list[float]] = {"bare": [], "bare_no_site": [], "imports": [], "hook": []}
    envs = {f"hook_from:{folder}": copy_env(env, folder, i) for i, folder in enumerate(compare)}
    kinds |= {name: [] for name in envs}
    phases: list[dict[str, float]] = []
    shown: list[bool] = []  # whether the round's prompt got notes (the hook then also counts them)
    for i in range(rounds):
        data = payload(texts[i % len(texts)], cwd, i)
        kinds["bare"].append(run_once([sys.executable, "-c", "pass"], b"", env)[0])
        kinds["bare_no_site"].append(run_once([sys.executable, "-S", "-c", "pass"], b"", env)[0])
        kinds["imports"].append(run_once([sys.executable, "-c", HOOK_IMPORTS], b"", env)[0])
        # this hook and the compared copies ask the same prompt, each round in a turned order: the first to ask
        # pays the daemon's embedding of the prompt, which the others then find remembered
        runners = [("hook", env), *envs.items()]
        for name, runner_env in runners[i % len(runners) :] + runners[: i % len(runners)]:
            ms, code, text = run_once(HOOK, data, runner_env)
            if code != 0:
                raise SystemExit(f"{name} exited {code}")
            kinds[name].append(ms)
            if name == "hook":
                shown.append("Prior learnings" in text)
        _ms, code, out = run_once([sys.executable, "-c", PHASES], data, env)
        if code != 0:
            raise SystemExit(f"the phase run exited {code}: {out[-2000:]}")
        phases.append(json.loads(out))
    daemon = locate(settings.state_dir, settings.vault)  # type: ignore[attr-defined]
    assert daemon is not None
    client = daemon.client()
    health, search = [], []
    for text in texts[:rounds]:
        t0 = time.perf_counter()
        client.get("/health", timeout=10)
        health.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        client.post("/v1/recall", {"prompt": text, "cwd": cwd}, timeout=30)
        search.append((time.perf_counter() - t0) * 1000)
    bare50, bare95 = percentile(kinds["bare"], 0.5), percentile(kinds["bare"], 0.95)
    out: dict[str, object] = {"rounds": rounds}
    for name, values in kinds.items():
        row: dict[str, float] = summary(values) | {
            "p50_x_bare": round(percentile(values, 0.5) / bare50, 2),
            "p95_x_bare": round(percentile(values, 0.95) / bare95, 2),
        }
        if name.startswith("hook") and any(shown) and not all(shown):
            for label, flag in (("with_notes", True), ("without_notes", False)):
                part = [v for v, s in zip(values, shown, strict=True) if s is flag]
                row[f"p50_x_bare_{label}"] = round(percentile(part, 0.5) / bare50, 2)
        out[name] = row
    names = sorted({k for p in phases for k in p})
    # each phase's median over the runs that had it (counting only where notes were shown)
    out["phases_p50_ms"] = {k: round(statistics.median([p[k] for p in phases if k in p]), 2) for k in names}
    out["runs_that_showed_notes"] = sum("shown" in p for p in phases)
    out["daemon_side_from_a_warm_process_p50_ms"] = {
        "health_round_trip": round(statistics.median(health), 2),
        "whole_recall": round(statistics.median(search), 2),
    }
    out["import_time_ms"] = import_times(HOOK_IMPORTS, env)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--prompts", type=int, default=50)
    ap.add_argument("--fallback-prompts", type=int, default=10, help="prompts for the no-daemon path (0 skips)")
    ap.add_argument("--keep", help="generate the vault here and keep it")
    ap.add_argument("--profile", action="store_true", help="where a hook run's time goes, as JSON (see profile())")
    ap.add_argument("--rounds", type=int, default=40, help="interleaved rounds of --profile")
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="DIR",
        help="with --profile, repeatable: a folder holding an `agentmd` package laid out as installed (an older "
        "checkout's, or this one's: a dev install's import hook costs a few ms more) whose hook runs too, "
        "interleaved, against the same daemon, from $PYTHONPATH",
    )
    args = ap.parse_args()

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="agentmd-hook-bench-"))
    vault = work / "vault"
    compile_package(*args.compare)
    env = {**bench_env(work, vault), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("AGENTMD_DAILY_WRITE_CAP", None)
    serve: subprocess.Popen[bytes] | None = None
    try:
        if not vault.is_dir():
            titles = generate(vault, args.notes)
        else:
            titles = [p.stem.rsplit("-", 1)[0].replace("-", " ") for p in vault.rglob("*.md")]
        if args.compare and not (vault / ".git").is_dir():
            # the compared copies keep state folders of their own (copy_env) and find the daemon through the
            # vault's lease, which lives in its .git
            subprocess.run([sys.executable, "-m", "agentmd", "init-git"], env=env, check=True, capture_output=True)
        settings = resolve(vault=str(vault), env=env)
        cwd = work / "code" / "atlas" / "src"  # bound to projects/atlas by its folder name
        cwd.mkdir(parents=True, exist_ok=True)
        (cwd.parent / ".git").mkdir(exist_ok=True)
        texts = prompts(titles, args.prompts)

        bare = [run_once([sys.executable, "-c", "pass"], b"", env)[0] for _ in range(10)]
        imports = [run_once([sys.executable, "-c", HOOK_IMPORTS], b"", env)[0] for _ in range(10)]

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
        if args.profile:
            print(json.dumps(profile(env, texts, str(cwd), settings, args.rounds, args.compare), indent=1))
            return 0
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
