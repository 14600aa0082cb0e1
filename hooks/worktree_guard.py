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
import json
import os
import re
import shlex
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

HOOK_EVENT = "PreToolUse"
_PUNCT = "();<>|&\n`"
_REDIRECT = re.compile(r"&?(<<<|<<-?|<>|<&|>&|>>|>\||<|>)&?-?")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh"})
_MAX_DEPTH = 4
# git's global options that take their value as the next word (besides -C and --git-dir, handled apart)
_GIT_VALUE_OPTS = frozenset({"-c", "--namespace", "--config-env", "--work-tree", "--super-prefix", "--list-cmds"})
_UNKNOWN = object()  # a directory the command moves into that cannot be known from its text


@dataclass(frozen=True)
class Verdict:
    """The guard's decision on one shell command."""

    deny: bool
    reason: str = ""

    def hook_output(self) -> dict[str, Any] | None:
        """The PreToolUse stdout object for a denial; None (print nothing) when the command may run."""
        if not self.deny:
            return None
        return {
            "hookSpecificOutput": {
                "hookEventName": HOOK_EVENT,
                "permissionDecision": "deny",
                "permissionDecisionReason": self.reason,
            }
        }


ALLOW = Verdict(False)


# --------------------------------------------------------------------------------------------------
# Reading the hook input


def read_hook_input(stream: TextIO | None, timeout: float = 2.0) -> dict[str, Any]:
    """The hook's JSON input from `stream`, or {} when there is none, it is not JSON, or it does not arrive
    within `timeout` seconds (a terminal, or a parent that never closes the pipe)."""
    if stream is None:
        return {}
    try:
        if stream.isatty():
            return {}
    except (AttributeError, ValueError, OSError):
        pass
    box: dict[str, str] = {}

    def read() -> None:
        try:
            box["text"] = stream.read()
        except (OSError, ValueError, UnicodeDecodeError):
            box["text"] = ""

    reader = threading.Thread(target=read, name="agentmd-hook-stdin", daemon=True)
    reader.start()
    reader.join(timeout)
    try:
        data = json.loads(box.get("text") or "")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


# --------------------------------------------------------------------------------------------------
# Parsing


def _tokens(command: str) -> list[str]:
    """Shell words and operators (`&&`, `;`, `|`, `(`, newline, ...); raises ValueError on an unbalanced
    quote or a trailing backslash."""
    lex = shlex.shlex(command, posix=True, punctuation_chars=_PUNCT)
    lex.whitespace = " \t\r"  # a newline separates commands, so it comes back as an operator
    lex.whitespace_split = True  # words run to the next blank or operator, as in the shell
    lex.commenters = ""  # `#` mid-word is not a comment in the shell; a real comment is harmless words
    return list(lex)


def _is_operator(token: str) -> bool:
    return token != "" and all(c in _PUNCT for c in token)


def _split(tokens: list[str]) -> list[tuple[str, list[str]]]:
    """Simple commands as (operator before it, words), redirections removed; `(` and `)` come back as
    commands of their own ("(", []) and (")", []) so that a subshell's `cd` can be undone."""
    out: list[tuple[str, list[str]]] = []
    words: list[str] = []
    before = ""
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if _is_operator(tok) and _REDIRECT.fullmatch(tok):
            if words and words[-1].isdigit():  # the fd of `2>file`
                words.pop()
            if i + 1 < len(tokens) and not _is_operator(tokens[i + 1]):
                i += 1  # the redirection's target is not an argument
            i += 1
            continue
        if _is_operator(tok):
            if words:
                out.append((before, words))
            words = []
            before = tok
            for ch in tok:
                if ch in "()":
                    out.append((ch, []))
            i += 1
            continue
        words.append(tok)
        i += 1
    if words:
        out.append((before, words))
    return out


def _expand(word: str, env: Mapping[str, str]) -> str | None:
    """`~` and `$VAR`/`${VAR}` expanded from `env`; None when something is left the text cannot settle
    (an unset variable, `$(...)`, a backtick)."""
    if word == "~" or word.startswith("~/"):
        home = env.get("HOME")
        if not home:
            return None
        word = home + word[1:]
    elif word.startswith("~"):
        expanded = os.path.expanduser(word)
        if expanded == word:
            return None
        word = expanded

    def sub(m: re.Match[str]) -> str:
        value = env.get(m.group(1) or m.group(2))
        return "\x00" if value is None else value

    word = _VAR.sub(sub, word)
    if "\x00" in word or "$" in word or "`" in word:
        return None
    return word


def _resolve(word: str, base: Path | None, env: Mapping[str, str]) -> Path | None:
    """The real absolute path `word` names when the shell runs in `base`; None when it cannot be known."""
    text = _expand(word, env)
    if text is None:
        return None
    if not os.path.isabs(text):
        if base is None:
            return None
        text = os.path.join(base, text)
    return Path(os.path.realpath(text))


def _inside(path: Path, vault: Path) -> bool:
    return path == vault or path.is_relative_to(vault)


def _strip_wrappers(words: list[str]) -> tuple[list[str], list[str]]:
    """Drop `VAR=value` prefixes and wrappers that run their argument as a command; also return any
    `env -C DIR` directory changes met on the way."""
    chdirs: list[str] = []
    while words:
        if _ASSIGNMENT.match(words[0]):
            words = words[1:]
            continue
        name = os.path.basename(words[0])
        rest = words[1:]
        if name in ("command", "builtin", "exec", "nohup", "time", "noglob"):
            while rest and rest[0].startswith("-") and rest[0] != "--":
                rest = rest[1:]
        elif name in ("sudo", "doas"):
            while rest and rest[0].startswith("-") and rest[0] != "--":
                takes = rest[0] in ("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T")
                if rest[0] == "-D" and len(rest) > 1:
                    chdirs.append(rest[1])
                rest = rest[2:] if takes else rest[1:]
        elif name == "env":
            while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])) and rest[0] != "--":
                opt = rest[0]
                if opt in ("-C", "--chdir") and len(rest) > 1:
                    chdirs.append(rest[1])
                    rest = rest[2:]
                elif opt.startswith("--chdir="):
                    chdirs.append(opt.split("=", 1)[1])
                    rest = rest[1:]
                elif opt in ("-u", "--unset", "-S", "--split-string"):
                    rest = rest[2:]
                else:
                    rest = rest[1:]
        elif name == "nice":
            while rest and rest[0].startswith("-") and rest[0] != "--":
                rest = rest[2:] if rest[0] in ("-n", "--adjustment") else rest[1:]
        elif name == "timeout":
            while rest and rest[0].startswith("-") and rest[0] != "--":
                rest = rest[2:] if rest[0] in ("-s", "--signal", "-k", "--kill-after") else rest[1:]
            rest = rest[1:]  # the duration
        else:
            break
        if rest and rest[0] == "--":
            rest = rest[1:]
        words = rest
    return words, chdirs


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
                cwd = _resolve(words[i + 1], cwd, env)
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


def _positionals(args: list[str], value_opts: Sequence[str], bundled_value: str = "") -> list[str]:
    """Positional arguments of a git subcommand, skipping its options (and the values of `value_opts`;
    `bundled_value` lists short options that take a value inside a bundle like `-fb name`)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out.extend(args[i + 1 :])
            break
        if arg in value_opts:
            i += 2
            continue
        if arg.startswith("--"):
            i += 1
            continue
        if arg.startswith("-") and len(arg) > 1:
            for k, ch in enumerate(arg[1:], 1):
                if ch in bundled_value:
                    if k == len(arg) - 1:
                        i += 1  # the value is the next word
                    break
            i += 1
            continue
        out.append(arg)
        i += 1
    return out


class _Walker:
    def __init__(self, vault: Path, env: Mapping[str, str]) -> None:
        self.vault = Path(os.path.realpath(vault))
        self.env = dict(env)  # the command's own `X=...` assignments are added as it is read

    def walk(self, command: str, cwd: Path | None, depth: int) -> Verdict:
        try:
            tokens = _tokens(command)
        except ValueError:
            return ALLOW  # the shell cannot parse it either, so it will not run
        stack: list[Path | None] = []
        for before, words in _split(tokens):
            if before == "(" and not words:
                stack.append(cwd)
                continue
            if before == ")" and not words:
                if stack:
                    cwd = stack.pop()
                continue
            verdict, cwd = self.simple(words, cwd, depth)
            if verdict.deny:
                return verdict
        return ALLOW

    def simple(self, words: list[str], cwd: Path | None, depth: int) -> tuple[Verdict, Path | None]:
        assigns = words[1:] if words and words[0] in ("export", "local", "declare", "readonly") else words
        if assigns and all(_ASSIGNMENT.match(w) for w in assigns):  # `X=...` alone sets a shell variable
            for w in assigns:
                name, value = w.split("=", 1)
                expanded = _expand(value, self.env)
                if expanded is None:
                    self.env.pop(name, None)  # `X=$(mktemp -d)`: "$X" cannot be known
                else:
                    self.env[name] = expanded
            return ALLOW, cwd
        words, chdirs = _strip_wrappers(words)
        if not words:
            return ALLOW, cwd
        here = cwd
        for d in chdirs:
            here = _resolve(d, here, self.env)
        name = os.path.basename(words[0])
        args = words[1:]
        if name in ("cd", "pushd", "chdir"):
            targets = [a for a in args if not (a.startswith("-") and a != "-")]
            if not targets:
                home = self.env.get("HOME")
                return ALLOW, Path(os.path.realpath(home)) if home else None
            if targets[0] == "-":
                return ALLOW, None
            return ALLOW, _resolve(targets[0], cwd, self.env)
        if name == "popd":
            return ALLOW, None
        if depth < _MAX_DEPTH and name in _SHELLS:
            script = self.shell_script(args)
            if script is not None:
                return self.walk(script, here, depth + 1), cwd
            return ALLOW, cwd
        if depth < _MAX_DEPTH and name == "eval":
            return self.walk(" ".join(args), here, depth + 1), cwd
        if name == "git":
            return self.git(words, here), cwd
        return ALLOW, cwd

    @staticmethod
    def shell_script(args: list[str]) -> str | None:
        for i, arg in enumerate(args):
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
                return args[i + 1] if i + 1 < len(args) else None
            if not arg.startswith("-"):
                return None  # `bash script.sh`: a file we do not read
        return None

    def git(self, words: list[str], cwd: Path | None) -> Verdict:
        sub, call = _git_call(words, cwd, self.env)
        if sub != "worktree" or not call.args:
            return ALLOW
        action, rest = call.args[0], call.args[1:]
        if action == "add":
            pos = _positionals(rest, ("-b", "-B", "--reason"), bundled_value="bB")
            if not pos:
                return ALLOW  # git refuses `worktree add` without a path
            return self.judge_add(pos[0], call)
        if action == "move":
            pos = _positionals(rest, ())
            if len(pos) < 2:
                return ALLOW
            return self.judge_target(pos[1], call.cwd, "git worktree move")
        return ALLOW

    def judge_add(self, target: str, call: _GitCall) -> Verdict:
        repo: Path | None = call.cwd
        if call.git_dir is not None:
            repo = _resolve(call.git_dir, call.cwd, self.env)
        if repo is None:
            return self.unknown("git worktree add", "the directory it runs in")
        if _inside(repo, self.vault):
            return Verdict(
                True,
                f"agentmd worktree guard: `git worktree add` here runs in {repo}, which is inside the agentmd "
                f"vault {self.vault}; it would register a linked worktree in the vault's own repository (and "
                "switch its config to extensions.worktreeConfig), which breaks the vault's git history and sync. "
                "Create the worktree from the project's own repository, outside the vault.",
            )
        return self.judge_target(target, call.cwd, "git worktree add")

    def judge_target(self, target: str, cwd: Path | None, what: str) -> Verdict:
        where = _resolve(target, cwd, self.env)
        if where is None:
            return self.unknown(what, f"its target {target!r}")
        if _inside(where, self.vault):
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


def check_command(
    command: str,
    *,
    cwd: str | os.PathLike[str] | None,
    vault: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
) -> Verdict:
    """Decide one shell command. `cwd` is where the shell starts (the hook input's `cwd`; None uses this
    process's directory); `env` supplies `HOME` and the variables to expand (default: os.environ)."""
    env = os.environ if env is None else env
    start = Path(os.path.realpath(cwd if cwd else os.getcwd()))
    return _Walker(Path(vault), env).walk(command, start, 0)


# --------------------------------------------------------------------------------------------------
# The command


def _vault(args: argparse.Namespace) -> Path | None:
    from agentmd.engine.errors import ConfigError
    from agentmd.engine.settings import resolve

    try:
        return resolve(vault=args.vault, index=args.index, config=args.config, require_vault=False).vault
    except ConfigError:
        return None


def cmd_hook_worktree_guard(args: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO | None = None) -> int:
    """PreToolUse hook: print the deny object for a command that would put a worktree in the vault; print
    nothing otherwise. Always exits 0 (exit 2 would block the tool on the guard's own failure)."""
    try:
        payload = read_hook_input(sys.stdin if stdin is None else stdin)
        tool_input = payload.get("tool_input")
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        if not isinstance(command, str) or "worktree" not in command:
            return 0
        vault = _vault(args)
        if vault is None:  # no vault configured: nothing to protect
            return 0
        cwd = payload.get("cwd")
        verdict = check_command(command, cwd=cwd if isinstance(cwd, str) and cwd else None, vault=vault)
        output = verdict.hook_output()
        if output is not None:
            out.write(json.dumps(output, ensure_ascii=False) + "\n")
            out.flush()
    except Exception as exc:  # never block the user's shell for the guard's own failure
        err.write(f"agentmd worktree-guard: could not check the command ({type(exc).__name__}: {exc}); allowed\n")
    return 0


def standalone_common() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--vault")
    p.add_argument("--index")
    p.add_argument("--config")
    p.add_argument("--json", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """`python -m agentmd.hooks.worktree_guard [--vault PATH]`: the same hook without the full CLI's start-up."""
    parser = argparse.ArgumentParser(prog="agentmd hook worktree-guard", parents=[standalone_common()])
    args, _unknown = parser.parse_known_args(argv)
    return cmd_hook_worktree_guard(args, out or sys.stdout, err or sys.stderr, stdin)


if __name__ == "__main__":
    sys.exit(main())
