"""The job scheduler under an injected clock: defaults at their times, a disabled job, a missed slot after a
sleep, budgets, the spend ceiling, lenient manifests and the run log. No sleeps: the clock is moved."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import pytest

from agentmd.engine.jobs.manifest import Loaded, load_jobs, parse_schedule
from agentmd.engine.jobs.report import BUILT_IN_ACTIONS
from agentmd.engine.jobs.runner import JobDeferred, Meter, RunLog, Scheduler, failing_streaks

UTC = dt.UTC


class FakeClock:
    def __init__(self, start: dt.datetime) -> None:
        self.now = start

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += dt.timedelta(**kw)

    def set(self, hour: int, minute: int = 0, days: int = 0) -> None:
        self.now = (self.now + dt.timedelta(days=days)).replace(hour=hour, minute=minute, second=0)


class Calls:
    """Built-in actions that count their runs."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def action(self, name: str) -> Any:
        def run(meter: Meter) -> dict[str, Any]:
            self.runs.append(name)
            return {"did": name}

        return run

    def actions(self) -> dict[str, Any]:
        return {n: self.action(n) for n in BUILT_IN_ACTIONS}


def scheduler(tmp_path: Path, clock: FakeClock, folder: Path | None = None, **kw: Any) -> tuple[Scheduler, Calls]:
    calls = Calls()
    actions = {**calls.actions(), **kw.pop("actions", {})}

    def load() -> Loaded:
        return load_jobs(folder, set(actions))

    return Scheduler(load, actions, tmp_path / "state", clock=clock, **kw), calls


def manifest(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_each_default_job_runs_at_its_time(tmp_path: Path) -> None:
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    s, calls = scheduler(tmp_path, clock)
    assert s.tick() == [] and calls.runs == []  # nothing is due at the start
    clock.advance(minutes=2)
    s.tick()
    assert calls.runs == ["probe"]  # the probe's first delay after a start
    clock.advance(minutes=3)
    s.tick()
    assert calls.runs == ["probe", "reconcile", "sync"]  # five minutes after the start
    clock.advance(minutes=1)
    s.tick()
    assert calls.runs.count("reconcile") == 1  # not again before its interval
    clock.set(2, 15, days=1)  # the night: the repack window opens at 02:00
    s.tick()
    assert "repack" in calls.runs and calls.runs.count("reconcile") == 2
    clock.set(3, 0)
    s.tick()
    assert calls.runs.count("repack") == 1  # once per night, not every pass inside the window
    clock.set(6, 30)
    s.tick()
    assert calls.runs.count("morning-note") == 1
    clock.set(7, 0)
    s.tick()
    assert calls.runs.count("morning-note") == 1
    records = RunLog(tmp_path / "state").records()
    # the groom proposal ran once in its 03:00-05:00 window; the ingest sweep ships switched off
    assert calls.runs.count("groom-propose") == 1 and "ingest-sweep" not in calls.runs
    assert {r["job"] for r in records} == {
        "probe",
        "reconcile",
        "repack",
        "groom-propose",
        "lifecycle",
        "morning-note",
        "sync",
    }
    assert all(r["outcome"] == "ok" and r["changed"] == {"did": r["job"]} for r in records)


def test_a_disabled_job_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    manifest(folder, "reconcile", "enabled = false\n")
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    s, calls = scheduler(tmp_path, clock, folder)
    clock.advance(hours=1)
    s.tick()
    assert "reconcile" not in calls.runs and "probe" in calls.runs
    assert s.loaded.jobs["reconcile"].sources[-1] == str(folder / "reconcile.toml")


def test_a_missed_slot_runs_once_after_a_sleep_never_as_a_backlog(tmp_path: Path) -> None:
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    s, calls = scheduler(tmp_path, clock)
    s.tick()
    clock.set(6, 30, days=1)
    s.tick()
    assert calls.runs.count("morning-note") == 1
    # asleep from 06:31 until 09:00 two days later: two slots passed, one run on waking
    clock.set(9, 0, days=2)
    s.tick()
    s.tick()
    assert calls.runs.count("morning-note") == 2
    # each window the machine slept through ran once on waking within the look-back: two nights, two runs
    assert calls.runs.count("repack") == 2
    late = [r for r in RunLog(tmp_path / "state").records("morning-note")][-1]
    assert late["trigger"].startswith("late") and late["slot"].startswith("2026-03-04T06:30")
    # asleep past the look-back: the slot is recorded as missed, once, and nothing runs
    clock.set(20, 0, days=1)
    s.tick()
    s.tick()
    assert calls.runs.count("morning-note") == 2
    missed = [r for r in RunLog(tmp_path / "state").records("morning-note") if r["outcome"] == "skipped"]
    assert len(missed) == 1 and missed[0]["stop_reason"] == "missed-beyond-lookback"


def test_a_restarted_scheduler_remembers_the_last_runs(tmp_path: Path) -> None:
    clock = FakeClock(dt.datetime(2026, 3, 1, 5, 0, tzinfo=UTC))
    s, calls = scheduler(tmp_path, clock)
    s.tick()
    clock.set(6, 30)
    s.tick()
    again, calls2 = scheduler(tmp_path, clock)
    clock.set(7, 0)
    again.tick()
    assert calls.runs.count("morning-note") == 1 and "morning-note" not in calls2.runs


def test_a_job_stops_at_its_wall_budget_with_the_reason(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    manifest(folder, "slow", 'action = "slow"\nschedule = "every 1h"\n[budget]\nwall = "10m"\n')
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    steps: list[int] = []

    def slow(meter: Meter) -> None:
        while True:
            clock.advance(minutes=1)
            steps.append(1)
            meter.check()

    s, _calls = scheduler(tmp_path, clock, folder, actions={"slow": slow})
    rec = s.run_named("slow")
    assert rec["outcome"] == "stopped" and rec["stop_reason"].startswith("budget-wall")
    assert len(steps) == 11 and rec["budget_used"]["wall_s"] == 660


def test_a_paid_job_stops_at_its_token_budget_and_the_ceiling_refuses_the_next(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    manifest(folder, "enrich", 'action = "enrich"\nschedule = "every 1h"\n[budget]\ntokens = 1000\ncalls = 50\n')
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))

    def enrich(meter: Meter) -> dict[str, int]:
        for _ in range(100):
            meter.charge(tokens=300, calls=1)
        return {"notes": 100}

    s, _calls = scheduler(tmp_path, clock, folder, actions={"enrich": enrich}, daily_token_ceiling=2000)
    rec = s.run_named("enrich")
    assert rec["outcome"] == "stopped" and rec["stop_reason"].startswith("budget-tokens")
    assert rec["budget_used"]["tokens"] == 1200 and rec["budget_used"]["calls"] == 4
    second = s.run_named("enrich")  # 800 tokens of the ceiling left: stopped there, not at its own budget
    assert second["outcome"] == "stopped" and second["stop_reason"].startswith("budget-ceiling")
    assert second["budget_used"]["tokens"] == 900
    again = s.run_named("enrich")
    assert again["outcome"] == "skipped" and again["stop_reason"].startswith("budget-ceiling")
    clock.advance(days=1)
    assert s.run_named("enrich")["stop_reason"].startswith("budget-tokens")  # a new day, a new ceiling


def test_a_job_that_finishes_late_is_ok_and_says_it_overran(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    manifest(folder, "slowish", 'action = "slowish"\nschedule = "every 1h"\n[budget]\nwall = "1m"\n')
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    s, _calls = scheduler(tmp_path, clock, folder, actions={"slowish": lambda m: clock.advance(minutes=3)})
    rec = s.run_named("slowish")
    assert rec["outcome"] == "ok" and rec["stop_reason"] == "finished over its wall budget (180 s against 60 s)"


def test_a_command_job_is_stopped_at_its_token_budget_and_its_usage_recorded(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    script = tmp_path / "spend.py"
    script.write_text(
        "import json, sys\nfor i in range(10):\n    print(json.dumps({'tokens': 400, 'calls': 1}), flush=True)\n"
        "    sys.stdin = None\n",
        encoding="utf-8",
    )
    manifest(
        folder,
        "spender",
        f'command = ["{sys.executable}", "{script}"]\nschedule = "daily 03:00"\n[budget]\ntokens = 1000\n',
    )
    manifest(folder, "echo", f'command = ["{sys.executable}", "-c", "print(1)"]\nschedule = "every 1h"\n')
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    s, _calls = scheduler(tmp_path, clock, folder)
    rec = s.run_named("spender")
    assert rec["outcome"] == "stopped" and rec["stop_reason"].startswith("budget-tokens")
    assert rec["budget_used"]["tokens"] == 1200
    assert s.run_named("echo")["outcome"] == "ok"


def test_a_command_job_over_its_wall_time_is_killed(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    manifest(
        folder,
        "hang",
        f'command = ["{sys.executable}", "-c", "import time; time.sleep(60)"]\n'
        'schedule = "every 1h"\n[budget]\nwall = 0.3\n',
    )
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    s, _calls = scheduler(tmp_path, clock, folder)
    rec = s.run_named("hang")
    assert rec["outcome"] == "stopped" and rec["stop_reason"].startswith("budget-wall")


def test_a_malformed_manifest_is_named_and_the_others_still_run(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    broken = manifest(folder, "backup", 'command = ["/bin/true"\nschedule = every\n')
    manifest(folder, "probe", 'schedule = "weekly"\n')  # a bad override of a shipped job
    manifest(folder, "Bad_Name", 'action = "repack"\nschedule = "every 1h"\n')
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    s, calls = scheduler(tmp_path, clock, folder)
    clock.advance(minutes=10)
    s.tick()
    refused = {r["name"]: r for r in s.loaded.refused}
    assert set(refused) == {"backup", "probe", "Bad_Name"}
    assert refused["backup"]["path"] == str(broken) and "does not parse" in refused["backup"]["reason"]
    assert "schedule" in refused["probe"]["reason"]
    assert "reconcile" in calls.runs and "probe" not in calls.runs
    with pytest.raises(KeyError, match="refused"):
        s.run_named("probe")


def test_a_failing_job_is_recorded_and_counted_in_a_row(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    manifest(folder, "flaky", 'action = "flaky"\nschedule = "every 5m"\n')
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))

    def flaky(meter: Meter) -> None:
        raise OSError("disk full")

    s, _calls = scheduler(tmp_path, clock, folder, actions={"flaky": flaky})
    for _ in range(3):
        clock.advance(minutes=5)
        s.tick()
    records = RunLog(tmp_path / "state").records("flaky")
    assert [r["outcome"] for r in records] == ["failed"] * 3
    assert records[-1]["stop_reason"] == "OSError: disk full"
    assert failing_streaks(RunLog(tmp_path / "state").records())["flaky"] == 3


@pytest.mark.parametrize(
    ("text", "kind"),
    [("every 90s", "interval"), ("daily 06:30", "daily"), ("window 22:00-04:00", "window")],
)
def test_schedules_parse(text: str, kind: str) -> None:
    sched = parse_schedule(text)
    assert sched.kind == kind and sched.describe().split()[0] == text.split()[0]


def test_a_window_across_midnight_runs_once_a_night(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    manifest(folder, "late", 'action = "late"\nschedule = "window 23:00-01:00"\nlookback = 0\n')
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    runs: list[dt.datetime] = []
    s, _calls = scheduler(tmp_path, clock, folder, actions={"late": lambda m: runs.append(clock()) or {}})
    for hour, minute, days in ((22, 0, 0), (23, 0, 0), (23, 30, 0), (0, 30, 1), (2, 0, 0), (23, 10, 0)):
        clock.set(hour, minute, days=days)
        s.tick()
    assert [(r.day, r.hour, r.minute) for r in runs] == [(1, 23, 0), (2, 23, 10)]


def test_a_deferred_job_is_not_recorded_and_runs_on_a_later_pass(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    manifest(folder, "needs-index", 'action = "needs-index"\nschedule = "daily 06:30"\n')
    clock = FakeClock(dt.datetime(2026, 3, 1, 5, 0, tzinfo=UTC))
    ready = {"index": False}
    runs: list[dt.datetime] = []

    def needs_index(meter: Meter) -> dict[str, Any]:
        if not ready["index"]:
            raise JobDeferred("the index is still being built")
        runs.append(clock())
        return {}

    s, _calls = scheduler(tmp_path, clock, folder, actions={"needs-index": needs_index})
    clock.set(6, 30)
    assert [r["outcome"] for r in s.tick() if r["job"] == "needs-index"] == ["deferred"]
    assert RunLog(tmp_path / "state").records("needs-index") == []
    ready["index"] = True
    clock.set(6, 31)
    s.tick()
    s.tick()
    assert runs == [clock.now]


def test_the_run_log_keeps_a_summary_and_one_previous_generation(tmp_path: Path) -> None:
    log = RunLog(tmp_path, max_bytes=2000)
    outcomes = ["ok", "failed", "stopped", "skipped", "interrupted", "failed"] * 10
    for i, outcome in enumerate(outcomes):
        log.append({"job": "j", "start": f"2026-03-01T00:{i:02d}:00+00:00", "outcome": outcome})
    assert log.old_path.exists() and log.path.stat().st_size <= 2000 + 200
    records = log.records()
    assert 0 < len(records) < len(outcomes) and records[-1]["start"].endswith("00:59:00+00:00")
    summary = log.summary()
    assert summary["j"]["last"]["outcome"] == "failed"
    assert summary["j"]["failed_in_a_row"] == 3  # failed, stopped, (skipped, interrupted ignored), failed
    log.summary_path.unlink()
    assert RunLog(tmp_path).summary()["j"]["failed_in_a_row"] == 3  # rebuilt from the log
