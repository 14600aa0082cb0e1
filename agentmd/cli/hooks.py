"""`agentmd hook NAME` (the Claude Code hooks themselves, protocol on stdin/stdout) and `agentmd hooks
install|uninstall` (agentmd's hooks merged into, or taken out of, a Claude Code settings file).

The hooks' own logic lives in `agentmd.hooks`; `agentmd hook recall` is registered by `agentmd.hooks.recall`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from agentmd.cli.base import EXIT_OK, number, port, settings_of, subcommands
from agentmd.cli.output import emit

# The session-start hook's look-up budget (hooks/session_start.py DEFAULT_BUDGET), written out so that building
# the parser loads no hook. tests/cli/test_cli_imports.py checks they agree.
DEFAULT_BUDGET = 1.0

if TYPE_CHECKING:
    from pathlib import Path

    from agentmd.hooks.install import Plan


def add_hook_group(sub: Any, common: argparse.ArgumentParser) -> None:
    """The `agentmd hook` group, with the session-start, worktree-guard and file-guard hooks in it."""
    p = sub.add_parser("hook", help="agent hooks (Claude Code's hook protocol on stdin/stdout)")
    add_hook_parsers(subcommands(p, "hook_command", "HOOK"), common)


def add_hook_parsers(hook_sub: Any, common: argparse.ArgumentParser) -> None:
    """Register `agentmd hook session-start`, `worktree-guard` and `file-guard` under the `hook` group."""
    p = hook_sub.add_parser(
        "session-start",
        parents=[common],
        help="Claude Code SessionStart hook: the memory's status in one or two lines",
        description="Prints the vault's status colour, red items, queue and last probe for a new agent "
        "session (with --json, as hookSpecificOutput.additionalContext). Always exits 0.",
    )
    p.add_argument("--port", type=port, help="the daemon's port (default: read from its state file)")
    p.add_argument(
        "--budget",
        type=number,
        default=DEFAULT_BUDGET,
        help=f"seconds the look-up may take (default {DEFAULT_BUDGET:g})",
    )
    p.set_defaults(func=cmd_hook_session_start)
    p = hook_sub.add_parser(
        "worktree-guard",
        parents=[common],
        help="Claude Code PreToolUse hook (Bash): refuse a git worktree inside the vault",
        description="Reads a PreToolUse hook payload on stdin; prints a deny decision when the shell command "
        "would create a git worktree inside the vault, nothing otherwise. Always exits 0.",
    )
    p.set_defaults(func=cmd_hook_worktree_guard)
    p = hook_sub.add_parser(
        "file-guard",
        parents=[common],
        help="Claude Code PreToolUse hook (Write, Edit, MultiEdit, NotebookEdit, Bash): the door and the content "
        "prefilters on writes into the vault",
        description="Reads a PreToolUse hook payload on stdin; prints a deny decision when a file tool would write "
        "into the vault where the door refuses agents or text the content prefilters refuse, or when a shell "
        "command visibly writes into the vault; nothing otherwise. Always exits 0.",
    )
    p.set_defaults(func=cmd_hook_file_guard)


def cmd_hook_session_start(args: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO | None = None) -> int:
    from agentmd.hooks.session_start import cmd_hook_session_start as run

    return run(args, out, err, stdin)


def cmd_hook_worktree_guard(args: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO | None = None) -> int:
    from agentmd.hooks.worktree_guard import cmd_hook_worktree_guard as run

    return run(args, out, err, stdin)


def cmd_hook_file_guard(args: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO | None = None) -> int:
    from agentmd.hooks.file_guard import cmd_hook_file_guard as run

    return run(args, out, err, stdin)


def _where(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--project", metavar="DIR", help="the project's .claude/settings.local.json, yours alone (DIR is its root)"
    )
    where.add_argument("--user", action="store_true", help="your ~/.claude/settings.json (the default)")
    p.add_argument("--dry-run", action="store_true", help="print the change as a diff and write nothing")


def add_hooks_install_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register `agentmd hooks install` and `agentmd hooks uninstall` on the top-level subparsers."""
    p = sub.add_parser("hooks", help="install or remove agentmd's Claude Code hooks")
    hsub = subcommands(p, "hooks_command", "ACTION")
    i = hsub.add_parser(
        "install",
        parents=[common],
        help="merge the recall, session-start, worktree-guard and file-guard hooks into a Claude Code settings file",
    )
    _where(i)
    i.set_defaults(func=cmd_hooks_install)
    u = hsub.add_parser("uninstall", parents=[common], help="remove exactly the hooks `install` added")
    _where(u)
    u.set_defaults(func=cmd_hooks_uninstall)


def _target(args: argparse.Namespace) -> Path:
    from agentmd.hooks.install import settings_path

    return settings_path(project=getattr(args, "project", None), user=bool(getattr(args, "user", False)))


def _report(args: argparse.Namespace, out: TextIO, plan: Plan, backup: Path | None, dry_run: bool) -> None:
    diff = plan.diff() if plan.changed else ""
    payload = {
        "action": plan.action,
        "settings": str(plan.path),
        "changed": plan.changed,
        "dry_run": dry_run,
        "backup": str(backup) if backup else None,
        "diff": diff,
        "commands": plan.commands,
    }
    if not plan.changed:
        what = "already installed" if plan.action == "install" else "not installed"
        text = f"agentmd hooks {what} in {plan.path}; nothing changed"
    elif dry_run:
        text = f"{diff}dry run: {plan.path} would change as above; nothing was written"
    else:
        verb = "installed into" if plan.action == "install" else "removed from"
        text = f"{diff}agentmd hooks {verb} {plan.path}"
        if backup:
            text += f" (previous version kept as {backup})"
        elif plan.old_text is None:
            text += " (new file)"
        text += "\nClaude Code sessions already open may need a restart (or a look at /hooks) to pick this up"
    emit(out, args, payload, text)


def cmd_hooks_install(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.hooks.install import agentmd_argv, apply, hook_commands, moved_checkout_note, plan_install

    settings = settings_of(args)
    executable = agentmd_argv()
    commands = hook_commands(executable, settings.vault, index=args.index, config=args.config)
    plan = plan_install(_target(args), commands)
    backup = None if args.dry_run else apply(plan)
    _report(args, out, plan, backup, args.dry_run)
    note = moved_checkout_note(executable)
    if note and not args.json:
        err.write(note + "\n")
    project = getattr(args, "project", None)
    if project is not None and not args.json:
        from agentmd.hooks.install import plan_uninstall, shared_project_settings

        shared = shared_project_settings(project)
        if plan_uninstall(shared).changed:
            err.write(
                f"note: {shared}, the settings the project shares with its team, still holds agentmd hooks from an "
                f"earlier install, naming this machine's paths: `agentmd hooks uninstall --project {project}` "
                "takes them out of both files, then install again\n"
            )
    return EXIT_OK


def cmd_hooks_uninstall(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.hooks.install import apply, plan_uninstall, shared_project_settings

    plan = plan_uninstall(_target(args))
    dry_run = bool(getattr(args, "dry_run", False))
    backup = None if dry_run else apply(plan)
    _report(args, out, plan, backup, dry_run)
    project = getattr(args, "project", None)
    if project is not None:  # an earlier install put them into the team's shared file
        shared = plan_uninstall(shared_project_settings(project))
        if shared.changed:
            backup = None if dry_run else apply(shared)
            _report(args, out, shared, backup, dry_run)
    return EXIT_OK
