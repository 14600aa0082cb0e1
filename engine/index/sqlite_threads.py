"""One SQLite database used from many threads: a writer connection whose transactions a lock serialises, and
a read connection of its own for every other thread.

A `sqlite3.Connection` shared by threads shares its transaction too: a statement one thread runs while
another has `BEGIN` open lands inside the other's transaction, a second `BEGIN` fails ("cannot start a
transaction within a transaction"), and one thread's `COMMIT` or `ROLLBACK` ends the other's half-done
writes ("cannot commit - no transaction is active"). So here every write runs under one re-entrant lock,
on the writer connection, and a thread that reads while not writing reads through a connection of its own,
which in WAL mode sees only committed data and never waits on the writer. A thread inside a write reads
through the writer connection, so it sees its own uncommitted rows.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class ThreadedDb:
    def __init__(self, writer: sqlite3.Connection, open_reader: Callable[[], sqlite3.Connection]) -> None:
        self.writer = writer
        self._open_reader = open_reader
        self._lock = threading.RLock()
        self._owner: int | None = None  # the thread inside a write, if any
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()

    def reading(self) -> sqlite3.Connection:
        """The connection this thread reads through."""
        if threading.get_ident() == self._owner:
            return self.writer
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = self._open_reader()
            except sqlite3.Error:
                return self.writer  # no second connection to be had (a vanished file): the shared one
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """The writer connection, held by this thread alone for the block (re-entrant)."""
        with self._lock:
            outer = self._owner
            self._owner = threading.get_ident()
            try:
                yield self.writer
            finally:
                self._owner = outer

    @contextmanager
    def transaction(self, begin: str = "BEGIN IMMEDIATE") -> Iterator[sqlite3.Connection]:
        """One transaction on the writer connection, committed when the block ends, rolled back when it
        raises; no other thread's statement runs on that connection meanwhile."""
        with self.writing() as db:
            db.execute(begin)
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        with self._readers_lock:
            readers, self._readers = self._readers, []
        for conn in readers:
            conn.close()
        self.writer.close()
