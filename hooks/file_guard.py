"""`agentmd hook file-guard`: a Claude Code PreToolUse hook (matcher `Write|Edit|MultiEdit|NotebookEdit|Bash`)
that holds the agent's own file tools to the rules `memory_capture` follows.

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
- In the vault, the door judges the vault-relative path for the actor `agent` (dot folders, the vault root,
  `alignment` and `private` spaces and anything not a `.md` note are refused; `standing` and `shared` spaces
  are open), then the content prefilters read the text the tool would leave in the file, through the same
  entry point captures use (`check_fields`): Write's content; Edit's and MultiEdit's replacements applied to
  the file's current text as Claude Code applies them (the first occurrence unless `replace_all`), or, when
  an `old_string` is not in the file (the tool itself will then fail), the new strings alone; NotebookEdit's
  new source. A refusal names the door's rule id or the prefilters' reason codes and points to
  `memory_capture` (or `agentmd capture`).
- Cannot decide (the contract is unreadable or invalid, the guard fails): a target positively in the vault,
  or a call whose path or command names the vault (or runs from inside it) when the guard could not even
  place it, is refused with the reason it could not be checked; anything else is allowed. A path holding a
  lone surrogate is judged as the file a JavaScript runtime would write (each one as U+FFFD).

Bash commands are read by hooks/shell_writes.py: a command that visibly writes, moves or deletes a path in
the vault is refused. The worktree guard (hooks/worktree_guard.py) stays a hook of its own.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .pretool import ALLOW, Verdict, guard_hook, hook_settings, lone_surrogates_replaced, vault_names
from .protocol import standalone
from .shell import inside
from .shell_writes import check_shell_writes, might_write

FILE_TOOLS: Mapping[str, str] = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
USE_CAPTURE = "save memories with the `memory_capture` MCP tool (or `agentmd capture`)"


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
    return None


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as fh:
            return fh.read()
    except OSError:
        return None


def _replace(text: str, edit: Mapping[str, Any]) -> str | None:
    """`text` after one Edit replacement, or None when its `old_string` is not there (the tool fails)."""
    old, new = edit.get("old_string"), edit.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str) or old not in text:
        return None
    return text.replace(old, new) if edit.get("replace_all") is True else text.replace(old, new, 1)


def note_fields(text: str) -> dict[str, str]:
    """A note's text as the fields the prefilters read: its frontmatter and its body."""
    from agentmd.vault_schema.frontmatter import split_frontmatter

    split = split_frontmatter(text)
    if split.yaml_text is None:
        return {"body": text}
    return {"frontmatter": split.yaml_text, "body": split.body}


def written_text(tool: str, tool_input: Mapping[str, Any], target: Path) -> dict[str, str] | dict[str, list[str]]:
    """The fields the prefilters read for one file tool call: the text it would leave in the file."""
    if tool == "Write":
        content = tool_input.get("content")
        return note_fields(content if isinstance(content, str) else "")
    if tool == "NotebookEdit":
        source = tool_input.get("new_source")
        return {"new_source": source if isinstance(source, str) else ""}
    edits_value = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    edits = [e for e in edits_value if isinstance(e, Mapping)] if isinstance(edits_value, list) else []
    text = _read(target)
    for edit in edits:
        text = None if text is None else _replace(text, edit)
    if text is not None:
        return note_fields(text)
    return {"new_string": [e["new_string"] for e in edits if isinstance(e.get("new_string"), str)]}


def judge(tool: str, tool_input: Mapping[str, Any], target: Target, contract_path: Path | None) -> Verdict:
    """The door, then the prefilters, for a file tool's write to `target` in the vault."""
    from agentmd.rules.contract import load_contract
    from agentmd.rules.door import decide

    where = f"{target.rel} in the agentmd vault {target.vault}"
    state = load_contract(target.vault, contract_path)
    if state.halted:
        return cannot_check(tool, target, f"the storage-rules contract is invalid: {state.errors[0]}")
    exists = os.path.isfile(target.path)
    decision = decide(target.vault, target.rel, state.contract, actor="agent", creating=not exists)
    if not decision.allowed:
        return Verdict(
            True,
            f"agentmd file guard: {tool} to {where} is refused by the door ({decision.rule}): "
            f"{decision.reason.rstrip('.')}. Agents' file tools meet the same door as captures; {USE_CAPTURE}, "
            "which files them where agents may write.",
        )
    from agentmd.rules.prefilter import check_fields

    verdict = check_fields(written_text(tool, tool_input, target.path))
    if not verdict.ok:
        from agentmd.engine.write.request import refusal

        return Verdict(
            True,
            f"agentmd file guard: {tool} to {where} would leave text the content prefilters refuse; "
            f"{refusal(verdict).rstrip('.')}. Take it out and try again: the `memory_capture` MCP tool (and "
            "`agentmd capture`) runs the same checks.",
        )
    return ALLOW


def cannot_check(tool: str, target: Target, why: str) -> Verdict:
    return Verdict(
        True,
        f"agentmd file guard: {tool} would write {target.rel} in the agentmd vault {target.vault}, and the guard "
        f"could not check it ({why}). An unchecked write would bypass the door and the content prefilters, so it "
        f"is refused; {USE_CAPTURE}, or fix the problem above and try again.",
    )


def check_file_tool(
    tool: str,
    tool_input: Mapping[str, Any],
    *,
    cwd: str | None,
    vault: str | os.PathLike[str] | Sequence[Path],
    contract_path: Path | None = None,
) -> Verdict:
    """Decide one Write/Edit/MultiEdit/NotebookEdit call (see the module docstring). `vault` is the vault's
    path, or every name of it (its real path first); `cwd` is the hook input's (None: this process's)."""
    field = FILE_TOOLS.get(tool)
    raw = tool_input.get(field) if field else None
    if not isinstance(raw, str) or not raw:
        return ALLOW  # no path: the tool itself refuses the call
    names = tuple(vault) if isinstance(vault, Sequence) and not isinstance(vault, str) else (Path(vault),)
    target = locate(raw, cwd, names)
    if target is None:
        return ALLOW
    try:
        return judge(tool, tool_input, target, contract_path)
    except Exception as exc:  # positively in the vault: refuse rather than let an unchecked write through
        return cannot_check(tool, target, f"{type(exc).__name__}: {exc}")


# --------------------------------------------------------------------------------------------------
# The command


def _decide(args: argparse.Namespace, tool: str, tool_input: dict[str, object], cwd: str | None) -> Verdict:
    tool_input = {k: lone_surrogates_replaced(v) if isinstance(v, str) else v for k, v in tool_input.items()}
    command = tool_input.get("command")
    if tool == "Bash" and not (isinstance(command, str) and might_write(command)):
        return ALLOW
    if tool != "Bash" and tool not in FILE_TOOLS:
        return ALLOW
    settings = hook_settings(args)
    if settings is None:  # no vault configured: nothing to protect
        return ALLOW
    if tool == "Bash":
        return check_shell_writes(str(command), cwd=cwd, vault=settings.vault)
    names = vault_names(settings, args)
    return check_file_tool(tool, tool_input, cwd=cwd, vault=names, contract_path=settings.contract_path)


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
