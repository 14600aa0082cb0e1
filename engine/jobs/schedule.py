"""When a job is due, decided from its schedule, its last run and the time now; nothing here reads a clock.

- `every N`: due N after the last run (or after the daemon started, when it never ran); `first_delay`
  instead makes it due that long after each start, whatever the history says.
- `daily HH:MM`: each day's slot. A slot the machine slept through still runs once when it wakes, if the
  wake is within the job's look-back of the slot; later than that the slot is recorded as missed. Only the
  latest slot is ever considered, so a week asleep is one run (or one miss), never a backlog.
- `window A-B`: once per night, any time inside the window; a night slept through runs once on waking
  within the look-back after the window closed, else it is recorded as missed.
A slot before the job was first seen (a fresh install at noon) is neither run nor recorded as missed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from agentmd.engine.jobs.manifest import JobSpec, Schedule

NOT_DUE = "not-due"
DISABLED = "disabled"
MISSED = "missed-beyond-lookback"


@dataclass(frozen=True, slots=True)
class Decision:
    run: bool
    reason: str  # why it runs ("due", "late: ...") or why not (not-due, disabled, missed-beyond-lookback, ...)
    slot: dt.datetime | None = None  # the daily or window slot this run (or miss) answers
    record: bool = False  # a decision not to run that belongs in the run log (a missed slot)


def latest_slot(schedule: Schedule, now: dt.datetime) -> dt.datetime:
    """The most recent opening (daily time or window start) at or before `now`, in `now`'s time zone."""
    assert schedule.at is not None
    today = now.replace(hour=schedule.at.hour, minute=schedule.at.minute, second=0, microsecond=0)
    return today if today <= now else today - dt.timedelta(days=1)


def window_length(schedule: Schedule) -> dt.timedelta:
    assert schedule.at is not None and schedule.until is not None
    start = dt.timedelta(hours=schedule.at.hour, minutes=schedule.at.minute)
    end = dt.timedelta(hours=schedule.until.hour, minutes=schedule.until.minute)
    return end - start if end > start else end + dt.timedelta(days=1) - start


def decide(
    spec: JobSpec,
    *,
    now: dt.datetime,
    started: dt.datetime,
    first_seen: dt.datetime,
    last_start: dt.datetime | None,
    last_slot: dt.datetime | None,
) -> Decision:
    """Whether `spec` runs now. `started` is when this scheduler started, `first_seen` when any scheduler
    first saw the job, `last_start`/`last_slot` from its latest record (a run or a recorded miss)."""
    if not spec.enabled:
        return Decision(False, DISABLED)
    sched = spec.schedule
    if sched.kind == "interval":
        if spec.first_delay is not None and (last_start is None or last_start < started):
            due = started + dt.timedelta(seconds=spec.first_delay)
        else:
            base = last_start if last_start is not None else started
            due = base + dt.timedelta(seconds=sched.every)
        return Decision(True, "due") if now >= due else Decision(False, NOT_DUE)
    slot = latest_slot(sched, now)
    if slot < first_seen or (last_slot is not None and last_slot >= slot):
        return Decision(False, NOT_DUE)
    lookback = dt.timedelta(seconds=spec.lookback)
    if sched.kind == "daily":
        if now - slot <= lookback:
            return Decision(True, "due" if now - slot <= dt.timedelta(minutes=5) else "late: missed while asleep", slot)
        return Decision(False, MISSED, slot, record=True)
    close = slot + window_length(sched)
    if now < close:
        return Decision(True, "due", slot)
    if now - close <= lookback:
        return Decision(True, "late: the window passed while asleep", slot)
    return Decision(False, MISSED, slot, record=True)
