"""The changelog: what changed in the vault, when and by whom, read from git history and its `origin:` trailers.

Every commit agentmd makes carries an `origin:` trailer (capture, phone, ingest, confirm, retire, ...); a
commit without one is the owner's own (`git commit` by hand) and reads as `manual`. A note's biography is the
same history for one path, oldest first, following renames.

Each change names the command that takes it back (`undo`: `agentmd revert <hash>`, engine/git/undo.py), or the
commit that already did (`undone_by`); a merge (a sync's) has none, the changes it brought in are undone one
by one, and neither has the first commit.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentmd.engine.errors import AgentmdError
from agentmd.engine.git.runner import GitCli, GitMissing
from agentmd.engine.git.runner import since as git_since
from agentmd.engine.git.undo import UndoneTracker

MANUAL = "manual"
_REC, _SEP = "\x1e", "\x1f"
_FORMAT = (
    f"{_REC}%H{_SEP}%aI{_SEP}%an{_SEP}%s{_SEP}%(trailers:key=origin,valueonly,separator=%x2C)"
    f"{_SEP}%(trailers:key=host,valueonly,separator=%x2C)"
    f"{_SEP}%P{_SEP}%(trailers:key=reverts,valueonly,separator=%x2C)"
)


@dataclass
class Change:
    sha: str
    at: str
    author: str
    summary: str
    origin: str
    files: list[tuple[str, str]] = field(default_factory=list)  # (git status letter, path)
    host: str = ""  # the machine that made it (its `host:` trailer), "" for commits without one
    parents: int = 1  # 2 for a merge (a sync's: undone change by change, not as one), 0 for the first commit
    reverts: list[str] = field(default_factory=list)  # for an undo's commit: the commits it took back
    undone_by: str = ""  # the undo's commit that took this change back, if one did

    @property
    def undo(self) -> str | None:
        """The command that takes this change back (None for a merge and for the first commit)."""
        return f"agentmd revert {self.sha[:10]}" if self.parents == 1 else None

    def to_dict(self) -> dict[str, object]:
        return {
            "sha": self.sha,
            "at": self.at,
            "author": self.author,
            "origin": self.origin,
            "host": self.host,
            "summary": self.summary,
            "files": [{"status": s, "path": p} for s, p in self.files],
            "undo": self.undo,
            "undone_by": self.undone_by or None,
        }


def _parse(raw: str) -> list[Change]:
    changes = []
    for record in raw.split(_REC):
        if not record.strip():
            continue
        head, _, rest = record.partition("\n")
        parts = head.split(_SEP)
        if len(parts) < 5:
            continue
        sha, at, author, summary, origin = parts[:5]
        host = parts[5].strip().split(",")[0].strip() if len(parts) > 5 else ""
        change = Change(sha, at, author, summary, origin.strip().split(",")[0].strip() or MANUAL, host=host)
        if len(parts) > 7:
            change.parents = len(parts[6].split())
            change.reverts = [r.strip() for r in parts[7].split(",") if r.strip()]
        for line in rest.splitlines():
            cols = line.split("\t")
            if len(cols) >= 2 and cols[0]:
                change.files.append((cols[0][0], cols[-1]))
        changes.append(change)
    return changes


def history(
    vault: Path,
    *,
    since: dt.datetime | None = None,
    origins: Iterable[str] = (),
    path: str | None = None,
) -> list[Change]:
    """Commits newest first (oldest first for one note's biography), narrowed to `origins` when given."""
    args = ["-c", "core.quotePath=false", "log", f"--format={_FORMAT}", "--name-status"]
    if since is not None:
        args.append(git_since(since.astimezone(dt.UTC).isoformat(timespec="seconds")))
    if path is not None:
        # a rename followed only where the text stayed nearly the same: at git's default (half the lines) a note
        # deleted as another made from the same template was added reads as a rename, and its history as this one's
        args += ["--follow", "-M90%", "--", path]  # (git's --reverse does not combine with --follow: reversed below)
    else:
        args.append("--no-renames")
    try:
        run = GitCli(vault).run(*args, optional_locks=False)
    except GitMissing as exc:
        raise AgentmdError(f"git is not available ({exc}); the changelog is read from git history") from None
    if run.code != 0:
        if "does not have any commits" in run.why():
            return []
        raise AgentmdError(f"could not read the vault's git history: {run.why()}")
    changes = _parse(run.out.decode("utf-8", "replace"))
    tracker = UndoneTracker()
    for change in changes:  # newest first, as git gives them
        if not tracker.see(change.sha, change.origin, change.reverts):
            change.undone_by = tracker.by[change.sha]
    if path is not None:
        changes.reverse()
    wanted = set(origins)
    return [c for c in changes if not wanted or c.origin in wanted]


def written_by(vault: Path, origin: str, since: dt.datetime | None) -> list[str]:
    """Notes a commit of `origin` added or modified since `since` that still exist, sorted."""
    found = {
        p
        for change in history(vault, since=since, origins=[origin])
        for status, p in change.files
        if status in ("A", "M") and p.endswith(".md")
    }
    return sorted(p for p in found if (vault / p).is_file())


def grouped(changes: Iterable[Change]) -> dict[str, list[Change]]:
    """Changes by origin, origins in alphabetical order, each list newest first as given."""
    out: dict[str, list[Change]] = {}
    for change in changes:
        out.setdefault(change.origin, []).append(change)
    return dict(sorted(out.items()))
