"""The HTTP listener's limits (engine/daemon/http_limits.py): a request head past the bound is refused and its
connection closed, a request that never finishes arriving is cut off, and connections past the bound are closed
at once, so a local process holding no token cannot stall the daemon. Real sockets on 127.0.0.1: the daemon's own
listener for the head bound, and the same server class over a small app with tighter limits for the clocks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_helpers import http_get, running_daemon, vault_settings, wait_until
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from agentmd.engine.daemon.http_limits import LimitedHttp
from agentmd.engine.daemon.server import HttpServer

pytestmark = pytest.mark.slow


class Tight(LimitedHttp):
    """The limits, tightened so a test sees them act within a second or two."""

    max_head_bytes = 4 * 1024
    request_seconds = 1.0
    max_connections = 8


def answer_of(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """Everything the server sends until it closes the connection (b"" when it closes without a word)."""
    sock.settimeout(timeout)
    got = b""
    while True:
        try:
            part = sock.recv(65536)
        except ConnectionResetError:
            return got
        if not part:
            return got
        got += part


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


@pytest.fixture
def tight() -> Iterator[int]:
    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse(f"hello {len(await request.body())}")

    async def slow(request: Request) -> PlainTextResponse:
        await asyncio.sleep(2.0)
        return PlainTextResponse("slow")

    app = Starlette(routes=[Route("/", hello, methods=["GET", "POST"]), Route("/slow", slow)])
    server = HttpServer(app, 0, protocol=Tight)
    server.start()
    try:
        yield server.port
    finally:
        server.stop()


def get(port: int, path: str = "/", extra: bytes = b"") -> bytes:
    with connect(port) as s:
        s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra + b"Connection: close\r\n\r\n")
        return answer_of(s)


def test_a_head_past_the_bound_is_refused_by_the_daemon_and_it_answers_the_next(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with running_daemon(vault_settings(tmp_path / "vault", {"a.md": "# A\n"})) as daemon:
        with connect(daemon.port) as s:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 200_000)
            got = answer_of(s)
        assert got.startswith(b"HTTP/1.1 431") and b"at most 64 KiB" in got
        for size in (66_000, 100_000):  # whole heads a little past the bound, sent at once: refused as well
            with connect(daemon.port) as s:
                s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * size + b"\r\n\r\n")
                assert answer_of(s).startswith(b"HTTP/1.1 431"), size
        with connect(daemon.port) as s:  # a head just under the bound is served as before
            head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Big: " + b"a" * 60_000
            s.sendall(head + b"\r\n\r\n")
            assert answer_of(s).startswith(b"HTTP/1.1 200")
        assert http_get(daemon.port, "/health")[0] == 200


def test_the_head_bound_holds_for_every_request_of_a_kept_alive_connection(tight: int) -> None:
    # the second request's head is counted from its first byte, in one read or in several
    for pieces in (1, 3):
        with connect(tight) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            s.settimeout(5)
            reply = b""
            while not reply.endswith(b"hello 0"):
                part = s.recv(65536)
                assert part, reply
                reply += part
            head = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 6000 + b"\r\n\r\n"
            step = -(-len(head) // pieces)
            for at in range(0, len(head), step):
                s.sendall(head[at : at + step])
                time.sleep(0.05)
            assert answer_of(s).startswith(b"HTTP/1.1 431"), pieces


def test_a_request_that_never_finishes_arriving_is_cut_off(tight: int) -> None:
    started = time.monotonic()
    with connect(tight) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")  # the head's end never comes
        assert answer_of(s) == b""
    with connect(tight) as s:
        s.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nonly part of it")
        assert answer_of(s) == b""
    with connect(tight) as s:  # a connection that sends nothing at all
        assert answer_of(s) == b""
    assert time.monotonic() - started < 30  # each cut after about a second, not held for ever
    assert get(tight).endswith(b"hello 0")


def test_keep_alive_requests_and_bodies_under_the_bounds_pass(tight: int) -> None:
    with connect(tight) as s:
        for n in (10, 3000):
            body = b"x" * n
            s.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % n + body)
            s.settimeout(5)
            reply = b""
            while not reply.endswith(b"hello %d" % n):
                part = s.recv(65536)
                assert part, reply
                reply += part
        time.sleep(1.5)  # idle between requests: uvicorn's keep-alive time, not the request clock
    big_body = b"y" * 100_000  # a body is not a head: past the head bound, still served
    with connect(tight) as s:
        head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 100000\r\n\r\n"
        s.sendall(head + big_body)
        assert answer_of(s).endswith(b"hello 100000")


def test_a_connection_past_the_bound_takes_the_place_of_the_oldest_still_sending_its_head(tight: int) -> None:
    """Every slot held by a connection trickling its head or its body, or idle between requests: a whole request
    still gets through, and the oldest such is closed; with every slot holding a request being worked on, one
    more is closed at once."""
    for start in (
        b"GET / HTTP/1.1\r\n",  # heads still coming
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nx",  # bodies still coming, read
    ):
        held = [connect(tight) for _ in range(Tight.max_connections)]
        try:
            for s in held:
                s.sendall(start)
                time.sleep(0.02)  # their order of arrival
            with connect(tight) as extra:
                extra.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                assert answer_of(extra, 5).endswith(b"hello 0")
            assert answer_of(held[0], 5) == b""  # the oldest unfinished request made room
        finally:
            for s in held:
                s.close()
        wait_until(lambda: get(tight).endswith(b"hello 0"), 10, "service after the holders are gone")
    idle = [connect(tight) for _ in range(Tight.max_connections)]
    try:
        for s in idle:  # a request answered, the connection kept open for the next (keep-alive), idle
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            s.settimeout(5)
            assert s.recv(65536).endswith(b"hello 0")
        with connect(tight) as extra:
            extra.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert answer_of(extra, 5).endswith(b"hello 0")
    finally:
        for s in idle:
            s.close()
    wait_until(lambda: get(tight).endswith(b"hello 0"), 10, "service after the idle ones are gone")
    busy = [connect(tight) for _ in range(Tight.max_connections)]
    try:
        for s in busy:  # whole requests the daemon is working on (a slow answer)
            s.sendall(b"GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        time.sleep(0.2)
        extra = connect(tight)
        with contextlib.suppress(OSError):
            extra.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert answer_of(extra, 5) == b""
        extra.close()
    finally:
        for s in busy:
            s.close()
    wait_until(lambda: get(tight).endswith(b"hello 0"), 10, "service after the holders are gone")


def test_a_client_hanging_up_mid_body_is_no_error_of_the_daemons(
    tmp_path: Path, env: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    # a path open to any local process (the page's session) reads its body; a client that hangs up before the
    # body arrives is logged in one debug line, never as an internal error with its traceback
    caplog.set_level(logging.DEBUG, logger="agentmd")
    with running_daemon(vault_settings(tmp_path / "vault", {"a.md": "# A\n"})) as daemon:
        for _ in range(5):
            with connect(daemon.port) as s:
                s.sendall(
                    b"POST /ui/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 100000\r\n\r\n{"
                )
        wait_until(lambda: sum("hung up before its body" in r.getMessage() for r in caplog.records) >= 5, 10, "5")
        assert http_get(daemon.port, "/health")[0] == 200
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]
