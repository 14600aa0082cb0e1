"""One daemon per vault: an exclusive lock in the vault's state directory and the vault lease kept with the
vault (engine/lease.py), and who holds them.

The state folder's lock keeps one daemon per state folder (and is all a vault without `.git` has); the lease
keeps one per vault whatever the state folder, and refuses a start while another machine's daemon holds it.
Kept apart from the daemon itself so commands that only need to know whether a daemon runs (and on which
port) stay quick to start.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from agentmd.engine import lease
from agentmd.engine.errors import AgentmdError
from agentmd.engine.fsutil import read_json, write_json

ORPHAN_WAIT = 10.0  # seconds a start waits for a daemon whose `agentmd serve` is gone to finish dying
STOPPING_WAIT = 90.0  # seconds a start waits for a daemon that is stopping (its threads get 60 s to finish)


class AlreadyRunning(AgentmdError):
    pass


class StateUnwritable(AgentmdError):
    """The vault's state folder (its tokens, `daemon.json`, the lock) cannot be written: its disk is full,
    read-only or failing, so the daemon cannot start."""


class InstanceLock:
    """An exclusive flock on `<state>/daemon.lock`, `<state>/daemon.json` saying who holds it and where, and,
    when `vault` is given, the vault lease beside them."""

    def __init__(self, state_dir: Path, vault: Path | None = None) -> None:
        self.state_dir = state_dir
        self.path = state_dir / "daemon.lock"
        self.info_path = state_dir / "daemon.json"
        self.lease = lease.Lease(vault) if vault is not None else None
        self._fd: int | None = None

    def acquire(self, info: dict[str, object]) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            other = read_json(self.info_path) or {}
            raise AlreadyRunning(
                f"agentmd serve is already running for this vault (pid {other.get('pid', '?')}, "
                f"port {other.get('port', '?')}); stop it first or use that one"
            ) from None
        if self.lease is not None:
            try:
                refused = self.lease.acquire({**info, "state_dir": str(self.state_dir)})
            except OSError as exc:
                refused = f"the vault lease in {self.lease.folder} could not be taken ({exc.strerror or exc})"
                if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                    refused += ": the vault's disk is full; free some space on it and start again"
            if refused is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
                raise AlreadyRunning(refused)
        self._fd = fd
        write_json(self.info_path, info)

    def update(self, info: dict[str, object]) -> None:
        """Rewrite who holds the lock (the port is known once the listener is bound)."""
        write_json(self.info_path, info)
        if self.lease is not None:
            self.lease.update({**info, "state_dir": str(self.state_dir)})

    def problem(self) -> str | None:
        """Why the vault lease on disk no longer names this daemon, else None."""
        return self.lease.problem() if self.lease is not None else None

    def release(self) -> None:
        if self._fd is not None:
            if self.lease is not None:
                self.lease.release()
            self.info_path.unlink(missing_ok=True)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def running_daemon(state_dir: Path, vault: Path | None = None) -> dict[str, object] | None:
    """The running daemon's info (pid, port): the one holding `vault`'s lease on this machine, else the one
    holding this state dir's lock; None when neither is held."""
    if vault is not None:
        holder = lease.live_holder(vault)
        if holder is not None:
            return holder
    lock = state_dir / "daemon.lock"
    if not lock.exists():
        return None
    fd = os.open(lock, os.O_RDWR)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return read_json(state_dir / "daemon.json") or {"pid": None, "port": None}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def wait_for_orphan(state_dir: Path, timeout: float = ORPHAN_WAIT, vault: Path | None = None) -> bool:
    """Wait, up to `timeout` seconds, while the vault's lock is held by a daemon whose supervising
    `agentmd serve` is gone (engine/daemon/supervisor.py): the kernel is killing it, and its lock, port and
    files are about to be free. True when there was such a daemon."""
    from agentmd.engine.daemon.supervisor import supervisor_alive

    deadline = time.monotonic() + timeout
    waited = False
    while True:
        info = running_daemon(state_dir, vault)
        if info is None or supervisor_alive(info):
            return waited
        waited = True
        if time.monotonic() >= deadline:
            return waited
        time.sleep(0.02)


def wait_for_stopping(state_dir: Path, timeout: float = STOPPING_WAIT, vault: Path | None = None) -> None:
    """Wait, up to `timeout` seconds, while the vault's daemon says it is stopping (it marks itself so when it
    begins to stop): a restart right after a `kill -TERM` starts once the old one is gone, instead of being
    refused while it finishes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = running_daemon(state_dir, vault)
        if info is None or not info.get("stopping"):
            return
        time.sleep(0.05)
