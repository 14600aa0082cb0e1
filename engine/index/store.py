"""The index and the catalog opened together and kept consistent.

Write order makes a crash harmless: the index commits first, then the catalog. A crash in between
leaves the catalog describing the older file, so the next reconcile sees the file as changed and writes
the same document again (upserts are idempotent). Both carry the index generation id; when they differ
(a rebuilt index, a deleted catalog) the catalog is cleared and everything is indexed again.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
import threading
import time
import uuid
from pathlib import Path

from agentmd.engine.errors import AgentmdError
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.catalog_base import corrupt
from agentmd.engine.index.fulltext import SearchIndex

log = logging.getLogger("agentmd.store")

KEEP_BROKEN = 2  # damaged index folders kept beside the cache as evidence
SQLITE_HEADER = b"SQLite format 3\x00"


def catalog_problem(path: Path) -> str | None:
    """What is wrong with the catalog file's header, or None: one short read, no sqlite call (a garbled
    header makes every statement on an open connection fail, and while the write-ahead log holds the first
    page SQLite itself does not read the header from the file)."""
    try:
        head = _read_header(path)
    except FileNotFoundError:
        return f"the catalog {path} was deleted"
    except OSError as exc:
        return f"the catalog {path} cannot be read ({exc.strerror or exc})"
    if head and head != SQLITE_HEADER:  # an empty file is a catalog sqlite has not written yet
        return f"the catalog {path} is damaged (its header is not an SQLite database's)"
    return None


# One descriptor per catalog file (by device and inode), opened on the first check and never closed while the
# process lives. Closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's
# included: a process holding the catalog open (the daemon, a CLI command) that opened and closed the file to
# read its header lost its locks, and the next process to close a connection took itself for the last user and
# deleted the write-ahead log still in use. A catalog set aside and recreated adds one descriptor.
_HEADER_READERS: dict[str, tuple[tuple[int, int], int]] = {}
_HEADER_LOCK = threading.Lock()


def _read_header(path: Path) -> bytes:
    st = os.stat(path)
    key = str(path.absolute())
    with _HEADER_LOCK:
        held = _HEADER_READERS.get(key)
        if held is None or held[0] != (st.st_dev, st.st_ino):
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            opened = os.fstat(fd)
            held = ((opened.st_dev, opened.st_ino), fd)
            _HEADER_READERS[key] = held  # an older descriptor stays open: see above
    return os.pread(held[1], len(SQLITE_HEADER), 0)


def set_aside_catalog(cache_dir: Path) -> Path | None:
    """Move a damaged catalog out of the way as `catalog.sqlite3.broken-<stamp>` (its journal files are
    dropped), so the rebuild starts an empty one; the newest KEEP_BROKEN stay as evidence. Returns where it
    went, or None when there was none or it could only be removed."""
    path = cache_dir / "catalog.sqlite3"
    stamp = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
    target: Path | None = path.with_name(f"{path.name}.broken-{stamp}")
    try:
        path.rename(path.with_name(f"{path.name}.broken-{stamp}"))
    except FileNotFoundError:
        return None
    except OSError:
        path.unlink(missing_ok=True)
        target = None
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    for old in sorted(cache_dir.glob(f"{path.name}.broken-*"))[:-KEEP_BROKEN]:
        old.unlink(missing_ok=True)
    return target


def set_aside_index(cache_dir: Path) -> Path | None:
    """Move the index folder out of the way as `index.broken-<stamp>` before a rebuild (removing it when it
    cannot be moved), and keep only the newest KEEP_BROKEN of those. Returns where it went."""
    index = cache_dir / "index"
    if not index.exists():
        return None
    target = cache_dir / f"index.broken-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
    try:
        index.rename(target)
    except OSError:
        shutil.rmtree(index, ignore_errors=True)
        return None
    broken = sorted(cache_dir.glob("index.broken-*"))
    for old in broken[:-KEEP_BROKEN]:
        shutil.rmtree(old, ignore_errors=True)
    return target


class CacheUnwritable(AgentmdError):
    """The index cache's disk is full, read-only or failing: nothing can be indexed until it is fixed."""


_NO_ROOM_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})
_NO_ROOM_WORDS = ("disk is full", "disk i/o error", "readonly database", "no space left", "read-only file system")


def no_room(exc: BaseException) -> bool:
    """Whether `exc` says the disk under the cache is full, read-only or failing (SQLite, Tantivy or the OS)."""
    if isinstance(exc, OSError) and exc.errno in _NO_ROOM_ERRNOS:
        return True
    return any(word in str(exc).lower() for word in _NO_ROOM_WORDS)


class Store:
    def __init__(self, cache_dir: Path, *, from_scratch: bool = False) -> None:
        try:
            self._open(cache_dir, from_scratch)
        except (OSError, sqlite3.OperationalError, ValueError) as exc:
            if not no_room(exc):
                raise
            raise CacheUnwritable(
                f"the index cache at {cache_dir} cannot be written ({exc}): free some space on its disk, or give the "
                "cache a folder elsewhere (`--index DIR`, or `index = 'DIR'` in the config file), and run again; the "
                "vault's notes are untouched"
            ) from None

    def _open(self, cache_dir: Path, from_scratch: bool) -> None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        self.cache_dir = cache_dir
        self.lock = threading.RLock()  # one writer at a time: reconcile passes and captures
        self.swept = False  # whether this process has run the catalog's orphan sweep yet
        self.index = SearchIndex(cache_dir / "index")
        self.catalog = Catalog(cache_dir / "catalog.sqlite3")
        self.notices: list[str] = []
        if self.index.set_aside is not None:
            self.notices.append(f"index was unreadable and was set aside as {self.index.set_aside}; rebuilt")
        if self.catalog.reset_reason:
            self.notices.append(self.catalog.reset_reason)
        if from_scratch:
            if self.index.doc_count():  # an empty index needs no writer (a build may then fork its workers)
                self.index.clear()
            try:
                self.catalog.clear()
            except sqlite3.DatabaseError as exc:
                if not corrupt(exc):
                    raise
                self.catalog.close()
                kept = set_aside_catalog(cache_dir)
                self.catalog = Catalog(cache_dir / "catalog.sqlite3")
                self.notices.append(f"the catalog was damaged ({exc}); kept as {kept} and recreated")
        if self.catalog.get_meta("index_generation") != self.index.generation:
            if self.catalog.count():
                log.info("catalog belongs to another index generation; it will be rebuilt")
            self.catalog.clear()
            if self.index.doc_count():
                self.index.clear()
            self.catalog.set_meta("index_generation", self.index.generation)

    def damage(self) -> str | None:
        """What is wrong with the cache folder on disk now, or None: a deleted folder or catalog, or index
        files that are missing, truncated or garbled (engine/index/integrity.py). Cheap: a few stats."""
        if not self.cache_dir.is_dir():
            return f"the cache folder {self.cache_dir} was deleted"
        return catalog_problem(self.catalog.path) or self.catalog.damaged or self.index.guard.check()

    def close(self) -> None:
        """Flush and release the writer. Never raises: a damaged or deleted index closes as far as it can."""
        try:
            self.index.close()
        except Exception as exc:
            log.warning("the index did not close cleanly: %s", exc)
        try:
            self.catalog.close()
        except Exception as exc:
            log.warning("the catalog did not close cleanly: %s", exc)

    def retire(self) -> None:
        """Release the index writer of a store being replaced while other threads may still read it. The
        catalog's connection is left for the garbage collector to close once no thread holds this store:
        closing an sqlite connection while another thread reads through it crashes the process."""
        try:
            self.index.close(remember=False)  # replaced after damage: nothing of it is trusted at the next open
        except Exception as exc:
            log.warning("the index did not close cleanly: %s", exc)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
