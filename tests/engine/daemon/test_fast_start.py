"""A daemon started on an index already built answers from it at once, while its start-up pass (the vault
compared with the index) still runs: searches find the notes, status says the pass is running and is not red,
and captures work without twins. The pass is held back by the daemon's `before_first_pass` hook, so nothing
here depends on timing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_helpers import client_of, http_get, make_repo, wait_until

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import Settings, resolve
from agentmd.engine.write.capture import CaptureRequest

pytestmark = pytest.mark.slow


class Held:
    """The hook that holds the start-up pass until the test lets it go."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.go = threading.Event()

    def __call__(self) -> None:
        self.reached.set()
        self.go.wait(60)


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    vault = make_repo(
        tmp_path / "vault",
        {
            "README.md": "# Vault\n",
            "notes/otters.md": "# Otters\n\nOtters hold hands while they sleep in the kelp.\n",
            "notes/herons.md": "# Herons\n\nHerons stand still in the shallows waiting for fish.\n",
        },
    )
    built = resolve(vault=str(vault))
    with Store(built.cache_dir) as store:  # the index a daemon that ran before left behind
        report = reconcile(vault, store)
    assert report.added == 3
    return built


@pytest.fixture
def held(settings: Settings) -> Iterator[tuple[Daemon, Held]]:
    hold = Held()
    d = Daemon(settings, port=0, commit_debounce=0.2, health_interval=0, probe_interval=0, before_first_pass=hold)
    d.start()
    try:
        assert hold.reached.wait(30), "the indexer never opened the index"
        yield d, hold
    finally:
        hold.go.set()
        d.stop()


def paths(answer: dict[str, object]) -> list[str]:
    results = answer["results"]
    assert isinstance(results, list)
    return [r["path"] for r in results]


def test_search_and_status_answer_from_the_built_index_while_the_start_up_pass_is_held(
    held: tuple[Daemon, Held], settings: Settings
) -> None:
    d, hold = held
    # a note deleted while the daemon was down: shown until the pass reaches it
    (settings.vault / "notes/herons.md").unlink()

    answer = client_of(d).post("/v1/search", {"query": "otters kelp", "count_usage": False})
    assert paths(answer)[0] == "notes/otters.md"
    assert answer["index_stale"] is True
    assert "start-up pass" in str(answer.get("note"))
    assert "notes/herons.md" in paths(client_of(d).post("/v1/search", {"query": "herons", "count_usage": False}))

    code, status = http_get(d.port, "/status")
    assert code == 200
    assert status["color"] != "red" and status["red"] == []
    assert status["index"]["start_pass"] == "running" and status["index"]["index_stale"] is True
    assert status["index"]["documents"] == 3
    assert any(line.startswith("index-checking") for line in status["yellow"])
    # the dense arm loads only once the pass has run (its store's load would hold the interpreter meanwhile)
    assert status["dense"]["state"] == "loading" and "start-up pass" in status["dense"]["reason"]
    assert d.passes == 0  # still held: everything above came from the index as it was opened

    hold.go.set()
    wait_until(lambda: not d.health()["index_stale"], 30, "the start-up pass")
    assert d.search(SearchRequest(query="herons"), count_usage=False).results == ()  # the pass reached it
    code, status = http_get(d.port, "/status")
    assert status["index"]["start_pass"] == "done" and status["index"]["documents"] == 2
    assert not any(line.startswith("index-checking") for line in status["yellow"])
    wait_until(lambda: d.dense.status()["state"] != "loading", 60, "the dense arm loaded after the pass")


def test_captures_during_the_held_pass_land_once_and_become_searchable(held: tuple[Daemon, Held]) -> None:
    d, hold = held
    request = CaptureRequest(title="Kingfishers nest in banks", body="The kingfisher digs a tunnel in the bank.")
    first = d.capture(request)
    again = d.capture(request)  # a retry while the pass is held: answered with the same note, no twin
    assert again["path"] == first["path"]
    captured = first["path"]
    assert (d.settings.vault / captured).is_file()
    assert not (d.settings.vault / captured.replace(".md", "-2.md")).exists()

    hold.go.set()
    wait_until(lambda: not d.health()["index_stale"], 30, "the start-up pass")
    wait_until(
        lambda: captured in [r.path for r in d.search(SearchRequest(query="kingfisher"), count_usage=False).results],
        30,
        "the captured note searchable",
    )
