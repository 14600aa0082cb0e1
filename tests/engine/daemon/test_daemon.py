"""The real daemon on a real git vault: edits become searchable and committed; one daemon per vault."""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_helpers import files_in_commit, git, http_get, is_clean, make_repo, origins, serve_process, wait_until

from agentmd.engine.daemon.instance import AlreadyRunning, running_daemon
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import Settings, resolve

pytestmark = pytest.mark.slow


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/first.md": "first note about otters\n"})
    return resolve(vault=str(vault))


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    d = Daemon(settings, port=0, commit_debounce=0.2)
    d.start()
    wait_until(lambda: not d.health()["index_stale"], what="first pass")
    yield d
    d.stop()


def searchable(d: Daemon, word: str) -> list[str]:
    assert d.store is not None
    return [h.path for h in d.store.index.search([word], limit=10).hits]


def test_edits_become_searchable_and_committed(daemon: Daemon, settings: Settings) -> None:
    vault = settings.vault
    assert searchable(daemon, "otters") == ["notes/first.md"]
    (vault / "notes/second.md").write_text("a note about beavers\n")
    wait_until(lambda: searchable(daemon, "beavers") == ["notes/second.md"], 5, "new note indexed")
    wait_until(lambda: is_clean(vault), 10, "commit")
    assert origins(vault)[0] == "local-edit"
    assert "notes/second.md" in files_in_commit(vault)

    (vault / "notes/first.md").write_text("first note now about herons\n")
    wait_until(lambda: searchable(daemon, "herons") == ["notes/first.md"], 5, "edit indexed")
    assert searchable(daemon, "otters") == []

    os.rename(vault / "notes/second.md", vault / "notes/renamed.md")
    wait_until(lambda: searchable(daemon, "beavers") == ["notes/renamed.md"], 5, "rename indexed")

    (vault / "notes/renamed.md").unlink()
    wait_until(lambda: searchable(daemon, "beavers") == [], 5, "delete indexed")
    wait_until(lambda: is_clean(vault), 10, "everything committed")
    assert set(origins(vault)[:-1]) == {"local-edit"}


def test_the_long_lived_heap_is_set_aside_from_the_cycle_collector_after_the_first_pass(daemon: Daemon) -> None:
    # a full collection would otherwise walk the daemon's whole state and hold every thread while it does
    wait_until(lambda: gc.get_freeze_count() > 0, what="the heap set aside after the first pass")
    assert gc.get_freeze_count() > 10_000  # the modules and the index's state, not a handful of objects


def test_phone_and_hand_edits_split_into_two_commits(daemon: Daemon, settings: Settings) -> None:
    vault = settings.vault
    head = git(vault, "rev-parse", "HEAD").strip()
    (vault / "inbox/phone").mkdir(parents=True)
    (vault / "inbox/phone/clip.md").write_text("clipped from the phone\n")
    (vault / "notes/hand.md").write_text("typed by hand\n")
    wait_until(lambda: is_clean(vault), 10, "commits")
    new = git(vault, "log", "--format=%H", f"{head}..HEAD").split()
    by_origin = {}
    for sha in new:
        trailer = git(vault, "log", "-1", "--format=%(trailers:key=origin,valueonly)", sha).strip()
        by_origin.setdefault(trailer, set()).update(files_in_commit(vault, sha))
    assert by_origin.get("phone") == {"inbox/phone/clip.md"}
    assert "notes/hand.md" in by_origin.get("local-edit", set())


def test_temp_and_swap_files_never_indexed_or_committed(daemon: Daemon, settings: Settings) -> None:
    vault = settings.vault
    (vault / "notes/.first.md.swp").write_bytes(b"swap")
    (vault / "notes/first.md~").write_text("backup")
    (vault / ".tmp.driveupload").mkdir()
    (vault / ".tmp.driveupload/123.md").write_text("staging")
    (vault / "notes/real.md").write_text("real content kingfisher\n")
    wait_until(lambda: searchable(daemon, "kingfisher") == ["notes/real.md"], 5, "real note indexed")
    wait_until(lambda: "notes/real.md" in git(vault, "ls-files"), 10, "real note committed")
    tracked = git(vault, "ls-files").split("\n")
    assert not any(t.endswith((".swp", "~")) or t.startswith(".tmp.driveupload") for t in tracked)
    assert daemon.store is not None
    assert not any("drive" in p or p.endswith("~") for p in daemon.store.index.paths())


def test_second_daemon_refused_naming_the_first(daemon: Daemon, settings: Settings) -> None:
    other = Daemon(settings, port=0)
    with pytest.raises(AlreadyRunning, match=f"pid {os.getpid()}"):
        other.start()
    info = running_daemon(settings.state_dir)
    assert info is not None and info["port"] == daemon.port


def test_health_status_and_loopback_guard(daemon: Daemon) -> None:
    code, body = http_get(daemon.port, "/health")
    assert code == 200 and body["ok"] is True and body["index_stale"] is False
    code, body = http_get(daemon.port, "/status")
    assert code == 200
    assert body["index"]["documents"] == 2 and body["daemon"]["running"] is True
    assert "commit_failures" in body["git"]
    code, body = http_get(daemon.port, "/status", {"Host": "evil.example"})
    assert code == 403 and "loopback" in body["error"]
    code, _ = http_get(daemon.port, "/status", {"Origin": "http://evil.example"})
    assert code == 403
    code, _ = http_get(daemon.port, "/health", {"Origin": f"http://localhost:{daemon.port}"})
    assert code == 200
    code, body = http_get(daemon.port, "/nope")
    assert code == 404 and "no such endpoint: /nope" in body["error"] and "/mcp" in body["error"]
    code, body = http_get(daemon.port, "/sse")  # an MCP client set up for the older HTTP+SSE transport
    assert code == 404 and "MCP is served at /mcp" in body["error"] and "streamable" in body["error"]


def raw(port: int, head: str) -> bytes:
    """The answer to a request written byte for byte (headers repeated as given)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head.replace("\n", "\r\n").encode() + b"\r\n")
        got = b""
        while part := s.recv(65536):
            got += part
        return got


@pytest.mark.parametrize(
    "headers",
    [
        "Host: evil.example\nHost: 127.0.0.1",
        "Host: 127.0.0.1\nOrigin: http://evil.example\nOrigin: http://127.0.0.1",
        "Host: 127.0.0.1\nAuthorization: Bearer x\nAuthorization: Bearer y",
        "Host: evil.example@127.0.0.1",
        "Host: 127.0.0.1/evil.example",
    ],
)
def test_a_request_that_says_two_things_or_hides_a_name_in_its_host_is_refused(daemon: Daemon, headers: str) -> None:
    # a browser never sends these; which copy of a repeated header counts differs between readers, so none does
    got = raw(daemon.port, f"GET /status HTTP/1.1\n{headers}\nConnection: close\n")
    assert got.startswith((b"HTTP/1.1 400", b"HTTP/1.1 403")), got[:200]
    assert raw(daemon.port, "GET /health HTTP/1.1\nHost: 127.0.0.1\nConnection: close\n").startswith(b"HTTP/1.1 200")


def test_reconcile_converges_without_the_watcher(settings: Settings) -> None:
    d = Daemon(settings, port=0, watch=False, commit_debounce=0.1)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], what="first pass")
        (settings.vault / "notes/silent.md").write_text("written while nobody watched: pelicans\n")
        assert searchable(d, "pelicans") == []
        d.request_pass()
        wait_until(lambda: searchable(d, "pelicans") == ["notes/silent.md"], 5, "periodic pass")
        wait_until(lambda: is_clean(settings.vault), 10, "commit after the pass")
    finally:
        d.stop()


def _serve(settings: Settings, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    return serve_process(settings.vault, env, *extra)


def _port(settings: Settings, proc: subprocess.Popen[bytes]) -> int:
    def read() -> int | None:
        try:
            info = json.loads((settings.state_dir / "daemon.json").read_text())
        except (OSError, ValueError):
            return None
        if proc.pid not in (info.get("pid"), info.get("supervisor")):  # a file left by a killed daemon
            return None
        return info.get("port") or None

    return int(wait_until(read, 20, "daemon port"))


def test_kill_9_before_commit_then_restart_commits_as_local_edit(settings: Settings, env: dict[str, str]) -> None:
    proc = _serve(settings, env, "--commit-debounce", "600")
    try:
        port = _port(settings, proc)
        wait_until(lambda: http_get(port, "/health")[1].get("index_stale") is False, 20, "first pass")
        # the start-up commit cycle has run, so the next one is 600 s away
        wait_until(lambda: http_get(port, "/status")[1]["daemon"]["commit_cycles"] >= 1, 20, "start-up cycle")
        (settings.vault / "notes/unsaved.md").write_text("written just before the crash: narwhals\n")
        wait_until(lambda: http_get(port, "/status")[1]["index"]["documents"] == 3, 10, "indexed, not committed")
        assert not is_clean(settings.vault)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    proc = _serve(settings, env, "--commit-debounce", "0.2")
    try:
        port = _port(settings, proc)
        wait_until(lambda: is_clean(settings.vault), 20, "commit after restart")
        assert origins(settings.vault)[0] == "local-edit"
        assert "notes/unsaved.md" in files_in_commit(settings.vault)
        assert http_get(port, "/status")[1]["index"]["documents"] == 3
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_a_file_still_settling_is_committed_with_no_further_change(daemon: Daemon, settings: Settings) -> None:
    # dated an hour ahead, the note reads as just written until a second passes with it unchanged: the cycle
    # that leaves it asks for the next one itself, as no further event will (engine/git/settle.py)
    note = settings.vault / "notes/ahead.md"
    note.write_text("copied from a machine whose clock runs an hour ahead\n")
    ahead = time.time() + 3600
    os.utime(note, (ahead, ahead))
    wait_until(lambda: is_clean(settings.vault), 20, "the settled note committed")
    assert "notes/ahead.md" in files_in_commit(settings.vault)


def test_stop_commits_a_file_still_settling(settings: Settings) -> None:
    d = Daemon(settings, port=0, commit_debounce=600)  # no cycle of its own after the start-up one
    d.start()
    try:
        wait_until(lambda: d.commit_cycles >= 1, 20, "start-up cycle")
        note = settings.vault / "notes/ahead.md"
        note.write_text("still settling at the stop\n")
        ahead = time.time() + 3600
        os.utime(note, (ahead, ahead))
    finally:
        d.stop()
    assert is_clean(settings.vault), "the last cycle at the stop leaves no file waiting"
    assert "notes/ahead.md" in files_in_commit(settings.vault)


def test_sigterm_finishes_the_pending_commit(settings: Settings, env: dict[str, str]) -> None:
    proc = _serve(settings, env, "--commit-debounce", "600")
    port = _port(settings, proc)
    wait_until(lambda: http_get(port, "/health")[1].get("index_stale") is False, 20, "first pass")
    wait_until(lambda: http_get(port, "/status")[1]["daemon"]["commit_cycles"] >= 1, 20, "start-up cycle")
    (settings.vault / "notes/late.md").write_text("written right before shutdown\n")
    wait_until(lambda: http_get(port, "/status")[1]["index"]["documents"] == 3, 10, "indexed")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert is_clean(settings.vault), "the final commit cycle ran on shutdown"
    assert running_daemon(settings.state_dir) is None


def test_phone_clip_with_instructions_is_filed_by_the_daemon(daemon: Daemon, settings: Settings) -> None:
    vault = settings.vault
    clip = vault / "inbox/phone/pgbouncer.md"
    clip.parent.mkdir(parents=True)
    clip.write_text(
        "---\ninstructions: file as decision; why pooling limits; tag db\n---\n"
        "Use transaction pooling in pgbouncer for the API workers.\n"
    )
    target = vault / "memory/decisions/pgbouncer.md"
    wait_until(lambda: target.exists() and not clip.exists(), 10, "clip filed")
    assert "clipped_from: inbox/phone/pgbouncer.md" in target.read_text()
    wait_until(lambda: searchable(daemon, "pgbouncer") == ["memory/decisions/pgbouncer.md"], 5, "indexed")
    wait_until(lambda: is_clean(vault), 10, "committed")
    assert "phone" in origins(vault)[:3]


def test_a_daemon_that_cannot_open_its_index_exits_failing_and_says_why(tmp_path: Path, env: dict[str, str]) -> None:
    # a cache folder that cannot be made (here a file stands at its path; a full disk alike): `serve` exits with
    # the reason, failing, so the supervisor tries again later, instead of stopping as if asked to
    from agentmd.engine.errors import AgentmdError

    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("")
    d = Daemon(resolve(vault=str(vault), index=str(blocked / "idx")), port=0, commit_debounce=0.2)
    with pytest.raises(AgentmdError, match=r"agentmd serve stopped: could not open the index at .*idx"):
        d.run_forever()


def test_a_daemon_whose_state_folder_is_full_names_the_folder_and_leaves_no_temp_file(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentmd.engine.daemon.instance import StateUnwritable

    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    settings = resolve(vault=str(vault))
    monkeypatch.setenv("AGENTMD_FAILPOINTS", "secret-write=enospc")  # the disk fills as the first token is written
    d = Daemon(settings, port=0, commit_debounce=0.2)
    with pytest.raises(StateUnwritable) as raised:
        d.run_forever()
    message = str(raised.value)
    assert str(settings.state_dir) in message and "No space left on device" in message and "XDG_STATE_HOME" in message
    assert not [p.name for p in settings.state_dir.glob(".access.token*")]  # no half-made token stays behind


def test_commits_go_on_when_the_state_folder_cannot_take_the_commit_record(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    # the state disk filled after start: the cycles' record for `status` cannot be written, which is logged
    # once (no traceback per cycle) while every edit is still committed
    (settings.state_dir / "commit-state.json").mkdir(parents=True)  # nothing can be renamed onto a folder
    d = Daemon(settings, port=0, commit_debounce=0.2)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], what="first pass")
        for name in ("a", "b"):
            (settings.vault / f"notes/{name}.md").write_text(f"note {name}\n")
            wait_until(lambda: is_clean(settings.vault), 10, "commit")
            assert f"notes/{name}.md" in files_in_commit(settings.vault)
    finally:
        d.stop()
    said = [r for r in caplog.records if "could not record the commit cycles' state" in r.getMessage()]
    assert len(said) == 1 and said[0].exc_info is None
    assert not [r for r in caplog.records if r.exc_info is not None]


def test_a_daemon_that_cannot_write_the_vault_lease_on_a_full_disk_says_so_and_leaves_no_temp_file(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentmd.engine.daemon.instance import AlreadyRunning

    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    monkeypatch.setenv("AGENTMD_FAILPOINTS", "lease-write=enospc")
    d = Daemon(resolve(vault=str(vault)), port=0, commit_debounce=0.2)
    with pytest.raises(AlreadyRunning, match="the vault's disk is full; free some space on it"):
        d.run_forever()
    assert not [p.name for p in (vault / ".git" / "agentmd").glob(".lease.json.*")]


def test_a_full_or_read_only_cache_disk_is_named_as_such() -> None:
    import errno
    import sqlite3

    from agentmd.engine.index.store import no_room

    assert no_room(OSError(errno.ENOSPC, "No space left on device"))
    assert no_room(sqlite3.OperationalError("database or disk is full"))
    assert no_room(sqlite3.OperationalError("disk I/O error"))
    assert no_room(ValueError("Failed to open file for write: 'No space left on device (os error 28)'"))
    assert not no_room(OSError(errno.EEXIST, "File exists"))
    assert not no_room(sqlite3.OperationalError("no such table: notes"))
