"""The file guard keeps an agent's tools from agentmd's own files (hooks/own_files.py): the vault's tokens are not
read, the state and config folders are not written, and a Claude Code settings file holding agentmd's hooks is not
written; what only reads the config or lists names passes; other MCP servers' tools meet the same rules. Real files,
the hook's own decision function."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest
from git_helpers import make_repo

from agentmd.engine.settings import resolve
from agentmd.hooks.file_guard import _decide


@pytest.fixture
def own(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    vault = make_repo(tmp_path / "vault", {"memory/a.md": "# A\n"})
    settings = resolve(vault=str(vault))
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    for name in ("access.token", "operator.token"):
        (settings.state_dir / name).write_text("s3cr3t-token-value\n", encoding="utf-8")
    config = tmp_path / "config" / "agentmd"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f'vault = "{vault}"\n', encoding="utf-8")
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    hooks = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
             "command": "/usr/bin/agentmd hook file-guard --vault x"}]}]}}  # fmt: skip
    (project / ".claude" / "settings.local.json").write_text(json.dumps(hooks), encoding="utf-8")
    (project / ".claude" / "settings.json").write_text('{"permissions": {}}', encoding="utf-8")
    return {"vault": vault, "state": settings.state_dir, "config": config, "project": project}


def decide(own: dict[str, Path], tool: str, tool_input: dict[str, object]) -> tuple[bool, str]:
    args = argparse.Namespace(vault=str(own["vault"]), index=None, config=str(own["config"] / "config.toml"))
    verdict = _decide(args, tool, tool_input, str(own["project"]))
    return verdict.deny, verdict.reason


@pytest.mark.parametrize(
    ("tool", "tool_input", "refused"),
    [
        ("Read", {"file_path": "{S}/operator.token"}, True),
        ("Read", {"file_path": "{S}/access.token"}, True),
        ("Grep", {"pattern": ".", "path": "{S}"}, True),
        ("Read", {"file_path": "{S}/agentmd.log"}, False),
        ("Read", {"file_path": "{C}/config.toml"}, False),
        ("Write", {"file_path": "{S}/operator.token", "content": "mine\n"}, True),
        ("Edit", {"file_path": "{C}/config.toml", "old_string": "vault", "new_string": "vault"}, True),
        ("Write", {"file_path": "{P}/.claude/settings.local.json", "content": "{}"}, True),
        ("Write", {"file_path": "{P}/.claude/settings.json", "content": "{}"}, False),  # holds no hook of ours
        ("Bash", {"command": "cat {S}/operator.token"}, True),
        ("Bash", {"command": "cat ~/.local/state/agentmd/*/operator.token"}, True),
        ("Bash", {"command": "sed -i s/file-guard/nothing/ .claude/settings.local.json"}, True),
        ("Bash", {"command": "echo 'vault = /tmp' > {C}/config.toml"}, True),
        ("Bash", {"command": "cat {C}/config.toml"}, False),
        ("Bash", {"command": "cat .claude/settings.local.json"}, False),
        ("Read", {"file_path": "{P}/README.md"}, False),
    ],
)
def test_agentmd_s_own_files(own: dict[str, Path], tool: str, tool_input: dict[str, object], refused: bool) -> None:
    filled = {
        k: v.replace("{S}", str(own["state"])).replace("{C}", str(own["config"])).replace("{P}", str(own["project"]))
        if isinstance(v, str) else v
        for k, v in tool_input.items()
    }  # fmt: skip
    deny, reason = decide(own, tool, filled)
    assert deny is refused, reason
    if deny:
        assert reason.startswith("agentmd file guard:") and "s3cr3t" not in reason and "ask the person" in reason


@pytest.mark.parametrize(
    ("tool", "tool_input", "refused"),
    [
        # tokens by other spellings, a search root above the state folder, a search with no path
        ("Bash", {"command": "cat ~/.local/state/agentmd/*/a*.token"}, True),
        ("Bash", {"command": "grep -r . ~/.local/state/agentmd"}, True),
        ("Bash", {"command": "find $XDG_STATE_HOME -name '*.tok*' -exec cat {} +"}, True),
        ("Grep", {"pattern": ".", "path": "{H}", "glob": "*.token"}, True),
        ("Grep", {"pattern": "."}, False),  # from the project: the state folder is not under it
        # agentmd's config and Claude's settings folder, spelled another way
        ("Bash", {"command": "cd ~/.config/agentmd && echo 'vault=\"/tmp\"' > config.toml"}, True),
        ("Bash", {"command": "cd .claude && echo '{}' > settings.local.json"}, True),
        ("Bash", {"command": "rm -r .claude"}, True),
        ("Bash", {"command": "git add .claude/settings.json && git commit -m settings"}, False),
        ("Write", {"file_path": "{P}/.claude/settings.json", "content": '{"disableAllHooks": true}'}, True),
        # the owner's judgments, from an agent's shell
        ("Bash", {"command": "agentmd confirm memory/a.md --yes"}, True),
        ("Bash", {"command": "agentmd groom --apply plan.json --yes"}, True),
        ("Bash", {"command": "agentmd retire memory/a.md --reason outdated --yes"}, False),
    ],
)
def test_agentmd_s_own_files_by_other_names(
    own: dict[str, Path], tool: str, tool_input: dict[str, object], refused: bool
) -> None:
    home = own["state"].parent.parent  # a folder that holds the state folders
    filled = {
        k: v.replace("{H}", str(home)).replace("{P}", str(own["project"])) if isinstance(v, str) else v
        for k, v in tool_input.items()
    }
    deny, reason = decide(own, tool, filled)
    assert deny is refused, reason


def test_a_hard_link_of_a_token_is_not_read(own: dict[str, Path]) -> None:
    link = own["project"] / "innocent.txt"
    os.link(own["state"] / "operator.token", link)
    deny, reason = decide(own, "Read", {"file_path": str(link)})
    assert deny and "token" in reason


def test_a_token_is_not_read_through_links_agentmd_itself_or_a_decoded_line(own: dict[str, Path]) -> None:
    """Other ways to the token from a shell: a symbolic or hard link to it, asking agentmd for it or for where it is
    (however quoted, inside a program too), or a command the line decodes from base64 before running it."""
    import base64

    scratch = own["project"] / "scratch"
    scratch.mkdir()
    os.link(own["state"] / "access.token", scratch / "tok.lnk")
    (scratch / "tok.sym").symlink_to(own["state"] / "access.token")
    (scratch / "notes.txt").write_text("an error here\n", encoding="utf-8")
    hidden = base64.b64encode(f"cat {own['state']}/access.token".encode()).decode()
    refused = [
        "cat scratch/tok.lnk",
        f"cat {scratch}/tok.sym",
        "agentmd token path | xargs cat",
        "cat $(agentmd token path)",
        "agentmd mcp-config --port 8537 | grep Bearer",
        'ln -s "$(agentmd token path)" /tmp/t3',
        "python3 -c \"import subprocess;print(open(subprocess.check_output(['agentmd','token','path'])"
        ".strip()).read())\"",
        f"echo {hidden} | base64 -d | sh",
    ]
    for command in refused:
        deny, reason = decide(own, "Bash", {"command": command})
        assert deny and "token" in reason, command
    passing = ["cat scratch/notes.txt", "agentmd search token refresh", "ls -la scratch", "echo aGVsbG8K | base64 -d"]
    for command in passing:
        deny, reason = decide(own, "Bash", {"command": command})
        assert not deny, (command, reason)
    # a Grep over a folder that holds a second name of a token reads it; the folder without one passes
    assert decide(own, "Grep", {"pattern": "[a-z0-9]", "path": str(scratch)})[0]
    (scratch / "tok.lnk").unlink()
    (scratch / "tok.sym").unlink()
    assert not decide(own, "Grep", {"pattern": "[a-z0-9]", "path": str(scratch)})[0]


# --------------------------------------------------------------------------------------------------------------
# Other MCP servers' tools (hooks/mcp_guard.py), with Claude Code's tool names (`mcp__<server>__<tool>`): a
# filesystem server's write into the vault, anything reaching the tokens, writes to agentmd's config or the
# settings holding its hooks are refused; reading notes, work outside the vault and agentmd's own tools pass.


def test_another_servers_tools_are_judged_by_their_paths_and_what_they_do(own: dict[str, Path]) -> None:
    v, s, c, p = own["vault"], own["state"], own["config"], own["project"]
    refused = [
        ("mcp__filesystem__write_file", {"path": f"{v}/memory/b.md", "content": "# B\n"}),
        ("mcp__filesystem__edit_file", {"path": f"{v}/memory/a.md", "edits": [{"oldText": "A", "newText": "B"}]}),
        ("mcp__filesystem__move_file", {"source": f"{p}/x.md", "destination": f"{v}/memory/x.md"}),
        ("mcp__fs__create_directory", {"path": f"file://{v}/memory/new"}),
        ("mcp__filesystem__write_file", {"path": "../vault/memory/c.md", "content": "x"}),  # relative to the session
        ("mcp__filesystem__read_file", {"path": f"{s}/access.token"}),
        ("mcp__filesystem__write_file", {"path": f"{c}/config.toml", "content": "vault = '/tmp'\n"}),
        ("mcp__filesystem__write_file", {"path": f"{p}/.claude/settings.local.json", "content": "{}"}),
    ]
    for tool, tool_input in refused:
        deny, reason = decide(own, tool, tool_input)
        assert deny and reason.startswith("agentmd file guard:") and "memory_capture" in reason, (tool, tool_input)
        assert "s3cr3t" not in reason
    passing = [
        ("mcp__filesystem__read_file", {"path": f"{v}/memory/a.md"}),
        ("mcp__filesystem__list_directory", {"path": f"{v}/memory"}),
        ("mcp__filesystem__search_files", {"path": str(v), "pattern": "note"}),
        ("mcp__filesystem__write_file", {"path": f"{p}/notes.md", "content": "# Project notes\n"}),
        ("mcp__agentmd__memory_capture", {"title": "t", "body": "b", "type": "fact", "why": "w"}),
        ("mcp__my-vault__memory_search", {"query": "ruff"}),
        ("mcp__github__create_issue", {"title": "Bug", "body": "steps"}),
    ]
    for tool, tool_input in passing:
        assert decide(own, tool, tool_input) == (False, ""), (tool, tool_input)
