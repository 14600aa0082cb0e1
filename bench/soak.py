"""Crash soak: random `kill -9` of a real daemon under concurrent HTTP captures and user edits.

Each cycle starts `agentmd serve` on a scratch vault, runs capture threads (POST /v1/capture) and an
editor thread (the user's own notes, created and rewritten) for a random time, then kills the daemon with
SIGKILL; while it is down, `agentmd capture` runs from the command line (`--cli-captures` a cycle), which
writes and commits in its own process. After the last cycle a daemon runs until git is clean and stops with
SIGTERM. Then:

- lost: acknowledged captures (answered 200) missing from the worktree or from HEAD;
- wrong origin: acknowledged captures (over HTTP or from the command line) whose adding commit does not
  carry `origin: capture`;
- git fsck after every kill; a stale `.git/index.lock` once each restarted daemon has run a commit cycle;
- restarts that did not answer /health in time; user edits missing from HEAD after settling.
Prints one JSON object, then a summary. Exit status 1 when any check fails.

    python bench/soak.py --cycles 20 --seed 7
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from agentmd.engine.client import access_token, locate

REPO = Path(__file__).resolve().parent.parent
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Soak",
    "GIT_AUTHOR_EMAIL": "soak@example.com",
    "GIT_COMMITTER_NAME": "Soak",
    "GIT_COMMITTER_EMAIL": "soak@example.com",
}


def git(vault: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(vault), *args], capture_output=True, text=True, check=check, env={**os.environ, **GIT_ENV}
    )


def request(
    port: int, method: str, path: str, payload: Any = None, timeout: float = 10.0, token: str | None = None
) -> tuple[int, Any]:
    data = None if payload is None else json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers)
    try:
        with OPENER.open(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, None
    except http.client.HTTPException as exc:  # an answer cut short by the kill: nothing was acknowledged
        raise ConnectionError(f"the answer was cut short: {exc!r}") from None


class Soak:
    def __init__(self, work: Path, args: argparse.Namespace) -> None:
        self.work = work
        self.args = args
        self.rng = random.Random(args.seed)
        self.vault = work / "vault"
        self.env = {
            **os.environ,
            "HOME": str(work / "home"),
            "XDG_STATE_HOME": str(work / "state"),
            "XDG_CACHE_HOME": str(work / "cache"),
            "XDG_CONFIG_HOME": str(work / "config"),
            "AGENTMD_DAILY_WRITE_CAP": "0",
            **GIT_ENV,
        }
        if not args.dense:
            self.env["AGENTMD_DENSE"] = "0"
        self.acked: dict[str, str] = {}  # path -> token of acknowledged captures
        self.edits: dict[str, str] = {}  # user note -> its last content written
        self.lock = threading.Lock()
        self.out: dict[str, Any] = Counter()
        self.problems: list[str] = []

    # -- set-up and one daemon ------------------------------------------------------------------------

    def setup(self) -> None:
        (self.work / "home").mkdir(parents=True)
        (self.vault / "notes").mkdir(parents=True)
        for i in range(5):
            (self.vault / "notes" / f"user-{i}.md").write_text(f"# User note {i}\n\nstarting text\n")
        git(self.vault, "init", "-q", "-b", "main")
        git(self.vault, "add", "-A")
        git(self.vault, "commit", "-q", "-m", "start")

    def state_dir(self) -> Path:
        found = list((self.work / "state" / "agentmd").glob("*/daemon.json"))
        return found[0].parent if found else self.work / "state"

    def start(self) -> tuple[subprocess.Popen[bytes], int | None]:
        log = open(self.work / "serve.log", "ab")  # noqa: SIM115 - handed to the child
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentmd",
                "serve",
                "--vault",
                str(self.vault),
                "--port",
                "0",
                "--commit-debounce",
                str(self.args.debounce),
                "--health-interval",
                "1",
            ],
            cwd=REPO,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        log.close()
        deadline = time.monotonic() + self.args.start_timeout
        while time.monotonic() < deadline and proc.poll() is None:
            for info_path in (self.work / "state").rglob("daemon.json"):
                try:
                    info = json.loads(info_path.read_text())
                except (OSError, ValueError):
                    continue
                if proc.pid in (info.get("pid"), info.get("supervisor")) and info.get("port"):
                    try:
                        code, body = request(int(info["port"]), "GET", "/health", timeout=2)
                    except OSError:
                        continue
                    if code == 200 and body.get("index_stale") is False:
                        return proc, int(info["port"])
            time.sleep(0.05)
        return proc, None

    # -- load -----------------------------------------------------------------------------------------

    def capturer(self, port: int, cycle: int, tid: int, stop: threading.Event) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            token = f"soaktoken{cycle}x{tid}x{n}"
            payload = {
                "title": f"Soak capture {cycle} {tid} {n}",
                "body": f"Captured under load: {token}.",
                "type": "fact",
                "why": "soak test",
            }
            try:
                secret = access_token(self.state_dir())
                code, body = request(port, "POST", "/v1/capture", payload, timeout=10, token=secret)
            except OSError:
                return  # the daemon died: nothing more is acknowledged
            if code == 200 and body and body.get("path"):
                with self.lock:
                    self.acked[body["path"]] = token
                self.out["captures_acknowledged"] += 1
            else:
                self.out[f"captures_refused_{code}"] += 1

    def editor(self, stop: threading.Event) -> None:
        rng = random.Random(self.rng.random())
        while not stop.is_set():
            rel = f"notes/user-{rng.randrange(8)}.md"
            text = f"# User note\n\nedited {time.time_ns()} {rng.random()}\n"
            tmp = self.vault / f".{Path(rel).name}.swp-{rng.randrange(10**6)}"
            tmp.write_text(text)
            os.replace(tmp, self.vault / rel)  # the way editors save
            with self.lock:
                self.edits[rel] = text
            self.out["user_edits"] += 1
            stop.wait(rng.uniform(0.02, 0.2))

    def cycle(self, i: int) -> None:
        proc, port = self.start()
        if port is None:
            self.out["restarts_failed"] += 1
            self.problems.append(f"cycle {i}: the daemon did not answer /health (exit {proc.poll()})")
            proc.kill()
            proc.wait()
            return
        self.out["restarts_ok"] += 1
        self.check_no_stale_lock(port, f"cycle {i}")
        stop = threading.Event()
        threads = [threading.Thread(target=self.capturer, args=(port, i, t, stop)) for t in range(self.args.writers)]
        threads.append(threading.Thread(target=self.editor, args=(stop,)))
        for t in threads:
            t.start()
        time.sleep(self.rng.uniform(self.args.min_run, self.args.max_run))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        stop.set()
        for t in threads:
            t.join(30)
        fsck = git(self.vault, "fsck", "--no-progress", check=False)
        if fsck.returncode == 0:
            self.out["fsck_clean"] += 1
        else:
            self.problems.append(f"cycle {i}: git fsck: {fsck.stderr.strip()[:300]}")
        self.cli_captures(i)

    def cli_captures(self, cycle: int) -> None:
        """`agentmd capture` while no daemon runs: it writes and commits itself, and every capture the killed
        daemon acknowledged but had not committed must keep its origin through that commit."""
        deadline = time.monotonic() + 15
        while locate(self.state_dir(), self.vault) is not None and time.monotonic() < deadline:
            time.sleep(0.05)  # the killed supervisor's daemon child goes down with it
        for n in range(self.args.cli_captures):
            token = f"soakcli{cycle}x{n}"
            argv = [sys.executable, "-m", "agentmd", "capture", "--vault", str(self.vault), "--json",
                    "--title", f"Soak command-line capture {cycle} {n}", "--body", f"Captured offline: {token}.",
                    "--type", "fact", "--why", "soak test"]  # fmt: skip
            run = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=120, check=False)
            try:
                path = json.loads(run.stdout)["path"] if run.returncode == 0 else None
            except (ValueError, KeyError, TypeError):
                path = None
            if path:
                with self.lock:
                    self.acked[path] = token
                self.out["cli_captures_acknowledged"] += 1
            else:
                self.out["cli_captures_refused"] += 1
                self.problems.append(f"cycle {cycle}: agentmd capture failed: {run.stderr.strip()[:200]}")

    def check_no_stale_lock(self, port: int, where: str) -> None:
        """Once the restarted daemon ran a commit cycle, no index.lock of a killed one may remain."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            code, body = request(port, "GET", "/status", timeout=5, token=access_token(self.state_dir()))
            if code == 200 and body["daemon"].get("commit_cycles", 0) >= 1:
                break
            time.sleep(0.1)
        if (self.vault / ".git" / "index.lock").exists():
            time.sleep(2)  # a cycle may hold it right now
            if (self.vault / ".git" / "index.lock").exists():
                self.out["stale_locks"] += 1
                self.problems.append(f"{where}: .git/index.lock still there after a commit cycle")

    # -- settle and judge -----------------------------------------------------------------------------

    def settle(self) -> None:
        proc, port = self.start()
        if port is None:
            self.out["restarts_failed"] += 1
            self.problems.append("final restart: the daemon did not answer /health")
            proc.kill()
            proc.wait()
            return
        self.out["restarts_ok"] += 1
        self.check_no_stale_lock(port, "final restart")
        deadline = time.monotonic() + self.args.settle_timeout
        while time.monotonic() < deadline:
            if git(self.vault, "status", "--porcelain").stdout == "":
                break
            time.sleep(0.2)
        else:
            self.problems.append(
                "git never became clean after the final restart: "
                + git(self.vault, "status", "--porcelain").stdout[:300]
            )
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            self.problems.append("the final daemon did not stop on SIGTERM")

    def judge(self) -> None:
        head = set(git(self.vault, "ls-files").stdout.split("\n"))
        added = {}  # path -> origin trailer of the commit that added it
        log = git(
            self.vault,
            "log",
            "--reverse",
            "--diff-filter=A",
            "--name-only",
            "--format=%x1e%(trailers:key=origin,valueonly,separator=)",
        ).stdout
        for chunk in log.split("\x1e")[1:]:
            lines = [x for x in chunk.split("\n")]
            origin = lines[0].strip()
            for path in lines[1:]:
                if path.strip():
                    added.setdefault(path.strip(), origin)
        origins: Counter[str] = Counter()
        for path, token in sorted(self.acked.items()):
            on_disk = self.vault / path
            if not on_disk.is_file() or token not in on_disk.read_text(errors="replace"):
                self.out["captures_lost_from_disk"] += 1
                self.problems.append(f"lost from disk: {path}")
                continue
            if path not in head:
                self.out["captures_missing_from_head"] += 1
                self.problems.append(f"not committed: {path}")
                continue
            origin = added.get(path, "?")
            origins[origin or "(none)"] += 1
            if origin != "capture":
                self.out["captures_wrong_origin"] += 1
        for rel, text in self.edits.items():
            shown = git(self.vault, "show", f"HEAD:{rel}", check=False).stdout
            if shown != text:
                self.out["edits_missing_from_head"] += 1
                self.problems.append(f"user edit of {rel} not in HEAD")
        self.out["origins_of_acknowledged"] = dict(origins)
        fsck = git(self.vault, "fsck", "--no-progress", check=False)
        self.out["final_fsck_clean"] = fsck.returncode == 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cycles", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--writers", type=int, default=3, help="concurrent capture threads")
    p.add_argument("--cli-captures", type=int, default=1, help="`agentmd capture` runs while each daemon is down")
    p.add_argument("--min-run", type=float, default=0.5, help="shortest life of a daemon, seconds")
    p.add_argument("--max-run", type=float, default=3.0, help="longest life of a daemon, seconds")
    p.add_argument("--debounce", type=float, default=0.3, help="the daemon's commit debounce")
    p.add_argument("--start-timeout", type=float, default=60.0)
    p.add_argument("--settle-timeout", type=float, default=120.0)
    p.add_argument("--dense", action="store_true", help="keep the dense arm on (slower start-up)")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="agentmd-soak-"))
    soak = Soak(work, args)
    started = time.monotonic()
    try:
        soak.setup()
        for i in range(args.cycles):
            soak.cycle(i)
        soak.settle()
        soak.judge()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    out = dict(soak.out)
    out.update(
        cycles=args.cycles,
        seed=args.seed,
        seconds=round(time.monotonic() - started, 1),
        problems=soak.problems[:50],
        scratch=str(work) if args.keep else None,
    )
    for key in (
        "captures_lost_from_disk",
        "captures_missing_from_head",
        "captures_wrong_origin",
        "stale_locks",
        "restarts_failed",
        "edits_missing_from_head",
        "captures_acknowledged",
        "cli_captures_acknowledged",
        "cli_captures_refused",
        "fsck_clean",
        "restarts_ok",
    ):
        out.setdefault(key, 0)
    print(json.dumps(out, indent=2, sort_keys=True))
    lost = out["captures_lost_from_disk"] + out["captures_missing_from_head"]
    print(
        f"\n{args.cycles} kill -9 cycles in {out['seconds']} s: {out['captures_acknowledged']} captures acknowledged "
        f"over HTTP and {out['cli_captures_acknowledged']} from the command line while the daemon was down, "
        f"{lost} lost, {out['captures_wrong_origin']} under a wrong origin {out['origins_of_acknowledged']}; "
        f"git fsck clean {out['fsck_clean']}/{args.cycles}; restarts OK {out['restarts_ok']}/{args.cycles + 1}; "
        f"stale index.lock {out['stale_locks']}; user edits missing from HEAD {out['edits_missing_from_head']}"
    )
    failed = lost or out["stale_locks"] or out["restarts_failed"] or out["fsck_clean"] < args.cycles
    failed = failed or out["edits_missing_from_head"] or not out["final_fsck_clean"] or out["captures_wrong_origin"]
    failed = failed or out["cli_captures_refused"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
