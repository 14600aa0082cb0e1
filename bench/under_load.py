"""The daemon beside CPU-bound work: the recall hook, edit-to-searchable and captures, idle and under load.

Copies a real vault (the obsidian-tasks docs from the shared corpora when they are there, else a synthetic one of
--notes notes), makes it a git repository and starts the real daemon (`agentmd serve`) as its own process, dense
arm on, and waits until every chunk is embedded (so background embedding does not weigh on one stage more than
another). Then, for each count of busy processes in --loads (default 0, 2 and 4: plain Python loops started here,
each in a session of its own like a program started from another terminal, and killed after their stage):

- the recall hook run as Claude Code runs it (hook_bench.py: a new `agentmd-hook recall` process per prompt, the
  payload on stdin): p50/p95 over --prompts prompts, and its give-ups (a run whose time budget was spent says so
  in one line on stderr and in `hook.log`, which `status` counts);
- edit to searchable: a word appended to a note, then `/v1/search` asked for it until it is found: p50/p95 over
  --edits edits;
- captures: --capture-clients clients posting `/v1/capture` for --capture-seconds seconds (capture_load.py's
  HTTP clients, each searching after every answer as there): p50/p99 and errors.

Prints one JSON object: each stage's figures and their ratios to the idle stage, then one line a stage. The
machine's own load (others' work) is recorded beside each stage.

    .venv/bin/python bench/under_load.py [--prompts 20] [--edits 20] [--capture-seconds 10] [--loads 0,2,4]
        [--work DIR]   (keeps the vault and its vectors: a second run skips the embedding)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import capture_load
from hook_bench import (
    HOOK,
    bench_env,
    compile_package,
    copy_env,
    payload,
    prompts,
    run_once,
    stop_daemon,
    wait_for_daemon,
)
from index_bench import generate, percentile, wait_for

from agentmd.engine.client import DaemonClient, access_token
from agentmd.engine.hooklog import GAVE_UP, gave_up
from agentmd.engine.settings import resolve

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpora" / "obsidian-tasks" / "docs"


def burn() -> None:
    """One CPU-bound process: a plain Python loop until it is killed, in a session of its own as a program started
    from another terminal is. Linux shares the CPU between sessions first (autogroups): busy loops in this
    process's session would take their share from the hooks it starts, not from the rest of the machine."""
    os.setsid()
    x = 0
    while True:
        x = (x * 31 + 7) % 1_000_003


def stats(values: list[float], tail: float) -> dict[str, float]:
    """p50, the tail percentile asked for and the max of `values` (seconds), in ms."""
    if not values:
        return {"n": 0}
    top = f"p{round(tail * 100)}_ms"
    return {
        "p50_ms": round(percentile(values, 0.5) * 1000, 1),
        top: round(percentile(values, tail) * 1000, 1),
        "max_ms": round(max(values) * 1000, 1),
        "n": len(values),
    }


def make_vault(vault: Path, notes: int) -> list[str]:
    """The vault to serve, and the titles its prompts are made from."""
    if CORPUS.is_dir():
        shutil.copytree(CORPUS, vault)
        return [p.stem.replace("-", " ") for p in sorted(vault.rglob("*.md"))]
    return generate(vault, notes)


def wait_embedded(client: DaemonClient, timeout: float) -> dict[str, Any]:
    """Wait until the daemon's dense arm has embedded every chunk (or says it will not); its dense section."""
    deadline = time.monotonic() + timeout
    dense: dict[str, Any] = {}
    while time.monotonic() < deadline:
        dense = client.get("/status", timeout=30).get("dense") or {}
        if dense.get("state") in ("complete", "none", "lexical-only", "stopped"):
            break
        time.sleep(2)
    return dense


def hook_stage(env: dict[str, str], texts: list[str], cwd: str, copies: list[str]) -> dict[str, Any]:
    """The hook over every prompt: latencies, its CPU time (user and system, less moved by the load than the
    latency is), how many prompts got notes, and give-ups said on stderr. With `copies`, each prompt also runs
    the hook of each copy (hook_bench.py's --compare: a folder holding an `agentmd` package laid out as
    installed, from $PYTHONPATH), interleaved, under `hook_from`."""
    runs = {"": env} | {folder: copy_env(env, folder, i) for i, folder in enumerate(copies)}
    took: dict[str, list[float]] = {k: [] for k in runs}
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    shown, said = dict.fromkeys(runs, 0), dict.fromkeys(runs, 0)
    for i, text in enumerate(texts):
        data = payload(text, cwd, i)
        for name, run_env in runs.items():
            r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            run = subprocess.run(HOOK, input=data, capture_output=True, env=run_env, timeout=60, cwd=cwd)
            took[name].append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
            if run.returncode != 0:
                raise SystemExit(f"hook {name or 'of this checkout'} exited {run.returncode} on prompt {i}")
            shown[name] += "Prior learnings" in run.stdout.decode("utf-8", "replace")
            err = run.stderr.decode("utf-8", "replace").splitlines()
            said[name] += sum(f" recall {GAVE_UP} " in line for line in err)

    def one(name: str) -> dict[str, Any]:
        return stats(took[name], 0.95) | {
            "cpu_p50_ms": round(percentile(cpu[name], 0.5) * 1000, 1),
            "prompts_with_notes": shown[name],
            "gave_up_on_stderr": said[name],
        }

    out = one("")
    if copies:
        out["hook_from"] = {folder: one(folder) for folder in copies}
    return out


def found(search: DaemonClient, token: str, rel: str) -> bool:
    """Whether a lexical search through the daemon finds the note `rel` for `token`."""
    answer = search.post("/v1/search", {"query": token, "limit": 5, "mode": "fusion", "count_usage": False})
    return rel in [r["path"].split("#", 1)[0] for r in answer.get("results", [])]


def freshness_stage(vault: Path, search: DaemonClient, edits: int, seed: int) -> dict[str, Any]:
    """Edit to searchable: append a new word to a note, then search for it until the note is found."""
    rng = random.Random(seed)
    run = os.getpid()  # a word no earlier run (with --work) appended
    notes = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md") if "memory" not in p.parts)
    took, lost = [], 0
    for i in range(edits):
        rel = rng.choice(notes)
        token = f"zqfresh{run}s{seed}n{i}x"
        path = vault / rel
        text = path.read_text(encoding="utf-8")
        t0 = time.perf_counter()
        path.write_text(text + f"\n{token}\n", encoding="utf-8")
        try:
            wait_for(lambda token=token, rel=rel: found(search, token, rel), 30, step=0.01)
        except TimeoutError:
            lost += 1
            continue
        took.append(time.perf_counter() - t0)
    return stats(took, 0.95) | {"not_found_in_30s": lost}


def capture_stage(port: int, clients: int, seconds: float, first_client: int) -> dict[str, Any]:
    """`clients` HTTP clients capturing for `seconds` (capture_load.py's), each checking its note is searchable."""
    tally = capture_load.Tally()
    until = time.monotonic() + seconds
    threads = [
        threading.Thread(target=capture_load.http_client, args=(port, first_client + c, until, tally), daemon=True)
        for c in range(clients)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat = tally.latency["http"]
    return stats(lat, 0.99) | {"errors": len(tally.errors)}  # searchable on return: capture_load.py's to judge


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loads", default="0,2,4", help="counts of busy processes, one stage each (the first is idle)")
    ap.add_argument("--prompts", type=int, default=20)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--capture-clients", type=int, default=4)
    ap.add_argument("--capture-seconds", type=float, default=10.0)
    ap.add_argument("--notes", type=int, default=500, help="a synthetic vault's notes, when the corpus is missing")
    ap.add_argument("--embed-wait", type=float, default=600.0, help="seconds to wait for the embedding to finish")
    ap.add_argument("--settle", type=float, default=2.0, help="seconds the busy processes run before measuring")
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="DIR",
        help="repeatable: a folder holding an `agentmd` package laid out as installed (hook_bench.py --compare) "
        "whose hook runs too, interleaved prompt by prompt, against the same daemon",
    )
    ap.add_argument("--work", help="keep the vault, index and vectors here, and use them again on the next run")
    args = ap.parse_args()
    loads = [int(x) for x in args.loads.split(",")]

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="agentmd-under-load-"))
    vault = work / "vault"
    compile_package(*args.compare)
    env = {**bench_env(work, vault), "AGENTMD_DAILY_WRITE_CAP": "0"}
    serve: subprocess.Popen[bytes] | None = None
    busy: list[multiprocessing.Process] = []
    try:
        if vault.is_dir():
            titles = [p.stem.replace("-", " ") for p in sorted(vault.rglob("*.md")) if "memory" not in p.parts]
        else:
            titles = make_vault(vault, args.notes)
            subprocess.run([sys.executable, "-m", "agentmd", "init-git"], env=env, check=True, capture_output=True)
        settings = resolve(vault=str(vault), env=env)
        cwd = work / "code" / "atlas" / "src"
        cwd.mkdir(parents=True, exist_ok=True)
        (cwd.parent / ".git").mkdir(exist_ok=True)
        texts = prompts(titles, args.prompts)
        serve = subprocess.Popen(
            [sys.executable, "-m", "agentmd", "serve", "--port", "0"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        port = wait_for_daemon(settings.state_dir, serve)
        token = access_token(settings.state_dir)
        capture_load.AUTH["Authorization"] = f"Bearer {token}"
        t0 = time.monotonic()
        search = DaemonClient(port, timeout=30.0, token=token)
        dense = wait_embedded(search, args.embed_wait)
        embed_s = time.monotonic() - t0
        run_once(HOOK, payload(texts[0], str(cwd), 0), env)  # the page cache and the walls cache warm
        stages: list[dict[str, Any]] = []
        for n, count in enumerate(loads):
            busy = [multiprocessing.Process(target=burn, daemon=True) for _ in range(count)]
            for p in busy:
                p.start()
            time.sleep(args.settle if count else 0)
            load_before = os.getloadavg()[0]
            before = sum(gave_up(settings.state_dir).values())
            stage: dict[str, Any] = {"busy_processes": count}
            stage["hook"] = hook_stage(env, texts, str(cwd), args.compare)
            stage["hook"]["gave_up_in_hook_log"] = sum(gave_up(settings.state_dir).values()) - before
            stage["edit_to_searchable"] = freshness_stage(vault, search, args.edits, seed=n)
            stage["capture"] = capture_stage(port, args.capture_clients, args.capture_seconds, 100 * n)
            stage["loadavg_1m"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
            for p in busy:
                p.kill()
            for p in busy:
                p.join()
            busy = []
            stages.append(stage)
            time.sleep(args.settle)
        idle = stages[0]
        for stage in stages:
            stage["x_idle"] = {
                "hook_p50": ratio(stage["hook"].get("p50_ms"), idle["hook"].get("p50_ms")),
                "hook_p95": ratio(stage["hook"].get("p95_ms"), idle["hook"].get("p95_ms")),
                "fresh_p50": ratio(stage["edit_to_searchable"].get("p50_ms"), idle["edit_to_searchable"].get("p50_ms")),
                "fresh_p95": ratio(stage["edit_to_searchable"].get("p95_ms"), idle["edit_to_searchable"].get("p95_ms")),
                "capture_p50": ratio(stage["capture"].get("p50_ms"), idle["capture"].get("p50_ms")),
                "capture_p99": ratio(stage["capture"].get("p99_ms"), idle["capture"].get("p99_ms")),
            }
            for folder, h in stage["hook"].get("hook_from", {}).items():
                first = idle["hook"]["hook_from"][folder]
                stage["x_idle"][f"hook_p95_from:{folder}"] = ratio(h.get("p95_ms"), first.get("p95_ms"))
        result = {
            "vault": str(CORPUS) if CORPUS.is_dir() else f"synthetic, {args.notes} notes",
            "notes": len(titles),
            "cpus": os.cpu_count(),
            "dense": {k: dense.get(k) for k in ("state", "chunks_done", "chunks_total")},
            "embedding_wait_s": round(embed_s, 1),
            "stages": stages,
            "hook_bar_p95_ms": {"idle": 150, "4_busy": 300},
            "gave_up_total": sum(s["hook"]["gave_up_in_hook_log"] for s in stages),
        }
        print(json.dumps(result, indent=1))
        for s in stages:
            h, f, c, x = s["hook"], s["edit_to_searchable"], s["capture"], s["x_idle"]
            print(
                f"{s['busy_processes']} busy (load {s['loadavg_1m'][0]}-{s['loadavg_1m'][1]}): hook p50 {h['p50_ms']} "
                f"p95 {h['p95_ms']} ms ({x['hook_p95']}x), {h['gave_up_in_hook_log']} gave up; edit to searchable "
                f"p50 {f.get('p50_ms')} p95 {f.get('p95_ms')} ms ({x['fresh_p95']}x); capture p50 {c.get('p50_ms')} "
                f"p99 {c.get('p99_ms')} ms ({x['capture_p99']}x), {c['n']} captures, {c['errors']} errors"
            )
            for folder, other in h.get("hook_from", {}).items():
                print(
                    f"  the hook from {folder}: p50 {other['p50_ms']} p95 {other['p95_ms']} ms, CPU p50 "
                    f"{other['cpu_p50_ms']} ms (this checkout's CPU p50 {h['cpu_p50_ms']} ms)"
                )
        return 0
    finally:
        for p in busy:
            p.kill()
        stop_daemon(serve)
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
