"""Sync soak: three clones of one vault and a bare remote on this machine, a real daemon on each clone, a
person editing every clone, agents capturing over HTTP, the remote going out of reach and `kill -9` of the
daemons, round after round (`./dev soak --sync`).

Each machine has its own XDG state, cache and config folders, its own port and its own host name
(`AGENTMD_HOST`), so its commits carry its own `host:` trailer and its conflict siblings name it. The config
folder's `jobs/sync.toml` runs the daemon's own sync job every few seconds besides the rounds this script asks
for over `POST /v1/sync`; the jobs that would write notes of their own (probe, morning note, enrichment) are
switched off so the clones can settle at the end.

A round: the person saves notes on each clone (atomic replace and in-place writes, new notes, renames,
deletions, often the same lines of the same notes on two machines, so real conflicts happen), the agents
capture on each running daemon (sometimes the same title on two machines), each running daemon is asked for
a sync round at a random moment, the remote may be renamed away or brought back mid-round, and a daemon may
be killed with SIGKILL at a random moment (started again at a later round). The remote's `main` is recorded
after every round.

At the end the remote comes back, every daemon runs, each clone syncs in turn until a pass changes nothing,
and the checks of bench/sync_soak_checks.py run: every clone's HEAD tree equals the remote's `main`; no lost
edit (every token a save wrote and no later save removed on purpose, and every acknowledged capture, is in a
note of the remote's `main`, at its path, a renamed path or a conflict sibling); the remote's `main` only
moved forward (the bare repository also refuses non-fast-forward pushes); no conflict marker in any note;
every conflict sibling listed by `agentmd conflicts` on the machine whose merge wrote it; `git fsck` clean.
Prints one JSON object; exit status 1 on any violation.

    python bench/sync_soak.py --rounds 200 --seed 7
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

from soak import GIT_ENV, OPENER, REPO, git, request
from sync_soak_checks import TOKEN, judge, tokens_in

from agentmd.engine.client import access_token, locate
from agentmd.engine.settings import resolve

SLOTS = 8  # lines of a shared note a person rewrites; the same slot on two machines is a real conflict
QUIET_JOBS = ("probe", "morning-note", "enrich", "groom-propose", "ingest-sweep", "repack")


def shared_note(i: int) -> str:
    lines = [f"# Shared note {i}", ""]
    for s in range(SLOTS):
        lines += [f"slot {s}: start", ""]
    return "\n".join(lines)


class Machine:
    """One clone, its folders and its daemon (an `agentmd serve` process, killed and started again)."""

    def __init__(self, index: int, work: Path, args: argparse.Namespace) -> None:
        self.index = index
        self.name = f"soak-m{index}"
        self.vault = work / f"m{index}"
        self.home = work / f"home-m{index}"
        self.args = args
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "XDG_STATE_HOME": str(self.home / "state"),
            "XDG_CACHE_HOME": str(self.home / "cache"),
            "XDG_CONFIG_HOME": str(self.home / "config"),
            "AGENTMD_HOST": self.name,
            "AGENTMD_DAILY_WRITE_CAP": "0",
            "AGENTMD_DENSE": "0",
            **GIT_ENV,
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self.lock = threading.Lock()

    def configure(self) -> None:
        jobs = self.home / "config" / "agentmd" / "jobs"
        jobs.mkdir(parents=True)
        (jobs.parent / "config.toml").write_text("dense = false\n")
        (jobs / "sync.toml").write_text(f'schedule = "every {self.args.sync_every:g}s"\nfirst_delay = "1s"\n')
        for name in QUIET_JOBS:
            (jobs / f"{name}.toml").write_text("enabled = false\n")
        self.state_dir = resolve(vault=str(self.vault), env=self.env).state_dir

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.port is not None and self.proc.poll() is None

    def token(self) -> str | None:
        return access_token(self.state_dir)

    def start(self) -> bool:
        deadline = time.monotonic() + 20
        while locate(self.state_dir, self.vault) is not None and time.monotonic() < deadline:
            time.sleep(0.05)  # a killed supervisor's daemon child goes down with it
        log = open(self.home / "serve.log", "ab")  # noqa: SIM115 - handed to the child
        argv = [sys.executable, "-m", "agentmd", "serve", "--vault", str(self.vault), "--port", "0",
                "--commit-debounce", str(self.args.debounce), "--health-interval", "1",
                "--reconcile-interval", "4"]  # fmt: skip
        proc = subprocess.Popen(argv, cwd=REPO, env=self.env, stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        deadline = time.monotonic() + self.args.start_timeout
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                info = json.loads((self.state_dir / "daemon.json").read_text())
            except (OSError, ValueError):
                info = {}
            if proc.pid in (info.get("pid"), info.get("supervisor")) and info.get("port"):
                try:
                    code, body = request(int(info["port"]), "GET", "/health", timeout=2)
                except OSError:
                    code, body = 0, None
                if code == 200 and body and body.get("index_stale") is False:
                    with self.lock:
                        self.proc, self.port = proc, int(info["port"])
                    return True
            time.sleep(0.05)
        proc.kill()
        proc.wait()
        return False

    def kill(self) -> bool:
        with self.lock:
            proc, self.proc, self.port = self.proc, None, None
        if proc is None or proc.poll() is not None:
            return False
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return True

    def stop(self) -> None:
        with self.lock:
            proc, self.proc, self.port = self.proc, None, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def post(self, path: str, payload: Any, timeout: float) -> tuple[int, Any]:
        port = self.port
        if port is None:
            raise ConnectionError("the daemon is down")
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.token()}"}
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(payload).encode(), headers)
        try:
            with OPENER.open(req, timeout=timeout) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:  # a refusal: its JSON says why
            try:
                return exc.code, json.loads(exc.read() or b"{}")
            except ValueError:
                return exc.code, {}
        except http.client.HTTPException as exc:  # an answer cut short by a kill: nothing was acknowledged
            raise ConnectionError(f"the answer was cut short: {exc!r}") from None


class World:
    def __init__(self, work: Path, args: argparse.Namespace) -> None:
        self.work = work
        self.args = args
        self.rng = random.Random(args.seed)
        self.bare = work / "remote.git"
        self.away = work / "remote-away.git"
        self.machines = [Machine(i, work, args) for i in range(args.machines)]
        self.out: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.written: dict[str, str] = {}  # token -> what wrote it ("edit m1 notes/x.md", "capture m2 path")
        self.superseded: set[str] = set()  # tokens a later save saw and removed on purpose
        self.saved_at: dict[str, float] = {}  # token of a save -> when it was written (seconds since the epoch)
        self.remote_heads: list[str] = []
        self.violations: list[str] = []
        self.saves = 0
        self.races: list[str] = []  # saves overwritten in git's own check-then-write window (not violations)
        self.sync_errors: list[str] = []  # failed rounds other than an unreachable remote or a busy work tree

    # -- set-up ---------------------------------------------------------------------------------------

    def setup(self) -> None:
        git(self.work, "init", "-q", "--bare", "-b", "main", str(self.bare))
        git(self.bare, "config", "receive.denyNonFastForwards", "true")
        git(self.bare, "config", "receive.denyDeletes", "true")
        first = self.machines[0].vault
        (first / "notes").mkdir(parents=True)
        for i in range(self.args.notes):
            (first / "notes" / f"shared-{i}.md").write_text(shared_note(i))
        git(first, "init", "-q", "-b", "main")
        git(first, "add", "-A")
        git(first, "commit", "-q", "-m", "start")
        git(first, "remote", "add", "origin", str(self.bare))
        git(first, "push", "-q", "origin", "main")
        for m in self.machines[1:]:
            git(self.work, "clone", "-q", str(self.bare), str(m.vault))
        for m in self.machines:
            git(m.vault, "config", "user.name", f"Owner {m.index}")
            git(m.vault, "config", "user.email", f"owner{m.index}@example.com")
            m.configure()
        self.record_remote()
        for m in self.machines:
            self.start(m, "start")

    def start(self, m: Machine, where: str) -> None:
        if m.start():
            self.out["restarts_ok"] += 1
        else:
            self.out["restarts_failed"] += 1
            self.violations.append(f"{where}: the daemon of {m.name} did not answer /health")

    def remote_dir(self) -> Path:
        return self.bare if self.bare.exists() else self.away

    def record_remote(self) -> None:
        head = git(self.remote_dir(), "rev-parse", "--verify", "--quiet", "main", check=False).stdout.strip()
        if head and (not self.remote_heads or self.remote_heads[-1] != head):
            self.remote_heads.append(head)

    # -- the person ----------------------------------------------------------------------------------

    def notes_of(self, m: Machine) -> list[str]:
        return sorted(
            p.relative_to(m.vault).as_posix()
            for p in (m.vault / "notes").glob("*.md")
            if ".conflict-" not in p.name  # the person leaves the review queue alone
        )

    def save(self, m: Machine, rnd: int, n: int, rng: random.Random) -> None:
        """One save by the person at machine `m`; the tokens it wrote and those it saw and removed."""
        token = f"tk-m{m.index}-r{rnd}-e{n}"
        notes = self.notes_of(m)
        kind = rng.choices(["line", "append", "new", "rename", "delete"], [55, 15, 12, 9, 9])[0]
        if len(notes) < self.args.notes // 2:
            kind = "new"
        if kind == "new":
            rel = f"notes/p-m{m.index}-r{rnd}-e{n}.md"
            self.write_new(m.vault / rel, f"# Note {m.index} {rnd} {n}\n\nfirst line {token}\n")  # one token a note
            self.wrote(token, f"new {m.name} {rel}", set())
            return
        rel = rng.choice(notes)
        path = m.vault / rel
        for _ in range(5):  # the file changed under us (a sync moved it): read it again, as an editor reloads
            try:
                before_stat = os.stat(path)
                before = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return  # gone meanwhile (a sync, a rename): the person picks another note next time
            if kind == "delete":
                if self.same(path, before_stat):
                    path.unlink()
                    self.wrote(None, f"delete {m.name} {rel}", tokens_in(before))
                    return
                continue
            if kind == "rename":
                new = f"notes/{Path(rel).stem.split('-mv')[0]}-mv{m.index}r{rnd}e{n}.md"
                if not (m.vault / new).exists() and self.same(path, before_stat):
                    os.rename(path, m.vault / new)
                    self.out["saves_rename"] += 1
                    return
                continue
            lines = before.split("\n")
            if kind == "append":
                lines.insert(len(lines) - 1 if lines and lines[-1] == "" else len(lines), f"- {token}")
            else:
                slots = [i for i, line in enumerate(lines) if line.startswith("slot ") or TOKEN.search(line)]
                i = rng.choice(slots) if slots else len(lines)
                head = lines[i].split(":", 1)[0] if i < len(lines) and lines[i].startswith("slot ") else "line"
                lines[i:i + 1] = [f"{head}: {token} from {m.name}"]  # fmt: skip
            after = "\n".join(lines)
            if self.replace(path, after, before_stat, atomic=rng.random() < 0.6):
                self.wrote(token, f"{kind} {m.name} {rel}", tokens_in(before) - tokens_in(after))
                return

    @staticmethod
    def same(path: Path, before: os.stat_result) -> bool:
        try:
            now = os.stat(path)
        except OSError:
            return False
        return (now.st_ino, now.st_size, now.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)

    def replace(self, path: Path, text: str, before: os.stat_result, *, atomic: bool) -> bool:
        """Save `text` as an editor does, only if the file is still what the person read."""
        if atomic:  # write a temporary file, then rename it over the note
            tmp = path.with_name(f".{path.name}.tmp-{random.randrange(10**9)}")
            tmp.write_text(text, encoding="utf-8")
            if not self.same(path, before):
                tmp.unlink()
                return False
            os.replace(tmp, path)
            self.out["saves_atomic"] += 1
            return True
        if not self.same(path, before):
            return False
        with open(path, "r+", encoding="utf-8") as fh:  # in place: truncate and write, as Obsidian may
            fh.truncate(0)
            fh.write(text)
        self.out["saves_in_place"] += 1
        return True

    @staticmethod
    def write_new(path: Path, text: str) -> None:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)

    def wrote(self, token: str | None, what: str, removed: set[str]) -> None:
        with self.lock:
            if token is not None:
                self.written[token] = what
                self.saved_at[token] = time.time()
            self.superseded |= removed
            self.saves += 1
        self.out[f"saves_{what.split()[0]}"] += 1

    # -- the agents ----------------------------------------------------------------------------------

    def capture(self, m: Machine, rnd: int, n: int, shared: bool) -> None:
        token = f"cap-m{m.index}-r{rnd}-c{n}"
        title = f"Soak shared capture round {rnd}" if shared else f"Soak capture {m.name} round {rnd} {n}"
        payload = {"title": title, "body": f"Captured on {m.name}: {token}.", "type": "fact", "why": "sync soak"}
        try:
            code, body = m.post("/v1/capture", payload, timeout=30)
        except OSError:
            self.out["captures_cut_short"] += 1  # killed: nothing acknowledged
            return
        if code == 200 and body and body.get("path"):
            with self.lock:
                self.written[token] = f"capture {m.name} {body['path']}"
            self.out["captures_acknowledged"] += 1
        else:
            self.out[f"captures_refused_{code}"] += 1

    # -- sync ----------------------------------------------------------------------------------------

    def sync(self, m: Machine, where: str) -> str:
        try:
            code, body = m.post("/v1/sync", {}, timeout=self.args.sync_timeout)
        except TimeoutError:
            self.out["syncs_stuck"] += 1
            self.violations.append(f"{where}: the sync round on {m.name} did not answer in {self.args.sync_timeout}s")
            return "stuck"
        except OSError:
            self.out["syncs_cut_short"] += 1
            return "cut short"
        if code == 200 and body:
            self.out[f"syncs_{body['outcome']}"] += 1
            self.out["sync_conflicts_reported"] += len([c for c in body.get("conflicts", []) if c.get("sibling")])
            return str(body["outcome"])
        error = str((body or {}).get("error", ""))
        reason = "unreachable" if "reachable" in error else "busy" if "work tree" in error else "other"
        self.out[f"syncs_failed_{reason}"] += 1
        if reason == "other" and len(self.sync_errors) < 20:
            self.sync_errors.append(f"{where} on {m.name}: {error[:300]}")
        return f"failed: {error[:200]}"

    # -- a round -------------------------------------------------------------------------------------

    def round(self, rnd: int) -> None:
        rng = random.Random(self.rng.random())
        for m in self.machines:
            if not m.alive and rng.random() < 0.7:
                self.start(m, f"round {rnd}")
        length = rng.uniform(self.args.min_round, self.args.max_round)
        threads: list[threading.Thread] = []

        def later(delay: float, fn: Any, *a: Any) -> None:
            t = threading.Timer(delay, fn, a)
            threads.append(t)
            t.start()

        for m in self.machines:
            if m.alive:
                later(rng.uniform(0.1, length), self.sync, m, f"round {rnd}")
                for n in range(rng.randrange(0, self.args.captures + 1)):
                    later(rng.uniform(0, length), self.capture, m, rnd, n, rng.random() < 0.3)
        if rng.random() < (self.args.partition_rate if self.bare.exists() else 0.5):
            later(rng.uniform(0, length), self.toggle_remote)  # out of reach for two rounds or so, then back
        if rng.random() < self.args.kill_rate:
            later(rng.uniform(0, length), self.kill, rng.choice(self.machines))
        end = time.monotonic() + length
        n = 0
        while time.monotonic() < end:
            n += 1
            self.save(rng.choice(self.machines), rnd, n, rng)
            time.sleep(rng.uniform(0.01, self.args.save_gap))
        for t in threads:
            t.join()
        self.record_remote()
        self.out["rounds"] += 1

    def toggle_remote(self) -> None:
        with self.lock:
            if self.bare.exists():
                self.bare.rename(self.away)
                self.out["partitions"] += 1
            else:
                self.away.rename(self.bare)

    def kill(self, m: Machine) -> None:
        if m.kill():
            self.out["kills"] += 1

    # -- the end -------------------------------------------------------------------------------------

    def settle(self) -> None:
        if self.away.exists():
            self.away.rename(self.bare)
        for m in self.machines:
            if not m.alive:
                m.kill()  # reap a process that died on its own
                self.start(m, "final restart")
        for m in self.machines:
            deadline = time.monotonic() + self.args.settle_timeout
            while git(m.vault, "status", "--porcelain").stdout and time.monotonic() < deadline:
                time.sleep(0.2)
        for sweep in range(self.args.max_sweeps):
            outcomes = [self.sync(m, f"final sweep {sweep}") for m in self.machines for _ in range(2)]
            self.record_remote()
            self.out["final_sweeps"] += 1
            heads = {git(m.vault, "rev-parse", "HEAD").stdout.strip() for m in self.machines}
            if sweep >= 1 and set(outcomes) == {"up-to-date"} and heads == {self.remote_heads[-1]}:
                break
        for m in self.machines:
            m.stop()
        self.record_remote()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--machines", type=int, default=3)
    p.add_argument("--notes", type=int, default=8, help="shared notes in the vault at the start")
    p.add_argument("--captures", type=int, default=2, help="most captures per machine and round")
    p.add_argument("--min-round", type=float, default=0.8, help="shortest round, seconds")
    p.add_argument("--max-round", type=float, default=2.5, help="longest round, seconds")
    p.add_argument("--save-gap", type=float, default=0.25, help="longest pause between two saves, seconds")
    p.add_argument("--kill-rate", type=float, default=0.2, help="chance a round kills a daemon with SIGKILL")
    p.add_argument("--partition-rate", type=float, default=0.2, help="chance a round moves the remote away/back")
    p.add_argument("--sync-every", type=float, default=5.0, help="the daemons' own sync job interval, seconds")
    p.add_argument("--debounce", type=float, default=0.3, help="the daemons' commit debounce")
    p.add_argument("--sync-timeout", type=float, default=120.0)
    p.add_argument("--start-timeout", type=float, default=60.0)
    p.add_argument("--settle-timeout", type=float, default=60.0)
    p.add_argument("--max-sweeps", type=int, default=6, help="final passes of every clone syncing twice")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="agentmd-sync-soak-"))
    world = World(work, args)
    started = time.monotonic()
    figures: dict[str, Any] = {}
    try:
        world.setup()
        for rnd in range(args.rounds):
            world.round(rnd)
        world.settle()
        figures = judge(world)
    finally:
        for m in world.machines:
            m.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    out = {**dict(sorted(world.out.items())), **figures}
    for key in ("kills", "partitions", "captures_acknowledged", "restarts_failed", "syncs_stuck"):
        out.setdefault(key, 0)
    out.update(
        edits=world.saves + world.out["saves_rename"],
        rounds=args.rounds,
        machines=args.machines,
        seed=args.seed,
        wall_seconds=round(time.monotonic() - started, 1),
        violations=len(world.violations),
        problems=world.violations[:50],
        sync_errors=world.sync_errors,
        races=world.races,
        scratch=str(work) if args.keep else None,
    )
    print(json.dumps(out, indent=2, sort_keys=True))
    return 1 if world.violations else 0


if __name__ == "__main__":
    sys.exit(main())
