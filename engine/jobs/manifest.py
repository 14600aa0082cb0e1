"""Job manifests: what the daemon's scheduler runs, when, and within which budgets.

A manifest is a small TOML file, one job per file, named for the job (`repack.toml` declares `repack`):

    action = "repack"              # a built-in action, or `command = ["/path/to/script", "arg"]`
    enabled = true
    schedule = "daily 03:30"       # "every 5m" | "daily HH:MM" | "window HH:MM-HH:MM"
    lookback = "6h"                # a missed daily or window run still runs this long after its slot
    first_delay = "2m"             # interval jobs: first run this long after the daemon starts
    [budget]
    wall = "10m"                   # every job: the longest one run may take
    tokens = 200000                # paid jobs: model tokens one run may spend
    calls = 50                     # paid jobs: model calls one run may make

The defaults ship inside the package (engine/jobs/defaults/). Files in the `jobs/` folder beside the config
file override a default of the same name key by key, or declare new jobs. Loading is lenient: a file that
does not parse, or an entry that is wrong, is named with the reason and skipped; every other job loads.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypedDict

from agentmd.engine.errors import AgentmdError
from agentmd.engine.settings import Settings

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}
_CLOCK = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
KEYS = {"action", "command", "enabled", "schedule", "lookback", "first_delay", "budget", "description"}
BUDGET_KEYS = {"wall", "tokens", "calls"}
DEFAULT_WALL = 600.0
DEFAULT_LOOKBACK = 6 * 3600.0


class ManifestError(AgentmdError, ValueError):
    """One manifest entry is wrong; the message says which and how to fix it."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a job is due: every N seconds, once a day at a time, or once a night inside a window."""

    kind: str  # "interval" | "daily" | "window"
    every: float = 0.0  # interval: seconds between runs
    at: dt.time | None = None  # daily: the time; window: its opening
    until: dt.time | None = None  # window: its close (may be past midnight)

    def describe(self) -> str:
        if self.kind == "interval":
            return f"every {format_duration(self.every)}"
        assert self.at is not None
        if self.kind == "daily":
            return f"daily {self.at:%H:%M}"
        assert self.until is not None
        return f"window {self.at:%H:%M}-{self.until:%H:%M}"


class BudgetJson(TypedDict):
    wall_s: float
    tokens: int | None
    calls: int | None


class JobJson(TypedDict):
    """A job as `agentmd jobs list --json` prints it."""

    name: str
    action: str | None
    command: list[str] | None
    enabled: bool
    schedule: str
    lookback_s: float
    first_delay_s: float | None
    budget: BudgetJson
    paid: bool
    description: str
    sources: list[str]


class LoadedJson(TypedDict):
    jobs: list[JobJson]
    refused: list[dict[str, str]]  # name, path, reason


@dataclass(frozen=True, slots=True)
class Budget:
    wall: float = DEFAULT_WALL  # seconds
    tokens: int | None = None
    calls: int | None = None

    @property
    def paid(self) -> bool:
        return self.tokens is not None or self.calls is not None

    def to_dict(self) -> BudgetJson:
        return {"wall_s": self.wall, "tokens": self.tokens, "calls": self.calls}


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: str
    schedule: Schedule
    action: str | None = None
    command: tuple[str, ...] = ()
    enabled: bool = True
    budget: Budget = field(default_factory=Budget)
    lookback: float = DEFAULT_LOOKBACK
    first_delay: float | None = None
    description: str = ""
    sources: tuple[str, ...] = ()  # the files this job was read from, the shipped default first

    def to_dict(self) -> JobJson:
        return {
            "name": self.name,
            "action": self.action,
            "command": list(self.command) or None,
            "enabled": self.enabled,
            "schedule": self.schedule.describe(),
            "lookback_s": self.lookback,
            "first_delay_s": self.first_delay,
            "budget": self.budget.to_dict(),
            "paid": self.budget.paid,
            "description": self.description,
            "sources": list(self.sources),
        }


@dataclass
class Loaded:
    """The jobs that loaded, in name order, and each manifest refused with its reason."""

    jobs: dict[str, JobSpec]
    refused: list[dict[str, str]]

    def to_dict(self) -> LoadedJson:
        return {"jobs": [j.to_dict() for j in self.jobs.values()], "refused": self.refused}


def parse_duration(value: object, what: str) -> float:
    """Seconds from `90`, `"90s"`, `"5m"`, `"6h"` or `"1d"`."""
    if isinstance(value, bool):
        raise ManifestError(f'{what} = {value!r} is not a duration; write e.g. "5m" or "6h"')
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        m = _DURATION.match(str(value))
        if not m:
            raise ManifestError(f'{what} = {value!r} is not a duration; write e.g. "90s", "5m", "6h" or "1d"')
        seconds = float(m.group(1)) * _UNITS[m.group(2)]
    if seconds < 0:
        raise ManifestError(f"{what} = {value!r} is negative")
    return seconds


def format_duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _clock(text: str, what: str) -> dt.time:
    m = _CLOCK.match(text.strip())
    if not m:
        raise ManifestError(f"{what}: {text!r} is not a time of day; write HH:MM, e.g. 02:00")
    return dt.time(int(m.group(1)), int(m.group(2)))


def parse_schedule(value: object) -> Schedule:
    if not isinstance(value, str) or not value.strip():
        raise ManifestError('schedule is missing; write "every 5m", "daily 06:30" or "window 02:00-06:00"')
    kind, _, rest = value.strip().partition(" ")
    rest = rest.strip()
    if kind == "every":
        every = parse_duration(rest, "schedule every")
        if every <= 0:
            raise ManifestError("schedule every 0 would run without pause; give a positive interval")
        return Schedule("interval", every=every)
    if kind == "daily":
        return Schedule("daily", at=_clock(rest, "schedule daily"))
    if kind == "window":
        start, sep, end = rest.partition("-")
        if not sep:
            raise ManifestError(f"schedule window {rest!r} needs an opening and a close, e.g. 02:00-06:00")
        at, until = _clock(start, "schedule window"), _clock(end, "schedule window")
        if at == until:
            raise ManifestError(f"schedule window {rest!r} opens and closes at the same time")
        return Schedule("window", at=at, until=until)
    raise ManifestError(f"schedule {value!r}: start with `every`, `daily` or `window`")


def _budget(value: object) -> Budget:
    if value is None:
        return Budget()
    if not isinstance(value, Mapping):
        raise ManifestError("[budget] must be a table with wall, tokens and/or calls")
    unknown = sorted(set(value) - BUDGET_KEYS)
    if unknown:
        raise ManifestError(f"unknown budget key(s) {', '.join(unknown)}; known: {', '.join(sorted(BUDGET_KEYS))}")
    wall = parse_duration(value.get("wall", DEFAULT_WALL), "budget.wall")
    if wall <= 0:
        raise ManifestError("budget.wall must be positive")
    counts: dict[str, int | None] = {}
    for key in ("tokens", "calls"):
        raw = value.get(key)
        if raw is not None and (isinstance(raw, bool) or not isinstance(raw, int) or raw < 0):
            raise ManifestError(f"budget.{key} = {raw!r} is not a whole number ≥ 0")
        counts[key] = raw
    return Budget(wall=wall, tokens=counts["tokens"], calls=counts["calls"])


def build_spec(name: str, data: Mapping[str, Any], sources: tuple[str, ...], actions: set[str]) -> JobSpec:
    """One job from its merged table; raises ManifestError naming the first thing wrong."""
    if not _NAME.match(name):
        raise ManifestError(f"job name {name!r} must be kebab-case (the file name without .toml)")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise ManifestError(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(KEYS))}")
    action, command = data.get("action"), data.get("command")
    if (action is None) == (command is None):
        raise ManifestError("give exactly one of `action` (a built-in) or `command` (a program and its arguments)")
    if action is not None and action not in actions:
        raise ManifestError(f"action {action!r} is not built in; known: {', '.join(sorted(actions))}")
    argv: tuple[str, ...] = ()
    if command is not None:
        if not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command):
            raise ManifestError('command must be a non-empty list of strings, e.g. ["/usr/local/bin/backup", "-q"]')
        argv = tuple(command)
    enabled = data.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ManifestError(f"enabled = {enabled!r} must be true or false")
    first = data.get("first_delay")
    return JobSpec(
        name=name,
        schedule=parse_schedule(data.get("schedule")),
        action=action,
        command=argv,
        enabled=enabled,
        budget=_budget(data.get("budget")),
        lookback=parse_duration(data.get("lookback", DEFAULT_LOOKBACK), "lookback"),
        first_delay=None if first is None else parse_duration(first, "first_delay"),
        description=str(data.get("description", "")),
        sources=sources,
    )


def _read(path: Path) -> dict[str, object]:
    with path.open("rb") as fh:
        return tomllib.load(fh)


def shipped_manifests() -> dict[str, tuple[str, dict[str, object]]]:
    """The defaults that ship with agentmd, by job name: (where, table)."""
    out: dict[str, tuple[str, dict[str, object]]] = {}
    folder = resources.files("agentmd.engine.jobs") / "defaults"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            out[entry.name[: -len(".toml")]] = (f"(shipped) {entry.name}", tomllib.loads(entry.read_text("utf-8")))
    return out


def jobs_dir(settings: Settings) -> Path | None:
    """The folder of the owner's manifests: `jobs/` beside the config file (None without a config file)."""
    return settings.config_file.parent / "jobs" if settings.config_file is not None else None


def load_jobs(
    folder: Path | None, actions: set[str], overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> Loaded:
    """Every job that loads, and every manifest refused with its reason; never raises for a bad manifest.

    `overrides` (keys of a manifest table, by job name) sit between the shipped defaults and the owner's
    files: the daemon passes its command-line intervals here."""
    tables: dict[str, tuple[list[str], dict[str, object]]] = {}
    for name, (where, table) in shipped_manifests().items():
        tables[name] = ([where], dict(table))
    for name, extra in (overrides or {}).items():
        if name in tables:
            tables[name][1].update(extra)
    refused: list[dict[str, str]] = []
    if folder is not None and folder.is_dir():
        for path in sorted(folder.glob("*.toml")):
            name = path.stem
            try:
                table = _read(path)
            except (OSError, tomllib.TOMLDecodeError) as exc:
                refused.append({"name": name, "path": str(path), "reason": f"does not parse: {exc}"})
                continue
            sources, merged = tables.get(name, ([], {}))
            candidate = {**merged, **table}
            shipped_budget, own_budget = merged.get("budget"), table.get("budget")
            if isinstance(shipped_budget, Mapping) and isinstance(own_budget, Mapping):
                candidate["budget"] = {**shipped_budget, **own_budget}
            tables[name] = ([*sources, str(path)], candidate)
    jobs: dict[str, JobSpec] = {}
    for name in sorted(tables):
        sources, table = tables[name]
        try:
            jobs[name] = build_spec(name, table, tuple(sources), actions)
        except ManifestError as exc:
            refused.append({"name": name, "path": sources[-1], "reason": str(exc)})
    return Loaded(jobs, refused)
