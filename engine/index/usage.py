"""Usage counters: how often each note was put in front of an agent, and when.

Two counts per note, kept in the catalog's `usage` table (a cache: deleting the catalog loses the counts
and nothing else):

- an **injection** is counted for every note the prompt-submit recall hook rendered into a prompt (direct
  hits and linked notes inside the token-budget cut);
- a **recall** is counted for every note a caller asked for on demand: the notes `memory_search` returns,
  and the direct hits of `agentmd recall` without `--preview`.

Previews (`agentmd recall --preview`), the eval harness and the hook's own search never count a recall.
Counting is best-effort: a locked or missing catalog drops the counts and logs why; it never fails the
search or the prompt that caused it. Nothing is retired from these counts: `agentmd usage` lists notes
that were never used, for a person to review.

This module holds the counting policy (which paths count, best effort, the background writer) and the
report; the SQL is the catalog's (`Catalog.counter`, `count_usage`, `usage_counts`, `note_usage`). Both
import only the standard library, so the light hook entry point can record injections.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import logging
import queue
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentmd.engine.index.catalog import Catalog, CatalogError
from agentmd.engine.index.catalog_schema import USAGE_KINDS, USAGE_SINCE_KEY
from agentmd.engine.index.catalog_usage import NoteUsage

log = logging.getLogger("agentmd.usage")

KINDS = USAGE_KINDS
SINCE_KEY = USAGE_SINCE_KEY  # meta key: when this catalog started counting


def now_stamp(when: float | None = None) -> str:
    """A UTC timestamp to the second, `YYYY-MM-DDTHH:MM:SSZ` (sorts as text)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if when is None else when))


def _unique(paths: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for p in paths:
        if p:
            seen.setdefault(p.split("#", 1)[0], None)  # a section result counts for its note
    return list(seen)


def record(
    catalog_path: Path, paths: Iterable[str], kind: str, *, when: float | None = None, timeout: float = 0.25
) -> int:
    """Add one `kind` use to each note in `paths` (a note listed twice counts once). Returns the number of
    notes counted. Raises `CatalogError` / `OSError` on failure; callers that must not fail use
    `record_quietly`. The catalog must exist (this never creates one)."""
    if kind not in KINDS:
        raise ValueError(f"usage kind {kind!r} is not one of {KINDS}")
    rows = _unique(paths)
    if not rows:
        return 0
    if not catalog_path.exists():
        raise FileNotFoundError(f"no catalog at {catalog_path}")
    with Catalog.counter(catalog_path, timeout=timeout) as catalog:
        catalog.count_usage(rows, kind, now_stamp(when))
    return len(rows)


def record_quietly(catalog_path: Path, paths: Iterable[str], kind: str, *, timeout: float = 0.25) -> int:
    """`record`, but a failure is logged and counted as nothing recorded."""
    try:
        return record(catalog_path, paths, kind, timeout=timeout)
    except (CatalogError, OSError) as exc:
        log.warning("usage counts not recorded (%s): %s", kind, exc)
        return 0


Batch = tuple[Path, list[str], str, float]  # catalog, note paths, kind, when


class _Recorder:
    """One background writer per process: the daemon's search thread hands counts over and returns at once.

    Woken by a batch, the writer waits `SETTLE` seconds before it writes, so the searches of a burst are
    written in one pass and the writer runs once in that time, not after each search: each run took the
    interpreter lock from the search answering next (and, on a busy machine, its core), the wake-up alone
    costing that answer milliseconds. `flush` cuts the wait short.

    The writer keeps its connection to each catalog open between batches (opening one, and reading the schema
    on its first statement, cost more than the write itself), and writes every batch waiting in the queue in
    one go, so a burst of searches costs one pass. A connection is opened again when the catalog file was
    replaced (a rebuild makes a new file) or a write failed."""

    KEEP = 4  # catalogs whose connection stays open (a daemon counts into one; tests make many)
    DRAIN = 256  # batches written in one pass at most
    SETTLE = 0.5  # seconds between the first batch of a burst and its write

    def __init__(self) -> None:
        self._queue: queue.Queue[Batch] = queue.Queue(maxsize=10_000)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._open: dict[Path, tuple[Catalog, tuple[int, int]]] = {}  # only the writer thread touches it
        self._hurry = threading.Event()  # set by `flush`: write what is queued without waiting

    def submit(self, catalog_path: Path, paths: list[str], kind: str) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="agentmd-usage", daemon=True)
                self._thread.start()
        try:
            self._queue.put_nowait((catalog_path, paths, kind, time.time()))
        except queue.Full:
            log.warning("usage counts dropped: the writer is %d batches behind", self._queue.qsize())

    def _run(self) -> None:
        while True:
            batches = [self._queue.get()]
            self._hurry.wait(self.SETTLE)
            while len(batches) < self.DRAIN:
                try:
                    batches.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._write(batches)
            finally:
                for _ in batches:
                    self._queue.task_done()

    def _write(self, batches: list[Batch]) -> None:
        """Write the batches in their order; consecutive ones for the same catalog, kind and second are one
        statement (a note named in two of them counts twice, as two calls of `record` would count it)."""
        groups: list[tuple[Path, str, str, list[str]]] = []
        for catalog_path, paths, kind, when in batches:
            stamp = now_stamp(when)
            last = groups[-1] if groups else None
            if last is not None and last[:3] == (catalog_path, kind, stamp):
                last[3].extend(paths)
            else:
                groups.append((catalog_path, kind, stamp, list(paths)))
        for catalog_path, kind, stamp, paths in groups:
            try:
                self._catalog(catalog_path).count_usage(paths, kind, stamp)
            except (CatalogError, OSError, ValueError) as exc:
                self._forget(catalog_path)
                log.warning("usage counts not recorded (%s): %s", kind, exc)

    def _catalog(self, catalog_path: Path) -> Catalog:
        """The open connection to this catalog, opened (again) when there is none or the file was replaced."""
        st = catalog_path.stat()  # raises FileNotFoundError when there is no catalog: nothing is created
        identity = (st.st_dev, st.st_ino)
        known = self._open.get(catalog_path)
        if known is not None and known[1] == identity:
            return known[0]
        self._forget(catalog_path)
        while len(self._open) >= self.KEEP:
            self._forget(next(iter(self._open)))
        catalog = Catalog.counter(catalog_path, timeout=5.0)
        self._open[catalog_path] = (catalog, identity)
        return catalog

    def _forget(self, catalog_path: Path) -> None:
        known = self._open.pop(catalog_path, None)
        if known is not None:
            with contextlib.suppress(CatalogError):
                known[0].close()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every submitted batch is written (tests, shutdown). False when it timed out."""
        deadline = time.monotonic() + timeout
        self._hurry.set()
        try:
            while self._queue.unfinished_tasks:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)
            return True
        finally:
            self._hurry.clear()


_recorder = _Recorder()
# A process that ends normally (the daemon on SIGTERM) writes what its searches counted in its last moments.
atexit.register(_recorder.flush, 2.0)


def record_later(catalog_path: Path, paths: Iterable[str], kind: str) -> None:
    """Queue the counts for the background writer; never blocks the caller, never raises."""
    rows = _unique(paths)
    if rows and kind in KINDS:
        _recorder.submit(catalog_path, rows, kind)


def flush(timeout: float = 5.0) -> bool:
    return _recorder.flush(timeout)


# ------------------------------------------------------------------------------------------- reading


def _reader(catalog_path: Path, timeout: float) -> Catalog:
    if not catalog_path.exists():
        raise FileNotFoundError(f"no catalog at {catalog_path}; run `agentmd reindex` first")
    return Catalog.reader(catalog_path, timeout=timeout)


def counts(catalog_path: Path, paths: Iterable[str], *, timeout: float = 1.0) -> dict[str, tuple[int, int]]:
    """path -> (injections, recalls) for the given notes (0, 0 for a note never counted)."""
    wanted = _unique(paths)
    with _reader(catalog_path, timeout) as catalog:
        counted = catalog.usage_counts(wanted)
    return {p: counted.get(p, (0, 0)) for p in wanted}


def since(catalog_path: Path, *, timeout: float = 1.0) -> str | None:
    """When this catalog started counting (the first use it recorded), or None when it never counted."""
    with _reader(catalog_path, timeout) as catalog:
        return catalog.usage_since()


def report(
    catalog_path: Path,
    *,
    unused_days: int = 90,
    today: str | None = None,
    exclude: Any = None,
    timeout: float = 5.0,
) -> tuple[list[NoteUsage], dict[str, Any]]:
    """Notes never injected nor recalled that are at least `unused_days` old (by their captured date), and
    a summary. Walled notes (archived, superseded, staged) and self-probe notes are left out, and so is
    every path for which `exclude(path)` is true (the recall-exempt areas, which recall never shows).
    Review only: nothing is changed."""
    if unused_days < 0:
        raise ValueError("unused_days must be 0 or more")
    day = dt.date.fromisoformat(today) if today else dt.datetime.now(dt.UTC).date()
    cutoff = (day - dt.timedelta(days=unused_days)).isoformat()
    with _reader(catalog_path, timeout) as catalog:
        notes = catalog.note_usage()
        started = catalog.usage_since()
    considered = [n for n in notes if not (exclude and exclude(n.path))]
    used = sum(1 for n in considered if n.injections or n.recalls)
    unused = [n for n in considered if not n.injections and not n.recalls and n.captured[:10] <= cutoff]
    summary = {
        "notes": len(considered),
        "used": used,
        "never_used": len(considered) - used,
        "listed": len(unused),
        "unused_days": unused_days,
        "captured_before": cutoff,
        "counting_since": started,
        "injections": sum(n.injections for n in considered),
        "recalls": sum(n.recalls for n in considered),
    }
    return unused, summary
