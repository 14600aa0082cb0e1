"""The catalog used from many threads at once, as the daemon uses it: captures, passes, searches and usage counts
on one handle. A shared connection shares its transaction, so before each write ran under one lock and each
reading thread read through a connection of its own, threads committed or rolled back each other's writes
(`cannot commit - no transaction is active`, `cannot start a transaction within a transaction`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_helpers import running_daemon, vault_settings, wait_until
from test_catalog import note

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import Settings
from agentmd.engine.write.capture import CaptureRequest

pytestmark = pytest.mark.slow


def run_threads(workers: list[threading.Thread]) -> None:
    for t in workers:
        t.start()
    for t in workers:
        t.join(120)
    assert not any(t.is_alive() for t in workers)


def test_writes_and_reads_from_many_threads_never_meet_each_others_transactions(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    with Catalog(tmp_path / "catalog.sqlite3") as catalog:
        start = threading.Barrier(12)

        def writer(w: int) -> None:
            start.wait()
            try:
                for i in range(60):
                    catalog.apply([note(f"memory/w{w}-{i}.md", "2026-01-01")], [], [])
                    if i % 3 == 0:
                        catalog.apply([], [f"memory/w{w}-{i}.md"], [])
                    catalog.count_usage([f"memory/w{w}-{i - 1}.md"], "recall", "2026-12-05")
            except BaseException as exc:
                errors.append(exc)

        def reader() -> None:
            start.wait()
            try:
                for _ in range(200):
                    catalog.count()
                    catalog.stat_keys()
                    catalog.paths_with_title("w1-5")
            except BaseException as exc:
                errors.append(exc)

        run_threads(
            [threading.Thread(target=writer, args=(w,)) for w in range(8)]
            + [threading.Thread(target=reader) for _ in range(4)]
        )
        assert errors == []
        expected = {f"memory/w{w}-{i}.md" for w in range(8) for i in range(60) if i % 3}
        assert set(catalog.paths()) == expected
        assert catalog.count() == len(expected)


@pytest.fixture
def daemon(tmp_path: Path, env: dict[str, str]) -> Iterator[Daemon]:
    notes = {f"notes/seed-{i}.md": f"# Seed {i}\n\nA seed note about otters number {i}.\n" for i in range(20)}
    settings: Settings = vault_settings(tmp_path / "vault", notes)
    with running_daemon(settings, commit_debounce=0.2) as d:
        yield d


def test_captures_passes_and_searches_at_once_leave_the_catalog_equal_to_the_vault(
    daemon: Daemon, caplog: pytest.LogCaptureFixture
) -> None:
    vault = daemon.settings.vault
    errors: list[str] = []
    stop = threading.Event()

    def capturer(c: int) -> None:
        for i in range(8):
            try:
                answer = daemon.capture(CaptureRequest(title=f"Thread {c} fact {i}", body=f"Fact {i} of thread {c}."))
                if not answer.get("indexed", True):
                    errors.append(f"not indexed: {answer}")
            except Exception as exc:
                errors.append(f"capture: {exc!r}")

    def searcher() -> None:
        while not stop.is_set():
            try:
                daemon.search(SearchRequest(query="otters fact thread"))
            except Exception as exc:
                errors.append(f"search: {exc!r}")

    def passes() -> None:
        while not stop.is_set():
            daemon.request_pass()
            time.sleep(0.05)

    background = [threading.Thread(target=searcher) for _ in range(3)] + [threading.Thread(target=passes)]
    for t in background:
        t.start()
    try:
        run_threads([threading.Thread(target=capturer, args=(c,)) for c in range(10)])
    finally:
        stop.set()
        for t in background:
            t.join(60)
    assert errors == []
    on_disk = {p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if ".git" not in p.parts}
    assert len(on_disk) == 20 + 80

    def catalog_matches() -> bool:
        assert daemon.store is not None
        return set(daemon.store.catalog.paths()) == on_disk

    wait_until(catalog_matches, 30, "the catalog to hold exactly the vault's notes")
    busy = [r.getMessage() for r in caplog.records if "IndexBusy" in r.getMessage() or "transaction" in r.getMessage()]
    assert busy == []
