"""The alert when status turns red: who is told (a notifier) and when (the alert tracker).

Notifiers, set in the config file:

    [notify]
    command = ["/usr/local/bin/page-me", "--quiet"]   # run with the status JSON on stdin
    desktop = true                                   # a desktop notification (notify-send), where present

With neither, alerts are a silent skip that `status` mentions (`notifier: none configured`).

When: once per calendar day for the same set of red conditions; again the same day when a condition not yet
sent turns red; once when every red condition has cleared. A condition is the name before the colon of a
status red item (`probe-failed`, `index-stale`, ...), so a message that changes wording is not a new one.
The tracker's memory is a small file in the state folder, so a restarted daemon does not page again.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import shutil
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agentmd.engine.fsutil import read_json, write_json

log = logging.getLogger("agentmd.notify")

COMMAND_TIMEOUT = 30.0


class Notifier(Protocol):
    name: str

    def send(self, subject: str, status: Mapping[str, Any]) -> None:
        """Deliver one alert; raise when it could not be delivered."""


@dataclass
class CommandNotifier:
    """Runs the configured program with the status JSON (plus `alert`, the subject) on stdin."""

    argv: tuple[str, ...]
    timeout: float = COMMAND_TIMEOUT
    name: str = "command"

    def send(self, subject: str, status: Mapping[str, Any]) -> None:
        payload = json.dumps({"alert": subject, **status}, sort_keys=True)
        run = subprocess.run(
            list(self.argv), input=payload, capture_output=True, text=True, timeout=self.timeout, check=False
        )
        if run.returncode != 0:
            raise RuntimeError(f"{self.argv[0]} exited {run.returncode}: {run.stderr.strip()[:200]}")


@dataclass
class DesktopNotifier:
    """A desktop notification through `notify-send` (Linux) or `osascript` (macOS)."""

    program: str
    name: str = "desktop"

    def send(self, subject: str, status: Mapping[str, Any]) -> None:
        body = "\n".join(str(r) for r in status.get("red") or []) or "every red condition has cleared"
        if Path(self.program).name == "osascript":
            script = f"display notification {json.dumps(body)} with title {json.dumps(subject)}"
            argv = [self.program, "-e", script]
        else:
            argv = [self.program, "--app-name=agentmd", subject, body]
        subprocess.run(argv, capture_output=True, timeout=COMMAND_TIMEOUT, check=True)


def desktop_program() -> str | None:
    return shutil.which("notify-send") or shutil.which("osascript")


def notifiers_from_config(config: Mapping[str, Any]) -> tuple[list[Notifier], list[str]]:
    """The notifiers the config's `[notify]` table sets, and a note for each one that cannot be used."""
    table = config.get("notify") or {}
    notes: list[str] = []
    out: list[Notifier] = []
    if not isinstance(table, Mapping):
        return [], ["[notify] in the config file is not a table; no alerts are sent"]
    command = table.get("command")
    if command is not None:
        if isinstance(command, str):
            command = [command]
        if isinstance(command, list) and command and all(isinstance(c, str) and c for c in command):
            out.append(CommandNotifier(tuple(command)))
        else:
            notes.append('notify.command must be a program and its arguments, e.g. ["/usr/local/bin/page-me"]')
    if table.get("desktop"):
        program = desktop_program()
        if program:
            out.append(DesktopNotifier(program))
        else:
            notes.append("notify.desktop is on but neither notify-send nor osascript is installed")
    return out, notes


def condition(item: str) -> str:
    return str(item).split(":", 1)[0].strip()


@dataclass(frozen=True)
class Alert:
    subject: str
    conditions: tuple[str, ...]  # every red condition now
    new: tuple[str, ...]  # the ones this alert is the first to report today
    recovered: bool = False


def _names(value: object) -> list[str]:
    """A list of condition names from the alerts file ([] for anything else)."""
    return [str(v) for v in value] if isinstance(value, list) else []


class AlertTracker:
    """Decides which status passes send an alert, remembering what was sent in `<state>/alerts.json`."""

    def __init__(self, state_dir: Path, clock: Callable[[], dt.datetime]) -> None:
        self.path = state_dir / "jobs" / "alerts.json"
        self.clock = clock

    def observe(self, status: Mapping[str, Any]) -> Alert | None:
        now = self.clock()
        today = now.date().isoformat()
        state = read_json(self.path) or {}
        red = sorted({condition(r) for r in status.get("red") or []})
        active = _names(state.get("active"))
        sent = _names(state.get("sent")) if state.get("day") == today else []
        alert: Alert | None = None
        if red:
            new = [c for c in red if c not in sent]
            if new:
                subject = f"agentmd: RED: {', '.join(red)}"
                alert = Alert(subject, tuple(red), tuple(new))
                sent = sorted(set(sent) | set(red))
        elif active:
            alert = Alert(f"agentmd: recovered: {', '.join(active)} cleared", (), (), recovered=True)
            sent = []
        write_json(self.path, {"day": today, "sent": sent, "active": red, "at": now.isoformat(timespec="seconds")})
        return alert


class Alerter:
    """Looks at the status after every scheduler pass and sends the alerts the tracker decides on."""

    def __init__(
        self,
        tracker: AlertTracker,
        notifiers: list[Notifier],
        status: Callable[[], Mapping[str, Any]],
    ) -> None:
        self.tracker = tracker
        self.notifiers = notifiers
        self.status = status
        self.sent = 0
        self._lock = threading.Lock()

    def check(self) -> Alert | None:
        with self._lock:  # the scheduler's thread and a caller may look at once: one alert, not two
            return self._check()

    def _check(self) -> Alert | None:
        status = dict(self.status())
        if not status.get("color"):
            return None  # no status yet (the first pass has not finished)
        alert = self.tracker.observe(status)
        if alert is None:
            return None
        if not self.notifiers:
            return alert  # the silent skip; status says no notifier is configured
        for n in self.notifiers:
            try:
                n.send(alert.subject, status)
                self.sent += 1
            except Exception as exc:
                log.error("the %s notifier could not send %r: %s", n.name, alert.subject, exc)
        return alert
