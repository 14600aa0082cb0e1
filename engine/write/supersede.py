"""A capture that corrects or replaces an earlier note (`supersedes`): the earlier note is walled, not deleted.

The capture names the note it replaces by its path or its exact title. Before anything is written the name is
resolved to one note of the vault and the door is asked whether the same actor may edit it, so a bad name or a
note the actor may not touch refuses the capture with nothing written. Once the new note is on disk the
earlier one gains `lifecycle: superseded`, `superseded_by` naming the new note, `retired_reason` and
`retired_at`: it stays in the vault and in git and leaves search and recall like any superseded note (include
archived notes to see it), and the new note carries `supersedes` naming it. Both are indexed in the capture's
own update and committed with its origin, so `agentmd undo` takes the pair back.

The earlier note is rewritten in place, atomically (a temp file in its folder, then a rename over it), its
folder opened from the vault root one component at a time without following links. It is left as it is when
its text changed since it was resolved (a person editing it meanwhile) or it already names the new note; a
failure here is a warning on the capture's reply, never an error, since the new note is already written.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agentmd.engine.fsutil import open_dir_at
from agentmd.engine.index.store import Store
from agentmd.engine.write.request import CaptureRefused
from agentmd.engine.write.tempfiles import temp_name
from agentmd.rules.contract import Contract
from agentmd.rules.door import decide
from agentmd.vault_schema import update_frontmatter
from agentmd.vocabulary import STOP_WORDS

MAX_NOTE_BYTES = 16 * 1024 * 1024  # a larger file is no note a capture replaces
# A note the new one's title finds at this confidence or more (the title's words, weighted by rarity, nearly all in
# it) is named in the capture's answer as a note on the same subject (bench/RESULTS.md, "notes on the same subject")
SAME_SUBJECT = 0.9
SAME_TITLE = 0.5  # ... and whose title shares this share of the smaller title's words (two at least)


@dataclass(frozen=True, slots=True)
class Replaced:
    """The note a capture replaces, as it was read when the capture resolved it."""

    path: str
    title: str
    text: str


def resolve(root_fd: int, vault: Path, store: Store | None, name: str, contract: Contract, actor: str) -> Replaced:
    """The one note `name` (a vault path, a `[[link]]` or an exact title) names, which `actor` may edit, read
    through the vault root's descriptor `root_fd`; a refusal saying what to give instead."""
    wanted = name.strip().removeprefix("[[").removesuffix("]]").split("|", 1)[0].strip()
    path = _as_path(wanted)
    candidates: list[str] = []
    if path is not None and (vault / path).is_file():
        candidates = [path]
    elif store is not None:
        candidates = sorted(store.catalog.paths_with_title(wanted))
    if not candidates:
        raise CaptureRefused(
            "supersedes-unknown",
            f"`supersedes` names no note of the vault: {name!r}; give the path or the exact title of the note this "
            "one replaces (a search shows both); nothing was written",
        )
    if len(candidates) > 1:
        shown = ", ".join(candidates[:5])
        raise CaptureRefused(
            "supersedes-ambiguous",
            f"{len(candidates)} notes are titled {wanted!r} ({shown}); give the path of the one this note replaces "
            "in `supersedes`; nothing was written",
        )
    (found,) = candidates
    decision = decide(vault, found, contract, actor=actor, creating=False)
    if not decision.allowed:
        raise CaptureRefused(
            decision.rule, f"the door refused marking {found} superseded: {decision.reason}; nothing was written"
        )
    try:
        text = _read_at(root_fd, found)
    except (OSError, UnicodeDecodeError) as exc:
        raise CaptureRefused(
            "supersedes-unreadable", f"{found} could not be read ({exc}); nothing was written"
        ) from None
    title = store.catalog.get(found) if store is not None else None
    return Replaced(found, title.title if title is not None else PurePosixPath(found).stem, text)


def mark(root_fd: int, replaced: Replaced, by: str, now: dt.datetime) -> str | None:
    """Wall `replaced` as superseded by the note at `by`; None when done, else why it was left as it is."""
    updates = {
        "lifecycle": "superseded",
        "superseded_by": by,
        "retired_reason": f"superseded by {by}, captured as its correction",
        "retired_at": now.isoformat(timespec="seconds"),
    }
    folder, name = str(PurePosixPath(replaced.path).parent), PurePosixPath(replaced.path).name
    dfd = open_dir_at(root_fd, folder)
    try:
        current = _read(dfd, name)
        if current != replaced.text:
            return f"{replaced.path} changed while this note was written, so it was not marked superseded"
        tmp = temp_name(name.removesuffix(".md"))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dfd)
        try:
            try:
                os.write(fd, update_frontmatter(current, updates).encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dfd)
        os.fsync(dfd)
        return None
    finally:
        os.close(dfd)


def _as_path(name: str) -> str | None:
    """`name` as a vault-relative note path when it reads as one (ends in `.md`, stays inside the vault)."""
    if not name.lower().endswith(".md"):
        return None
    parts = PurePosixPath(name.removeprefix("./")).parts
    if not parts or name.startswith("/") or ".." in parts:
        return None
    return "/".join(parts)


def _read_at(root_fd: int, path: str) -> str:
    dfd = open_dir_at(root_fd, str(PurePosixPath(path).parent))
    try:
        return _read(dfd, PurePosixPath(path).name)
    finally:
        os.close(dfd)


def _read(dfd: int, name: str) -> str:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dfd)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_NOTE_BYTES + 1)
    if len(data) > MAX_NOTE_BYTES:
        raise OSError(f"larger than {MAX_NOTE_BYTES // (1024 * 1024)} MiB")
    return data.decode("utf-8")


def same_subject(store: Store, contract: Contract, title: str, path: str) -> list[str]:
    """The notes (at most two, besides `path`) that a search for `title` finds at SAME_SUBJECT or more: what a
    capture's answer names, so an agent restating or correcting one of them can say so (`supersedes`) instead of
    leaving two live notes that disagree. Walled and self-probe notes are left out, as search leaves them out."""
    from agentmd.engine.search.query import search
    from agentmd.engine.search.searcher import SearchRequest

    words = _subject_words(title)
    if len(words) < 2:  # a one-word subject ("After the contract") is shared by too many notes to name them
        return []
    found = search(store.index, contract, SearchRequest(query=title, limit=3), store.catalog, floor=SAME_SUBJECT)
    out = []
    for r in found.results:
        theirs = _subject_words(r.title or PurePosixPath(r.note).stem)
        shared = len(words & theirs)
        if (
            r.note != path
            and (r.confidence or 0.0) >= SAME_SUBJECT
            and shared >= 2
            and shared >= SAME_TITLE * min(len(words), len(theirs))
        ):
            out.append(r.note)
    return out[:2]


def _subject_words(title: str) -> set[str]:
    return {w for w in re.findall(r"\w+", title.casefold()) if len(w) > 2 and w not in STOP_WORDS}
