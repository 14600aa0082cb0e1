"""File helpers every writer shares: fsync of a folder, atomic replacement, small JSON state files, folders
opened without following links (for writes into the vault), and reads of regular files only.

Standard library only, so the light hook entry point can use them.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

from agentmd.engine.errors import AgentmdError

SCRATCH_DIR = ".agentmd-scratch"  # hidden folder at the vault's top for writers' temp files: never watched


def temp_name(stem: str) -> str:
    """A writer's temp file name: hidden, and naming the writing process so the start-up sweep
    (`engine/write/tempfiles.py`) can tell a live writer's file from one a crash left."""
    return f".{stem[:40]}.{os.getpid()}-{uuid.uuid4().hex[:8]}.capture-tmp"


def fsync_dir(path: Path) -> None:
    """Make a rename or a new link inside `path` durable. Raises OSError when the folder cannot be synced."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir_quietly(path: Path) -> None:
    """`fsync_dir` for callers whose write already succeeded and for whom durability is best-effort."""
    with contextlib.suppress(OSError):
        fsync_dir(path)


def atomic_write(path: Path, data: bytes | str, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace `path` with `data` so a reader sees the old bytes or the new ones, never half a file.

    The bytes go to a hidden temp file beside `path` (fsynced when `durable`), which is then renamed over it;
    a failure removes the temp file and leaves `path` as it was. Text is written as UTF-8 with its newlines
    untouched.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.agentmd-{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644 if mode is None else mode)
        try:
            os.write(fd, raw)
            if mode is not None:
                os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir_quietly(path.parent)


def read_json(path: Path) -> dict[str, object] | None:
    """A JSON object from a state file, or None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_json_lines(path: Path) -> list[dict[str, object]]:
    """The JSON objects of a JSON-lines journal, oldest first; [] when it is missing or unreadable. A torn line
    (a crash in mid-append) or a line that is not an object is skipped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out: list[dict[str, object]] = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def write_json(path: Path, data: Mapping[str, object]) -> None:
    """Atomic replace, so a reader never sees half a file. State files are caches: no fsync."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=1, sort_keys=True), durable=False)


# -- writes that never follow a link -----------------------------------------------------------------------
#
# A path checked and then reopened by name can be redirected between the two steps: swap a folder for a
# symbolic link and the write lands wherever the link points. So a writer opens its folder once, one
# component at a time from a descriptor of the vault root, each with O_NOFOLLOW (a link anywhere on the way
# fails the open), and then creates, links and renames by name relative to that folder's descriptor. Once
# the folder is open, swapping any name on its path changes nothing: the descriptor stays on the real folder.

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class NotInVault(AgentmdError, OSError):
    """A folder on the way to a write is a symbolic link or not a folder: the write would leave the vault."""


def _components(rel: str) -> list[str]:
    parts = [p for p in rel.replace("\\", "/").split("/") if p]
    if any(p in (".", "..") or "\x00" in p for p in parts):
        raise NotInVault(errno.EINVAL, f"{rel!r} is not a plain vault-relative folder")
    return parts


def open_dir_at(root_fd: int, rel: str, *, create: bool = False, mode: int = 0o755) -> int:
    """A new descriptor of folder `rel` under the folder `root_fd`, never following a link on the way.

    Each component is opened with O_DIRECTORY|O_NOFOLLOW relative to the one before; with `create`, missing
    folders are made (mkdir relative to their parent's descriptor). Raises `NotInVault` when a component is a
    symbolic link or not a folder, OSError for anything else. The caller closes the descriptor.
    """
    fd = os.dup(root_fd)
    try:
        for part in _components(rel):
            try:
                nxt = _open_component(part, fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, mode, dir_fd=fd)
                nxt = _open_component(part, fd)
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_component(part: str, parent_fd: int) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotInVault(exc.errno, f"{part!r} is a symbolic link or not a folder") from None
        raise


@contextlib.contextmanager
def opened_dir(root: Path, rel: str, *, create: bool = False) -> Iterator[int]:
    """`open_dir_at` from the folder `root` (which itself may be reached through links: it is the anchor)."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = open_dir_at(root_fd, rel, create=create)
    finally:
        os.close(root_fd)
    try:
        yield fd
    finally:
        os.close(fd)


# -- reads of regular files only -----------------------------------------------------------------------------
#
# A FIFO named `note.md` blocks the first read forever; a device node can be read without end. A reader takes
# only regular files: lstat first (so nothing else is even opened), then open with O_NONBLOCK|O_NOFOLLOW (an
# open that cannot hang and does not follow a link swapped in meanwhile), fstat the descriptor (what was
# opened is what is read), and read at most `limit` bytes.

MAX_READ_BYTES = 64 * 2**20


class NotRegularFile(AgentmdError, OSError):
    """The path is a FIFO, socket, device, folder or link, not a regular file."""


class FileTooLarge(AgentmdError, OSError):
    """The file is larger than the reader accepts."""


class StillChanging(AgentmdError, OSError):
    """The file's size or modification time moved while it was being read (a sync client mid-write)."""


def read_regular(
    path: str | Path, *, limit: int = MAX_READ_BYTES, dir_fd: int | None = None, expect: tuple[int, int] | None = None
) -> bytes:
    """The bytes of a regular file at `path` (relative to `dir_fd` when given). Raises `NotRegularFile` for
    anything else, `FileTooLarge` past `limit` bytes, OSError when it cannot be read. With `expect` (mtime_ns,
    size), raises `StillChanging` unless the file has them when opened and still after it is read (a sync
    client writing it meanwhile)."""
    st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(errno.EINVAL, f"not a regular file ({_kind(st.st_mode)})")
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, f"not a regular file ({_kind(st.st_mode)})")
        if st.st_size > limit:
            raise FileTooLarge(errno.EFBIG, f"{st.st_size} bytes, over the limit of {limit}")
        if expect is not None and (st.st_mtime_ns, st.st_size) != expect:
            raise StillChanging(errno.EAGAIN, "changed since it was listed")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while being read
                raise FileTooLarge(errno.EFBIG, f"over the limit of {limit} bytes")
        if expect is not None:
            after = os.fstat(fd)
            if (after.st_mtime_ns, after.st_size) != expect or total != st.st_size:
                raise StillChanging(errno.EAGAIN, "changed while it was read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"
