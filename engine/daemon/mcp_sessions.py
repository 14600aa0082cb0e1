"""The MCP endpoint's HTTP sessions, capped in all and per client.

Open HTTP sessions are capped in all (`MAX_SESSIONS`) and per client (`MAX_SESSIONS_PER_CLIENT`; a client is
the name its initialize request gives and its User-Agent), so a client that opens sessions without closing them
costs a bounded amount of memory and cannot take the session another agent holds. A client at its own cap ends
its own session idle longest. At the total cap only a session idle for `RECENT_SESSION_SECONDS` or more is
ended, of the client holding the most; a session with a request in flight is never ended. When no session can
be ended, the new one is refused with 503 and a Retry-After header, and the open ones keep answering.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from mcp.types import INTERNAL_ERROR, INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("agentmd.mcp")

MAX_SESSIONS = 100  # open HTTP sessions in all; each costs some tens of KB
# A quarter of the total: a client rarely runs more agents at once, and one that floods leaves 3/4 to the others.
MAX_SESSIONS_PER_CLIENT = 25
# Long enough that an agent between two tool calls (a model turn, a build or a test run) keeps its session; half
# the idle timeout, so the total cap can still reclaim sessions before the SDK's timeout would.
RECENT_SESSION_SECONDS = 5 * 60
SESSION_IDLE_SECONDS = 10 * 60  # the SDK ends a session with no request for this long
BUSY_RETRY_SECONDS = 10  # Retry-After when every session of the client is busy with a request
OPENING_BODY_BYTES = 2**20  # read of an opening request's body to find the client's name (the guard's limit)


ClientKey = tuple[str | None, str]  # the name an initialize request gives (None: none could be read), User-Agent


def client_label(client: ClientKey) -> str:
    """A client as status names it: `name (user agent)`."""
    name, agent = client
    who = name if name is not None else "unknown client"
    return f"{who} ({agent})" if agent else who


def opening_client_name(body: bytes) -> str | None:
    """`params.clientInfo.name` of a JSON-RPC initialize request; None for anything else (a batch, bad JSON...)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    params = message.get("params")
    info = params.get("clientInfo") if isinstance(params, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name[:200] if isinstance(name, str) else None


@dataclass
class _Session:
    client: ClientKey
    last_used: float
    in_flight: int = 0


class SessionCap:
    """ASGI wrapper around the streamable HTTP endpoint that keeps at most `cap` sessions open, `per_client` of
    them for one client.

    A request without a session id that could open one (a POST on the initialize handshake's protocol versions)
    is held back: its body is read (up to `OPENING_BODY_BYTES`) to learn the client's name and then replayed to
    the SDK as it came. If the client already holds `per_client` sessions, its own session idle longest (not
    one with a request in flight) is ended. If all sessions together are at `cap`, a session idle for `recent`
    seconds or more is ended, of the client holding the most, idle longest first. A session is ended by a
    DELETE of its own, the protocol's way. When none can be, the request is answered 503 with a JSON-RPC error
    and Retry-After. The session id is learnt from the answer that opened it; `clock` (seconds) dates each use.
    """

    def __init__(
        self,
        app: ASGIApp,
        cap: int = MAX_SESSIONS,
        per_client: int = MAX_SESSIONS_PER_CLIENT,
        *,
        recent: float = RECENT_SESSION_SECONDS,
        idle_timeout: float = SESSION_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.cap = cap
        self.per_client = min(per_client, cap)
        self.recent = recent
        self.idle_timeout = idle_timeout
        self.clock = clock
        self.sessions: dict[str, _Session] = {}
        self.opening: Counter[ClientKey] = Counter()  # admitted requests that may still open a session
        self._warned_at: float | None = None

    def open_sessions(self) -> int:
        return len(self.sessions)

    def client_sessions(self) -> dict[str, int]:
        """Open sessions by client (`client_label`), most first."""
        return dict(Counter(client_label(s.client) for s in self.sessions.values()).most_common())

    def _forget_expired(self, now: float) -> None:
        # the SDK has ended these itself (its idle timeout), without a word to this wrapper
        expired = [sid for sid, s in self.sessions.items() if not s.in_flight and now - s.last_used > self.idle_timeout]
        for sid in expired:
            del self.sessions[sid]

    def _stale(self, now: float) -> str | None:
        """The session the total cap may end: idle `recent` seconds or more, of the client holding the most."""
        held = Counter(s.client for s in self.sessions.values())
        stale = [sid for sid, s in self.sessions.items() if not s.in_flight and now - s.last_used >= self.recent]
        return max(
            stale, key=lambda sid: (held[self.sessions[sid].client], now - self.sessions[sid].last_used), default=None
        )

    async def _admit(self, client: ClientKey, scope: Scope) -> tuple[str, int] | None:
        """Make room for one more session of `client` and hold it; without room, the refusal and Retry-After."""
        while True:
            now = self.clock()
            self._forget_expired(now)
            own = [sid for sid, s in self.sessions.items() if s.client == client]
            if len(own) + self.opening[client] >= self.per_client:
                idle = [sid for sid in own if not self.sessions[sid].in_flight]
                victim = min(idle, key=lambda sid: self.sessions[sid].last_used, default=None)
                if victim is None:
                    return (
                        f"too many MCP sessions are open: this client has {self.per_client}, each busy with a "
                        "request; close idle sessions or retry later",
                        BUSY_RETRY_SECONDS,
                    )
            elif len(self.sessions) + sum(self.opening.values()) >= self.cap:
                victim = self._stale(now)
                if victim is None:
                    quiet = [s.last_used for s in self.sessions.values() if not s.in_flight]
                    wait = min(quiet) + self.recent - now if quiet else self.recent
                    return (
                        f"too many MCP sessions are open: {self.cap}, each used in the last "
                        f"{self.recent / 60:g} minutes; close idle sessions or retry later",
                        max(1, math.ceil(wait)),
                    )
            else:
                self.opening[client] += 1
                return None
            ended = self.sessions.pop(victim)
            log.info(
                "ended the MCP session of %s idle %.0f s to open another",
                client_label(ended.client),
                now - ended.last_used,
            )
            await self._end(victim, scope)

    def _release(self, client: ClientKey) -> None:
        self.opening[client] -= 1
        if self.opening[client] <= 0:
            del self.opening[client]

    async def _end(self, session: str, scope: Scope) -> None:
        headers = [(b"host", b"127.0.0.1"), (b"mcp-session-id", session.encode("latin-1"))]
        ending = {**scope, "method": "DELETE", "headers": headers, "query_string": b""}

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(_message: Message) -> None:
            return None

        await self.app(ending, receive, discard)

    async def _refuse(self, send: Send, message: str, retry_after: int) -> None:
        now = self.clock()
        if self._warned_at is None or now - self._warned_at >= 60:
            self._warned_at = now
            log.warning("refused a new MCP session: %s", message)
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": INTERNAL_ERROR, "message": message}})
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(retry_after).encode()),
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        session = headers.get("mcp-session-id")
        version = headers.get("mcp-protocol-version")
        if scope.get("method") == "POST":
            receive, first = await _peeked(receive)
            if first is None:
                return  # the client went away
            if not _one_object(first):  # a batch or a bare value: the SDK would answer with its parser's dump
                await _deny_message(
                    send, "invalid request: send one JSON-RPC message, a JSON object (batches are not supported)"
                )
                return
        client: ClientKey | None = None
        if session is None and scope.get("method") == "POST" and version in (None, *HANDSHAKE_PROTOCOL_VERSIONS):
            # Read the body as it comes, then hand the very same messages to the SDK.
            messages: list[Message] = []
            read = 0
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return  # the client went away
                messages.append(message)
                read += len(message.get("body", b""))
                if not message.get("more_body", False) or read > OPENING_BODY_BYTES:
                    break
            whole = not messages[-1].get("more_body", False)
            name = opening_client_name(b"".join(m.get("body", b"") for m in messages)) if whole else None
            client = (name, headers.get("user-agent", "")[:200])
            refused = await self._admit(client, scope)
            if refused is not None:
                await self._refuse(send, *refused)
                return
            upstream = receive

            async def replay() -> Message:
                return messages.pop(0) if messages else await upstream()

            receive = replay

        tracked = self.sessions.get(session) if session is not None else None
        if tracked is not None:
            tracked.last_used = self.clock()
            tracked.in_flight += 1
        status = 0

        async def tracking_send(message: Message) -> None:
            nonlocal tracked, client, status
            if message["type"] == "http.response.start":
                status = message["status"]
                opened = next((v for k, v in message.get("headers", []) if k.lower() == b"mcp-session-id"), None)
                if client is not None and opened is not None and status < 400:
                    tracked = self.sessions[opened.decode("latin-1")] = _Session(client, self.clock(), 1)
                    self._release(client)
                    client = None
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        finally:
            if client is not None:  # admitted, but it opened no session
                self._release(client)
            if tracked is not None:
                tracked.in_flight -= 1
                tracked.last_used = self.clock()
                ended = status == 404 or (scope.get("method") == "DELETE" and status < 400)
                if ended and session is not None and self.sessions.get(session) is tracked:
                    del self.sessions[session]  # ended by the client, or gone in the SDK already


async def _peeked(receive: Receive) -> tuple[Receive, bytes | None]:
    """The request's first body bytes (None when the client went away), and a `receive` that hands the very same
    messages on."""
    held: list[Message] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return receive, None
        held.append(message)
        body = b"".join(m.get("body", b"") for m in held)
        if body.strip() or not message.get("more_body", False):
            break

    async def replay() -> Message:
        return held.pop(0) if held else await receive()

    return replay, body


def _one_object(body: bytes) -> bool:
    """False for a body that is JSON but not one object (a batch, a string, a number, null); True otherwise,
    not JSON at all included (the SDK names the parse error itself)."""
    start = body.lstrip()[:1]
    if not start or start == b"{":
        return True
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return True
    return isinstance(value, dict)


async def _deny_message(send: Send, message: str) -> None:
    """A 400 whose body is a JSON-RPC error (no request id), as MCP clients show it."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})
