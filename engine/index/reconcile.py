"""Reconcile: walk the vault, compare each note's stat key with the catalog, and converge.

This pass is the guarantee that the index matches the vault whatever events were lost. On an unchanged
vault it is a stat walk and a dictionary compare: no file is opened. A pass that would delete more than
half of a non-trivial index refuses and says why, because that is what an unmounted drive or a sync
client in the middle of a delete looks like.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import logging
import os
import stat as stat_module
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG
from typing import TypedDict, cast

from agentmd.engine.breaker import DELETION_WINDOW, RecentDeletions, is_mass_deletion, is_note
from agentmd.engine.failpoints import failpoint
from agentmd.engine.index.catalog_schema import KEPT_ON_REWRITE, PER_DOC_TABLES, NoteRow, StatKey
from agentmd.engine.index.checkout import checkout_refusal, note_branch
from agentmd.engine.index.fulltext.schema import IndexDoc
from agentmd.engine.index.git_dates import added_dates
from agentmd.engine.index.notes import HELD_CONFLICT, pool_size, prepared_in_order, redate
from agentmd.engine.index.store import Store
from agentmd.engine.synctools import (
    CONFLICT_COPY,
    COPY_READ_BYTES,
    ambiguous_copy,
    conflict_copy,
    evicted_note,
    is_sync_temp,
    may_be_copy,
    placeholder_of,
)
from agentmd.rules.contract.synctool import NO_PATTERNS, SyncToolPatterns

log = logging.getLogger("agentmd.reconcile")

BATCH = 10_000  # notes per index and catalog commit on a large pass (bounds memory; fewer commits build faster)
READ_ERRORS_KEPT = 5  # files that could not be read, kept by path in the pass record for status to name
HELD_KEPT = 50  # conflict copies and notes with conflict markers, kept by path in the pass record for status

Progress = Callable[[int, int], None]

RECENT_DELETIONS_KEY = "recent_deletions"  # catalog meta: the notes gone lately (engine/breaker.RecentDeletions)


@dataclass
class ReconcileReport:
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    refused: str | None = None
    skipped: list[dict[str, str]] = field(default_factory=list)  # files not indexed, with the reason
    interrupted: bool = False  # stopped before the end (the daemon shutting down): the next pass finishes it

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 4)
        return out

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.deleted


class PassRecord(TypedDict, total=False):
    """What the catalog keeps of the last full pass, for `agentmd status`: the report's counts, the files it
    could not read (the first few named) and what it held back from the index."""

    added: int
    updated: int
    deleted: int
    unchanged: int
    seconds: float
    refused: str | None
    interrupted: bool
    errors: int
    read_errors: list[dict[str, str]]  # path and error
    sync_conflicts: int
    sync_conflicts_named: list[dict[str, str]]  # path and reason
    conflict_markers: int
    conflict_markers_named: list[dict[str, str]]
    at: str  # ISO time


@dataclass(frozen=True, slots=True)
class WalkResult:
    files: dict[str, StatKey]
    skipped: list[dict[str, str]]
    evicted: set[str] = field(default_factory=set)  # notes an iCloud placeholder says are "not here"


_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = _ROOT_FLAGS | os.O_NOFOLLOW


def walk_vault(vault: Path, patterns: SyncToolPatterns = NO_PATTERNS) -> WalkResult:
    """Every `*.md` file under `vault` with its stat key; dot directories and dot files are skipped, and so
    are a sync tool's temp files and its conflict copies (reported in `skipped`, with the copy's original).
    iCloud placeholders (`.Note.md.icloud`) name their notes in `evicted`. `patterns`: the contract's own
        sync-tool patterns (`sync_tool_patterns`), honoured beside the built-in ones.

        Symbolic links are not followed (a linked folder can loop or lead outside the vault). Each folder is
        opened once and its notes are stat'ed by name relative to it, which spares the kernel a lookup of the
        whole path for every note (a quarter of a walk's time at 10,000 notes).
    """
    files: dict[str, StatKey] = {}
    skipped: list[dict[str, str]] = []
    try:
        top = os.open(vault, _ROOT_FLAGS)
    except OSError as exc:
        skipped.append({"path": ".", "reason": f"folder unreadable: {exc.strerror}"})
        return WalkResult(files, skipped)
    evicted: set[str] = set()
    try:
        stack = [""]
        while stack:
            prefix = stack.pop()
            try:
                fd = os.open(prefix[:-1], _DIR_FLAGS, dir_fd=top) if prefix else top
            except OSError as exc:
                skipped.append({"path": _printable(prefix[:-1]), "reason": f"folder unreadable: {exc.strerror}"})
                continue
            try:
                _walk_folder(fd, prefix, files, skipped, stack, evicted, patterns)
            finally:
                if fd != top:
                    os.close(fd)
    finally:
        os.close(top)
    return WalkResult(files, skipped, evicted)


def _walk_folder(
    fd: int,
    prefix: str,
    files: dict[str, StatKey],
    skipped: list[dict[str, str]],
    stack: list[str],
    evicted: set[str],
    patterns: SyncToolPatterns = NO_PATTERNS,
) -> None:
    """Add the notes of the open folder `fd` (vault-relative `prefix`, "" or ending in "/") to `files`, what
    is left out and why to `skipped`, its subfolders to `stack` and the notes its iCloud placeholders stand
    for to `evicted`."""
    try:
        entries = list(os.scandir(fd))
    except OSError as exc:
        skipped.append({"path": _printable(prefix[:-1]) or ".", "reason": f"folder unreadable: {exc.strerror}"})
        return
    maybe: list[tuple[str, StatKey]] = []  # named as an ambiguous conflict copy: decided once the folder is read
    for entry in entries:
        name = entry.name
        if name[0] == ".":
            if (name.endswith(".icloud") or patterns) and (note := evicted_note(prefix + name, patterns)) is not None:
                evicted.add(note)
            continue
        rel = prefix + name
        try:
            if name.endswith(".md") or name.lower().endswith(".md"):
                if name[0] == "~" and is_sync_temp(name):  # ~$Note.md: an Office / OneDrive owner file
                    continue
                if patterns and is_sync_temp(rel, patterns):  # the contract's own temp names
                    continue
                st = entry.stat(follow_symlinks=False)  # one fstatat: its mode says file, link or folder
                mode = st.st_mode
                if S_ISREG(mode):
                    # The unambiguous copies (Syncthing, Dropbox, Nextcloud, ownCloud, Obsidian Sync) are left
                    # out by name. `Note 2.md`, `Note (1).md` and `Note-PC.md` are also the names Obsidian and
                    # people give real notes ("Untitled 2", a note copied): those are copies only when the
                    # original is in the folder and the two read as versions of one note (below).
                    if ("onflict" in name or patterns) and (found := conflict_copy(rel, extra=patterns)) is not None:
                        skipped.append({"path": _printable(rel), "reason": found.reason})
                        continue
                    if may_be_copy(name) and (rel.isascii() or _utf8(rel)):
                        maybe.append((rel, (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)))
                        continue
                    if rel.isascii() or _utf8(rel):  # (an ASCII name is valid UTF-8, and says so in O(1))
                        files[rel] = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
                    else:
                        skipped.append({"path": _printable(rel), "reason": NOT_UTF8})
                    continue
                if S_ISLNK(mode):
                    skipped.append({"path": _printable(rel), "reason": "symbolic link (not followed)"})
                    continue
                if not S_ISDIR(mode):  # a FIFO would hang the reader, a device never end
                    skipped.append({"path": _printable(rel), "reason": "not a regular file (FIFO, socket or device)"})
                    continue
            elif not entry.is_dir(follow_symlinks=False):
                if entry.is_symlink() and entry.is_dir():
                    skipped.append({"path": _printable(rel), "reason": "symbolic link (not followed)"})
                elif patterns and (note := evicted_note(rel, patterns)) is not None:
                    evicted.add(note)
                continue
            elif patterns and patterns.is_temp_folder(name):  # a folder the tool keeps for itself
                continue
        except OSError as exc:
            skipped.append({"path": _printable(rel), "reason": f"unreadable: {exc.strerror}"})
            continue
        stack.append(rel + "/")
    if maybe:
        _copies_or_notes(fd, prefix, {e.name for e in entries}, maybe, files, skipped)


def _copies_or_notes(
    fd: int,
    prefix: str,
    names: set[str],
    maybe: list[tuple[str, StatKey]],
    files: dict[str, StatKey],
    skipped: list[dict[str, str]],
) -> None:
    """Notes named as Google Drive's, iCloud's or OneDrive's conflict copies: left out when their original is
    in the folder (`names`) and the two read as versions of one note, else added as notes."""

    def read(path: str) -> bytes | None:
        try:
            handle = os.open(path[len(prefix) :], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError:
            return None
        try:
            return os.read(handle, COPY_READ_BYTES)
        except OSError:
            return None
        finally:
            os.close(handle)

    for rel, key in maybe:
        found = ambiguous_copy(rel, lambda path: path[len(prefix) :] in names, read)
        if found is not None:
            skipped.append({"path": _printable(rel), "reason": found.reason})
        else:
            files[rel] = key


NOT_UTF8 = "file name is not valid UTF-8; rename the file"


def has_placeholder(vault: Path, rel: str, patterns: SyncToolPatterns = NO_PATTERNS) -> bool:
    """Whether a note missing from its folder has a placeholder there (iCloud's `.Note.md.icloud`, or one of
    the contract's placeholder patterns): "not here", not deleted."""
    if os.path.lexists(os.path.join(vault, placeholder_of(rel))):
        return True
    if not patterns.placeholder:
        return False
    folder, _, name = rel.rpartition("/")
    try:
        names = os.listdir(os.path.join(vault, folder) if folder else vault)
    except OSError:
        return False
    return any(patterns.placeholder_original(n) == name for n in names)


def _utf8(rel: str) -> bool:
    """Whether a path (as the OS gave it, undecodable bytes as surrogates) is valid UTF-8 text."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(rel: str) -> str:
    """A path that can be logged, stored and sent: undecodable bytes shown as U+FFFD."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace") if not _utf8(rel) else rel


def record_pass(store: Store, report: ReconcileReport) -> None:
    """Remember when the last pass ran and what it did, for `agentmd status`."""
    copies = [s for s in report.skipped if s["reason"].startswith(CONFLICT_COPY)]
    marked = [s for s in report.skipped if s["reason"] == HELD_CONFLICT]
    summary: PassRecord = {
        "added": report.added,
        "updated": report.updated,
        "deleted": report.deleted,
        "unchanged": report.unchanged,
        "seconds": round(report.seconds, 4),
        "refused": report.refused,
        "interrupted": report.interrupted,
        "errors": len(report.errors),
        "read_errors": report.errors[:READ_ERRORS_KEPT],  # the files status names
        "sync_conflicts": len(copies),
        "sync_conflicts_named": copies[:HELD_KEPT],
        "conflict_markers": len(marked),
        "conflict_markers_named": marked[:HELD_KEPT],
    }
    summary["at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    store.catalog.set_pass_record(json.dumps(summary))


def last_pass(store: Store) -> PassRecord | None:
    text = store.catalog.pass_record()
    try:
        return None if text is None else cast(PassRecord, dict(json.loads(text)))
    except ValueError:  # a record torn by a crash: as if no pass had been recorded since
        return None


def reconcile(
    vault: Path,
    store: Store,
    *,
    allow_mass_delete: bool = False,
    progress: Progress | None = None,
    only: set[str] | None = None,
    link_convention: str = "obsidian",
    workers: int | None = None,
    stop: Callable[[], bool] | None = None,
    sync_patterns: SyncToolPatterns = NO_PATTERNS,
) -> ReconcileReport:
    """Bring the index and catalog in line with the vault. `only` limits the pass to some paths.
    `link_convention` is the contract's (which side of `[[a|b]]` names the note). `workers`: how many
    processes read the notes (0: this one); by default one a core on a pass with thousands to read.
    `stop`, asked before each note, ends the pass early (a daemon shutting down): what was read so far is
    committed to the index and catalog together, and the report says `interrupted`. `sync_patterns`: the
    contract's own sync-tool patterns (temp files, conflict copies, placeholders), beside the built-in ones."""
    failpoint("reconcile-pass")
    start = time.perf_counter()
    report = ReconcileReport()
    if not vault.is_dir():
        report.refused = f"vault {vault} is not a directory (unmounted?); nothing was changed"
        report.seconds = time.perf_counter() - start
        return report
    with store.lock:
        return _reconcile(
            vault,
            store,
            report,
            start,
            allow_mass_delete,
            progress,
            only,
            link_convention,
            workers,
            stop,
            sync_patterns,
        )


def _reader(vault: Path) -> Callable[[str], bytes | None]:
    """A vault-relative file's first `COPY_READ_BYTES`, or None (the conflict-copy check's `read`)."""

    def read(rel: str) -> bytes | None:
        try:
            with open(os.path.join(vault, rel), "rb") as fh:
                return fh.read(COPY_READ_BYTES)
        except OSError:
            return None

    return read


def stat_paths(
    vault: Path,
    paths: set[str],
    skipped: list[dict[str, str]] | None = None,
    patterns: SyncToolPatterns = NO_PATTERNS,
) -> dict[str, StatKey]:
    """Stat keys of the given vault-relative paths that are indexable notes and exist. A name that is not
    valid UTF-8 cannot be stored: it is left out (and reported in `skipped`), so it never fails the pass; so
    is a sync tool's conflict copy (with its original), and a temp file by the contract's `patterns`."""
    out: dict[str, StatKey] = {}
    for rel in paths:
        if not is_note(rel):
            continue
        if not _utf8(rel):
            if skipped is not None:
                skipped.append({"path": _printable(rel), "reason": NOT_UTF8})
            continue
        if patterns and is_sync_temp(rel, patterns):
            continue
        found = conflict_copy(rel, extra=patterns)
        if found is None and may_be_copy(rel.rpartition("/")[2]):  # as the walk does (see `_copies_or_notes`)
            found = ambiguous_copy(rel, lambda path: os.path.isfile(os.path.join(vault, path)), _reader(vault))
        if found is not None:
            if skipped is not None:
                skipped.append({"path": rel, "reason": found.reason})
            continue
        try:
            st = os.stat(os.path.join(vault, rel), follow_symlinks=False)
        except OSError:
            continue
        if stat_module.S_ISREG(st.st_mode):
            out[rel] = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
    return out


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector held off while a walk and the catalog's stat keys make their tens of
    thousands of tuples and strings (none of them in a cycle): in a process holding a large heap (a daemon, a
    build just done) the collections they would set off cost more than the walk itself (measured at 10,000
    notes: 72-82 ms a pass with them, 51-57 ms without). The collector runs again afterwards, as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _reconcile(
    vault: Path,
    store: Store,
    report: ReconcileReport,
    start: float,
    allow_mass_delete: bool,
    progress: Progress | None,
    only: set[str] | None,
    link_convention: str,
    workers: int | None,
    stop: Callable[[], bool] | None = None,
    patterns: SyncToolPatterns = NO_PATTERNS,
) -> ReconcileReport:
    if only is None:
        with _collector_paused():
            walk = walk_vault(vault, patterns) if patterns else walk_vault(vault)
            report.skipped = walk.skipped
            if walk.evicted:  # an evicted note stays as last indexed: its catalog key stands for the file
                kept = store.catalog.stat_keys(walk.evicted - walk.files.keys())
                walk.files.update(kept)
            if store.catalog.holds_stat_keys(walk.files):  # the usual pass: nothing changed (one compare in C)
                report.unchanged = len(walk.files)
                del walk  # freed while the collector is off, the walk's tuples never cost it a look
                return _finish(store, report, start, fresh=False)
            known = store.catalog.stat_keys()
        on_disk = walk.files
        indexed = len(known)
    else:  # a pass over a few paths named by file events: no walk, no full catalog read
        on_disk = stat_paths(vault, only, report.skipped, patterns)
        gone = {p for p in only if p not in on_disk and is_note(p)}
        evicted = {p for p in gone if has_placeholder(vault, p, patterns)}
        only = {p for p in only if _utf8(p)}  # the catalog stores text: such a name can be in it under no key
        known = store.catalog.stat_keys(only)
        on_disk.update((p, known[p]) for p in evicted if p in known)
        indexed = store.catalog.count() if len(known) > len(on_disk) else len(known)

    deleted = [p for p in known if p not in on_disk]
    recent, after = None, 0
    if deleted:  # the count of notes over the last hour: a note moved (one gone, one new) leaves it as it was
        total = store.catalog.count()
        after = total - len(deleted) + sum(1 for p in on_disk if p not in known)
        recent = RecentDeletions.load(store.catalog.get_meta(RECENT_DELETIONS_KEY), time.time(), total)
    at_once = is_mass_deletion(len(deleted), indexed)
    if deleted and not allow_mass_delete and (at_once or (recent is not None and recent.trips(after))):
        away = checkout_refusal(vault, store, len(deleted), store.catalog.count())  # on an old commit, another branch
        earlier = 0 if at_once or recent is None else max(0, recent.peak - store.catalog.count())
        report.refused = away or (
            f"this pass would remove {len(deleted)} of {indexed} indexed notes"
            if at_once or recent is None
            else f"this pass would leave {after} notes of the {recent.peak} the index held within the last "
            f"{DELETION_WINDOW / 3600:g} hour, deleted a few at a time"
        ) + (
            ", which looks like an unmounted or emptied vault (or a sync client deleting it); this pass changed "
            "nothing"
            + (
                f", but the {earlier} deletions before it in that hour went through (if they were not meant, "
                "`agentmd log` shows the commits that hold them and `agentmd undo` takes one back)"
                if earlier
                else ""
            )
            + ". If the deletion is deliberate, run `agentmd reindex --allow-mass-delete`"
        )
        report.seconds = time.perf_counter() - start
        if only is None:
            record_pass(store, report)
        return report
    if recent is not None:  # the window's peak kept; allowed, it starts afresh from what is left
        window = RecentDeletions(time.time(), after) if allow_mass_delete else recent
        store.catalog.set_meta(RECENT_DELETIONS_KEY, window.dump())
    note_branch(vault, store)

    todo = [p for p, st in on_disk.items() if known.get(p) != st]
    report.unchanged = len(on_disk) - len(todo)
    added: dict[str, str] | None = None

    def git_date(rel: str) -> str | None:
        # one `git log` per pass, run only when a new note without a frontmatter date needs it
        nonlocal added
        if added is None:
            new = [p for p in todo if p not in known]
            added = added_dates(vault, new, whole_history=only is None)
        return added.get(rel)

    total = len(todo)
    # A pass into an empty index (a first build, a rebuild) adds every document without replacing one: the
    # store's lock keeps any other writer out until it ends, and no path comes twice.
    new = only is None and bool(todo) and store.index.doc_count() == 0
    # Into an empty catalog as well, the rows are inserted without deleting any first, while the index commits.
    fresh = new and not known and store.catalog.is_empty()
    if progress:
        progress(0, total)
    previous = store.catalog.hashes(todo)
    tasks = [(rel, on_disk[rel], previous.get(rel)) for rel in todo]
    stream = prepared_in_order(vault, tasks, link_convention, pool_size(total, workers))
    done = 0
    try:
        for i in range(0, max(total, 1), BATCH):
            size = len(tasks[i : i + BATCH])
            rows: list[NoteRow] = []
            touched: list[tuple[str, StatKey]] = []

            def documents(
                size: int = size, rows: list[NoteRow] = rows, touched: list[tuple[str, StatKey]] = touched
            ) -> Iterator[IndexDoc]:
                # A generator, so the index's threads tokenise each note while the next one is parsed.
                nonlocal done
                for prepared in islice(stream, size):
                    if stop is not None and stop():
                        report.interrupted = True
                        return
                    rel = prepared.path
                    done += 1
                    if progress and done % 200 == 0:
                        progress(done, total)
                    if prepared.error is not None:
                        report.errors.append({"path": rel, "error": prepared.error})
                        continue
                    if prepared.held is not None:  # a note already indexed keeps the version last read
                        report.skipped.append({"path": rel, "reason": prepared.held})
                        continue
                    if prepared.same:
                        touched.append((rel, on_disk[rel]))  # same bytes, new stat (touch, copy, sync client)
                        report.unchanged += 1
                        continue
                    mtime = prepared.row.captured if prepared.row is not None else ""
                    if prepared.undated and (date := git_date(rel)) and date < mtime:
                        prepared = redate(prepared, date)  # added to git before its file's time: a clone
                    assert prepared.doc is not None and prepared.row is not None
                    rows.append(prepared.row)
                    if rel in previous:
                        report.updated += 1
                    else:
                        report.added += 1
                    yield prepared.doc

            dels = deleted if i == 0 else []
            if fresh:
                with ExitStack() as staged:  # the catalog commits after the index, or rolls back
                    adding = store.catalog.adding(rows)
                    store.index.apply(documents(), new=True, alongside=partial(staged.enter_context, adding))
                continue
            if size or dels:
                store.index.apply(documents(), dels, new=new)
            if rows or dels or touched:
                store.catalog.apply(rows, dels, touched)
            report.deleted += len(dels)
            if report.interrupted:
                break
    finally:
        stream.close()  # stops the worker processes of a pass that failed
    if progress and not report.interrupted:
        progress(total, total)
    return _finish(store, report, start, fresh=fresh, full=only is None and not report.interrupted)


def _finish(store: Store, report: ReconcileReport, start: float, *, fresh: bool, full: bool = True) -> ReconcileReport:
    """Sweep orphaned rows when the pass calls for it, record a full pass and keep its stat keys' snapshot."""
    if full and (report.changed or not store.swept):
        # The backstop for orphaned rows: every table whenever notes changed. A first pass that changed
        # nothing sweeps only the tables written apart from the notes (the usage counts, which may name a
        # path with no note); the others are only ever written in the transaction that writes their notes.
        # (A build into an empty catalog wrote every per-document row beside its note: only the usage counts,
        # kept through it, can name a path that has none.)
        store.catalog.sweep_orphans(PER_DOC_TABLES if report.changed and not fresh else KEPT_ON_REWRITE)
        store.swept = True
    if full:
        store.catalog.save_stat_snapshot()  # for the next process's first pass (written only when they changed)
    report.seconds = time.perf_counter() - start
    if full:
        record_pass(store, report)
    if report.changed:
        log.info(
            "reconcile: %d added, %d updated, %d deleted, %d unchanged in %.2fs",
            report.added,
            report.updated,
            report.deleted,
            report.unchanged,
            report.seconds,
        )
    return report
