"""Status under load: with nothing broken, `status` must not turn red however busy the machine is.

A daemon serves a vault of `--notes` generated notes while `--burners` CPU-bound processes run beside it (30
on two cores is a badly overloaded machine); captures and edits keep it working. Every `--every` seconds for
`--seconds`, `agentmd status --json` is read as a person would (its default patience), and every red and yellow
line is counted. Prints one JSON object; exit 1 when any status was red.

    python bench/status_under_load.py --burners 30 --seconds 120
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hook_bench import bench_env, stop_daemon, wait_for_daemon
from index_bench import generate

from agentmd.engine.client import DaemonClient, access_token
from agentmd.engine.settings import resolve


def burn(stop: float) -> None:
    x = 0
    while time.time() < stop:
        x = (x * 31 + 7) % 1_000_003


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=500)
    ap.add_argument("--burners", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--every", type=float, default=3.0)
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(tempfile.mkdtemp(prefix="agentmd-load-bench-"))
    vault = work / "vault"
    env = {**bench_env(work, vault), "AGENTMD_DENSE": "0"}
    serve = None
    burners: list[multiprocessing.Process] = []
    try:
        generate(vault, args.notes)
        subprocess.run([sys.executable, "-m", "agentmd", "init-git"], env=env, check=True, capture_output=True)
        settings = resolve(vault=str(vault), env=env)
        serve = subprocess.Popen(
            [sys.executable, "-m", "agentmd", "serve", "--port", "0"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        port = wait_for_daemon(settings.state_dir, serve)
        client = DaemonClient(port, timeout=60.0, token=access_token(settings.state_dir))
        stop = time.time() + args.seconds
        burners = [multiprocessing.Process(target=burn, args=(stop,), daemon=True) for _ in range(args.burners)]
        for p in burners:
            p.start()
        reds: Counter[str] = Counter()
        yellows: Counter[str] = Counter()
        reads, slowest, i = 0, 0.0, 0
        while time.time() < stop:
            i += 1
            try:
                client.post("/v1/capture", {"title": f"Load note {i}", "body": f"captured under load, round {i}"})
            except Exception as exc:  # a capture that times out under load is not what this bench judges
                print(f"capture {i}: {exc}", file=sys.stderr)
            (vault / "inbox" / f"edit-{i % 5}.md").write_text(f"# Edit {i}\nchanged under load\n", encoding="utf-8")
            t0 = time.perf_counter()
            run = subprocess.run(
                [sys.executable, "-m", "agentmd", "status", "--json"], env=env, capture_output=True, text=True
            )
            slowest = max(slowest, time.perf_counter() - t0)
            status = json.loads(run.stdout)
            reads += 1
            reds.update(line.split(":", 1)[0] for line in status.get("red", []))
            yellows.update(line.split(":", 1)[0] for line in status.get("yellow", []))
            time.sleep(args.every)
        print(json.dumps({
            "burners": args.burners, "seconds": args.seconds, "status_reads": reads, "red_reads": sum(reds.values()),
            "red": dict(reds), "yellow": dict(yellows), "slowest_status_s": round(slowest, 2),
        }, indent=2))  # fmt: skip
        return 1 if reds else 0
    finally:
        for p in burners:
            p.terminate()
        stop_daemon(serve)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
