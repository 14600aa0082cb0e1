"""The prompt hook's light path (hooks/recall/light.py): the daemon on the vault lease runs the whole recall
(`/v1/recall`, engine/recall/serve.py) and the hook prints its answer.

Real hook processes against a real daemon, a listener that never answers and an HTTP server too old to
know the route, each named by a real vault lease (a held flock and lease.json in the vault's `.git`).
"""

from __future__ import annotations

import fcntl
import http.server
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmd.engine.client import DaemonClient, DaemonHTTPError, access_token
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index import usage
from agentmd.engine.recall.query import WALLS_CACHE
from agentmd.engine.settings import Settings
from recall.helpers import assert_block_shape, hook_log, payload, run_hook, usage_rows


def post_recall(daemon: Daemon, body: dict[str, object]) -> dict[str, object]:
    client = DaemonClient(daemon.port, token=access_token(daemon.settings.state_dir))
    answer = client.post("/v1/recall", body, timeout=30)
    assert isinstance(answer, dict)
    return answer


def test_the_daemon_runs_the_whole_recall_and_counts_what_it_rendered(daemon: Daemon, workdir: Path) -> None:
    prompt = "Why did we pick postgres for the ledger, and what should I watch about vacuum on the journal table?"
    answer = post_recall(daemon, {"prompt": prompt, "cwd": str(workdir)})
    assert answer["outcome"] == "ok"
    bullets = assert_block_shape(str(answer["text"]))
    assert bullets[0].startswith("- PostgreSQL over MySQL for the ledger database")
    assert "[this project]" in bullets[0]  # the project bound from the prompt's working directory
    detail = str(answer["detail"])
    assert "via=daemon" in detail and "project=ledgerline" in detail and f"counted={answer['counted']}" in detail
    usage.flush()
    assert usage_rows(daemon.settings)["memory/decisions/postgres-over-mysql.md"][0] == 1
    assert answer["counted"] == len(bullets)
    # budgets travel with the prompt
    one = post_recall(daemon, {"prompt": prompt, "max_entries": 1})
    assert len(assert_block_shape(str(one["text"]))) == 1


def test_a_stop_word_inside_a_notes_name_stays_in_the_daemons_query(daemon: Daemon) -> None:
    prompt = "what did I note about free will and determinism"
    before = post_recall(daemon, {"prompt": prompt})
    assert "query='note free determinism'" in str(before["detail"])  # no note is named "Free Will": dropped
    note = daemon.settings.vault / "references" / "free-will.md"
    note.write_text("---\ntitle: Free Will\n---\nWhether choices are caused, and what that leaves of blame.\n")
    deadline = time.monotonic() + 60
    after = post_recall(daemon, {"prompt": prompt})
    while "Free Will" not in str(after["text"]):  # indexed, then embedded: the daemon does both meanwhile
        assert time.monotonic() < deadline, f"the new note was never recalled: {after['detail']}"
        time.sleep(0.1)
        after = post_recall(daemon, {"prompt": prompt})
    assert "query='note free will determinism'" in str(after["detail"])


def test_a_prompt_with_nothing_to_search_prints_nothing(daemon: Daemon) -> None:
    answer = post_recall(daemon, {"prompt": "```\nls -la\n```\nhttps://example.org"})
    assert (answer["outcome"], answer["text"], answer["counted"]) == ("ok", "", 0)


def test_a_session_that_turned_recall_off_is_told_once(daemon: Daemon) -> None:
    body = {"prompt": "why did we pick postgres for the ledger", "session_id": "s-off", "recall_env": "off"}
    first, second = post_recall(daemon, body), post_recall(daemon, body)
    assert first["outcome"] == second["outcome"] == "paused"
    assert "recall is off for this session" in str(first["text"]) and second["text"] == ""
    assert "said so before" in str(second["detail"])
    assert post_recall(daemon, {**body, "recall_env": "on"})["outcome"] == "ok"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"prompt": "postgres", "colour": "blue"}, "unknown field(s) colour"),
        ({"cwd": "/tmp"}, "`prompt` is required"),
        ({"prompt": 7}, "`prompt` must be"),
        ({"prompt": "postgres", "max_entries": 0}, "`max_entries` must be a whole number of at least 1"),
    ],
)
def test_a_malformed_recall_is_refused_saying_what_is_wrong(daemon: Daemon, body: dict[str, object], said: str) -> None:
    with pytest.raises(DaemonHTTPError) as caught:
        post_recall(daemon, body)
    assert caught.value.status == 400 and said in caught.value.message


def test_the_hook_process_prints_the_daemons_answer(
    daemon: Daemon, indexed: Settings, env: dict[str, str], workdir: Path
) -> None:
    def embedded() -> bool:  # the answers compared below come from the same vectors, not a store still filling
        dense = daemon.status()["dense"]
        return dense.get("state") in ("complete", "lexical-only") and dense.get("chunks_done") == dense.get(
            "chunks_total"
        )

    deadline = time.monotonic() + 120
    while not embedded():
        assert time.monotonic() < deadline, daemon.status()["dense"]
        time.sleep(0.1)
    event = payload("user_prompt_submit.json", workdir)
    code, out, err = run_hook(event, env)
    assert (code, err) == (0, "")
    expected = post_recall(daemon, {"prompt": json.loads(event)["prompt"], "cwd": str(workdir)})
    assert out == expected["text"] and out
    log = hook_log(indexed)
    assert " recall ok " in log and "via=daemon" in log and "session=7c1e0a52" in log
    assert not (indexed.state_dir / WALLS_CACHE).exists()  # the full hook would have cached the walls
    code, out, err = run_hook(payload("user_prompt_submit.json", workdir, hook_event_name="Stop"), env)
    assert (code, out, err) == (0, "", "")
    assert "hook_event_name is 'Stop'" in hook_log(indexed)


# ------------------------------------------------------------------ lease holders that are not a whole daemon


def hold_lease(vault: Path, port: int, state_dir: Path) -> int:
    """Hold the vault lease as a daemon does (engine/lease.py): the flock, and lease.json naming the port."""
    folder = vault / ".git" / "agentmd"
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / "daemon.lock", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    record = {"pid": os.getpid(), "port": port, "state_dir": str(state_dir), "machine": "test"}
    (folder / "lease.json").write_text(json.dumps(record), encoding="utf-8")
    return fd


@pytest.fixture
def silent_holder(indexed: Settings) -> Iterator[threading.Event]:
    """A lease holder whose port accepts connections and never answers; the event is set once one came."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.1)
    accepted, stop, held = threading.Event(), threading.Event(), []

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
                accepted.set()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    fd = hold_lease(indexed.vault, server.getsockname()[1], indexed.state_dir)
    yield accepted
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()
    os.close(fd)


def test_a_daemon_that_never_answers_costs_the_budget_and_is_a_give_up(
    indexed: Settings, env: dict[str, str], workdir: Path, silent_holder: threading.Event
) -> None:
    code, out, err = run_hook(payload("user_prompt_submit.json", workdir), env, "--time-budget", "0.6")
    assert (code, out) == (0, "")
    lines = err.splitlines()
    assert len(lines) == 1 and " recall timeout " in lines[0], err
    assert " recall timeout " in hook_log(indexed) and usage_rows(indexed) == {}


class _TooOld(http.server.BaseHTTPRequestHandler):
    """An older daemon's answer to a route it does not have."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"error": f"no route {self.path}"}).encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


def test_a_daemon_without_the_route_gets_the_full_hook(indexed: Settings, env: dict[str, str], workdir: Path) -> None:
    """The payload already read is handed to the full hook, which asks the same daemon for a plain search: here
    that is refused too, and the full hook's own log line says so."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _TooOld)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fd = hold_lease(indexed.vault, server.server_address[1], indexed.state_dir)
    try:
        code, out, err = run_hook(payload("user_prompt_submit.json", workdir), env)
    finally:
        os.close(fd)
        server.shutdown()
        server.server_close()
    assert (code, out, err) == (0, "", "")
    log = hook_log(indexed)
    assert " recall error " in log and "the daemon answered HTTP 404" in log and "no route /v1/search" in log
    assert "session=7c1e0a52" in log  # the full hook read the payload the light path handed on


def test_a_vault_without_git_is_served_through_its_state_folder(
    tmp_path: Path, env: dict[str, str], workdir: Path
) -> None:
    """No `.git`, so no lease: the light path finds the daemon holding the vault's own state folder."""
    from agentmd.engine.settings import resolve
    from recall.helpers import NOTES

    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    settings = resolve(vault=str(vault))
    daemon = Daemon(settings, port=0, commit_debounce=0.2, probe_interval=0)
    daemon.start()
    try:
        deadline = time.monotonic() + 30
        while daemon.health()["index_stale"]:
            assert time.monotonic() < deadline, "the daemon's first pass"
            time.sleep(0.02)
        code, out, err = run_hook(payload("user_prompt_submit.json", workdir), env)
    finally:
        daemon.stop()
    assert (code, err) == (0, "")
    assert assert_block_shape(out)[0].startswith("- PostgreSQL over MySQL for the ledger database")
    assert "via=daemon" in hook_log(settings)
    # the full hook caches the contract's walls in the state folder before it asks a daemon; this run did not
    assert not (settings.state_dir / WALLS_CACHE).exists()
