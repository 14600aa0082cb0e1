"""What an MCP client meets: the capabilities and identity the server announces, the tools' schemas, the answer to
an unknown tool or a bad argument, refusals shaped as JSON-RPC errors, hostile JSON, and the cap on open sessions.

Against the real daemon on 127.0.0.1 over a real git vault, with the SDK's client and raw HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import jsonschema
import pytest
from daemon_helpers import auth, make_repo, mcp_transport, wait_until
from mcp import Client
from mcp.shared.exceptions import MCPError

from agentmd.engine.daemon import mcp_server, mcp_sessions
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import Settings, resolve

pytestmark = pytest.mark.slow

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PROTOCOL = "2025-06-18"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
}


@pytest.fixture(scope="module")
def module_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("protocol")
    with pytest.MonkeyPatch.context() as mp:
        for name in ("HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
            (root / name).mkdir()
            mp.setenv(name, str(root / name))
        for name in ("AGENTMD_VAULT", "AGENTMD_DAILY_WRITE_CAP", "AGENTMD_CRASH_POINT"):
            mp.delenv(name, raising=False)
        yield root


@pytest.fixture(scope="module")
def settings(module_env: Path) -> Settings:
    vault = make_repo(module_env / "vault", {"README.md": "# Vault\n", "notes/first.md": "first note about otters\n"})
    return resolve(vault=str(vault))


@pytest.fixture(scope="module")
def daemon(settings: Settings) -> Iterator[Daemon]:
    d = Daemon(settings, port=0, commit_debounce=0.1, probe_interval=0)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], 20, "first pass")
        yield d
    finally:
        d.stop()


@pytest.fixture
def http(daemon: Daemon) -> Iterator[httpx.Client]:
    headers = auth(daemon)
    base = f"http://127.0.0.1:{daemon.port}"
    with httpx.Client(trust_env=False, base_url=base, timeout=20, headers=headers) as client:
        yield client


def with_mcp(port: int, fn: Callable[[Any], Any]) -> Any:
    async def go() -> Any:
        async with Client(mcp_transport(port)) as client:
            return await fn(client)

    return anyio.run(go)


def mcp_error(port: int, fn: Callable[[Any], Any]) -> MCPError:
    """The MCPError a call raises, caught inside the client's session (outside it arrives in a group)."""

    async def go(client: Any) -> MCPError:
        try:
            await fn(client)
        except MCPError as exc:
            return exc
        raise AssertionError("the call succeeded")

    return with_mcp(port, go)


def rpc_answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of an answer, whether sent as JSON or as one server-sent event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return dict(json.loads(data[-1]))
    return dict(response.json())


def open_session(http: httpx.Client) -> dict[str, str]:
    started = http.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
    assert started.status_code == 200, started.text
    session = {**MCP_HEADERS, "mcp-session-id": started.headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
    assert http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    return session


# ---------------------------------------------------------------------------------------------- identity


def test_initialize_advertises_only_tools_and_names_the_package_version(http: httpx.Client) -> None:
    answer = rpc_answer(http.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS))["result"]
    assert set(answer["capabilities"]) == {"tools"}, answer["capabilities"]
    info = answer["serverInfo"]
    assert info["name"] == "agentmd"
    assert info["version"] == mcp_server.package_version() and info["version"] not in ("", "0+unknown")


def test_methods_of_absent_features_are_method_not_found(http: httpx.Client) -> None:
    session = open_session(http)
    for n, method in enumerate(("prompts/list", "resources/list", "resources/templates/list"), 10):
        answer = rpc_answer(http.post("/mcp", json={"jsonrpc": "2.0", "id": n, "method": method}, headers=session))
        assert answer["error"]["code"] == -32601, (method, answer)
    ping = rpc_answer(http.post("/mcp", json={"jsonrpc": "2.0", "id": 20, "method": "ping"}, headers=session))
    assert ping["result"] == {}


# ---------------------------------------------------------------------------------------------- schemas


def test_tool_schemas_describe_every_field_with_enums_bounds_and_output_schemas(daemon: Daemon) -> None:
    tools = {t.name: t for t in with_mcp(daemon.port, lambda c: c.list_tools()).tools}
    assert sorted(tools) == ["memory_capture", "memory_search"]
    for tool in tools.values():
        assert tool.description and "\n" not in tool.description and "  " not in tool.description
        props = tool.input_schema["properties"]
        for name, spec in props.items():
            assert spec.get("description"), (tool.name, name)
        assert tool.input_schema["additionalProperties"] is False
        assert tool.output_schema and tool.output_schema["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
    search = tools["memory_search"].input_schema["properties"]
    assert search["mode"]["enum"] == ["hybrid", "fusion", "and"]
    assert search["limit"]["minimum"] == 1 and search["limit"]["maximum"] >= 10
    capture = tools["memory_capture"].input_schema["properties"]
    assert (capture["importance"]["minimum"], capture["importance"]["maximum"]) == (1, 5)
    assert tools["memory_capture"].input_schema["required"] == ["title"]


def test_a_tool_calls_header_check_reads_the_listed_schema_without_listing_the_tools(daemon: Daemon) -> None:
    # The SDK checks each HTTP tool call's Mcp-Param headers against the tool's input schema; given a look-up
    # it does not run the whole tools/list handler for every call. The look-up must give what tools/list shows.
    listed = {t.name: t.input_schema for t in with_mcp(daemon.port, lambda c: c.list_tools()).tools}
    server = mcp_server.build_server(daemon)
    assert server.get_tool_input_schema is not None
    for name, schema in listed.items():
        assert server.get_tool_input_schema(name) == schema
    assert server.get_tool_input_schema("memory_delete") is None


def test_structured_results_match_the_output_schemas(daemon: Daemon) -> None:
    async def go(client: Any) -> tuple[dict[str, Any], list[Any]]:
        tools = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        results = [
            await client.call_tool("memory_search", {"query": "otters"}),
            await client.call_tool("memory_search", {"query": "otters", "mode": "and", "include_archived": True}),
            await client.call_tool("memory_search", {"query": "nothing-matches-this-zzz", "mode": "fusion"}),
            await client.call_tool("memory_capture", {"title": "Schema check", "body": "b", "tags": ["t"]}),
        ]
        return tools, results

    schemas, results = with_mcp(daemon.port, go)
    for name, result in zip(["memory_search"] * 3 + ["memory_capture"], results, strict=True):
        assert not result.is_error, result.content[0].text
        jsonschema.validate(result.structured_content, schemas[name])


# ---------------------------------------------------------------------------------------------- errors


def test_an_unknown_tool_is_a_json_rpc_error(daemon: Daemon) -> None:
    error = mcp_error(daemon.port, lambda c: c.call_tool("memory_delete", {"path": "x"}))
    assert error.code == -32602
    assert "memory_delete" in error.message and "memory_search" in error.message


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("memory_search", {"query": "x", "limit": "ten"}, "`limit` must be a whole number from 1 to"),
        ("memory_search", {"query": "x", "limit": 0}, "`limit` is 0; allowed: 1 to"),
        (
            "memory_search",
            {"query": "x", "limit": 1e308},
            "`limit` is 1000000000000000010979063629440455417...; allowed: 1 to",
        ),
        ("memory_search", {"query": "x", "mode": "fuzzy"}, "`mode` is 'fuzzy'; allowed: hybrid, fusion, and"),
        ("memory_search", {"query": 5}, "`query` must be a string, not a number"),
        ("memory_search", {}, "`query` is required"),
        ("memory_search", {"query": "x", "after": "when pigs fly"}, "is not a date: give one (YYYY-MM-DD"),
        ("memory_search", {"query": "x", "colour": "red"}, "unknown argument `colour`; memory_search takes: query"),
        ("memory_capture", {"title": "t", "importance": 9}, "`importance` is 9; allowed: 1 to 5"),
        ("memory_capture", {"title": "t", "tags": "a,b"}, "`tags` must be a list of strings"),
        ("memory_capture", {"title": "t", "tags": ["a", 1]}, "`tags` must be a list of strings; entry 1 is a number"),
        ("memory_capture", {"title": ""}, "`title` must not be empty"),
        ("memory_capture", {"title": "t", "why": "y" * 600_000}, "`why` is 600000 characters long; at most 2000"),
        ("memory_capture", {"title": "t", "tags": ["ok", "t" * 101]}, "`tags` entry 1 is 101 characters long"),
    ],
)
def test_a_bad_argument_is_one_plain_line(daemon: Daemon, tool: str, arguments: dict[str, Any], says: str) -> None:
    result = with_mcp(daemon.port, lambda c: c.call_tool(tool, arguments))
    assert result.is_error is True
    text = result.content[0].text
    assert says in text, text
    assert "\n" not in text and "pydantic" not in text and "http" not in text


def test_date_bounds_take_ages_and_words_as_the_command_line_does(daemon: Daemon) -> None:
    """`after`/`before` over MCP read `3d`, `yesterday` or `last week` as `agentmd search` does (the note here
    was made today, while these tests run)."""

    def notes(arguments: dict[str, Any]) -> list[str]:
        result = with_mcp(daemon.port, lambda c: c.call_tool("memory_search", {"query": "otters", **arguments}))
        assert result.is_error is False, result.content[0].text
        return [r["note"] for r in result.structured_content["results"]]

    assert "notes/first.md" in notes({"after": "3d"})  # (with what the other tests of this module captured)
    assert "notes/first.md" in notes({"after": "yesterday"})
    assert notes({"before": "2d"}) == []
    assert notes({"before": "last week"}) == []


def test_an_oversized_call_reaches_the_sdk_client_as_the_reason(daemon: Daemon) -> None:
    huge = {"title": "Huge", "body": "z" * (5 * 2**20)}
    error = mcp_error(daemon.port, lambda c: c.call_tool("memory_capture", huge))
    assert "request body over" in error.message, error.message


def test_a_body_within_the_schema_but_over_its_bytes_is_a_tool_error(daemon: Daemon) -> None:
    # 200,000 characters of CJK are 600 KB of UTF-8: over the body's 512 KiB, which the tool says in its own
    # answer (the request itself, escaped or not, fits what the server takes)
    result = with_mcp(daemon.port, lambda c: c.call_tool("memory_capture", {"title": "CJK", "body": "中" * 200_000}))
    assert result.is_error is True and "over 512 KiB" in result.content[0].text, result.content[0].text


# ---------------------------------------------------------------------------------------------- hostile JSON

DEEP = b'{"a":' * 5000 + b"1" + b"}" * 5000
HOSTILE = [
    ("/v1/search", DEEP, "bad-json"),
    ("/v1/capture", DEEP, "bad-json"),
    ("/v1/search", b'{"query": ' + b"[" * 100 + b"]" * 100 + b"}", "bad-json"),
    ("/v1/capture", b'{"title": "x\\ud800", "body": "y"}', "bad-json"),
    ("/v1/search", b'{"query": "x\\udfff"}', "bad-json"),
    ("/v1/probe", b'{"budget": NaN}', "bad-json"),
    ("/v1/probe", b'{"budget": Infinity}', "bad-json"),
    ("/v1/search", b"\xff\xfe{}", "bad-json"),
    ("/v1/search", b'{"query": "x", "limit": "ten"}', "usage"),
    ("/v1/search", b'{"query": 5}', "usage"),
    ("/v1/search", b'{"query": null}', "usage"),
    ("/v1/search", b'{"query": "x", "include_archived": "yes"}', "usage"),
    ("/v1/search", b'{"query": "x", "limit": true}', "usage"),
    ("/v1/search", b'{"query": "x", "floor": "low"}', "usage"),
    ("/v1/search", b'{"query": "x", "floor": 7}', "usage"),
    ("/v1/search", b'{"query": "x", "floor": true}', "usage"),
    ("/v1/capture", b'{"title": 5}', "usage"),
    ("/v1/capture", b'{"title": "t", "tags": [1, {"a": 2}]}', "usage"),
    ("/v1/capture", b'{"title": "t", "importance": {}}', "usage"),
    ("/v1/probe", b'{"budget": "x"}', "usage"),
    ("/v1/probe", b'{"budget": -1}', "usage"),
]


@pytest.mark.parametrize(("path", "raw", "code"), HOSTILE)
def test_hostile_json_on_v1_is_a_400_naming_the_problem(
    http: httpx.Client, settings: Settings, path: str, raw: bytes, code: str
) -> None:
    response = http.post(path, content=raw, headers=MCP_HEADERS)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == code and body["error"] and "\n" not in body["error"]
    assert http.get("/health").json()["ok"] is True


@pytest.mark.parametrize(
    "arguments",
    [
        b'{"query": "x\\ud800"}',
        b'{"query": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"query": {"nested": {"deeper": ["x"]}}}',
        b'{"query": "x", "limit": 1e400}',
    ],
)
def test_hostile_json_on_mcp_is_a_json_rpc_error_not_a_500(http: httpx.Client, arguments: bytes) -> None:
    session = open_session(http)
    raw = (
        b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "memory_search", "arguments": '
        + arguments
        + b"}}"
    )
    response = http.post("/mcp", content=raw, headers=session)
    assert response.status_code in (200, 400, 422), response.text
    answer = rpc_answer(response)
    if response.status_code == 200:
        assert answer.get("error") or answer["result"]["isError"] is True, answer
    else:
        assert answer["jsonrpc"] == "2.0" and answer["error"]["message"]


@pytest.mark.parametrize("raw", [b"[]", b' [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', b"42", b'"ping"'])
def test_a_body_that_is_not_one_json_object_is_refused_in_one_line(http: httpx.Client, raw: bytes) -> None:
    """A batch or a bare value, opening a session or inside one: one plain JSON-RPC error, not a parser's dump."""
    for headers in (MCP_HEADERS, open_session(http)):
        response = http.post("/mcp", content=raw, headers=headers)
        assert response.status_code == 400, response.text
        message = rpc_answer(response)["error"]["message"]
        assert "one JSON-RPC message" in message and "\n" not in message and "pydantic" not in message


@pytest.mark.parametrize(
    ("raw", "code", "ident", "says"),
    [
        (b'{"id": 1, "method": "ping"}', -32600, 1, '"jsonrpc": "2.0"'),
        (b'{"jsonrpc": "2.0", "id": 2}', -32600, 2, "names its `method`"),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', -32600, None, "`id` must be a string or a number"),
        (b'{"jsonrpc": "2.0", "id": 3, "method": 7}', -32600, 3, "`method` must be a string"),
        (
            b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": "x"}',
            -32602,
            4,
            "`params` must be an object",
        ),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 5}}', -32602, 5, "`name`, a string"),
        (
            b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", '
            b'"params": {"name": "memory_search", "arguments": "x"}}',
            -32602,
            6,
            "`arguments` of tools/call must be an object",
        ),
    ],
)
def test_a_message_json_rpc_cannot_take_is_refused_in_one_line_with_its_id(
    http: httpx.Client, raw: bytes, code: int, ident: object, says: str
) -> None:
    for headers in (MCP_HEADERS, open_session(http)):
        response = http.post("/mcp", content=raw, headers=headers)
        assert response.status_code == 400, response.text
        answer = rpc_answer(response)
        assert answer["error"]["code"] == code and answer["id"] == ident, answer
        assert says in answer["error"]["message"] and "\n" not in answer["error"]["message"]


# ---------------------------------------------------------------------------------------------- sessions


def test_a_clients_sessions_past_its_cap_end_its_longest_idle_and_a_call_in_it_is_still_served(
    http: httpx.Client,
) -> None:
    first = open_session(http)
    second = open_session(http)
    assert http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=first).status_code == 200
    for _ in range(mcp_sessions.MAX_SESSIONS_PER_CLIENT - 1):
        assert http.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS).status_code == 200
    # one more than this client's cap: its session idle longest (the second; the first was used since) was ended,
    # and a call naming it is served in a new session in its place, under the same id
    carried = http.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers=second)
    assert carried.status_code == 200, carried.text
    assert carried.headers["mcp-session-id"] == second["mcp-session-id"]
    kept = http.post("/mcp", json={"jsonrpc": "2.0", "id": 4, "method": "ping"}, headers=first)
    assert kept.status_code == 200, kept.text


def test_a_method_a_route_does_not_take_is_405_naming_the_ones_it_does(http: httpx.Client) -> None:
    response = http.put("/v1/search", json={"query": "x"})
    assert response.status_code == 405
    assert "POST" in response.headers.get("allow", ""), response.headers
    assert response.json()["error"] == "PUT is not allowed on /v1/search"
