"""What `git status` reports as changed in the vault, and the paths agentmd never commits on its own.

Both the committer (what to commit) and the corpus-write gate (what is uncommitted) read the worktree
through `read_status`; `under_dot_dir` and `is_scratch` are the rules for untracked paths the committer
leaves alone. A file iCloud evicted (its `.Note.md.icloud` placeholder beside it) is not reported deleted.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentmd.engine.git.runner import CycleFailure, GitCli, printable
from agentmd.engine.synctools import is_sync_temp, placeholder_of

if TYPE_CHECKING:
    from agentmd.rules.contract.synctool import SyncToolPatterns

_VIM_SWAP_RE = re.compile(r"\.sw[a-px]$")


@dataclass(frozen=True)
class StatusEntry:
    x: str
    y: str
    path: str

    @property
    def untracked(self) -> bool:
        return self.x == "?"

    @property
    def staged(self) -> bool:
        return self.x not in (" ", "?", "!")

    @property
    def unmerged(self) -> bool:
        return "U" in (self.x, self.y) or self.x + self.y in ("AA", "DD")


def _parse_status(out: bytes) -> list[StatusEntry]:
    """`git status --porcelain=v1 -z` output as entries (a rename's source becomes its own entry)."""
    fields = out.split(b"\0")
    entries: list[StatusEntry] = []
    i = 0
    while i < len(fields):
        raw = fields[i]
        i += 1
        if len(raw) < 4:
            continue
        x, y = chr(raw[0]), chr(raw[1])
        entries.append(StatusEntry(x, y, os.fsdecode(raw[3:])))
        if x in "RC" or y in "RC":
            if i < len(fields) and fields[i]:
                entries.append(StatusEntry(x, y, os.fsdecode(fields[i])))
            i += 1
    return entries


def under_dot_dir(path: str) -> bool:
    return dot_folder(path) is not None


def dot_folder(path: str) -> str | None:
    """The first dot folder on `path`'s way, with its parents (`docs/.obsidian/`), or None when there is none."""
    parts = path.split("/")[:-1]
    for i, part in enumerate(parts):
        if part.startswith("."):
            return "/".join(parts[: i + 1]) + "/"
    return None


def in_obsidian_settings(path: str) -> bool:
    """Whether `path` lies in a vault's Obsidian settings folder: the top-level `.obsidian/` or one of a vault
    nested in a folder (`docs/.obsidian/`, as a repository holding several vaults has them)."""
    folder = dot_folder(path)
    return folder is not None and folder.rstrip("/").rsplit("/", 1)[-1] == ".obsidian"


def is_scratch(path: str, extra: SyncToolPatterns | None = None) -> bool:
    """Editor swap/backup files, sync-client temp files and placeholders (engine/synctools.py, and the
    contract's `extra` patterns) and OS clutter: never committed when untracked."""
    name = path.rsplit("/", 1)[-1]
    return (
        bool(_VIM_SWAP_RE.search(name))
        or name.endswith("~")
        or name.startswith(".#")
        or name == "4913"
        or name in (".DS_Store", "Thumbs.db", "desktop.ini")
        or name.startswith("._")
        or (name.startswith(".~lock.") and name.endswith("#"))
        or path.startswith(".tmp.driveupload/")
        or "/.tmp.driveupload/" in path
        or (name.startswith(".") and name.endswith(".capture-tmp"))  # agentmd's own, mid-capture or crashed
        or is_sync_temp(path, extra)
    )


def read_status(
    git: GitCli,
    index: Path | None = None,
    *,
    optional_locks: bool = True,
    extra: SyncToolPatterns | None = None,
) -> list[StatusEntry]:
    """What git reports dirty, less the notes a placeholder stands for (iCloud's, or the contract's `extra`
    placeholder patterns): "not here" is no deletion to commit."""
    run = git.run(
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--no-renames",
        "--ignore-submodules=none",
        index=index,
        optional_locks=optional_locks,
    )
    if run.code != 0:
        raise CycleFailure(f"`git status` failed: {run.why()}")
    return [e for e in _parse_status(run.out) if not evicted(git.vault, e, extra)]


def evicted(vault: Path, entry: StatusEntry, extra: SyncToolPatterns | None = None) -> bool:
    """Whether a tracked file missing from the worktree was evicted by iCloud (or a tool of the contract's
    `extra` placeholder patterns), not deleted: its placeholder (`.Note.md.icloud`) lies beside it. Such a file
    is no change to commit; the file comes back when it is opened."""
    if not (entry.x == " " and entry.y == "D"):
        return False
    if os.path.lexists(vault / placeholder_of(entry.path)):
        return True
    if extra is None or not extra.placeholder:
        return False
    folder, _, name = entry.path.rpartition("/")
    try:
        names = os.listdir(vault / folder if folder else vault)
    except OSError:
        return False
    return any(extra.placeholder_original(n) == name for n in names)


def large_files(vault: Path, paths: Iterable[str], limit: int) -> list[str]:
    """A warning for each of `paths` (vault-relative, just committed) larger than `limit` bytes."""
    found = []
    for path in paths:
        with contextlib.suppress(OSError):
            size = os.lstat(vault / path).st_size
            if size > limit:
                found.append(
                    f"committed a large file: {printable(path)} ({size} bytes, {size / 2**20:.1f} MiB); "
                    "big attachments bloat the vault's history, consider keeping them outside the vault"
                )
    return found
