"""What file-sync tools leave in a vault, read from a vault-relative POSIX path alone.

Vaults kept in Syncthing, Dropbox, Google Drive for Desktop, OneDrive, iCloud Drive, Nextcloud or Obsidian Sync
folders hold three kinds of files that are not the owner's notes:

Temp files and placeholders (`is_sync_temp`), never indexed and never committed:

    .syncthing.Note.md.tmp, ~syncthing~Note.md.tmp    Syncthing, mid-download
    .stfolder, .stversions/...                        Syncthing's folder marker and its old versions
    .dropbox, .dropbox.attr, .dropbox.cache/...       Dropbox's folder marker and cache
    .tmp.drivedownload/..., .tmp.driveupload/...      Google Drive, mid-transfer
    *.tmp, ~*.tmp                                     temp files (Google Drive, OneDrive, Office)
    ~$Report.md, .~Note.md                            owner and lock files (Office, OneDrive, Dropbox)
    .Note.md.~1a2b3c                                  Nextcloud / ownCloud, mid-download
    .sync_*.db, ._sync_*.db                           Nextcloud / ownCloud's journal
    *.!sync                                           Resilio Sync, mid-download
    .Note.md.icloud                                   iCloud: Note.md evicted from this device

A placeholder means its note is "not here" (iCloud evicted it to save space), never that it was deleted:
`evicted_note` names the note a placeholder stands for and `placeholder_of` the placeholder beside a note.

Conflict copies (`conflict_copy`), which a sync tool writes beside a file two devices changed at once. They
are the owner's files, kept and committed, but not indexed as notes; status names them with their original:

    Note.sync-conflict-20261204-101500-ABCDEF7.md     Syncthing
    Note (conflicted copy 2026-12-04).md              Dropbox (also "Note (Ann's conflicted copy 2026-12-04).md")
    Note (conflicted copy 2026-12-04 101500).md       Nextcloud
    Note_conflict-20261204-101500.md                  ownCloud / older Nextcloud
    Note (Conflicted copy Laptop 202612041015).md     Obsidian Sync
    Note (... conflicted copy ...).md                 any other tool that names its copies so
    Note (1).md                                       Google Drive      } only when Note.md exists beside
    Note-DESKTOP-ABC123.md                            OneDrive          } the copy and the two read as
    Note 2.md                                         iCloud            } versions of one note
                                                                        } (`versions_of_one_note`):
                                                                        } `Chapter (1).md`, `Meeting 2.md`
                                                                        } or `Q4-2026.md` alone are notes
The OneDrive shape takes a Windows computer name: 1-15 upper-case letters, digits and hyphens, one letter at
least (so `Plan-2026.md` beside `Plan.md` is not a copy).

A new tool is one more entry in `CONFLICT_SHAPES` (a copy's name must still pass `may_be_copy`, which the
reconcile walk runs inline on every note) or in `_TEMP_NAME` / `TEMP_FOLDERS`. A vault's owner adds patterns
without a release in the storage-rules contract (`sync_tool_patterns`, rules/contract/synctool.py): the
functions here take them as `extra`, and the reconcile walk, the watcher and the committer pass the
contract's. Standard library only at run time: the watcher, the committer and the reconcile walk import it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentmd.rules.contract.synctool import SyncToolPatterns

EXTRA_TOOL = "file-sync tool (sync_tool_patterns)"  # the tool a copy found by a contract pattern is named by

# Folders a sync tool keeps for itself; every path under one is its, never the owner's.
TEMP_FOLDERS = frozenset(
    {".stfolder", ".stversions", ".dropbox.cache", ".tmp.drivedownload", ".tmp.driveupload", ".sync"}
)

_TEMP_NAME = re.compile(
    r"""
      ^\.syncthing\..+\.tmp$           # Syncthing (Unix)
    | ^~syncthing~.+\.tmp$             # Syncthing (Windows)
    | \.tmp$                           # Google Drive, OneDrive, Office temp files
    | ^~\$                             # Office / OneDrive owner files
    | ^\.~                             # lock and temp files (.~Note.md, .~lock.Note.md#)
    | ^\..+\.~[0-9a-f]+$               # Nextcloud / ownCloud mid-download
    | ^\._?sync_[0-9a-f]*\.db          # Nextcloud / ownCloud journal (.sync_x.db, ._sync_x.db, -wal, -shm)
    | \.!sync$                         # Resilio Sync mid-download
    | ^\..+\.icloud$                   # iCloud placeholder of an evicted file
    | ^\.(?:stfolder|dropbox|dropbox\.attr)$
    | ^Icon\r$                         # a folder's custom icon (macOS; Dropbox syncs it)
    """,
    re.IGNORECASE | re.VERBOSE,
)

_ICLOUD = ".icloud"


def is_sync_temp(rel: str, extra: SyncToolPatterns | None = None) -> bool:
    """True for a sync tool's temp file, placeholder or own folder (see the module's table, and the contract's
    `extra` temp and placeholder patterns): never a note."""
    parts = rel.split("/")
    if any(p in TEMP_FOLDERS for p in parts[:-1]):
        return True
    name = parts[-1]
    if name in TEMP_FOLDERS or _TEMP_NAME.search(name):
        return True
    if not extra:
        return False
    return extra.is_temp(rel) or extra.placeholder_original(name) is not None


def evicted_note(rel: str, extra: SyncToolPatterns | None = None) -> str | None:
    """The path a placeholder stands for (iCloud's `notes/.Note.md.icloud` -> `notes/Note.md`, or by one of the
    contract's `extra` placeholder patterns), else None."""
    folder, _, name = rel.rpartition("/")
    if name.startswith(".") and name.endswith(_ICLOUD) and len(name) > len(_ICLOUD) + 1:
        original: str | None = name[1 : -len(_ICLOUD)]
    else:
        original = extra.placeholder_original(name) if extra else None
    if not original:
        return None
    return f"{folder}/{original}" if folder else original


def placeholder_of(rel: str) -> str:
    """The iCloud placeholder's path for a file (`notes/Note.md` -> `notes/.Note.md.icloud`)."""
    folder, _, name = rel.rpartition("/")
    return f"{folder}/.{name}{_ICLOUD}" if folder else f".{name}{_ICLOUD}"


@dataclass(frozen=True)
class ConflictShape:
    """How one tool names a conflict copy.

    An unambiguous shape has a `marker`, a piece of every such name (lower case), and a `pattern` matching
    the whole name, whose groups `stem` and `ext` make the original's name. An ambiguous shape (also an honest
    name: `Meeting 2.md`) is a copy only when its original exists beside it: its suffix starts with `sep`
    and ends in one of `ends`, and `pattern` matches the suffix (the name between the original's stem and the
    extension), `longest` characters at most. Every marker holds "conflict"."""

    tool: str
    pattern: re.Pattern[str]
    marker: str = ""
    sep: str = ""
    ends: str = ""
    longest: int = 0  # the longest suffix the ambiguous pattern matches


_EXT = r"(?P<ext>\.[^./]+)?"
_DIGITS = "0123456789"
_CAPITALS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

CONFLICT_SHAPES: tuple[ConflictShape, ...] = (
    ConflictShape(
        "Syncthing", re.compile(r"(?P<stem>.+)\.sync-conflict-\d{8}-\d{6}-[A-Z0-9]{7}" + _EXT), ".sync-conflict-"
    ),
    ConflictShape(
        "Dropbox",
        re.compile(r"(?P<stem>.+?) \((?:[^()]+['’]s )?(?i:conflicted copy) \d{4}-\d\d-\d\d(?: \(\d+\))?\)" + _EXT),
        "conflicted copy",
    ),
    ConflictShape(
        "Nextcloud",
        re.compile(r"(?P<stem>.+?) \((?i:conflicted copy) (?:[^()]+ )?\d{4}-\d\d-\d\d \d{6}\)" + _EXT),
        "conflicted copy",
    ),
    ConflictShape("ownCloud", re.compile(r"(?P<stem>.+)_conflict-\d{8}-\d{6}" + _EXT), "_conflict-"),
    ConflictShape(
        "Obsidian Sync",
        re.compile(r"(?P<stem>.+?) \((?i:conflicted copy) [^()]+ \d{12,14}\)" + _EXT),
        "conflicted copy",
    ),
    ConflictShape(
        "file-sync tool", re.compile(r"(?P<stem>.+?) \([^()]*(?i:conflicted copy)[^()]*\)" + _EXT), "conflicted copy"
    ),
    ConflictShape("Google Drive", re.compile(r" \(\d{1,3}\)"), sep=" (", ends=")", longest=6),
    ConflictShape("iCloud", re.compile(r" (?:[2-9]|[1-9]\d{1,2})"), sep=" ", ends=_DIGITS, longest=4),
    # a Windows computer name: 1-15 capitals, digits and hyphens, a capital at least
    ConflictShape(
        "OneDrive",
        re.compile(r"-(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{0,14}"),
        sep="-",
        ends=_DIGITS + _CAPITALS,
        longest=16,
    ),
)


def may_be_copy(name: str) -> bool:
    """False for a file name no shape can match, which is most names (a walk asks for every note): the names of
    the unambiguous copies hold "onflict"; an ambiguous copy's name ends, before its extension, in ")" (Google
    Drive), a space and digits (iCloud) or a computer name of capitals, digits and hyphens (OneDrive): without
    its trailing digits and hyphens, in ")", " " or a capital."""
    if "onflict" in name:
        return True
    dot = name.rfind(".")
    base = name[:dot] if dot > 0 else name
    end = base.rstrip("0123456789-")[-1:]
    return end == ")" or end == " " or "A" <= end <= "Z"


_MARKED = tuple(shape for shape in CONFLICT_SHAPES if shape.marker)
_BY_END: dict[str, tuple[ConflictShape, ...]] = {}  # the ambiguous shapes, by the last character of their suffix
for _shape in CONFLICT_SHAPES:
    for _end in _shape.ends:
        _BY_END[_end] = (*_BY_END.get(_end, ()), _shape)

_AMBIGUOUS_TOOLS = frozenset(shape.tool for shape in CONFLICT_SHAPES if not shape.marker)

CONFLICT_COPY = "conflict-copy: "  # how a pass report's reason for a conflict copy starts


@dataclass(frozen=True)
class ConflictCopy:
    original: str  # vault-relative path of the file it is a copy of
    tool: str

    @property
    def reason(self) -> str:
        """How a pass report and status name it."""
        return f"{CONFLICT_COPY}{self.tool} copy of {self.original}"


def conflict_copy(
    rel: str, exists: Callable[[str], bool] | None = None, extra: SyncToolPatterns | None = None
) -> ConflictCopy | None:
    """The copy's original and tool when `rel` is a sync tool's conflict copy, else None. `exists(path)` says
    whether a vault-relative path exists; without it, only the unambiguous shapes are recognised. `extra`: the
    contract's conflict patterns, tried after the unambiguous shapes."""
    folder, _, name = rel.rpartition("/")
    prefix = f"{folder}/" if folder else ""
    dot = name.rfind(".")
    base, ext = (name[:dot], name[dot:]) if dot > 0 else (name, "")
    if "onflict" in name:
        low = name.lower()
        for shape in _MARKED:
            if shape.marker in low and (m := shape.pattern.fullmatch(name)) is not None:
                return ConflictCopy(prefix + m["stem"] + (m["ext"] or ""), shape.tool)
    if extra and (original := extra.conflict_original(name)) is not None and original != name:
        return ConflictCopy(prefix + original, EXTRA_TOOL)
    if exists is None or not base:
        return None
    for shape in _BY_END.get(base[-1], ()):
        at = base.rfind(shape.sep)
        start = len(base) - shape.longest
        while at > 0 and at >= start:  # every split: the original's own name may hold the separator
            if exists(original := prefix + base[:at] + ext) and shape.pattern.fullmatch(base, at) is not None:
                return ConflictCopy(original, shape.tool)
            at = base.rfind(shape.sep, 0, at)
    return None


COPY_READ_BYTES = 256 * 1024  # how much of each file `versions_of_one_note` compares


def ambiguous_copy(rel: str, exists: Callable[[str], bool], read: Callable[[str], bytes | None]) -> ConflictCopy | None:
    """A Google Drive, iCloud or OneDrive conflict copy (`Note (1).md`, `Note 2.md`, `Note-PC.md`): named as
    one beside its original and reading as a version of it. `read(path)` gives a vault-relative file's first
    `COPY_READ_BYTES` (None when it cannot be read)."""
    found = conflict_copy(rel, exists)
    if found is None:
        return None
    if found.tool not in _AMBIGUOUS_TOOLS:
        return found
    original, copy = read(found.original), read(rel)
    if original is None or copy is None or not versions_of_one_note(original, copy):
        return None
    return found


COPY_SHARED_LINES = 0.5  # the share of the shorter file's lines the other holds, for two versions of one note


def versions_of_one_note(a: bytes, b: bytes) -> bool:
    """Whether two files read as two versions of one note, as a sync tool's conflict copy and its original do:
    at least half the distinct non-blank lines of the shorter are in the other (frontmatter included, which
    two versions share). A note a person named `Meeting 2.md` beside `Meeting.md` shares next to nothing with
    it (bench/copy_lookalikes.py, bench/RESULTS.md)."""
    left, right = distinct_lines(a), distinct_lines(b)
    if not left or not right:
        return left == right
    shared = len(left & right)
    return shared >= COPY_SHARED_LINES * min(len(left), len(right))


def distinct_lines(data: bytes) -> set[bytes]:
    return {line.strip() for line in data.splitlines() if line.strip()}
