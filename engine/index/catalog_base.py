"""A handle on the catalog file: opening it (checked, migrated, or recreated when unreadable or of another
schema), the read-only and counting handles the hooks use, transactions, and the `meta` table."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from agentmd.engine.index.catalog_schema import (
    BUSY_TIMEOUT,
    DDL,
    MIGRATIONS,
    PASS_RECORD_KEY,
    PASS_RECORD_SUFFIX,
    SCHEMA_VERSION,
    STAT_SNAPSHOT_SUFFIX,
    StatKey,
    connect_existing,
    has_schema,
    schema_version,
)
from agentmd.engine.index.sqlite_threads import ThreadedDb

log = logging.getLogger("agentmd.catalog")


SQLITE_CORRUPT, SQLITE_NOTADB = 11, 26  # SQLite's primary result codes for a file that is not a sound database


def corrupt(exc: BaseException) -> bool:
    """Whether an sqlite3 error says the database file is corrupt or not a database at all."""
    return isinstance(exc, sqlite3.DatabaseError) and getattr(exc, "sqlite_errorcode", None) in (
        SQLITE_CORRUPT,
        SQLITE_NOTADB,
    )


class Rows:
    """A read's cursor whose errors go through `CatalogBase.noted` (SQLite reads most pages while rows are
    fetched, not when the statement starts)."""

    __slots__ = ("_catalog", "_cursor")

    def __init__(self, cursor: sqlite3.Cursor, catalog: CatalogBase) -> None:
        self._cursor, self._catalog = cursor, catalog

    def fetchone(self) -> Any:
        try:
            return self._cursor.fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._catalog.noted(exc) from None

    def fetchall(self) -> list[Any]:
        try:
            return self._cursor.fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._catalog.noted(exc) from None

    def __iter__(self) -> Iterator[Any]:
        try:
            yield from self._cursor
        except sqlite3.DatabaseError as exc:
            raise self._catalog.noted(exc) from None


class CatalogBase:
    """The connection to one catalog file and its `meta` rows: what the tables' owners (the mixins `Catalog`
    is made of) share."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.reset_reason: str | None = None
        self.damaged: str | None = None  # what a statement met that says the file is corrupt (`noted`)
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
        version = schema_version(db)
        if version == str(SCHEMA_VERSION) and has_schema(db):
            return db  # an existing catalog of this schema: opening it writes nothing, so waits on no writer
        if version in MIGRATIONS and self._migrate(db, version):
            return db
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for suffix in (STAT_SNAPSHOT_SUFFIX, PASS_RECORD_SUFFIX):  # left by a catalog deleted or recreated
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        if version is not None:
            self.reset_reason = f"catalog schema {version} differs from {SCHEMA_VERSION}; recreated"
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            for table in tables:
                db.execute(f'DROP TABLE IF EXISTS "{table}"')
        db.executescript(DDL)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        return db

    @staticmethod
    def _migrate(db: sqlite3.Connection, version: str) -> bool:
        """Bring a catalog of an older schema to the current one in one transaction, keeping its rows;
        False when no chain of migrations reaches the current schema (the caller recreates it)."""
        steps: list[str] = []
        while version != str(SCHEMA_VERSION):
            if version not in MIGRATIONS:
                return False
            version, statements = MIGRATIONS[version]
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
        return has_schema(db)

    @classmethod
    def _on(cls, path: Path, db: sqlite3.Connection) -> Self:
        """A handle on an open connection to an existing catalog, without the schema check `__init__` makes."""
        self = cls.__new__(cls)
        self.path = path
        self.reset_reason = None
        self.damaged = None
        self._db = db
        self._dbs = ThreadedDb(db, self._open_reader)
        self._stat_cache = None
        self._stat_token = None
        self._snapshot_token = None
        return self

    @classmethod
    def reader(cls, path: Path, timeout: float = 0.5) -> Self:
        """A read-only handle on an existing catalog: no schema check, no writes, a short lock wait. For
        readers that must never modify or wait long on the daemon's catalog (the recall and session-start
        hooks, the usage report). Raises `sqlite3.OperationalError` when the file does not exist."""
        return cls._on(path, connect_existing(path, "ro", timeout))

    @classmethod
    def counter(cls, path: Path, timeout: float = 0.25) -> Self:
        """A handle on an existing catalog for `count_usage`: it may write, but makes no schema check, never
        resets or creates the file, and waits on a lock only `timeout` seconds, so a hook or the daemon's
        search can count uses beside the indexer. Raises `sqlite3.OperationalError` when the file does not
        exist."""
        return cls._on(path, connect_existing(path, "rw", timeout))

    def _q(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Run a read on this thread's connection (engine/index/sqlite_threads.py)."""
        try:
            return Rows(self._dbs.reading().execute(sql, params), self)
        except sqlite3.DatabaseError as exc:
            raise self.noted(exc) from None

    def noted(self, exc: sqlite3.DatabaseError) -> sqlite3.DatabaseError:
        """`exc`, remembered in `damaged` when it says the file is corrupt (not when it is busy or locked), so
        the daemon's health pass sets the catalog aside and rebuilds it rather than failing on it forever."""
        if corrupt(exc):
            self.damaged = f"the catalog {self.path} is damaged ({exc})"
        return exc

    def _open_reader(self) -> sqlite3.Connection:
        return connect_existing(self.path, "ro", BUSY_TIMEOUT)

    def close(self) -> None:
        self._dbs.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; other threads' statements never run inside it (engine/index/sqlite_threads.py)."""
        try:
            with self._dbs.transaction() as db:
                yield db
        except sqlite3.DatabaseError as exc:
            raise self.noted(exc) from None

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

    def forget_pass_record(self) -> None:
        """No full pass recorded any more (the catalog was emptied for a rebuild): until one ends, status says the
        index was never built rather than showing the last pass of the index that is gone."""
        Path(str(self.path) + PASS_RECORD_SUFFIX).unlink(missing_ok=True)
        with self._dbs.writing() as db:
            db.execute("DELETE FROM meta WHERE key = ?", (PASS_RECORD_KEY,))

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
