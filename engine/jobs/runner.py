"""The scheduler inside the daemon: runs each due job, one at a time, within its budgets, and logs every run.

Time comes from an injected clock (an aware datetime), so tests drive a day, a sleep or a budget by moving
the clock. Every run appends one record to the run log (`jobs/history.jsonl` in the state folder): start,
end, outcome, what it changed, the budget it used and the reason it stopped. A slot missed beyond the
look-back, and a paid job refused by the day's spend ceiling, are recorded too, so the morning note can
say why a job did not run.

A built-in action is a callable taking a `Meter`; it charges tokens and calls as it spends them and calls
`meter.check()` between steps, and the meter stops it (`BudgetExceeded`) once a budget is spent. A
`command` job is a program run with a wall-time limit; each JSON line it prints with `tokens` or `calls`
is charged the same way, and a program over budget is terminated.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from agentmd.engine.errors import AgentmdError
from agentmd.engine.fsutil import read_json, read_json_lines, write_json
from agentmd.engine.jobs.manifest import BudgetJson, JobSpec, Loaded
from agentmd.engine.jobs.schedule import Decision, decide

log = logging.getLogger("agentmd.jobs")

Clock = Callable[[], dt.datetime]
FAILED_IN_A_ROW_RED = 3  # status turns red when a job's last this-many runs all failed
MAX_LOG_BYTES = 4 * 2**20  # the run log starts a new generation past this (about a year of 5-minute runs)


def system_clock() -> dt.datetime:
    """Local wall time with its offset: schedules read HH:MM in the machine's own time zone."""
    return dt.datetime.now().astimezone()


def iso(t: dt.datetime) -> str:
    return t.isoformat(timespec="seconds")


def parse_iso(text: object) -> dt.datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


class JobFailed(AgentmdError):
    """A job ended in failure for a reason it states itself (recorded as the stop reason, word for word).

    `streak=False`: the job's own status section judges how long such failures may last (a sync round that
    cannot reach its remote turns status yellow after an hour and red after a day), so the run is recorded as
    failed but does not count toward the `job-failing` line's streak."""

    def __init__(self, reason: str, *, streak: bool = True) -> None:
        super().__init__(reason)
        self.streak = streak


class JobSkipped(AgentmdError):
    """A job had nothing it could do now (a vault without a remote, a remote being backed off from): recorded as
    `skipped` with the reason, which leaves the failure streak alone."""


class JobInterrupted(AgentmdError):
    """The daemon is stopping under a running job; recorded as `interrupted`, which is not a failure."""


class JobDeferred(AgentmdError):
    """A job cannot start yet (the index is still being built): nothing is recorded, and a later pass of
    the scheduler tries again while the slot is still open."""


class BudgetExceeded(AgentmdError):
    """Raised by a meter when a run has spent its budget; `reason` is recorded as the stop reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Meter:
    """What one run has spent against its budget; the action charges it and checks it."""

    spec: JobSpec
    clock: Clock
    started: dt.datetime
    tokens: int = 0
    calls: int = 0
    changed: dict[str, object] = field(default_factory=dict)
    ceiling_left: int | None = None  # tokens the day's spend ceiling still allows, for a paid job

    def elapsed(self) -> float:
        return (self.clock() - self.started).total_seconds()

    def charge(self, *, tokens: int = 0, calls: int = 0) -> None:
        self.tokens += tokens
        self.calls += calls
        self.check()

    def check(self) -> None:
        b = self.spec.budget
        if b.tokens is not None and self.tokens > b.tokens:
            raise BudgetExceeded(f"budget-tokens: {self.tokens} tokens against a budget of {b.tokens}")
        if self.ceiling_left is not None and self.tokens > self.ceiling_left:
            raise BudgetExceeded(f"budget-ceiling: the day's spend ceiling was reached after {self.tokens} tokens")
        if b.calls is not None and self.calls > b.calls:
            raise BudgetExceeded(f"budget-calls: {self.calls} calls against a budget of {b.calls}")
        if self.elapsed() > b.wall:
            raise BudgetExceeded(f"budget-wall: ran {self.elapsed():.0f} s against a budget of {b.wall:g} s")

    def used(self) -> dict[str, float]:
        return {"wall_s": round(self.elapsed(), 3), "tokens": self.tokens, "calls": self.calls}


Action = Callable[[Meter], Mapping[str, Any] | None]
"""A built-in job: does its work, returns what it changed (a small JSON-ready mapping)."""


class JobRecord(TypedDict, total=False):
    """One line of the run log: a job's run (or its skip) and how it ended."""

    job: str
    start: str  # ISO times
    end: str
    slot: str  # the scheduled time it ran for, when it ran on schedule
    outcome: str  # ok, failed, stopped (a budget), interrupted, skipped, deferred
    stop_reason: str
    trigger: str  # schedule, manual, or why a schedule decided to run it
    changed: dict[str, object]  # what the job says it changed
    budget_used: dict[str, float]  # wall_s, tokens, calls
    budget: BudgetJson  # the budget it ran under
    streak: bool  # False: a failure the job's own status section judges, left out of the failure streak


class JobSummary(TypedDict):
    """A job's entry in the run log's summary: its last record and how many runs in a row it has failed."""

    last: JobRecord | None
    failed_in_a_row: int


class RunLog:
    """The run log: one JSON line per run in `<state>/jobs/history.jsonl` (the previous generation kept as
    `history.1.jsonl` once it passes `MAX_LOG_BYTES`), a summary of each job's last run and failures in a
    row (`last.json`, what `status` reads every few seconds), and each job's first sighting."""

    def __init__(self, state_dir: Path, *, max_bytes: int = MAX_LOG_BYTES) -> None:
        self.max_bytes = max_bytes
        self.folder = state_dir / "jobs"
        self.path = self.folder / "history.jsonl"
        self.old_path = self.folder / "history.1.jsonl"
        self.summary_path = self.folder / "last.json"
        self.seen_path = self.folder / "first-seen.json"
        self._lock = threading.Lock()

    def append(self, record: JobRecord) -> None:
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            summary = self.summary()
            with contextlib.suppress(OSError):
                if self.path.stat().st_size > self.max_bytes:
                    os.replace(self.path, self.old_path)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, sort_keys=True) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            write_json(self.summary_path, summarize([record], summary))

    def summary(self) -> dict[str, JobSummary]:
        """Each job's `last` record and `failed_in_a_row`; rebuilt from the log when the file is missing."""
        data = read_json(self.summary_path)
        return cast(dict[str, JobSummary], data) if data is not None else summarize(self.records())

    def records(self, job: str | None = None, since: dt.datetime | None = None) -> list[JobRecord]:
        """Every record, oldest first; a torn or foreign line is skipped."""
        out: list[JobRecord] = []
        for rec in read_json_lines(self.old_path) + read_json_lines(self.path):
            if job is not None and rec.get("job") != job:
                continue
            if since is not None:
                start = parse_iso(rec.get("start"))
                if start is None or start < since:
                    continue
            out.append(cast(JobRecord, rec))  # a line this log wrote
        return out

    def first_seen(self, names: list[str], now: dt.datetime) -> dict[str, dt.datetime]:
        """When each job was first seen, recording `now` for the new ones."""
        with self._lock:
            data = read_json(self.seen_path) or {}
            changed = False
            for name in names:
                if parse_iso(data.get(name)) is None:
                    data[name] = iso(now)
                    changed = True
            if changed:
                write_json(self.seen_path, data)
        return {n: parse_iso(data[n]) or now for n in names}


def summarize(records: Sequence[JobRecord], start: Mapping[str, JobSummary] | None = None) -> dict[str, JobSummary]:
    """Fold records into each job's last record and how many runs in a row it has failed (a failure or a
    budget stop counts, a success resets, skips and interruptions leave the count alone)."""
    out: dict[str, JobSummary] = {name: entry.copy() for name, entry in (start or {}).items()}
    for rec in records:
        entry = out.setdefault(str(rec.get("job")), {"last": None, "failed_in_a_row": 0})
        entry["last"] = rec.copy()
        outcome = rec.get("outcome")
        if outcome == "ok":
            entry["failed_in_a_row"] = 0
        elif outcome in ("failed", "stopped") and rec.get("streak", True):
            entry["failed_in_a_row"] = int(entry.get("failed_in_a_row", 0)) + 1
    return out


def last_runs(records: Sequence[JobRecord]) -> dict[str, JobRecord | None]:
    return {name: entry["last"] for name, entry in summarize(records).items()}


def failing_streaks(records: Sequence[JobRecord]) -> dict[str, int]:
    """How many runs in a row each job has failed, counting back from its latest run."""
    return {name: int(entry["failed_in_a_row"]) for name, entry in summarize(records).items()}


class Scheduler:
    """Runs the loaded jobs when due. `tick()` is one look at the clock; the daemon calls it from a thread."""

    def __init__(
        self,
        load: Callable[[], Loaded],
        actions: Mapping[str, Action],
        state_dir: Path,
        *,
        clock: Clock = system_clock,
        daily_token_ceiling: int | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.load = load
        self.actions = dict(actions)
        self.log = RunLog(state_dir)
        self.clock = clock
        self.started = clock()
        self.daily_token_ceiling = daily_token_ceiling
        self.env = env
        self.loaded = Loaded({}, [])
        self._reported: set[str] = set()
        self._run_lock = threading.Lock()
        self._last = {name: entry["last"] for name, entry in self.log.summary().items() if entry.get("last")}

    def reload(self) -> Loaded:
        """Read the manifests again; a refused one is logged once, the rest load."""
        self.loaded = self.load()
        for r in self.loaded.refused:
            key = f"{r['path']}: {r['reason']}"
            if key not in self._reported:
                self._reported.add(key)
                log.error("job manifest %s refused: %s", r["path"], r["reason"])
        return self.loaded

    def decision(self, spec: JobSpec, first_seen: dt.datetime, now: dt.datetime) -> Decision:
        last = self._last.get(spec.name) or {}
        return decide(
            spec,
            now=now,
            started=self.started,
            first_seen=first_seen,
            last_start=parse_iso(last.get("start")),
            last_slot=parse_iso(last.get("slot")),
        )

    def tick(self) -> list[JobRecord]:
        """Run every job due now, in name order; the records written."""
        loaded = self.reload()
        now = self.clock()
        seen = self.log.first_seen(list(loaded.jobs), now)
        written = []
        for name, spec in loaded.jobs.items():
            d = self.decision(spec, seen[name], now)
            if d.run:
                written.append(self.run(spec, trigger=d.reason, slot=d.slot))
            elif d.record:
                written.append(self._skip(spec, d.reason, d.slot))
        return written

    def run_named(self, name: str) -> JobRecord:
        """Run one job now, whatever its schedule or switch says (`agentmd jobs run NAME`)."""
        loaded = self.reload()
        if name not in loaded.jobs:
            refused = [r for r in loaded.refused if r["name"] == name]
            if refused:
                raise KeyError(f"job {name!r} was refused: {refused[0]['reason']} ({refused[0]['path']})")
            raise KeyError(f"no job named {name!r}; known: {', '.join(loaded.jobs) or 'none'}")
        return self.run(loaded.jobs[name], trigger="manual")

    def _skip(self, spec: JobSpec, reason: str, slot: dt.datetime | None) -> JobRecord:
        now = self.clock()
        rec: JobRecord = {
            "job": spec.name,
            "start": iso(now),
            "end": iso(now),
            "outcome": "skipped",
            "stop_reason": reason,
            "trigger": "schedule",
            "changed": {},
            "budget_used": {"wall_s": 0.0, "tokens": 0, "calls": 0},
        }
        if slot is not None:
            rec["slot"] = iso(slot)
        self._write(rec)
        return rec

    def tokens_spent_today(self, now: dt.datetime) -> int:
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return sum(int((r.get("budget_used") or {}).get("tokens", 0) or 0) for r in self.log.records(since=midnight))

    def run(self, spec: JobSpec, *, trigger: str, slot: dt.datetime | None = None) -> JobRecord:
        """Run one job to its end or its budget; the record appended to the run log."""
        with self._run_lock:
            ceiling_left: int | None = None
            if spec.budget.paid and self.daily_token_ceiling is not None:
                spent = self.tokens_spent_today(self.clock())
                if spent >= self.daily_token_ceiling:
                    reason = (
                        f"budget-ceiling: {spent} tokens spent today against a ceiling of {self.daily_token_ceiling}"
                    )
                    return self._skip(spec, reason, slot)
                ceiling_left = self.daily_token_ceiling - spent
            meter = Meter(spec, self.clock, self.clock(), ceiling_left=ceiling_left)
            outcome, reason, counted = "ok", "finished", True
            changed: Mapping[str, Any] | None = None
            try:
                if spec.command:
                    changed = run_command(spec, meter, self.env)
                else:
                    action = self.actions.get(spec.action or "")
                    if action is None:
                        raise JobFailed(f"action {spec.action!r} is not available in this process")
                    changed = action(meter)
                if meter.elapsed() > spec.budget.wall:  # finished, but later than its budget allowed
                    reason = f"finished over its wall budget ({meter.elapsed():.0f} s against {spec.budget.wall:g} s)"
            except JobDeferred as exc:
                return {"job": spec.name, "outcome": "deferred", "stop_reason": str(exc), "trigger": trigger}
            except BudgetExceeded as exc:
                outcome, reason = "stopped", exc.reason
            except JobSkipped as exc:
                outcome, reason = "skipped", str(exc)
            except JobFailed as exc:
                outcome, reason = "failed", str(exc)
                counted = exc.streak
            except JobInterrupted as exc:
                outcome, reason = "interrupted", str(exc)
            except Exception as exc:
                log.exception("job %s failed", spec.name)
                outcome, reason = "failed", f"{type(exc).__name__}: {exc}"
            rec: JobRecord = {
                "job": spec.name,
                "start": iso(meter.started),
                "end": iso(self.clock()),
                "outcome": outcome,
                "stop_reason": reason,
                "trigger": trigger,
                "changed": dict(changed or meter.changed),
                "budget_used": meter.used(),
                "budget": spec.budget.to_dict(),
            }
            if slot is not None:
                rec["slot"] = iso(slot)
            if not counted:
                rec["streak"] = False
            self._write(rec)
            level = logging.INFO if outcome in ("ok", "skipped") else logging.WARNING
            log.log(level, "job %s: %s (%s)", spec.name, outcome, reason)
            return rec

    def _write(self, rec: JobRecord) -> None:
        self.log.append(rec)
        self._last[rec["job"]] = rec

    def serve(self, stop: threading.Event, poll: float = 30.0, after_tick: Callable[[], None] | None = None) -> None:
        """The scheduler thread: a tick, then `after_tick` (the red-status alert), until `stop` is set."""
        while True:
            for step in (self.tick, after_tick):
                if step is None:
                    continue
                try:
                    step()
                except Exception:
                    log.exception("the job scheduler's pass failed; it tries again")
            if stop.wait(poll):
                return


def run_command(spec: JobSpec, meter: Meter, env: Mapping[str, str] | None) -> dict[str, object]:
    """Run a manifest's program within the wall budget, charging every usage line it prints."""
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errors:  # never a full pipe
        code, reported, timed_out = _supervise(spec, meter, env, errors)
        errors.seek(0)
        stderr = errors.read()
    if timed_out:
        raise BudgetExceeded(f"budget-wall: stopped after {spec.budget.wall:g} s")
    if code != 0:
        tail = stderr.strip().splitlines()[-1:] or [""]
        raise JobFailed(f"exited {code}" + (f": {tail[0][:200]}" if tail[0] else ""))
    return reported


def _supervise(
    spec: JobSpec, meter: Meter, env: Mapping[str, str] | None, errors: Any
) -> tuple[int, dict[str, object], bool]:
    """Start the program, read its usage lines until it ends; its exit code, what it reported, and whether
    the wall budget stopped it."""
    proc = subprocess.Popen(
        list(spec.command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        env=None if env is None else dict(env),
        start_new_session=True,
    )
    timed_out = threading.Event()

    def stop_at_wall() -> None:
        timed_out.set()
        _kill(proc)

    killer = threading.Timer(spec.budget.wall, stop_at_wall)
    killer.daemon = True
    killer.start()
    reported: dict[str, object] = {}
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            usage = _usage_line(line)
            if usage is None:
                continue
            reported.update({k: v for k, v in usage.items() if k not in ("tokens", "calls")})
            try:
                meter.charge(tokens=_count(usage.get("tokens")), calls=_count(usage.get("calls")))
            except BudgetExceeded:
                _kill(proc)
                raise
        code = proc.wait()
    finally:
        killer.cancel()
        if proc.poll() is None:
            _kill(proc)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    return code, reported, timed_out.is_set()


def _kill(proc: subprocess.Popen[str]) -> None:
    """Kill the program and everything it started (it runs in a session of its own)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _count(value: object) -> int:
    """A usage line's `tokens` or `calls` as a whole number (0 when missing or null)."""
    if not value:
        return 0
    if isinstance(value, int | float | str):
        return int(value)
    raise ValueError(f"{value!r} is not a count of tokens or calls")


def _usage_line(line: str) -> dict[str, object] | None:
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
