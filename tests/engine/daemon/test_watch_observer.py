"""The watcher's couplings to watchdog internals, checked on the installed watchdog.

`agentmd.engine.daemon.watch_observer` reads watchdog's private ``InotifyObserver._inotify_fd._inotify_fd``
to count the watches an observer really holds, and recognises an inotify queue overflow by the warning
text `watchdog.observers.inotify` logs. Neither is watchdog's public API, so pyproject.toml pins watchdog
below its next major version. These tests run against whatever watchdog is installed: when an upgrade
moves either internal, they fail with a message naming the coupling instead of the watcher silently
losing its watch count or its overflow rescans.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import watchdog.version
from watchdog.events import FileSystemEvent
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from agentmd.engine.daemon.watch_observer import (
    EVENT_FILTER,
    OVERFLOW_LOGGER,
    OVERFLOW_PREFIX,
    EventHandler,
    OverflowHook,
    count_dirs,
    observer_watches,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the couplings are to inotify")

WATCHDOG = f"watchdog {watchdog.version.VERSION_STRING}"


class Records(logging.Handler):
    """Keeps every record logged to the logger it is attached to."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def ignore(event: FileSystemEvent) -> None:
    """The event handler's callbacks: these tests look at watches and log records, not at events."""


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel in ("notes/2024", "notes/2025", "attachments"):
        (root / rel).mkdir(parents=True)
    return root


@pytest.fixture
def observer(vault: Path) -> Iterator[BaseObserver]:
    """A started observer of the platform's default kind, watching `vault` recursively as the watcher does."""
    obs = Observer()
    obs.schedule(EventHandler(ignore, ignore), str(vault), recursive=True, event_filter=EVENT_FILTER)
    obs.start()
    try:
        yield obs
    finally:
        obs.stop()
        obs.join(10)


def test_observer_exposes_its_inotify_descriptor(observer: BaseObserver, vault: Path) -> None:
    coupling = (
        f"watch_observer.observer_watches reads watchdog's private InotifyObserver._inotify_fd._inotify_fd; on "
        f"{WATCHDOG}:"
    )
    inotify = getattr(observer, "_inotify_fd", None)
    assert inotify is not None, f"{coupling} the observer ({type(observer).__name__}) has no _inotify_fd"
    fd = getattr(inotify, "_inotify_fd", None)
    assert isinstance(fd, int), f"{coupling} _inotify_fd._inotify_fd is {fd!r}, not an int descriptor"
    assert os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify", f"{coupling} it is not an inotify fd"
    total, _ = count_dirs(str(vault))
    held = observer_watches(observer)
    assert held == total, f"{coupling} the watch count read through it is {held!r}, expected {total}"


def test_overflow_warning_is_still_what_watchdog_logs(observer: BaseObserver, vault: Path) -> None:
    from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent, WatchDescriptor

    coupling = (
        f"watch_observer.OverflowHook recognises an inotify queue overflow by a warning on {OVERFLOW_LOGGER!r} "
        f"starting {OVERFLOW_PREFIX!r} with the watched folder as its argument; on {WATCHDOG}:"
    )
    inotify = getattr(observer, "_inotify_fd", None)
    assert hasattr(inotify, "handle_event"), f"{coupling} there is no inotify instance to send an overflow to"
    records = Records()
    overflows: list[int] = []
    hook = OverflowHook(str(vault), lambda: overflows.append(1))
    logger = logging.getLogger(OVERFLOW_LOGGER)
    logger.addHandler(records)
    logger.addHandler(hook)
    try:
        # What the kernel sends when its queue overflows (watch descriptor -1); watchdog logs and rewatches.
        inotify.handle_event(InotifyEvent(WatchDescriptor(-1), InotifyConstants.IN_Q_OVERFLOW, 0, b""))
    finally:
        logger.removeHandler(hook)
        logger.removeHandler(records)
    seen = [(r.name, r.levelname, r.msg, r.args) for r in records.records]
    matching = [
        r
        for r in records.records
        if isinstance(r.msg, str)
        and r.msg.startswith(OVERFLOW_PREFIX)
        and r.levelno >= logging.WARNING
        and isinstance(r.args, tuple)
        and r.args
        and os.fsencode(r.args[0]) == os.fsencode(str(vault))  # type: ignore[arg-type]
    ]
    assert matching, f"{coupling} it logged {seen}"
    assert overflows == [1], f"{coupling} OverflowHook fired {len(overflows)} times on {seen}"
