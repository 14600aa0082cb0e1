"""What a new user meets first: `./dev` without a task, the demo with its port taken, `serve` on a busy port or
beside a running daemon, and capture's usage errors. Real processes, real sockets, a real vault."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO
from daemon_helpers import make_repo, wait_until

from agentmd.cli.index import render_search
from agentmd.engine.client import recorded_port
from agentmd.engine.settings import resolve

pytestmark = pytest.mark.slow

AGENTMD = str(Path(sys.executable).with_name("agentmd"))


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def run(*argv: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, env=env or dict(os.environ))


def test_dev_without_a_task_prints_its_tasks(tmp_path: Path) -> None:
    done = run(str(REPO / "dev"))
    assert done.returncode == 2
    assert done.stderr.startswith("usage: ./dev TASK")
    for task in ("demo", "test", "bench", "types", "conformance"):
        assert f"./dev {task}" in done.stderr
    assert "set -euo" not in done.stderr + done.stdout and "AGENTMD_DEMO_PORT" in done.stderr


def test_the_demo_stops_with_a_reason_when_its_chosen_port_is_taken(busy_port: int) -> None:
    done = run(str(REPO / "dev"), "demo", env={**os.environ, "AGENTMD_DEMO_PORT": str(busy_port)})
    assert done.returncode == 1
    assert f"port {busy_port} (AGENTMD_DEMO_PORT) is in use" in done.stderr
    assert "installing" not in done.stderr  # it stopped before doing anything


def test_serve_on_a_busy_port_is_one_line(tmp_path: Path, env: dict[str, str], busy_port: int) -> None:
    vault = make_repo(tmp_path / "vault")
    done = run(AGENTMD, "serve", "--vault", str(vault), "--port", str(busy_port))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"agentmd: port {busy_port} on 127.0.0.1 is in use (another process is listening on it); stop the other "
        "process or pass --port"
    ]


def test_a_second_serve_says_the_first_keeps_running(tmp_path: Path, env: dict[str, str]) -> None:
    vault = make_repo(tmp_path / "vault")
    state = resolve(vault=str(vault)).state_dir
    first = subprocess.Popen([AGENTMD, "serve", "--vault", str(vault), "--port", "0"], stderr=subprocess.DEVNULL)
    try:
        port = wait_until(lambda: first.poll() is None and recorded_port(state), 30, "first daemon up")
        done = run(AGENTMD, "serve", "--vault", str(vault), "--port", "0")
        assert done.returncode == 1
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and "stopped" not in lines[0], lines
        assert f"port {port}" in lines[0] and "that one keeps running" in lines[0]
        assert first.poll() is None
    finally:
        first.terminate()
        first.wait(timeout=30)


@pytest.mark.parametrize("title", [[], ["--title", ""], ["--title", "   "]])
def test_capture_without_a_title_is_a_usage_error_named_once(
    tmp_path: Path, env: dict[str, str], title: list[str]
) -> None:
    vault = make_repo(tmp_path / "vault")
    done = run(AGENTMD, "capture", "--vault", str(vault), *title, "--body", "text")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("agentmd capture: ") and "agentmd: agentmd" not in done.stderr
    assert "--title" in done.stderr and len(done.stderr.splitlines()) == 1


def test_the_search_hint_names_the_command_line_flag() -> None:
    response = {
        "results": [],
        "archived_hidden": 2,
        "superseded_hidden": 0,
        "staged_hidden": 0,
        "note": "2 more note(s) matched behind the archived/superseded/staged walls; pass include_archived",
    }
    text = render_search(response)
    assert "pass --include-archived" in text and " include_archived" not in text
