"""`agentmd hooks install|uninstall`: merge into a Claude Code settings file without touching the rest,
idempotently, with a backup and a diff; take out exactly what was put in; refuse a file that is not JSON."""

from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from daemon_helpers import make_repo

from agentmd.cli.hooks import add_hooks_install_parsers
from agentmd.engine.errors import AgentmdError, UsageError
from agentmd.hooks.install import (
    BACKUP_INFIX,
    HOOKS,
    Layout,
    SettingsRefused,
    agentmd_argv,
    agentmd_hook_name,
    apply,
    hook_commands,
    plan_install,
    plan_uninstall,
)
from agentmd.hooks.protocol import standalone_common

EXE = ["/opt/agentmd/bin/agentmd"]

USER_SETTINGS: dict[str, Any] = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(git status:*)", "Read(~/notes/**)"], "deny": ["Read(./.env)"]},
    "env": {"GREETING": "grüß dich"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/lint-bash", "timeout": 5}]}
        ],
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "ruff format ."}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date >> ~/prompts.log"}]}],
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENTMD_VAULT", raising=False)
    (tmp_path / "home").mkdir()
    return make_repo(tmp_path / "vault")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    return root


def settings_file(project: Path) -> Path:
    """Where `--project` installs: the project's settings of one person, not the team's shared file."""
    return project / ".claude" / "settings.local.json"


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + BACKUP_INFIX + "*"))


def commands(vault: Path) -> dict[str, str]:
    return hook_commands(EXE, vault)


def install(path: Path, vault: Path) -> Path | None:
    return apply(plan_install(path, commands(vault)))


def uninstall(path: Path) -> Path | None:
    return apply(plan_uninstall(path))


def ours(data: dict[str, Any]) -> dict[str, list[str]]:
    """Our commands found under each event."""
    found: dict[str, list[str]] = {}
    for event, groups in data.get("hooks", {}).items():
        for g in groups:
            for h in g.get("hooks", []):
                if agentmd_hook_name(h.get("command")):
                    found.setdefault(event, []).append(h["command"])
    return found


def parser() -> argparse.ArgumentParser:
    common = standalone_common()  # the options every command takes
    top = argparse.ArgumentParser(prog="agentmd")
    add_hooks_install_parsers(top.add_subparsers(dest="command"), common)
    return top


def run(*argv: str) -> tuple[int, str]:
    args = parser().parse_args(list(argv))
    out, err = io.StringIO(), io.StringIO()
    code = args.func(args, out, err)
    return code, out.getvalue()


# --------------------------------------------------------------------------------------------------
# Merging


def test_install_keeps_everything_else(project: Path, vault: Path) -> None:
    path = settings_file(project)
    path.write_text(json.dumps(USER_SETTINGS, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    install(path, vault)
    data = json.loads(path.read_text(encoding="utf-8"))
    for key in ("$schema", "model", "permissions", "env", "statusLine"):
        assert data[key] == USER_SETTINGS[key]
    assert list(data) == list(USER_SETTINGS)  # key order kept
    hooks = data["hooks"]
    assert hooks["PostToolUse"] == USER_SETTINGS["hooks"]["PostToolUse"]
    assert hooks["PreToolUse"][0] == USER_SETTINGS["hooks"]["PreToolUse"][0]  # the user's own Bash hook first
    assert hooks["PreToolUse"][1] == {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": commands(vault)["worktree-guard"]}],
    }
    assert hooks["PreToolUse"][2] == {
        "matcher": "Read|Grep|Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*",
        "hooks": [{"type": "command", "command": commands(vault)["file-guard"]}],
    }
    assert hooks["UserPromptSubmit"][0] == USER_SETTINGS["hooks"]["UserPromptSubmit"][0]
    assert hooks["UserPromptSubmit"][1] == {"hooks": [{"type": "command", "command": commands(vault)["recall"]}]}
    assert hooks["SessionStart"] == [{"hooks": [{"type": "command", "command": commands(vault)["session-start"]}]}]
    expected: dict[str, list[str]] = {}
    for event, _m, name in HOOKS:
        expected.setdefault(event, []).append(commands(vault)[name])
    assert ours(data) == expected


def test_commands_are_absolute_and_name_the_vault(vault: Path) -> None:
    argv = agentmd_argv()
    assert os.path.isabs(argv[0])
    for event, _matcher, name in HOOKS:
        words = shlex.split(hook_commands(argv, vault)[name])
        assert os.path.isabs(words[0]), event
        assert words[-2:] == ["--vault", str(vault)] and os.path.isabs(words[-1])
        assert agentmd_hook_name(hook_commands(argv, vault)[name]) == name


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("/opt/agentmd/bin/agentmd hook recall --vault /v", "recall"),
        ("'/Users/me/my tools/agentmd' hook session-start --vault '/v w'", "session-start"),
        ("/usr/bin/python3 -m engine.cli hook worktree-guard --vault /v", "worktree-guard"),
        ("/usr/bin/python3 -m agentmd hook worktree-guard --vault /v", "worktree-guard"),
        ("/usr/bin/python3 -m agentmd.cli hook recall --vault /v", "recall"),
        ("/venv/bin/python -m agentmd.hooks.entry recall --vault /v", "recall"),
        ("agentmd hook recall", "recall"),
        ("/home/me/.local/bin/agentmd-hook recall --vault /v", "recall"),
        ("/venv/bin/python -m hooks.entry worktree-guard --vault /v", "worktree-guard"),
        ("/venv/bin/python -m hooks.other recall", None),
        ("/usr/local/bin/agentmd-extra hook recall", None),
        ("echo agentmd hook recall", None),
        ("agentmd search hook recall", None),
        ("/usr/local/bin/lint-bash", None),
        ("agentmd hook 'unbalanced", None),
        (None, None),
    ],
)
def test_recognising_our_entries(command: Any, name: str | None) -> None:
    assert agentmd_hook_name(command) == name


def test_repeat_install_is_byte_identical(project: Path, vault: Path) -> None:
    path = settings_file(project)
    path.write_text(json.dumps(USER_SETTINGS, indent=2), encoding="utf-8")
    first_backup = install(path, vault)
    once = path.read_bytes()
    assert first_backup is not None
    assert install(path, vault) is None
    assert path.read_bytes() == once
    assert backups(path) == [first_backup]
    code, out = run("hooks", "install", "--vault", str(vault), "--project", str(project))  # another agentmd path
    assert code == 0 and "installed into" in out
    twice = path.read_bytes()
    code, out = run("hooks", "install", "--vault", str(vault), "--project", str(project))
    assert code == 0 and "already installed" in out and "nothing changed" in out
    assert path.read_bytes() == twice and len(backups(path)) == 2


def test_backup_holds_the_old_bytes(project: Path, vault: Path) -> None:
    path = settings_file(project)
    original = '{\n    "model": "opus"\n}'
    path.write_text(original, encoding="utf-8")
    os.chmod(path, 0o600)
    backup = install(path, vault)
    assert backup is not None and backup.read_text(encoding="utf-8") == original
    assert backups(path) == [backup]
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.read_text(encoding="utf-8").startswith('{\n    "model": "opus",\n    "hooks": {\n        "')


def test_dry_run_changes_nothing_and_prints_a_diff(project: Path, vault: Path) -> None:
    path = settings_file(project)
    path.write_text(json.dumps(USER_SETTINGS, indent=2), encoding="utf-8")
    before = path.read_bytes()
    code, out = run("hooks", "install", "--vault", str(vault), "--project", str(project), "--dry-run")
    assert code == 0
    assert path.read_bytes() == before and backups(path) == []
    assert f"--- {path} (before)" in out and f"+++ {path} (after)" in out
    assert "+" in out and "hook worktree-guard" in out and "dry run" in out

    code, out = run("hooks", "install", "--vault", str(vault), "--project", str(project), "--dry-run", "--json")
    report = json.loads(out)
    assert report["dry_run"] is True and report["changed"] is True and report["backup"] is None
    assert report["settings"] == str(path) and "hook session-start" in report["diff"]
    assert path.read_bytes() == before


def test_install_and_uninstall_through_the_commands(project: Path, vault: Path) -> None:
    path = settings_file(project)
    path.write_text(json.dumps(USER_SETTINGS, indent=2), encoding="utf-8")
    code, out = run("hooks", "install", "--vault", str(vault), "--project", str(project))
    assert code == 0 and "installed into" in out and "previous version kept as" in out
    assert set(ours(json.loads(path.read_text()))) == {"UserPromptSubmit", "SessionStart", "PreToolUse"}
    code, out = run("hooks", "uninstall", "--project", str(project), "--json")
    report = json.loads(out)
    assert code == 0 and report["changed"] is True and report["backup"]
    assert json.loads(path.read_text()) == USER_SETTINGS


# --------------------------------------------------------------------------------------------------
# Uninstall gives back the original


def test_uninstall_restores_bytes_of_a_json_dumps_indent_2_file(project: Path, vault: Path) -> None:
    path = settings_file(project)
    original = json.dumps(USER_SETTINGS, indent=2)  # ASCII escapes, no final newline
    path.write_text(original, encoding="utf-8")
    install(path, vault)
    assert path.read_text(encoding="utf-8") != original
    uninstall(path)
    assert path.read_text(encoding="utf-8") == original


def test_uninstall_restores_bytes_of_a_claude_code_style_file(project: Path, vault: Path) -> None:
    path = settings_file(project)
    original = json.dumps(USER_SETTINGS, indent=2, ensure_ascii=False) + "\n"  # JSON.stringify(x, null, 2) style
    path.write_text(original, encoding="utf-8")
    install(path, vault)
    uninstall(path)
    assert path.read_text(encoding="utf-8") == original


def test_uninstall_restores_the_json_of_a_hand_formatted_file(project: Path, vault: Path) -> None:
    path = settings_file(project)
    original = (
        '{ "model": "opus",\n'
        '  "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "x" } ] } ] },\n'
        '  "permissions": { "allow": [ "Read" ] } }\n'
    )
    path.write_bytes(original.replace("\n", "\r\n").encode())
    install(path, vault)
    assert b"\r\n" in path.read_bytes()
    uninstall(path)
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(original)


def test_uninstall_removes_only_ours(project: Path, vault: Path) -> None:
    path = settings_file(project)
    install(path, vault)
    data = json.loads(path.read_text())
    # the user adds a hook of their own next to ours, in our group
    data["hooks"]["SessionStart"][0]["hooks"].append({"type": "command", "command": "echo hello"})
    path.write_text(json.dumps(data, indent=2) + "\n")
    uninstall(path)
    assert json.loads(path.read_text()) == {
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hello"}]}]}
    }


def test_uninstall_without_our_hooks_writes_nothing(project: Path) -> None:
    path = settings_file(project)
    path.write_text(json.dumps(USER_SETTINGS, indent=2))
    before = path.read_bytes()
    assert uninstall(path) is None
    assert path.read_bytes() == before and backups(path) == []
    code, out = run("hooks", "uninstall", "--project", str(project))
    assert code == 0 and "not installed" in out
    missing = project / "nowhere" / "settings.json"
    assert uninstall(missing) is None and not missing.exists()


def test_project_hooks_go_into_the_local_settings_and_leave_the_shared_file_alone(project: Path, vault: Path) -> None:
    """The hooks' commands name this machine's paths: a project's shared `.claude/settings.json` (checked in for
    the team) must not hold them. An earlier install that put them there is named, and uninstall takes them out
    of both files."""
    shared = project / ".claude" / "settings.json"
    shared.write_text(json.dumps(USER_SETTINGS, indent=2), encoding="utf-8")
    before = shared.read_bytes()
    code, out = run("hooks", "install", "--vault", str(vault), "--project", str(project))
    assert code == 0 and str(settings_file(project)) in out
    assert shared.read_bytes() == before and ours(json.loads(settings_file(project).read_text()))
    install(shared, vault)  # as an earlier version installed
    code, out = run("hooks", "uninstall", "--project", str(project))
    assert code == 0 and str(shared) in out and str(settings_file(project)) in out
    assert json.loads(shared.read_text()) == USER_SETTINGS and not settings_file(project).exists()


def test_install_creates_a_missing_file_and_uninstall_removes_it(tmp_path: Path, vault: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    path = root / ".claude" / "settings.local.json"
    code, _out = run("hooks", "install", "--vault", str(vault), "--project", str(root))
    assert code == 0 and path.exists() and backups(path) == []
    assert path.read_text().endswith("}\n") and '\n  "hooks": {\n' in path.read_text()
    uninstall(path)
    assert not path.exists() and not path.parent.exists()  # as before install: nothing left in the project


# --------------------------------------------------------------------------------------------------
# Refusals and edge cases


@pytest.mark.parametrize(
    "text",
    ['{"hooks": {', "", "   \n", "[]", '"settings"', '{"hooks": []}', '{"hooks": {"PreToolUse": {"matcher": "Bash"}}}'],
)
def test_a_file_that_is_not_a_settings_object_is_refused(text: str, project: Path, vault: Path) -> None:
    path = settings_file(project)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsRefused, match=r"nothing was changed"):
        plan_install(path, commands(vault))
    with pytest.raises(SettingsRefused):
        run("hooks", "install", "--vault", str(vault), "--project", str(project))
    with pytest.raises(SettingsRefused):
        run("hooks", "uninstall", "--project", str(project))
    assert path.read_text(encoding="utf-8") == text and backups(path) == []


def test_invalid_json_message_says_so(project: Path, vault: Path) -> None:
    path = settings_file(project)
    path.write_text('{"model": "opus",}', encoding="utf-8")
    with pytest.raises(SettingsRefused) as info:
        plan_install(path, commands(vault))
    assert "is not valid JSON" in str(info.value) and isinstance(info.value, AgentmdError)


def test_reinstall_with_another_vault_updates_in_place(project: Path, vault: Path, tmp_path: Path) -> None:
    path = settings_file(project)
    path.write_text(json.dumps(USER_SETTINGS, indent=2))
    install(path, vault)
    other = make_repo(tmp_path / "other-vault")
    apply(plan_install(path, hook_commands(["/elsewhere/bin/agentmd"], other)))
    data = json.loads(path.read_text())
    found = ours(data)
    assert all(str(other) in cmd and str(vault) not in cmd for cmds in found.values() for cmd in cmds)
    assert sorted(len(cmds) for cmds in found.values()) == [1, 1, 2] and len(found) == 3
    assert data["hooks"]["PreToolUse"][0] == USER_SETTINGS["hooks"]["PreToolUse"][0]


def test_duplicates_collapse_to_one(project: Path, vault: Path) -> None:
    path = settings_file(project)
    dup = {"hooks": [{"type": "command", "command": "/old/agentmd hook session-start --vault /old"}]}
    path.write_text(json.dumps({"hooks": {"SessionStart": [dup, json.loads(json.dumps(dup))]}}, indent=2))
    install(path, vault)
    data = json.loads(path.read_text())
    assert data["hooks"]["SessionStart"] == [
        {"hooks": [{"type": "command", "command": commands(vault)["session-start"]}]}
    ]


def test_a_symlinked_settings_file_stays_a_symlink(tmp_path: Path, project: Path, vault: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_text(json.dumps({"model": "opus"}, indent=2))
    link = settings_file(project)
    link.symlink_to(real)
    backup = install(link, vault)
    assert link.is_symlink() and os.path.realpath(link) == str(real)
    assert ours(json.loads(real.read_text())) and backup is not None and backup.parent == dotfiles


def test_user_and_project_locations(tmp_path: Path, vault: Path) -> None:
    code, out = run("hooks", "install", "--vault", str(vault), "--user", "--dry-run")
    assert code == 0 and str(tmp_path / "home" / ".claude" / "settings.json") in out
    code, _out = run("hooks", "install", "--vault", str(vault))  # --user is the default
    assert code == 0 and (tmp_path / "home" / ".claude" / "settings.json").exists()
    with pytest.raises(UsageError, match="not a directory"):
        run("hooks", "install", "--vault", str(vault), "--project", str(tmp_path / "missing"))
    with pytest.raises(SystemExit):
        parser().parse_args(["hooks", "install", "--user", "--project", str(tmp_path)])


def test_install_needs_a_vault(project: Path, vault: Path) -> None:
    with pytest.raises(AgentmdError, match="no vault given"):
        run("hooks", "install", "--project", str(project))
    assert not settings_file(project).exists()


def test_layout_detection() -> None:
    assert Layout.of(json.dumps({"a": [1]}, indent=4)).indent == 4
    assert Layout.of('{\n\t"a": 1\n}\n').indent == "\t"
    compact = Layout.of('{"a":1,"b":[1,2]}')
    assert compact.indent is None and compact.dumps({"a": 1}) == '{"a":1}'
    assert Layout.of('{"a": 1, "b": 2}').dumps({"a": 1, "b": 2}) == '{"a": 1, "b": 2}'
    assert Layout.of(None).dumps({"é": 1}) == '{\n  "é": 1\n}\n'


def test_installed_guard_runs_from_its_command(project: Path, vault: Path, tmp_path: Path) -> None:
    """The command written into the settings file, run by a shell the way Claude Code runs it."""
    path = settings_file(project)
    apply(plan_install(path, hook_commands([sys.executable, "-m", "agentmd"], vault)))
    command = json.loads(path.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    payload = {
        "session_id": "s",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": f"git worktree add {shlex.quote(str(vault / 'wt'))}"},
    }
    run_ = subprocess.run(
        ["bash", "-c", command], input=json.dumps(payload), capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert run_.returncode == 0, run_.stderr
    assert json.loads(run_.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


# --------------------------------------------------------------------------------------------------
# The file guard beside the worktree guard


def test_install_over_an_older_file_guard_takes_the_new_matcher_for_its_own_group(project: Path, vault: Path) -> None:
    """An earlier install's file guard, alone in its group, takes this version's matcher (other MCP servers' tools);
    a group the person shares with a hook of their own keeps the person's matcher."""
    path = settings_file(project)
    mine = {"type": "command", "command": "/usr/local/bin/my-audit"}
    older = {"hooks": {"PreToolUse": [
        {"matcher": "Read|Grep|Write|Edit|MultiEdit|NotebookEdit|Bash",
         "hooks": [{"type": "command", "command": commands(vault)["file-guard"]}]},
        {"matcher": "Bash", "hooks": [mine, {"type": "command", "command": commands(vault)["worktree-guard"]}]},
    ]}}  # fmt: skip
    path.write_text(json.dumps(older, indent=2) + "\n", encoding="utf-8")
    install(path, vault)
    pre = json.loads(path.read_text(encoding="utf-8"))["hooks"]["PreToolUse"]
    assert pre[0]["matcher"] == "Read|Grep|Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*"
    assert pre[1]["matcher"] == "Bash" and pre[1]["hooks"][0] == mine


def test_install_over_an_older_install_adds_the_file_guard_once(project: Path, vault: Path) -> None:
    """A settings file holding the three hooks of an earlier agentmd gets the file guard added, and only once."""
    path = settings_file(project)
    older: dict[str, list[dict[str, Any]]] = {}
    for event, matcher, name in HOOKS[:3]:
        entry = {"type": "command", "command": commands(vault)[name]}
        older[event] = [{"matcher": matcher, "hooks": [entry]} if matcher else {"hooks": [entry]}]
    path.write_text(json.dumps({"hooks": older}, indent=2) + "\n", encoding="utf-8")
    added = [line for line in plan_install(path, commands(vault)).diff().splitlines() if line.startswith("+ ")]
    assert any("hook file-guard" in line for line in added) and not any("worktree-guard" in x for x in added)
    install(path, vault)
    once = path.read_bytes()
    pre = json.loads(once)["hooks"]["PreToolUse"]
    assert [g["matcher"] for g in pre] == ["Bash", "Read|Grep|Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*"]
    assert install(path, vault) is None and path.read_bytes() == once
    uninstall(path)
    assert not path.exists()  # agentmd's hooks were all it held


def test_uninstall_takes_out_both_guards_and_keeps_the_users_bash_hook(project: Path, vault: Path) -> None:
    path = settings_file(project)
    path.write_text(json.dumps(USER_SETTINGS, indent=2), encoding="utf-8")
    install(path, vault)
    names = [agentmd_hook_name(g["hooks"][0]["command"]) for g in json.loads(path.read_text())["hooks"]["PreToolUse"]]
    assert names == [None, "worktree-guard", "file-guard"]
    code, _out = run("hooks", "uninstall", "--project", str(project), "--dry-run")
    assert code == 0 and ours(json.loads(path.read_text()))["PreToolUse"]  # a dry run writes nothing
    uninstall(path)
    assert json.loads(path.read_text()) == USER_SETTINGS


def test_installed_file_guard_runs_from_its_command(project: Path, vault: Path) -> None:
    """The file guard's command from the settings file, run by a shell with a Write payload as Claude Code sends it."""
    path = settings_file(project)
    apply(plan_install(path, hook_commands([sys.executable, "-m", "agentmd"], vault)))
    groups = json.loads(path.read_text())["hooks"]["PreToolUse"]
    command = next(g["hooks"][0]["command"] for g in groups if "Write" in g["matcher"])
    payload = {
        "session_id": "s",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(vault / "at-the-root.md"), "content": "hello\n"},
    }
    done = subprocess.run(
        ["bash", "-c", command], input=json.dumps(payload), capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert done.returncode == 0, done.stderr
    spec = json.loads(done.stdout)["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny" and "(vault-root)" in spec["permissionDecisionReason"]


def test_the_interpreter_form_never_runs_an_agentmd_folder_of_the_project_it_starts_in(tmp_path: Path) -> None:
    """With no `agentmd` on PATH the hooks (and `mcp-config`'s stdio entry) run `<python> -P -m agentmd`: a hook
    starts in the project's folder, and a project holding an `agentmd/` package of its own must not stand in."""
    import subprocess

    from agentmd.hooks.install import agentmd_argv, agentmd_hook_name

    argv = agentmd_argv(argv0="", on_path="")
    assert argv[1:] == ["-P", "-m", "agentmd"]
    project = tmp_path / "project"
    (project / "agentmd").mkdir(parents=True)
    (project / "agentmd" / "__init__.py").write_text("")
    (project / "agentmd" / "__main__.py").write_text("print('HIJACKED')\n")
    ran = subprocess.run([*argv, "--version"], cwd=project, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and "HIJACKED" not in ran.stdout and ran.stdout.startswith("agentmd "), ran
    command = hook_commands(argv, tmp_path / "vault")["recall"]
    assert agentmd_hook_name(command) == "recall"  # uninstall still finds the entry
