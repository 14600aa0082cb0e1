"""Group commit: captured notes that arrive together reach the index and the catalog in one update.

A capture is validated, checked and written on its own (engine/write/capture.py); what made concurrent
captures queue was the update after it: one Tantivy commit, one reader reload and one catalog transaction
per note, one note at a time. Here each written note takes a ticket and waits. The first waiter that finds
no update running becomes the leader: it takes every ticket queued so far, indexes all those notes in one
pass (one index commit, one catalog transaction) and then wakes everyone. A waiter whose ticket was not in
that batch (it arrived while the batch ran) is among the next leader's. Nobody returns before the batch
holding their note is committed and visible to searches, so "searchable on return" holds for every note,
and the notes a leader commits are exactly the ones queued when it starts, so no note waits longer than one
batch behind the one in progress.

While a note waits it is `pending`: the capture path looks at pending notes when it checks for a twin, so a
note written a moment ago and not yet in the catalog still stops an identical capture filed elsewhere.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("agentmd.capture")

IndexPaths = Callable[[set[str]], set[str]]  # index these notes; returns the ones indexed


@dataclass(eq=False)
class Ticket:
    """One written note waiting for the update that indexes it."""

    path: str
    title: str
    done: threading.Event = field(default_factory=threading.Event)
    indexed: bool = False


@dataclass
class GroupStats:
    batches: int = 0
    notes: int = 0
    largest: int = 0


class GroupIndexer:
    """Leader/follower batches of index updates (see the module docstring).

    `index_paths` is the one update: it gets the batch's paths and returns those it indexed; an exception
    counts as none indexed (the next reconcile pass picks them up)."""

    def __init__(self, index_paths: IndexPaths) -> None:
        self._index_paths = index_paths
        self._cond = threading.Condition()
        self._queue: list[Ticket] = []
        self._leading = False
        self._pending: dict[str, list[Ticket]] = {}  # title -> tickets not yet done
        self._waiting = 0
        self.stats = GroupStats()

    def submit(self, path: str, title: str) -> Ticket:
        """Queue a written note; it is pending from now until its batch has run."""
        ticket = Ticket(path, title)
        with self._cond:
            self._queue.append(ticket)
            self._pending.setdefault(title, []).append(ticket)
        return ticket

    def pending(self, title: str) -> list[Ticket]:
        """The notes with this title written but not yet through their update."""
        with self._cond:
            return list(self._pending.get(title, ()))

    def queued(self) -> set[str]:
        """The notes waiting for a batch that has not started: the batch that takes them reads them from disk
        then, so a file event about one of them needs no pass of its own."""
        with self._cond:
            return {t.path for t in self._queue}

    def wait(self, ticket: Ticket) -> bool:
        """Return once `ticket`'s batch has run (leading a batch when no other is running); whether the note
        was indexed."""
        with self._cond:
            self._waiting += 1
        try:
            while True:
                with self._cond:
                    while not ticket.done.is_set() and self._leading:
                        self._cond.wait()
                    if ticket.done.is_set():
                        return ticket.indexed
                    self._leading = True
                    batch, self._queue = self._queue, []
                try:
                    self._run(batch)
                finally:
                    with self._cond:
                        self._leading = False
                        self._cond.notify_all()
        finally:
            with self._cond:
                self._waiting -= 1

    def waiting(self) -> int:
        """How many captures are waiting for a batch now (the leader of the running one included)."""
        with self._cond:
            return self._waiting

    def _run(self, batch: list[Ticket]) -> None:
        indexed: set[str] = set()
        try:
            indexed = self._index_paths({t.path for t in batch})
        except Exception:
            log.exception("indexing %d captured note(s) failed; the next reconcile will pick them up", len(batch))
        with self._cond:
            self.stats.batches += 1
            self.stats.notes += len(batch)
            self.stats.largest = max(self.stats.largest, len(batch))
            for t in batch:
                t.indexed = t.path in indexed
                _drop(self._pending, t)
                t.done.set()


def _drop(pending: dict[str, list[Ticket]], ticket: Ticket) -> None:
    left = [t for t in pending.get(ticket.title, ()) if t is not ticket]
    if left:
        pending[ticket.title] = left
    else:
        pending.pop(ticket.title, None)
