"""A pause for recall: `agentmd recall off|on [--project P] [--for SPAN]` and `AGENTMD_RECALL=off` for one
session. The hook runs as Claude Code runs it (a real process, Claude Code's UserPromptSubmit payload on stdin);
the command line runs in-process against the same state folder; the session-start hook reads SessionStart's
payload."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO
from daemon_helpers import make_repo
from recall.helpers import FIXTURES, NOTES, hook_env, hook_log, payload, run_hook, usage_rows

from agentmd.engine import recall_pause
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.recall.render import HEADER
from agentmd.engine.settings import Settings, resolve

PROMPT = "user_prompt_submit.json"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = hook_env(tmp_path, tmp_path / "vault")
    for k in ("HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "AGENTMD_VAULT"):
        monkeypatch.setenv(k, values[k])
    for k in ("AGENTMD_DAILY_WRITE_CAP", recall_pause.ENV):
        monkeypatch.delenv(k, raising=False)
        values.pop(k, None)
    return values


@pytest.fixture
def indexed(tmp_path: Path, env: dict[str, str]) -> Settings:
    make_repo(tmp_path / "vault", NOTES)
    settings = resolve(vault=str(tmp_path / "vault"))
    with Store(settings.cache_dir) as store:
        reconcile(settings.vault, store)
    return settings


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A checkout named like the vault's project folder: its sessions bind to `ledgerline`."""
    d = tmp_path / "code" / "ledgerline"
    (d / ".git").mkdir(parents=True)
    return d


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A checkout of another project (`tidewatch`)."""
    d = tmp_path / "code" / "tidewatch"
    (d / ".git").mkdir(parents=True)
    return d


def prompt(cwd: Path, session: str, text: str | None = None) -> str:
    changes = {"session_id": session} | ({"prompt": text} if text else {})
    return payload(PROMPT, cwd, **changes)


def test_paused_hook_injects_nothing_says_so_once_and_injects_again_when_resumed(
    cli: Callable[..., object], indexed: Settings, env: dict[str, str], workdir: Path
) -> None:
    code, before, _err = run_hook(prompt(workdir, "s-1"), env)
    assert code == 0 and before.startswith(HEADER)
    counted = usage_rows(indexed)
    assert counted  # the injected notes were counted

    res = cli("recall", "off", "--vault", str(indexed.vault))
    assert res.code == 0 and "recall paused until `agentmd recall on`" in res.out  # type: ignore[attr-defined]

    code, first, _err = run_hook(prompt(workdir, "s-1"), env)
    assert code == 0
    assert HEADER not in first and first.count("\n") == 1
    assert "recall is paused until `agentmd recall on`" in first and "no notes from the vault" in first
    code, second, _err = run_hook(prompt(workdir, "s-1"), env)
    assert code == 0 and second == ""  # said once per session
    code, other, _err = run_hook(prompt(workdir, "s-2"), env)
    assert "recall is paused" in other and HEADER not in other  # another session is told once too
    assert usage_rows(indexed) == counted  # nothing injected, nothing counted
    assert hook_log(indexed).count(" recall paused ") == 3

    res = cli("recall", "on", "--vault", str(indexed.vault))
    assert res.code == 0 and res.out.startswith("recall resumed")  # type: ignore[attr-defined]
    code, after, _err = run_hook(prompt(workdir, "s-1"), env)
    assert code == 0 and after == before


def test_pause_for_a_span_ends_by_itself(indexed: Settings, env: dict[str, str], workdir: Path) -> None:
    start = dt.datetime.now(dt.UTC).replace(microsecond=0)
    held = recall_pause.pause(indexed.state_dir, span=recall_pause.duration("2h"), now=start)
    assert held.until == start + dt.timedelta(hours=2)
    assert recall_pause.stored(indexed.state_dir, start + dt.timedelta(minutes=119)) == [held]
    assert recall_pause.stored(indexed.state_dir, start + dt.timedelta(minutes=121)) == []

    code, out, _err = run_hook(prompt(workdir, "s-span"), env)
    assert "recall is paused until " + held.until.strftime("%Y-%m-%d %H:%M UTC") in out
    # the same pause written as ended a minute ago: the hook injects at once
    recall_pause.pause(indexed.state_dir, span=dt.timedelta(minutes=1), now=start - dt.timedelta(minutes=2))
    code, out, _err = run_hook(prompt(workdir, "s-span"), env)
    assert code == 0 and out.startswith(HEADER)


def test_project_pause_covers_only_that_projects_sessions(
    cli: Callable[..., object], indexed: Settings, env: dict[str, str], workdir: Path, elsewhere: Path
) -> None:
    res = cli("recall", "off", "--project", "ledgerline", "--for", "90m", "--vault", str(indexed.vault))
    assert res.code == 0 and "recall for project ledgerline paused until " in res.out  # type: ignore[attr-defined]
    _code, out, _err = run_hook(prompt(workdir, "p-1"), env)
    assert "recall for project ledgerline is paused until" in out and HEADER not in out
    _code, out, _err = run_hook(prompt(elsewhere, "p-2", "postgres vacuum journal table"), env)
    assert out.startswith(HEADER)  # a session of another project keeps its recall

    res = cli("recall", "on", "--project", "tidewatch", "--vault", str(indexed.vault))
    assert "recall was not paused for project tidewatch; still in effect: recall paused for project ledgerline" in (
        res.out  # type: ignore[attr-defined]
    )
    res = cli("recall", "on", "--project", "ledgerline", "--vault", str(indexed.vault))
    assert res.out.startswith("recall resumed for project ledgerline")  # type: ignore[attr-defined]
    _code, out, _err = run_hook(prompt(workdir, "p-1"), env)
    assert out.startswith(HEADER)


def test_environment_variable_pauses_one_session(indexed: Settings, env: dict[str, str], workdir: Path) -> None:
    code, out, _err = run_hook(prompt(workdir, "e-1"), env | {recall_pause.ENV: "off"})
    assert code == 0 and out.startswith("agentmd: recall is off for this session (AGENTMD_RECALL=off)")
    code, out, _err = run_hook(prompt(workdir, "e-1"), env | {recall_pause.ENV: "off"})
    assert out == ""
    code, out, _err = run_hook(prompt(workdir, "e-2"), env)  # a session started without it
    assert out.startswith(HEADER)


def test_status_and_session_start_say_when_recall_is_paused(
    cli: Callable[..., object], indexed: Settings, env: dict[str, str], workdir: Path
) -> None:
    res = cli("status", "--json", "--vault", str(indexed.vault))
    data = json.loads(res.out)  # type: ignore[attr-defined]
    assert data["recall"] == {"paused": False, "pauses": [], "line": None}
    res = cli("recall", "off", "--for", "2h", "--vault", str(indexed.vault))
    until = recall_pause.stored(indexed.state_dir)[0].until
    assert until is not None
    shown = until.strftime("%Y-%m-%d %H:%M UTC")

    res = cli("status", "--vault", str(indexed.vault))
    assert f"  recall    recall paused until {shown}" in res.out  # type: ignore[attr-defined]
    assert "recall" not in "".join(line for line in res.out.splitlines() if line.startswith("yellow"))  # type: ignore[attr-defined]
    data = json.loads(cli("status", "--json", "--vault", str(indexed.vault)).out)  # type: ignore[attr-defined]
    assert data["recall"]["paused"] is True and data["recall"]["pauses"][0]["scope"] == "all"
    assert not any("recall" in y for y in data["yellow"])  # a deliberate pause is information, not a warning

    start = (FIXTURES / "session_start.json").read_text(encoding="utf-8").replace("__PROJECT__", str(workdir))
    code = "import sys; from agentmd.hooks.session_start import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run(
        [sys.executable, "-c", code, "--vault", str(indexed.vault), "--budget", "20"],
        input=start,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert f"\nagentmd recall paused until {shown}: no notes are added to prompts" in run.stdout

    cli("recall", "on", "--vault", str(indexed.vault))
    run = subprocess.run(
        [sys.executable, "-c", code, "--vault", str(indexed.vault), "--budget", "20"],
        input=start,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env | {recall_pause.ENV: "off"},
        timeout=60,
    )
    assert "agentmd recall paused for this session (AGENTMD_RECALL=off)" in run.stdout


def test_recall_command_keeps_its_queries_and_refuses_bad_pauses(cli: Callable[..., object], indexed: Settings) -> None:
    res = cli(
        "recall", "postgres", "journal", "vacuum", "--project", "ledgerline", "--preview", "--vault", str(indexed.vault)
    )
    assert res.code == 0 and res.out.startswith(HEADER)  # type: ignore[attr-defined]
    res = cli("recall", "off", "--for", "soon", "--vault", str(indexed.vault))
    assert res.code == 2 and "not a duration; write e.g. 30m, 2h or 1d" in res.err  # type: ignore[attr-defined]
    res = cli("recall", "postgres", "--for", "2h", "--vault", str(indexed.vault))
    assert res.code == 2 and "--for goes with `agentmd recall off`" in res.err  # type: ignore[attr-defined]
    assert recall_pause.stored(indexed.state_dir) == []

    cli("recall", "off", "--vault", str(indexed.vault))
    res = cli("recall", "postgres", "journal", "vacuum", "--project", "ledgerline", "--vault", str(indexed.vault))
    assert "-- recall is paused until `agentmd recall on`: the prompt hook injects none of this" in res.out  # type: ignore[attr-defined]


def test_durations() -> None:
    assert recall_pause.duration("30m") == dt.timedelta(minutes=30)
    assert recall_pause.duration("1.5h") == dt.timedelta(minutes=90)
    assert recall_pause.duration("2 days") == dt.timedelta(days=2)
    for bad in ("", "0h", "-2h", "2", "2w", "h"):
        with pytest.raises(recall_pause.PauseError):
            recall_pause.duration(bad)
