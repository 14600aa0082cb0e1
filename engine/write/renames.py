"""Following a note that was renamed while a capture looked at it.

A person renames a note in Obsidian while an agent captures the same fact again: the file keeps its inode
and, for a rename in place, its folder. The catalog learns of the new name only when the watcher's event
is processed, a few milliseconds to a pass later. So where the catalog (or an earlier look) names a path
that is gone, the note is looked for by its inode in that path's folder: one directory listing and a stat
a name, done only when a path has just gone missing.
"""

from __future__ import annotations

import os
import stat

from agentmd.engine.fsutil import open_dir_at


def inode_of(root_fd: int, path: str) -> int | None:
    """The inode of the regular file at vault-relative `path`, or None when there is none."""
    try:
        st = os.stat(path, dir_fd=root_fd, follow_symlinks=False)
    except OSError:
        return None
    return st.st_ino if stat.S_ISREG(st.st_mode) else None


def find_by_inode(root_fd: int, path: str, inode: int | None) -> str | None:
    """Where the note once at `path` is now, when it was renamed within its folder: the `.md` file of that
    folder with the same inode; None when there is none (deleted, or moved to another folder)."""
    if not inode:
        return None
    folder, _, _name = path.rpartition("/")
    try:
        dfd = open_dir_at(root_fd, folder) if folder else os.dup(root_fd)
    except OSError:
        return None
    try:
        for name in os.listdir(dfd):
            if not name.endswith(".md"):
                continue
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except OSError:
                continue
            if st.st_ino == inode and stat.S_ISREG(st.st_mode):
                return f"{folder}/{name}" if folder else name
    except OSError:
        return None
    finally:
        os.close(dfd)
    return None
