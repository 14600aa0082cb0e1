"""`agentmd-hook HOOK [flags]`: the light entry point agent hooks run on every prompt or tool call.

`agentmd hook NAME` goes through the whole command line first; this entry point imports nothing but the
standard library before loading the one hook module it is asked for. With the daemon up, the recall hook
(hooks/recall/light.py) then needs only the engine's leaves that find and call it: one loopback call, in
which the daemon runs the whole recall and counts what it shows (tests/cli/test_cli_imports.py pins the set);
only without a daemon does it load the engine (tantivy, the contract, the note model). bench/hook_bench.py
measures it, process start to exit, and `--profile` says where that time goes.

    agentmd-hook recall [--vault PATH] [--token-budget N] [--max-entries N] [--time-budget S] [-v]
    agentmd-hook session-start [...]     (hooks/session_start.py)
    agentmd-hook worktree-guard [...]    (hooks/worktree_guard.py)
    agentmd-hook file-guard [...]        (hooks/file_guard.py)

Claude Code settings (`~/.claude/settings.json` or the project's `.claude/settings.json`):

    {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "agentmd-hook recall"}]}]}}

An unknown hook name (a typo in a settings file) prints the hooks there are on stderr and exits 1: Claude Code
shows a hook's exit 1 to the person as an error and carries on, so the agent is never blocked (exit 2 would
block it) and the mistake does not pass silently.
"""

from __future__ import annotations

import sys

HOOKS = {
    "recall": "UserPromptSubmit: prior learnings from the vault, as reference, within a token budget",
    "session-start": "SessionStart: the memory's status in a line or two",
    "worktree-guard": "PreToolUse (Bash): refuse a git worktree inside the vault",
    "file-guard": "PreToolUse (file tools, Bash): the door and prefilters on vault writes; agentmd's own files",
}
# each hook's module, whose `main(argv)` runs it (hooks/protocol.py builds the others' from their commands)
MODULES = {
    "recall": "agentmd.hooks.recall.light",
    "session-start": "agentmd.hooks.session_start",
    "worktree-guard": "agentmd.hooks.worktree_guard",
    "file-guard": "agentmd.hooks.file_guard",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    name = argv[0] if argv else ""
    if name in MODULES:
        import importlib

        return int(importlib.import_module(MODULES[name]).main(argv[1:]))
    listing = "\n".join(f"  {n:<15} {what}" for n, what in HOOKS.items())
    wrong = f"agentmd-hook: there is no hook {name!r}\n" if name and name not in ("-h", "--help") else ""
    sys.stderr.write(f"{wrong}usage: agentmd-hook HOOK [flags]\nhooks:\n{listing}\n")
    return 1 if wrong or not name else 0


if __name__ == "__main__":
    sys.exit(main())
