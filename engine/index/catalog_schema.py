"""The catalog's tables, their version and the note row they hold: the schema a catalog file is created with or
migrated to, and how a connection to an existing file is opened. Standard library only at load time (the
note model's `Link` and `EntityRef` are named for the type checker alone)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentmd.vault_schema import EntityRef, Link

SCHEMA_VERSION = 4  # 2: links and entities tables; 3: notes looked up by title; 4: notes listed by date
PER_DOC_TABLES = ("tags", "aliases", "usage", "links", "entities")
# Per-document tables whose rows belong to the path rather than to the note's content: an edit or a
# rebuild keeps them (the orphan sweep drops them once the note is gone). `usage` holds the recall
# hook's injection and on-demand recall counts (engine/index/usage.py).
KEPT_ON_REWRITE = ("usage",)
USAGE_KINDS = ("injection", "recall")
USAGE_SINCE_KEY = "usage_since"  # meta key: when this catalog started counting

# meta key: a fresh random value written in every transaction that changes a note's stat key, so that a copy
# of the stat keys made at one value is known to be exact while the catalog still holds it
STAT_TOKEN_KEY = "stat_keys_token"
STAT_SNAPSHOT_SUFFIX = ".statkeys"  # the stat keys' snapshot, beside the catalog file
# The record of the last full pass, beside the catalog file: a file replaced in one rename, where a row in the
# catalog would make every process's first pass wait on sqlite syncing a new write-ahead log to disk.
PASS_RECORD_SUFFIX = ".lastpass"
PASS_RECORD_KEY = "last_pass"  # meta key where catalogs of earlier versions kept that record

# What every catalog query raises when the database is missing, locked past the wait, or of another schema.
CatalogError = sqlite3.Error

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notes (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    hash TEXT NOT NULL,
    captured TEXT NOT NULL,
    captured_source TEXT NOT NULL,
    title TEXT NOT NULL,
    status TEXT,
    lifecycle TEXT,
    type TEXT,
    project TEXT,
    superseded_by TEXT,
    wall TEXT,
    flags TEXT NOT NULL DEFAULT '',
    frontmatter_error TEXT
);
CREATE INDEX IF NOT EXISTS notes_title ON notes(title);
CREATE INDEX IF NOT EXISTS notes_captured ON notes(captured);
CREATE TABLE IF NOT EXISTS tags (path TEXT NOT NULL, tag TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tags_path ON tags(path);
CREATE INDEX IF NOT EXISTS tags_tag ON tags(tag);
CREATE TABLE IF NOT EXISTS aliases (path TEXT NOT NULL, alias TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_path ON aliases(path);
CREATE TABLE IF NOT EXISTS links (
    path TEXT NOT NULL,
    line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    target_key TEXT NOT NULL,
    heading TEXT,
    block TEXT,
    alias TEXT,
    embed INTEGER NOT NULL,
    attachment INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS links_path ON links(path);
CREATE INDEX IF NOT EXISTS links_key ON links(target_key);
CREATE TABLE IF NOT EXISTS entities (
    path TEXT NOT NULL,
    uri TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    line INTEGER NOT NULL,
    page INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS entities_path ON entities(path);
CREATE INDEX IF NOT EXISTS entities_uri ON entities(uri);
CREATE TABLE IF NOT EXISTS usage (
    path TEXT PRIMARY KEY,
    injections INTEGER NOT NULL DEFAULT 0,
    recalls INTEGER NOT NULL DEFAULT 0,
    last_injected TEXT,
    last_recalled TEXT
);
"""

StatKey = tuple[int, int, int, int]  # mtime_ns, size, ctime_ns, inode


# How long a writer waits for another one (the usage counter, a second process) before "database is locked".
# Every write is short (one batch of rows), so a long wait only ever covers a burst of them.
BUSY_TIMEOUT = 30.0


def schema_version(db: sqlite3.Connection) -> str | None:
    """The catalog's recorded schema version, None for a new file (no meta table or no version row)."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    return None if row is None else str(row[0])


DDL_NAMES = frozenset(re.findall(r"CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)", DDL))

# How a catalog of an older schema becomes the current one in place, keeping its rows (and so sparing a
# rebuild of the whole vault): the statements that take it from each version to the next. A version with
# no entry here is recreated empty instead.
MIGRATIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    # the capture's twin check and the enrich job look notes up by title: without this every look-up
    # read the whole table
    "2": ("3", ("CREATE INDEX IF NOT EXISTS notes_title ON notes(title)",)),
    # a query that is a time alone lists the notes of that time, newest first (engine/search/dated.py)
    "3": ("4", ("CREATE INDEX IF NOT EXISTS notes_captured ON notes(captured)",)),
}


def has_schema(db: sqlite3.Connection) -> bool:
    """Whether every table and index the schema declares exists (read-only)."""
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    return names >= DDL_NAMES


def connect_existing(path: Path, mode: str, timeout: float) -> sqlite3.Connection:
    """A connection to a catalog file that must already exist (`mode` "ro" or "rw"; never creates it)."""
    uri = f"{path.resolve().as_uri()}?mode={mode}"
    return sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False, isolation_level=None)


@dataclass(frozen=True, slots=True)
class NoteRow:
    """What the catalog knows about one note: its row in `notes` and its rows in the per-document tables."""

    path: str
    stat: StatKey
    hash: str
    captured: str
    captured_source: str
    title: str
    status: str | None
    lifecycle: str | None
    type: str | None
    project: str | None
    superseded_by: str | None
    wall: str | None
    flags: tuple[str, ...]
    frontmatter_error: str | None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    entities: tuple[EntityRef, ...] = ()
    entity_page: str | None = None  # the entity URI this note is the page for

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # (`type` is a field here)
        # pickled as its fields through the constructor: a pass's worker processes send thousands of rows
        return NoteRow, tuple(getattr(self, name) for name in self.__slots__)


def insert_rows(db: sqlite3.Connection, ups: Sequence[NoteRow]) -> None:
    """Insert note rows (a row of the same path in `notes` is replaced) and their per-document rows."""
    db.executemany(
        "INSERT OR REPLACE INTO notes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                r.path,
                *r.stat,
                r.hash,
                r.captured,
                r.captured_source,
                r.title,
                r.status,
                r.lifecycle,
                r.type,
                r.project,
                r.superseded_by,
                r.wall,
                ",".join(r.flags),
                r.frontmatter_error,
            )
            for r in ups
        ],
    )
    db.executemany("INSERT INTO tags VALUES (?, ?)", [(r.path, t) for r in ups for t in r.tags])
    db.executemany("INSERT INTO aliases VALUES (?, ?)", [(r.path, a) for r in ups for a in r.aliases])
    db.executemany(
        "INSERT INTO links VALUES (?,?,?,?,?,?,?,?,?,?)",
        [
            (r.path, k.line, k.kind, k.target, k.key, k.heading, k.block, k.alias, k.embed, k.attachment)
            for r in ups
            for k in r.links
        ],
    )
    db.executemany(
        "INSERT INTO entities VALUES (?,?,?,?,?,0)",
        [(r.path, e.uri, e.kind, e.text, e.line) for r in ups for e in r.entities],
    )
    db.executemany(
        "INSERT INTO entities VALUES (?,?,?,?,0,1)",
        [(r.path, r.entity_page, r.entity_page.split(":", 1)[0], r.entity_page) for r in ups if r.entity_page],
    )
