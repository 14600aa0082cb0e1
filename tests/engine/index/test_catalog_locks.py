"""The catalog stays whole while the daemon checks it and other processes come and go.

Closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's included. A daemon
that read the catalog's header with a plain `open` lost its locks; the next CLI command to close its own
connection then found itself the last user, checkpointed, and deleted the write-ahead log under the daemon,
whose later writes went into an unlinked file (`disk I/O error`, then `database disk image is malformed`)."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from pathlib import Path

from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.store import Store, catalog_problem

OTHER_PROCESS = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("SELECT count(*) FROM sqlite_master").fetchone()
db.close()
"""


def _another_process_opens_and_closes(path: Path) -> None:
    subprocess.run([sys.executable, "-c", OTHER_PROCESS, str(path)], check=True, timeout=60)


def test_checking_the_catalog_keeps_the_holders_locks(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite3"
    catalog = Catalog(path)
    try:
        catalog.set_meta("before", "1")
        wal = Path(f"{path}-wal")
        assert wal.exists()
        for _ in range(3):
            assert catalog_problem(path) is None  # what the daemon's health pass asks, again and again
            _another_process_opens_and_closes(path)
            # the other process was not the last user: the daemon's log is still there, and still used
            assert wal.exists(), "another process deleted the write-ahead log the daemon holds"
            catalog.set_meta("after", "2")
        assert catalog.get_meta("after") == "2"
    finally:
        catalog.close()
    check = sqlite3.connect(path)
    try:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert dict(check.execute("SELECT key, value FROM meta").fetchall())["after"] == "2"
    finally:
        check.close()


def test_a_store_checking_itself_keeps_its_locks(tmp_path: Path) -> None:
    with Store(tmp_path / "cache") as store:
        store.catalog.set_meta("x", "1")
        for _ in range(3):
            assert store.damage() is None
            _another_process_opens_and_closes(store.catalog.path)
            assert Path(f"{store.catalog.path}-wal").exists()
            store.catalog.set_meta("x", "2")
        assert store.catalog.get_meta("x") == "2"


def test_a_garbled_or_missing_catalog_is_still_named(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite3"
    assert "was deleted" in (catalog_problem(path) or "")
    path.write_bytes(b"")
    assert catalog_problem(path) is None  # a catalog sqlite has not written yet
    path.write_bytes(b"this is not a database at all, just some bytes " * 200)
    assert "damaged" in (catalog_problem(path) or "")


def _garble_table(path: Path, table: str) -> None:
    """Overwrite the root page of one table with noise, leaving the header and the schema page whole."""
    db = sqlite3.connect(path)
    try:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    assert root > 1
    with path.open("r+b") as fh:  # no connection is open in this process now
        fh.seek((root - 1) * page_size)
        fh.write(bytes(range(256)) * (page_size // 256))


def test_a_catalog_corrupt_inside_is_named_as_damage_and_rebuilt_from_scratch(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with Store(cache) as store:
        store.catalog.set_meta("x", "1")
    path = cache / "catalog.sqlite3"
    _garble_table(path, "notes")

    with Store(cache) as store:  # opening reads the schema only: the damage shows on the first statement
        assert store.damage() is None
        with contextlib.suppress(sqlite3.DatabaseError):
            store.catalog.clear()
        damage = store.damage()
        assert damage is not None and "damaged" in damage and str(path) in damage

    # `agentmd reindex --from-scratch` sets the damaged file aside and starts a sound one
    with Store(cache, from_scratch=True) as store:
        assert any("damaged" in n and "recreated" in n for n in store.notices), store.notices
        assert store.damage() is None
        assert store.catalog.paths() == []
    assert list(cache.glob("catalog.sqlite3.broken-*")), "the damaged catalog is kept as evidence"
