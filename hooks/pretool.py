"""What agentmd's PreToolUse guards share (hooks/worktree_guard.py, hooks/file_guard.py): the tool call they
read (hooks/protocol.py reads the payload), the vault they protect, and the decision they print.

Contract with Claude Code (hooks reference, PreToolUse): the hook reads one JSON object on stdin
(`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`, ...). To refuse, it
prints `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
"permissionDecisionReason": "..."}}` on stdout and exits 0 (the reason is shown to the agent). Anything it lets
through gets no output and exit 0, so the normal permission flow carries on untouched.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agentmd.hooks.protocol import read_hook_input, write_output

if TYPE_CHECKING:
    from agentmd.engine.settings import Settings

HOOK_EVENT = "PreToolUse"


@dataclass(frozen=True)
class Verdict:
    """A guard's decision on one tool call."""

    deny: bool
    reason: str = ""

    def hook_output(self) -> dict[str, object] | None:
        """The PreToolUse stdout object for a denial; None (print nothing) when the tool may run."""
        if not self.deny:
            return None
        return {
            "hookSpecificOutput": {
                "hookEventName": HOOK_EVENT,
                "permissionDecision": "deny",
                "permissionDecisionReason": self.reason,
            }
        }

    def emit(self, out: TextIO) -> None:
        """Print the decision the way Claude Code reads it (nothing at all for an allow)."""
        output = self.hook_output()
        if output is not None:
            write_output(out, output)


ALLOW = Verdict(False)


def hook_input(stdin: TextIO | None) -> tuple[str, dict[str, object], str | None]:
    """(tool_name, tool_input, cwd) of the PreToolUse payload on `stdin` (default: this process's stdin);
    empty values for anything missing or of the wrong type."""
    payload = read_hook_input(sys.stdin if stdin is None else stdin)
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    cwd = payload.get("cwd")
    return (
        tool if isinstance(tool, str) else "",
        tool_input if isinstance(tool_input, dict) else {},
        cwd if isinstance(cwd, str) and cwd else None,
    )


def hook_settings(args: argparse.Namespace) -> Settings | None:
    """The settings naming the vault to protect (`--vault`, else `$AGENTMD_VAULT`, else the config file), or
    None when no vault is configured: then there is nothing to protect."""
    from agentmd.engine.errors import ConfigError
    from agentmd.engine.settings import resolve

    try:
        return resolve(vault=args.vault, index=args.index, config=args.config, require_vault=False)
    except ConfigError:
        return None


def vault_names(settings: Settings, args: argparse.Namespace) -> tuple[Path, ...]:
    """Every absolute name of the vault: its real path, and the path as given when that goes through a link
    (so a target spelled through the given name is recognised before its links are followed)."""
    names = [Path(os.path.realpath(settings.vault))]
    given = args.vault or os.environ.get("AGENTMD_VAULT")
    if given:
        spelled = Path(os.path.normpath(os.path.abspath(os.path.expanduser(given))))
        if spelled not in names:
            names.append(spelled)
    return tuple(names)


def guard_hook(
    name: str,
    decide: Callable[[argparse.Namespace, str, dict[str, object], str | None], Verdict],
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO,
    stdin: TextIO | None,
    on_failure: Callable[[argparse.Namespace, dict[str, object], str | None, str], Verdict | None] | None = None,
) -> int:
    """Run one PreToolUse guard: read the payload, `decide(args, tool_name, tool_input, cwd)`, print a denial.
    Always exits 0 (exit 2 would block the tool on the guard's own failure): a failure that escapes `decide` is
    one line on stderr and lets the call through, unless `on_failure(args, tool_input, cwd, why)` returns the
    denial a guard gives a call it could not judge (the file guard: one that names the vault)."""
    tool_input: dict[str, object] = {}
    cwd: str | None = None
    try:
        tool, tool_input, cwd = hook_input(stdin)
        decide(args, tool, tool_input, cwd).emit(out)
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"
        denial = None
        if on_failure is not None:
            with contextlib.suppress(Exception):  # the line below says the call could not be checked
                denial = on_failure(args, tool_input, cwd, why)
        if denial is not None:
            err.write(f"agentmd {name}: could not check the tool call ({why}); refused\n")
            denial.emit(out)
        else:
            err.write(f"agentmd {name}: could not check the tool call ({why}); allowed\n")
    return 0


def lone_surrogates_replaced(text: str) -> str:
    """`text` with each lone surrogate (which no UTF-8 path can hold) as U+FFFD, as a JavaScript runtime writes
    such a string to disk: the name the file would really get."""
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
