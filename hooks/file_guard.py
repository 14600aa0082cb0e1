"""`agentmd hook file-guard`: a Claude Code PreToolUse hook (matcher `Read|Grep|Write|Edit|MultiEdit|NotebookEdit|
Bash|mcp__.*`) that holds the agent's own file tools to the rules `memory_capture` follows, and keeps them from
agentmd's own files (its tokens, its config, the settings holding its hooks: hooks/own_files.py). Other MCP
servers' tools are judged by the paths they carry and what their names say they do (hooks/mcp_guard.py).

Without it, an agent's Write or Edit on a note in the vault would skip the door (who may write where:
rules/door.py), the content prefilters (secrets, directives, executable blocks, hidden Unicode:
rules/prefilter/) and the storage contract, and the daemon would commit the result as a `local-edit`.

Contract with Claude Code (hooks reference, PreToolUse; hooks/pretool.py): the hook reads one JSON object on
stdin (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`, ...). To refuse,
it prints `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
"permissionDecisionReason": "..."}}` on stdout and exits 0 (the reason is shown to the agent). Anything it lets
through gets no output and exit 0. It never exits non-zero and never prints a traceback.

The file tools, by their `tool_input` fields:
- `Write {file_path, content}`, `Edit {file_path, old_string, new_string, replace_all?}`,
  `MultiEdit {file_path, edits: [{old_string, new_string, replace_all?}]}`,
  `NotebookEdit {notebook_path, new_source, cell_id?, cell_type?, edit_mode?}`.
- The target is resolved against the hook input's `cwd` when relative, with `~` expanded and links and `..`
  followed (the real path of its deepest existing folder, then the rest). It is in the vault when that real
  path lies under the vault's real path, or when its spelled path lies under the vault's (a link in the vault
  leading out: the door then refuses it as a symlink escape). Outside the vault: allowed, no output.
- In the vault, the door judges the vault-relative path for the actor `agent`, then the content prefilters
  read the text the tool would leave in the file (engine/write/file_tools.py says which text). A daemon
  serving the vault judges it (`POST /v1/guard`, with the contract and the prefilters it has loaded: about
  a tenth of the time of a check in a new process); without one, or when it gives no judgment, this process
  judges it the same way.
- Cannot decide (the contract is unreadable or invalid, the guard fails): a target positively in the vault,
  or a call whose path or command names the vault (or runs from inside it) when the guard could not even
  place it, is refused with the reason it could not be checked; anything else is allowed. A path holding a
  lone surrogate is judged as the file a JavaScript runtime would write (each one as U+FFFD).

Bash commands are read by hooks/shell_writes.py: a command that may write, move, link or delete a path in the
vault is refused, as is git changing the vault's repository; commands that only read pass. The worktree guard
(hooks/worktree_guard.py) stays a hook of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from agentmd.engine.write.file_tools import FILE_TOOLS, USE_CAPTURE

from .mcp_guard import OWN_TOOLS, mcp_verdict
from .own_files import READERS, own_file_verdict, own_paths
from .pretool import ALLOW, Verdict, guard_hook, hook_settings, lone_surrogates_replaced, vault_names
from .protocol import standalone
from .shell import inside, under_by_identity
from .shell_writes import check_shell_writes

DAEMON_WAIT = 2.0  # seconds for the daemon's judgment (a note past 2 MiB is refused unread); then judged here


@dataclass(frozen=True)
class Target:
    """Where a file tool would write, when that is in the vault."""

    path: Path  # absolute, links followed
    rel: str  # the vault-relative path the door judges
    vault: Path  # the vault's real path


def locate(raw: str, cwd: str | None, vaults: Sequence[Path]) -> Target | None:
    """The target of a file tool's path when it lies in the vault (`vaults[0]` is the vault's real path, the
    rest other names for it), else None."""
    spelled = os.path.join(cwd or os.getcwd(), os.path.expanduser(raw))
    real = Path(os.path.realpath(spelled))
    lexical = Path(os.path.normpath(os.path.abspath(spelled)))
    vault = Path(os.path.realpath(vaults[0]))
    if inside(real, vault):
        return Target(real, real.relative_to(vault).as_posix(), vault)
    for name in (vault, *vaults):
        if inside(lexical, name):
            return Target(real, lexical.relative_to(name).as_posix(), vault)
    return _same_folder(real, vault)


def _same_folder(real: Path, vault: Path) -> Target | None:
    """`real` in the vault by another name no text comparison sees (`under_by_identity`)."""
    folder = under_by_identity(real, vault)
    if folder is None:
        return None
    rel = real.relative_to(folder)
    return Target(vault / rel, rel.as_posix(), vault)


def linked_into(raw: str, cwd: str | None, vault: Path) -> Target | None:
    """A file outside the vault that is another name (a hard link) of a file in it: the vault's name of it,
    found by walking the vault (only for a file with several names on the vault's device, which is rare), so
    the write meets the vault's rules. None otherwise."""
    path = os.path.join(cwd or os.getcwd(), os.path.expanduser(raw))
    real_vault = Path(os.path.realpath(vault))
    try:
        st = os.stat(path)
        if st.st_nlink < 2 or st.st_dev != os.stat(real_vault).st_dev:
            return None
    except OSError:
        return None
    for folder, dirs, files in os.walk(real_vault):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            with contextlib.suppress(OSError):
                found = os.stat(os.path.join(folder, name), follow_symlinks=False)
                if (found.st_ino, found.st_dev) == (st.st_ino, st.st_dev):
                    where = Path(folder, name)
                    return Target(where, where.relative_to(real_vault).as_posix(), real_vault)
    return None


def judge(tool: str, tool_input: Mapping[str, Any], target: Target, contract_path: Path | None) -> Verdict:
    """The door, then the prefilters, for a file tool's write to `target` in the vault, in this process."""
    from agentmd.engine.write.file_tools import refusal_of
    from agentmd.rules.contract import load_contract

    reason = refusal_of(tool, tool_input, target.vault, target.rel, load_contract(target.vault, contract_path))
    return ALLOW if reason is None else Verdict(True, reason)


def judged_by_daemon(
    tool: str, tool_input: Mapping[str, Any], target: Target, state_dir: Path, contract_path: Path | None
) -> Verdict | None:
    """The judgment of the daemon serving the vault (`POST /v1/guard`), whose contract and prefilters are loaded
    already; None when no daemon serves it, or it does not give one (an older daemon, another contract, a
    failure): the caller then judges in this process."""
    from agentmd.engine.client import DaemonError, running

    try:
        found = running(state_dir, target.vault)
        if found is None:
            return None
        body = {
            "tool": tool,
            "tool_input": dict(tool_input),
            "path": target.rel,
            "contract": None if contract_path is None else str(contract_path),
        }
        answer = found.client(timeout=DAEMON_WAIT).post("/v1/guard", body)
    except (DaemonError, OSError, ValueError):
        return None
    if not isinstance(answer, dict):
        return None
    deny, reason = answer.get("deny"), answer.get("reason")
    if not isinstance(deny, bool) or (deny and not (isinstance(reason, str) and reason)):
        return None
    return Verdict(True, str(reason)) if deny else ALLOW


def cannot_check(tool: str, target: Target, why: str) -> Verdict:
    from agentmd.engine.write.file_tools import unchecked

    return Verdict(True, unchecked(tool, target.vault, target.rel, why))


def check_file_tool(
    tool: str,
    tool_input: Mapping[str, Any],
    *,
    cwd: str | None,
    vault: str | os.PathLike[str] | Sequence[Path],
    contract_path: Path | None = None,
    state_dir: Path | None = None,
) -> Verdict:
    """Decide one Write/Edit/MultiEdit/NotebookEdit call (see the module docstring). `vault` is the vault's
    path, or every name of it (its real path first); `cwd` is the hook input's (None: this process's). With
    `state_dir`, a daemon serving the vault judges the call when it can (`judged_by_daemon`)."""
    field = FILE_TOOLS.get(tool)
    raw = tool_input.get(field) if field else None
    if not isinstance(raw, str) or not raw:
        return ALLOW  # no path: the tool itself refuses the call
    names = tuple(vault) if isinstance(vault, Sequence) and not isinstance(vault, str) else (Path(vault),)
    target = locate(raw, cwd, names)
    if target is None:
        target = linked_into(raw, cwd, names[0])
    if target is None:
        return ALLOW
    if state_dir is not None:
        verdict = judged_by_daemon(tool, tool_input, target, state_dir, contract_path)
        if verdict is not None:
            return verdict
    try:
        return judge(tool, tool_input, target, contract_path)
    except Exception as exc:  # positively in the vault: refuse rather than let an unchecked write through
        return cannot_check(tool, target, f"{type(exc).__name__}: {exc}")


# --------------------------------------------------------------------------------------------------
# The command


def _decide(args: argparse.Namespace, tool: str, tool_input: dict[str, object], cwd: str | None) -> Verdict:
    tool_input = {k: lone_surrogates_replaced(v) if isinstance(v, str) else v for k, v in tool_input.items()}
    command = tool_input.get("command")
    if tool == "Bash" and not isinstance(command, str):
        return ALLOW
    foreign = tool.startswith("mcp__")  # another MCP server's tool (hooks/mcp_guard.py)
    if tool != "Bash" and tool not in FILE_TOOLS and tool not in READERS and not foreign:
        return ALLOW
    if foreign and tool.split("__", 2)[-1] in OWN_TOOLS:
        return ALLOW  # agentmd's own tools meet the door themselves
    settings = hook_settings(args)
    if settings is None:  # no vault configured: nothing to protect
        return ALLOW
    from agentmd.engine.settings import default_config_file

    config_dir = Path(args.config).expanduser().parent if args.config else default_config_file().parent
    if foreign:
        state, config = own_paths(settings.state_dir, config_dir)
        return mcp_verdict(tool, tool_input, cwd, vault_names(settings, args), state, config)
    own = own_file_verdict(tool, tool_input, cwd, settings.state_dir, config_dir)
    if own.deny or tool in READERS:
        return own
    if tool == "Bash":
        return check_shell_writes(str(command), cwd=cwd, vault=settings.vault)
    names = vault_names(settings, args)
    return check_file_tool(
        tool, tool_input, cwd=cwd, vault=names, contract_path=settings.contract_path, state_dir=settings.state_dir
    )


def cmd_hook_file_guard(args: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO | None = None) -> int:
    """PreToolUse hook: print the deny object for a file tool call or shell command that would write into the
    vault against its rules; print nothing otherwise. Always exits 0. A failure once the target is known to be
    in the vault refuses (`check_file_tool`); any other failure lets the call through."""
    return guard_hook("file-guard", _decide, args, out, err, stdin, on_failure=_unjudged)


def _unjudged(args: argparse.Namespace, tool_input: dict[str, object], cwd: str | None, why: str) -> Verdict | None:
    """The denial of a call the guard failed to judge that may write into the vault: its path or command
    names the vault (any of its names), or it runs from inside the vault. None: let it through."""
    settings = hook_settings(args)
    if settings is None:
        return None
    names = [str(n) for n in vault_names(settings, args)]
    text = " ".join(str(v) for v in tool_input.values() if isinstance(v, str))
    here = os.path.abspath(cwd or os.getcwd())
    if not any(n in text or here == n or here.startswith(n + os.sep) for n in names):
        return None
    return Verdict(
        True,
        f"agentmd file guard: this call may write into the agentmd vault {names[0]}, and the guard could not "
        f"check it ({why}). An unchecked write would bypass the door and the content prefilters, so it is "
        f"refused; {USE_CAPTURE}, or name the file plainly and try again.",
    )


main = standalone("file-guard", cmd_hook_file_guard)  # `python -m agentmd.hooks.file_guard`

if __name__ == "__main__":
    sys.exit(main())
