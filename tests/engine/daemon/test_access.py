"""Who may call the daemon: its own origin only, the vault's access token, JSON bodies; `agentmd token` and
`agentmd mcp-config`.

Against the real daemon on 127.0.0.1 over a real git vault, with raw httpx requests shaped as a browser sends
them, the real CLI, and the SDK's own MCP client configured from what `mcp-config` prints.
"""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from daemon_helpers import auth, make_repo, running_daemon, vault_settings
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from agentmd.cli import main
from agentmd.engine.client import DaemonClient, DaemonHTTPError, access_token, access_token_path
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.request_fields import input_schema
from agentmd.engine.settings import Settings, resolve
from agentmd.engine.write.request import MAX_TITLE, CaptureRequest

pytestmark = pytest.mark.slow

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CAPTURE = {"title": "Poisoned note", "body": "Written by a page on another port."}


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    return vault_settings(tmp_path / "vault", {"README.md": "# Vault\n", "notes/first.md": "first note about otters\n"})


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    with running_daemon(settings, commit_debounce=0.1) as d:
        yield d


@pytest.fixture
def http(daemon: Daemon) -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False, base_url=f"http://127.0.0.1:{daemon.port}", timeout=20) as client:
        yield client


def notes(vault: Path) -> set[str]:
    return {p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if ".git" not in p.parts}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_token_file_is_the_owners_alone(daemon: Daemon, settings: Settings) -> None:
    path = access_token_path(settings.state_dir)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(access_token(settings.state_dir) or "") >= 32


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/capture", CAPTURE),
        ("POST", "/v1/search", {"query": "otters"}),
        ("GET", "/status", None),
        ("POST", "/mcp", INITIALIZE),
    ],
)
def test_every_route_but_health_needs_the_token(
    daemon: Daemon, http: httpx.Client, settings: Settings, method: str, path: str, body: Any
) -> None:
    before = notes(settings.vault)
    headers = MCP_HEADERS if path == "/mcp" else {}
    for sent in ({}, {"Authorization": "Bearer " + "0" * 64}, {"Authorization": "Basic dXNlcjpwYXNz"}):
        response = http.request(method, path, json=body, headers={**headers, **sent})
        assert response.status_code == 401, (sent, response.text)
        assert response.headers["www-authenticate"] == "Bearer"
        text = response.text
        assert "Authorization: Bearer" in text and "agentmd mcp-config" in text and "Traceback" not in text
        assert "mcp-session-id" not in response.headers
    good = http.request(method, path, json=body, headers={**headers, **auth(daemon)})
    assert good.status_code == 200, good.text
    assert http.get("/health").status_code == 200  # liveness stays open
    if path != "/v1/capture":
        assert notes(settings.vault) == before


@pytest.mark.parametrize("origin", ["http://localhost:3000", "http://127.0.0.1:5173", "http://[::1]:8080", "null"])
def test_a_page_on_another_loopback_port_is_refused_even_with_the_token(
    daemon: Daemon, http: httpx.Client, settings: Settings, origin: str
) -> None:
    before = notes(settings.vault)
    for path, body, headers in (("/v1/capture", CAPTURE, {}), ("/mcp", INITIALIZE, MCP_HEADERS)):
        response = http.post(path, json=body, headers={**headers, **auth(daemon), "Origin": origin})
        assert response.status_code == 403, response.text
        assert "another origin" in response.text
        assert not any(k.lower().startswith("access-control-") for k in response.headers)
    assert http.get("/health", headers={"Origin": origin}).status_code == 403
    assert notes(settings.vault) == before


def test_the_daemons_own_origin_is_served(daemon: Daemon, http: httpx.Client) -> None:
    for host in ("127.0.0.1", "localhost"):
        origin = f"http://{host}:{daemon.port}"
        response = http.post("/v1/search", json={"query": "otters"}, headers={**auth(daemon), "Origin": origin})
        assert response.status_code == 200, response.text


NOT_JSON = ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data", None]


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_a_write_that_is_not_json_is_refused_before_any_work(
    daemon: Daemon, http: httpx.Client, settings: Settings, content_type: str | None
) -> None:
    before = notes(settings.vault)
    headers = {**auth(daemon), **({"Content-Type": content_type} if content_type else {})}
    for path in ("/v1/capture", "/mcp"):
        response = http.post(path, content=json.dumps(CAPTURE).encode(), headers=headers)
        assert response.status_code == 415, response.text
        assert "Content-Type: application/json" in response.text
    assert notes(settings.vault) == before


def test_rotation_takes_effect_at_once_and_the_cli_follows(
    daemon: Daemon, http: httpx.Client, settings: Settings
) -> None:
    old = auth(daemon)
    assert http.post("/v1/search", json={"query": "otters"}, headers=old).status_code == 200
    code, out, err = cli("token", "rotate", "--vault", str(settings.vault))
    assert code == 0, err
    assert str(access_token_path(settings.state_dir)) in out and "mcp-config" in out
    assert http.post("/v1/search", json={"query": "otters"}, headers=old).status_code == 401
    assert http.post("/v1/search", json={"query": "otters"}, headers=auth(daemon)).status_code == 200
    assert stat.S_IMODE(access_token_path(settings.state_dir).stat().st_mode) == 0o600
    code, out, err = cli("search", "otters", "--vault", str(settings.vault), "--json")  # reads the new token
    assert code == 0, err
    assert json.loads(out)["results"][0]["path"] == "notes/first.md"
    code, out, _ = cli("token", "path", "--vault", str(settings.vault))
    assert out.strip() == str(access_token_path(settings.state_dir))


def test_a_client_without_the_token_is_told_why(daemon: Daemon) -> None:
    with pytest.raises(DaemonHTTPError) as caught:
        DaemonClient(daemon.port).post("/v1/search", {"query": "otters"}, timeout=10)
    assert caught.value.status == 401 and "access token" in caught.value.message


def test_mcp_config_prints_a_set_up_that_the_sdk_client_can_use(daemon: Daemon, settings: Settings) -> None:
    code, out, err = cli("mcp-config", "--vault", str(settings.vault), "--json")
    assert code == 0, err
    config = json.loads(out)
    token = access_token(settings.state_dir)
    assert config["url"] == f"http://127.0.0.1:{daemon.port}/mcp" and config["running"] is True
    assert config["headers"] == {"Authorization": f"Bearer {token}"}
    assert f"--header 'Authorization: Bearer {token}'" in config["claude"]
    entry = config["http"]["mcpServers"]["agentmd"]
    assert entry["type"] == "http" and entry["url"] == config["url"]
    stdio = config["stdio"]["mcpServers"]["agentmd"]
    assert stdio["args"][-3:] == ["mcp", "--vault", str(settings.vault)]
    assert os.path.isabs(stdio["command"])  # runs from a client's PATH too (`agentmd`, or `python -m agentmd`)

    async def go() -> list[str]:
        client_http = create_mcp_http_client(entry["headers"])
        async with Client(streamable_http_client(entry["url"], http_client=client_http)) as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    assert anyio.run(go) == ["memory_capture", "memory_search"]
    code, text, _ = cli("mcp-config", "--vault", str(settings.vault))
    assert code == 0 and "claude mcp add --transport http agentmd" in text and '"headers"' in text


def test_mcp_config_before_the_daemon_makes_the_token_the_daemon_will_use(tmp_path: Path, env: dict[str, str]) -> None:
    vault = make_repo(tmp_path / "v2", {"a.md": "# A\n"})
    settings = resolve(vault=str(vault))
    code, out, err = cli("mcp-config", "--vault", str(vault), "--json")
    assert code == 0, err
    config = json.loads(out)
    assert config["running"] is False and config["url"] == "http://127.0.0.1:7821/mcp"
    made = access_token(settings.state_dir)
    assert made and config["headers"]["Authorization"] == f"Bearer {made}"
    d = Daemon(settings, port=0, commit_debounce=0.1, probe_interval=0, watch=False)
    d.start()
    try:
        assert access_token(settings.state_dir) == made  # the daemon keeps the token the client was given
    finally:
        d.stop()


def test_a_token_file_others_can_read_is_not_trusted(daemon: Daemon, http: httpx.Client, settings: Settings) -> None:
    path = access_token_path(settings.state_dir)
    token = path.read_text().strip()
    os.chmod(path, 0o644)
    try:
        response = http.post("/v1/search", json={"query": "otters"}, headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 401
    finally:
        os.chmod(path, 0o600)
    response = http.post("/v1/search", json={"query": "otters"}, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200


def test_a_capture_too_large_to_send_is_told_so_and_writes_nothing(daemon: Daemon, settings: Settings) -> None:
    before = notes(settings.vault)
    body = "word " * 1_000_000  # 5 MB: over what one request may carry
    code, out, err = cli("capture", "--vault", str(settings.vault), "--title", "Huge", "--body", body, "--json")
    assert code == 1
    assert json.loads(out)["code"] == "body-too-large"
    assert "over the 4,194,304 bytes (4 MiB)" in err and "nothing was written" in err and "could not reach" not in err
    assert notes(settings.vault) == before


def test_a_refusal_sent_before_the_whole_body_is_read_reaches_the_client() -> None:
    """A server that answers 413 and closes while the client is still sending: the client reads that answer
    rather than reporting the daemon unreachable."""
    from starlette.applications import Starlette

    from agentmd.engine.daemon.server import HttpServer, LoopbackGuard

    server = HttpServer(LoopbackGuard(Starlette(), max_body=1000), 0)
    server.start()
    try:
        with pytest.raises(DaemonHTTPError) as refused:
            DaemonClient(server.port).post("/v1/capture", {"title": "x", "body": "y" * 900_000}, timeout=30)
        assert refused.value.status == 413 and "request body over 1000 bytes" in refused.value.message
    finally:
        server.stop()


def test_a_request_without_its_required_field_is_told_which(
    daemon: Daemon, http: httpx.Client, settings: Settings
) -> None:
    before = notes(settings.vault)
    headers = {**auth(daemon), "Content-Type": "application/json"}
    for path, body, field in (
        ("/v1/capture", {"body": "a body with no title"}, "`title`"),
        ("/v1/capture", {}, "`title`"),
        ("/v1/search", {}, "`query`"),
        ("/v1/search", {"limit": 3}, "`query`"),
        ("/v1/search", {"query": "otters", "bogus": 1}, "`bogus`; its fields are"),
    ):
        response = http.post(path, json=body, headers=headers)
        assert response.status_code == 400, (path, body, response.status_code, response.text)
        error = response.json()["error"]
        assert field in error and "__init__" not in error and "positional" not in error, error
    assert notes(settings.vault) == before


def test_the_capture_tools_title_bound_is_the_one_a_capture_applies(daemon: Daemon, settings: Settings) -> None:
    assert input_schema(CaptureRequest)["properties"]["title"]["maxLength"] == MAX_TITLE
    client = DaemonClient(daemon.port, token=access_token(settings.state_dir))
    answer = client.post("/v1/capture", {"title": "t" * MAX_TITLE, "body": "a title exactly at the bound"})
    assert answer["path"].endswith(".md") and (settings.vault / answer["path"]).is_file()
    with pytest.raises(DaemonHTTPError) as refused:
        client.post("/v1/capture", {"title": "t" * (MAX_TITLE + 1), "body": "one character over"})
    assert str(MAX_TITLE) in str(refused.value)


def test_the_tools_schemas_bound_what_the_server_refuses(daemon: Daemon, http: httpx.Client) -> None:
    """Lists, bodies and project slugs: each bound a capture or a search applies is in the tool's schema, and
    an argument past it is refused as the schema says, in one line."""
    from agentmd.engine.daemon.mcp_tools import ArgumentError, check_arguments
    from agentmd.engine.search.planning import MAX_PROJECT_CHARS
    from agentmd.engine.write.request import MAX_BODY_BYTES, MAX_LIST

    capture = input_schema(CaptureRequest)["properties"]
    assert capture["body"]["maxLength"] == MAX_BODY_BYTES
    assert all(capture[k]["maxItems"] == MAX_LIST for k in ("tags", "aliases", "related"))
    with pytest.raises(ArgumentError, match=f"`tags` has {MAX_LIST + 1} entries; at most {MAX_LIST}"):
        check_arguments("memory_capture", {"title": "t", "tags": [f"t{i}" for i in range(MAX_LIST + 1)]})
    with pytest.raises(ArgumentError, match="`project` is"):
        check_arguments("memory_search", {"query": "otters", "project": "p" * (MAX_PROJECT_CHARS + 1)})
    response = http.post(
        "/v1/search", json={"query": "otters", "project": "p" * (MAX_PROJECT_CHARS + 1)}, headers=auth(daemon)
    )
    assert response.status_code == 400 and f"at most {MAX_PROJECT_CHARS}" in response.json()["error"]


def test_status_names_another_process_on_the_daemons_port(daemon: Daemon, settings: Settings) -> None:
    """With no daemon for a vault, whatever else listens where `agentmd serve` would is named: an HTTP MCP client
    would send it the access token. This vault's own daemon, or nothing at all, is no such line."""
    import http.server
    import socket
    import threading

    from agentmd.engine.client import port_taken

    squatter = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=squatter.serve_forever, daemon=True).start()
    try:
        said = port_taken(squatter.server_address[1], settings.vault)
        assert said is not None and said.startswith("port-taken: a process listens on 127.0.0.1:")
    finally:
        squatter.shutdown()
        squatter.server_close()
    assert port_taken(daemon.port, settings.vault) is None  # this vault's own daemon
    other = port_taken(daemon.port, settings.vault.parent / "another-vault")
    assert other is not None and f"agentmd serve for {settings.vault}" in other
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    assert port_taken(port, settings.vault) is None  # nothing listens
