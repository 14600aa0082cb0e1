"""Other MCP servers' tools meet the file guard (hooks/mcp_guard.py): a filesystem server's write into the vault,
anything reaching the vault's tokens, and writes to agentmd's config or the settings holding its hooks are refused;
reading notes, work outside the vault and agentmd's own tools pass. Real files and the hook's own decision
function, with Claude Code's tool names (`mcp__<server>__<tool>`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from git_helpers import make_repo

from agentmd.engine.settings import resolve
from agentmd.hooks.file_guard import _decide


@pytest.fixture
def places(tmp_path: Path, env: dict[str, str]) -> dict[str, Path]:
    vault = make_repo(tmp_path / "vault", {"memory/a.md": "# A\n\nA note.\n"})
    settings = resolve(vault=str(vault))
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    (settings.state_dir / "access.token").write_text("s3cr3t\n", encoding="utf-8")
    config = tmp_path / "config" / "agentmd"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f'vault = "{vault}"\n', encoding="utf-8")
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    hooks = {"hooks": {"PreToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command",
             "command": "/usr/bin/agentmd-hook file-guard --vault x"}]}]}}  # fmt: skip
    (project / ".claude" / "settings.local.json").write_text(json.dumps(hooks), encoding="utf-8")
    return {"vault": vault, "state": settings.state_dir, "config": config, "project": project}


def decide(places: dict[str, Path], tool: str, tool_input: dict[str, object]) -> tuple[bool, str]:
    args = argparse.Namespace(vault=str(places["vault"]), index=None, config=str(places["config"] / "config.toml"))
    verdict = _decide(args, tool, tool_input, str(places["project"]))
    return verdict.deny, verdict.reason


def test_another_servers_tools_are_judged_by_their_paths_and_what_they_do(places: dict[str, Path]) -> None:
    v, s, c, p = places["vault"], places["state"], places["config"], places["project"]
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
        deny, reason = decide(places, tool, tool_input)
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
        assert decide(places, tool, tool_input) == (False, ""), (tool, tool_input)
