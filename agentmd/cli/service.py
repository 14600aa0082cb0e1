"""`agentmd service install | uninstall | status`: keep `agentmd serve` running as a user service.

`install` writes the systemd user unit (Linux) or LaunchAgent (macOS), starts it, and reports success only
once the daemon answers `/health` for this vault: a unit the manager accepted that died at once is not
installed, and is rolled back. `uninstall` stops it and removes exactly the file `install` wrote.
`--dry-run` prints the file and where it would go, on any machine (`--platform` picks the other one).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import TYPE_CHECKING, Any, TextIO

from agentmd.cli.base import EXIT_OK, EXIT_RED, number, subcommands
from agentmd.cli.output import emit
from agentmd.engine.errors import AgentmdError, ConfigError, UsageError

if TYPE_CHECKING:
    from pathlib import Path

HEALTH_WAIT = 30.0


def add_service_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("service", help="install, remove or inspect the user service that runs `agentmd serve`")
    group = subcommands(p, "service_command", "ACTION")
    for name, func, text in (
        ("install", cmd_install, "write the user service, start it and wait until the daemon answers /health"),
        ("uninstall", cmd_uninstall, "stop the user service and remove the file install wrote"),
        ("status", cmd_service_status, "the service manager's view of the service and the daemon's health"),
    ):
        q = group.add_parser(name, parents=[common], help=text)
        q.add_argument("--platform", choices=("linux", "macos"), help="the service manager (default: this machine)")
        if name != "status":
            q.add_argument("--dry-run", action="store_true", help="print what would be written or removed")
        if name == "install":
            q.add_argument("--wait", type=number, default=HEALTH_WAIT, help="seconds to wait for /health (30)")
        q.set_defaults(func=func)
    p.set_defaults(func=lambda args, out, err: (p.print_help(out), 2)[1])


def _config_path(args: argparse.Namespace) -> Path:
    """The config file the service's command names: --config, else the default one (resolved now)."""
    from pathlib import Path

    if args.config:
        return Path(args.config).expanduser().resolve()
    from agentmd.engine.settings import default_config_file

    return default_config_file()


def _service_settings(args: argparse.Namespace) -> Any:
    """The settings the service will see at its start: the vault from the config file alone."""
    from pathlib import Path

    from agentmd.engine.settings import resolve

    config = _config_path(args)
    env = {k: v for k, v in os.environ.items() if k != "AGENTMD_VAULT"}
    try:
        settings = resolve(config=str(config), env=env)
    except ConfigError as exc:
        hint = f'; the service reads the vault from {config} at every start: put `vault = "/path/to/vault"` there'
        raise ConfigError(str(exc) + hint) from None
    if args.vault and Path(args.vault).expanduser().resolve() != settings.vault:
        raise UsageError(
            f"--vault {args.vault} is not the vault {config} names ({settings.vault}); the service runs the "
            "config's vault, so change `vault = ...` there first"
        )
    return settings


def _config_note(args: argparse.Namespace, config: Path) -> str | None:
    """What a person should know of the config file the service names, when it is not there yet."""
    from pathlib import Path

    if config.exists():
        return None
    if args.vault:
        return f"{config} does not exist yet: install writes it, naming the vault {Path(args.vault).expanduser()}"
    return (
        f"{config} does not exist yet, and the service reads its vault from it at every start: pass --vault "
        'PATH to install (which writes it), or create it with `vault = "/path/to/vault"`'
    )


def write_config(config: Path, vault_arg: str | None) -> bool:
    """With --vault and no config file yet, write one naming that vault (the service's only source of it);
    whether it was written."""
    import json
    from pathlib import Path

    from agentmd.engine.fsutil import atomic_write

    if config.exists() or not vault_arg:
        return False
    vault = Path(vault_arg).expanduser().resolve()
    if not vault.is_dir():
        raise UsageError(f"--vault {vault_arg} is not a folder: clone or create the vault first")
    config.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(config, f"vault = {json.dumps(str(vault))}\n".encode())  # a TOML basic string is JSON's
    return True


def _health(settings: Any, timeout: float = 2.0) -> dict[str, object] | None:
    from agentmd.engine.client import DaemonClient, DaemonError, recorded_port
    from agentmd.engine.settings import DEFAULT_PORT

    port = recorded_port(settings.state_dir) or DEFAULT_PORT
    try:
        data = DaemonClient(port).get("/health", timeout=timeout)
    except DaemonError:
        return None
    if not isinstance(data, dict) or os.path.realpath(str(data.get("vault"))) != os.path.realpath(settings.vault):
        return None
    return data


def wait_for_health(settings: Any, wait: float) -> dict[str, object] | None:
    import threading

    deadline = time.monotonic() + wait
    pause = threading.Event()
    while True:
        answer = _health(settings)
        if answer is not None or time.monotonic() >= deadline:
            return answer
        pause.wait(0.25)


def cmd_install(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.daemon.instance import running_daemon
    from agentmd.engine.fsutil import atomic_write
    from agentmd.engine.jobs.unit import platform_for, serve_command

    platform = platform_for(args.platform)
    config = _config_path(args)
    command = serve_command(config)
    content = platform.render(command)
    config_note = _config_note(args, config)
    if args.dry_run:
        payload = {"path": str(platform.path), "platform": platform.name, "content": content.decode("utf-8"),
                   "config": str(config), "config_exists": config.exists(), "config_note": config_note}  # fmt: skip
        if not args.json:
            err.write(f"agentmd: would write the {platform.kind} {platform.path}:\n")
            if config_note:
                err.write(f"agentmd: note: {config_note}\n")
        emit(out, args, payload, content.decode("utf-8"))
        return EXIT_OK
    writes = not config.exists() and bool(args.vault)  # the config is written once the service can be installed
    settings = None if writes else _service_settings(args)
    ok, why = platform.available()
    if not ok:
        raise AgentmdError(f"cannot install the {platform.kind}: {why}; `--dry-run` prints the file to install by hand")
    written = write_config(config, args.vault)
    settings = settings or _service_settings(args)
    info = running_daemon(settings.state_dir)
    if info is not None:
        raise AgentmdError(
            f"a daemon already serves {settings.vault} (pid {info.get('pid')}); stop it first so the service owns it"
        )
    platform.path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(platform.path, content)
    failed = [s for s in platform.start() if not s.ok]
    health = None if failed else wait_for_health(settings, args.wait)
    if health is None:
        platform.stop()
        platform.path.unlink(missing_ok=True)
        platform.reload()
        why = failed[0].output if failed else f"the daemon did not answer /health within {args.wait:g} s"
        raise AgentmdError(f"the {platform.kind} did not come up ({why}); it was removed again. {_log_hint(platform)}")
    state = platform.state()
    done = {"path": str(platform.path), "platform": platform.name, "health": health, "state": state}
    text = f"installed {platform.path}; the daemon answers for {settings.vault} (pid {health.get('pid')})"
    if written:
        text = f"wrote {config} naming the vault {settings.vault}\n" + text
    note = state.get("note")
    emit(out, args, done, text + (f"\nnote: {note}" if note else ""))
    return EXIT_OK


def _log_hint(platform: Any) -> str:
    if platform.name == "linux":
        return "See `journalctl --user -u agentmd.service` for why."
    return f"See {platform.log_dir} for why."


def cmd_uninstall(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.jobs.unit import platform_for

    platform = platform_for(args.platform)
    path = platform.path
    if not path.exists():
        emit(out, args, {"removed": None, "path": str(path)}, f"nothing to remove: {path} does not exist")
        return EXIT_OK
    if not platform.written_by_us():
        raise AgentmdError(f"{path} was not written by `agentmd service install`; left in place")
    if args.dry_run:
        emit(out, args, {"would_remove": str(path)}, f"would stop the service and remove {path}")
        return EXIT_OK
    ok, _why = platform.available()
    steps = platform.stop() if ok else []
    path.unlink()
    if ok:
        platform.reload()
    stopped = all(s.ok for s in steps) if steps else False
    emit(out, args, {"removed": str(path), "stopped": stopped}, f"stopped the service and removed {path}")
    return EXIT_OK


def cmd_service_status(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.jobs.unit import platform_for

    platform = platform_for(args.platform)
    installed = platform.path.exists()
    ok, why = platform.available()
    if not ok:
        state = {"manager": "unavailable", "reason": why}
    else:
        state = platform.state() if installed else {"manager": why, "ActiveState": "not installed"}
    try:
        settings = _service_settings(args)
        health = _health(settings)
        vault = str(settings.vault)
    except AgentmdError as exc:
        health, vault = None, f"unresolved: {exc}"
    payload = {"installed": installed, "path": str(platform.path), "state": state, "health": health, "vault": vault}
    lines = [
        f"service   {'installed' if installed else 'not installed'} ({platform.path})",
        "manager   " + (f"unavailable: {why}" if not ok else ", ".join(f"{k}={v}" for k, v in state.items())),
        f"vault     {vault}",
        f"daemon    {'healthy (pid ' + str(health.get('pid')) + ')' if health else 'not answering /health'}",
    ]
    emit(out, args, payload, "\n".join(lines))
    return EXIT_OK if (health or not installed) else EXIT_RED
