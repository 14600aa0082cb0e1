"""What the lifecycle policy reads from git history, and the lifecycle journal it writes.

Two passes over the vault's history, newest commit first:

- `edits`: for every note, its newest commit that the policy did not make (its last edit by anyone else),
  with the commit's time and its place in the history (0 = newest). A note the policy sank and someone edited
  since has an edit newer than the policy's commit, whatever the clocks say.
- `lifecycle_changes`: for every note, the newest commit that added or removed a `lifecycle:` line, with
  that commit's origin and the value it left. Whether the owner set a note's lifecycle by hand is read here:
  the last change of the line was made by a person (a hand edit committed as `local-edit`, a `git commit` of
  their own, a curation command), not by a capture, an ingest, enrichment, a sync or the policy itself.

The journal, `<state dir>/lifecycle-journal.jsonl`, holds one line per lifecycle change: when (`ts`, the
policy's clock), `path`, `from`, `to`, `actor` (`policy` for the policy's own changes, `operator` for a
lifecycle the owner set by hand, journaled the first time the policy sees it), `reason`, and the `commit`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from agentmd.engine.errors import AgentmdError
from agentmd.engine.fsutil import read_json_lines
from agentmd.engine.git.runner import GitCli, GitMissing

POLICY_ORIGIN = "lifecycle"
# Origins whose lifecycle lines are stamps of a writer, not the owner's choice; every other origin (local-edit,
# a commit without a trailer, confirm, retire, promote, groom, resolve, phone) is a person's hand.
MACHINE_ORIGINS = frozenset(
    {"capture", "self-probe", "morning", "ingest", "enrich", "lessons", "maps", "sync", POLICY_ORIGIN}
)
MANUAL = "manual"  # a commit without an origin trailer: the owner's own `git commit`
JOURNAL_NAME = "lifecycle-journal.jsonl"
_REC, _SEP = "\x1e", "\x1f"
_FORMAT = f"--format={_REC}%H{_SEP}%ct{_SEP}%(trailers:key=origin,valueonly,separator=%x2C)"
_KEY = "lifecycle:"


@dataclass(frozen=True)
class Commit:
    sha: str
    at: dt.datetime
    origin: str
    order: int  # place in the history, newest first (0 = the newest commit touching a note)


@dataclass(frozen=True)
class LifecycleChange:
    """The newest commit that changed a note's `lifecycle:` line, and the value it left (None: removed)."""

    commit: Commit
    value: str | None

    @property
    def by_hand(self) -> bool:
        return self.commit.origin not in MACHINE_ORIGINS

    @property
    def by_policy(self) -> bool:
        return self.commit.origin == POLICY_ORIGIN


def _log(vault: Path, *args: str) -> str:
    try:
        run = GitCli(vault).run(
            "-c", "core.quotePath=false", "log", "--no-renames", "--no-color", _FORMAT, *args, optional_locks=False
        )
    except GitMissing as exc:
        raise AgentmdError(f"git is not available ({exc}); the lifecycle policy reads the vault's history") from None
    if run.code != 0:
        if "does not have any commits" in run.why():
            return ""
        raise AgentmdError(f"could not read the vault's git history: {run.why()}")
    return run.out.decode("utf-8", "replace")


def _commits(raw: str) -> Iterator[tuple[str, str, str, list[str]]]:
    """(sha, unix time, origin, the lines after the header) per commit, newest first."""
    for record in raw.split(_REC):
        if not record.strip():
            continue
        head, _, rest = record.partition("\n")
        parts = head.split(_SEP)
        if len(parts) < 3:
            continue
        origin = parts[2].strip().split(",")[0].strip() or MANUAL
        yield parts[0], parts[1], origin, rest.split("\n")


def _when(stamp: str) -> dt.datetime:
    try:
        return dt.datetime.fromtimestamp(int(stamp), dt.UTC)
    except (ValueError, OverflowError, OSError):
        return dt.datetime.fromtimestamp(0, dt.UTC)


def _unquote(path: str) -> str:
    """A path as git prints it in a diff header, its C quoting undone for the common cases."""
    if len(path) >= 2 and path[0] == path[-1] == '"':
        with contextlib.suppress(UnicodeDecodeError, ValueError):
            return path[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode()
    return path


def edits(vault: Path) -> tuple[dict[str, Commit], dict[str, int]]:
    """(newest commit not made by the policy, per note path; the place of every commit in the history)."""
    last: dict[str, Commit] = {}
    order: dict[str, int] = {}
    for i, (sha, stamp, origin, lines) in enumerate(_commits(_log(vault, "--name-only"))):
        order[sha] = i
        if origin == POLICY_ORIGIN:
            continue
        commit = Commit(sha, _when(stamp), origin, i)
        for line in lines:
            if line.endswith(".md") and line not in last:
                last[line] = commit
    return last, order


def lifecycle_changes(vault: Path, order: dict[str, int]) -> dict[str, LifecycleChange]:
    """The newest change of each note's `lifecycle:` line (see the module docstring)."""
    found: dict[str, LifecycleChange] = {}
    raw = _log(vault, "-p", "--unified=0", f"-G^{_KEY}")
    for sha, stamp, origin, lines in _commits(raw):
        commit = Commit(sha, _when(stamp), origin, order.get(sha, 0))
        for path, value in _lifecycle_lines(lines):
            if path.endswith(".md") and path not in found:
                found[path] = LifecycleChange(commit, value)
    return found


def _lifecycle_lines(lines: list[str]) -> list[tuple[str, str | None]]:
    """(path, the value its `lifecycle:` line was left with, None when removed) for each file of one commit's
    patch that added or removed such a line."""
    out: list[tuple[str, str | None]] = []
    path: str | None = None
    touched = False
    value: str | None = None
    for line in [*lines, "diff --git end"]:
        if line.startswith("diff --git "):
            if path is not None and touched:
                out.append((path, value))
            path, touched, value = None, False, None
        elif line.startswith("+++ "):
            target = _unquote(line[4:].strip())
            path = target[2:] if target.startswith("b/") else None  # /dev/null: the note was deleted
        elif line.startswith(("+" + _KEY, "-" + _KEY)):
            touched = True
            if line[0] == "+":
                value = line[1 + len(_KEY) :].strip().strip("'\"") or None
    return out


# --------------------------------------------------------------------------------------------- journal


def journal_path(state_dir: Path) -> Path:
    return state_dir / JOURNAL_NAME


def read_journal(state_dir: Path) -> list[dict[str, object]]:
    """The journal's lines, oldest first; a torn or foreign line is skipped."""
    return [item for item in read_json_lines(journal_path(state_dir)) if isinstance(item.get("path"), str)]


def append_journal(state_dir: Path, lines: Iterable[dict[str, object]]) -> int:
    """Append lines to the journal (fsynced); how many were written."""
    data = "".join(json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n" for line in lines)
    if not data:
        return 0
    state_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(journal_path(state_dir), os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        view = memoryview(data.encode("utf-8"))
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    return data.count("\n")
