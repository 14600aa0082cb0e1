"""Command-line start-up benchmark: what a person waits for when typing `agentmd ...`, process start to exit.

Copies a real vault (`../shared/corpora/vaultofknowledge` when it is there, else a synthetic one of --notes
notes from index_bench.py's generator), starts the real daemon (`agentmd serve`) on a loopback port and runs,
each as a new process of the installed `agentmd` command, round after round so that the commands share the
machine's ups and downs:

- `agentmd --help` (no daemon needed);
- `agentmd search` with the daemon up, 2-3 words and 6-12 words (words of the vault's note names);
- `agentmd status` and `agentmd capture` with the daemon up;

against the floor of the same run: a bare `python -c pass` and `python -c "import agentmd.engine.client"`.
The daemon runs lexical-only (AGENTMD_DENSE=0) unless --dense, so that background embedding does not share
the cores with what is measured. Prints one JSON object (p50/p95 per command, in ms, and each p50 as a
multiple of the bare start), then a human summary.

    .venv/bin/python bench/cli_bench.py [--runs 21] [--notes N] [--vault DIR] [--dense] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hook_bench import bench_env, stop_daemon, wait_for_daemon

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpora" / "vaultofknowledge"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "b@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "b@localhost",
}
BAR_HELP = 3.5  # `agentmd --help` at most this many bare Python starts
BAR_SEARCH = 5.0  # `agentmd search` with a daemon up at most this many bare Python starts


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 0.50), 1),
        "p95_ms": round(percentile(values, 0.95), 1),
        "mean_ms": round(statistics.fmean(values), 1),
        "runs": len(values),
    }


def agentmd_command() -> list[str]:
    """The installed `agentmd` script beside this interpreter (what a person runs), else `python -m agentmd`."""
    script = Path(sys.executable).parent / "agentmd"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "agentmd"]


def run_once(cmd: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    ms = (time.perf_counter() - t0) * 1000
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd[-6:])} exited {proc.returncode}: {proc.stderr.decode()[-400:]}")
    return ms


def name_words(vault: Path) -> list[str]:
    """Words of the vault's note names (letters only, 3+ characters), for queries that find something."""
    words: set[str] = set()
    for p in vault.rglob("*.md"):
        words.update(w.lower() for w in p.stem.replace("-", " ").split() if w.isalpha() and len(w) >= 3)
    return sorted(words)


def queries(words: list[str], n: int, low: int, high: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [rng.sample(words, rng.randint(low, high)) for _ in range(n)]


def make_vault(args: argparse.Namespace, vault: Path, env: dict[str, str]) -> str:
    if args.notes:
        sys.path.insert(0, str(REPO / "bench"))
        from index_bench import generate  # imports tantivy and the engine into this process only

        generate(vault, args.notes)
        source = f"synthetic, {args.notes} notes"
    else:
        corpus = Path(args.vault) if args.vault else CORPUS
        if not corpus.is_dir():
            raise SystemExit(f"no vault at {corpus}; pass --vault DIR or --notes N")
        shutil.copytree(corpus, vault, ignore=shutil.ignore_patterns(".git", ".obsidian", ".trash"))
        source = f"copy of {corpus}"
    subprocess.run(["git", "init", "-q", "-b", "main", str(vault)], check=True, env=env)
    subprocess.run(["git", "-C", str(vault), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(vault), "commit", "-q", "-m", "start"], check=True, env=env)
    return source


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=21, help="runs of each command (p50 over these)")
    ap.add_argument("--notes", type=int, default=0, help="a synthetic vault of this many notes instead of a copy")
    ap.add_argument("--vault", help=f"copy this vault (default {CORPUS})")
    ap.add_argument("--dense", action="store_true", help="leave the daemon's dense arm on (it embeds meanwhile)")
    ap.add_argument("--keep", help="work in this folder and keep it")
    args = ap.parse_args()

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="agentmd-cli-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    vault = work / "vault"
    env = {**bench_env(work, vault), **GIT_ENV}
    if not args.dense:
        env["AGENTMD_DENSE"] = "0"
    env.pop("AGENTMD_DAILY_WRITE_CAP", None)
    (work / "home").mkdir(exist_ok=True)
    am = agentmd_command()
    py = sys.executable
    serve: subprocess.Popen[bytes] | None = None
    try:
        source = make_vault(args, vault, env) if not vault.is_dir() else f"kept {vault}"
        words = name_words(vault)
        notes = sum(1 for _ in vault.rglob("*.md"))  # before the captures below add theirs
        short = queries(words, args.runs, 2, 3, seed=3)
        long = queries(words, args.runs, 6, 12, seed=5)
        serve = subprocess.Popen(
            [*am, "serve", "--port", "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        from agentmd.engine.settings import resolve

        port = wait_for_daemon(resolve(vault=str(vault), env=env).state_dir, serve)

        commands: dict[str, Callable[[int], list[str]]] = {
            "python_bare_start": lambda i: [py, "-c", "pass"],
            "import_engine_client": lambda i: [py, "-c", "import agentmd.engine.client"],
            "help": lambda i: [*am, "--help"],
            "search_2_3_words": lambda i: [*am, "search", *short[i]],
            "search_6_12_words": lambda i: [*am, "search", *long[i]],
            "status": lambda i: [*am, "status"],
            "capture": lambda i: [*am, "capture", "--title", f"Bench capture {i} {random.random():.6f}", "--body", "b"],
        }
        ok = {"status": (0, 3)}  # status exits 3 when something needs attention
        for name, make in commands.items():  # one warm-up each: the page cache, the bytecode
            run_once(make(0), env, ok.get(name, (0,)))
        times: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(args.runs):
            for name, make in commands.items():
                times[name].append(run_once(make(i), env, ok.get(name, (0,))))

        figures = {name: summary(values) for name, values in times.items()}
        bare = figures["python_bare_start"]["p50_ms"]
        for fig in figures.values():
            fig["x_bare"] = round(fig["p50_ms"] / bare, 2) if bare else 0.0
        result = {
            "vault": source,
            "notes": notes,
            "daemon_port": port,
            "dense": args.dense,
            "command": " ".join(am),
            "figures": figures,
            "bars": {
                "help_x_bare": BAR_HELP,
                "search_x_bare": BAR_SEARCH,
                "help_pass": figures["help"]["x_bare"] <= BAR_HELP,
                "search_pass": max(figures["search_2_3_words"]["x_bare"], figures["search_6_12_words"]["x_bare"])
                <= BAR_SEARCH,
            },
        }
        print(json.dumps(result))
        print(f"\n{result['notes']} notes ({source}), daemon up on port {port}, p50 of {args.runs} runs:")
        for name, fig in figures.items():
            p50, p95, times_bare = fig["p50_ms"], fig["p95_ms"], fig["x_bare"]
            print(f"  {name:<22} p50 {p50:>7.1f} ms  p95 {p95:>7.1f} ms  {times_bare:>5.2f}x bare")
        b = result["bars"]
        print(
            f"bars: --help <= {BAR_HELP}x bare: {'pass' if b['help_pass'] else 'FAIL'}; "
            f"search <= {BAR_SEARCH}x bare: {'pass' if b['search_pass'] else 'FAIL'}"
        )
        return 0
    finally:
        stop_daemon(serve)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
