"""The changelog: what changed in the vault, when and by whom, read from git history and its `origin:` trailers.

Every commit agentmd makes carries an `origin:` trailer (capture, phone, ingest, confirm, retire, ...); a
commit without one is the owner's own (`git commit` by hand) and reads as `manual`. A note's biography is the
same history for one path, oldest first, following renames.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmd.engine.errors import AgentmdError
from agentmd.engine.git.runner import GitCli, GitMissing

MANUAL = "manual"
_REC, _SEP = "\x1e", "\x1f"
_FORMAT = (
    f"{_REC}%H{_SEP}%aI{_SEP}%an{_SEP}%s{_SEP}%(trailers:key=origin,valueonly,separator=%x2C)"
    f"{_SEP}%(trailers:key=host,valueonly,separator=%x2C)"
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "sha": self.sha,
            "at": self.at,
            "author": self.author,
            "origin": self.origin,
            "host": self.host,
            "summary": self.summary,
            "files": [{"status": s, "path": p} for s, p in self.files],
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
        args.append(f"--since={since.astimezone(dt.UTC).isoformat(timespec='seconds')}")
    if path is not None:
        args += ["--follow", "--", path]  # (git's --reverse does not combine with --follow: reversed below)
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
