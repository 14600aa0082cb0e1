"""Operator authority comes from the vault's owner-only token file, never from what a request body claims."""

from __future__ import annotations

import json
import os
import stat
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import auth, make_repo, wait_until

from agentmd.engine.daemon.operator import (
    OPERATOR_HEADER,
    OperatorTokenError,
    ensure_token,
    is_operator,
    token_path,
)
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import Settings, resolve

pytestmark = pytest.mark.slow

RULE = {"title": "House rule", "body": "Every service logs in UTC.\n", "space": "standards"}


def post(port: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/capture",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **auth(port), **(headers or {})},
        method="POST",
    )
    try:
        with opener.open(req, timeout=20) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


@pytest.fixture
def settings(tmp_path: Path, cli: Any, env: dict[str, str]) -> Settings:
    return resolve(vault=str(make_repo(tmp_path / "vault")))


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    d = Daemon(settings, port=0, commit_debounce=0.2, probe_interval=0)
    d.start()
    wait_until(lambda: not d.health()["index_stale"], 20, "first pass")
    yield d
    d.stop()


def test_token_file_is_made_owner_only_and_kept(tmp_path: Path) -> None:
    state = tmp_path / "state"
    token = ensure_token(state)
    assert len(token) >= 32
    assert stat.S_IMODE(token_path(state).stat().st_mode) == 0o600
    assert ensure_token(state) == token
    wrong = token[:-1] + ("1" if token.endswith("0") else "0")  # differs in the last character, whatever it is
    assert is_operator(state, token) and not is_operator(state, wrong) and not is_operator(state, None)


def test_a_token_others_can_read_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    token = ensure_token(state)
    os.chmod(token_path(state), 0o644)
    with pytest.raises(OperatorTokenError, match="chmod 600"):
        ensure_token(state)
    assert not is_operator(state, token)
    token_path(state).unlink()
    os.symlink(tmp_path / "elsewhere", token_path(state))
    with pytest.raises(OperatorTokenError):
        ensure_token(state)


def test_a_body_claiming_operator_is_refused(daemon: Daemon, settings: Settings) -> None:
    target = settings.vault / "standards" / "house-rule.md"
    status, answer = post(daemon.port, {**RULE, "_actor": "operator"})
    assert status == 422 and answer["code"] == "operator:token", answer
    status, answer = post(
        daemon.port, {**RULE, "_actor": "operator", "_operator_token": ensure_token(settings.state_dir)}
    )
    assert status == 422 and answer["code"] == "operator:token", answer  # the body can never carry the token
    status, answer = post(daemon.port, {**RULE, "_actor": "operator"}, {OPERATOR_HEADER: "0" * 64})
    assert status == 422 and answer["code"] == "operator:token", answer
    status, answer = post(daemon.port, RULE)
    assert status == 422 and answer["code"] == "level:alignment", answer
    assert not target.exists()
    status, answer = post(
        daemon.port, {**RULE, "_actor": "operator"}, {OPERATOR_HEADER: ensure_token(settings.state_dir)}
    )
    assert status == 200, answer
    assert answer["path"] == "standards/house-rule.md" and target.is_file()


def test_cli_operator_flag_reads_the_token(daemon: Daemon, settings: Settings, cli: Any) -> None:
    args = ("capture", "--vault", str(settings.vault), "--title", "Log in UTC", "--space", "standards", "--json")
    refused = cli(*args, "--body", "x")
    assert refused.code != 0
    done = cli(*args, "--body", "Every service logs in UTC.", "--operator")
    assert done.code == 0, done.err
    assert done.json()["path"] == "standards/log-in-utc.md"
    assert stat.S_IMODE(token_path(settings.state_dir).stat().st_mode) == 0o600
