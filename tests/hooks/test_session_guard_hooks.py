"""The SessionStart and PreToolUse hooks fed Claude Code's own payloads: in-process through the cmd_*
functions (stdin injected) and as real subprocesses; session-start with a real daemon and from disk."""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, TESTS
from daemon_helpers import make_repo, wait_until

from agentmd.cli.hooks import add_hook_parsers
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.errors import UsageError
from agentmd.engine.settings import Settings, resolve
from agentmd.hooks.protocol import standalone_common
from agentmd.hooks.session_start import disk_status, session_context, summarize
from agentmd.hooks.worktree_guard import check_command, read_hook_input

FIXTURES = TESTS / "fixtures" / "hooks"


# --------------------------------------------------------------------------------------------------
# Helpers


def fixture(name: str, **subs: str) -> str:
    """A fixture payload with its placeholders (`__VAULT__`, `__PROJECT__`) filled in, as stdin text."""

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            for key, sub in subs.items():
                value = value.replace(f"__{key.upper()}__", sub)
            return value
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        return value

    return json.dumps(fill(json.loads((FIXTURES / name).read_text(encoding="utf-8"))))


def parser() -> argparse.ArgumentParser:
    """The `hook` group as the command line builds it, with this module's commands registered on it."""
    common = standalone_common()  # the options every command takes
    top = argparse.ArgumentParser(prog="agentmd")
    sub = top.add_subparsers(dest="command")
    hook = sub.add_parser("hook")
    add_hook_parsers(hook.add_subparsers(dest="hook_command"), common)
    return top


def run_hook(argv: list[str], stdin: str) -> tuple[int, str, str]:
    args = parser().parse_args(["hook", *argv])
    out, err = io.StringIO(), io.StringIO()
    code = args.func(args, out, err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


def run_module(module: str, argv: list[str], stdin: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = f"import sys; from {module} import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **env},
        timeout=60,
    )


@pytest.fixture
def layout(tmp_path: Path, env: dict[str, str]) -> dict[str, Path]:
    """A vault whose name has a space, a project beside it, and a symlink pointing into the vault."""
    vault = make_repo(tmp_path / "memory vault", {"README.md": "# Vault\n", "notes/a.md": "alpha note\n"})
    project = tmp_path / "proj"
    project.mkdir()
    (tmp_path / "into-vault").symlink_to(vault, target_is_directory=True)
    return {"vault": vault, "project": project, "home": Path(env["HOME"]), "tmp": tmp_path}


# --------------------------------------------------------------------------------------------------
# The guard's decision table

V, P, T = "{V}", "{P}", "{T}"
TABLE: list[tuple[str, bool]] = [
    # inside the vault: denied
    ('git worktree add "{V}/wt"', True),
    ('git worktree add "{V}/.claude/worktrees/task-1" -b task-1', True),
    ('git worktree add -b fix "{V}/wt with spaces" main', True),
    ('git worktree add -fb fix "{V}/wt" HEAD~1', True),
    ('GIT_TRACE=1 git --no-pager worktree add -f --detach "{V}/wt"', True),
    ('ls -la && git worktree add "{V}/wt" 2>&1 | tee log.txt', True),
    ('cd "{V}" && git worktree add x', True),
    ('cd "{V}" && git worktree add ../sibling-of-vault', True),
    ('cd "{V}/notes"; git worktree add /tmp/anywhere', True),
    ('git -C "{V}" worktree add "{T}/outside-wt"', True),
    ('git -C "{T}" -C "memory vault" worktree add wt', True),
    ('git --git-dir="{V}/.git" worktree add "{T}/outside-wt"', True),
    ("bash -c 'git worktree add \"{V}/wt\"'", True),
    ("sh -lc 'cd \"{V}\" && git worktree add wt'", True),
    ('cd ~/.. && git worktree add "memory vault/wt"', True),
    ('git worktree add "{T}/into-vault/wt"', True),  # a symlink into the vault
    ('git worktree add "$VAULT_WT"', True),  # expanded from the environment: inside
    ('git worktree add "$(mktemp -d)"', True),  # cannot be known: denied, asking for a literal path
    ('d=$(mktemp -d) && git worktree add "$d/wt"', True),
    ('WT="{V}/wt"; git worktree add "$WT"', True),  # the command's own assignment
    ('echo $(git worktree add "{V}/wt")', True),  # inside a command substitution
    ('cd "{V}"\ngit worktree add ../wt', True),  # a newline separates commands
    ('cd "$UNSET_DIR_XYZ" && git worktree add ../wt', True),
    ('git worktree move old-wt "{V}/moved"', True),
    ("sudo -u me env -C '{V}' git worktree add wt", True),
    # outside the vault, or not a worktree at all: allowed
    ("git worktree add ../proj-feature feature", False),
    ('git worktree add "{T}/elsewhere/wt" -b topic', False),
    ("git worktree add ~/wt", False),
    ('git worktree add "$OUTSIDE_WT"', False),
    ('export WT="{T}/out" && git worktree add "$WT"', False),
    ('ls # then git worktree add "{V}/x"', False),  # a comment
    ('git -C "{V}" status && git worktree add ../wt', False),  # -C does not outlive its command
    ('(cd "{V}" && git log -1); git worktree add ../wt', False),  # the subshell's cd ends with it
    ('echo "git worktree add {V}/x"', False),  # a quoted string is not a command
    ("git commit -m 'docs: never git worktree add \"{V}/x\"'", False),
    ('git -C "{V}" worktree list', False),
    ('git -C "{V}" worktree remove "{V}/.claude/worktrees/x"', False),  # removing one is the cure
    ('git worktree add --lock --reason "{V}" ../wt', False),  # the reason's value is not the path
    ("git worktree add 'unbalanced", False),  # the shell would refuse it too
    ("python -m pytest -q && ruff check .", False),
    ("grep -rn 'worktree add' docs/ | head", False),
    ("git worktree add", False),  # no path: git refuses it
]


@pytest.mark.parametrize(("command", "deny"), TABLE, ids=[c for c, _ in TABLE])
def test_guard_table(command: str, deny: bool, layout: dict[str, Path]) -> None:
    vault, tmp = layout["vault"], layout["tmp"]
    text = command.replace(V, str(vault)).replace(T, str(tmp))
    environ = {"HOME": str(layout["home"]), "VAULT_WT": f"{vault}/wt", "OUTSIDE_WT": f"{tmp}/out"}
    verdict = check_command(text, cwd=layout["project"], vault=vault, env=environ)
    assert verdict.deny is deny, verdict.reason
    if deny:
        assert str(vault) in verdict.reason and verdict.reason.startswith("agentmd worktree guard:")
        out = verdict.hook_output()
        assert out == {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": verdict.reason,
            }
        }
    else:
        assert verdict.hook_output() is None


def test_table_is_large_enough() -> None:
    assert len(TABLE) >= 20
    assert sum(d for _c, d in TABLE) >= 10 and sum(not d for _c, d in TABLE) >= 10


def test_undeterminable_target_asks_for_a_literal_path(layout: dict[str, Path]) -> None:
    verdict = check_command('git worktree add "$(mktemp -d)"', cwd=layout["project"], vault=layout["vault"], env={})
    assert verdict.deny and "literal absolute paths" in verdict.reason


# --------------------------------------------------------------------------------------------------
# The guard as a hook: fixtures through the cmd function and through a subprocess


@pytest.mark.parametrize(
    ("name", "deny"),
    [
        ("pretooluse_worktree_in_vault.json", True),
        ("pretooluse_cd_vault.json", True),
        ("pretooluse_worktree_outside.json", False),
        ("pretooluse_echo_quoted.json", False),
        ("pretooluse_unrelated.json", False),
        ("pretooluse_edit.json", False),
    ],
)
def test_guard_cmd_with_fixture(name: str, deny: bool, layout: dict[str, Path]) -> None:
    stdin = fixture(name, vault=str(layout["vault"]), project=str(layout["project"]))
    code, out, err = run_hook(["worktree-guard", "--vault", str(layout["vault"])], stdin)
    assert code == 0 and err == ""
    if deny:
        decision = json.loads(out)
        assert set(decision) == {"hookSpecificOutput"}
        spec = decision["hookSpecificOutput"]
        assert spec["hookEventName"] == "PreToolUse" and spec["permissionDecision"] == "deny"
        assert str(layout["vault"]) in spec["permissionDecisionReason"]
    else:
        assert out == ""


def test_guard_vault_from_environment(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTMD_VAULT", str(layout["vault"]))
    stdin = fixture("pretooluse_worktree_in_vault.json", vault=str(layout["vault"]), project=str(layout["project"]))
    code, out, _err = run_hook(["worktree-guard"], stdin)
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_guard_without_a_vault_allows_everything(layout: dict[str, Path]) -> None:
    stdin = fixture("pretooluse_worktree_in_vault.json", vault=str(layout["vault"]), project=str(layout["project"]))
    assert run_hook(["worktree-guard"], stdin) == (0, "", "")


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"tool_input": "git worktree add x"}'])
def test_guard_odd_input_is_let_through(stdin: str, layout: dict[str, Path]) -> None:
    assert run_hook(["worktree-guard", "--vault", str(layout["vault"])], stdin) == (0, "", "")


def test_guard_missing_cwd_uses_the_process_directory(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    payload = json.loads(fixture("pretooluse_cd_vault.json", vault=str(layout["vault"]), project="x"))
    del payload["cwd"]
    payload["tool_input"]["command"] = "git worktree add wt"
    monkeypatch.chdir(layout["vault"])
    code, out, _err = run_hook(["worktree-guard", "--vault", str(layout["vault"])], json.dumps(payload))
    assert code == 0 and "deny" in out


def test_guard_subprocess(layout: dict[str, Path], env: dict[str, str]) -> None:
    argv = ["--vault", str(layout["vault"])]
    subs = {"vault": str(layout["vault"]), "project": str(layout["project"])}
    denied = run_module("agentmd.hooks.worktree_guard", argv, fixture("pretooluse_worktree_in_vault.json", **subs), env)
    assert denied.returncode == 0, denied.stderr
    spec = json.loads(denied.stdout)["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny" and spec["hookEventName"] == "PreToolUse"
    allowed = run_module("agentmd.hooks.worktree_guard", argv, fixture("pretooluse_unrelated.json", **subs), env)
    assert (allowed.returncode, allowed.stdout) == (0, "")


def _cli_has(*words: str) -> bool:
    from agentmd.cli import build_parser

    try:
        build_parser().parse_args([*words, "--help"])
    except (UsageError, SystemExit) as exc:
        return isinstance(exc, SystemExit) and not exc.code
    return True


def test_guard_through_the_agentmd_cli(layout: dict[str, Path], env: dict[str, str]) -> None:
    assert _cli_has("hook", "worktree-guard"), "the command line must register `agentmd hook worktree-guard`"
    subs = {"vault": str(layout["vault"]), "project": str(layout["project"])}
    run = subprocess.run(
        [sys.executable, "-m", "agentmd", "hook", "worktree-guard", "--vault", str(layout["vault"])],
        input=fixture("pretooluse_worktree_in_vault.json", **subs),
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **env},
        timeout=60,
    )
    assert run.returncode == 0 and json.loads(run.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_read_hook_input_never_blocks_on_a_silent_pipe() -> None:
    r, w = os.pipe()
    stream = os.fdopen(r, "r")
    start = time.monotonic()
    try:
        assert read_hook_input(stream, timeout=0.2) == {}
        assert time.monotonic() - start < 2
    finally:
        os.close(w)  # the reader thread sees the end of the pipe and lets go of the stream
        wait_until(lambda: not any(t.name == "agentmd-hook-stdin" for t in threading.enumerate()), 5, "reader")
        stream.close()


# --------------------------------------------------------------------------------------------------
# session-start


@pytest.fixture
def settings(layout: dict[str, Path]) -> Settings:
    return resolve(vault=str(layout["vault"]))


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    d = Daemon(settings, port=0, commit_debounce=0.2, probe_interval=0)
    d.start()
    wait_until(lambda: not d.health()["index_stale"], what="first pass")
    wait_until(lambda: "queue" in d.status(), what="first status")
    yield d
    d.stop()


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n")


def test_session_start_with_the_daemon(daemon: Daemon, settings: Settings, layout: dict[str, Path]) -> None:
    stdin = fixture("session_start.json", project=str(layout["project"]))
    code, out, err = run_hook(["session-start", "--vault", str(settings.vault), "--budget", "5"], stdin)
    assert code == 0, err
    lines = _lines(out)
    assert 1 <= len(lines) <= 2
    assert lines[0].startswith(f"agentmd memory: {daemon.status()['color'].upper()}")
    assert "from the daemon" in lines[1] and "queue 0 unfiled" in lines[1] and "probe never run" in lines[1]

    code, out, _err = run_hook(["session-start", "--vault", str(settings.vault), "--budget", "5", "--json"], stdin)
    decoded = json.loads(out)
    assert code == 0 and set(decoded) == {"hookSpecificOutput"}
    spec = decoded["hookSpecificOutput"]
    assert spec["hookEventName"] == "SessionStart" and spec["additionalContext"].startswith("agentmd memory: ")


def test_session_start_from_disk_agrees_with_agentmd_status(cli, settings: Settings, layout: dict[str, Path]) -> None:
    vault = str(settings.vault)
    assert cli("reindex", "--vault", vault).code == 0
    status = cli("status", "--vault", vault, "--json").json()
    code, out, err = run_hook(["session-start", "--vault", vault, "--budget", "5"], "{}")
    assert code == 0, err
    lines = _lines(out)
    assert lines[0].startswith(f"agentmd memory: {status['color'].upper()}")
    assert "daemon-not-running" in lines[0] and "daemon not running, read from disk" in lines[1]
    assert disk_status(settings)["red"] == status["red"]


def test_session_start_from_disk_names_notes_not_read_whole(cli, settings: Settings, layout: dict[str, Path]) -> None:
    vault = str(settings.vault)
    (settings.vault / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    assert cli("reindex", "--vault", vault, "--no-dense").code == 0
    status = cli("status", "--vault", vault, "--json").json()
    code, out, err = run_hook(["session-start", "--vault", vault, "--budget", "5"], "{}")
    assert code == 0, err
    assert "notes-unreadable" in _lines(out)[0]
    assert disk_status(settings)["yellow"] == status["yellow"]


def test_session_start_names_red_items(settings: Settings, layout: dict[str, Path]) -> None:
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    at = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=3)).isoformat(timespec="seconds")
    probe = {"ok": False, "at": at, "round_trip_ms": None, "error": "search did not find the probe note in 5.0 s"}
    (settings.state_dir / "probe.json").write_text(json.dumps(probe), encoding="utf-8")
    code, out, _err = run_hook(["session-start", "--vault", str(settings.vault), "--budget", "5"], "{}")
    first, second = _lines(out)
    assert code == 0
    assert first.startswith("agentmd memory: RED — ") and "probe-failed: search did not find" in first
    assert "last probe FAILED 3 h ago" in second


def test_session_start_disk_path_writes_nothing(settings: Settings) -> None:
    code, out, _err = run_hook(["session-start", "--vault", str(settings.vault), "--budget", "5"], "{}")
    assert code == 0 and "index-never-built" in out
    assert not settings.cache_dir.exists()
    assert not (settings.state_dir / "queue-baseline.json").exists()


def test_session_start_never_fails(tmp_path: Path, env: dict[str, str]) -> None:
    code, out, _err = run_hook(["session-start", "--vault", str(tmp_path / "gone"), "--budget", "5"], "garbage")
    assert code == 0 and _lines(out) == [out.strip()] and out.startswith("agentmd memory: status unavailable")
    code, out, _err = run_hook(["session-start"], "{}")  # no vault configured at all
    assert code == 0 and out.startswith("agentmd memory: status unavailable")


def test_session_start_keeps_its_time_budget(settings: Settings) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        argv = ["session-start", "--vault", str(settings.vault), "--port", str(port)]
        start = time.monotonic()
        code, out, err = run_hook([*argv, "--budget", "0.05"], "{}")
        assert code == 0 and out.startswith("agentmd memory: status not available within 0.05 s")
        said = [line for line in err.splitlines() if line.startswith("agentmd hook: ")]
        assert len(said) == 1 and " session-start timeout " in said[0]  # a give-up is said, and logged
        assert time.monotonic() - start < 1.0
        start = time.monotonic()
        code, out, _err = run_hook([*argv, "--budget", "1"], "{}")  # the daemon times out, the disk answers
        assert code == 0 and out.startswith("agentmd memory: ")
        assert time.monotonic() - start < 1.5


def test_session_start_ignores_another_vaults_daemon(daemon: Daemon, tmp_path: Path, env: dict[str, str]) -> None:
    other = make_repo(tmp_path / "other vault")
    settings = resolve(vault=str(other))
    code, out, _err = run_hook(
        ["session-start", "--vault", str(other), "--port", str(daemon.port), "--budget", "5"], ""
    )
    assert code == 0 and "read from disk" in out and str(settings.vault) in out


def test_session_start_subprocess(settings: Settings, layout: dict[str, Path], env: dict[str, str]) -> None:
    stdin = fixture("session_start.json", project=str(layout["project"]))
    run = run_module("agentmd.hooks.session_start", ["--vault", str(settings.vault), "--budget", "20"], stdin, env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("agentmd memory: RED — index-never-built") and "read from disk" in run.stdout
    quick = run_module("agentmd.hooks.session_start", ["--vault", str(settings.vault)], stdin, env)  # the 1 s default
    assert quick.returncode == 0 and quick.stdout.startswith("agentmd memory: ")


def test_session_context_direct_call(settings: Settings) -> None:
    args = argparse.Namespace(vault=str(settings.vault), index=None, config=None, port=None)
    assert session_context(args, budget=5).startswith("agentmd memory: RED")


def test_summarize_shapes() -> None:
    status = {
        "vault": "/v",
        "color": "red",
        "red": [f"item-{i}: detail" for i in range(5)],
        "yellow": [],
        "queue": {"count": 3, "oldest_age_days": 1.5},
        "probe": {"last": {"ok": True, "round_trip_ms": 140}, "age_s": 7300},
        "git": {"worktrees_inside_vault": [".claude/worktrees/x"]},
    }
    first, second = summarize(status, from_disk=False).split("\n")
    assert first.startswith("agentmd memory: RED — item-0: detail; item-1") and "+2 more" in first
    assert second == (
        "queue 3 unfiled, oldest 1.5 days · last probe ok 2 h ago (140 ms) · git worktrees inside the vault: "
        ".claude/worktrees/x · from the daemon · vault /v"
    )
    # a backlog from before the queue's baseline is listed by `agentmd queue` too: the line counts it
    backlog = {**status, "queue": {"count": 2, "inherited": 25, "total": 27, "oldest_age_days": 0.5}}
    assert summarize(backlog, from_disk=False).split("\n")[1].startswith(
        "queue 27 awaiting review (2 since the baseline), oldest 0.5 days"
    )
    building = {"vault": "/v", "color": "yellow", "red": [], "yellow": ["index-building: first pass"]}
    assert summarize(building, from_disk=False).split("\n")[0] == "agentmd memory: YELLOW (index-building)"


def test_installed_commands_quote_paths_with_spaces(layout: dict[str, Path]) -> None:
    from agentmd.hooks.install import hook_commands

    commands = hook_commands(["/opt/agent md/bin/agentmd"], layout["vault"])
    words = shlex.split(commands["worktree-guard"])
    assert words == ["/opt/agent md/bin/agentmd", "hook", "worktree-guard", "--vault", str(layout["vault"])]


def test_session_start_from_disk_cuts_the_queue_at_the_config_line_and_records_nothing(
    cli, settings: Settings, layout: dict[str, Path]
) -> None:
    """The owner's `queue_baseline` in the config file reaches the session-start line too, and the hook, which
    only reads, never records a baseline of its own."""

    vault = str(settings.vault)
    (settings.vault / "notes/waiting.md").write_text(
        "---\ntitle: Waiting\nstatus: unfiled\ncaptured: 2026-01-02T00:00:00+00:00\n---\nbody\n", encoding="utf-8"
    )
    assert cli("reindex", "--vault", vault, "--no-dense").code == 0
    (settings.state_dir / "queue-baseline.json").unlink(missing_ok=True)
    moved = settings._replace(queue_baseline=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    now = dt.datetime(2026, 1, 20, tzinfo=dt.UTC)
    queue = disk_status(moved, now)["queue"]
    assert queue["count"] == 1 and queue["inherited"] == 0 and "queue-age" in " ".join(queue["red"])
    assert not (settings.state_dir / "queue-baseline.json").exists()
    assert disk_status(settings, now)["queue"]["count"] == 0  # no line and none recorded: all inherited
