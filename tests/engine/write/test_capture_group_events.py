"""File events about captured notes: the ones their own batch already indexed need no indexer pass, and an edit
made after the batch read the note is still indexed.

Real parts: a real vault (a git repository), a real index and catalog, the real group indexer, and a real
daemon with its watcher for the edit that must still reach the index.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import make_repo, running_daemon, wait_until

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.store import Store
from agentmd.engine.search.query import SearchRequest
from agentmd.engine.settings import Settings, resolve
from agentmd.engine.write.capture import Capturer, CaptureRequest
from agentmd.engine.write.group import GroupIndexer
from agentmd.rules import ContractCache

pytestmark = pytest.mark.slow


@pytest.fixture
def capturer(tmp_path: Path) -> Iterator[Capturer]:
    vault = make_repo(tmp_path / "vault", {"notes/by-hand.md": "# By hand\n\nwritten by a person\n"}).resolve()
    store = Store(tmp_path / "cache")
    yield Capturer(vault, tmp_path / "state", ContractCache(vault), store)
    store.close()


def test_a_captured_note_is_covered_until_its_file_changes(capturer: Capturer) -> None:
    result = capturer.capture(CaptureRequest(title="Covered note", body="indexed by its own batch"))
    assert result.indexed
    other = "notes/by-hand.md"
    assert capturer.group.covered({result.path, other}) == {result.path}  # a note no batch took needs its pass
    note = capturer.vault / result.path
    with open(note, "a", encoding="utf-8") as f:
        f.write("\nA line a person added afterwards.\n")
    assert capturer.group.covered({result.path}) == set()  # changed since its batch read it
    os.unlink(note)
    assert capturer.group.covered({result.path}) == set()  # gone: the pass must drop it from the index


def test_notes_a_batch_could_not_index_are_handed_on_and_not_covered(tmp_path: Path) -> None:
    vault = make_repo(tmp_path / "vault").resolve()
    capturer = Capturer(vault, tmp_path / "state", ContractCache(vault), None)

    def failing(paths: set[str]) -> set[str]:
        raise OSError("the index folder is on a disk that went away")

    capturer.group = GroupIndexer(failing, lambda p: (1, 2, 3, 4))
    handed: list[set[str]] = []
    capturer.group.missed = handed.append
    result = capturer.capture(CaptureRequest(title="Not indexed", body="its batch failed"))
    assert not result.indexed and result.note is not None
    assert handed == [{result.path}]
    assert capturer.group.covered({result.path}) == set()


def test_a_batch_that_indexed_nothing_covers_nothing(tmp_path: Path) -> None:
    vault = make_repo(tmp_path / "vault").resolve()
    capturer = Capturer(vault, tmp_path / "state", ContractCache(vault), None)  # no index yet
    result = capturer.capture(CaptureRequest(title="Before the index", body="written while the index opens"))
    assert not result.indexed
    assert capturer.group.covered({result.path}) == set()  # the first pass still has to index it


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("AGENTMD_DENSE", "0")
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    return resolve(vault=str(vault))


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    with running_daemon(settings) as d:
        yield d


def _paths(daemon: Daemon, query: str) -> list[str]:
    return [r.path for r in daemon.search(SearchRequest(query=query, limit=5), count_usage=False).results]


def test_an_edit_of_a_captured_note_reaches_the_index(daemon: Daemon, settings: Settings) -> None:
    answer = daemon.capture(CaptureRequest(title="Edited after capture", body="first words zqbeforeedit"))
    # searchable on return, or (when its batch could not index it) soon after, by the pass it was handed to
    wait_until(lambda: _paths(daemon, "zqbeforeedit") == [answer["path"]], 30, "the captured note indexed")
    note = settings.vault / answer["path"]
    note.write_text(note.read_text(encoding="utf-8") + "\nA person added zqafteredit.\n", encoding="utf-8")
    wait_until(lambda: _paths(daemon, "zqafteredit") == [answer["path"]], 30, "the edit indexed by a pass")


def test_a_new_note_is_covered_from_the_moment_it_has_its_name(capturer: Capturer) -> None:
    folder = capturer.vault / "memory"
    stop = threading.Event()
    seen: dict[str, bool] = {}

    def watch() -> None:  # what the daemon's watcher does, as fast as it can: look at every new note
        while not stop.is_set():
            for p in folder.rglob("*.md") if folder.exists() else ():
                rel = p.relative_to(capturer.vault).as_posix()
                if rel not in seen:
                    seen[rel] = rel in capturer.group.covered({rel})

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        results, errors = [], []
        threads = [
            threading.Thread(
                target=lambda i=i: _collect(
                    results, errors, lambda: capturer.capture(CaptureRequest(title=f"Landing {i}", body=f"note {i}"))
                )
            )
            for i in range(12)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        stop.set()
        watcher.join(30)
    assert errors == []
    assert len(results) == 12
    assert [p for p, ok in seen.items() if not ok] == []  # never seen on disk before it was queued


def _collect(results: list[Any], errors: list[BaseException], work: Callable[[], Any]) -> None:
    try:
        results.append(work())
    except BaseException as exc:  # reported by the test's assertion
        errors.append(exc)
