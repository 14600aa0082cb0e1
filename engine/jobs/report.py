"""What the jobs tell `status`: each job's last run, red for a job failing again and again, and whether an
alert on red has anywhere to go. Read from the run log and the config, so the daemon and a status computed
from disk say the same."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from typing import TypedDict

from agentmd.engine.jobs.manifest import jobs_dir, load_jobs
from agentmd.engine.jobs.notify import notifiers_from_config
from agentmd.engine.jobs.runner import FAILED_IN_A_ROW_RED, JobRecord, RunLog
from agentmd.engine.settings import Settings

BUILT_IN_ACTIONS = frozenset(
    {
        "reconcile",
        "probe",
        "repack",
        "morning-note",
        "ingest-sweep",
        "groom-propose",
        "enrich",
        "sync",
        "lifecycle",
        "lessons",
        "maps",
    }
)


class JobLast(TypedDict):
    """A job's last run as status shows it."""

    start: str | None
    end: str | None
    outcome: str | None
    stop_reason: str | None
    trigger: str | None


class JobLine(TypedDict):
    enabled: bool
    schedule: str
    last: JobLast | None
    failed_in_a_row: int


class JobsSection(TypedDict):
    """The `jobs` section of status."""

    jobs: dict[str, JobLine]
    refused: list[dict[str, str]]  # manifests refused, each with its path and reason
    notifier: str | None
    notifier_notes: list[str]
    red: list[str]


def read_config(settings: Settings) -> dict[str, object]:
    """The config file's tables (empty without one, or when it no longer parses: settings read it already)."""
    if settings.config_file is None:
        return {}
    try:
        with settings.config_file.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def token_ceiling(config: Mapping[str, object]) -> int | None:
    jobs = config.get("jobs")
    value = jobs.get("daily_token_ceiling") if isinstance(jobs, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def jobs_status(settings: Settings) -> JobsSection:
    """The `jobs` section of status."""
    summary = RunLog(settings.state_dir).summary()
    last = {name: entry.get("last") for name, entry in summary.items()}
    streaks = {name: int(entry.get("failed_in_a_row", 0)) for name, entry in summary.items()}
    loaded = load_jobs(jobs_dir(settings), set(BUILT_IN_ACTIONS))
    jobs: dict[str, JobLine] = {}
    red = []
    for name, spec in loaded.jobs.items():
        rec = last.get(name)
        jobs[name] = {
            "enabled": spec.enabled,
            "schedule": spec.schedule.describe(),
            "last": None if rec is None else _last(rec),
            "failed_in_a_row": streaks.get(name, 0),
        }
        if spec.enabled and streaks.get(name, 0) >= FAILED_IN_A_ROW_RED:
            red.append(
                f"job-failing: {name} failed {streaks[name]} times in a row (last: {(rec or {}).get('stop_reason')})"
            )
    notifiers, notes = notifiers_from_config(read_config(settings))
    return {
        "jobs": jobs,
        "refused": loaded.refused,
        "notifier": ", ".join(n.name for n in notifiers) if notifiers else None,
        "notifier_notes": notes
        or ([] if notifiers else ["no notifier configured: a red status sends no alert (set [notify] in the config)"]),
        "red": red,
    }


def _last(rec: JobRecord) -> JobLast:
    return {
        "start": rec.get("start"),
        "end": rec.get("end"),
        "outcome": rec.get("outcome"),
        "stop_reason": rec.get("stop_reason"),
        "trigger": rec.get("trigger"),
    }


def render_lines(section: JobsSection | None) -> list[str]:
    """The status text for the jobs: one line per job that ran, refused manifests, the notifier."""
    if not section:
        return []
    lines = []
    for name, job in sorted((section.get("jobs") or {}).items()):
        last = job.get("last")
        if not job.get("enabled"):
            text = "off"
        elif last is None:
            text = f"{job.get('schedule')}, never run"
        else:
            text = f"{job.get('schedule')}, last {last.get('outcome')} {str(last.get('start'))[:16]}"
            if last.get("outcome") != "ok":
                text += f" ({last.get('stop_reason')})"
        lines.append(f"  job       {name}: {text}")
    for r in section.get("refused") or []:
        lines.append(f"  job       manifest {r.get('path')} refused: {r.get('reason')}")
    for note in section.get("notifier_notes") or []:
        lines.append(f"  alerts    {note}")
    return lines
