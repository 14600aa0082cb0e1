"""The vault's identity, checked before every write: a write goes into the vault that was opened, or nowhere.

A drive that is unmounted leaves its mount point behind as an empty folder with the same path; a vault folder
deleted and made again (a sync client, a restore) is also a different folder with the same name. A writer
that goes by the path alone would write the next capture into that empty folder and index it, while the
real vault (and its git history) is somewhere else.

So the identity of the vault is recorded once: the (st_dev, st_ino) of the root folder, and of its `.git`
folder when it has one (the marker: a folder made again by `mkdir` can get the same inode number back on some
file systems, but it does not come with the repository). Every write opens the root afresh and compares. A
vault that had no `.git` when recorded adopts the one that appears later (the committer makes it on the
first start); a vault whose `.git` disappears or changes is refused.

`problem()` says what is wrong (None when the vault is the one recorded), for status to show red.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from agentmd.engine.errors import AgentmdError

_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
MARKER = ".git"

Key = tuple[int, int]


class VaultReplaced(AgentmdError):
    """The folder at the vault's path is not the vault that was opened (unmounted, emptied or replaced)."""


class VaultIdentity:
    """The recorded identity of one vault folder and the check every write makes against it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._root_key: Key | None = None
        self._marker: Key | None = None
        with contextlib.suppress(OSError):
            fd = os.open(root, _ROOT_FLAGS)
            try:
                self._root_key = _key(os.fstat(fd))
                self._marker = _marker(fd)
            finally:
                os.close(fd)

    def _verify(self, fd: int) -> str | None:
        """What is wrong with the folder open at `fd`, or None. Records the identity on first sight."""
        key = _key(os.fstat(fd))
        marker = _marker(fd)
        with self._lock:
            if self._root_key is None:  # the folder did not exist when the vault was opened: this is it
                self._root_key, self._marker = key, marker
                return None
            if key != self._root_key:
                return (
                    f"the folder at {self.root} is no longer the vault that was opened (a different folder or "
                    "drive: unmounted, or deleted and made again); nothing is written until the vault is back "
                    "or the daemon is restarted on the new folder"
                )
            if self._marker is None:
                self._marker = marker  # the repository was made after the vault was opened
                return None
            if marker != self._marker:
                what = "is missing" if marker is None else "is a different repository"
                return (
                    f"the vault's {MARKER} folder {what} (the vault folder was emptied or replaced); nothing "
                    "is written until the vault is back or the daemon is restarted on the new folder"
                )
        return None

    @contextlib.contextmanager
    def open_root(self) -> Iterator[int]:
        """A descriptor of the vault root, checked to be the vault recorded. Raises `VaultReplaced` if it is not,
        OSError when the root cannot be opened at all."""
        try:
            fd = os.open(self.root, _ROOT_FLAGS)
        except FileNotFoundError:
            raise VaultReplaced(f"the vault folder {self.root} is missing (unmounted or deleted)") from None
        try:
            problem = self._verify(fd)
            if problem:
                raise VaultReplaced(problem)
            yield fd
        finally:
            os.close(fd)

    def problem(self) -> str | None:
        """None when the folder at the vault's path is the vault recorded, else what is wrong with it."""
        try:
            with self.open_root():
                return None
        except VaultReplaced as exc:
            return str(exc)
        except OSError as exc:
            return f"the vault folder {self.root} cannot be opened: {exc.strerror or exc}"


def _key(st: os.stat_result) -> Key:
    return (st.st_dev, st.st_ino)


def _marker(root_fd: int) -> Key | None:
    try:
        return _key(os.stat(MARKER, dir_fd=root_fd, follow_symlinks=False))
    except OSError:
        return None
