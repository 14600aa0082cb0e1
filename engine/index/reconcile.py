"""Reconcile: walk the vault, compare each note's stat key with the catalog, and converge.

This pass is the guarantee that the index matches the vault whatever events were lost. On an unchanged
vault it is a stat walk and a dictionary compare: no file is opened. A pass that would delete more than
half of a non-trivial index refuses and says why, because that is what an unmounted drive or a sync
client in the middle of a delete looks like.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import stat as stat_module
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from agentmd.engine.fsutil import MAX_READ_BYTES, read_regular
from agentmd.engine.index.catalog import KEPT_ON_REWRITE, PER_DOC_TABLES, NoteRow, StatKey
from agentmd.engine.index.fulltext import IndexDoc
from agentmd.engine.index.git_dates import added_dates
from agentmd.engine.index.store import Store
from agentmd.vault_schema import Note, parse_note, sections
from agentmd.vault_schema.digest import digest

log = logging.getLogger("agentmd.reconcile")

MASS_DELETE_MIN_INDEXED = 20  # below this many indexed notes, any deletion is allowed
MASS_DELETE_SHARE = 0.5
MAX_NOTE_BYTES = MAX_READ_BYTES  # a larger "note" is reported, not read
BATCH = 5000  # notes per index commit on a large pass (bounds memory; fewer commits build faster)

Progress = Callable[[int, int], None]


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

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 4)
        return out

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.deleted


@dataclass(frozen=True, slots=True)
class WalkResult:
    files: dict[str, StatKey]
    skipped: list[dict[str, str]]


def walk_vault(vault: Path) -> WalkResult:
    """Every `*.md` file under `vault` with its stat key; dot directories and dot files are skipped.

    Symbolic links are not followed (a linked folder can loop or lead outside the vault).
    """
    files: dict[str, StatKey] = {}
    skipped: list[dict[str, str]] = []
    stack: list[tuple[str, str]] = [(str(vault), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            skipped.append({"path": prefix or ".", "reason": f"folder unreadable: {exc.strerror}"})
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            rel = prefix + name
            try:
                if entry.is_symlink():
                    if name.lower().endswith(".md") or entry.is_dir():
                        skipped.append({"path": rel, "reason": "symbolic link (not followed)"})
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, rel + "/"))
                    continue
                if not name.lower().endswith(".md"):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                skipped.append({"path": rel, "reason": f"unreadable: {exc.strerror}"})
                continue
            if not stat_module.S_ISREG(st.st_mode):  # a FIFO would hang the reader, a device never end
                skipped.append({"path": _printable(rel), "reason": "not a regular file (FIFO, socket or device)"})
                continue
            if not _utf8(rel):
                skipped.append({"path": _printable(rel), "reason": NOT_UTF8})
                continue
            files[rel] = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
    return WalkResult(files, skipped)


NOT_UTF8 = "file name is not valid UTF-8; rename the file"


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
    summary = {k: v for k, v in report.to_dict().items() if k not in ("errors", "skipped")}
    summary["errors"] = len(report.errors)
    summary["at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    store.catalog.set_meta("last_pass", json.dumps(summary))


def last_pass(store: Store) -> dict[str, Any] | None:
    text = store.catalog.get_meta("last_pass")
    return None if text is None else dict(json.loads(text))


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
        "meta": meta,  # aliases and tags as words: what a result's confidence reads besides the text
        **digest(note.frontmatter, note.text),  # summary and opening line, for recall
    }
    return IndexDoc(
        note.path, note.title_terms, meta, note.body, note.text, note.wall, note.captured_day, facts,
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
    names += [("heading", sec.heading) for sec in sections(note.text) if sec.level and sec.heading]
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
    previous: tuple[str, str, str] | None,
    link_convention: str = "obsidian",
    git_date: Callable[[str], str | None] | None = None,
) -> Note:
    """Read and parse one note (a regular file only, up to MAX_NOTE_BYTES). A note whose frontmatter has no
    date is dated by the commit that added it (`git_date`, source `git`), else by its mtime; either date never
    moves once catalogued."""
    data = read_regular(os.path.join(vault, rel), limit=MAX_NOTE_BYTES)
    note = parse_note(rel, data, stat[0], link_convention=link_convention)
    if note.captured_source == "mtime":
        if previous is not None and previous[2] in ("mtime", "git"):
            note = replace(note, captured=previous[1], captured_source=previous[2])
        elif previous is None and git_date is not None and (added := git_date(rel)):
            note = replace(note, captured=added, captured_source="git")
    return note


def reconcile(
    vault: Path,
    store: Store,
    *,
    allow_mass_delete: bool = False,
    progress: Progress | None = None,
    only: set[str] | None = None,
    link_convention: str = "obsidian",
) -> ReconcileReport:
    """Bring the index and catalog in line with the vault. `only` limits the pass to some paths.
    `link_convention` is the contract's (which side of `[[a|b]]` names the note)."""
    start = time.perf_counter()
    report = ReconcileReport()
    if not vault.is_dir():
        report.refused = f"vault {vault} is not a directory (unmounted?); nothing was changed"
        report.seconds = time.perf_counter() - start
        return report
    with store.lock:
        return _reconcile(vault, store, report, start, allow_mass_delete, progress, only, link_convention)


def stat_paths(vault: Path, paths: set[str], skipped: list[dict[str, str]] | None = None) -> dict[str, StatKey]:
    """Stat keys of the given vault-relative paths that are indexable notes and exist. A name that is not
    valid UTF-8 cannot be stored: it is left out (and reported in `skipped`), so it never fails the pass."""
    out: dict[str, StatKey] = {}
    for rel in paths:
        parts = rel.split("/")
        if not rel.lower().endswith(".md") or any(p.startswith(".") or p in ("", "..") for p in parts):
            continue
        if not _utf8(rel):
            if skipped is not None:
                skipped.append({"path": _printable(rel), "reason": NOT_UTF8})
            continue
        try:
            st = os.stat(os.path.join(vault, rel), follow_symlinks=False)
        except OSError:
            continue
        if stat_module.S_ISREG(st.st_mode):
            out[rel] = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
    return out


def _reconcile(
    vault: Path,
    store: Store,
    report: ReconcileReport,
    start: float,
    allow_mass_delete: bool,
    progress: Progress | None,
    only: set[str] | None,
    link_convention: str,
) -> ReconcileReport:
    if only is None:
        walk = walk_vault(vault)
        report.skipped = walk.skipped
        on_disk = walk.files
        known = store.catalog.stat_keys()
        indexed = len(known)
    else:  # a pass over a few paths named by file events: no walk, no full catalog read
        on_disk = stat_paths(vault, only, report.skipped)
        only = {p for p in only if _utf8(p)}  # the catalog stores text: such a name can be in it under no key
        known = store.catalog.stat_keys(only)
        indexed = store.catalog.count() if len(known) > len(on_disk) else len(known)

    deleted = [p for p in known if p not in on_disk]
    if (
        deleted
        and not allow_mass_delete
        and indexed >= MASS_DELETE_MIN_INDEXED
        and len(deleted) > MASS_DELETE_SHARE * indexed
    ):
        report.refused = (
            f"this pass would remove {len(deleted)} of {len(known)} indexed notes, which looks like an unmounted "
            "or emptied vault; nothing was changed. If the deletion is deliberate, run "
            "`agentmd reindex --allow-mass-delete`"
        )
        report.seconds = time.perf_counter() - start
        if only is None:
            record_pass(store, report)
        return report

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
    if progress:
        progress(0, total)
    done = 0
    for i in range(0, max(total, 1), BATCH):
        batch = todo[i : i + BATCH]
        previous = store.catalog.hashes(batch)
        rows: list[NoteRow] = []
        touched: list[tuple[str, StatKey]] = []

        def documents(
            batch: list[str] = batch,
            previous: dict[str, tuple[str, str, str]] = previous,
            rows: list[NoteRow] = rows,
            touched: list[tuple[str, StatKey]] = touched,
        ) -> Iterator[IndexDoc]:
            # A generator, so the index's threads tokenise each note while the next one is parsed.
            nonlocal done
            for rel in batch:
                stat = on_disk[rel]
                prev = previous.get(rel)
                done += 1
                if progress and done % 200 == 0:
                    progress(done, total)
                try:
                    note = read_note(vault, rel, stat, prev, link_convention, git_date)
                except OSError as exc:
                    report.errors.append({"path": rel, "error": f"could not read: {exc.strerror or exc}"})
                    continue
                if prev is not None and prev[0] == note.content_hash:
                    touched.append((rel, stat))  # same bytes, new stat (touch, copy, sync client)
                    report.unchanged += 1
                    continue
                rows.append(note_row(note, stat))
                if prev is None:
                    report.added += 1
                else:
                    report.updated += 1
                yield index_doc(note)

        dels = deleted if i == 0 else []
        if batch or dels:
            store.index.apply(documents(), dels, new=new)
        if rows or dels or touched:
            store.catalog.apply(rows, dels, touched)
        report.deleted += len(dels)
    if progress:
        progress(total, total)
    if only is None and (report.changed or not store.swept):
        # The backstop for orphaned rows: every table whenever notes changed. A first pass that changed
        # nothing sweeps only the tables written apart from the notes (the usage counts, which may name a
        # path with no note); the others are only ever written in the transaction that writes their notes.
        store.catalog.sweep_orphans(PER_DOC_TABLES if report.changed else KEPT_ON_REWRITE)
        store.swept = True
    report.seconds = time.perf_counter() - start
    if only is None:
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
