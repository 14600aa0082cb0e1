"""One daemon per vault: an exclusive lock in the vault's state directory, and who holds it.

Kept apart from the daemon itself so commands that only need to know whether a daemon runs (and on
which port) stay quick to start.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Any

from agentmd.engine.errors import AgentmdError
from agentmd.engine.fsutil import read_json, write_json

ORPHAN_WAIT = 10.0  # seconds a start waits for a daemon whose `agentmd serve` is gone to finish dying


class AlreadyRunning(AgentmdError):
    pass


class InstanceLock:
    """An exclusive flock on `<state>/daemon.lock`; `<state>/daemon.json` says who holds it and where."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.path = state_dir / "daemon.lock"
        self.info_path = state_dir / "daemon.json"
        self._fd: int | None = None

    def acquire(self, info: dict[str, Any]) -> None:
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
        self._fd = fd
        write_json(self.info_path, info)

    def release(self) -> None:
        if self._fd is not None:
            self.info_path.unlink(missing_ok=True)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def running_daemon(state_dir: Path) -> dict[str, Any] | None:
    """The running daemon's info (pid, port) for this state dir, or None when none holds the lock."""
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


def wait_for_orphan(state_dir: Path, timeout: float = ORPHAN_WAIT) -> bool:
    """Wait, up to `timeout` seconds, while the vault's lock is held by a daemon whose supervising
    `agentmd serve` is gone (engine/daemon/supervisor.py): the kernel is killing it, and its lock, port and
    files are about to be free. True when there was such a daemon."""
    from agentmd.engine.daemon.supervisor import supervisor_alive

    deadline = time.monotonic() + timeout
    waited = False
    while True:
        info = running_daemon(state_dir)
        if info is None or supervisor_alive(info):
            return waited
        waited = True
        if time.monotonic() >= deadline:
            return waited
        time.sleep(0.02)
