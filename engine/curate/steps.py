"""Applying a curation plan: each step is a set of note edits committed together under one `origin:`.

A plan is computed by reading the vault; applying it happens later, maybe in another process (the daemon, when
it runs, is the vault's one writer, and the command line hands it the plan). So every edit carries the hash of
the bytes it was planned against (`expect`, None for a note the step creates), and a step whose notes changed
meanwhile is refused whole before anything is written: the owner re-runs the command and reviews the new plan.

For each step: the door is asked for every path, every origin is registered with the committer before the
first byte is written (so whichever commit cycle picks the files up commits them with the step's origin),
each note is written atomically (temp file, fsync, rename; a created note is linked to a name that must not
exist), each folder is fsynced once after its notes, then the committer commits and the notes are indexed. The
host's other commit cycles wait from the first registration to that commit, so a step is one commit.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from agentmd.engine.errors import AgentmdError, UsageError
from agentmd.engine.fsutil import fsync_dir
from agentmd.rules import Contract, decide

CURATION_ACTOR = "operator"  # the curation commands are the owner's own hand on the vault


class StepRefused(AgentmdError):
    """A step could not be applied. `done` holds the steps (or the part of this one) that were applied."""

    def __init__(self, message: str, done: list[StepResult] | None = None) -> None:
        super().__init__(message)
        self.done = list(done or [])


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Edit:
    path: str  # vault-relative, POSIX
    text: str  # the note's new full text
    expect: str | None  # sha256 of the bytes the plan read; None: the note is created

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "text": self.text, "expect": self.expect}


@dataclass(frozen=True)
class Step:
    origin: str
    summary: str
    edits: tuple[Edit, ...]

    def to_dict(self) -> dict[str, object]:
        return {"origin": self.origin, "summary": self.summary, "edits": [e.to_dict() for e in self.edits]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Step:
        try:
            edits = tuple(
                Edit(str(e["path"]), str(e["text"]), None if e.get("expect") is None else str(e["expect"]))
                for e in data["edits"]
            )
            return cls(str(data["origin"]), str(data.get("summary", "")), edits)
        except (KeyError, TypeError) as exc:
            raise UsageError(f"a curation step is malformed ({exc})") from None


class StepResultJson(TypedDict):
    """A step's result as `/v1/curate` and `--json` print it."""

    origin: str
    paths: list[str]
    commits: list[str]
    warnings: list[str]


@dataclass
class StepResult:
    origin: str
    paths: list[str]
    commits: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> StepResultJson:
        return {"origin": self.origin, "paths": self.paths, "commits": self.commits, "warnings": self.warnings}


@dataclass(frozen=True)
class Writer:
    """What applying needs from its host (the command line's own committer and index, or the daemon's)."""

    vault: Path
    contract: Callable[[], Contract]
    register: Callable[[str, str], object]  # (path, origin): before the write
    commit: Callable[[], tuple[list[str], str | None]]  # one commit cycle: (commit shas, problem or None)
    index: Callable[[Sequence[str]], None]  # index these notes now
    # held from a step's first registration to its commit: no other commit cycle of the host runs meanwhile
    exclusive: Callable[[], AbstractContextManager[object]] = nullcontext


def check(vault: Path, step: Step, contract: Contract) -> None:
    """Refuse the whole step when a note changed since the plan, or the door refuses a path."""
    paths = [e.path for e in step.edits]
    if len(set(paths)) != len(paths):
        twice = sorted({p for p in paths if paths.count(p) > 1})
        raise StepRefused(f"the plan writes {', '.join(twice[:5])} more than once; nothing was written")
    changed = []
    for edit in step.edits:
        try:
            current: str | None = digest((vault / edit.path).read_bytes())
        except FileNotFoundError:
            current = None
        if current != edit.expect:
            changed.append(edit.path)
        refused = curation_refusal(vault, edit.path, contract, creating=edit.expect is None)
        if refused:
            raise StepRefused(f"the door refused {edit.path}: {refused}")
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        raise StepRefused(
            f"{len(changed)} note(s) changed since the plan was made ({shown}); nothing was written. "
            "Run the command again to see the current plan"
        )


def curation_refusal(vault: Path, path: str, contract: Contract, *, creating: bool = False) -> str | None:
    """Why the door refuses curation a write of `path` (a `private` folder: nobody writes there through agentmd),
    or None."""
    decision = decide(vault, path, contract, actor=CURATION_ACTOR, creating=creating)
    return None if decision.allowed else decision.reason


def _write(vault: Path, edit: Edit) -> None:
    target = vault / edit.path
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{target.name[:40]}.{uuid.uuid4().hex[:8]}.capture-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, edit.text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        if edit.expect is None:
            os.link(tmp, target, follow_symlinks=False)  # fails if the name appeared meanwhile
        else:
            os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def apply_steps(writer: Writer, steps: Iterable[Step], results: list[StepResult] | None = None) -> list[StepResult]:
    """Apply the steps in order, one commit each, appending each result to `results`. A refused step raises
    `StepRefused`; the steps before it stay applied."""
    results = [] if results is None else results
    for step in steps:
        if not step.edits:
            continue
        try:
            check(writer.vault, step, writer.contract())
        except StepRefused as exc:
            raise StepRefused(str(exc), results) from None
        paths = [e.path for e in step.edits]
        written: list[str] = []
        error: OSError | None = None
        # No other commit cycle of the host starts between the first registration and the step's own commit
        # (one the daemon's watcher asked for meanwhile waits): the step is one commit, and its result names it.
        with writer.exclusive():
            for path in paths:
                writer.register(path, step.origin)
            try:
                for edit in step.edits:
                    _write(writer.vault, edit)
                    written.append(edit.path)
            except OSError as exc:
                error = exc
            if error is None:
                for folder in sorted({(writer.vault / p).parent for p in written}):
                    fsync_dir(folder)  # once per folder, after its notes: the names are durable before the commit
            # What a failed step wrote is committed with the step's origin all the same, so the vault is not
            # left dirty and the commit says which part of the step landed.
            shas, problem = writer.commit() if written else ([], None)
        if error is not None:
            if written:
                writer.index(written)
                results.append(StepResult(step.origin, written, shas, [f"stopped after {len(written)} note(s)"]))
            edit = step.edits[len(written)]
            what = "appeared while the step was written" if isinstance(error, FileExistsError) else f"failed ({error})"
            raise StepRefused(
                f"{edit.path} {what}; {len(written)} of {len(paths)} note(s) were written and committed, the rest "
                "were not. Run the command again to finish",
                results,
            ) from None
        result = StepResult(step.origin, paths, shas)
        if problem:
            result.warnings.append(f"not committed yet ({problem}); the next commit cycle will commit it")
        writer.index(paths)
        results.append(result)
    return results
