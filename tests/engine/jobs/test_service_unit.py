"""The user service files: the systemd unit (checked by systemd-analyze where it exists) and the LaunchAgent
(parsed with plistlib) name the same command, never the vault; install refuses cleanly without a user
systemd, and the real start-and-health path runs where one answers."""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CliResult

from agentmd.cli.service import wait_for_health
from agentmd.engine.jobs.unit import (
    LAUNCHD_LABEL,
    MARKER,
    START_LIMIT_BURST,
    THROTTLE_INTERVAL,
    Systemd,
    launchd_plist,
    serve_command,
    systemd_unit,
)
from agentmd.engine.settings import resolve


def test_the_systemd_unit_restarts_with_a_throttle_and_names_no_vault(tmp_path: Path) -> None:
    config = tmp_path / "my config" / "config.toml"
    text = systemd_unit(serve_command(config))
    assert text.startswith(MARKER)
    assert "Restart=always" in text and "RestartSec=10" in text
    assert f"StartLimitBurst={START_LIMIT_BURST}" in text and "StartLimitIntervalSec=600" in text
    assert "WantedBy=default.target" in text
    exec_line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    assert exec_line.endswith(f'serve --config "{config}"')
    assert "--vault" not in text


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_systemd_analyze_accepts_the_unit(tmp_path: Path) -> None:
    unit = tmp_path / "agentmd.service"
    unit.write_text(systemd_unit(serve_command(tmp_path / "config.toml")), encoding="utf-8")
    run = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert "agentmd.service" not in run.stderr  # no warning about our unit


def test_the_launch_agent_parses_and_names_the_same_command(tmp_path: Path) -> None:
    command = serve_command(tmp_path / "config.toml")
    data = plistlib.loads(launchd_plist(command, tmp_path / "logs"))
    assert data["Label"] == LAUNCHD_LABEL
    assert data["ProgramArguments"] == command
    assert data["RunAtLoad"] is True and data["KeepAlive"] is True
    assert data["ThrottleInterval"] == THROTTLE_INTERVAL
    assert "vault" not in " ".join(data["ProgramArguments"])


def test_dry_run_prints_each_platform_file(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    linux = cli("service", "install", "--dry-run", "--platform", "linux")
    assert linux.code == 0 and linux.out.startswith(MARKER) and "systemd/user/agentmd.service" in linux.err
    mac = cli("service", "install", "--dry-run", "--platform", "macos", "--json")
    payload = mac.json()
    assert payload["path"].endswith(f"Library/LaunchAgents/{LAUNCHD_LABEL}.plist")
    assert plistlib.loads(payload["content"].encode())["ProgramArguments"][-2:] == [
        "--config",
        str(tmp_path / "home" / ".config" / "agentmd" / "config.toml"),
    ]


def _user_systemd() -> tuple[bool, str]:
    return Systemd().available()


def test_install_needs_the_vault_in_the_config(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    result = cli("service", "install", "--platform", "linux")
    assert result.code == 2 and "put `vault" in result.err


def test_uninstall_leaves_a_file_it_did_not_write(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    unit = tmp_path / "home" / ".config" / "systemd" / "user" / "agentmd.service"
    unit.parent.mkdir(parents=True)
    unit.write_text("[Service]\nExecStart=/bin/true\n", encoding="utf-8")
    result = cli("service", "uninstall", "--platform", "linux")
    assert result.code == 1 and "not written by" in result.err and unit.exists()


def test_install_starts_and_waits_for_health_or_refuses_without_writing(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """Where a user systemd answers, install starts the unit and reports the daemon's health, and uninstall
    removes the unit; where none answers (containers, CI), install says so and writes nothing."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("# A note\n", encoding="utf-8")
    config = tmp_path / "home" / ".config" / "agentmd" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'vault = "{vault}"\n', encoding="utf-8")
    unit = tmp_path / "home" / ".config" / "systemd" / "user" / "agentmd.service"
    available, why = _user_systemd()
    if not available:
        result = cli("service", "install", "--platform", "linux")
        assert result.code == 1 and ("no user systemd" in result.err or "systemctl" in result.err), why
        assert not (tmp_path / "home" / ".config" / "systemd").exists()
        return
    os.environ.setdefault("USER", "root")
    try:
        result = cli("service", "install", "--platform", "linux", "--json")
        assert result.code == 0, result.err
        assert result.json()["health"]["vault"] == str(vault.resolve())
        assert cli("service", "status", "--platform", "linux").code == 0
    finally:
        removed = cli("service", "uninstall", "--platform", "linux")
    assert removed.code == 0 and not unit.exists()


def test_the_units_command_reads_the_vault_from_the_config_at_every_start(tmp_path: Path) -> None:
    """What systemd or launchd would run, run here: the daemon answers /health for the vault the config
    names at that start, so pointing the config at another vault needs no reinstall."""
    home = tmp_path / "home"
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "AGENTMD_DENSE": "0"}
    config = home / ".config" / "agentmd" / "config.toml"
    config.parent.mkdir(parents=True)
    unit = systemd_unit(serve_command(config, python=sys.executable))
    argv = shlex.split(next(line for line in unit.splitlines() if line.startswith("ExecStart=")).split("=", 1)[1])
    assert argv == serve_command(config, python=sys.executable)
    for name in ("first", "second"):
        vault = tmp_path / name
        vault.mkdir()
        (vault / "note.md").write_text(f"# the {name} vault\n", encoding="utf-8")
        config.write_text(f'vault = "{vault}"\n', encoding="utf-8")
        settings = resolve(config=str(config), env=env)
        log = tmp_path / f"{name}.log"
        with log.open("wb") as sink:
            proc = subprocess.Popen([*argv, "--port", "0"], env=env, stdout=sink, stderr=sink)
            try:
                health = wait_for_health(settings, 60)
                assert health is not None, log.read_text(encoding="utf-8")
                assert health["vault"] == str(vault.resolve())
            finally:
                proc.terminate()
                assert proc.wait(timeout=60) == 0


def test_a_dry_run_says_when_the_config_it_names_is_not_there(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    vault = tmp_path / "my vault"
    vault.mkdir()
    bare = cli("service", "install", "--dry-run", "--platform", "linux")
    assert bare.code == 0 and "does not exist yet" in bare.err and "--vault PATH" in bare.err
    named = cli("service", "install", "--dry-run", "--platform", "linux", "--vault", str(vault), "--json").json()
    assert named["config_exists"] is False and "install writes it" in named["config_note"]
    config = tmp_path / "home" / ".config" / "agentmd" / "config.toml"
    assert not config.exists()  # a dry run writes nothing


def test_install_with_a_vault_and_no_config_writes_the_config_the_unit_reads(tmp_path: Path) -> None:
    from agentmd.cli.service import write_config

    vault = tmp_path / 'my "odd" vault ü'
    vault.mkdir()
    config = tmp_path / "cfg" / "agentmd" / "config.toml"
    assert write_config(config, str(vault)) is True
    assert resolve(config=str(config), env={}).vault == vault.resolve()  # what the unit's command reads
    assert write_config(config, str(tmp_path)) is False  # an existing config is never rewritten
    assert resolve(config=str(config), env={}).vault == vault.resolve()
