"""The cap on open MCP sessions keeps the sessions agents hold: one client opening many sessions ends its own,
never another's; the total cap ends only sessions idle beyond the floor, else refuses the new one with 503.

A real uvicorn server on 127.0.0.1 (port 0) serves the routes and lifespan of `mount_mcp` over a small real
backend that answers fixed results; the agent talks through the SDK's streamable HTTP client and session, the
flooding clients through raw httpx. The cap's clock is injected, so moving beyond the floor takes no sleeping.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
import uvicorn
from daemon_helpers import wait_until
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import Implementation
from starlette.applications import Starlette
from starlette.routing import Route

from agentmd.engine.daemon import mcp_server, mcp_sessions
from agentmd.engine.daemon.mcp_server import SessionCap, mount_mcp
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.write.capture import CaptureRequest

pytestmark = pytest.mark.slow

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PROTOCOL = "2025-06-18"
FLOOR = mcp_sessions.RECENT_SESSION_SECONDS
SEARCH_ANSWER = {"query": "otters", "mode": "fusion", "results": [], "matched": 0}


class FixedBackend:
    """A real backend answering fixed results: the cap is under test, not search or capture."""

    def search(self, request: SearchRequest) -> dict[str, Any]:
        return {**SEARCH_ANSWER, "query": request.query}

    def capture(self, request: CaptureRequest) -> dict[str, Any]:
        return {"path": "memory/fixed.md", "status": "unfiled", "indexed": True}


class Clock:
    """The cap's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started or not thread.is_alive(), 20, "uvicorn started")
        assert server.started
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


@contextmanager
def serve(clock: Any = None, **caps: int) -> Iterator[tuple[str, SessionCap]]:
    """The MCP endpoint as the daemon mounts it; the base URL and its SessionCap."""
    routes, lifespan = mount_mcp(FixedBackend(), **caps, **({"clock": clock} if clock else {}))
    cap = routes[0].endpoint  # type: ignore[attr-defined]
    assert isinstance(cap, SessionCap)
    with serve_app(Starlette(routes=routes, lifespan=lifespan)) as base:
        yield base, cap


def initialize(name: Any) -> dict[str, Any]:
    info = {"name": name, "version": "0"}
    params = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": info}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def session_headers(sid: str) -> dict[str, str]:
    return {**MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": PROTOCOL}


def open_session(http: httpx.Client, name: str) -> str:
    started = http.post("/mcp", json=initialize(name), headers=MCP_HEADERS)
    assert started.status_code == 200, started.text
    sid = started.headers["mcp-session-id"]
    notified = http.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session_headers(sid)
    )
    assert notified.status_code == 202, notified.text
    return sid


def ping(http: httpx.Client, sid: str) -> int:
    pinged = http.post("/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=session_headers(sid))
    return pinged.status_code


def raw_client(base: str) -> httpx.Client:
    return httpx.Client(trust_env=False, base_url=base, timeout=30, headers={"User-Agent": "flood/1"})


def flood(base: str, names: list[str]) -> list[httpx.Response]:
    """One initialize per name, sequentially, none of them closed."""
    with raw_client(base) as http:
        return [http.post("/mcp", json=initialize(name), headers=MCP_HEADERS) for name in names]


def settled(cap: SessionCap, *streaming: str) -> None:
    """Wait until the server has finished every request (a request's last use is dated when it finishes, which
    may come just after the client has its answer), so moving the clock then dates no request after it. The
    sessions of the `streaming` clients keep a request open (the SDK client's stream) and are not waited for."""

    def done() -> bool:
        return not any(s.in_flight for s in list(cap.sessions.values()) if s.client[0] not in streaming)

    wait_until(done, 10, "requests finished")


def held_by(cap: SessionCap, name: str) -> int:
    return sum(n for label, n in cap.client_sessions().items() if label.startswith(f"{name} ("))


def agent_calls_around(base: str, *steps: Any) -> tuple[list[Any], list[Any]]:
    """The agent (SDK client) calls memory_search, then each step runs in a thread and the agent calls again
    after it; the calls' results and the steps'."""

    async def go() -> tuple[list[Any], list[Any]]:
        agent = Implementation(name="agent", version="1")
        async with (
            streamable_http_client(f"{base}/mcp") as (read, write),
            ClientSession(read, write, client_info=agent) as session,
        ):
            await session.initialize()
            calls = [await session.call_tool("memory_search", {"query": "otters"})]
            done = []
            for step in steps:
                done.append(await anyio.to_thread.run_sync(step))
                calls.append(await session.call_tool("memory_search", {"query": "otters"}))
            return calls, done

    return anyio.run(go)


def answered(result: Any) -> None:
    assert not result.is_error, result.content
    assert result.structured_content == SEARCH_ANSWER


# ---------------------------------------------------------------------------------------------- bar (a)


def test_an_agents_session_survives_another_client_opening_150_sessions_at_the_real_caps() -> None:
    with serve() as (base, cap):
        assert (cap.cap, cap.per_client, cap.recent) == (100, 25, 300)
        calls, [(flooded, held)] = agent_calls_around(
            base, lambda: (flood(base, ["flooder"] * 150), cap.client_sessions())
        )
        for call in calls:
            answered(call)
        assert all(r.status_code == 200 for r in flooded)  # the flooder ends its own sessions, none refused
        assert held["flooder (flood/1)"] == mcp_sessions.MAX_SESSIONS_PER_CLIENT
        assert [n for label, n in held.items() if label.startswith("agent (")] == [1], held


def test_an_agents_sessions_survive_150_clients_of_different_names_filling_the_total_cap() -> None:
    clock = Clock()
    with serve(clock, max_sessions=8, max_per_client=3) as (base, cap), raw_client(base) as http:
        quiet = open_session(http, "quiet-agent")  # no stream open: only its recent use keeps it

        def first_crowd() -> list[httpx.Response]:
            first = flood(base, [f"first-{i}" for i in range(150)])
            settled(cap, "agent")
            clock.advance(FLOOR + 1)  # the crowd's sessions are now idle beyond the floor...
            assert ping(http, quiet) == 200  # ...but both agents make a call (the SDK one right after this)
            return first

        def second_crowd() -> tuple[list[httpx.Response], dict[str, int]]:
            return flood(base, [f"second-{i}" for i in range(150)]), cap.client_sessions()

        calls, [first, (second, held)] = agent_calls_around(base, first_crowd, second_crowd)
        for call in calls:
            answered(call)
        assert ping(http, quiet) == 200
        # 8 in all: the agent, the quiet agent and 6 of the crowd; everyone else refused, nobody's session taken
        assert [r.status_code for r in first] == [200] * 6 + [503] * 144
        # beyond the floor the second crowd ends the first crowd's 6, then is refused in turn
        assert [r.status_code for r in second] == [200] * 6 + [503] * 144
        assert sum(held.values()) == 8
        assert sorted(label.split(" (")[0] for label in held if not label.startswith("second-")) == [
            "agent",
            "quiet-agent",
        ]


# ---------------------------------------------------------------------------------------------- bar (b)


def test_a_client_opening_150_sessions_under_one_name_keeps_its_cap_and_ends_only_its_own() -> None:
    clock = Clock()
    with serve(clock, max_sessions=8, max_per_client=3) as (base, cap), raw_client(base) as http:
        others = [open_session(http, "other-1") for _ in range(3)] + [open_session(http, "other-2") for _ in range(2)]
        settled(cap)
        clock.advance(FLOOR + 1)  # the others are idle beyond the floor: the total cap could end them
        opened = flood(base, ["greedy"] * 150)
        assert all(r.status_code == 200 for r in opened), {r.status_code for r in opened}
        assert held_by(cap, "greedy") == 3 and cap.open_sessions() == 8
        assert [ping(http, sid) for sid in others] == [200] * 5
        flooded = [r.headers["mcp-session-id"] for r in opened]
        assert [ping(http, sid) for sid in flooded[-3:]] == [200] * 3
        assert not set(flooded[:-3]) & set(cap.sessions)  # its own were ended, oldest first


def test_a_client_whose_sessions_are_all_busy_is_refused_and_keeps_them() -> None:
    clock = Clock()
    with serve(clock, max_sessions=8, max_per_client=3) as (base, cap), raw_client(base) as http:
        busy = [open_session(http, "streamer") for _ in range(3)]

        async def go() -> httpx.Response:
            async with httpx.AsyncClient(
                trust_env=False, base_url=base, timeout=30, headers={"User-Agent": "flood/1"}
            ) as client:
                streams = [
                    client.stream("GET", "/mcp", headers={**session_headers(sid), "Accept": "text/event-stream"})
                    for sid in busy
                ]
                responses = [await s.__aenter__() for s in streams]
                try:
                    assert [r.status_code for r in responses] == [200] * 3
                    await anyio.to_thread.run_sync(
                        lambda: wait_until(lambda: all(cap.sessions[s].in_flight for s in busy), 10, "streams")
                    )
                    return await client.post("/mcp", json=initialize("streamer"), headers=MCP_HEADERS)
                finally:
                    for s in streams:
                        await s.__aexit__(None, None, None)

        refused = anyio.run(go)
        assert refused.status_code == 503, refused.text
        assert "too many MCP sessions are open" in refused.json()["error"]["message"]
        assert refused.headers["retry-after"] == str(mcp_sessions.BUSY_RETRY_SECONDS)
        assert "mcp-session-id" not in refused.headers
        assert [ping(http, sid) for sid in busy] == [200] * 3


# ---------------------------------------------------------------------------------------------- bar (c)


def test_at_the_total_cap_with_every_session_recent_a_new_one_is_503_until_the_floor_passes() -> None:
    clock = Clock()
    with serve(clock, max_sessions=8, max_per_client=3) as (base, cap), raw_client(base) as http:
        sessions: dict[str, list[str]] = {"c": [], "a": [], "b": []}
        for name, count in (("c", 2), ("a", 3), ("b", 3)):  # c's are the oldest
            for _ in range(count):
                clock.advance(1)
                sessions[name].append(open_session(http, name))
                settled(cap)
        refused = http.post("/mcp", json=initialize("d"), headers=MCP_HEADERS)
        assert refused.status_code == 503, refused.text
        body = refused.json()
        assert body["jsonrpc"] == "2.0" and body["id"] is None
        message = body["error"]["message"]
        assert message.startswith("too many MCP sessions are open") and "close idle sessions or retry later" in message
        assert refused.headers["retry-after"] == str(FLOOR - 7)  # the oldest was used 7 s before
        assert "mcp-session-id" not in refused.headers
        assert cap.open_sessions() == 8 and not cap.opening
        # nothing else changed: every session still answers (in this order, so c's stay the idle longest)
        for sid in sessions["c"] + sessions["a"] + sessions["b"]:
            clock.advance(1)
            assert ping(http, sid) == 200
            settled(cap)
        clock.advance(FLOOR)
        opened = http.post("/mcp", json=initialize("d"), headers=MCP_HEADERS)
        assert opened.status_code == 200, opened.text
        # the client holding the most goes first (a and b tie at 3: a's idle longest), though c's idle longer
        assert sessions["a"][0] not in cap.sessions
        again = http.post("/mcp", json=initialize("d"), headers=MCP_HEADERS)
        assert again.status_code == 200, again.text
        assert sessions["b"][0] not in cap.sessions  # b now holds the most
        assert [ping(http, sid) for sid in sessions["c"]] == [200, 200]
        assert cap.open_sessions() == 8
        assert held_by(cap, "d") == 2 and held_by(cap, "a") == held_by(cap, "b") == held_by(cap, "c") == 2


def test_a_session_the_client_deletes_is_no_longer_counted() -> None:
    with serve(Clock(), max_sessions=8, max_per_client=3) as (base, cap), raw_client(base) as http:
        sid = open_session(http, "tidy")
        assert cap.open_sessions() == 1
        assert http.delete("/mcp", headers=session_headers(sid)).status_code == 200
        assert cap.open_sessions() == 0 and cap.client_sessions() == {}


# ---------------------------------------------------------------------------------------------- bar (d)


MALFORMED = [
    b"",
    b"{not json",
    b"\xff\xfe\x00garbage",
    b"[" * 100_000,  # deeper than Python's json can go
    b'"a string"',
    b"null",
    json.dumps([initialize("batched"), initialize("batched")]).encode(),
    json.dumps(initialize(5)).encode(),
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [1, 2]}).encode(),
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": "x"}}).encode(),
]


@contextmanager
def bare_sdk() -> Iterator[str]:
    """The SDK's endpoint without the cap (answering in JSON, as the daemon's does), to compare answers with."""
    manager = StreamableHTTPSessionManager(
        app=mcp_server.build_server(FixedBackend()),
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        json_response=True,
    )

    @asynccontextmanager
    async def lifespan(_app: Any) -> Any:
        async with manager.run():
            yield

    with serve_app(Starlette(routes=[Route("/mcp", StreamableHTTPASGIApp(manager))], lifespan=lifespan)) as base:
        yield base


NOT_ONE_OBJECT = {b'"a string"', b"null", json.dumps([initialize("batched"), initialize("batched")]).encode()}
# a JSON-RPC message the tools cannot take: the daemon's own one line with the request's id (mcp_sessions._malformed)
NOT_JSON_RPC = {json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [1, 2]}).encode()}


def test_malformed_or_batched_opening_bodies_get_the_sdks_own_answer() -> None:
    with (
        serve(Clock(), max_sessions=8, max_per_client=3) as (base, cap),
        bare_sdk() as bare,
        raw_client(base) as http,
        raw_client(bare) as plain,
    ):
        opened = 0
        for raw in MALFORMED:
            ours = http.post("/mcp", content=raw, headers=MCP_HEADERS)
            if raw in NOT_ONE_OBJECT:  # the daemon's own one line, where the SDK would dump its parser's errors
                assert ours.status_code == 400 and "one JSON-RPC message" in ours.json()["error"]["message"]
                continue
            if raw in NOT_JSON_RPC:
                answer = ours.json()
                assert ours.status_code == 400 and answer["id"] == 1 and "`params`" in answer["error"]["message"]
                continue
            theirs = plain.post("/mcp", content=raw, headers=MCP_HEADERS)
            assert ours.status_code == theirs.status_code, (raw[:40], ours.text)
            assert ours.content == theirs.content, raw[:40]
            # an initialize whose parameters the SDK refuses still opens a session there: an unknown client's
            opened += ours.status_code < 400
        assert opened and cap.client_sessions() == {"unknown client (flood/1)": opened} and not cap.opening
        # and the cap still works: a chunked initialize is read whole, replayed and keyed by its name
        body = json.dumps(initialize("chunky")).encode()
        chunks = (body[i : i + 7] for i in range(0, len(body), 7))
        assert http.post("/mcp", content=chunks, headers=MCP_HEADERS).status_code == 200
        assert held_by(cap, "chunky") == 1 and cap.open_sessions() == opened + 1


def test_an_opening_body_too_big_to_read_is_an_unknown_client_with_its_own_cap() -> None:
    padded = initialize("padded")
    padded["params"]["capabilities"] = {"experimental": {"pad": {"x": "p" * 2 * mcp_sessions.OPENING_BODY_BYTES}}}
    body = json.dumps(padded).encode()
    with serve(Clock(), max_sessions=8, max_per_client=3) as (base, cap), raw_client(base) as http:
        named = open_session(http, "named")
        opened = [http.post("/mcp", content=body, headers=MCP_HEADERS) for _ in range(5)]
        assert [r.status_code for r in opened] == [200] * 5  # the SDK got the whole body, as sent
        assert cap.client_sessions() == {"unknown client (flood/1)": 3, "named (flood/1)": 1}
        assert ping(http, named) == 200


def test_concurrent_openings_from_one_client_never_exceed_the_caps_nor_touch_another_client() -> None:
    clock = Clock()
    with serve(clock, max_sessions=8, max_per_client=3) as (base, cap), raw_client(base) as http:
        others = [open_session(http, "other") for _ in range(3)]
        settled(cap)
        clock.advance(FLOOR + 1)  # idle beyond the floor: only the per-client rule keeps them

        async def rush() -> list[httpx.Response]:
            async with httpx.AsyncClient(
                trust_env=False, base_url=base, timeout=60, headers={"User-Agent": "flood/1"}
            ) as client:
                results: list[httpx.Response] = []

                async def one() -> None:
                    results.append(await client.post("/mcp", json=initialize("rush"), headers=MCP_HEADERS))

                async with anyio.create_task_group() as group:
                    for _ in range(60):
                        group.start_soon(one)
                return results

        answers = anyio.run(rush)
        assert {r.status_code for r in answers} <= {200, 503}
        assert any(r.status_code == 200 for r in answers)
        assert held_by(cap, "rush") <= 3 and cap.open_sessions() <= 8 and not cap.opening
        assert [ping(http, sid) for sid in others] == [200] * 3


# ---------------------------------------------------------------------------------------------- carried over


def search_call(http: httpx.Client, sid: str, agent: str = "flood/1") -> httpx.Response:
    call = {"name": "memory_search", "arguments": {"query": "otters"}}
    message = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": call}
    return http.post("/mcp", json=message, headers={**session_headers(sid), "User-Agent": agent})


def test_a_call_naming_a_session_this_server_never_opened_is_served_in_one_new_session_until_deleted() -> None:
    with serve(Clock(), max_sessions=8, max_per_client=3) as (base, cap), raw_client(base) as http:
        stale = "a" * 32  # as a client of a daemon since restarted holds it
        for _ in range(2):
            answered = search_call(http, stale)
            assert answered.status_code == 200, answered.text
            assert answered.headers["mcp-session-id"] == stale
            assert answered.json()["result"]["structuredContent"] == SEARCH_ANSWER
        assert cap.client_sessions() == {"unknown client (flood/1, session aaaaaaaa)": 1}
        assert list(cap.aliases) == [stale]
        assert http.delete("/mcp", headers=session_headers(stale)).status_code == 200
        assert cap.open_sessions() == 0 and not cap.aliases
        assert ping(http, stale) == 404  # its client ended it: ended for good
        assert http.delete("/mcp", headers=session_headers("b" * 32)).status_code == 404  # opens nothing
        assert cap.open_sessions() == 0


def test_after_a_restart_more_clients_of_one_program_than_its_cap_all_get_back_in() -> None:
    # 30 SDK clients of one program held sessions of a daemon since restarted: each comes back as a client of its
    # own, so none is held to another's cap of 3; the total cap (40 here) still bounds them
    with serve(Clock(), max_sessions=40, max_per_client=3) as (base, cap), raw_client(base) as http:
        stale = [f"{n:02d}" + "d" * 30 for n in range(30)]
        assert [search_call(http, sid).status_code for sid in stale] == [200] * 30
        assert cap.open_sessions() == 30 and sorted(cap.aliases) == sorted(stale)


def test_concurrent_calls_naming_one_unknown_session_share_one_new_session() -> None:
    with serve(Clock(), max_sessions=8, max_per_client=3) as (base, cap):

        async def rush() -> list[httpx.Response]:
            async with httpx.AsyncClient(trust_env=False, base_url=base, timeout=60) as client:
                results: list[httpx.Response] = []

                async def one(n: int) -> None:  # requests of one session: each its own JSON-RPC id
                    message = {"jsonrpc": "2.0", "id": n, "method": "ping"}
                    results.append(await client.post("/mcp", json=message, headers=session_headers("c" * 32)))

                async with anyio.create_task_group() as group:
                    for n in range(20):
                        group.start_soon(one, n)
                return results

        assert [r.status_code for r in anyio.run(rush)] == [200] * 20
        settled(cap)
        assert cap.open_sessions() == 1 and list(cap.aliases) == ["c" * 32] and not cap.opening


def test_a_session_the_cap_ended_is_carried_over_under_its_clients_name_within_its_cap() -> None:
    with serve(Clock(), max_sessions=8, max_per_client=3) as (base, cap), raw_client(base) as http:
        first, *rest = [open_session(http, "agent") for _ in range(4)]
        settled(cap)
        assert first not in cap.sessions and held_by(cap, "agent") == 3
        answered = search_call(http, first)
        assert answered.status_code == 200, answered.text
        assert held_by(cap, "agent") == 3 and cap.open_sessions() == 3  # it ended the agent's idle longest
        assert rest[0] not in cap.sessions and first in cap.aliases


def test_carrying_a_session_over_at_the_total_cap_is_refused_while_every_session_is_recent() -> None:
    clock = Clock()
    with serve(clock, max_sessions=4, max_per_client=2) as (base, cap), raw_client(base) as http:
        for name in ("a", "a", "b", "b"):
            open_session(http, name)
        settled(cap)
        refused = search_call(http, "d" * 32, agent="restarted/1")
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["message"].startswith("too many MCP sessions are open")
        assert refused.headers["retry-after"] == str(FLOOR)
        assert cap.open_sessions() == 4 and not cap.aliases and not cap.opening
        clock.advance(FLOOR + 1)
        answered = search_call(http, "d" * 32, agent="restarted/1")
        assert answered.status_code == 200, answered.text
        assert cap.open_sessions() == 4 and held_by(cap, "unknown client") == 1
