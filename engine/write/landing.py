"""A new note's landing on disk: written atomically under a name that must not exist, never overwriting.

The folder is opened one component at a time without following links and every step is relative to its
descriptor (temp file, fsync, hard link to a free name, fsync the folder), so a folder swapped for a link
cannot redirect the write and a name collision gets a suffix (engine/write/capture.py, step 8).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable

from agentmd.engine.failpoints import failpoint
from agentmd.engine.fsutil import open_dir_at
from agentmd.engine.write.request import CaptureRefused
from agentmd.engine.write.tempfiles import SCRATCH_DIR, temp_name

# the capture path's fault points (engine/failpoints.py): `AGENTMD_CRASH_POINT=<name>` kills the process there
CRASH_POINTS = ("after-temp-write", "after-link", "after-index")


def write_new(
    root_fd: int,
    folder: str,
    stem: str,
    text: str,
    on_link: Callable[[str], object] | None = None,
    hold: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
    claim: Callable[[str], object] | None = None,
    unclaim: Callable[[str], object] | None = None,
) -> str:
    """Write `text` to `<folder>/<stem>.md`, or `<stem>-2.md`, `-3`… when taken. Never overwrites. Returns
    the vault-relative path written. `on_link(path)` runs the moment the note has its name, inside `hold()`
    with the link itself, so whoever `hold` keeps out sees the note either not there or already announced.
    `claim(path)` runs before the link, for a name found free (the writer registers its origin under the name
    the note will have, never under a taken one); `unclaim(path)` when the name was taken meanwhile.

    The folder is opened from the vault root's descriptor one component at a time without following a link
    (`open_dir_at`), and every step after that is relative to the folder's descriptor: a folder swapped for
    a symbolic link meanwhile cannot redirect the write out of the vault. The bytes go to a hidden temp file
    first (fsynced), which is then hard-linked to the final name: the link fails if the name exists, so the
    check and the creation are one atomic step.

    The temp file is written in the vault's scratch folder (`tempfiles.SCRATCH_DIR`, opened the same way), a
    hidden folder at the top that no watch covers: its creation, write, close and removal would otherwise be
    four file events for the daemon's watcher to read and drop for every capture, beside the one event of
    the note itself. Where the scratch folder cannot be had, or is on another file system than the note's
    folder (the link says so), the temp file is written in the note's folder, as hidden.
    """
    data = text.encode("utf-8")
    dfd = open_dir_at(root_fd, folder, create=True)
    try:
        try:
            place, in_folder = open_dir_at(root_fd, SCRATCH_DIR, create=True), False
        except OSError:
            place, in_folder = os.dup(dfd), True
        try:
            while True:
                tmp = write_temp(place, stem, data)
                try:
                    return _link_new(place, tmp, dfd, folder, stem, on_link, hold, claim, unclaim)
                except OSError as exc:
                    if exc.errno != errno.EXDEV or in_folder:
                        raise
                finally:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp, dir_fd=place)
                os.close(place)  # another file system: the note's own folder then
                place, in_folder = os.dup(dfd), True
        finally:
            os.close(place)
    finally:
        os.close(dfd)


def write_temp(place: int, stem: str, data: bytes) -> str:
    """A new hidden temp file in the open folder `place` holding `data`, fsynced; its name."""
    tmp = temp_name(stem)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=place)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:  # a full disk, an I/O error: no half-written temp file stays behind
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=place)
        raise
    os.close(fd)
    failpoint("after-temp-write")
    return tmp


def _link_new(
    place: int,
    tmp: str,
    dfd: int,
    folder: str,
    stem: str,
    on_link: Callable[[str], object] | None,
    hold: Callable[[], contextlib.AbstractContextManager[object]],
    claim: Callable[[str], object] | None = None,
    unclaim: Callable[[str], object] | None = None,
) -> str:
    """Link the temp file `tmp` (in `place`) to the first free name of the stem in the open folder `dfd`."""
    for n in range(1, 1000):
        name = f"{stem}.md" if n == 1 else f"{stem}-{n}.md"
        rel = f"{folder.strip('/')}/{name}" if folder.strip("/") else name
        if claim is not None:
            if _taken(dfd, name):
                continue
            claim(rel)
        with hold():
            try:
                os.link(tmp, name, src_dir_fd=place, dst_dir_fd=dfd, follow_symlinks=False)
            except FileExistsError:
                if claim is not None and unclaim is not None:
                    unclaim(rel)
                continue
            # before the folder fsync: a crash from here leaves no temp file; and before the note is
            # announced, since dropping the temp name changes the note's ctime, which its stat key holds
            os.unlink(tmp, dir_fd=place)
            if on_link is not None:
                on_link(rel)
        os.fsync(dfd)
        failpoint("after-link")
        return rel
    raise CaptureRefused("name-collision", f"{stem}.md and 998 suffixed names exist in {folder}; pick another title")


def _taken(dfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True
