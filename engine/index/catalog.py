"""The catalog: one sqlite3 database beside the index holding what is known about each note.

It is a cache. Deleting it costs one rebuild. Per-note rows record the stat key reconcile compares
(mtime_ns, size, ctime_ns, inode), the content hash, the captured date and where it came from, and the
fields the rules read. Per-document tables (`PER_DOC_TABLES`) hang off the note's path; deleting a note
clears all of them in one transaction, and an orphan sweep is the backstop.

This module holds every SQL statement run against the catalog: the daemon's indexer, the recall hook's
read-only look-ups, the usage counters (engine/index/usage.py) and the session-start hook's status reads
all go through `Catalog`. It imports only the standard library at load time (the note model's `Link` and
`EntityRef` are imported when a query first builds them), so the light hook path can count injections
without loading the YAML parser.
"""

from __future__ import annotations

import array
import logging
import os
import re
import sqlite3
import struct
import sys
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from agentmd.engine.index.sqlite_threads import ThreadedDb

if TYPE_CHECKING:
    from agentmd.vault_schema import EntityRef, Link

SCHEMA_VERSION = 3  # 2: links and entities tables; 3: notes looked up by title
PER_DOC_TABLES = ("tags", "aliases", "usage", "links", "entities")
# Per-document tables whose rows belong to the path rather than to the note's content: an edit or a
# rebuild keeps them (the orphan sweep drops them once the note is gone). `usage` holds the recall
# hook's injection and on-demand recall counts (engine/index/usage.py).
KEPT_ON_REWRITE = ("usage",)
USAGE_KINDS = ("injection", "recall")
USAGE_SINCE_KEY = "usage_since"  # meta key: when this catalog started counting

log = logging.getLogger("agentmd.catalog")

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

_DDL = """
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

# The snapshot of every note's stat key: a header (magic, the catalog's stat token, the number of notes, the
# length of the paths, a CRC-32 of what follows), the paths in UTF-8 separated by NUL, then the four keys of
# each note as little-endian 64-bit integers in the same order. Reading it is a few copies and one dict.
_SNAPSHOT_MAGIC = b"amdstat1"
_SNAPSHOT_HEADER = struct.Struct("<8s16sQQI")


def _encode_snapshot(token: str, keys: dict[str, StatKey]) -> bytes:
    """The snapshot's bytes. Raises OverflowError for a key that does not fit 64 bits, ValueError for a token
    that is not 16 ASCII characters."""
    paths = "\0".join(keys).encode("utf-8")
    ints = array.array("q", [n for key in keys.values() for n in key])
    if sys.byteorder == "big":
        ints.byteswap()
    numbers = ints.tobytes()
    tag = token.encode("ascii")
    if len(tag) != 16:
        raise ValueError(f"stat token {token!r} is not 16 characters")
    crc = zlib.crc32(numbers, zlib.crc32(paths))
    return _SNAPSHOT_HEADER.pack(_SNAPSHOT_MAGIC, tag, len(keys), len(paths), crc) + paths + numbers


def _decode_snapshot(data: bytes, token: str) -> dict[str, StatKey] | None:
    """The stat keys a snapshot holds, or None when it is of another token, truncated or damaged."""
    size = _SNAPSHOT_HEADER.size
    if len(data) < size:
        return None
    magic, tag, count, paths_len, crc = _SNAPSHOT_HEADER.unpack_from(data)
    if (
        magic != _SNAPSHOT_MAGIC
        or tag != token.encode("ascii", "replace")
        or len(data) != size + paths_len + 32 * count
    ):
        return None
    view = memoryview(data)
    paths, numbers = view[size : size + paths_len], view[size + paths_len :]
    if zlib.crc32(numbers, zlib.crc32(paths)) != crc:
        return None
    try:
        names = str(paths, "utf-8").split("\0") if count else []
    except UnicodeDecodeError:
        return None
    ints = array.array("q")
    ints.frombytes(numbers)
    if sys.byteorder == "big":
        ints.byteswap()
    it = iter(ints)
    keys = dict(zip(names, zip(it, it, it, it, strict=True), strict=True)) if len(names) == count else {}
    return keys if len(keys) == count else None


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


@dataclass(frozen=True, slots=True)
class NoteUsage:
    """One note's usage counts, beside the note's title and captured date."""

    path: str
    title: str
    captured: str
    injections: int
    recalls: int
    last_injected: str | None
    last_recalled: str | None

    @property
    def last_used(self) -> str | None:
        return max(filter(None, (self.last_injected, self.last_recalled)), default=None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"last_used": self.last_used}


_LINK_COLUMNS = "line, kind, target, heading, block, alias, embed, attachment"


def _links(rows: Iterable[tuple[Any, ...]]) -> list[Link]:
    """Links from rows of `_LINK_COLUMNS`."""
    from agentmd.vault_schema import Link

    return [
        Link(target, heading, block, alias, bool(embed), kind, line, bool(attachment))
        for line, kind, target, heading, block, alias, embed, attachment in rows
    ]


def _sourced_links(rows: Iterable[tuple[Any, ...]]) -> list[tuple[str, Link]]:
    """(source path, link) from rows of the source path followed by `_LINK_COLUMNS`."""
    rows = list(rows)
    return list(zip((r[0] for r in rows), _links(r[1:] for r in rows), strict=True))


_USAGE_UPSERT = {
    "injection": (
        "INSERT INTO usage (path, injections, recalls, last_injected) VALUES (?, 1, 0, ?) "
        "ON CONFLICT(path) DO UPDATE SET injections = injections + 1, last_injected = excluded.last_injected"
    ),
    "recall": (
        "INSERT INTO usage (path, injections, recalls, last_recalled) VALUES (?, 0, 1, ?) "
        "ON CONFLICT(path) DO UPDATE SET recalls = recalls + 1, last_recalled = excluded.last_recalled"
    ),
}


# How long a writer waits for another one (the usage counter, a second process) before "database is locked".
# Every write is short (one batch of rows), so a long wait only ever covers a burst of them.
BUSY_TIMEOUT = 30.0


def _schema_version(db: sqlite3.Connection) -> str | None:
    """The catalog's recorded schema version, None for a new file (no meta table or no version row)."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    return None if row is None else str(row[0])


_DDL_NAMES = frozenset(re.findall(r"CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)", _DDL))

# How a catalog of an older schema becomes the current one in place, keeping its rows (and so sparing a
# rebuild of the whole vault): the statements that take it from each version to the next. A version with
# no entry here is recreated empty instead.
_MIGRATIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    # the capture's twin check and the enrich job look notes up by title: without this every look-up
    # read the whole table
    "2": ("3", ("CREATE INDEX IF NOT EXISTS notes_title ON notes(title)",)),
}


def _has_schema(db: sqlite3.Connection) -> bool:
    """Whether every table and index the schema declares exists (read-only)."""
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    return names >= _DDL_NAMES


def _connect_existing(path: Path, mode: str, timeout: float) -> sqlite3.Connection:
    """A connection to a catalog file that must already exist (`mode` "ro" or "rw"; never creates it)."""
    uri = f"{path.resolve().as_uri()}?mode={mode}"
    return sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False, isolation_level=None)


def _insert(db: sqlite3.Connection, ups: Sequence[NoteRow]) -> None:
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


class Catalog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.reset_reason: str | None = None
        self._db = self._connect()
        self._dbs = ThreadedDb(self._db, self._open_reader)
        # The stat keys of every note, kept in memory once read: this handle is the catalog's only writer
        # (the index writer lock keeps a second process from writing), so `apply` keeps it exact. It holds
        # for as long as the catalog's stat token is the one it was read or last written at.
        self._stat_cache: dict[str, StatKey] | None = None
        self._stat_token: str | None = None
        self._snapshot_token: str | None = None  # the token of the snapshot this handle read or wrote

    def _connect(self) -> sqlite3.Connection:
        try:
            db = self._open_checked()
        except sqlite3.DatabaseError as exc:
            self.reset_reason = f"catalog unreadable ({exc}); recreated"
            for suffix in ("", "-wal", "-shm", STAT_SNAPSHOT_SUFFIX, PASS_RECORD_SUFFIX):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            db = self._open_checked()
        return db

    def _open_checked(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        version = _schema_version(db)
        if version == str(SCHEMA_VERSION) and _has_schema(db):
            return db  # an existing catalog of this schema: opening it writes nothing, so waits on no writer
        if version in _MIGRATIONS and self._migrate(db, version):
            return db
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for suffix in (STAT_SNAPSHOT_SUFFIX, PASS_RECORD_SUFFIX):  # left by a catalog deleted or recreated
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        if version is not None:
            self.reset_reason = f"catalog schema {version} differs from {SCHEMA_VERSION}; recreated"
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            for table in tables:
                db.execute(f'DROP TABLE IF EXISTS "{table}"')
        db.executescript(_DDL)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        return db

    @staticmethod
    def _migrate(db: sqlite3.Connection, version: str) -> bool:
        """Bring a catalog of an older schema to the current one in one transaction, keeping its rows;
        False when no chain of migrations reaches the current schema (the caller recreates it)."""
        steps: list[str] = []
        while version != str(SCHEMA_VERSION):
            if version not in _MIGRATIONS:
                return False
            version, statements = _MIGRATIONS[version]
            steps += statements
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in steps:
                db.execute(statement)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return _has_schema(db)

    @classmethod
    def _on(cls, path: Path, db: sqlite3.Connection) -> Catalog:
        """A handle on an open connection to an existing catalog, without the schema check `__init__` makes."""
        self = cls.__new__(cls)
        self.path = path
        self.reset_reason = None
        self._db = db
        self._dbs = ThreadedDb(db, self._open_reader)
        self._stat_cache = None
        self._stat_token = None
        self._snapshot_token = None
        return self

    @classmethod
    def reader(cls, path: Path, timeout: float = 0.5) -> Catalog:
        """A read-only handle on an existing catalog: no schema check, no writes, a short lock wait. For
        readers that must never modify or wait long on the daemon's catalog (the recall and session-start
        hooks, the usage report). Raises `sqlite3.OperationalError` when the file does not exist."""
        return cls._on(path, _connect_existing(path, "ro", timeout))

    @classmethod
    def counter(cls, path: Path, timeout: float = 0.25) -> Catalog:
        """A handle on an existing catalog for `count_usage`: it may write, but makes no schema check, never
        resets or creates the file, and waits on a lock only `timeout` seconds, so a hook or the daemon's
        search can count uses beside the indexer. Raises `sqlite3.OperationalError` when the file does not
        exist."""
        return cls._on(path, _connect_existing(path, "rw", timeout))

    def _q(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run a read on this thread's connection (engine/index/sqlite_threads.py)."""
        return self._dbs.reading().execute(sql, params)

    def _open_reader(self) -> sqlite3.Connection:
        return _connect_existing(self.path, "ro", BUSY_TIMEOUT)

    def close(self) -> None:
        self._dbs.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; other threads' statements never run inside it (engine/index/sqlite_threads.py)."""
        with self._dbs.transaction() as db:
            yield db

    # -- meta --------------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self._q("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._dbs.writing() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def pass_record(self) -> str | None:
        """The record of the last full pass (`set_pass_record`), or None when no pass was recorded."""
        try:
            return Path(str(self.path) + PASS_RECORD_SUFFIX).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return self.get_meta(PASS_RECORD_KEY)

    def set_pass_record(self, text: str) -> None:
        """Keep the record of a full pass beside the catalog (in the catalog when that file cannot be written)."""
        target = Path(str(self.path) + PASS_RECORD_SUFFIX)
        part = target.with_name(f"{target.name}.{os.getpid()}.part")
        try:
            part.write_text(text, encoding="utf-8")
            os.replace(part, target)
        except OSError as exc:
            log.debug("the pass record was not written beside the catalog: %s", exc)
            part.unlink(missing_ok=True)
            target.unlink(missing_ok=True)
            self.set_meta(PASS_RECORD_KEY, text)

    # -- notes -------------------------------------------------------------------------------------

    def stat_keys(self, paths: Iterable[str] | None = None) -> dict[str, StatKey]:
        """Stat keys of every note, or of the given paths that are catalogued.

        Every note's are kept in memory once read, and read from the snapshot beside the catalog when it
        carries the catalog's current stat token (a stale, torn or damaged snapshot is passed over for the
        table itself)."""
        if paths is None:
            return dict(self._current_stat_keys())
        out: dict[str, StatKey] = {}
        wanted = list(paths)
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT path, mtime_ns, size, ctime_ns, inode FROM notes WHERE path IN ({marks})"
            for p, m, s, c, ino in self._q(q, chunk):
                out[p] = (m, s, c, ino)
        return out

    def holds_stat_keys(self, keys: dict[str, StatKey]) -> bool:
        """Whether these are exactly the stat keys of every catalogued note (read as `stat_keys` reads them)."""
        return self._current_stat_keys() == keys

    def _current_stat_keys(self) -> dict[str, StatKey]:
        """Every note's stat keys as held in memory, read again when the catalog's stat token moved on."""
        token = self.get_meta(STAT_TOKEN_KEY)
        if self._stat_cache is None or token != self._stat_token:
            keys = self._read_snapshot(token) if token is not None else None
            if keys is None:
                token, keys = self._read_stat_table()
            else:
                self._snapshot_token = token
            self._stat_cache, self._stat_token = keys, token
        return self._stat_cache

    def _read_stat_table(self) -> tuple[str | None, dict[str, StatKey]]:
        """The stat token and every note's stat key, read in one transaction (the caller's, when one is open)."""
        db = self._dbs.reading()
        own = not db.in_transaction
        if own:
            db.execute("BEGIN")
        try:
            row = db.execute("SELECT value FROM meta WHERE key=?", (STAT_TOKEN_KEY,)).fetchone()
            token = None if row is None else str(row[0])
            rows = db.execute("SELECT path, mtime_ns, size, ctime_ns, inode FROM notes")
            keys = {p: (m, s, c, i) for p, m, s, c, i in rows}
        finally:
            if own:
                db.execute("COMMIT")
        return token, keys

    @property
    def snapshot_path(self) -> Path:
        return Path(str(self.path) + STAT_SNAPSHOT_SUFFIX)

    def _read_snapshot(self, token: str) -> dict[str, StatKey] | None:
        try:
            data = self.snapshot_path.read_bytes()
        except OSError:
            return None
        return _decode_snapshot(data, token)

    def save_stat_snapshot(self) -> bool:
        """Write the stat keys held in memory to the snapshot beside the catalog (replacing it in one rename),
        unless the snapshot already holds them. A snapshot that cannot be written is left out: the next
        handle reads the table. Whether a snapshot was written."""
        keys = self._stat_cache
        if keys is None or (self._stat_token is not None and self._stat_token == self._snapshot_token):
            return False
        if self._stat_token is None:  # a catalog from before stat tokens: it gets its first one
            with self.transaction() as db:
                exact = self._next_stat_token(db)
        else:
            exact = self.get_meta(STAT_TOKEN_KEY) == self._stat_token
        token = self._stat_token
        if not exact or token is None:  # written by another handle since: the keys are not exact
            self._stat_cache = self._stat_token = None
            return False
        target = self.snapshot_path
        part = target.with_name(f"{target.name}.{os.getpid()}.part")
        try:
            data = _encode_snapshot(token, keys)
            with open(part, "wb") as fh:
                fh.write(data)
            os.replace(part, target)
        except (OSError, OverflowError, ValueError) as exc:
            log.debug("the stat keys' snapshot was not written: %s", exc)
            part.unlink(missing_ok=True)
            return False
        self._snapshot_token = token
        return True

    def hashes(self, paths: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """path -> (hash, captured, captured_source) for the given paths that are catalogued."""
        out: dict[str, tuple[str, str, str]] = {}
        wanted = list(paths)
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT path, hash, captured, captured_source FROM notes WHERE path IN ({marks})"
            for p, h, c, s in self._q(q, chunk):
                out[p] = (h, c, s)
        return out

    def count(self) -> int:
        return int(self._q("SELECT count(*) FROM notes").fetchone()[0])

    def get(self, path: str) -> NoteRow | None:
        row = self._q(
            "SELECT path, mtime_ns, size, ctime_ns, inode, hash, captured, captured_source, title, status,"
            " lifecycle, type, project, superseded_by, wall, flags, frontmatter_error FROM notes WHERE path=?",
            (path,),
        ).fetchone()
        if row is None:
            return None
        tags = tuple(r[0] for r in self._q("SELECT tag FROM tags WHERE path=?", (path,)))
        aliases = tuple(r[0] for r in self._q("SELECT alias FROM aliases WHERE path=?", (path,)))
        return NoteRow(
            path=row[0],
            stat=(row[1], row[2], row[3], row[4]),
            hash=row[5],
            captured=row[6],
            captured_source=row[7],
            title=row[8],
            status=row[9],
            lifecycle=row[10],
            type=row[11],
            project=row[12],
            superseded_by=row[13],
            wall=row[14],
            flags=tuple(filter(None, row[15].split(","))),
            frontmatter_error=row[16],
            tags=tags,
            aliases=aliases,
            links=tuple(self.links_from(path)),
            entities=tuple(self.entities_of(path)),
            entity_page=next(
                (r[0] for r in self._q("SELECT uri FROM entities WHERE path=? AND page=1", (path,))), None
            ),
        )

    def _next_stat_token(self, db: sqlite3.Connection) -> bool:
        """Give the catalog a new stat token, in the caller's transaction that changes stat keys; whether the
        keys held in memory are those the catalog held until now (then the caller brings them up to date with
        its change and they carry the new token; else they are dropped, to be read again)."""
        row = db.execute("SELECT value FROM meta WHERE key=?", (STAT_TOKEN_KEY,)).fetchone()
        token = os.urandom(8).hex()
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (STAT_TOKEN_KEY, token))
        if self._stat_cache is not None and (None if row is None else str(row[0])) == self._stat_token:
            self._stat_token = token
            return True
        self._stat_cache = self._stat_token = None
        return False

    def apply(self, upserts: Iterable[NoteRow], deletes: Iterable[str], touched: Iterable[tuple[str, StatKey]]) -> None:
        """Write note rows, delete rows (in every per-document table) and refresh stat keys, atomically."""
        with self.transaction() as db:
            dels = [(p,) for p in deletes]
            ups = list(upserts)
            gone = dels + [(r.path,) for r in ups]
            for table in PER_DOC_TABLES:
                db.executemany(f"DELETE FROM {table} WHERE path=?", dels if table in KEPT_ON_REWRITE else gone)
            db.executemany("DELETE FROM notes WHERE path=?", dels)
            _insert(db, ups)
            touched = list(touched)
            db.executemany(
                "UPDATE notes SET mtime_ns=?, size=?, ctime_ns=?, inode=? WHERE path=?",
                [(*stat, p) for p, stat in touched],
            )
            if not (dels or ups or touched):
                return
            exact = self._next_stat_token(db)
        if exact:
            assert self._stat_cache is not None
            for (path,) in dels:
                self._stat_cache.pop(path, None)
            for r in ups:
                self._stat_cache[r.path] = r.stat
            for path, stat in touched:
                if path in self._stat_cache:
                    self._stat_cache[path] = stat

    def is_empty(self) -> bool:
        """Whether the catalog holds no note and no per-document row but the kept ones (the usage counts): a
        build may then add its rows without deleting any first (`adding`)."""
        tables = ("notes", *(t for t in PER_DOC_TABLES if t not in KEPT_ON_REWRITE))
        return not any(self._q(f"SELECT 1 FROM {t} LIMIT 1").fetchone() for t in tables)

    @contextmanager
    def adding(self, rows: Sequence[NoteRow]) -> Iterator[None]:
        """Insert the rows of notes the catalog has no row of in any table (a build into an empty catalog, see
        `is_empty`) without the deletes `apply` runs first, in one transaction that commits when the block
        ends and rolls back when it raises. The caller commits the index inside the block, so the catalog
        never describes a note the index does not hold, and the inserts run while the index commits."""
        with self.transaction() as db:
            _insert(db, rows)
            exact = self._next_stat_token(db)
            yield
        if exact:
            assert self._stat_cache is not None
            for r in rows:
                self._stat_cache[r.path] = r.stat

    def sweep_orphans(self, tables: Iterable[str] = PER_DOC_TABLES) -> dict[str, int]:
        """Delete per-document rows whose note is gone, in the given tables (one of PER_DOC_TABLES, all by
        default). Returns rows removed per table."""
        removed = {}
        with self.transaction() as db:
            for table in tables:
                if table not in PER_DOC_TABLES:
                    raise ValueError(f"{table!r} is not a per-document table")
                cur = db.execute(f"DELETE FROM {table} WHERE path NOT IN (SELECT path FROM notes)")
                removed[table] = cur.rowcount
        return removed

    def clear(self) -> None:
        self._stat_cache = self._stat_token = None
        with self.transaction() as db:
            for table in (*PER_DOC_TABLES, "notes"):
                if table not in KEPT_ON_REWRITE:
                    db.execute(f"DELETE FROM {table}")
            self._next_stat_token(db)

    def paths_with_title(self, title: str) -> list[str]:
        """The notes with exactly this title (an index look-up: `notes_title`)."""
        return [r[0] for r in self._q("SELECT path FROM notes WHERE title = ?", (title,))]

    def unfiled(self) -> list[tuple[str, str]]:
        """(path, captured) of every note whose status is `unfiled`: the queue awaiting judgment."""
        rows = self._q(
            "SELECT path, captured FROM notes WHERE lower(status) = 'unfiled' AND ',' || flags || ',' NOT LIKE"
            " '%,probe,%' ORDER BY captured"
        )
        return [(p, c) for p, c in rows]

    def review_rows(self) -> list[tuple[str, str, str | None, str, tuple[str, ...]]]:
        """(path, captured, status, hash, flags) of every note no wall hides, oldest first: what the review
        queue (engine/curate/queue.py) looks through."""
        rows = self._q(
            "SELECT path, captured, status, hash, flags FROM notes WHERE wall IS NULL ORDER BY captured, path"
        )
        return [(p, c, s, h, tuple(filter(None, f.split(",")))) for p, c, s, h, f in rows]

    # -- links and entities ------------------------------------------------------------------------

    def paths(self) -> list[str]:
        """Every catalogued note path, sorted."""
        return [r[0] for r in self._q("SELECT path FROM notes ORDER BY path")]

    def links_from(self, path: str) -> list[Link]:
        """The links written in one note, in text order. Targets are as written; resolve with engine.graph."""
        q = f"SELECT {_LINK_COLUMNS} FROM links WHERE path=? ORDER BY line, rowid"
        return _links(self._q(q, (path,)))

    def links_with_keys(self, keys: Iterable[str]) -> list[tuple[str, Link]]:
        """(source path, link) for every link whose target names one of these lower-cased file names
        (without `.md`; "" for links to a heading of the same note): the candidates for backlinks."""
        wanted = sorted(set(keys))
        out: list[tuple[str, Link]] = []
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT path, {_LINK_COLUMNS} FROM links WHERE target_key IN ({marks}) ORDER BY path, line, rowid"
            out.extend(_sourced_links(self._q(q, chunk)))
        return out

    def all_links(self) -> list[tuple[str, Link]]:
        """(source path, link) for every link in the vault, by source path and line."""
        q = f"SELECT path, {_LINK_COLUMNS} FROM links ORDER BY path, line, rowid"
        return _sourced_links(self._q(q))

    def entities_of(self, path: str) -> list[EntityRef]:
        """The entity references one note makes, in text order (not its own `entity:` declaration)."""
        from agentmd.vault_schema import EntityRef

        q = "SELECT uri, kind, text, line FROM entities WHERE path=? AND page=0 ORDER BY line, rowid"
        return [EntityRef(*r) for r in self._q(q, (path,))]

    def notes_mentioning(self, uri: str) -> list[str]:
        """Paths of the notes that reference an entity (or declare themselves its page), sorted."""
        q = "SELECT DISTINCT path FROM entities WHERE uri=? ORDER BY path"
        return [r[0] for r in self._q(q, (uri.lower(),))]

    def entity_page_paths(self, uris: Iterable[str]) -> dict[str, list[str]]:
        """uri -> the paths of the notes whose frontmatter declares them the page for it (sorted)."""
        wanted = sorted({u.lower() for u in uris})
        out: dict[str, list[str]] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT uri, path FROM entities WHERE page=1 AND uri IN ({marks}) ORDER BY uri, path"
            for uri, path in self._q(q, chunk):
                out.setdefault(uri, []).append(path)
        return out

    def table_counts(self) -> dict[str, int]:
        """Rows in the notes table and in each per-document table."""
        return {t: int(self._q(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in ("notes", *PER_DOC_TABLES)}

    def unreadable(self) -> list[tuple[str, str]]:
        """The notes (path order) that were not read whole, with what could not be read: frontmatter that does
        not parse (its error), or bytes that are not UTF-8 (engine/index/unreadable.py)."""
        rows = self._q(
            "SELECT path, flags, frontmatter_error FROM notes WHERE flags LIKE '%frontmatter_error%' "
            "OR flags LIKE '%decode_error%' ORDER BY path"
        )
        out = []
        for path, flags, error in rows:
            if error:
                out.append((str(path), f"{error} (until then its title, tags, status and type are not read)"))
            elif "decode_error" in str(flags).split(","):
                out.append((str(path), "the file is not valid UTF-8 and was read with replacement characters; "
                            "save it as UTF-8"))
        return out

    def flag_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for (flags,) in self._q("SELECT flags FROM notes WHERE flags != ''"):
            for f in flags.split(","):
                out[f] = out.get(f, 0) + 1
        return out

    # -- usage counters ----------------------------------------------------------------------------

    def count_usage(self, paths: Iterable[str], kind: str, stamp: str) -> None:
        """Add one `kind` use ("injection" or "recall", stamped `stamp`) to each of these note paths, and
        note when this catalog started counting, in one transaction. The paths are counted as given (the
        caller folds duplicates); a path without a note row is counted too, and the orphan sweep drops it."""
        if kind not in _USAGE_UPSERT:
            raise ValueError(f"usage kind {kind!r} is not one of {USAGE_KINDS}")
        with self.transaction() as db:
            db.executemany(_USAGE_UPSERT[kind], [(p, stamp) for p in paths])
            db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (USAGE_SINCE_KEY, stamp))

    def usage_counts(self, paths: Iterable[str]) -> dict[str, tuple[int, int]]:
        """path -> (injections, recalls) for the given paths that were ever counted."""
        out: dict[str, tuple[int, int]] = {}
        wanted = list(paths)
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT path, injections, recalls FROM usage WHERE path IN ({marks})"
            for p, inj, rec in self._q(q, chunk):
                out[p] = (int(inj), int(rec))
        return out

    def usage_since(self) -> str | None:
        """When this catalog started counting (the first use it recorded), or None when it never counted."""
        return self.get_meta(USAGE_SINCE_KEY)

    def lifecycle_rows(self) -> list[tuple[str, str | None, str | None, str, str | None, str | None]]:
        """(path, lifecycle, type, flags, last injected, last recalled) of every note outside the walls, by
        path: what the lifecycle policy (engine/curate/lifecycle.py) weighs."""
        return list(
            self._q(
                "SELECT n.path, n.lifecycle, n.type, n.flags, u.last_injected, u.last_recalled FROM notes n"
                " LEFT JOIN usage u ON u.path = n.path WHERE n.wall IS NULL ORDER BY n.path"
            )
        )

    def note_usage(self) -> list[NoteUsage]:
        """Usage of every note outside the walls (archived, superseded, staged) that is not a self-probe,
        counted or not, by captured date and path: what the usage report reviews."""
        rows = self._q(
            "SELECT n.path, n.title, n.captured, coalesce(u.injections, 0), coalesce(u.recalls, 0),"
            " u.last_injected, u.last_recalled FROM notes n LEFT JOIN usage u ON u.path = n.path"
            " WHERE n.wall IS NULL AND ',' || n.flags || ',' NOT LIKE '%,probe,%' ORDER BY n.captured, n.path"
        )
        return [NoteUsage(p, t, c, int(i), int(r), li, lr) for p, t, c, i, r, li, lr in rows]
