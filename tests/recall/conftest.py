"""Fixtures of the recall tests: a real vault in a git repository, its index, and a checkout bound to one
of its projects."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_helpers import make_repo

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.settings import Settings, resolve
from recall.helpers import NOTES, hook_env


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = hook_env(tmp_path, tmp_path / "vault")
    for k in ("HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "AGENTMD_VAULT"):
        monkeypatch.setenv(k, values[k])
    monkeypatch.delenv("AGENTMD_DAILY_WRITE_CAP", raising=False)
    return values


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    make_repo(tmp_path / "vault", NOTES)
    return resolve(vault=str(tmp_path / "vault"))


@pytest.fixture
def indexed(settings: Settings) -> Settings:
    with Store(settings.cache_dir) as store:
        reconcile(settings.vault, store)
    return settings


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A checkout named like the vault's project folder: the session binds to `ledgerline`."""
    d = tmp_path / "code" / "ledgerline"
    (d / ".git").mkdir(parents=True)
    (d / "src" / "api").mkdir(parents=True)
    return d


@pytest.fixture
def daemon(indexed: Settings) -> Iterator[Daemon]:
    d = Daemon(indexed, port=0, commit_debounce=0.2, probe_interval=0)
    d.start()
    deadline = time.monotonic() + 30
    while d.health()["index_stale"]:
        assert time.monotonic() < deadline, "first pass"
        time.sleep(0.02)
    yield d
    d.stop()
