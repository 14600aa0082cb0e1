"""The daemon's HTTP listener: loopback only, JSON only.

Every request passes `LoopbackGuard` first:

- the peer address must be loopback and the `Host` header must name a loopback address (DNS rebinding);
- an `Origin` header, when present, must be exactly the daemon's own origin (`http://127.0.0.1:<its port>`,
  or `localhost`/`[::1]` with that port). A page on another localhost port is another origin: dev servers
  and previews serve third-party content, and a browser lets any page send a "simple" POST anywhere;
- every route but `/health` needs the vault's access token (`Authorization: Bearer <token>`, the file
  `<state>/access.token`, see engine/client.py): a page, a sandboxed tool or another user that can reach
  the port but not the owner's files is refused with 401. The daemon's own page (`/ui`, engine/web) takes
  instead its session cookie, bound to that token, and for a write its CSRF header (engine/web/session.py);
- a POST must say `Content-Type: application/json`, so a browser can only send one after a CORS preflight,
  and the preflight is refused (no CORS headers are ever sent): 415 otherwise.

Anything refused is answered before any route runs, so nothing is done. Request bodies over
`MAX_BODY_BYTES` are refused with 413. An operator write needs, besides, the vault's operator token in its
own header (see `operator`).

Routes are plain functions of the `Daemon` they serve; `build_app` takes extra routes and an optional
lifespan so further endpoints mount on the same listener.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import ipaddress
import json
import logging
import math
import os
import re
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from agentmd.engine.client import MAX_REQUEST_BYTES
from agentmd.engine.errors import AgentmdError
from agentmd.engine.request_fields import json_types
from agentmd.engine.settings import DEFAULT_PORT
from agentmd.engine.web.session import is_open_page_path, is_page_path, page_refusal

log = logging.getLogger("agentmd.server")

__all__ = ["DEFAULT_PORT", "MAX_BODY_BYTES", "AccessToken", "HttpServer", "LoopbackGuard", "build_app", "json_routes"]

MAX_BODY_BYTES = MAX_REQUEST_BYTES  # one owner: what the client refuses to send is what this refuses to take


_HOST_FORM = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?")  # a Host header's whole form
SINGLE_HEADERS = ("host", "origin", "content-type", "content-length", "authorization", "x-agentmd-operator")


def _is_loopback_host(hostport: str) -> bool:
    if not _HOST_FORM.fullmatch(hostport):  # no user info (`evil@127.0.0.1`), path or second name in a Host
        return False
    try:
        host = urlsplit("//" + hostport).hostname
    except ValueError:
        return False
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


MIN_PROBE_BUDGET, MAX_PROBE_BUDGET = 0.5, 120.0  # seconds a self-probe asked over `/v1/probe` may take

MCP_PATH = "/mcp"


def error_body(path: str, message: str) -> bytes:
    """The JSON body of a refusal: a JSON-RPC error (no request id) on the MCP endpoint, so that MCP clients
    show the reason, and `{"error": ...}` everywhere else."""
    if path == MCP_PATH:
        return json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    return json.dumps({"error": message}).encode()


def _unauthorized(presented: bool) -> str:
    said = "the access token sent is not this vault's" if presented else "this request carries no access token"
    return (
        f"unauthorized: {said}; send `Authorization: Bearer <token>` with the token from the daemon's state folder "
        "(`agentmd mcp-config` prints a client set-up that carries it; `agentmd token rotate` makes a new one)"
    )


async def _deny(
    send: Send, status: int, message: str, path: str = "", extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    body = error_body(path, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


# Liveness and which vault the daemon serves, answered without the token: a client tells whose daemon holds a
# port before it sends that process its token (engine/client.py); nothing of the vault's notes is named.
OPEN_PATHS = frozenset({"/health"})


def own_origins(port: int) -> frozenset[str]:
    """The origins a page served by the daemon itself would have; no other page may call it."""
    hosts = ("127.0.0.1", "localhost", "[::1]")
    return frozenset(f"{scheme}://{host}:{port}" for scheme in ("http", "https") for host in hosts)


def _is_json(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json"


class AccessToken:
    """The daemon's view of `<state>/access.token`: made at start, re-read when the file changes (a rotation
    takes effect on the next request, without a restart)."""

    def __init__(self, state_dir: Path) -> None:
        from agentmd.engine.client import access_token_path

        self.path = access_token_path(state_dir)
        self._seen: tuple[int, ...] | None = None
        self._token: str | None = None
        self._lock = threading.Lock()

    def ensure(self) -> str:
        from agentmd.engine.client import ACCESS_WHAT
        from agentmd.engine.secret import ensure_secret

        token = ensure_secret(self.path, ACCESS_WHAT)
        with self._lock:
            self._seen, self._token = None, token
        return token

    def current(self) -> str | None:
        """The token now in force; None when the file is gone or unsafe (then every guarded request is
        refused, never let through)."""
        from agentmd.engine.client import ACCESS_WHAT
        from agentmd.engine.secret import SecretFileError, read_secret

        try:
            st = os.stat(self.path)
        except OSError:
            return None
        key = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, st.st_uid)
        with self._lock:
            if key == self._seen:
                return self._token
        try:
            token = read_secret(self.path, ACCESS_WHAT)
        except (SecretFileError, OSError) as exc:
            log.error("%s", exc)
            token = None
        with self._lock:
            self._seen, self._token = key, token
        return token


def _bearer(value: str | None) -> str | None:
    scheme, _, token = (value or "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


DRAIN_BYTES = 64 * 2**20


async def _drain(receive: Receive, limit: int = DRAIN_BYTES) -> None:
    """Read and drop the rest of a refused request's body (up to `limit` bytes) before the refusal is sent. A
    connection closed with unread bytes is reset, and the reset can take the refusal with it before the
    client reads it; drained, it closes cleanly and the client reads why it was refused."""
    dropped = 0
    while dropped <= limit:
        message = await receive()
        if message["type"] != "http.request":
            return
        dropped += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


class LoopbackGuard:
    """Pure ASGI middleware (safe with streaming responses) enforcing loopback peers and hosts, the daemon's own
    origin, the access token and JSON bodies."""

    def __init__(
        self,
        app: ASGIApp,
        max_body: int = MAX_BODY_BYTES,
        token: Callable[[], str | None] | None = None,
        page_key: Callable[[], str | None] | None = None,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.token = token  # the access token now in force; None: no token is asked (an app built for a test)
        # what a page session's cookie and CSRF value are made with (the access and operator tokens together);
        # None: the access token's (an app built for a test)
        self.page_key = page_key or token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        pairs = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers", [])]
        headers = dict(pairs)
        names = [k for k, _ in pairs]
        repeated = [name for name in SINGLE_HEADERS if names.count(name) > 1]
        if repeated:  # which copy counts differs between readers: a request that says two things is refused
            await _deny(
                send, 400, f"bad request: the {repeated[0]} header appears more than once", scope.get("path", "")
            )
            return
        client = scope.get("client")
        try:
            peer_ok = client is not None and ipaddress.ip_address(client[0]).is_loopback
        except ValueError:
            peer_ok = False
        origin = headers.get("origin")
        server = scope.get("server")
        origin_ok = origin is None or (server is not None and origin.strip().lower() in own_origins(server[1]))
        path = scope.get("path", "")
        if not (peer_ok and _is_loopback_host(headers.get("host", ""))):
            log.warning("refused a request: peer=%s host=%r", client[0] if client else None, headers.get("host"))
            await _deny(send, 403, "forbidden: agentmd answers loopback clients only", path)
            return
        if not origin_ok:
            log.warning("refused a request from the web page origin %r", origin)
            refusal = "forbidden: agentmd answers loopback clients only, never a web page of another origin"
            await _deny(send, 403, f"{refusal} (its Origin header)", path)
            return
        if scope["type"] == "websocket":
            await _deny(send, 403, "forbidden: websockets are not served")
            return
        if self.token is not None and path not in OPEN_PATHS and not is_open_page_path(path):
            if is_page_path(path):  # a page session's: its cookie and, for a write, its CSRF value; no bearer token
                key = self.page_key() if self.page_key is not None else None
                refused = page_refusal(scope.get("method", "GET"), path, headers, key)
                if refused is not None:
                    await _deny(send, refused[0], refused[1], path)
                    return
            else:
                from agentmd.engine.secret import matches

                presented = _bearer(headers.get("authorization"))
                if not matches(presented, self.token()):
                    await _deny(
                        send, 401, _unauthorized(presented is not None), path, [(b"www-authenticate", b"Bearer")]
                    )
                    return
        if scope.get("method") == "POST" and not _is_json(headers.get("content-type")):
            await _deny(send, 415, "send the request body as JSON, with Content-Type: application/json", path)
            return
        length = headers.get("content-length")
        if length is not None:
            try:
                too_big = int(length) > self.max_body
            except ValueError:
                too_big = True
            if too_big:
                await _drain(receive)
                await _deny(send, 413, f"request body over {self.max_body} bytes", scope.get("path", ""))
                return
            await self.app(scope, receive, send)  # the server delivers no more than the declared length
            return
        # No Content-Length (a chunked body): read it here, up to the limit, before the app sees any of it.
        # Raising from inside the app instead would reach Starlette's error handler, which answers 500 first.
        chunks: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > self.max_body:
                if message.get("more_body", False):
                    await _drain(receive)
                await _deny(send, 413, f"request body over {self.max_body} bytes", scope.get("path", ""))
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay_receive() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()  # later calls wait for the disconnect, as streaming responses expect

        await self.app(scope, replay_receive, send)


def build_app(
    health: Callable[[], Mapping[str, object]],
    status: Callable[[], Mapping[str, object]],
    *,
    extra_routes: Sequence[BaseRoute] = (),
    lifespan: Any = None,
    token: Callable[[], str | None] | None = None,
    page_key: Callable[[], str | None] | None = None,
) -> ASGIApp:
    async def health_route(request: Request) -> Response:
        return JSONResponse(health())

    async def status_route(request: Request) -> Response:
        return JSONResponse(status())

    async def not_found(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": not_found_message(request.url.path)}, status_code=404)

    async def method_not_allowed(request: Request, exc: Exception) -> Response:
        allowed = dict(getattr(exc, "headers", None) or {})  # the route's methods, as the router found them
        return JSONResponse(
            {"error": f"{request.method} is not allowed on {request.url.path}"}, status_code=405, headers=allowed
        )

    async def client_gone(request: Request, exc: Exception) -> Response:
        # the client hung up before its request arrived whole: no error of ours, and nobody to answer
        log.debug("the client of a request to %s hung up before its body arrived", request.url.path)
        return Response(status_code=400)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.exception("request to %s failed", request.url.path)
        return JSONResponse({"error": "internal error; see the agentmd log"}, status_code=500)

    routes: list[BaseRoute] = [
        Route("/health", health_route, methods=["GET"]),
        Route("/status", status_route, methods=["GET"]),
        *extra_routes,
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            404: not_found,
            405: method_not_allowed,
            ClientDisconnect: client_gone,
            500: server_error,
            Exception: server_error,
        },
    )
    return LoopbackGuard(app, token=token, page_key=page_key)


# Where MCP clients configured for the older HTTP+SSE transport, or for another spelling, knock first.
_MCP_ELSEWHERE = ("/sse", "/messages", "/message", "/mcp/sse", "/v1/mcp", "/api/mcp")


def not_found_message(path: str) -> str:
    """What a request to an unknown path is told: the endpoints there are, and for a path where an MCP client
    looks for its server, where MCP really is."""
    if path.rstrip("/").lower() in _MCP_ELSEWHERE or path.lower().startswith(("/sse", "/messages")):
        return (
            f"no MCP endpoint at {path}: MCP is served at {MCP_PATH} over the streamable HTTP transport (the older "
            f'HTTP+SSE transport is not served); configure the client with transport "http" (or '
            f'"streamable-http") and the URL http://127.0.0.1:<port>{MCP_PATH}'
        )
    return (
        f"no such endpoint: {path}; the daemon answers GET /health, GET /status, MCP at {MCP_PATH} and POST "
        "/v1/<route> (see the README)"
    )


JsonHandler = Callable[[dict[str, object]], Mapping[str, object]]

MAX_JSON_DEPTH = 32
_TEXT = (str, type(None))
# The JSON types each `/v1` route's fields may have; a field of another type is a 400 before any work is done.
# A search's and a capture's fields are their requests' own (`field_types`); a floor's range (0..1) is checked
# by the search itself.
FIELD_TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "probe": {"budget": (int, float)},
    "injected": {"paths": (list,)},
    "sync": {"remote": _TEXT},
    "guard": {"tool": (str,), "tool_input": (dict,), "path": (str,), "contract": _TEXT},
    "revert": {
        "kind": (str,),
        "count": (int,),
        "commits": (list,),
        "origin": _TEXT,
        "since": _TEXT,
        "path": _TEXT,
        "to": _TEXT,
        "at": _TEXT,
        "head": _TEXT,
    },
}
_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list of strings",
    dict: "an object",
    type(None): "null",
}


class BadRequest(AgentmdError, ValueError):
    """A request body that is not a JSON object this server takes; the message says why, in one line."""

    code = "bad-json"


class BadField(BadRequest):
    """A field of the JSON object has a type its route does not take."""

    code = "usage"


def _no_constant(name: str) -> Any:
    raise BadRequest(f"{name} is not a JSON value")


def parse_json_object(body: bytes) -> dict[str, object]:
    """The request body as a JSON object, refusing what no client of this API sends and what would hurt later:
    invalid UTF-8 or JSON, NaN and Infinity, nesting deeper than `MAX_JSON_DEPTH`, lone surrogates in strings
    (they cannot be written to a UTF-8 file) and top-level values other than an object."""
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise BadRequest("the request body is not UTF-8") from None
    except RecursionError:
        raise BadRequest(f"the request body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:
        raise BadRequest(str(exc) if isinstance(exc, BadRequest) else "the request body is not JSON") from None
    if not isinstance(data, dict):
        raise BadRequest("send a JSON object")
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise BadRequest(f"the request body nests deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(value, dict):
            stack.extend((k, depth) for k in value)
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise BadRequest("a string in the request holds a lone surrogate (\\ud800-\\udfff)") from None
    return data


@functools.cache
def field_types(route: str) -> dict[str, tuple[type, ...]]:
    """The JSON types `route` takes for each field: a search's and a capture's read from their request's
    declaration (engine/request_fields.py), with the route's own switches."""
    if route == "search":
        from agentmd.engine.search.planning import SearchRequest

        return {**json_types(SearchRequest), "count_usage": (bool,), "recall": (bool,)}
    if route == "recall":
        from agentmd.engine.recall.serve import FIELDS

        return FIELDS
    if route == "capture":
        from agentmd.engine.write.request import CaptureRequest

        return {**json_types(CaptureRequest), "_actor": (str,)}
    return FIELD_TYPES.get(route, {})


def check_field_types(route: str, data: dict[str, Any]) -> None:
    """Raise BadRequest naming the first field of `data` whose JSON type `route` does not take."""
    accepted = field_types(route)
    for name, value in data.items():
        allowed = accepted.get(name)
        if allowed is None:
            continue  # unknown fields are the handler's to refuse, with the list of known ones
        ok = isinstance(value, allowed) and not (isinstance(value, bool) and bool not in allowed)
        if ok and isinstance(value, list):
            ok = all(isinstance(x, str) for x in value)
        if ok and isinstance(value, float) and not math.isfinite(value):
            ok = False
        if not ok:
            names = [_TYPE_NAMES[t] for t in allowed]
            shown = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
            raise BadField(f"`{name}` must be {shown}, not {json.dumps(value, ensure_ascii=False)[:40]}")
    if route == "probe" and "budget" in data and not MIN_PROBE_BUDGET <= data["budget"] <= MAX_PROBE_BUDGET:
        raise BadField(f"`budget` must be a number of seconds from {MIN_PROBE_BUDGET:g} to {MAX_PROBE_BUDGET:g}")


def json_routes(**handlers: JsonHandler) -> list[BaseRoute]:
    """`POST /v1/<name>` for each handler: a JSON object in, a JSON object out. A body that is not a JSON
    object of the right field types is a 400 before the handler runs; refusals are 4xx with `{"error", "code"}`;
    nothing else about the failure leaves the process. Only the operator header speaks for the operator: a
    body's own claim is replaced by what the header says (nothing, without it)."""
    from agentmd.engine.daemon.operator import OPERATOR_FIELD, OPERATOR_HEADER
    from agentmd.engine.errors import AgentmdError, UsageError
    from agentmd.engine.git.undo_types import UndoRefused
    from agentmd.engine.write.capture import CaptureRefused

    def make(name: str, handler: JsonHandler) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                data = parse_json_object(await request.body())
                check_field_types(name, data)
            except BadRequest as exc:
                return JSONResponse({"error": str(exc), "code": exc.code}, status_code=400)
            if OPERATOR_FIELD in data or OPERATOR_HEADER in request.headers:  # only the header speaks for the operator
                data[OPERATOR_FIELD] = request.headers.get(OPERATOR_HEADER)
            try:
                return JSONResponse(await anyio.to_thread.run_sync(handler, data))
            except CaptureRefused as exc:
                return JSONResponse({"error": str(exc), "code": exc.code}, status_code=422)
            except UndoRefused as exc:  # nothing was written; asking again as it is would be refused again
                return JSONResponse({"error": str(exc), "code": "refused"}, status_code=409)
            except UsageError as exc:
                return JSONResponse({"error": str(exc), "code": "usage"}, status_code=400)
            except AgentmdError as exc:
                return JSONResponse({"error": str(exc), "code": "failed"}, status_code=503)

        return endpoint

    return [Route(f"/v1/{name}", make(name, h), methods=["POST"]) for name, h in handlers.items()]


class PortInUse(AgentmdError):
    """Another process already listens on the port the daemon was asked to serve on."""


def listen_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` (0: any free port), for uvicorn to listen on. Binding here, before
    the server thread starts, turns a taken port into one plain sentence instead of a log line and a timeout."""
    # IPPROTO_TCP named, not left 0: asyncio turns on TCP_NODELAY only for sockets whose proto says TCP, and
    # without it every small response waits ~40 ms on the client's delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart reuses the port at once
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(
                f"port {port} on {host} is in use (another process is listening on it); stop the other process "
                "or pass --port"
            ) from None
        raise AgentmdError(f"could not listen on {host}:{port} ({exc.strerror or exc}); pass another --port") from None
    return sock


GRACEFUL_STOP_SECONDS = 2


class HttpServer:
    """uvicorn in a background thread, bound to 127.0.0.1."""

    def __init__(
        self,
        app: ASGIApp,
        port: int,
        host: str = "127.0.0.1",
        sock: socket.socket | None = None,
        protocol: type[asyncio.Protocol] | None = None,
    ) -> None:
        from agentmd.engine.daemon.http_limits import LimitedHttp

        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            access_log=False,
            lifespan="auto",
            http=protocol or LimitedHttp,  # the limits on heads, request times and connections
            # A stop waits this long for requests in flight, then ends the rest: an MCP client's event stream
            # (a GET held open for what the server says unasked) never ends on its own, and waiting on it held
            # every stop for the whole join timeout while new requests went unanswered.
            timeout_graceful_shutdown=GRACEFUL_STOP_SECONDS,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self.host = host
        self.port = port
        self._sock = sock  # already bound and listening (see listen_socket), else bound at start

    def start(self, timeout: float = 10.0) -> None:
        sock = self._sock if self._sock is not None else listen_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="agentmd-http", daemon=True
        )
        self._thread.start()
        started = threading.Event()
        thread = self._thread

        def check() -> bool:
            return bool(self._server.started) or not thread.is_alive()

        deadline = timeout
        while not check() and deadline > 0:
            started.wait(0.02)
            deadline -= 0.02
        if not self._server.started:
            sock.close()
            raise AgentmdError(f"the web server on {self.host}:{self.port} did not start; see the daemon's log")

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
