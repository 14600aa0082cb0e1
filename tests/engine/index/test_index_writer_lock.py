"""The index's write lock: a writer waits a moment for the lock of one just closed (its own process's, being
dropped) instead of failing, and still says IndexBusy when another writer keeps it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentmd.engine.errors import IndexBusy
from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.index.notes import index_doc
from agentmd.vault_schema import parse_note


def doc(rel: str, text: str):
    return index_doc(parse_note(rel, text.encode(), 0))


def test_a_writer_waits_for_a_lock_released_a_moment_later(tmp_path: Path) -> None:
    first = SearchIndex(tmp_path / "index")
    first.apply([doc("a.md", "# A\n\nalpha\n")])  # holds the write lock from here on
    second = SearchIndex(tmp_path / "index", busy_wait=30)
    failures: list[BaseException] = []

    def write() -> None:
        try:
            second.apply([doc("b.md", "# B\n\nbravo\n")])
        except BaseException as exc:
            failures.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    writer.join(0.3)
    assert writer.is_alive()  # still waiting on the lock the first writer holds
    first.close()
    writer.join(30)
    assert failures == [] and not writer.is_alive()
    second.close()
    assert SearchIndex(tmp_path / "index").paths() == {"a.md", "b.md"}


def test_a_lock_kept_by_another_writer_is_index_busy_after_the_wait(tmp_path: Path) -> None:
    holder = SearchIndex(tmp_path / "index")
    holder.apply([doc("a.md", "# A\n\nalpha\n")])
    try:
        with pytest.raises(IndexBusy, match="another process is writing the index"):
            SearchIndex(tmp_path / "index", busy_wait=0.2).apply([doc("b.md", "# B\n\nbravo\n")])
    finally:
        holder.close()
