"""A connected MCP client keeps its tools across a restart of the daemon.

`agentmd serve` runs as its own process on 127.0.0.1 over a real git vault; the SDK's own streamable HTTP client
opens a session, the daemon is stopped and started again on the same port while that client stays connected,
and the same client session's next calls (which still name the session id the first daemon gave) are answered.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from daemon_helpers import auth, http_get, make_repo, mcp_transport, serve_process, wait_until
from mcp.client.session import ClientSession

from agentmd.engine.settings import Settings, resolve

pytestmark = pytest.mark.slow

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/first.md": "first note about otters\n"})
    return resolve(vault=str(vault))


class Served:
    """`agentmd serve` on the vault, started again on the same port by `restart`."""

    def __init__(self, settings: Settings, env: dict[str, str]) -> None:
        self.settings, self.env = settings, env
        self.proc = serve_process(settings.vault, env)
        self.port = self._ready()

    def _ready(self) -> int:
        def port() -> int | None:
            try:
                info = json.loads((self.settings.state_dir / "daemon.json").read_text())
            except (OSError, ValueError):
                return None
            if self.proc.pid not in (info.get("pid"), info.get("supervisor")) or info.get("stopping"):
                return None
            return info.get("port") or None

        found = int(wait_until(port, 30, "daemon port"))
        wait_until(lambda: http_get(found, "/health")[1].get("index_stale") is False, 30, "first pass")
        return found

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def restart(self) -> None:
        self.stop()
        self.proc = serve_process(self.settings.vault, self.env, "--port", str(self.port))
        assert self._ready() == self.port


@pytest.fixture
def served(settings: Settings, env: dict[str, str]) -> Iterator[Served]:
    daemon = Served(settings, env)
    try:
        yield daemon
    finally:
        daemon.stop()


def paths(result: Any) -> list[str]:
    assert not result.is_error, result.content
    return [row["path"].split("#")[0] for row in result.structured_content["results"]]


def test_a_connected_client_keeps_its_tools_across_a_daemon_restart(served: Served, settings: Settings) -> None:
    async def go() -> list[Any]:
        async with mcp_transport(served.port) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            before = await session.call_tool("memory_search", {"query": "otters", "mode": "fusion"})
            await anyio.to_thread.run_sync(served.restart)
            after = await session.call_tool("memory_search", {"query": "otters", "mode": "fusion"})
            captured = await session.call_tool(
                "memory_capture", {"title": "Restarts keep sessions", "body": "Captured after a restart: quokkas."}
            )
            found = await session.call_tool("memory_search", {"query": "quokkas", "mode": "fusion"})
            return [before, after, captured, found]

    before, after, captured, found = anyio.run(go)
    assert paths(before) == paths(after) == ["notes/first.md"]
    assert not captured.is_error, captured.content
    path = captured.structured_content["path"]
    assert (settings.vault / path).is_file()
    assert paths(found) == [path]


def test_after_a_restart_an_unknown_session_needs_the_token_and_a_deleted_one_stays_ended(served: Served) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    base = f"http://127.0.0.1:{served.port}"
    with httpx.Client(trust_env=False, base_url=base, timeout=20) as http:
        opened = http.post("/mcp", json=init, headers={**MCP_HEADERS, **auth(served.port)})
        assert opened.status_code == 200, opened.text
        kept, ended = opened.headers["mcp-session-id"], "0" * 32
        served.restart()
        token = auth(served.port)
        for sid in (kept, ended):
            session = {**MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
            # without the token nothing is opened in its place
            assert http.post("/mcp", json=ping, headers=session).status_code == 401
            assert http.post("/mcp", json=ping, headers={**session, **token}).status_code == 200
            deleted = http.delete("/mcp", headers={**session, **token})
            assert deleted.status_code == 200, deleted.text
            gone = http.post("/mcp", json=ping, headers={**session, **token})
            assert gone.status_code == 404, gone.text
        # a DELETE naming a session nobody opened opens nothing
        stray = {**MCP_HEADERS, **token, "mcp-session-id": "f" * 32, "mcp-protocol-version": "2025-06-18"}
        assert http.delete("/mcp", headers=stray).status_code == 404
        assert http.post("/mcp", json=ping, headers=stray).status_code == 200  # a POST is served in a new one
