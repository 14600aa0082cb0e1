"""Many captures at once: the group commit keeps every guarantee a single capture has.

A real daemon on a real git vault, many threads capturing over HTTP `/v1/capture` (and MCP sessions beside
them) at the same moment: every acknowledged capture is searchable when its answer arrives, is committed
with `origin: capture`, and no capture writes a twin; the daily cap stays exact. The group itself
(engine/write/group.py) is driven with an index update that waits on an event, so what a batch holds is
decided by the test, not by timing.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import md_files
from daemon_helpers import auth, git, is_clean, make_repo, mcp_transport, running_daemon, wait_until
from mcp import Client

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.settings import Settings, resolve
from agentmd.engine.write.capture import Capturer, CaptureRequest
from agentmd.engine.write.group import GroupIndexer
from agentmd.rules import ContractCache

pytestmark = pytest.mark.slow

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def post(port: int, path: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", **auth(port)},
        method="POST",
    )
    try:
        with OPENER.open(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def found(port: int, token: str) -> list[str]:
    code, body = post(port, "/v1/search", {"query": token, "limit": 10, "count_usage": False})
    assert code == 200, body
    return [r["path"] for r in body["results"]]


def committed_with_origin_capture(vault: Path) -> set[str]:
    out = git(vault, "log", "--format=", "--name-only", "--grep=^origin: capture$")
    return {line for line in out.splitlines() if line}


def all_at_once(n: int, work: Callable[[int], Any]) -> tuple[list[Any], list[BaseException]]:
    """Run `work(i)` for i < n in n threads released together; their results and their exceptions."""
    start = threading.Barrier(n)
    results: list[Any] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        start.wait()
        try:
            value = work(i)
        except BaseException as exc:  # reported by the caller's assertion
            with lock:
                errors.append(exc)
        else:
            with lock:
                results.append(value)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results, errors


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("AGENTMD_DENSE", "0")
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/first.md": "first note about otters\n"})
    return resolve(vault=str(vault))


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    with running_daemon(settings) as d:
        yield d


def test_concurrent_captures_are_each_searchable_on_return_committed_and_never_twinned(
    daemon: Daemon, settings: Settings
) -> None:
    port, threads, each = daemon.port, 16, 3

    def client(i: int) -> list[tuple[str, bool]]:
        acked = []
        for k in range(each):
            token = f"zqgroup{i}x{k}q"
            code, body = post(
                port,
                "/v1/capture",
                {"title": f"Group capture {i} {k}", "body": f"Written at once: {token}.", "type": "decision",
                 "why": "concurrency test"},
            )  # fmt: skip
            assert code == 200, body
            acked.append((body["path"], body["path"] in found(port, token)))
        return acked

    results, errors = all_at_once(threads, client)
    assert errors == []
    acked = [a for r in results for a in r]
    paths = [p for p, _ in acked]
    assert len(paths) == threads * each
    assert all(ok for _, ok in acked), [p for p, ok in acked if not ok]
    assert len(set(paths)) == len(paths)  # every capture its own note
    notes = {p for p in md_files(settings.vault) if p.startswith("memory/")}
    assert notes == set(paths)  # and nothing written beside them
    assert daemon.capturer.group.stats.notes == len(paths)  # each indexed by a group commit before its answer
    wait_until(lambda: is_clean(settings.vault), 30, "the captures committed")
    assert set(paths) <= committed_with_origin_capture(settings.vault)


def test_a_capture_costs_the_watcher_one_file_event_its_temp_file_none(daemon: Daemon, settings: Settings) -> None:
    assert daemon.watcher is not None
    # a first capture makes the month's folders; their creation (and watchdog's scan of each new folder, which
    # may report the note inside it a second time) is not what this test counts
    first = daemon.watcher.stats()
    code, body = post(daemon.port, "/v1/capture", {"title": "Folder-making capture", "body": "the month's folders"})
    assert code == 200, body
    wait_until(lambda: daemon.watcher is not None and daemon.watcher.stats()["events"] > first["events"], 30,
               "the first note's file events")  # fmt: skip
    wait_until(lambda: is_clean(settings.vault), 30, "the first capture committed")
    before = daemon.watcher.stats()
    paths = []
    for k in range(10):
        code, body = post(daemon.port, "/v1/capture", {"title": f"Watched capture {k}", "body": f"body {k}"})
        assert code == 200, body
        paths.append(body["path"])
    # each note's own creation reaches the watcher (a hint its batch has covered already)
    wait_until(lambda: daemon.watcher is not None and daemon.watcher.stats()["events"] >= before["events"] + 10, 30,
               "the notes' file events")  # fmt: skip
    after = daemon.watcher.stats()
    # the temp files were written where no watch looks: no creation, write, close or removal of theirs was read
    # (at most the scratch folder's own creation, seen by the vault root's watch, is dropped)
    assert after["ignored"] - before["ignored"] <= 2, (before, after)
    assert after["events"] - before["events"] <= 10 + 2
    assert all((settings.vault / p).is_file() for p in paths)
    wait_until(lambda: is_clean(settings.vault), 30, "the captures committed")
    assert set(paths) <= committed_with_origin_capture(settings.vault)


def test_http_and_mcp_captures_together_are_searchable_on_return(daemon: Daemon, settings: Settings) -> None:
    port = daemon.port
    mcp_acked: list[tuple[str, bool]] = []

    async def sessions() -> None:
        async def one(i: int) -> None:
            async with Client(mcp_transport(port)) as session:
                for k in range(3):
                    token = f"zqmcp{i}x{k}q"
                    result = await session.call_tool(
                        "memory_capture", {"title": f"Mcp capture {i} {k}", "body": f"Over MCP: {token}."}
                    )
                    path = result.structured_content["path"]
                    hits = await anyio.to_thread.run_sync(found, port, token)
                    mcp_acked.append((path, path in hits))

        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(one, i)

    def http_side(i: int) -> tuple[str, bool]:
        if i == 0:
            anyio.run(sessions)
            return ("", True)
        token = f"zqhttp{i}q"
        code, body = post(port, "/v1/capture", {"title": f"Http capture {i}", "body": f"Over HTTP: {token}."})
        assert code == 200, body
        return body["path"], body["path"] in found(port, token)

    results, errors = all_at_once(9, http_side)
    assert errors == []
    acked = [r for r in results if r[0]] + mcp_acked
    assert len(acked) == 8 + 12
    assert all(ok for _, ok in acked), acked
    assert len({p for p, _ in acked}) == len(acked)
    wait_until(lambda: is_clean(settings.vault), 30, "the captures committed")
    assert {p for p, _ in acked} <= committed_with_origin_capture(settings.vault)


def test_identical_captures_through_the_daemon_write_one_note_and_each_answer_is_searchable(
    daemon: Daemon, settings: Settings
) -> None:
    payload = {"title": "Sent by every agent", "body": "The same thought, zqsamethoughtq, from all of them."}

    def send(_: int) -> tuple[str, bool, bool]:
        code, body = post(daemon.port, "/v1/capture", payload)
        assert code == 200, body
        return body["path"], body["reinforced"], body["path"] in found(daemon.port, "zqsamethoughtq")

    results, errors = all_at_once(12, send)
    assert errors == []
    assert len({p for p, _, _ in results}) == 1
    assert sorted(r for _, r, _ in results) == [False] + [True] * 11
    assert all(s for _, _, s in results)
    assert [p for p in md_files(settings.vault) if "sent-by-every-agent" in p] == [results[0][0]]


def test_the_daily_cap_is_exact_under_concurrent_captures(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTMD_DENSE", "0")
    monkeypatch.setenv("AGENTMD_DAILY_WRITE_CAP", "7")
    settings = resolve(vault=str(make_repo(tmp_path / "vault")))
    d = Daemon(settings, port=0, commit_debounce=0.2, health_interval=0, probe_interval=0)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], 30, "first pass")

        def send(i: int) -> tuple[int, dict[str, Any]]:
            return post(d.port, "/v1/capture", {"title": f"Racing note {i}", "body": f"racer {i}", "type": "fact"})

        results, errors = all_at_once(24, send)
        assert errors == []
        ok = [b["path"] for c, b in results if c == 200]
        refused = [b.get("code") for c, b in results if c != 200]
        assert len(ok) == 7
        assert refused == ["daily-write-cap"] * 17
        assert {p for p in md_files(settings.vault) if p.startswith("memory/")} == set(ok)
        assert d.capturer.gate.count(d.capturer.now().date()) == 7
    finally:
        d.stop()


# -- the group itself, with an index update the test holds back --------------------------------------------


class HeldUpdate:
    """An index update that waits for `release` before doing the real work, recording each batch."""

    def __init__(self, vault: Path, store: Store) -> None:
        self.vault, self.store = vault, store
        self.release = threading.Event()
        self.started = threading.Event()
        self.batches: list[set[str]] = []

    def __call__(self, paths: set[str]) -> set[str]:
        self.batches.append(set(paths))
        self.started.set()
        assert self.release.wait(30)
        report = reconcile(self.vault, self.store, only=paths)
        return paths - {e["path"] for e in report.errors}


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[Capturer, HeldUpdate]]:
    vault = make_repo(tmp_path / "vault").resolve()
    store = Store(tmp_path / "cache")
    capturer = Capturer(vault, tmp_path / "state", ContractCache(vault), store)
    update = HeldUpdate(vault, store)
    capturer.group = GroupIndexer(update)
    yield capturer, update
    update.release.set()  # a failed test must not leave a capture waiting on it
    store.close()


def test_captures_arriving_during_a_batch_are_indexed_together_in_the_next(
    held: tuple[Capturer, HeldUpdate],
) -> None:
    capturer, update = held
    answers: dict[str, Any] = {}

    def capture(title: str) -> None:
        answers[title] = capturer.capture(CaptureRequest(title=title, body=f"body of {title}"))

    first = threading.Thread(target=capture, args=("First alone",))
    first.start()
    assert update.started.wait(10)
    others = [threading.Thread(target=capture, args=(f"Queued behind {i}",)) for i in range(5)]
    for t in others:
        t.start()
    wait_until(lambda: len(capturer.group.queued()) == 5, 10, "five notes queued behind the running batch")
    assert "First alone" not in answers  # nobody answers before the batch holding their note is done
    update.release.set()
    for t in [first, *others]:
        t.join(30)
    assert len(update.batches) == 2
    assert update.batches[0] == {answers["First alone"].path}
    assert update.batches[1] == {answers[f"Queued behind {i}"].path for i in range(5)}
    assert all(a.indexed and not a.reinforced for a in answers.values())
    assert capturer.store is not None
    for a in answers.values():
        assert capturer.store.catalog.get(a.path) is not None


def test_an_identical_capture_filed_elsewhere_finds_the_note_still_waiting_for_its_batch(
    held: tuple[Capturer, HeldUpdate],
) -> None:
    capturer, update = held
    body = "Both agents thought it, one called it a decision and the other a procedure.\n"
    answers: dict[str, Any] = {}

    def capture(kind: str) -> None:
        answers[kind] = capturer.capture(CaptureRequest(title="Same thought", body=body, type=kind, why="w"))

    first = threading.Thread(target=capture, args=("decision",))
    first.start()
    assert update.started.wait(10)  # written, not yet in the catalog
    second = threading.Thread(target=capture, args=("procedure",))
    second.start()
    # the second finds the first's note among those waiting, and waits for that note's batch with it
    wait_until(lambda: capturer.group.waiting() == 2, 10, "the second capture waiting on the first's batch")
    assert capturer.group.queued() == set()  # it wrote nothing of its own
    update.release.set()
    first.join(30)
    second.join(30)
    assert answers["procedure"].reinforced and answers["procedure"].path == answers["decision"].path
    assert answers["procedure"].indexed  # answered once the note it returns is searchable
    assert [p for p in md_files(capturer.vault) if "same-thought" in p] == [answers["decision"].path]


def held_first_batch() -> tuple[threading.Event, list[set[str]], GroupIndexer]:
    """A group indexer whose first batch runs until the event is set; every batch's notes are recorded."""
    release = threading.Event()
    batches: list[set[str]] = []

    def update(paths: set[str]) -> set[str]:
        batches.append(set(paths))
        if len(batches) == 1:
            assert release.wait(30)
        return set(paths)

    return release, batches, GroupIndexer(update)


def test_an_ending_batch_hands_the_lead_to_a_waiting_capture_past_a_note_nobody_waits_for() -> None:
    release, batches, group = held_first_batch()
    first = group.submit("a.md", "A")
    returned: dict[str, bool] = {}

    def wait(name: str, ticket: Any) -> None:
        returned[name] = group.wait(ticket)

    threads = [threading.Thread(target=wait, args=("a", first))]
    threads[0].start()
    wait_until(lambda: len(batches) == 1, 10, "the first batch running")
    unwaited = group.submit("orphan.md", "O")  # written, its capture not waiting yet: it cannot take the lead
    second, third = group.submit("b.md", "B"), group.submit("c.md", "C")
    threads += [
        threading.Thread(target=wait, args=("b", second)),
        threading.Thread(target=wait, args=("b-twin", second)),  # a twin's capture waits for the same note
        threading.Thread(target=wait, args=("c", third)),
    ]
    for t in threads[1:]:
        t.start()
    wait_until(lambda: group.waiting() == 4, 10, "three captures waiting behind the running batch")
    release.set()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)  # the lead reached a waiting capture: nobody is left asleep
    assert returned == {"a": True, "b": True, "b-twin": True, "c": True}
    assert batches == [{"a.md"}, {"orphan.md", "b.md", "c.md"}]  # one batch took every queued note
    assert group.wait(unwaited) is True  # its capture, waiting at last, finds it indexed
    assert group.waiting() == 0 and group.queued() == set()


def test_a_batch_led_by_a_handed_over_capture_records_how_long_the_hand_over_took() -> None:
    release, batches, group = held_first_batch()
    first = group.submit("a.md", "A")
    leader = threading.Thread(target=group.wait, args=(first,))
    leader.start()
    wait_until(lambda: len(batches) == 1, 10, "the first batch running")
    second = group.submit("b.md", "B")
    follower = threading.Thread(target=group.wait, args=(second,))
    follower.start()
    wait_until(lambda: group.waiting() == 2, 10, "a capture waiting behind the running batch")
    release.set()
    for t in (leader, follower):
        t.join(30)
    assert not leader.is_alive() and not follower.is_alive()
    assert "handover" not in first.batch_stages  # nobody handed the first batch its lead: it found none running
    assert second.batch_stages["handover"] >= 0  # the second batch's leader was woken to lead it
    assert second.batch_started_ns > first.batch_started_ns


def test_a_batch_that_fails_before_its_update_still_answers_its_captures() -> None:
    def stat(path: str) -> tuple[int, ...]:
        raise RuntimeError(f"no stat for {path}")

    handed: list[set[str]] = []
    group = GroupIndexer(lambda paths: set(paths), stat)
    group.missed = handed.append
    ticket = group.submit("a.md", "A")
    assert group.wait(ticket) is False  # answered, as not indexed: the next pass indexes it
    assert handed == [{"a.md"}] and group.waiting() == 0
