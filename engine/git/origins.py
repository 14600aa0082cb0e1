"""The origins of pending writes, kept until they are committed, and kept across a crash and across processes.

Every writer registers the origin of each write it is about to make (`capture`, `phone`, `self-probe`, ...)
before writing; the commit that takes the path carries that origin. With a state folder every registration
is appended to `pending-origins.jsonl` there and fsynced before `note` returns, so it is durable before the
write it describes exists. The journal is the one provenance record of the vault: the daemon, a CLI capture
made while no daemon runs, and the curation commands all read and append it, under an exclusive lock on
`pending-origins.lock`. A committer reads the journal at each cycle, so it commits another process's
pending writes (a daemon killed before its commit, a CLI capture) under their own origins, never as
`local-edit`; committed registrations are dropped and the journal rewritten (atomically, under the lock).

A registration ends when its path is committed, or when the process that made it is gone and its path has
nothing to commit (the write never happened, or its commit went through and only the journal's rewrite was
lost). Never by age or by the wall clock: a capture held uncommitted for hours (a commit editor left open,
an unresolved merge, a clock stepped after a suspend) keeps its origin. Each line names its writer's pid;
the state folder is this machine's, so a pid is enough to tell whether the writer still runs.

A writer that says the bytes it writes (`note(..., written=)`) has their digest kept in its line. Should someone
save over the file before the commit (a person editing a note captured a moment ago), the file is theirs: it is
committed as `local-edit`, and when the process that registered still holds the writer's bytes (the last
`KEEP_WRITTEN` it registered), they are committed first under the writer's origin, so history and undo see
both writes apart (`unlike`).

Registrations that arrive together share one append and one fsync: a writer whose line is not yet on disk
either flushes every line queued so far (the leader) or waits for the leader that took its line. Each
`note` still returns only once its own line is durable, so many captures at once do not queue behind one
fsync each.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentmd.engine.fsutil import atomic_write, fsync_dir_quietly
from agentmd.engine.git.runner import plural, printable
from agentmd.engine.settings import host_name

ORIGINS = (
    "capture",
    "phone",
    "self-probe",
    "morning",
    "ingest",
    "confirm",
    "retire",
    "promote",
    "groom",
    "enrich",
    "lessons",
    "maps",
    "sync",
    "resolve",
    "revert",
    "lifecycle",
    "local-edit",
)
KEEP_WRITTEN = 256  # the writers' bytes this process keeps until their commit, newest last
JOURNAL_NAME = "pending-origins.jsonl"
LOCK_NAME = "pending-origins.lock"


@dataclass
class _Registration:
    origin: str
    at: float  # wall-clock seconds, for a person reading the journal; it decides nothing
    pid: int | None  # the process that made it; None in a line of an older version (its writer is gone)
    expect: str | None = None  # the digest (`digest`) of the bytes the writer wrote, when it said them


def digest(data: bytes) -> str:
    """What a registration's `expect` holds: the SHA-256 of the bytes a writer wrote."""
    return hashlib.sha256(data).hexdigest()


def process_alive(pid: int | None) -> bool:
    """Whether a process with this pid runs on this machine."""
    if not pid or pid < 1:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it exists
        return True
    return True


def normalise(path: str) -> str:
    rel = path.replace(os.sep, "/").lstrip("/")
    while rel.startswith("./"):
        rel = rel[2:]
    return rel


class OriginBook:
    """Pending origins by vault-relative path; `journal` (a file path) makes them survive a crash and shared
    by every process that commits into the vault. Without a journal they live in this object alone."""

    def __init__(
        self,
        journal: Path | None,
        *,
        wall: Callable[[], float] = time.time,
        alive: Callable[[int | None], bool] = process_alive,
    ) -> None:
        self.journal = journal
        self.wall = wall
        self.alive = alive
        self.pid = os.getpid()
        self._mutex = threading.Lock()
        self._written: OrderedDict[str, tuple[str, bytes]] = OrderedDict()  # path: (digest, the bytes written)
        self._items: dict[str, _Registration] = {}  # without a journal: every registration; with one: the
        # registrations whose append failed (kept in memory, and `problem` says so)
        self._flush = threading.Lock()  # held by the one writer appending queued lines to the journal
        self._queued: list[bytes] = []  # journal lines not yet appended, in registration order
        self._queued_upto = 0  # the sequence number of the last line queued
        self._durable_upto = 0  # ... and of the last line known to be on disk
        self._failed: list[tuple[int, int, OSError]] = []  # recent failed flushes: (first, last line, error)
        self.problem: str | None = None  # the last journal read or write that failed, for the committer

    # -- the journal ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The journal's cross-process lock (a flock on `pending-origins.lock` beside it). A lock file that
        cannot be opened (a broken state folder) is no reason to stop a write: the journal's own write then
        fails and says so."""
        assert self.journal is not None
        fd = None
        try:
            self.journal.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.journal.with_name(LOCK_NAME), os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            if fd is not None:
                os.close(fd)
            fd = None
        try:
            yield
        finally:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    def _read(self) -> dict[str, _Registration]:
        """The journal's registrations, the last line for a path winning; a torn last line (a crash in
        mid-append) is skipped. Call under `_locked`."""
        assert self.journal is not None
        try:
            lines = self.journal.read_bytes().splitlines()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            self.problem = f"cannot read {self.journal} ({exc.strerror or exc}); pending origins are unknown"
            return {}
        found: dict[str, _Registration] = {}
        for line in lines:
            with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
                item = json.loads(line)
                path, origin, at = normalise(str(item["path"])), str(item["origin"]), float(item["at"])
                pid, expect = item.get("pid"), item.get("expect")
                if origin in ORIGINS and path:
                    expected = expect if isinstance(expect, str) else None
                    found[path] = _Registration(origin, at, pid if isinstance(pid, int) else None, expected)
        return found

    def _all(self) -> dict[str, _Registration]:
        """Every pending registration: the journal's, and those of this object its appends could not keep.
        Call under `_mutex` (and `_locked` when there is a journal)."""
        if self.journal is None:
            return dict(self._items)
        return {**self._read(), **self._items}

    def _rewrite(self, items: dict[str, _Registration]) -> None:
        """Replace the journal with `items`. Call under `_locked`."""
        if self.journal is None:
            return
        lines = [json.dumps(_line(p, r), sort_keys=True) + "\n" for p, r in sorted(items.items())]
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

    def _append(self, data: bytes) -> None:
        assert self.journal is not None
        if not data:
            return
        with self._locked():
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

    # -- registrations --------------------------------------------------------------------------

    def note(self, path: str, origin: str, written: bytes | None = None) -> str | None:
        """Register `origin` for `path`, durable on return when there is a journal; `written` is the bytes the
        writer is about to write, when it knows them (`unlike`). Raises ValueError for an unknown origin. A
        journal that cannot be written (a full or read-only state folder) does not fail the write: the origin
        is kept in memory, and `problem` and the return value say it would not survive a crash."""
        if origin not in ORIGINS:
            raise ValueError(f"unknown commit origin {origin!r}; use one of {', '.join(ORIGINS)}")
        rel = normalise(path)
        expect = digest(written) if written is not None else None
        with self._mutex:
            self._written.pop(rel, None)
            if written is not None and expect is not None:
                self._written[rel] = (expect, written)
                while len(self._written) > KEEP_WRITTEN:
                    self._written.popitem(last=False)
            at = self.wall()
            if self.journal is None:
                self._items[rel] = _Registration(origin, at, self.pid, expect)
                return None
            self._items.pop(rel, None)
            line = _line(rel, _Registration(origin, at, self.pid, expect))
            self._queued.append((json.dumps(line, sort_keys=True) + "\n").encode())
            self._queued_upto += 1
            mine = self._queued_upto
        error = self._durable(mine)
        if error is not None:
            with self._mutex:
                self._items[rel] = _Registration(origin, at, self.pid, expect)
            self.problem = (
                f"could not record the origin of {rel} in {self.journal} ({error.strerror or error}); it is kept in "
                "this process's memory only: should the process end or crash before the commit, the note is "
                "committed as local-edit"
            )
            return self.problem
        return None

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

    def current(self, pending: Iterable[str] | None = None) -> dict[str, str]:
        """The origins of the pending registrations, by path. With `pending` (the paths that have something
        to commit), the registrations that are spent (their writer gone, their path with nothing to commit)
        are dropped first."""
        with self._mutex, self._locked() if self.journal is not None else contextlib.nullcontext():
            items = self._all()
            if pending is not None:
                waiting = set(pending)
                spent = [p for p, r in items.items() if p not in waiting and not self.alive(r.pid)]
                if spent:
                    for p in spent:
                        del items[p]
                        self._items.pop(p, None)
                        self._written.pop(p, None)
                    self._rewrite({p: r for p, r in items.items() if p not in self._items})
            return {p: r.origin for p, r in items.items()}

    def drained(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for every pending registration to end (the daemon's loop committing
        them); whether none is left."""
        deadline = time.monotonic() + timeout
        while self.current():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def unlike(self, vault: Path, paths: Iterable[str]) -> dict[str, bytes | None]:
        """Of `paths`, those registered with the bytes their writer wrote (`expect`) whose file now holds
        other bytes: someone changed it since (a person saving over a note captured a moment ago), so its
        content is theirs and is committed as theirs, not under the writer's origin. Each with the writer's
        own bytes when this process still holds them (None when another process wrote, or they were let go)."""
        with self._mutex, self._locked() if self.journal is not None else contextlib.nullcontext():
            expected = {p: r.expect for p, r in self._all().items() if r.expect is not None}
            kept = dict(self._written)
        out: dict[str, bytes | None] = {}
        for path in paths:
            want = expected.get(path)
            if want is None:
                continue
            try:
                have = digest((vault / path).read_bytes())
            except OSError:
                continue  # deleted since: nothing of anyone's to misname
            if have != want:
                own = kept.get(path)
                out[path] = own[1] if own is not None and own[0] == want else None
        return out

    def consume(self, paths: Iterable[str]) -> None:
        """The paths were committed: their registrations end."""
        done = set(paths)
        with self._mutex:
            for p in done:
                self._written.pop(p, None)
            if self.journal is None:
                for p in done:
                    self._items.pop(p, None)
                return
            with self._locked():
                items = self._read()
                for p in done:
                    self._items.pop(p, None)
                if done & set(items):
                    self._rewrite({p: r for p, r in items.items() if p not in done})


def commit_message(origin: str, paths: Sequence[str], *, initial: bool = False) -> str:
    """Summary line, blank line, the `origin:` and `host:` trailers (who wrote it, on which machine: history is
    shared between machines once the vault syncs), final newline (so git parses the trailers)."""
    if initial:
        summary = f"{origin}: initial commit of {plural(len(paths), 'file')}"
    else:
        shown = ", ".join(printable(p) for p in paths[:3])
        more = f", and {len(paths) - 3} more" if len(paths) > 3 else ""
        summary = f"{origin}: {plural(len(paths), 'file')} ({shown}{more})"
    return f"{summary}\n\norigin: {origin}\nhost: {host_name()}\n"


def _line(path: str, r: _Registration) -> dict[str, object]:
    line: dict[str, object] = {"at": r.at, "origin": r.origin, "path": path, "pid": r.pid}
    if r.expect is not None:
        line["expect"] = r.expect
    return line
