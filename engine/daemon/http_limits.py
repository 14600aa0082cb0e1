"""The limits uvicorn's HTTP protocol lacks, so that a local process holding no token cannot stall the daemon.

The guard (engine/daemon/server.py) judges a request once its head (request line and headers) has arrived, and
uvicorn with httptools reads a head of any size for any time. Without limits, three connections sending 150 MiB
header lines took the daemon to 1.2 GB and `/health` to 30 s, and 21,000 connections each sending a header line
every few seconds took every file descriptor (`agentmd capture` then failed). `LimitedHttp` adds:

- a request's head is at most `MAX_HEAD_BYTES` (431 and the connection closed past it, judged as the bytes
  arrive, before the parser reads them);
- a request is read whole, head and body, within `REQUEST_SECONDS` of its first byte, and a new connection sends
  its first request within the same time (else it is closed);
- at most `MAX_CONNECTIONS` connections are open at once, so the daemon keeps descriptors for its index, its git
  and its own clients' next connections. One past them takes the place of the oldest connection the daemon is
  doing nothing for: one whose request has not arrived whole (a client that trickles headers or a body, or
  opens and says nothing), one idle between requests (keep-alive), or one already answered whose body still
  trickles in. The product's clients send a request at once and wait for its answer, so a local process holding
  every slot that way, even on a path that needs no token, cannot lock them out. When every connection has a
  whole request being worked on, the new one is closed at once.

Loopback clients of the product (the CLI, the hooks, MCP clients, the page) send heads of a few hundred bytes
and bodies of at most a MiB within milliseconds: none comes near a limit.
"""

from __future__ import annotations

import asyncio
import logging
import time

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("agentmd.daemon")

MAX_HEAD_BYTES = 64 * 1024
REQUEST_SECONDS = 20.0
MAX_CONNECTIONS = 256
_SAID_EVERY = 60.0  # seconds between two log lines about connections refused for their number


class LimitedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol with a bound on each request's head, on the time to read a request, and on
    the connections open at once (see the module docstring)."""

    max_head_bytes = MAX_HEAD_BYTES
    request_seconds = REQUEST_SECONDS
    max_connections = MAX_CONNECTIONS
    _head: int = 0  # bytes read of the current request's head; -1 once it is whole
    _whole = True  # False from a request's first byte until its body has arrived
    _began = 0.0  # when the current request's head (or the connection's first) began to be awaited
    _deadline: asyncio.TimerHandle | None = None
    _said_at = 0.0  # when the refusal of connections past the limit was last logged (class-wide)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            waiting = [c for c in self.connections if c is not self and isinstance(c, LimitedHttp) and c._idle()]
            victim = min(waiting, key=lambda c: c._began, default=None)
            now = time.monotonic()
            if now - LimitedHttp._said_at > _SAID_EVERY:
                LimitedHttp._said_at = now
                what = "closed the oldest connection still sending its head" if victim else "refused a connection"
                log.warning("%s, %d being open at once (held by a local process?)", what, self.max_connections)
            if victim is None:
                transport.close()
                return
            victim._too_slow()
        self._begin()

    def _idle(self) -> bool:
        """Whether closing this connection would cut no request the daemon is working on: it is still sending a
        request's head or body, waits between requests (keep-alive), or was answered already while its body
        still trickles in (a refusal sent before the body)."""
        return not self._whole or self.cycle is None or self.cycle.response_complete

    def _begin(self, *, counted: bool = False) -> None:
        """A request's reading starts (or the connection's first request is awaited); `counted`: its head's first
        bytes are counted already."""
        if not counted:
            self._head = 0
        self._began = time.monotonic()
        self._stop_clock()
        self._deadline = self.loop.call_later(self.request_seconds, self._too_slow)

    def _stop_clock(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._head >= 0 and self.transport is not None and not self.transport.is_closing():
            end = data.find(b"\r\n\r\n")  # the head's end, when it is in this read: the rest is the body
            self._head += len(data) if end < 0 else end + 4
            if self._head > self.max_head_bytes:  # judged before the parser reads the head, however large the read
                self._stop_clock()
                self.send_head_too_large()
                return
        super().data_received(data)  # a new request's first bytes start its clock (`on_message_begin`)

    def send_head_too_large(self) -> None:
        message = b"request head too large: agentmd takes at most %d KiB of request line and headers" % (
            self.max_head_bytes // 1024
        )
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: " + str(len(message)).encode() + b"\r\nconnection: close\r\n\r\n" + message
        )
        self.transport.close()

    def on_message_begin(self) -> None:
        self._whole = False
        super().on_message_begin()
        if self._deadline is None:
            self._begin(counted=True)

    def on_headers_complete(self) -> None:
        self._head = -1
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._whole = True
        self._head = 0  # what comes next on a kept-alive connection is the next request's head, counted as it comes
        self._stop_clock()
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_clock()
        super().connection_lost(exc)
