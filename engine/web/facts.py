"""What the page shows, read from the vault's git history and notes (nothing here writes)."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmd.engine.errors import UsageError
from agentmd.engine.fsutil import NotInVault, NotRegularFile, opened_dir, read_regular
from agentmd.engine.git.runner import HEX_ID, GitCli
from agentmd.engine.git.runner import since as git_since
from agentmd.engine.git.undo import UndoneTracker
from agentmd.engine.web.svg import KINDS, kind_of
from agentmd.vault_schema import YamlRefused, load_yaml, split_frontmatter

SHORT_HEX_ID = re.compile(r"[0-9a-f]{7,64}")

_REC, _SEP = "\x1e", "\x1f"
_FORMAT = (
    f"{_REC}%H{_SEP}%P{_SEP}%cI{_SEP}%s{_SEP}%(trailers:key=origin,valueonly,separator=%x2C)"
    f"{_SEP}%(trailers:key=host,valueonly,separator=%x2C){_SEP}%(trailers:key=reverts,valueonly,separator=%x2C)"
)
MAX_DIFF_BYTES = 400_000
TIMELINE_DAYS = 14


@dataclass
class Commit:
    sha: str
    parents: int
    at: str
    subject: str
    origin: str
    host: str
    reverts: list[str] = field(default_factory=list)
    undone_by: str = ""

    @property
    def kind(self) -> str:
        return kind_of(self.origin, self.parents > 1)

    @property
    def undoable(self) -> bool:
        """Whether `agentmd revert` takes it back (not a merge, not the first commit, not undone already)."""
        return self.parents == 1 and not self.undone_by


def _first(value: str) -> str:
    return value.strip().split(",")[0].strip()


def _parse(raw: str) -> list[Commit]:
    out = []
    for record in raw.split(_REC):
        parts = record.rstrip("\n").split(_SEP)
        if len(parts) < 7:
            continue
        sha, parents, at, subject, origin, host, reverts = parts[:7]
        merge = len(parents.split()) > 1
        name = _first(origin) or ("sync" if merge else "manual")
        revs = [r.strip() for r in reverts.split(",") if HEX_ID.fullmatch(r.strip())]
        out.append(Commit(sha, len(parents.split()), at, subject, name, _first(host), revs))
    return out


def recent_commits(vault: Path, since: dt.datetime, limit: int = 2000) -> list[Commit]:
    """Commits since `since`, newest first, each marked with the undo that took it back (if one did)."""
    if not (vault / ".git").exists():
        return []
    run = GitCli(vault).run(
        "log", f"--format={_FORMAT}", f"--max-count={limit}",
        git_since(since.astimezone(dt.UTC).isoformat(timespec="seconds")), "HEAD", optional_locks=False,
    )  # fmt: skip
    if run.code != 0:
        return []
    commits = _parse(run.out.decode("utf-8", "replace"))
    tracker = UndoneTracker()
    for c in commits:
        if not tracker.see(c.sha, c.origin, c.reverts):
            c.undone_by = tracker.by[c.sha]
    return commits


def day_counts(commits: list[Commit], now: dt.datetime, days: int = TIMELINE_DAYS) -> tuple[list[str], dict]:
    """The last `days` UTC dates (oldest first) and the commits of each by kind."""
    today = now.astimezone(dt.UTC).date()
    dates = [(today - dt.timedelta(days=n)).isoformat() for n in range(days - 1, -1, -1)]
    counts: dict[str, dict[str, int]] = {d: {k: 0 for k, _ in KINDS} for d in dates}
    for c in commits:
        try:
            day = dt.datetime.fromisoformat(c.at).astimezone(dt.UTC).date().isoformat()
        except ValueError:
            continue
        if day in counts:
            counts[day][c.kind] += 1
    return dates, counts


def commit_of(vault: Path, sha: str) -> tuple[Commit, str, bool]:
    """One commit, its patch (at most MAX_DIFF_BYTES) and whether the patch was cut."""
    if not SHORT_HEX_ID.fullmatch(sha or ""):  # a hash, whole or cut to 7 or more digits (as the CLI prints it)
        raise UsageError("name a commit by its hash (at least 7 of its digits)")
    git = GitCli(vault)
    head = git.run("log", "-1", f"--format={_FORMAT}", sha, "--", optional_locks=False)
    found = _parse(head.out.decode("utf-8", "replace")) if head.code == 0 else []
    if not found:
        raise UsageError(f"{sha} is no commit of the vault's history")
    commit = found[0]
    for c in recent_commits(vault, dt.datetime.fromisoformat(commit.at) - dt.timedelta(seconds=1)):
        if c.sha == commit.sha:
            commit.undone_by = c.undone_by
    patch = git.run(
        "-c", "core.quotePath=false", "show", "--format=", "--stat", "--patch", "--no-color", "--first-parent",
        commit.sha, optional_locks=False,
    )  # fmt: skip
    data = patch.out if patch.code == 0 else patch.why().encode()
    cut = len(data) > MAX_DIFF_BYTES
    return commit, data[:MAX_DIFF_BYTES].decode("utf-8", "replace"), cut


def safe_note_path(vault: Path, path: str) -> str:
    """`path` as a vault-relative note path, refusing one outside the vault or in its hidden folders."""
    rel = Path(path.strip().lstrip("/"))
    hidden = any(p.startswith(".") for p in rel.parts)
    if not path.strip() or "\x00" in path or rel.is_absolute() or ".." in rel.parts or hidden:
        raise UsageError(f"{path!r} is not a note of the vault")
    return rel.as_posix()


@dataclass
class NoteText:
    path: str
    frontmatter: dict[str, object]
    frontmatter_problem: str | None
    body: str
    title: str


def read_note(vault: Path, path: str) -> NoteText:
    """The note at `path`, read without following a link on the way: a link in the vault may lead anywhere (a
    sync can bring one), and the page shows the vault's own files only."""
    rel = safe_note_path(vault, path)
    folder, _, name = rel.rpartition("/")
    try:
        with opened_dir(vault, folder) as fd:
            text = read_regular(name, dir_fd=fd).decode("utf-8", "replace")
    except FileNotFoundError:
        raise UsageError(f"{rel} is not a note of the vault (no such file)") from None
    except (NotInVault, NotRegularFile):
        raise UsageError(f"{rel} is not a note of the vault (a link or not a regular file)") from None
    except OSError as exc:
        raise UsageError(f"{rel} cannot be read ({exc.strerror or exc})") from None
    split = split_frontmatter(text)
    fm: dict[str, object] = {}
    problem = None
    if split.yaml_text is not None:
        try:
            loaded = load_yaml(split.yaml_text)
            fm = loaded if isinstance(loaded, dict) else {}
        except YamlRefused as exc:
            problem = str(exc)
    body = split.body
    title = str(fm.get("title") or "") or Path(rel).stem
    return NoteText(rel, fm, problem, body, title)


def show_value(value: Any) -> str:
    """A frontmatter value as one line of text."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
