"""agentmd's own files, kept from an agent's tools by the file guard (hooks/file_guard.py).

The door and the prefilters hold the vault; what holds the door is outside it, and an agent's tools must not reach
it either:

- the vault's state folder (`$XDG_STATE_HOME/agentmd/<vault-id>/`): its `access.token` and `operator.token` may
  not be read (Read, Grep, or a shell command naming them) and nothing in it may be written: with the operator
  token an agent could write where only the person may, and with both it could open the page that undoes history;
- agentmd's config folder (`$XDG_CONFIG_HOME/agentmd/`, or the folder of `--config`): it names the vault and the
  jobs, and is not written;
- a Claude Code settings file that holds agentmd's hooks (`.claude/settings.json`, `.claude/settings.local.json`,
  `~/.claude/settings.json`): an agent that edits it can take the guard out, so it is not written (the person
  runs `agentmd hooks uninstall`, or edits it themselves).

Tools that only list names (Glob, LS) pass; reading the config or the daemon's log passes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .pretool import ALLOW, Verdict
from .shell import decoded_literals, inside, tokens, under_by_identity

TOKENS = ("access.token", "operator.token")
READERS = {"Read": "file_path", "Grep": "path"}
WRITERS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
_SETTINGS_NAMES = ("settings.json", "settings.local.json")
# a shell command that writes to a file or runs code from a variable: any of these beside one of agentmd's own
# paths refuses the command (reading one, `cat config.toml`, passes)
_SHELL_WRITES = re.compile(
    r"(?:^|[\s;&|(])(?:>>?|>\||\d>|tee|sed\s+[^|;&]*-i|perl\s+[^|;&]*-[pi]|cp|mv|rm|ln|install|truncate|dd|chmod|"
    r"python[23]?|node|ruby|sh|bash|zsh|ed|ex|vi|vim|nano|awk|gawk|jq\s+[^|;&]*>|sponge|rsync|tar|unzip|mkdir)(?=[\s<>]|$)"
)


def own_paths(state_dir: Path, config_dir: Path) -> tuple[Path, Path]:
    return Path(os.path.realpath(state_dir)), Path(os.path.realpath(config_dir))


def place(raw: str, cwd: str | None) -> Path:
    return Path(os.path.realpath(os.path.join(cwd or os.getcwd(), os.path.expanduser(raw))))


def under(path: Path, folder: Path) -> bool:
    return inside(path, folder) or under_by_identity(path, folder) is not None


def holds_our_hooks(path: Path) -> bool:
    """A Claude Code settings file that names agentmd's hooks."""
    if path.name not in _SETTINGS_NAMES or path.parent.name != ".claude":
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 20)
    except OSError:
        return False
    return "agentmd" in text and ("file-guard" in text or "hook recall" in text or "agentmd-hook" in text)


def _refusal(what: str, why: str) -> Verdict:
    return Verdict(
        True,
        f"agentmd file guard: {what} is refused: {why}. These files hold what keeps the vault's door (its tokens, "
        "its settings, the hooks that run this guard); only the person changes them. To save a memory use the "
        "`memory_capture` MCP tool; to change agentmd's settings, ask the person.",
    )


def own_file_verdict(
    tool: str, tool_input: Mapping[str, Any], cwd: str | None, state_dir: Path, config_dir: Path
) -> Verdict:
    """The guard's decision on a tool call that reaches agentmd's own files (the module docstring); ALLOW for
    one that does not."""
    state, config = own_paths(state_dir, config_dir)
    if tool == "Bash":
        command = tool_input.get("command")
        return _shell(command, state, config, cwd) if isinstance(command, str) else ALLOW
    field = READERS.get(tool) or WRITERS.get(tool)
    raw = tool_input.get(field) if field else None
    if tool == "Grep" and not raw:
        raw = cwd or os.getcwd()  # a search with no path searches where the session is
    if not isinstance(raw, str) or not raw:
        return ALLOW
    path = place(raw, cwd)
    if tool in READERS:
        token = under(path, state) and (path.name in TOKENS or path == state or tool == "Grep")
        if token or (tool == "Grep" and inside(state, path)) or _another_name_of_a_token(path, state):
            return _refusal(f"{tool} of {path}", "it would read the vault's access or operator token")
        if tool == "Grep" and _holds_another_name(path, state):
            return _refusal(f"{tool} of {path}", "it would read the vault's access or operator token")
        return ALLOW
    if under(path, state):
        return _refusal(f"{tool} to {path}", "it is in the vault's agentmd state folder")
    if under(path, config):
        return _refusal(f"{tool} to {path}", "it is agentmd's configuration")
    spelled = Path(os.path.abspath(os.path.join(cwd or os.getcwd(), os.path.expanduser(raw))))
    if holds_our_hooks(path) or holds_our_hooks(spelled):
        return _refusal(
            f"{tool} to {path}", "this Claude Code settings file holds agentmd's hooks, this guard among them"
        )
    if path.name in _SETTINGS_NAMES and "disableAllHooks" in json_text(tool_input):
        return _refusal(f"{tool} to {path}", "it would switch off every hook of Claude Code, this guard among them")
    return ALLOW


def json_text(tool_input: Mapping[str, Any]) -> str:
    """The text a file tool call brings, joined."""
    edits = tool_input.get("edits")
    parts = [tool_input.get(k) for k in ("content", "new_string")]
    parts += [e.get("new_string") for e in edits if isinstance(e, Mapping)] if isinstance(edits, list) else []
    return "\n".join(p for p in parts if isinstance(p, str))


def is_token(path: Path, state: Path) -> bool:
    return (under(path, state) and (path.name in TOKENS or path == state)) or _another_name_of_a_token(path, state)


def _path_words(command: str, cwd: str | None) -> list[str]:
    """The words of a shell command that name something on disk (a path, or a name where it runs)."""
    try:
        words = tokens(command)
    except ValueError:
        words = command.split()
    base = cwd or os.getcwd()
    return [w for w in words[:MAX_WORDS] if w and ("/" in w or os.path.lexists(os.path.join(base, w)))]


def _holds_another_name(root: Path, state: Path) -> bool:
    """A folder a Grep searches holds a hard link of a token (a token with more than one name, found by walking
    the folder; one too large to walk is taken to hold it)."""
    try:
        stats = [os.stat(state / n) for n in TOKENS if (state / n).exists()]
    except OSError:
        return False
    named = {(t.st_dev, t.st_ino) for t in stats if t.st_nlink > 1}
    if not named or not root.is_dir():
        return False
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", "node_modules")]  # Grep leaves what .gitignore does
        for name in files:
            seen += 1
            try:
                st = os.stat(os.path.join(folder, name), follow_symlinks=False)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in named or seen > MAX_WALKED:
                return True
    return False


def _another_name_of_a_token(path: Path, state: Path) -> bool:
    """`path` is a hard link of one of the vault's tokens."""
    try:
        st = os.stat(path)
        if st.st_nlink < 2:
            return False
        return any((t.st_dev, t.st_ino) == (st.st_dev, st.st_ino) for t in (os.stat(state / n) for n in TOKENS))
    except OSError:
        return False


def _shell(command: str, state: Path, config: Path, cwd: str | None) -> Verdict:
    """A shell command naming a token file or agentmd's state folders (however spelled: `~/.local/state`,
    `$XDG_STATE_HOME`, a glob, base64 or hex decoded by the line, a link or second name of a token), asking
    agentmd for the token, or, when it may write, agentmd's config or a `.claude` folder."""
    text = "\n".join([command, *decoded_literals(command)])
    if _TOKEN_WORDS.search(text) or str(state.parent) in text or _STATE_WORDS.search(text):
        return _refusal("this command", "it names agentmd's state folders, where the vault's tokens are, or a token")
    if _ASKS_TOKEN.search(text):
        return _refusal("this command", "it asks agentmd for the vault's token or where it is kept")
    if any(is_token(place(word, cwd), state) for word in _path_words(command, cwd)):
        return _refusal("this command", "it names a link to, or another name of, one of the vault's tokens")
    writes = _SHELL_WRITES.search(command) is not None
    if writes and (str(config) in command or _CONFIG_WORDS.search(command)):
        return _refusal("this command", "it may write agentmd's configuration")
    if writes and _CLAUDE_FOLDER.search(command):
        return _refusal("this command", "it may write Claude Code's settings folder, where agentmd's hooks are")
    return ALLOW


_TOKEN_WORDS = re.compile(r"\.token\b")
# `agentmd token …`, `agentmd mcp-config`, however quoted (`['agentmd','token','path']` in a program)
_ASKS_TOKEN = re.compile(r"\bagentmd\W{1,4}(?:token|mcp-config)\b")
MAX_WORDS = 200  # the words of one command line looked up on disk
MAX_WALKED = 50_000  # files of a Grep's folder looked at for a second name of a token
_STATE_WORDS = re.compile(r"\.local/state\b|\$\{?XDG_STATE_HOME\b")
_CONFIG_WORDS = re.compile(r"\.config/agentmd\b|agentmd/config\b|\$\{?XDG_CONFIG_HOME\b")
_CLAUDE_FOLDER = re.compile(r"(?:^|[\s/'\"=])\.claude(?:[\s/'\"]|$)")
