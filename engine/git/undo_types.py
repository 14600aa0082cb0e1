"""The values an undo is made of and answers with: what to take back (`Selection`, as the command line names it
and as it travels to the daemon), the commits taken back (`Target`), the files changed (`FileChange`), the plan
and its result, their JSON forms, and `UndoRefused` (engine/git/undo.py)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TypedDict

from agentmd.engine.errors import AgentmdError, UsageError

KINDS = ("undo", "revert", "origin", "restore")
MAX_COUNT = 50  # changes one `agentmd undo -n N` takes back at most


class UndoRefused(AgentmdError):
    """An undo that cannot be planned or written; nothing was written and the message says what to do."""


@dataclass(frozen=True)
class Selection:
    """What to take back, as the command line names it (and as it travels to the daemon)."""

    kind: str
    count: int = 1
    commits: tuple[str, ...] = ()
    origin: str | None = None
    since: str | None = None  # ISO date-time (the command line turns `3d` into one)
    path: str | None = None
    to: str | None = None  # a commit, for a restore
    at: str | None = None  # ISO date-time, for a restore: the last commit at or before it
    head: str | None = None  # the vault's HEAD when the plan was shown: the write is refused once it has moved

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["commits"] = list(self.commits)
        return {k: v for k, v in data.items() if v not in (None, [], ())}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Selection:
        known = {"kind", "count", "commits", "origin", "since", "path", "to", "at", "head"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError(f"unknown field(s) for an undo: {', '.join(unknown)}; it takes {', '.join(sorted(known))}")
        kind = data.get("kind")
        if kind not in KINDS:
            raise UsageError(f"`kind` must be one of {', '.join(KINDS)}, not {kind!r}")
        count = data.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_COUNT:
            raise UsageError(f"`count` must be a whole number from 1 to {MAX_COUNT}")
        commits = data.get("commits") or []
        if not isinstance(commits, list) or not all(isinstance(c, str) for c in commits):
            raise UsageError("`commits` must be a list of commit hashes")
        texts: dict[str, str | None] = {}
        for name in ("origin", "since", "path", "to", "at", "head"):
            value = data.get(name)
            if value is not None and not isinstance(value, str):
                raise UsageError(f"`{name}` must be a string")
            texts[name] = value
        for name in ("since", "at"):  # times handed to git: ISO only, never an option or git's own phrases
            value = texts[name]
            if value is not None and not is_iso_time(value):
                raise UsageError(f"`{name}` must be an ISO date or date-time (2026-11-30 or 2026-11-30T10:00:00Z)")
        if kind == "restore" and texts["to"] is not None and texts["at"] is None and is_iso_time(texts["to"]):
            texts["at"] = texts["to"]  # a date given as `to`: the last commit at or before it
        return cls(str(kind), count, tuple(commits), **texts)


def is_iso_time(text: str) -> bool:
    """Whether `text` is an ISO date or date-time (`Z` for UTC accepted)."""
    try:
        dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return False
    return True


class TargetJson(TypedDict):
    sha: str
    at: str
    subject: str
    origin: str
    host: str


class FileChangeJson(TypedDict):
    path: str
    status: str
    added: int | None
    removed: int | None


class PlanJson(TypedDict):
    """An undo plan as `agentmd undo --json` and `/v1/revert` print it."""

    selection: dict[str, object]
    head: str
    targets: list[TargetJson]
    changes: list[FileChangeJson]
    conflicts: list[dict[str, str]]
    message: str


class ResultJson(PlanJson):
    commit: str | None


@dataclass(frozen=True)
class Target:
    """A commit an undo takes back (or, for a restore, the commit whose version it brings back)."""

    sha: str
    at: str
    subject: str
    origin: str
    host: str

    def to_dict(self) -> TargetJson:
        return {"sha": self.sha, "at": self.at, "subject": self.subject, "origin": self.origin, "host": self.host}


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str  # A (added), M (modified), D (deleted)
    added: int | None  # lines; None for a binary file
    removed: int | None

    def to_dict(self) -> FileChangeJson:
        return {"path": self.path, "status": self.status, "added": self.added, "removed": self.removed}


@dataclass
class UndoPlan:
    selection: Selection
    head: str  # HEAD the plan was made on
    tree: str  # the tree of the commit it writes
    targets: list[Target]
    changes: list[FileChange] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)  # {"path", "sibling"} or {"path", "kept"}
    message: str = ""

    def to_dict(self) -> PlanJson:
        return {
            "selection": self.selection.to_dict(),
            "head": self.head,
            "targets": [t.to_dict() for t in self.targets],
            "changes": [c.to_dict() for c in self.changes],
            "conflicts": self.conflicts,
            "message": self.message,
        }


@dataclass
class UndoResult:
    plan: UndoPlan
    commit: str | None  # None: nothing to write (already undone), or a plan only

    def to_dict(self) -> ResultJson:
        return {**self.plan.to_dict(), "commit": self.commit}
