"""One daemon per vault, wherever its state lives: the lease kept in the vault's `.git`.

Real daemons (in this process and as `agentmd serve` processes) on one real git vault, each environment with
its own HOME and XDG folders, as another shell, a service manager or a container would have them.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO
from daemon_helpers import make_repo, origins, running_daemon, wait_until

from agentmd.cli import main
from agentmd.engine import lease
from agentmd.engine.client import locate
from agentmd.engine.daemon.instance import AlreadyRunning
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import Settings, resolve

pytestmark = pytest.mark.slow


def environment(root: Path) -> dict[str, str]:
    """A HOME and XDG folders of their own, as a second shell or a service would have."""
    env = {"HOME": str(root / "home")}
    for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        env[name] = str(root / name.lower())
    return env


@pytest.fixture
def vault(tmp_path: Path, env: dict[str, str]) -> Path:
    notes = {"README.md": "# Vault\n", "notes/otters.md": "# Otters\n\nOtters hold hands.\n"}
    return make_repo(tmp_path / "vault", notes)


@pytest.fixture
def first(vault: Path) -> Iterator[Daemon]:
    with running_daemon(resolve(vault=str(vault)), commit_debounce=0.1) as d:
        yield d


def other(vault: Path, tmp_path: Path) -> tuple[Settings, dict[str, str]]:
    env = environment(tmp_path / "other")
    return resolve(vault=str(vault), env=env), env


def cli_in(env: dict[str, str], monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str, str]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def foreign_record(pid: int = 4242) -> dict[str, object]:
    return {
        "machine": "0123456789abcdef-laptop-b",
        "host": "laptop-b",
        "boot": "x",
        "pid": pid,
        "port": 7821,
        "state_dir": "/home/someone/.local/state/agentmd/v",
        "started": "2026-12-04T10:15:00+00:00",
    }


def write_lease(vault: Path, record: dict[str, object]) -> Path:
    folder = vault / ".git" / lease.LEASE_FOLDER
    folder.mkdir(exist_ok=True)
    path = folder / lease.LEASE_FILE
    path.write_text(json.dumps(record))
    return path


def test_the_lease_names_the_daemon_and_a_clean_stop_removes_it(first: Daemon, vault: Path) -> None:
    record = lease.read_lease(vault)
    assert record is not None
    assert record["pid"] == os.getpid() and record["port"] == first.port
    assert record["state_dir"] == str(first.settings.state_dir)
    assert lease.same_machine(record) and record["host"] == lease.this_machine()["host"]
    assert lease.live_holder(vault) == record
    first.stop()
    assert lease.read_lease(vault) is None and lease.live_holder(vault) is None


def test_a_second_daemon_with_other_state_folders_is_refused_naming_the_first(
    first: Daemon, vault: Path, tmp_path: Path
) -> None:
    settings, _ = other(vault, tmp_path)
    assert settings.state_dir != first.settings.state_dir
    second = Daemon(settings, port=0, commit_debounce=0.1, probe_interval=0, watch=False)
    with pytest.raises(AlreadyRunning) as refused:
        second.start()
    message = str(refused.value)
    assert f"pid {os.getpid()}" in message and f"port {first.port}" in message
    assert str(first.settings.state_dir) in message
    assert lease.read_lease(vault)["port"] == first.port  # the first one's lease is untouched


def test_serve_from_another_environment_is_refused_and_status_finds_the_live_daemon(
    first: Daemon, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, env = other(vault, tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "agentmd", "serve", "--vault", str(vault), "--port", "0", "--no-restart"],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "already running for this vault" in proc.stderr and f"port {first.port}" in proc.stderr
    assert "Traceback" not in proc.stderr
    found = locate(settings.state_dir, vault)
    assert found is not None and found.port == first.port and found.state_dir == first.settings.state_dir
    _code, out, err = cli_in(env, monkeypatch, "status", "--vault", str(vault), "--json")
    status = json.loads(out)
    assert status["daemon"]["running"] is True and status["daemon"]["pid"] == os.getpid(), err
    assert not any("another-daemon" in r for r in status["red"])


def test_a_capture_from_another_environment_goes_to_the_live_daemon(
    first: Daemon, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, env = other(vault, tmp_path)
    code, _out, err = cli_in(
        env, monkeypatch, "capture", "--vault", str(vault), "--title", "Lease capture", "--body", "Kept by one daemon."
    )
    assert code == 0, err
    wait_until(lambda: "capture" in origins(vault)[:1], 20, "the daemon's commit")
    assert not settings.cache_dir.exists()  # no index of its own: the daemon did the work


def test_a_lease_left_by_a_dead_process_on_this_machine_is_reclaimed(vault: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    write_lease(vault, {**lease.this_machine(), "pid": int(dead.stdout), "port": 1, "state_dir": "/nowhere"})
    d = Daemon(resolve(vault=str(vault)), port=0, commit_debounce=0.1, probe_interval=0, watch=False)
    d.start()
    try:
        record = lease.read_lease(vault)
        assert record is not None and record["pid"] == os.getpid() and record["port"] == d.port
    finally:
        d.stop()


def test_a_lease_from_an_earlier_boot_is_reclaimed(vault: Path) -> None:
    write_lease(vault, {**lease.this_machine(), "boot": "an-earlier-boot", "pid": os.getpid(), "port": 1})
    d = Daemon(resolve(vault=str(vault)), port=0, commit_debounce=0.1, probe_interval=0, watch=False)
    d.start()
    try:
        assert lease.read_lease(vault)["port"] == d.port
    finally:
        d.stop()


def test_another_machines_lease_is_never_taken_over(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_lease(vault, foreign_record())
    d = Daemon(resolve(vault=str(vault)), port=0, commit_debounce=0.1, probe_interval=0, watch=False)
    with pytest.raises(AlreadyRunning, match=r"another machine runs agentmd on this vault \(host laptop-b, pid 4242"):
        d.start()
    assert json.loads(path.read_text()) == foreign_record()
    _, env = other(vault, tmp_path)
    code, out, err = cli_in(env, monkeypatch, "status", "--vault", str(vault))
    assert code == 3
    assert "another-daemon: another machine runs agentmd on this vault (host laptop-b" in out
    assert str(path) in out  # says which file to remove once that machine no longer runs it
    code, out, err = cli_in(env, monkeypatch, "serve", "--vault", str(vault), "--port", "0", "--no-restart")
    assert code != 0 and "another machine runs agentmd on this vault" in err
    path.unlink()
    code, out, err = cli_in(env, monkeypatch, "status", "--vault", str(vault))
    assert "another-daemon" not in out


def test_a_foreign_lease_synced_over_a_running_daemons_turns_its_status_red(first: Daemon, vault: Path) -> None:
    assert not any("another-daemon" in r for r in first.status()["red"])
    mine = lease.read_lease(vault)
    path = write_lease(vault, foreign_record())
    red = first.status()["red"]
    assert any(r.startswith("another-daemon: another machine runs agentmd on this vault (host laptop-b") for r in red)
    path.write_text(json.dumps(mine))
    assert not any("another-daemon" in r for r in first.status()["red"])


def test_a_start_while_the_last_daemon_is_stopping_waits_for_it_and_serves(vault: Path, tmp_path: Path) -> None:
    """`kill -TERM` then `agentmd serve` at once: the old daemon marks itself stopping, so the new one waits for
    it to go (here held stopped half-way with SIGSTOP) instead of refusing and leaving no daemon at all."""
    import signal

    env = {**os.environ, **environment(tmp_path / "shell")}
    serve = [sys.executable, "-m", "agentmd", "serve", "--vault", str(vault), "--port", "0", "--no-restart"]
    old = subprocess.Popen(serve, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    new = None
    try:
        wait_until(lambda: (lease.live_holder(vault) or {}).get("pid") == old.pid, 60, "the first daemon serving")
        old.send_signal(signal.SIGTERM)
        wait_until(lambda: (lease.live_holder(vault) or {}).get("stopping"), 30, "the first daemon stopping")
        old.send_signal(signal.SIGSTOP)  # held half-way through stopping, its lock still held
        new = subprocess.Popen(serve, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        with pytest.raises(subprocess.TimeoutExpired):
            new.wait(timeout=2)  # waiting, not refused
        old.send_signal(signal.SIGCONT)
        assert old.wait(timeout=60) == 0
        wait_until(lambda: (lease.live_holder(vault) or {}).get("pid") == new.pid, 60, "the second daemon serving")
        assert new.poll() is None
    finally:
        for proc in (old, new):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.terminate()
                proc.wait(timeout=60)
