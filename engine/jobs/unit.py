"""The user service that keeps `agentmd serve` running: a systemd user unit on Linux, a LaunchAgent on macOS.

Both start the daemon at login and restart it when it dies, throttled so a broken install idles instead of
spinning: systemd waits `RestartSec` between starts and gives up after `StartLimitBurst` starts within
`StartLimitIntervalSec`; launchd's `KeepAlive` restarts it no sooner than `ThrottleInterval` after the last
start. Neither file names the vault: the command names the config file, and the daemon reads the vault from
it at every start, so moving the vault means editing the config, never reinstalling the service.

Both files can be generated on any machine (`--platform`); installing one needs its service manager.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentmd.engine.settings import xdg_dir

SERVICE_NAME = "agentmd.service"
LAUNCHD_LABEL = "io.agentmd.daemon"
RESTART_SEC = 10
START_LIMIT_INTERVAL = 600
START_LIMIT_BURST = 5
THROTTLE_INTERVAL = 30
MARKER = "# Written by `agentmd service install`; `agentmd service uninstall` removes it."


def serve_command(config_file: Path, python: str | None = None) -> list[str]:
    """The command both files run: this interpreter's agentmd, `serve`, reading the given config file."""
    return [python or sys.executable, "-P", "-m", "agentmd", "serve", "--config", str(config_file)]  # -P: see hooks


def _quote(arg: str) -> str:
    """One argument of a systemd command line, quoted when it holds a space, a quote or a backslash."""
    if arg and not any(c in arg for c in " \t\"'\\$%;"):
        return arg
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def systemd_unit(command: Sequence[str]) -> str:
    """The text of `agentmd.service` for `systemctl --user`."""
    return "\n".join(
        [
            MARKER,
            "[Unit]",
            "Description=agentmd: keeps the vault's index and git history current, serves memory on loopback",
            f"StartLimitIntervalSec={START_LIMIT_INTERVAL}",
            f"StartLimitBurst={START_LIMIT_BURST}",
            "",
            "[Service]",
            "Type=simple",
            # the vault is not here on purpose: `serve` resolves it from the config file at every start
            "ExecStart=" + " ".join(_quote(a) for a in command),
            "Restart=always",
            f"RestartSec={RESTART_SEC}",
            "Environment=PYTHONUNBUFFERED=1",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
    )


def launchd_plist(command: Sequence[str], log_dir: Path) -> bytes:
    """The bytes of the LaunchAgent plist for `launchctl bootstrap gui/<uid>`."""
    return plistlib.dumps(
        {
            "Label": LAUNCHD_LABEL,
            "ProgramArguments": list(command),
            "RunAtLoad": True,
            "KeepAlive": True,
            "ThrottleInterval": THROTTLE_INTERVAL,
            "ProcessType": "Background",
            "EnvironmentVariables": {"PYTHONUNBUFFERED": "1"},
            "StandardOutPath": str(log_dir / "daemon.out.log"),
            "StandardErrorPath": str(log_dir / "daemon.err.log"),
        }
    )


@dataclass(frozen=True)
class Step:
    """A service-manager command and what came of it."""

    argv: tuple[str, ...]
    code: int
    output: str

    @property
    def ok(self) -> bool:
        return self.code == 0


def run_step(argv: Sequence[str], timeout: float = 30.0) -> Step:
    try:
        run = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        return Step(tuple(argv), 127, f"{argv[0]} is not installed")
    except subprocess.TimeoutExpired:
        return Step(tuple(argv), 124, f"{' '.join(argv)} did not answer within {timeout:g} s")
    return Step(tuple(argv), run.returncode, (run.stdout + run.stderr).strip())


class Platform:
    """One service manager: where its file goes, what the file says, and how to start, stop and ask it."""

    name = ""
    kind = ""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.env = dict(os.environ if env is None else env)
        self.home = Path(self.env.get("HOME", str(Path.home())))

    @property
    def path(self) -> Path:
        raise NotImplementedError

    def render(self, command: Sequence[str]) -> bytes:
        raise NotImplementedError

    def available(self) -> tuple[bool, str]:
        raise NotImplementedError

    def start(self) -> list[Step]:
        raise NotImplementedError

    def stop(self) -> list[Step]:
        raise NotImplementedError

    def state(self) -> dict[str, str]:
        raise NotImplementedError

    def written_by_us(self) -> bool:
        raise NotImplementedError

    def reload(self) -> Step | None:
        """Have the manager forget a removed file (systemd); nothing to do for launchd."""
        return None


class Systemd(Platform):
    name = "linux"
    kind = "systemd user unit"

    @property
    def path(self) -> Path:
        return xdg_dir("XDG_CONFIG_HOME", self.env) / "systemd" / "user" / SERVICE_NAME

    def render(self, command: Sequence[str]) -> bytes:
        return systemd_unit(command).encode("utf-8")

    def available(self) -> tuple[bool, str]:
        if shutil.which("systemctl") is None:
            return False, "systemctl is not installed"
        step = run_step(["systemctl", "--user", "show-environment"], timeout=10)
        if not step.ok:
            return False, f"no user systemd answers here (`systemctl --user`: {step.output or step.code})"
        return True, "systemctl --user answers"

    def start(self) -> list[Step]:
        steps = [run_step(["systemctl", "--user", "daemon-reload"])]
        steps.append(run_step(["systemctl", "--user", "enable", SERVICE_NAME]))
        steps.append(run_step(["systemctl", "--user", "restart", SERVICE_NAME]))
        return steps

    def stop(self) -> list[Step]:
        steps = [run_step(["systemctl", "--user", "disable", "--now", SERVICE_NAME])]
        return steps

    def reload(self) -> Step | None:
        return run_step(["systemctl", "--user", "daemon-reload"])

    def state(self) -> dict[str, str]:
        step = run_step(
            ["systemctl", "--user", "show", SERVICE_NAME, "--property=LoadState,ActiveState,SubState,NRestarts"]
        )
        out = {"manager": "systemd --user"}
        if not step.ok:
            out["error"] = step.output
            return out
        for line in step.output.splitlines():
            key, _, value = line.partition("=")
            out[key] = value
        linger = run_step(["loginctl", "show-user", self.env.get("USER", ""), "--property=Linger"], timeout=10)
        if linger.ok and linger.output.strip() == "Linger=no":
            out["note"] = "the service stops when you log out; `loginctl enable-linger` keeps it running"
        return out

    def written_by_us(self) -> bool:
        try:
            return self.path.read_text(encoding="utf-8").startswith(MARKER)
        except OSError:
            return False


class Launchd(Platform):
    name = "macos"
    kind = "LaunchAgent"

    @property
    def path(self) -> Path:
        return self.home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"

    @property
    def log_dir(self) -> Path:
        return self.home / "Library" / "Logs" / "agentmd"

    def render(self, command: Sequence[str]) -> bytes:
        return launchd_plist(command, self.log_dir)

    def _domain(self) -> str:
        return f"gui/{os.getuid()}"

    def available(self) -> tuple[bool, str]:
        if shutil.which("launchctl") is None:
            return False, "launchctl is not installed (this is not macOS)"
        return True, "launchctl is present"

    def start(self) -> list[Step]:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        run_step(["launchctl", "bootout", f"{self._domain()}/{LAUNCHD_LABEL}"])  # a previous copy, if loaded
        return [run_step(["launchctl", "bootstrap", self._domain(), str(self.path)])]

    def stop(self) -> list[Step]:
        return [run_step(["launchctl", "bootout", f"{self._domain()}/{LAUNCHD_LABEL}"])]

    def state(self) -> dict[str, str]:
        step = run_step(["launchctl", "print", f"{self._domain()}/{LAUNCHD_LABEL}"])
        out = {"manager": "launchd"}
        if not step.ok:
            out["ActiveState"] = "not loaded"
            return out
        for line in step.output.splitlines():
            key, sep, value = line.strip().partition(" = ")
            if sep and key in ("state", "pid", "runs", "last exit code"):
                out[key] = value
        return out

    def written_by_us(self) -> bool:
        try:
            data = plistlib.loads(self.path.read_bytes())
        except (OSError, plistlib.InvalidFileException, ValueError):
            return False
        return isinstance(data, dict) and data.get("Label") == LAUNCHD_LABEL


def platform_for(name: str | None = None, env: Mapping[str, str] | None = None) -> Platform:
    """The service manager for `name` (linux, macos), else for this machine."""
    name = name or ("macos" if sys.platform == "darwin" else "linux")
    if name == "macos":
        return Launchd(env)
    if name == "linux":
        return Systemd(env)
    raise ValueError(f"unknown platform {name!r}; use linux or macos")
