"""The daemon client (engine/client.py) against real loopback listeners: answers with a length or in
chunks, error statuses, silence, nobody listening, and finding the port from the state dir."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmd.engine.client import (
    DaemonClient,
    DaemonError,
    DaemonHTTPError,
    DaemonLost,
    DaemonTimeout,
    DaemonUnreachable,
    Located,
    daemon_port,
    recorded_port,
)


class Listener:
    """A loopback listener that answers every connection with fixed bytes (or never, when None) and keeps
    what it was sent."""

    def __init__(self, answer: bytes | None) -> None:
        self.answer = answer
        self.received: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.05)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            sizes = [int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")]
            length = sizes[0] if sizes else 0
            while len(body) < length:
                body += conn.recv(65536)
            self.received.append(head + b"\r\n\r\n" + body)
            if self.answer is None:
                self.held.append(conn)  # never answers
                continue
            conn.sendall(self.answer)
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for c in self.held:
            c.close()
        self.sock.close()


@pytest.fixture
def listen() -> Iterator[list[Listener]]:
    made: list[Listener] = []
    yield made
    for item in made:
        item.close()


def answer(status: str, body: bytes, *headers: str) -> bytes:
    return (f"HTTP/1.1 {status}\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n").encode() + body


def test_post_sends_json_to_loopback_and_reads_a_sized_answer(listen: list[Listener]) -> None:
    body = b'{"ok": true, "n": 3}'
    server = Listener(answer("200 OK", body, "Content-Type: application/json", f"Content-Length: {len(body)}"))
    listen.append(server)
    assert DaemonClient(server.port).post("/v1/search", {"query": "retry"}, timeout=5) == {"ok": True, "n": 3}
    head, _, sent = server.received[0].partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/search HTTP/1.1"
    assert f"Host: 127.0.0.1:{server.port}" in lines and "Content-Type: application/json" in lines
    assert json.loads(sent) == {"query": "retry"}


def test_get_reads_a_chunked_answer(listen: list[Listener]) -> None:
    chunks = b'7\r\n{"color\r\nb\r\n": "green"}\r\n0\r\n\r\n'
    server = Listener(answer("200 OK", chunks, "Transfer-Encoding: chunked"))
    listen.append(server)
    assert DaemonClient(server.port).get("/status", timeout=5) == {"color": "green"}
    assert server.received[0].startswith(b"GET /status HTTP/1.1\r\n")


def test_error_statuses_keep_the_daemons_message_and_code(listen: list[Listener]) -> None:
    body = b'{"error": "bad search request: limit", "code": "usage"}'
    server = Listener(answer("400 Bad Request", body, f"Content-Length: {len(body)}"))
    bare = Listener(answer("502 Bad Gateway", b"<html>oops</html>"))
    listen.extend([server, bare])
    with pytest.raises(DaemonHTTPError) as caught:
        DaemonClient(server.port).post("/v1/search", {}, timeout=5)
    assert (caught.value.status, caught.value.code, caught.value.message) == (
        400,
        "usage",
        "bad search request: limit",
    )
    with pytest.raises(DaemonHTTPError) as caught:
        DaemonClient(bare.port).get("/status", timeout=5)
    assert caught.value.message == "the daemon answered HTTP 502" and caught.value.code is None


def test_an_answer_without_json_is_an_error(listen: list[Listener]) -> None:
    server = Listener(answer("200 OK", b"not json"))
    listen.append(server)
    with pytest.raises(DaemonError, match="without JSON"):
        DaemonClient(server.port).get("/status", timeout=5)


def test_silence_is_a_timeout_and_nobody_listening_is_unreachable(listen: list[Listener]) -> None:
    silent = Listener(None)
    listen.append(silent)
    with pytest.raises(DaemonTimeout, match="did not answer"):
        DaemonClient(silent.port).get("/status", timeout=0.2)
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()  # nothing listens there now
    with pytest.raises(DaemonUnreachable, match="could not reach"):
        DaemonClient(port).get("/status", timeout=2)
    with pytest.raises(DaemonTimeout):
        DaemonClient(port).get("/status", timeout=0)
    with pytest.raises(DaemonError):
        DaemonClient(70000)


def test_a_daemon_that_stops_after_taking_a_request_says_the_request_may_be_done(
    listen: list[Listener], tmp_path: Path
) -> None:
    from agentmd.engine.errors import AgentmdError

    dying = Listener(b"")  # reads the whole request, then closes without a word: a daemon killed mid-request
    listen.append(dying)
    with pytest.raises(DaemonLost, match="cut short"):
        DaemonClient(dying.port).post("/v1/curate", {"action": "confirm"}, timeout=5)
    with pytest.raises(AgentmdError) as caught:
        again = "Run the command again once the daemon is back: the notes already done are skipped"
        Located(dying.port, tmp_path).ask("/v1/curate", {"action": "confirm"}, what="confirm", again=again, timeout=5)
    said = str(caught.value)
    assert said.startswith("confirm: agentmd serve on port") and "may be done in part" in said
    assert "agentmd log" in said and "is it still running" not in said and said.endswith(again)
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(AgentmdError, match="is it still running"):  # nothing took it: nothing was done
        Located(port, tmp_path).ask("/v1/curate", {}, what="confirm", again="", timeout=2)
    from agentmd.engine.backends import RemoteBackend

    taken = Listener(b"")  # a capture taken, then no answer: it may be written, and the same one again is no twin
    listen.append(taken)
    with pytest.raises(AgentmdError) as lost:
        RemoteBackend(Located(taken.port, tmp_path)).capture({"title": "Taken", "body": "then no answer"})
    assert "may have been written" in str(lost.value) and "not a twin" in str(lost.value)


def test_port_discovery_follows_the_instance_lock(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    assert daemon_port(state) is None and recorded_port(state) is None  # no daemon ever ran
    (state / "daemon.json").write_text(json.dumps({"pid": 1, "port": 4321}))
    fd = os.open(state / "daemon.lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        assert daemon_port(state) is None  # a stale daemon.json: nobody holds the lock
        assert recorded_port(state) == 4321
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert daemon_port(state) == 4321
        (state / "daemon.json").write_text(json.dumps({"pid": 1, "port": "x"}))
        with pytest.raises(DaemonError, match="names no port"):
            daemon_port(state)
        assert recorded_port(state) is None
    finally:
        os.close(fd)
