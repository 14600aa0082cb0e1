"""Helpers for tests that run the real daemon against a real git vault."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agentmd.engine.client import DaemonClient, access_token
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import Settings

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test User",
    "GIT_AUTHOR_EMAIL": "user@example.com",
    "GIT_COMMITTER_NAME": "Test User",
    "GIT_COMMITTER_EMAIL": "user@example.com",
}


def git(vault: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(vault), *args], check=True, capture_output=True, text=True, env=env).stdout


def make_repo(vault: Path, notes: dict[str, str] | None = None) -> Path:
    vault.mkdir(parents=True, exist_ok=True)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "config", "user.name", "Test User")
    git(vault, "config", "user.email", "user@example.com")
    for rel, text in (notes or {"README.md": "# Vault\n"}).items():
        p = vault / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "start")
    return vault


def origins(vault: Path) -> list[str]:
    """The origin trailer of every commit, newest first."""
    out = git(vault, "log", "--format=%(trailers:key=origin,valueonly)%x1e")
    return [chunk.strip() for chunk in out.split("\x1e") if chunk.strip()]


def files_in_commit(vault: Path, rev: str = "HEAD") -> set[str]:
    return set(git(vault, "show", "--name-only", "--format=", rev).split())


def is_clean(vault: Path) -> bool:
    return git(vault, "status", "--porcelain") == ""


def wait_until(pred: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    """Poll `pred` until it returns something truthy or the deadline passes."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        pause.wait(0.02)


def token_for_port(port: int) -> str | None:
    """The access token of the daemon listening on `port`, found as a client of this user finds it: the state
    folder (under this environment's XDG state home) whose daemon.json names the port."""
    root = Path(os.environ.get("XDG_STATE_HOME") or Path(os.environ.get("HOME", str(Path.home()))) / ".local/state")
    for info in sorted(root.glob("agentmd/*/daemon.json")):
        try:
            if json.loads(info.read_text(encoding="utf-8")).get("port") == port:
                return access_token(info.parent)
        except (OSError, ValueError):
            continue
    return None


def bearer(state_dir: Path) -> dict[str, str]:
    """The Authorization header carrying the access token of the daemon whose state folder is `state_dir`."""
    token = access_token(state_dir)
    return {"Authorization": f"Bearer {token}"} if token else {}


def client_of(daemon: Daemon) -> DaemonClient:
    """A client of `daemon` holding its access token, as the CLI makes one."""
    return DaemonClient(daemon.port, token=access_token(daemon.settings.state_dir))


def auth(target: int | Daemon) -> dict[str, str]:
    """The Authorization header a client of the daemon (given itself, or its port) sends."""
    token = access_token(target.settings.state_dir) if isinstance(target, Daemon) else token_for_port(target)
    return {"Authorization": f"Bearer {token}"} if token else {}


def mcp_transport(target: int | Daemon) -> Any:
    """The SDK's streamable HTTP transport to the daemon's `/mcp` (the daemon, or its port), carrying its access
    token."""
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    port = target.port if isinstance(target, Daemon) else target
    return streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(auth(target)))


def http_get(
    port: int, path: str, headers: dict[str, str] | None = None, *, authorized: bool = True
) -> tuple[int, dict[str, Any]]:
    """GET a route of the daemon on `port`, with its access token unless `authorized` is False."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    sent = {**(auth(port) if authorized else {}), **(headers or {})}
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=sent)
    try:
        with opener.open(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def vault_settings(vault: Path, notes: dict[str, str]) -> Settings:
    """The settings of a new git vault at `vault` holding `notes`, in this environment's XDG folders."""
    from agentmd.engine.settings import resolve

    return resolve(vault=str(make_repo(vault, notes)))


@contextlib.contextmanager
def running_daemon(settings: Settings, commit_debounce: float = 0.2) -> Iterator[Daemon]:
    """A real daemon on a free port, with no health or probe loop of its own, once its first pass is done."""
    d = Daemon(settings, port=0, commit_debounce=commit_debounce, health_interval=0, probe_interval=0)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], 30, "first pass")
        yield d
    finally:
        d.stop()


def serve_process(vault: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    """`agentmd serve` on `vault` as its own process on a free loopback port, stderr kept for the test."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentmd", "serve", "--vault", str(vault), "--port", "0", *extra],
        cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
