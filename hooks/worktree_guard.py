"""`agentmd hook worktree-guard`: a Claude Code PreToolUse hook (matcher `Bash`) that keeps git worktrees out
of the vault.

A linked worktree inside the vault is a full checkout that the sync client uploads file by file, and making
one sets `extensions.worktreeConfig` in the repository's config; `agentmd status` names such worktrees after
the fact (`git.worktrees_inside_vault`). This hook refuses the shell command before it runs.

Contract with Claude Code (hooks reference, PreToolUse): the hook reads one JSON object on stdin
(`tool_name`, `tool_input.command`, `cwd`, ...). To refuse, it prints
`{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
"permissionDecisionReason": "..."}}` on stdout and exits 0 (the reason is shown to the agent). Anything it
lets through gets no output and exit 0, so the normal permission flow carries on untouched. It never exits 2
and never exits non-zero on its own failure: a broken guard must not block the user's shell.

What is refused (`check_command`):
- `git worktree add [options] <path> [<commit-ish>]` whose `<path>` lies inside the vault, after relative
  paths are resolved against the effective directory (the hook input's `cwd`, then every `cd`/`pushd` and
  `git -C` in the command), `~` and `$VAR`/`${VAR}` are expanded from the environment and from the command's
  own `X=...` assignments, and symlinks are resolved;
- `git worktree add` run in a repository inside the vault (effective directory, or `--git-dir`, in the
  vault), whatever the target: it would register a linked worktree in the vault's own repository;
- `git worktree move <worktree> <new-path>` with `<new-path>` inside the vault;
- the same inside `sh -c '...'`/`bash -c '...'` and `eval '...'`, behind `VAR=value` prefixes and the usual
  wrappers (`env`, `sudo`, `command`, `exec`, `nohup`, `time`, `nice`, `timeout`).

What is let through: everything else, including a quoted string that merely mentions the words
(`echo "git worktree add x"`, a commit message) and commands the parser cannot read (an unbalanced quote is a
syntax error for the shell too, so that command never runs).

Undeterminable target (decision): when the command is positively a `git worktree add`/`move` but the target
or the directory it runs in cannot be known from the text (`"$(mktemp -d)"`, an unset `$VAR`, `cd "$X"`,
`cd -`, `popd`), the guard denies and asks for the path to be spelled out as a literal absolute path outside
the vault. A wrong "allow" costs a damaged vault; a wrong "deny" costs one rewritten command.

Known limits: git aliases (`git wt add x` with `alias.wt = worktree`) are not expanded; shlex does not say
whether a token was quoted, so a quoted lone operator (`echo ';' git worktree add <vault path>`) is read as an
operator; heredoc bodies are read as commands.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .pretool import ALLOW, Verdict, guard_hook, hook_settings
from .protocol import read_hook_input, standalone
from .shell import ShellWalker, inside, positionals, resolve

__all__ = ["ALLOW", "Verdict", "check_command", "cmd_hook_worktree_guard", "main", "read_hook_input"]

# git's global options that take their value as the next word (besides -C and --git-dir, handled apart)
_GIT_VALUE_OPTS = frozenset({"-c", "--namespace", "--config-env", "--work-tree", "--super-prefix", "--list-cmds"})


@dataclass
class _GitCall:
    cwd: Path | None  # after every -C
    git_dir: str | None
    args: list[str]  # after the subcommand's name


def _git_call(words: list[str], cwd: Path | None, env: Mapping[str, str]) -> tuple[str, _GitCall]:
    """The subcommand of a `git ...` word list and where it runs."""
    i = 1
    git_dir: str | None = None
    while i < len(words):
        arg = words[i]
        if arg == "-C":
            if i + 1 < len(words) and words[i + 1] != "":
                cwd = resolve(words[i + 1], cwd, env)
            i += 2
        elif arg == "--git-dir":
            git_dir = words[i + 1] if i + 1 < len(words) else None
            i += 2
        elif arg.startswith("--git-dir="):
            git_dir = arg.split("=", 1)[1]
            i += 1
        elif arg in _GIT_VALUE_OPTS:
            i += 2
        elif arg.startswith("-"):
            i += 1
        else:
            return arg, _GitCall(cwd, git_dir, words[i + 1 :])
    return "", _GitCall(cwd, git_dir, [])


class _Walker(ShellWalker):
    def command(self, name: str, words: list[str], cwd: Path | None) -> Verdict:
        return self.git(words, cwd) if name == "git" else ALLOW

    def git(self, words: list[str], cwd: Path | None) -> Verdict:
        sub, call = _git_call(words, cwd, self.env)
        if sub != "worktree" or not call.args:
            return ALLOW
        action, rest = call.args[0], call.args[1:]
        if action == "add":
            pos = positionals(rest, ("-b", "-B", "--reason"), bundled_value="bB")
            if not pos:
                return ALLOW  # git refuses `worktree add` without a path
            return self.judge_add(pos[0], call)
        if action == "move":
            pos = positionals(rest, ())
            if len(pos) < 2:
                return ALLOW
            return self.judge_target(pos[1], call.cwd, "git worktree move")
        return ALLOW

    def judge_add(self, target: str, call: _GitCall) -> Verdict:
        repo: Path | None = call.cwd
        if call.git_dir is not None:
            repo = resolve(call.git_dir, call.cwd, self.env)
        if repo is None:
            return self.unknown("git worktree add", "the directory it runs in")
        if inside(repo, self.vault):
            return Verdict(
                True,
                f"agentmd worktree guard: `git worktree add` here runs in {repo}, which is inside the agentmd "
                f"vault {self.vault}; it would register a linked worktree in the vault's own repository (and "
                "switch its config to extensions.worktreeConfig), which breaks the vault's git history and sync. "
                "Create the worktree from the project's own repository, outside the vault.",
            )
        return self.judge_target(target, call.cwd, "git worktree add")

    def judge_target(self, target: str, cwd: Path | None, what: str) -> Verdict:
        where = resolve(target, cwd, self.env)
        if where is None:
            return self.unknown(what, f"its target {target!r}")
        if inside(where, self.vault):
            return Verdict(
                True,
                f"agentmd worktree guard: `{what}` would put a git worktree at {where}, inside the agentmd vault "
                f"{self.vault}. A worktree in the vault is a whole checkout for the sync client to upload and "
                "it marks the vault's repository with extensions.worktreeConfig; put it in a folder outside the "
                "vault instead and run the command again.",
            )
        return ALLOW

    def unknown(self, what: str, part: str) -> Verdict:
        return Verdict(
            True,
            f"agentmd worktree guard: cannot tell from the command text where `{what}` would act ({part} depends "
            f"on a variable, a command substitution or a `cd` it cannot follow), and a worktree must never land "
            f"inside the agentmd vault {self.vault}. Run it again with the directory and the target written out "
            "as literal absolute paths outside the vault.",
        )


check_command = _Walker.check  # check_command(command, *, cwd, vault, env=None) -> Verdict


# --------------------------------------------------------------------------------------------------
# The command


def _decide(args: argparse.Namespace, _tool: str, tool_input: dict[str, object], cwd: str | None) -> Verdict:
    command = tool_input.get("command")
    if not isinstance(command, str) or "worktree" not in command:
        return ALLOW
    settings = hook_settings(args)
    if settings is None:  # no vault configured: nothing to protect
        return ALLOW
    return check_command(command, cwd=cwd, vault=settings.vault)


def cmd_hook_worktree_guard(args: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO | None = None) -> int:
    """PreToolUse hook: print the deny object for a command that would put a worktree in the vault; print
    nothing otherwise. Always exits 0; a failure of the guard itself lets the command through."""
    return guard_hook("worktree-guard", _decide, args, out, err, stdin)


main = standalone("worktree-guard", cmd_hook_worktree_guard)  # `python -m agentmd.hooks.worktree_guard`

if __name__ == "__main__":
    sys.exit(main())
