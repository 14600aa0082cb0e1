"""The origins of the daemon's pending writes, kept until they are committed, and kept across a crash.

The daemon registers the origin of each write it is about to make (`capture`, `phone`, `self-probe`)
before writing; the commit that takes the path carries that origin. With a state folder every
registration is also appended to `pending-origins.jsonl` there and fsynced before `note` returns, so it is
durable before the write it describes exists: after a `kill -9` the next daemon reads the journal and the
pending notes are still committed under their own origin instead of `local-edit`. Committed
registrations are dropped and the journal rewritten (atomically) without them.

Registrations that arrive together share one append and one fsync: a writer whose line is not yet on disk
either flushes every line queued so far (the leader) or waits for the leader that took its line. Each
`note` still returns only once its own line is durable, so many captures at once do not queue behind one
fsync each.

A registration expires `REGISTRATION_TTL_SECONDS` after it was made (its file never showed up); one read
back from the journal whose path turns out to have nothing to commit is dropped at start-up (the write
never happened, or its commit went through and only the journal's rewrite was lost).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from agentmd.engine.fsutil import atomic_write, fsync_dir_quietly

ORIGINS = (
    "capture", "phone", "self-probe", "morning", "ingest", "confirm", "retire", "promote", "groom", "enrich",
    "local-edit",
)
REGISTRATION_TTL_SECONDS = 3600.0
JOURNAL_NAME = "pending-origins.jsonl"


@dataclass
class _Registration:
    origin: str
    at: float  # wall-clock seconds
    loaded: bool = False  # read back from the journal of an earlier run


def normalise(path: str) -> str:
    rel = path.replace(os.sep, "/").lstrip("/")
    while rel.startswith("./"):
        rel = rel[2:]
    return rel


class OriginBook:
    """Pending origins by vault-relative path; `journal` (a file path) makes them survive a crash."""

    def __init__(self, journal: Path | None, *, wall: Callable[[], float] = time.time) -> None:
        self.journal = journal
        self.wall = wall
        self._mutex = threading.Lock()
        self._items: dict[str, _Registration] = {}
        self._flush = threading.Lock()  # held by the one writer appending queued lines to the journal
        self._queued: list[bytes] = []  # journal lines not yet appended, in registration order
        self._queued_upto = 0  # the sequence number of the last line queued
        self._durable_upto = 0  # ... and of the last line known to be on disk
        self._failed: list[tuple[int, int, OSError]] = []  # recent failed flushes: (first, last line, error)
        self.problem: str | None = None  # the last journal write that failed, for the committer's warnings
        if journal is not None:
            self._load(journal)

    def _load(self, journal: Path) -> None:
        try:
            lines = journal.read_bytes().splitlines()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.problem = f"cannot read {journal} ({exc.strerror or exc}); pending origins are lost"
            return
        for line in lines:  # a torn last line (a crash mid-append) is skipped
            with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
                item = json.loads(line)
                path, origin, at = normalise(str(item["path"])), str(item["origin"]), float(item["at"])
                if origin in ORIGINS and path:
                    self._items[path] = _Registration(origin, at, loaded=True)

    def note(self, path: str, origin: str) -> None:
        """Register `origin` for `path`, durable on return when there is a journal. Raises ValueError for an
        unknown origin. A journal that cannot be written (a full or read-only state folder) does not fail the
        write: the origin is kept in memory and `problem` says it would not survive a crash."""
        if origin not in ORIGINS:
            raise ValueError(f"unknown commit origin {origin!r}; use one of {', '.join(ORIGINS)}")
        rel = normalise(path)
        with self._mutex:
            at = self.wall()
            self._items[rel] = _Registration(origin, at)
            if self.journal is None:
                return
            self._queued.append((json.dumps({"at": at, "origin": origin, "path": rel}, sort_keys=True) + "\n").encode())
            self._queued_upto += 1
            mine = self._queued_upto
        error = self._durable(mine)
        if error is not None:
            self.problem = (
                f"could not record the origin of {rel} in {self.journal} ({error.strerror or error}); it is kept "
                "in memory only and a crash before its commit would commit it as local-edit"
            )

    def _durable(self, mine: int) -> OSError | None:
        """Wait until the line numbered `mine` is on disk, appending every queued line when no other writer
        is doing it; the error of the flush that held the line, if it failed."""
        with self._flush:
            if self._durable_upto < mine:
                with self._mutex:
                    lines, self._queued = self._queued, []
                    upto = self._queued_upto
                try:
                    self._append(b"".join(lines))
                except OSError as exc:
                    self._failed = [*self._failed[-63:], (self._durable_upto + 1, upto, exc)]
                self._durable_upto = upto
            return next((exc for first, last, exc in self._failed if first <= mine <= last), None)

    def _append(self, data: bytes) -> None:
        assert self.journal is not None
        if not data:
            return
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        created = not self.journal.exists()
        fd = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            fsync_dir_quietly(self.journal.parent)

    def current(self) -> dict[str, str]:
        """Origins of the registrations that have not expired."""
        with self._mutex:
            now = self.wall()
            expired = [k for k, r in self._items.items() if now - r.at > REGISTRATION_TTL_SECONDS]
            for key in expired:
                del self._items[key]
            if expired:
                self._rewrite()
            return {p: r.origin for p, r in self._items.items()}

    def loaded(self) -> set[str]:
        with self._mutex:
            return {p for p, r in self._items.items() if r.loaded}

    def consume(self, paths: Iterable[str]) -> None:
        """The paths were committed: forget their registrations."""
        with self._mutex:
            removed = [p for p in paths if self._items.pop(p, None) is not None]
            if removed:
                self._rewrite()

    def forget_loaded(self, paths: Iterable[str]) -> None:
        """Drop registrations read back from the journal for `paths` (nothing of theirs is pending)."""
        with self._mutex:
            removed = [p for p in paths if p in self._items and self._items[p].loaded and self._items.pop(p)]
            if removed:
                self._rewrite()

    def _rewrite(self) -> None:
        if self.journal is None:
            return
        lines = [
            json.dumps({"path": p, "origin": r.origin, "at": r.at}, sort_keys=True) + "\n"
            for p, r in sorted(self._items.items())
        ]
        try:
            if lines:
                atomic_write(self.journal, "".join(lines), mode=0o600)
            elif self.journal.exists():
                # Emptied in place, so the next append needs no new directory entry, and without an fsync:
                # should the old lines come back after a power loss, their paths are clean and dropped.
                os.truncate(self.journal, 0)
            self.problem = None
        except OSError as exc:  # the old journal stays: at worst a committed path is looked at again
            self.problem = f"could not rewrite {self.journal} ({exc.strerror or exc})"
