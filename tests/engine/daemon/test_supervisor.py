"""`agentmd serve` keeps its daemon alive through a crash signal, and a `kill -9` of it leaves nothing running."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import http_get, make_repo, serve_process, wait_until

from agentmd.engine.daemon import supervisor
from agentmd.engine.daemon.instance import running_daemon
from agentmd.engine.settings import Settings, resolve

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not supervisor.supported(), reason="the supervisor needs Linux's PR_SET_PDEATHSIG"),
]


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/first.md": "first note about otters\n"})
    return resolve(vault=str(vault))


def _serve(settings: Settings, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    return serve_process(settings.vault, env, *extra)


def _info(settings: Settings) -> dict[str, Any]:
    try:
        data = json.loads((settings.state_dir / "daemon.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _ready(settings: Settings, proc: subprocess.Popen[bytes], other_than: int | None = None) -> tuple[int, int]:
    """(daemon pid, port) of the daemon `proc` supervises, once it answers /health."""

    def read() -> tuple[int, int] | None:
        info = _info(settings)
        pid, port = info.get("pid"), info.get("port")
        if info.get("supervisor") != proc.pid or not pid or not port or pid == other_than:
            return None
        try:
            return (int(pid), int(port)) if http_get(int(port), "/health")[0] == 200 else None
        except OSError:
            return None

    return wait_until(read, 30, "the supervised daemon")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie still answers kill(0) until its parent reaps it
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_daemon_killed_by_sigbus_is_started_again(settings: Settings, env: dict[str, str]) -> None:
    proc = _serve(settings, env)
    try:
        first, port = _ready(settings, proc)
        assert first != proc.pid  # the daemon is a child; `agentmd serve` itself maps no index
        os.kill(first, signal.SIGBUS)  # what a mapped index file cut short does to the reader
        second, again = _ready(settings, proc, other_than=first)
        assert proc.poll() is None and _gone(first)
        assert again == port  # the parent kept the listening socket: clients find the daemon where it was
        wait_until(  # the new daemon opens the index again and serves it
            lambda: http_get(port, "/status")[1].get("index", {}).get("documents") == 2, 30, "the index served again"
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert code == 0, stderr
    assert "the daemon was killed by SIGBUS; starting it again" in stderr
    assert "Traceback" not in stderr
    assert _gone(second) and running_daemon(settings.state_dir) is None


def test_kill_9_of_serve_takes_its_daemon_and_a_new_serve_starts_at_once(
    settings: Settings, env: dict[str, str]
) -> None:
    proc = _serve(settings, env)
    try:
        child, _port = _ready(settings, proc)
    finally:
        proc.kill()
        proc.wait(10)
    again = _serve(settings, env)  # at once: the old daemon may still be going down
    try:
        _new, port = _ready(settings, again, other_than=child)
        assert _gone(child)
        assert http_get(port, "/health")[0] == 200
    finally:
        again.send_signal(signal.SIGTERM)
        assert again.wait(30) == 0


def _count(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _runner(runs: Path, ending: int | signal.Signals) -> Any:
    def run() -> int:
        with runs.open("a") as fh:
            fh.write("run\n")
        if isinstance(ending, signal.Signals):
            if ending != signal.SIGKILL:
                signal.signal(ending, signal.SIG_DFL)  # pytest's faulthandler would print the stack first
            os.kill(os.getpid(), ending)
        return int(ending)

    return run


def test_crashes_are_restarted_until_too_many_in_the_window(tmp_path: Path) -> None:
    runs, err = tmp_path / "runs", io.StringIO()
    ticks = iter(range(100))
    code = supervisor.supervise(
        _runner(runs, signal.SIGSEGV), err, clock=lambda: float(next(ticks)), max_restarts=2, window=60.0
    )
    assert code == 128 + signal.SIGSEGV
    assert _count(runs) == 3  # the first run and two restarts
    lines = err.getvalue().splitlines()
    assert lines[:2] == ["agentmd: the daemon was killed by SIGSEGV; starting it again"] * 2
    assert "killed by SIGSEGV, 3 crashes within 60 s; not starting it again" in lines[2]


def test_crashes_far_apart_are_each_restarted(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    ticks = iter([0.0, 100.0, 200.0, 300.0, 301.0, 302.0])  # three crashes a window apart, then three at once
    code = supervisor.supervise(
        _runner(runs, signal.SIGBUS), io.StringIO(), clock=lambda: next(ticks), max_restarts=2, window=60.0
    )
    assert code == 128 + signal.SIGBUS and _count(runs) == 6


@pytest.mark.parametrize(("ending", "code"), [(0, 0), (3, 3), (signal.SIGKILL, 128 + signal.SIGKILL)])
def test_an_exit_or_a_sigkill_is_final(tmp_path: Path, ending: int | signal.Signals, code: int) -> None:
    runs, err = tmp_path / "runs", io.StringIO()
    assert supervisor.supervise(_runner(runs, ending), err) == code
    assert _count(runs) == 1 and err.getvalue() == ""


def test_no_restart_runs_the_daemon_in_the_serve_process_itself(settings: Settings, env: dict[str, str]) -> None:
    proc = _serve(settings, env, "--no-restart")
    try:

        def ready() -> int | None:
            info = _info(settings)
            if info.get("pid") != proc.pid or not info.get("port"):
                return None
            return int(info["port"]) if http_get(int(info["port"]), "/health")[0] == 200 else None

        wait_until(ready, 30, "the unsupervised daemon")
        assert "supervisor" not in _info(settings)  # nobody would start it again
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
    assert code == 0 and running_daemon(settings.state_dir) is None
