"""The alert on red, with a real command notifier that appends to a file, driven by an injected clock."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import CliResult, Vault

from agentmd.engine.jobs.notify import Alerter, AlertTracker, CommandNotifier, notifiers_from_config
from agentmd.engine.jobs.runner import RunLog
from agentmd.engine.settings import resolve


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


def status(*red: str) -> dict[str, Any]:
    return {"color": "red" if red else "green", "red": list(red), "yellow": []}


def test_the_notifier_fires_once_per_new_condition_per_day_and_once_on_recovery(tmp_path: Path) -> None:
    sink = tmp_path / "alerts.log"
    script = tmp_path / "notify.py"
    script.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        f"open({str(sink)!r}, 'a').write(json.dumps({{'alert': data['alert'], 'red': data['red']}}) + '\\n')\n",
        encoding="utf-8",
    )
    notifiers, notes = notifiers_from_config({"notify": {"command": [sys.executable, str(script)]}})
    assert notes == [] and isinstance(notifiers[0], CommandNotifier)
    clock = Clock()
    current = status()
    alerter = Alerter(AlertTracker(tmp_path / "state", clock), notifiers, lambda: current)

    def sent() -> list[dict[str, Any]]:
        return [json.loads(line) for line in sink.read_text().splitlines()] if sink.exists() else []

    alerter.check()
    assert sent() == []  # green: nothing
    current = status("probe-failed: search did not find the probe note")
    alerter.check()
    assert len(sent()) == 1 and "probe-failed" in sent()[0]["alert"]
    clock.now += dt.timedelta(hours=1)
    current = status("probe-failed: another wording of the same condition")
    alerter.check()
    alerter.check()
    assert len(sent()) == 1  # the same condition, the same day: not again
    current = status("probe-failed: x", "index-stale: last pass 20 min ago")
    alerter.check()
    assert len(sent()) == 2 and sent()[1]["red"] == ["probe-failed: x", "index-stale: last pass 20 min ago"]
    alerter.check()
    assert len(sent()) == 2
    clock.now += dt.timedelta(days=1)  # a new calendar day, the same red set: once more
    alerter.check()
    assert len(sent()) == 3
    current = status()
    alerter.check()
    alerter.check()
    assert len(sent()) == 4 and sent()[3]["alert"].startswith("agentmd: recovered") and sent()[3]["red"] == []
    # a restarted daemon remembers what was sent (the tracker's file in the state folder)
    current = status("probe-failed: x")
    alerter.check()
    again = Alerter(AlertTracker(tmp_path / "state", clock), notifiers, lambda: current)
    again.check()
    assert len(sent()) == 5


def test_no_notifier_is_a_silent_skip_that_is_said(tmp_path: Path) -> None:
    notifiers, notes = notifiers_from_config({})
    assert notifiers == [] and notes == []
    alerter = Alerter(AlertTracker(tmp_path, Clock()), [], lambda: status("probe-failed: x"))
    assert alerter.check() is not None and alerter.sent == 0
    _n, notes = notifiers_from_config({"notify": {"command": 7}})
    assert notes and "notify.command" in notes[0]


def test_status_shows_each_jobs_last_run_and_turns_red_on_repeated_failures(
    cli: Callable[..., CliResult], vault: Vault, tmp_path: Path
) -> None:
    vault.note("a.md", "# a note\n")
    assert cli("reindex", "--vault", str(vault.root)).code == 0
    settings = resolve(vault=str(vault.root), env={"HOME": str(tmp_path / "home")})
    log = RunLog(settings.state_dir)
    for i in range(2):
        log.append(
            {"job": "reconcile", "start": f"2026-03-01T0{i}:00:00+00:00", "outcome": "failed", "stop_reason": "x"}
        )
    result = cli("status", "--vault", str(vault.root), "--json")
    assert result.json()["jobs"]["jobs"]["reconcile"]["failed_in_a_row"] == 2
    assert not [r for r in result.json()["red"] if r.startswith("job-failing")]
    log.append({"job": "reconcile", "start": "2026-03-01T03:00:00+00:00", "outcome": "stopped", "stop_reason": "y"})
    result = cli("status", "--vault", str(vault.root))
    assert result.code == 3
    assert "RED    job-failing: reconcile failed 3 times in a row (last: y)" in result.out
    assert "job       reconcile: every 5m, last stopped 2026-03-01T03:00 (y)" in result.out
    assert "no notifier configured" in result.out
    log.append({"job": "reconcile", "start": "2026-03-01T04:00:00+00:00", "outcome": "ok", "stop_reason": "finished"})
    assert cli("status", "--vault", str(vault.root)).code == 0
