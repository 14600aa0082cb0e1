"""A capture's folder as the vault already spells it.

The contract routes a capture to `memory/lessons`; a vault made on a Mac or on Windows may already hold
`Memory/Lessons/`. Those file systems take both names for one folder, and a second folder differing only in
case would be the same path there once the vault is synced to one, so each segment of the folder is matched
against the folders that exist, ignoring case: the exact name when it exists, else the one folder of that
name in another casing. When two or more siblings differ only in case (a vault synced from a case-sensitive
file system), the exact one is taken, else the first in sorted order, and the capture's answer says so.

Each folder's listing is kept by its identity and modification time (an entry added or removed changes
it), so a capture lists a folder again only after it changed: a vault root of thousands of notes is not
listed on every capture.
"""

from __future__ import annotations

import errno
import os
import threading
import unicodedata
from typing import NamedTuple

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
KEPT = 512  # folder listings kept; past this the cache starts again


def fold(name: str) -> str:
    """How a case-insensitive file system compares names: case folded, composed the same way."""
    return unicodedata.normalize("NFC", name).casefold()


class Resolved(NamedTuple):
    folder: str  # the folder to write into, each existing segment as the vault spells it
    warnings: list[str]  # siblings differing only in case, for the capture's answer


class FolderCase:
    """Resolves folders against the vault's existing ones, ignoring case (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listings: dict[tuple[int, int, int], dict[str, list[str]]] = {}

    def resolve(self, root_fd: int, folder: str) -> Resolved:
        parts = [p for p in folder.replace("\\", "/").split("/") if p]
        out: list[str] = []
        warnings: list[str] = []
        fd = os.dup(root_fd)
        try:
            for i, part in enumerate(parts):
                if part in (".", ".."):
                    return Resolved(folder, [])  # not a plain folder: the write refuses it as it is
                same = self._folders(fd).get(fold(part), [])
                chosen = part if part in same or not same else same[0]
                if len(same) > 1:
                    where = "/".join(out) or "the vault's top"
                    others = ", ".join(n for n in same if n != chosen)
                    warnings.append(
                        f"{where} holds folders differing only in case ({chosen}, {others}); the note went into "
                        f"{chosen}: merge them into one, since macOS and Windows see a single folder"
                    )
                out.append(chosen)
                if chosen not in same:  # a new folder from here on: the rest is new too
                    out += parts[i + 1 :]
                    break
                try:
                    nxt = os.open(chosen, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno not in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
                        raise
                    out += parts[i + 1 :]  # gone or swapped meanwhile: the write itself decides
                    break
                os.close(fd)
                fd = nxt
        finally:
            os.close(fd)
        return Resolved("/".join(out), warnings)

    def _folders(self, fd: int) -> dict[str, list[str]]:
        """The folders in the open folder `fd`, by folded name, each list sorted."""
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino, st.st_mtime_ns)
        with self._lock:
            found = self._listings.get(key)
        if found is not None:
            return found
        by_fold: dict[str, list[str]] = {}
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                            by_fold.setdefault(fold(entry.name), []).append(entry.name)
                    except OSError:
                        continue
        except OSError:
            return {}  # unreadable: the names are taken as given, and the write says what is wrong
        for names in by_fold.values():
            names.sort()
        with self._lock:
            if len(self._listings) >= KEPT:
                self._listings.clear()
            self._listings[key] = by_fold
        return by_fold
