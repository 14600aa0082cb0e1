"""The file guard keeps an agent's tools from agentmd's own files (hooks/own_files.py): the vault's tokens are not
read, the state and config folders are not written, and a Claude Code settings file holding agentmd's hooks is not
written; what only reads the config or lists names passes. Real files, the hook's own decision function."""

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
