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

Each waiter sleeps on its own ticket: a batch that ends wakes exactly the captures whose notes it indexed, and
hands the lead to one waiting capture whose note is queued (it takes every queued note as its batch), so under
many writers an ending batch does not wake every waiting thread to find out which one leads next.

While a note waits it is `pending`: the capture path looks at pending notes when it checks for a twin, so a
note written a moment ago and not yet in the catalog still stops an identical capture filed elsewhere.

The file events a captured note causes arrive at the daemon's indexer while its batch waits or just after the
batch indexed it. Neither needs a pass of the indexer's own (`covered`): a queued note is read by its batch, and
an indexed note whose file is still as it was just before the batch read it (same size, times and inode) is in
the index as it is on disk. So under many captures the indexer does not run a pass, with its status refresh,
per batch, on top of the batch itself. Notes a batch could not index are handed to `missed` (the daemon's
indexer takes them as file hints), so a pass indexes them soon even when their own file events were covered.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field

from agentmd.engine.errors import IndexBusy

log = logging.getLogger("agentmd.capture")

IndexPaths = Callable[[set[str]], set[str]]  # index these notes; returns the ones indexed
StatKey = tuple[int, ...]
Stat = Callable[[str], StatKey | None]  # a note's (mtime_ns, size, ctime_ns, inode) now; None when it is gone
RECENT = 4096  # indexed notes remembered for `covered`


@dataclass(eq=False)
class Ticket:
    """One written note waiting for the update that indexes it."""

    path: str
    title: str
    wake: threading.Condition  # on the group's lock: notified when the note's batch ends or the lead is handed over
    done: threading.Event = field(default_factory=threading.Event)
    indexed: bool = False
    waiters: int = 0  # threads in `wait` for this ticket (its capture; a twin's capture waiting for it too)
    lead: bool = False  # the lead handed to this ticket's waiters: one of them runs the next batch
    batch_started_ns: int = 0  # perf_counter_ns when the batch that took it began
    batch_size: int = 0
    batch_stages: dict[str, float] = field(default_factory=dict)  # what that batch spent, by stage (ms)


@dataclass
class GroupStats:
    batches: int = 0
    notes: int = 0
    largest: int = 0


class GroupIndexer:
    """Leader/follower batches of index updates (see the module docstring).

    `index_paths` is the one update: it gets the batch's paths and returns those it indexed; an exception
    counts as none indexed (the next reconcile pass picks them up)."""

    def __init__(self, index_paths: IndexPaths, stat: Stat | None = None) -> None:
        self._index_paths = index_paths
        self._stat = stat
        self._recent: OrderedDict[str, StatKey] = OrderedDict()  # indexed by a batch: the file as it was read
        self._running: dict[str, StatKey | None] = {}  # the running batch's notes: None until it has their stat
        self.missed: Callable[[set[str]], object] | None = None  # told the notes a batch could not index
        self._cond = threading.RLock()  # guards everything below (`landing` holds it around `submit`); each
        # ticket's `wake` is a condition on it
        self._queue: list[Ticket] = []
        self._leading = False
        self._pending: dict[str, list[Ticket]] = {}  # title -> tickets not yet done
        self._waiting = 0
        self._batch_stages: dict[str, float] = {}
        self._handed_ns = 0  # when the last batch handed the lead to a waiting capture (perf_counter_ns)
        self.stats = GroupStats()

    @contextlib.contextmanager
    def landing(self) -> Iterator[None]:
        """Hold the queue while a written note gets its final name and is submitted: `covered` cannot look
        between the name appearing on disk and the note being queued, so no file event about a new note finds
        it neither queued nor indexed (and has a pass index it beside its batch)."""
        with self._cond:
            yield

    def submit(self, path: str, title: str) -> Ticket:
        """Queue a written note; it is pending from now until its batch has run."""
        ticket = Ticket(path, title, threading.Condition(self._cond))
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

    def covered(self, paths: Collection[str]) -> set[str]:
        """Of `paths` (file events), the ones no index pass needs to look at: notes queued for a batch that has not
        started, and notes a batch indexed whose file has not changed since (see the module docstring)."""
        with self._cond:
            out = {t.path for t in self._queue}.intersection(paths)
            out |= {p for p in paths if p in self._running and self._running[p] is None}  # about to be read
            seen: dict[str, StatKey | None] = {p: self._running.get(p) for p in paths if p in self._running}
            seen |= {p: self._recent[p] for p in paths if p in self._recent and p not in seen}
        if self._stat is not None:
            out |= {p for p, key in seen.items() if key is not None and self._stat(p) == key}
        return out

    def wait(self, ticket: Ticket) -> bool:
        """Return once `ticket`'s batch has run (leading a batch when no other is running, or when the lead
        is handed to this ticket); whether the note was indexed."""
        with self._cond:
            self._waiting += 1
            ticket.waiters += 1
        try:
            while True:
                with self._cond:
                    while not ticket.done.is_set():
                        if not self._leading:
                            self._leading = True
                            break
                        if ticket.lead:  # the batch that ended handed the lead to this note's waiters
                            ticket.lead = False
                            break
                        ticket.wake.wait()
                    if ticket.done.is_set():
                        return ticket.indexed
                    batch, self._queue = self._queue, []
                    self._running = dict.fromkeys((t.path for t in batch), None)
                try:
                    self._run(batch)
                finally:
                    with self._cond:
                        self._hand_over()
        finally:
            with self._cond:
                self._waiting -= 1
                ticket.waiters -= 1

    def _hand_over(self) -> None:
        """After a batch (the lock held): give the lead to a queued note that a capture waits for, or give
        it up when none does (the next capture to wait then leads). A note nobody waits for yet is taken by
        whichever batch runs next."""
        nxt = next((t for t in self._queue if t.waiters), None)
        if nxt is None:
            self._leading = False
            return
        nxt.lead = True
        self._handed_ns = time.perf_counter_ns()
        nxt.wake.notify()

    def waiting(self) -> int:
        """How many captures are waiting for a batch now (the leader of the running one included)."""
        with self._cond:
            return self._waiting

    def batch_stage(self, name: str, ms: float) -> None:
        """Record what a stage of the running batch took; called by `index_paths` while it runs (one batch runs
        at a time), so every note of the batch can report it (engine/write/stages.py)."""
        self._batch_stages[name] = self._batch_stages.get(name, 0.0) + ms

    def _run(self, batch: list[Ticket]) -> None:
        indexed: set[str] = set()
        started = time.perf_counter_ns()
        stages: dict[str, float] = {}
        if self._handed_ns:  # how long the capture handed the lead took to wake and start this batch
            stages["handover"] = (started - self._handed_ns) / 1e6
            self._handed_ns = 0
        self._batch_stages = stages
        for t in batch:
            t.batch_started_ns, t.batch_size, t.batch_stages = started, len(batch), stages
        before: dict[str, StatKey | None] = {}
        try:
            # each file's stat before the batch reads it: a change after that shows as a different key
            before = {t.path: self._stat(t.path) for t in batch} if self._stat is not None else {}
            with self._cond:
                self._running = {p: k for p, k in before.items() if k is not None}
            indexed = self._index_paths({t.path for t in batch})
        except IndexBusy as exc:  # another process writes the index: an expected wait, said in one line
            log.warning("indexing %d captured note(s) waits (%s); the next pass picks them up", len(batch), exc)
        except Exception:  # every ticket is still answered below: a waiter asleep on its note must wake
            log.exception("indexing %d captured note(s) failed; the next reconcile will pick them up", len(batch))
        with self._cond:
            for path in indexed:
                key = before.get(path)
                if key is not None:
                    self._recent[path] = key
                    self._recent.move_to_end(path)
            while len(self._recent) > RECENT:
                self._recent.popitem(last=False)
            self._running = {}
            missed = {t.path for t in batch} - indexed
            self.stats.batches += 1
            self.stats.notes += len(batch)
            self.stats.largest = max(self.stats.largest, len(batch))
            for t in batch:
                t.indexed = t.path in indexed
                _drop(self._pending, t)
                t.done.set()
                t.wake.notify_all()
        if missed and self.missed is not None:
            try:
                self.missed(missed)
            except Exception:
                log.exception("the notes a batch could not index could not be handed on; the next pass finds them")


def _drop(pending: dict[str, list[Ticket]], ticket: Ticket) -> None:
    left = [t for t in pending.get(ticket.title, ()) if t is not ticket]
    if left:
        pending[ticket.title] = left
    else:
        pending.pop(ticket.title, None)
