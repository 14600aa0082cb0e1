"""Other MCP servers' tools, seen by the file guard (hooks/file_guard.py, matcher `mcp__.*`).

A filesystem server's `write_file`, `edit_file` or `move_file` writes where Claude Code's own tools would, past
the door and the prefilters. Such a call is judged by the paths it carries (in fields named for paths, and any
string that is an absolute path, `~/…` or a `file://` URI, one level into lists and objects) and by what its name
says it does:

- a path to the vault's tokens or state folder: refused, whatever the tool (reading a token is reading it);
- a tool whose name reads (`read_…`, `get_…`, `list_…`, `search_…`, `…_tree`, …) passes: notes may be read;
- any other tool with a path in the vault, in agentmd's config folder or a Claude Code settings file holding
  agentmd's hooks: refused, pointing to `memory_capture` and to the Write and Edit tools, which this guard checks.

agentmd's own tools (`memory_search`, `memory_capture`), on whatever server name they were set up, pass: they go
through the door themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .own_files import holds_our_hooks, is_token, place, under
from .pretool import ALLOW, Verdict
from .shell import inside, under_by_identity

OWN_TOOLS = frozenset({"memory_search", "memory_capture"})
_READS = re.compile(
    r"(?:^|[_-])(?:read|reads|get|list|ls|search|find|view|show|stat|info|glob|grep|tree|head|tail|open|query|"
    r"fetch|describe|count|exists|cat|diff|allowed)(?:[_-]|$)",
    re.IGNORECASE,
)
_PATH_KEYS = frozenset({"path", "paths", "file", "files", "file_path", "filepath", "filename", "target", "target_path",
                        "destination", "dest", "source", "src", "directory", "dir", "folder", "notebook_path",
                        "new_path", "old_path", "output", "output_path", "uri", "root"})  # fmt: skip


def _paths(value: object, key: str = "", depth: int = 0) -> Iterator[str]:
    if isinstance(value, str):
        text = value.removeprefix("file://")
        if key.lower() in _PATH_KEYS or text.startswith(("/", "~/")) or value.startswith("file://"):
            yield text
    elif isinstance(value, Mapping) and depth < 2:
        for k, v in value.items():
            yield from _paths(v, str(k), depth + 1)
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and depth < 2:
        for v in value:
            yield from _paths(v, key, depth + 1)


def mcp_verdict(
    tool: str, tool_input: Mapping[str, Any], cwd: str | None, vaults: Sequence[Path], state: Path, config: Path
) -> Verdict:
    """The guard's decision on a call of another MCP server's tool (the module docstring)."""
    name = tool.split("__", 2)[-1]
    if name in OWN_TOOLS:
        return ALLOW
    reads = _READS.search(name) is not None
    for raw in _paths(tool_input):
        if not raw or "\x00" in raw:
            continue
        path = place(raw, cwd)
        if is_token(path, state) or under(path, state):
            return _refused(tool, path, "it reaches the vault's agentmd state folder, where its tokens are")
        if reads:
            continue
        if under(path, config) or holds_our_hooks(path):
            return _refused(tool, path, "it may write agentmd's configuration or the hooks that run this guard")
        if any(inside(path, v) or under_by_identity(path, v) is not None for v in vaults):
            return _refused(
                tool,
                path,
                "a write into the vault through another MCP server bypasses the door and the content prefilters",
            )
    return ALLOW


def _refused(tool: str, path: Path, why: str) -> Verdict:
    return Verdict(
        True,
        f"agentmd file guard: the MCP tool {tool} on {path} is refused: {why}. To save a memory use the "
        "`memory_capture` MCP tool (or `agentmd capture`); to change a note use the Write or Edit tool, which this "
        "guard checks; reading notes with a tool that only reads is fine.",
    )
