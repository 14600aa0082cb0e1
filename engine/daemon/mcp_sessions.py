"""The MCP endpoint's HTTP sessions: capped in all and per client, and carried over a restart of the daemon.

Open HTTP sessions are capped in all (`MAX_SESSIONS`) and per client (`MAX_SESSIONS_PER_CLIENT`; a client is
the name its initialize request gives and its User-Agent), so a client that opens sessions without closing them
costs a bounded amount of memory and cannot take the session another agent holds. A client at its own cap ends
its own session idle longest. At the total cap only a session idle for `RECENT_SESSION_SECONDS` or more is
ended, of the client holding the most; a session with a request in flight is never ended. When no session can
be ended, the new one is refused with 503 and a Retry-After header, and the open ones keep answering.

A session lasts as long as its client uses it, across restarts of the daemon. A request naming a session the
SDK does not know (the daemon restarted since, or the session idled out or was ended by the cap) is served in
a new session opened in its place: an initialize at the protocol version the request names, then the
initialized notification, as the client itself did. The client's session id then stands for the new session
until that one ends. The tools keep nothing per session and send nothing unasked, so the client cannot tell;
without this, an MCP client that does not initialize again on 404 (the Python SDK's) lost its tools until it
was restarted. The new session counts against both caps like any other: under the client's name when this
daemon knew it, else as an unknown client of its own (its User-Agent and session); with no room it is
refused with 503 and Retry-After, as an initialize would be. Only a session its client ended (DELETE) still
answers 404, and a DELETE naming a session the SDK does not know opens nothing.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
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
SESSION_ID_CHARS = 128  # a longer session id is none this server or the SDK hands out: never carried over
ENDED_KEPT = 2  # ended sessions remembered (their client, or that their client ended them), per session of the cap

ClientKey = tuple[str | None, str]  # the name an initialize request gives (None: none could be read), User-Agent
Refusal = tuple[str, int]  # a 503's message and its Retry-After seconds


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
    alias: str | None = None  # the id its client knows it by, when it was opened in place of an ended one


@dataclass
class _Carrying:
    """A session being opened in place of an ended one; requests naming the same id wait for it."""

    done: anyio.Event = field(default_factory=anyio.Event)
    refused: Refusal | None = None


class SessionCap:
    """ASGI wrapper around the streamable HTTP endpoint that keeps at most `cap` sessions open, `per_client` of
    them for one client, and serves a request naming an ended session in a new one.

    A request without a session id that could open one (a POST on the initialize handshake's protocol versions)
    is held back: its body is read (up to `OPENING_BODY_BYTES`) to learn the client's name and then replayed to
    the SDK as it came. If the client already holds `per_client` sessions, its own session idle longest (not
    one with a request in flight) is ended. If all sessions together are at `cap`, a session idle for `recent`
    seconds or more is ended, of the client holding the most, idle longest first. A session is ended by a
    DELETE of its own, the protocol's way. When none can be, the request is answered 503 with a JSON-RPC error
    and Retry-After. The session id is learnt from the answer that opened it; `clock` (seconds) dates each use.

    A POST or GET the SDK answers 404 (it knows no such session) is not answered: the same room is made for a
    new session, which is opened with the SDK as a client would, and the request, its body replayed, is handed
    to it under the new id (`aliases`: the client's id to the SDK's). The answer names the client's id.
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
        self.sessions: dict[str, _Session] = {}  # by the SDK's id
        self.aliases: dict[str, str] = {}  # a client's id of an ended session -> the SDK's id of the one in its place
        # ids of ended sessions, oldest end first: their client (None: the client ended it, so it stays ended)
        self.ended: OrderedDict[str, ClientKey | None] = OrderedDict()
        self.opening: Counter[ClientKey] = Counter()  # admitted requests that may still open a session
        self._carrying: dict[str, _Carrying] = {}
        self._warned_at: float | None = None

    def open_sessions(self) -> int:
        return len(self.sessions)

    def client_sessions(self) -> dict[str, int]:
        """Open sessions by client (`client_label`), most first."""
        return dict(Counter(client_label(s.client) for s in self.sessions.values()).most_common())

    def _drop(self, sid: str, *, by_client: bool) -> _Session | None:
        """Stop counting the session: `by_client`, its client ended it; else it idled out or was ended for room."""
        ended = self.sessions.pop(sid, None)
        if ended is None:
            return None
        known_as = ended.alias if ended.alias is not None else sid
        if self.aliases.get(known_as) == sid:
            del self.aliases[known_as]
        self.ended[known_as] = None if by_client else ended.client
        self.ended.move_to_end(known_as)
        while len(self.ended) > ENDED_KEPT * self.cap:
            self.ended.popitem(last=False)
        return ended

    def _forget_expired(self, now: float) -> None:
        # the SDK has ended these itself (its idle timeout), without a word to this wrapper
        expired = [sid for sid, s in self.sessions.items() if not s.in_flight and now - s.last_used > self.idle_timeout]
        for sid in expired:
            self._drop(sid, by_client=False)

    def _stale(self, now: float) -> str | None:
        """The session the total cap may end: idle `recent` seconds or more, of the client holding the most."""
        held = Counter(s.client for s in self.sessions.values())
        stale = [sid for sid, s in self.sessions.items() if not s.in_flight and now - s.last_used >= self.recent]
        return max(
            stale, key=lambda sid: (held[self.sessions[sid].client], now - self.sessions[sid].last_used), default=None
        )

    async def _admit(self, client: ClientKey, scope: Scope) -> Refusal | None:
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
            ended = self._drop(victim, by_client=False)
            assert ended is not None
            log.info(
                "ended the MCP session of %s idle %.0f s to open another",
                client_label(ended.client),
                now - ended.last_used,
            )
            await self._exchange(scope, "DELETE", b"", [(b"mcp-session-id", victim.encode("latin-1"))])

    def _release(self, client: ClientKey) -> None:
        self.opening[client] -= 1
        if self.opening[client] <= 0:
            del self.opening[client]

    async def _exchange(
        self, scope: Scope, method: str, body: bytes, headers: list[tuple[bytes, bytes]]
    ) -> tuple[int, dict[bytes, bytes]]:
        """A request of this wrapper's own to the SDK (ending a session, opening one): its status and headers."""
        sent = [
            (b"host", b"127.0.0.1"),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-type", b"application/json"),
            *headers,
        ]
        request = {**scope, "method": method, "headers": sent, "query_string": b""}
        status = 0
        answer: dict[bytes, bytes] = {}

        async def receive() -> Message:
            return {"type": "http.request", "body": body, "more_body": False}

        async def keep(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                answer.update((k.lower(), v) for k, v in message.get("headers", []))

        await self.app(request, receive, keep)
        return status, answer

    async def _open_in_place(self, scope: Scope, version: str | None, client: ClientKey) -> str | None:
        """A new session, opened as a client opens one; its id, or None when the SDK would not open it."""
        agreed = version if version in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
        info = {"name": client[0] or "unknown client", "version": "0"}
        params = {"protocolVersion": agreed, "capabilities": {}, "clientInfo": info}
        body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}).encode()
        status, answer = await self._exchange(scope, "POST", body, [])
        sid = answer.get(b"mcp-session-id")
        if status >= 400 or sid is None:
            return None
        initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        said = [(b"mcp-session-id", sid), (b"mcp-protocol-version", agreed.encode())]
        await self._exchange(scope, "POST", initialized, said)
        return sid.decode("latin-1")

    async def _carry_over(self, known_as: str, gone: str, scope: Scope, headers: dict[str, str]) -> Refusal | None:
        """Open a session in place of the ended one its client knows as `known_as` (the SDK's `gone`); the refusal
        if there is no room."""
        waiting = self._carrying.get(known_as)
        if waiting is not None:  # another request naming it is opening it already
            await waiting.done.wait()
            return waiting.refused
        if self.aliases.get(known_as, gone) != gone:  # another request naming it has opened it since
            return None
        carrying = self._carrying[known_as] = _Carrying()
        try:
            # A session this daemon never opened (it restarted since) is a client of its own: after a restart
            # every client of one program is unknown and shares its User-Agent, and one bucket for them all
            # would hold them to one client's cap. The total cap still bounds them.
            unknown = (None, f"{headers.get('user-agent', '')[:200]}, session {known_as[:8]}")
            client = self.ended.get(known_as) or unknown
            carrying.refused = await self._admit(client, scope)
            if carrying.refused is not None:
                return carrying.refused
            try:
                sid = await self._open_in_place(scope, headers.get("mcp-protocol-version"), client)
            finally:
                self._release(client)
            if sid is None:
                carrying.refused = ("could not open an MCP session in place of an ended one; retry later", 1)
                return carrying.refused
            self.sessions[sid] = _Session(client, self.clock(), alias=known_as)
            self.aliases[known_as] = sid
            self.ended.pop(known_as, None)
            log.info("a request of %s named an ended MCP session: serving it in a new one", client_label(client))
            return None
        finally:
            del self._carrying[known_as]
            carrying.done.set()

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
            malformed = _malformed(first)
            if malformed is not None:  # the SDK would answer with pydantic's many-line dump, or no reason at all
                await _deny_message(send, malformed[2], code=malformed[0], ident=malformed[1])
                return
        if session is not None:
            await self._in_session(scope, receive, send, session, headers)
            return
        client: ClientKey | None = None
        if scope.get("method") == "POST" and version in (None, *HANDSHAKE_PROTOCOL_VERSIONS):
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
        await self._forward(scope, receive, send, None, None, client=client)

    async def _in_session(
        self, scope: Scope, receive: Receive, send: Send, known_as: str, headers: dict[str, str]
    ) -> None:
        """A request naming a session: handed to it, or to a new one in its place if the SDK knows it no more."""
        carry = (
            scope.get("method") in ("POST", "GET")
            and not (known_as in self.ended and self.ended[known_as] is None)  # its client ended it
            and 0 < len(known_as) <= SESSION_ID_CHARS
            and all(0x21 <= ord(c) <= 0x7E for c in known_as)
        )
        attempt = _replayable(receive)
        for tries_left in (2, 1, 0):
            sid = self.aliases.get(known_as, known_as)
            if not await self._forward(scope, attempt(), send, sid, known_as, carry=carry and tries_left > 0):
                return
            refused = await self._carry_over(known_as, sid, scope, headers)
            if refused is not None:
                await self._refuse(send, *refused)
                return

    async def _forward(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        sid: str | None,
        known_as: str | None,
        *,
        client: ClientKey | None = None,
        carry: bool = False,
    ) -> bool:
        """Hand the request to the SDK's session `sid`, which its client knows as `known_as` (None: neither).

        An opening request's `client` was admitted: the session it opens is counted for it. With `carry`, an
        answer of 404 (no such session) is held back, nothing is sent, and True returned."""
        if sid is not None and sid != known_as:
            scope = {**scope, "headers": _with_session(scope.get("headers", []), sid)}
        tracked = self.sessions.get(sid) if sid is not None else None
        if tracked is not None:
            tracked.last_used = self.clock()
            tracked.in_flight += 1
        status = 0
        held = False

        async def tracking_send(message: Message) -> None:
            nonlocal tracked, client, status, held
            if message["type"] == "http.response.start":
                status = message["status"]
                if carry and status == 404:
                    held = True
                    return
                opened = next((v for k, v in message.get("headers", []) if k.lower() == b"mcp-session-id"), None)
                if client is not None and opened is not None and status < 400:
                    tracked = self.sessions[opened.decode("latin-1")] = _Session(client, self.clock(), 1)
                    self._release(client)
                    client = None
                elif opened is not None and known_as is not None and sid != known_as:
                    message = {**message, "headers": _with_session(message["headers"], known_as)}
            elif held:
                return
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        finally:
            if client is not None:  # admitted, but it opened no session
                self._release(client)
            if tracked is not None:
                tracked.in_flight -= 1
                tracked.last_used = self.clock()
                by_client = scope.get("method") == "DELETE"
                if (
                    (status == 404 or (by_client and status < 400))
                    and sid is not None
                    and self.sessions.get(sid) is tracked
                ):
                    self._drop(sid, by_client=by_client)  # ended by the client, or gone in the SDK already
        return held


def _with_session(headers: list[tuple[bytes, bytes]], sid: str) -> list[tuple[bytes, bytes]]:
    """`headers` naming session `sid`."""
    kept = [(k, v) for k, v in headers if k.lower() != b"mcp-session-id"]
    return [*kept, (b"mcp-session-id", sid.encode("latin-1"))]


def _replayable(receive: Receive) -> Callable[[], Receive]:
    """Attempts at reading one request: each `receive` returned hands on the messages read so far, then reads
    on, so a request the SDK answered without taking it can be handed to it again as it came."""
    read: list[Message] = []

    def attempt() -> Receive:
        at = 0

        async def next_message() -> Message:
            nonlocal at
            if at == len(read):
                read.append(await receive())
            at += 1
            return read[at - 1]

        return next_message

    return attempt


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


def _malformed(body: bytes) -> tuple[int, str | int | None, str] | None:
    """(code, request id, one line) for a JSON object that is no JSON-RPC 2.0 message the tools can take: no
    `jsonrpc: "2.0"`, no `method` (nor `result` or `error`), an `id` that is not a string or number, `params`
    that are not an object, or a tools/call whose `name` is not a string or whose `arguments` are not an
    object. None for a body that is not whole JSON here (the SDK names a parse error itself)."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    ident = value.get("id")
    readable = isinstance(ident, str | int) and not isinstance(ident, bool)
    shown = ident if readable else None
    if "id" in value and not readable and ident is not None:
        return INVALID_REQUEST, None, "invalid request: `id` must be a string or a number"
    if value.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, shown, 'invalid request: a JSON-RPC 2.0 message says `"jsonrpc": "2.0"`'
    if "method" not in value:
        if "result" in value or "error" in value:
            return None  # a response to a request of the server's
        return INVALID_REQUEST, shown, "invalid request: a request names its `method` (initialize, tools/list, ...)"
    if not isinstance(value["method"], str):
        return INVALID_REQUEST, shown, "invalid request: `method` must be a string"
    params = value.get("params")
    if params is not None and not isinstance(params, dict):
        return INVALID_PARAMS, shown, "invalid params: `params` must be an object"
    if value["method"] == "tools/call" and isinstance(params, dict):
        if not isinstance(params.get("name"), str):
            return INVALID_PARAMS, shown, "invalid params: tools/call names its tool in `name`, a string"
        if params.get("arguments") is not None and not isinstance(params["arguments"], dict):
            return INVALID_PARAMS, shown, "invalid params: the `arguments` of tools/call must be an object"
    return None


async def _deny_message(
    send: Send, message: str, *, code: int = INVALID_REQUEST, ident: str | int | None = None
) -> None:
    """A 400 whose body is a JSON-RPC error (with the request's id when it could be read), as MCP clients
    show it."""
    body = json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})
