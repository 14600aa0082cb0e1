"""Hooks that keep working after set-up changes: a session-start hook that finds the daemon when the session's
XDG state folder differs from the daemon's, and hook commands that do not break silently when the source
checkout they run from is moved. Real daemon, real vault, real CLI subprocess."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_helpers import make_repo, wait_until

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import Settings, resolve
from agentmd.hooks.install import agentmd_argv, in_checkout, moved_checkout_note
from agentmd.hooks.session_start import daemon_status

pytestmark = pytest.mark.slow

AGENTMD = str(Path(sys.executable).with_name("agentmd"))


@pytest.fixture
def vault(tmp_path: Path, env: dict[str, str]) -> Path:
    return make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/a.md": "about otters\n"})


@pytest.fixture
def daemon(vault: Path) -> Iterator[Daemon]:
    d = Daemon(resolve(vault=str(vault)), port=0, commit_debounce=0.1, probe_interval=0)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], 20, "first pass")
        yield d
    finally:
        d.stop()


def elsewhere(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The settings of a session whose XDG folders are not the daemon's."""
    for name in ("XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / "session" / name))
    return resolve(vault=str(vault))


def test_session_start_finds_a_daemon_running_with_other_xdg_folders(
    daemon: Daemon, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = elsewhere(vault, tmp_path, monkeypatch)
    assert settings.state_dir != daemon.settings.state_dir
    status = daemon_status(settings, None, timeout=5)  # through the vault lease
    assert status is not None and status["vault"] == str(vault)
    assert "index-never-built" not in " ".join(status["red"])


def test_session_start_ignores_the_daemon_of_another_vault_on_the_port_it_is_given(
    daemon: Daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo(tmp_path / "other")
    settings = elsewhere(other, tmp_path, monkeypatch)
    assert daemon_status(settings, daemon.port, timeout=5) is None


def test_the_hook_command_reads_the_daemon_over_other_xdg_folders(daemon: Daemon, vault: Path, tmp_path: Path) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "s2"), "XDG_CACHE_HOME": str(tmp_path / "c2")}
    done = subprocess.run(
        [AGENTMD, "hook", "session-start", "--vault", str(vault), "--port", str(daemon.port), "--budget", "5"],
        input=json.dumps({"hook_event_name": "SessionStart"}),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "from the daemon" in done.stdout and "never built" not in done.stdout, done.stdout


# ---------------------------------------------------------------------------------------------- install


def fake_install(root: Path, *, checkout: bool) -> str:
    """An `agentmd` inside a virtualenv: a source checkout's (`pyproject.toml` beside the venv) or a tool's."""
    venv = root / ".venv" if checkout else root / "venvs" / "agentmd"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    if checkout:
        (root / "pyproject.toml").write_text("[project]\nname = 'agentmd'\n")
    exe = venv / "bin" / "agentmd"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


def test_hooks_prefer_an_agentmd_on_path_over_one_inside_a_checkout(tmp_path: Path) -> None:
    in_clone = fake_install(tmp_path / "clone", checkout=True)
    tool = fake_install(tmp_path / "tools", checkout=False)
    assert in_checkout(in_clone) == tmp_path / "clone" and in_checkout(tool) is None
    assert agentmd_argv(argv0=in_clone, on_path=tool) == [tool]
    assert agentmd_argv(argv0=in_clone, on_path=in_clone) == [in_clone]
    assert agentmd_argv(argv0=tool, on_path=in_clone) == [tool]


def test_install_from_a_checkout_says_what_a_move_does_and_how_to_avoid_it(tmp_path: Path) -> None:
    in_clone = fake_install(tmp_path / "clone", checkout=True)
    note = moved_checkout_note([in_clone])
    assert note is not None
    assert str(tmp_path / "clone") in note and "agentmd hooks install" in note
    assert "pipx install" in note and "uv tool install" in note
    assert moved_checkout_note([fake_install(tmp_path / "tools", checkout=False)]) is None
    # with the light entry beside it, the note names the program the settings file runs
    hook = Path(in_clone).with_name("agentmd-hook")
    hook.write_text("#!/bin/sh\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    assert f"the hooks run {hook}," in (moved_checkout_note([in_clone]) or "")


def test_the_install_command_prints_the_note(vault: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    done = subprocess.run(
        [AGENTMD, "hooks", "install", "--project", str(project), "--vault", str(vault)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": os.path.dirname(AGENTMD) + os.pathsep + os.environ.get("PATH", "")},
    )
    assert done.returncode == 0, done.stderr
    if in_checkout(AGENTMD) is not None:  # this test suite runs from a checkout's .venv
        assert "if you move or delete that folder" in done.stderr
