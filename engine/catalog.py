"""The catalog: one sqlite3 database beside the index holding what is known about each note.

It is a cache. Deleting it costs one rebuild. Per-note rows record the stat key reconcile compares
(mtime_ns, size, ctime_ns, inode), the content hash, the captured date and where it came from, and the
fields the rules read. Per-document tables (`PER_DOC_TABLES`) hang off the note's path; deleting a note
clears all of them in one transaction, and an orphan sweep is the backstop.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 1
PER_DOC_TABLES = ("tags", "aliases")

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
CREATE TABLE IF NOT EXISTS tags (path TEXT NOT NULL, tag TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tags_path ON tags(path);
CREATE INDEX IF NOT EXISTS tags_tag ON tags(tag);
CREATE TABLE IF NOT EXISTS aliases (path TEXT NOT NULL, alias TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_path ON aliases(path);
"""

StatKey = tuple[int, int, int, int]  # mtime_ns, size, ctime_ns, inode


@dataclass(frozen=True, slots=True)
class NoteRow:
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


class Catalog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.reset_reason: str | None = None
        self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        try:
            db = self._open_checked()
        except sqlite3.DatabaseError as exc:
            self.reset_reason = f"catalog unreadable ({exc}); recreated"
            for suffix in ("", "-wal", "-shm"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            db = self._open_checked()
        return db

    def _open_checked(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is not None and row[0] != str(SCHEMA_VERSION):
            self.reset_reason = f"catalog schema {row[0]} differs from {SCHEMA_VERSION}; recreated"
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            for table in tables:
                db.execute(f'DROP TABLE IF EXISTS "{table}"')
        db.executescript(_DDL)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        return db

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- meta --------------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- notes -------------------------------------------------------------------------------------

    def stat_keys(self) -> dict[str, StatKey]:
        rows = self._db.execute("SELECT path, mtime_ns, size, ctime_ns, inode FROM notes")
        return {p: (m, s, c, i) for p, m, s, c, i in rows}

    def hashes(self, paths: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """path -> (hash, captured, captured_source) for the given paths that are catalogued."""
        out: dict[str, tuple[str, str, str]] = {}
        wanted = list(paths)
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT path, hash, captured, captured_source FROM notes WHERE path IN ({marks})"
            for p, h, c, s in self._db.execute(q, chunk):
                out[p] = (h, c, s)
        return out

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM notes").fetchone()[0])

    def get(self, path: str) -> NoteRow | None:
        row = self._db.execute(
            "SELECT path, mtime_ns, size, ctime_ns, inode, hash, captured, captured_source, title, status,"
            " lifecycle, type, project, superseded_by, wall, flags, frontmatter_error FROM notes WHERE path=?",
            (path,),
        ).fetchone()
        if row is None:
            return None
        tags = tuple(r[0] for r in self._db.execute("SELECT tag FROM tags WHERE path=?", (path,)))
        aliases = tuple(r[0] for r in self._db.execute("SELECT alias FROM aliases WHERE path=?", (path,)))
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
        )

    def apply(self, upserts: Iterable[NoteRow], deletes: Iterable[str], touched: Iterable[tuple[str, StatKey]]) -> None:
        """Write note rows, delete rows (in every per-document table) and refresh stat keys, atomically."""
        with self.transaction() as db:
            dels = [(p,) for p in deletes]
            ups = list(upserts)
            gone = dels + [(r.path,) for r in ups]
            for table in PER_DOC_TABLES:
                db.executemany(f"DELETE FROM {table} WHERE path=?", gone)
            db.executemany("DELETE FROM notes WHERE path=?", dels)
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
                "UPDATE notes SET mtime_ns=?, size=?, ctime_ns=?, inode=? WHERE path=?",
                [(*stat, p) for p, stat in touched],
            )

    def sweep_orphans(self) -> dict[str, int]:
        """Delete per-document rows whose note is gone. Returns rows removed per table."""
        removed = {}
        with self.transaction() as db:
            for table in PER_DOC_TABLES:
                cur = db.execute(f"DELETE FROM {table} WHERE path NOT IN (SELECT path FROM notes)")
                removed[table] = cur.rowcount
        return removed

    def clear(self) -> None:
        with self.transaction() as db:
            for table in (*PER_DOC_TABLES, "notes"):
                db.execute(f"DELETE FROM {table}")

    def paths_with_title(self, title: str) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT path FROM notes WHERE title = ?", (title,))]

    def unfiled(self) -> list[tuple[str, str]]:
        """(path, captured) of every note whose status is `unfiled`: the queue awaiting judgment."""
        rows = self._db.execute(
            "SELECT path, captured FROM notes WHERE lower(status) = 'unfiled' AND ',' || flags || ',' NOT LIKE"
            " '%,probe,%' ORDER BY captured"
        )
        return [(p, c) for p, c in rows]

    def table_counts(self) -> dict[str, int]:
        """Rows in the notes table and in each per-document table."""
        return {t: int(self._db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in ("notes", *PER_DOC_TABLES)}

    def flag_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for (flags,) in self._db.execute("SELECT flags FROM notes WHERE flags != ''"):
            for f in flags.split(","):
                out[f] = out.get(f, 0) + 1
        return out
