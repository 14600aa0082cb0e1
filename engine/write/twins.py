"""The twin check: a capture whose note (the same title, the same body text) is already in the vault is
answered with that note instead of writing a twin (engine/write/capture.py, step 6).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from agentmd.engine.fsutil import open_dir_at, read_regular
from agentmd.engine.index.store import Store
from agentmd.engine.write.group import GroupIndexer
from agentmd.engine.write.renames import find_by_inode
from agentmd.engine.write.request import MAX_BODY_BYTES
from agentmd.vault_schema import Note, parse_note


def find_twin(
    root_fd: int,
    folder: str,
    stem: str,
    title: str,
    body: str,
    exclude: Callable[[str], bool] | None,
    store: Store | None,
    group: GroupIndexer,
) -> str | None:
    """An existing note with the same title and the same body text, if any.

    The folder the capture would be written to is looked at first, on disk: a capture of the same title
    lands there as `<stem>.md` or `<stem>-N.md`, so a retry finds the note its first attempt wrote even
    when the index has not caught up (a daemon restarted and still on its first pass, an index update
    that failed). Then the catalog, for a twin filed elsewhere since.

    On disk, `write_new` (engine/write/landing.py) gives a note the first of those names that is free, so
    once the index is open the names are tried in that order up to the first one missing: a stat each, where
    listing a folder of thousands of notes cost milliseconds of every capture. A note named past a gap (a
    lower-numbered one deleted since) is found through the catalog or the notes waiting for their batch.
    Before the first pass has opened the index (`store` None) neither can vouch for what an earlier run
    wrote, and the whole folder is listed.
    """
    want = body.strip()
    for path in same_stem(root_fd, folder, stem, whole=store is None):
        if exclude is not None and exclude(path):
            continue
        if _same_note(path, read_note(path, root_fd), title, want):
            return path
    # notes written a moment ago and still waiting for their index update, then the catalog (in that
    # order: a note leaves the pending list only once the catalog holds it)
    waiting = [t.path for t in group.pending(title)]
    indexed = store.catalog.paths_with_title(title) if store is not None else []
    for path in dict.fromkeys(waiting + indexed):
        if exclude is not None and exclude(path):
            continue
        data = read_note(path, root_fd)
        if data is None and store is not None:  # gone from where the catalog saw it: renamed just now?
            row = store.catalog.get(path)
            moved = find_by_inode(root_fd, path, row.stat[3] if row is not None else None)
            if moved is not None and not (exclude is not None and exclude(moved)):
                path, data = moved, read_note(moved, root_fd)
        note = _parse(path, data)
        if note is not None and note.text.strip() == want:
            return path
    return None


def same_stem(root_fd: int, folder: str, stem: str, *, whole: bool = True) -> list[str]:
    """The notes in `folder` named as `write_new` names a note of this stem: with `whole` every such name
    the folder holds, else those from `<stem>.md` on up to the first name missing (see `find_twin`)."""
    try:
        dfd = open_dir_at(root_fd, folder)
    except OSError:
        return []
    try:
        if whole:
            names = os.listdir(dfd)
            # a folder of thousands of notes holds only a few names starting with the stem; no pattern is
            # built per capture (a compiled pattern per title is more than the rest of the twin check)
            candidates = sorted(n for n in names if n.startswith(stem) and _stem_suffix(n[len(stem) :]))
        else:
            candidates = _taken_names(dfd, stem)
    except OSError:
        return []
    finally:
        os.close(dfd)
    prefix = folder.strip("/")
    return [f"{prefix}/{n}" if prefix else n for n in candidates]


def read_note(path: str, root_fd: int) -> bytes | None:
    try:
        return read_regular(path, dir_fd=root_fd, limit=4 * MAX_BODY_BYTES)
    except OSError:
        return None


def _taken_names(dfd: int, stem: str) -> list[str]:
    """`<stem>.md`, `<stem>-2.md`, ... in the open folder `dfd`, in `write_new`'s order, up to the first name
    that is free (anything there, a folder too, keeps the name taken, as it keeps `write_new` from it)."""
    taken = []
    for n in range(1, 1000):
        name = f"{stem}.md" if n == 1 else f"{stem}-{n}.md"
        try:
            os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            break
        taken.append(name)
    return taken


def _stem_suffix(rest: str) -> bool:
    """Whether what follows a stem in a file name is one `write_new` gives: `.md` or `-N.md` (N digits)."""
    if rest == ".md":
        return True
    number = rest.removeprefix("-").removesuffix(".md")
    return len(number) == len(rest) - 4 and number.isascii() and number.isdigit()


def _parse(path: str, data: bytes | None) -> Note | None:
    return None if data is None else parse_note(path, data, 0)


def _same_note(path: str, data: bytes | None, title: str, body: str) -> bool:
    """Whether the bytes are a note with this title and this body text (stripped)."""
    note = _parse(path, data)
    return note is not None and note.title == title and note.text.strip() == body
