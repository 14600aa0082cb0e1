"""The catalog's `notes` table and the note rows of every per-document table: writing a pass's rows, the stat
keys reconcile compares (kept in memory and in a snapshot beside the catalog), and the reads of note rows
(a note, the review queue, the unreadable notes, the flags)."""

from __future__ import annotations

import array
import logging
import os
import sqlite3
import struct
import sys
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from agentmd.engine.index.catalog_links import CatalogLinks
from agentmd.engine.index.catalog_schema import (
    KEPT_ON_REWRITE,
    PER_DOC_TABLES,
    STAT_SNAPSHOT_SUFFIX,
    STAT_TOKEN_KEY,
    NoteRow,
    StatKey,
    insert_rows,
)

log = logging.getLogger("agentmd.catalog")

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


class CatalogNotes(CatalogLinks):
    """The notes table and every per-document table's rows as a whole (the links and entities a note row
    carries are read through `CatalogLinks`)."""

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

    def get(self, path: str, *, whole: bool = True) -> NoteRow | None:
        """The note's row; without `whole`, its row in `notes` alone (one query: tags, aliases, links and
        entities left empty), for a reader that needs only its title, status, lifecycle, project, wall and
        flags (the recall hook's candidates)."""
        row = self._q(
            "SELECT path, mtime_ns, size, ctime_ns, inode, hash, captured, captured_source, title, status,"
            " lifecycle, type, project, superseded_by, wall, flags, frontmatter_error FROM notes WHERE path=?",
            (path,),
        ).fetchone()
        if row is None:
            return None
        if not whole:
            return NoteRow(path=row[0], stat=(row[1], row[2], row[3], row[4]), hash=row[5], captured=row[6],
                           captured_source=row[7], title=row[8], status=row[9], lifecycle=row[10], type=row[11],
                           project=row[12], superseded_by=row[13], wall=row[14],
                           flags=tuple(filter(None, row[15].split(","))), frontmatter_error=row[16])  # fmt: skip
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
            insert_rows(db, ups)
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
            insert_rows(db, rows)
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
        self.forget_pass_record()

    def names_a_note(self, name: str) -> bool:
        """Whether a link to `name` reaches a note: its title, its file name or its path (Obsidian's way: case
        aside, `.md` optional)."""
        low = name.strip().lower().removesuffix(".md")
        rows = self._q(
            "SELECT 1 FROM notes WHERE lower(title) = ? OR lower(path) = ? OR lower(path) LIKE ? ESCAPE '\\' LIMIT 1",
            (low, f"{low}.md", "%/" + low.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ".md"),
        )
        return any(True for _ in rows)

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

    def captured_within(
        self,
        since: str | None,
        until: str | None,
        month: int | None = None,
        *,
        walled: bool = False,
        probes: bool = False,
        limit: int = 10,
    ) -> tuple[list[str], int, dict[str, int]]:
        """The notes captured from `since` up to `until` (ISO dates, `until` excluded, either end open), or in
        `month` (1-12) of any year, newest first: (the first `limit` paths, how many there are, how many each
        wall hid). Notes behind a wall count only with `walled`, self-probe notes only with `probes`. A span
        of days is read through the `notes_captured` index."""
        where, args = ["1"], []
        if since is not None:
            where.append("captured >= ?")
            args.append(since)
        if until is not None:
            where.append("captured < ?")
            args.append(until)
        if month is not None:
            where.append("substr(captured, 6, 2) = ?")
            args.append(f"{month:02d}")
        if not probes:
            where.append("',' || flags || ',' NOT LIKE '%,probe,%'")
        span = " AND ".join(where)
        hidden: dict[str, int] = {}
        if not walled:
            grouped = f"SELECT wall, count(*) FROM notes WHERE {span} AND wall IS NOT NULL GROUP BY wall"
            hidden = {wall: n for wall, n in self._q(grouped, args)}
            span += " AND wall IS NULL"
        count = self._q(f"SELECT count(*) FROM notes WHERE {span}", args).fetchone()[0]
        rows = self._q(f"SELECT path FROM notes WHERE {span} ORDER BY captured DESC, path LIMIT ?", (*args, limit))
        return [r[0] for r in rows], count, hidden

    def notes_token(self) -> str | None:
        """A value that changes in every transaction that adds, deletes or rewrites a note row (the stat token):
        what a reader keys a copy of the note paths by. None while no note was ever written."""
        return self.get_meta(STAT_TOKEN_KEY)

    def paths(self) -> list[str]:
        """Every catalogued note path, sorted."""
        return [r[0] for r in self._q("SELECT path FROM notes ORDER BY path")]

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
                out.append(
                    (
                        str(path),
                        "the file is not valid UTF-8 and was read with replacement characters; save it as UTF-8",
                    )
                )
        return out

    def flag_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for (flags,) in self._q("SELECT flags FROM notes WHERE flags != ''"):
            for f in flags.split(","):
                out[f] = out.get(f, 0) + 1
        return out
