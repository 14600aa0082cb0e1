"""The watcher's side of watchdog and of the kernel's inotify: the event filter, the event handler, the
overflow signal and the watch accounting.

Two couplings here reach past watchdog's documented API, because watchdog offers no other way:

- an inotify queue overflow is noticed through the warning `watchdog.observers.inotify` logs when it
  rebuilds a recursive watch (`OVERFLOW_LOGGER`, `OVERFLOW_PREFIX`, the watched path as its argument);
- the watches an observer really holds are counted through its private inotify instance,
  ``InotifyObserver._inotify_fd._inotify_fd`` (the descriptor whose /proc fdinfo lists one line per watch).

pyproject.toml pins watchdog below its next major version for that reason, and
tests/engine/daemon/test_watch_observer.py checks both on the installed watchdog. Every function here degrades to
"unknown" where /proc or those internals are missing.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Callable

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver

WATCH_LIMIT_FILE = "/proc/sys/fs/inotify/max_user_watches"
NS_WATCH_LIMIT_FILE = "/proc/sys/user/max_inotify_watches"
INSTANCE_LIMIT_FILE = "/proc/sys/fs/inotify/max_user_instances"

# Always pass an event filter: it narrows the inotify mask, so reads (opened / closed-no-write) cost
# nothing and the watch walk does not flood the queue (see the research notes on watchdog 7).
EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirMovedEvent,
    DirDeletedEvent,
]
ACCEPTED_EVENTS = tuple(EVENT_FILTER)
MOVED_EVENTS = (FileMovedEvent, DirMovedEvent)

# Logged by watchdog.observers.inotify (InotifyWatchGroup.on_queue_overflow) with the watched root as the
# only argument. watchdog tells its callers nothing else about an overflow, so this record is the signal.
OVERFLOW_LOGGER = "watchdog.observers.inotify"
OVERFLOW_PREFIX = "Inotify queue overflowed"


class EventHandler(FileSystemEventHandler):
    """Runs on watchdog's observer thread; never lets an exception escape into it.

    `on_event` gets every event; when it raises, `on_error(event)` is called from inside the except block
    (so it can log the traceback).
    """

    def __init__(
        self, on_event: Callable[[FileSystemEvent], None], on_error: Callable[[FileSystemEvent], None]
    ) -> None:
        super().__init__()
        self._on_event = on_event
        self._on_error = on_error

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            self._on_event(event)
        except Exception:
            self._on_error(event)


class OverflowHook(logging.Handler):
    """Notices watchdog's overflow warning for one watched root (watchdog offers no other signal).

    Attach it to the `OVERFLOW_LOGGER` logger; `on_overflow` runs on watchdog's thread.
    """

    def __init__(self, root: str, on_overflow: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self._root = os.fsencode(root)
        self._on_overflow = on_overflow

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.msg
        args = record.args
        if not (isinstance(msg, str) and msg.startswith(OVERFLOW_PREFIX)):
            return
        if not (isinstance(args, tuple) and args):  # the inotify instance's own notice names no folder
            self._on_overflow()
            return
        watched = args[0]
        if isinstance(watched, str):
            watched = os.fsencode(watched)
        if isinstance(watched, bytes) and (
            watched == self._root or watched.startswith(self._root + b"/")
        ):  # the root or a top-level watch
            self._on_overflow()


# ---------------------------------------------------------------------------------------------------------
# inotify accounting (Linux /proc; every function degrades to "unknown" elsewhere)
# ---------------------------------------------------------------------------------------------------------


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as f:
            return max(0, int(f.read().strip()))
    except (OSError, ValueError):
        return None


def read_watch_limit() -> int:
    """The inotify watch limit that applies to this process, or 0 when it cannot be read (not Linux, no
    /proc): `fs.inotify.max_user_watches`, or the user namespace's `user.max_inotify_watches` when lower
    (containers set that one)."""
    limits = [n for n in (_read_int(WATCH_LIMIT_FILE), _read_int(NS_WATCH_LIMIT_FILE)) if n is not None]
    return min(limits) if limits else 0


def inotify_problem(exc: OSError) -> str:
    """A refusal from inotify in words, naming the limit to raise."""
    if exc.errno == errno.ENOSPC:
        return (
            f"the inotify watch limit is used up ({read_watch_limit()} watches for this user, often taken by an "
            "IDE): raise it, e.g. `sysctl -w fs.inotify.max_user_watches=524288`"
        )
    if exc.errno == errno.EMFILE:
        limit = _read_int(INSTANCE_LIMIT_FILE)
        return (
            f"the inotify instance limit is used up (fs.inotify.max_user_instances = {limit}): raise it, e.g. "
            "`sysctl -w fs.inotify.max_user_instances=1024`"
        )
    return f"watching could not start ({exc.strerror or exc})"


def _watches_in_fdinfo(path: str) -> int:
    with open(path, encoding="ascii", errors="replace") as f:
        return sum(1 for line in f if line.startswith("inotify wd:"))


def user_watches_in_use() -> int | None:
    """inotify watches currently held by processes of this user (one line per watch in /proc/PID/fdinfo).

    Costs one readlink per open descriptor of this user's processes (a few ms on a desktop). None when
    /proc cannot be read at all.
    """
    uid = os.getuid()
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    total = 0
    for pid in pids:
        base = f"/proc/{pid}"
        try:
            if os.stat(base).st_uid != uid:
                continue
            fds = os.listdir(f"{base}/fd")
        except OSError:
            continue  # gone, or not ours to read
        for fd in fds:
            try:
                if os.readlink(f"{base}/fd/{fd}") == "anon_inode:inotify":
                    total += _watches_in_fdinfo(f"{base}/fdinfo/{fd}")
            except OSError:
                continue
    return total


def observer_watches(observer: BaseObserver | None) -> int | None:
    """Watches actually held by this observer's own inotify instance, or None if that cannot be read.

    Reads watchdog 7's private ``InotifyObserver._inotify_fd._inotify_fd``; any other layout gives None.
    """
    inotify = getattr(observer, "_inotify_fd", None)
    fd = getattr(inotify, "_inotify_fd", None)
    if not isinstance(fd, int):
        return None
    try:
        return _watches_in_fdinfo(f"/proc/self/fdinfo/{fd}")
    except OSError:
        return None


def watched_inodes(observer: BaseObserver | None) -> set[tuple[int, int]] | None:
    """(device, inode) of every folder this observer's inotify instance watches, from /proc fdinfo
    (`inotify wd:.. ino:<hex> sdev:<hex> ..`); None when that cannot be read."""
    inotify = getattr(observer, "_inotify_fd", None)
    fd = getattr(inotify, "_inotify_fd", None)
    if not isinstance(fd, int):
        return None
    found: set[tuple[int, int]] = set()
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii", errors="replace") as f:
            for line in f:
                if not line.startswith("inotify wd:"):
                    continue
                fields = dict(part.split(":", 1) for part in line.split() if ":" in part)
                sdev = int(fields.get("sdev", "0"), 16)
                # the kernel prints the device in its internal encoding: major << 20 | minor
                found.add((os.makedev(sdev >> 20, sdev & 0xFFFFF), int(fields.get("ino", "0"), 16)))
    except (OSError, ValueError):
        return None
    return found


def unwatched_folders(root: str, observer: BaseObserver | None, limit: int = 50) -> list[str] | None:
    """Vault-relative folders (at most `limit`, shallowest first) that no inotify watch of `observer` covers;
    None when the watches cannot be read."""
    watched = watched_inodes(observer)
    if watched is None:
        return None
    out: list[str] = []
    queue: list[str] = [root]
    while queue and len(out) < limit:
        path = queue.pop(0)
        try:
            st = os.stat(path)
            if (st.st_dev, st.st_ino) not in watched:
                out.append(os.path.relpath(path, root).replace(os.sep, "/"))
            with os.scandir(path) as it:
                for entry in it:
                    if path == root and entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        queue.append(entry.path)
        except OSError:
            continue
    return out


def count_dirs(root: str) -> tuple[int, int]:
    """(all, note) directories under `root`, root included, symbolic links not followed.

    "all" is what the watches cost: one inotify watch per directory under each top-level folder (dot
    directories nested in them included); top-level dot folders such as ``.git`` are not watched.
    "note" counts only directories with no dot component, the ones notes can live in.
    """
    total = notes = 0
    stack: list[tuple[str, bool]] = [(root, False)]
    while stack:
        path, dotted = stack.pop()
        total += 1
        notes += not dotted
        try:
            with os.scandir(path) as it:
                for entry in it:
                    try:
                        if path == root and entry.name.startswith("."):
                            continue  # top-level dot folders (.git, .obsidian, .trash) are not watched
                        if entry.is_dir(follow_symlinks=False):
                            stack.append((entry.path, dotted or entry.name.startswith(".")))
                    except OSError:
                        continue
        except OSError:
            continue
    return total, notes
