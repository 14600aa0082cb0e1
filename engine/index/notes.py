"""One note read for the index and the catalog: its file parsed once into the index document and the catalog
row, in this process or in a pool of worker processes on a large pass.

`prepare` does the whole of one note's work that depends on nothing but its file and its previous catalog
row; what needs the pass (a date from git history for a new note without one) is added afterwards by
`redate`. A pass that prepares thousands of notes hands them to `prepared_in_order`, which keeps every core
parsing while the caller feeds the index, and gives the results in the order asked. The worker processes
import this module and the note model only.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import signal
import threading
import warnings
from collections import deque
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import Any

from agentmd.engine.fsutil import MAX_READ_BYTES, StillChanging, read_regular
from agentmd.engine.index.catalog_schema import NoteRow, StatKey
from agentmd.engine.index.fulltext.schema import IndexDoc, encoded, facts_of, with_facts
from agentmd.vault_schema import Note, parse_note
from agentmd.vault_schema.digest import digest
from agentmd.vault_schema.markdown import CONFLICT_START, has_conflict_markers, headings

log = logging.getLogger("agentmd.reconcile")

MAX_NOTE_BYTES = MAX_READ_BYTES  # a larger "note" is reported, not read
POOL_MIN_NOTES = 3000  # below this many notes to read, starting worker processes costs more than it saves
CHUNK = 200  # notes a worker prepares per task
MAX_WORKERS = 8
AHEAD = 2000  # notes prepared ahead of the caller at most (so the workers go on while the index commits)

HELD_CONFLICT = "conflict-markers"  # why a note holding an unresolved merge is not indexed
HELD_CHANGING = "still-changing"  # why a note whose file moved while it was read is not indexed this time

Previous = tuple[str, str, str]  # the catalog's (hash, captured, captured_source) of a note


def index_doc(note: Note) -> IndexDoc:
    meta = note.meta
    facts = {
        "title": note.title,
        "captured": note.captured,
        "captured_source": note.captured_source,
        "status": note.status,
        "lifecycle": note.lifecycle,
        "type": note.type,
        "project": note.project,
        "wall": note.wall,
        "trust": note.trust,
        "probe": note.is_probe,
        "generated": note.is_generated,
        "meta": meta,  # aliases and tags as words: what a result's confidence reads besides the text
        **digest(note.frontmatter, note.text),  # summary and opening line, for recall
    }
    return IndexDoc(
        note.path,
        note.title_terms,
        meta,
        note.body,
        note.text,
        note.wall,
        note.captured_day,
        facts,
        names=note_names(note),
    )


def note_names(note: Note) -> tuple[tuple[str, str], ...]:
    """The names a query may call the note by (kind, name): its title, its file name (for a Dendron
    hierarchy `a.b.c` also the segments `b.c` and `c`), its aliases and its headings."""
    stem = note.path.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.lower().endswith(".md") else stem
    segments = stem.split(".")
    names = [("title", note.title)]
    names += [("file name", stem)] + [("segment", ".".join(segments[i:])) for i in range(1, len(segments))]
    names += [("alias", a) for a in note.aliases]
    names += [("heading", heading) for _level, heading in headings(note.text) if heading]
    return tuple(names)


def note_row(note: Note, stat: StatKey) -> NoteRow:
    return NoteRow(
        path=note.path,
        stat=stat,
        hash=note.content_hash,
        captured=note.captured,
        captured_source=note.captured_source,
        title=note.title,
        status=note.status,
        lifecycle=note.lifecycle,
        type=note.type,
        project=note.project,
        superseded_by=note.superseded_by,
        wall=note.wall,
        flags=note.flags,
        frontmatter_error=note.frontmatter_error,
        tags=note.tags,
        aliases=note.aliases,
        links=note.links,
        entities=note.entities,
        entity_page=note.entity_page,
    )


def read_note(
    vault: Path,
    rel: str,
    stat: StatKey,
    previous: Previous | None,
    link_convention: str = "obsidian",
    git_date: Callable[[str], str | None] | None = None,
) -> Note:
    """Read and parse one note (a regular file only, up to MAX_NOTE_BYTES). A note whose frontmatter has no
    date is as old as the first sign of it: the commit that added it (`git_date`, source `git`) or its mtime,
    whichever is earlier (a clone's files are all new, while a vault put in git today keeps its files' times;
    both are ISO 8601 UTC stamps of one shape, so their text compares as time does); either date never moves
    once catalogued. Raises `StillChanging` when the file's mtime or size is no longer `stat`'s."""
    return _parsed(rel, _read(vault, rel, stat), stat, previous, link_convention, git_date)


def _read(vault: Path, rel: str, stat: StatKey) -> bytes:
    return read_regular(os.path.join(vault, rel), limit=MAX_NOTE_BYTES, expect=(stat[0], stat[1]))


_CONFLICT_START = CONFLICT_START.encode()


def _parsed(
    rel: str,
    data: bytes,
    stat: StatKey,
    previous: Previous | None,
    link_convention: str,
    git_date: Callable[[str], str | None] | None = None,
) -> Note:
    note = parse_note(rel, data, stat[0], link_convention=link_convention)
    if note.captured_source == "mtime":
        if previous is not None and previous[2] in ("mtime", "git"):
            note = replace(note, captured=previous[1], captured_source=previous[2])
        elif previous is None and git_date is not None and (added := git_date(rel)) and added < note.captured:
            note = replace(note, captured=added, captured_source="git")
    return note


@dataclass(frozen=True, slots=True)
class Prepared:
    """One note read for a pass: its document and row, or why there is none."""

    path: str
    error: str | None = None  # the file could not be read
    same: bool = False  # the bytes are those the catalog already has (a touch, a copy, a sync client)
    held: str | None = None  # not indexed this time, and why: `conflict-markers`, `still-changing`
    doc: IndexDoc | None = None
    row: NoteRow | None = None
    undated: bool = False  # a new note dated by its mtime: the commit that added it may date it instead

    def __reduce__(self) -> tuple[type[Prepared], tuple[Any, ...]]:
        # pickled as its fields through the constructor, a third of the default's cost to load
        return Prepared, tuple(getattr(self, name) for name in self.__slots__)


def prepare(vault: Path, rel: str, stat: StatKey, previous: Previous | None, link_convention: str) -> Prepared:
    """Read and parse one note into its index document and catalog row. A note is held back, not indexed, when
    it holds a merge's unresolved conflict markers or when its file changed while it was read (a sync client
    mid-write: the next pass reads it)."""
    try:
        data = _read(vault, rel, stat)
    except StillChanging:
        return Prepared(rel, held=HELD_CHANGING)
    except OSError as exc:
        return Prepared(rel, error=f"could not read: {exc.strerror or exc}")
    if _CONFLICT_START in data and has_conflict_markers(data.decode("utf-8", "replace")):
        return Prepared(rel, held=HELD_CONFLICT)
    note = _parsed(rel, data, stat, previous, link_convention)
    if previous is not None and previous[0] == note.content_hash:
        return Prepared(rel, same=True)
    undated = previous is None and note.captured_source == "mtime"
    return Prepared(rel, doc=encoded(index_doc(note)), row=note_row(note, stat), undated=undated)


def redate(prepared: Prepared, captured: str, source: str = "git") -> Prepared:
    """The prepared note captured at `captured` (from `source`) instead of its mtime."""
    assert prepared.doc is not None and prepared.row is not None
    facts = {**facts_of(prepared.doc), "captured": captured, "captured_source": source}
    day = int(captured[:10].replace("-", ""))  # as Note.captured_day
    return replace(
        prepared,
        doc=with_facts(replace(prepared.doc, day=day), facts),
        row=replace(prepared.row, captured=captured, captured_source=source),
        undated=False,
    )


Task = tuple[str, StatKey, Previous | None]


def _worker_start() -> None:
    """A worker leaves an interrupt (Ctrl-C reaches the whole process group) to the pass that started it, and
    keeps its garbage collector off what it started with (a forked worker holds its parent's objects)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.freeze()


def _prepare_chunk(vault: Path, link_convention: str, tasks: Sequence[Task]) -> list[Prepared]:
    return [prepare(vault, rel, stat, prev, link_convention) for rel, stat, prev in tasks]


def pool_size(notes: int, workers: int | None) -> int:
    """Worker processes for a pass that reads `notes` notes: `workers` when given, else one a core when there
    are several cores and enough notes to pay for starting them (0: read in this process)."""
    if workers is not None:
        return max(0, workers)
    cores = os.cpu_count() or 1
    return min(cores, MAX_WORKERS) if cores > 1 and notes >= POOL_MIN_NOTES else 0


# Tantivy's watcher of an open index's files (`/proc` shows a thread's name cut to 15 characters). It only
# polls a file; the workers never call into Tantivy.
_IDLE_THREADS = ("thread-tantivy-",)


def fork_is_safe() -> bool:
    """Whether worker processes may be forked from this one: on Linux, when its only threads are the main one
    and Tantivy's file watchers. A forked worker starts in milliseconds where a spawned one starts an
    interpreter and imports the note model (0.3-0.4 s of CPU each); a process with any other thread (the
    daemon's, an index writer's indexing threads) spawns its workers, since a fork copies no thread but the
    caller and another thread may hold a lock the copy then waits on forever."""
    if "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        return False
    try:
        tasks = [t for t in os.listdir("/proc/self/task") if t != str(os.getpid())]
        names = [Path(f"/proc/self/task/{t}/comm").read_text(encoding="utf-8").strip() for t in tasks]
    except OSError:  # not Linux, or a thread ended meanwhile
        return False
    return all(name in _IDLE_THREADS for name in names)


class PreparedStream:
    """`prepare` of every task, in order: iterate it, then `close` it (which stops the workers of a pass that
    failed). With `workers`, the notes are read by that many processes, started and given their first
    chunks at once, so they are already reading while the caller opens the index's writer (forked while this
    process is still free of threads, see `fork_is_safe`), and kept a few chunks ahead of the caller (so
    memory stays bounded). A pool that cannot start or breaks (a worker killed) leaves the remaining notes
    to this process. `fork`: fork or spawn the workers whatever `fork_is_safe` says (for tests)."""

    def __init__(
        self, vault: Path, tasks: Sequence[Task], link_convention: str, workers: int, *, fork: bool | None = None
    ) -> None:
        self._vault, self._tasks, self._convention = vault, tasks, link_convention
        self._pool: ProcessPoolExecutor | None = None
        self._ahead: deque[Future[list[Prepared]]] = deque()
        self._chunks = iter(range(0, len(tasks), CHUNK))
        self._limit = max(2 * workers, AHEAD // CHUNK)
        if workers > 0 and len(tasks) > CHUNK:
            method = "fork" if (fork_is_safe() if fork is None else fork) else "spawn"
            try:
                with warnings.catch_warnings():  # Python 3.12 warns of any thread at a fork: see fork_is_safe
                    warnings.simplefilter("ignore", DeprecationWarning)
                    self._pool = ProcessPoolExecutor(
                        workers, mp_context=multiprocessing.get_context(method), initializer=_worker_start
                    )
                    self._submit(self._limit)
            except (OSError, ValueError, BrokenProcessPool) as exc:
                log.warning("notes read in this process: worker processes did not start (%s)", exc)
                self._stop()
        self._results = self._generate()

    def _submit(self, n: int) -> None:
        assert self._pool is not None
        for i in islice(self._chunks, n):
            chunk = self._tasks[i : i + CHUNK]
            self._ahead.append(self._pool.submit(_prepare_chunk, self._vault, self._convention, chunk))

    def _generate(self) -> Generator[Prepared, None, None]:
        done = 0
        if self._pool is not None:
            try:
                while self._ahead:
                    results = self._ahead.popleft().result()
                    self._submit(1)
                    done += len(results)
                    yield from results
            except (BrokenProcessPool, OSError) as exc:
                log.warning("notes read in this process: a worker process failed (%s)", exc)
            finally:
                self._stop()
        for rel, stat, prev in self._tasks[done:]:
            yield prepare(self._vault, rel, stat, prev, self._convention)

    def _stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._ahead.clear()

    def __iter__(self) -> PreparedStream:
        return self

    def __next__(self) -> Prepared:
        return next(self._results)

    def close(self) -> None:
        self._results.close()
        self._stop()


def prepared_in_order(vault: Path, tasks: Sequence[Task], link_convention: str, workers: int) -> PreparedStream:
    """`prepare` of every task, in order, read by `workers` processes (0: this one): see `PreparedStream`."""
    return PreparedStream(vault, tasks, link_convention, workers)
