"""Reading a shell command line the way the PreToolUse guards need it (hooks/worktree_guard.py,
hooks/shell_writes.py): its simple commands, their redirections, and the directory each one runs in.

`ShellWalker.walk` splits a command line into simple commands at `;`, `&&`, `||`, `|`, `&`, newlines and
parentheses, and follows the effective directory through it: the hook input's `cwd`, then every `cd`/`pushd`
(a subshell's `cd` ends with the subshell; `cd -` and `popd` make it unknown). `~` and `$VAR`/`${VAR}` are
expanded from the environment and from the command's own `X=...` assignments; anything the text cannot settle
(`$(...)`, an unset variable) is unknown (None). `sh -c '...'`/`bash -c '...'` and `eval '...'` are read as
commands in their turn, behind `VAR=value` prefixes and the usual wrappers (`env`, `sudo`, `command`, `exec`,
`nohup`, `time`, `nice`, `timeout`). A subclass decides on each simple command (`command`) and on its
redirections (`redirected`); the first denial wins.

A heredoc's body (the lines after `<<WORD` up to `WORD`) is read as commands, unless a subclass says the command
it feeds reads it as data (`runs_heredoc`, `heredoc_data`). Known limits: shlex does not say whether a token was
quoted, so a quoted lone operator (`echo ';'`, `echo '>'`) is read as an operator, and a single-quoted `'$X'` is
expanded like `"$X"`.
"""

from __future__ import annotations

import base64
import glob
import itertools
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .pretool import ALLOW, Verdict

PUNCT = "();<>|&\n`"
REDIRECT = re.compile(r"&?(<<<|<<-?|<>|<&|>&|>>|>\||<|>)&?-?")
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh"})
# Reserved words that may stand before a command in a compound one (`then rm x`, `do rm x`, `! rm x`, `{ rm x;`)
LEADING_RESERVED = frozenset({"if", "then", "elif", "else", "do", "while", "until", "!", "{", "}"})
MAX_DEPTH = 4
SHELL_SHEBANG = re.compile(r"#![ \t]*\S*/(?:env[ \t]+)?(?:sh|bash|zsh|dash|ksh|mksh)\b")
MAX_SCRIPT_BYTES = 1 << 20  # a shell script larger than this is not walked (it is judged as a script not seen)
SHELL_VALUE_OPTIONS = ("-o", "+o", "-O", "+O", "--rcfile", "--init-file")  # a shell's options that take a value


@dataclass
class SimpleCommand:
    before: str  # the operator before it ("" first, "(" / ")" for the markers of a subshell)
    words: list[str]
    redirects: list[tuple[str, str]] = field(default_factory=list)  # (operator, target word)


def without_comments(command: str) -> str:
    """The command with its comments taken out: a `#` that starts a word, outside quotes, to the end of its line
    (a quote inside a comment, `# it's fine`, would otherwise leave shlex an unbalanced quote)."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(command):
        ch = command[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < len(command):
                out.append(command[i : i + 2])
                i += 2
                continue
            quote = "" if ch == quote else quote
        elif ch == "\\" and i + 1 < len(command):
            out.append(command[i : i + 2])
            i += 2
            continue
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or command[i - 1] in " \t\n;&|()"):
            end = command.find("\n", i)
            i = len(command) if end < 0 else end
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'", re.DOTALL)
_ANSI_C_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)
_ANSI_C_LETTERS = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f",
                   "v": "\v"}  # fmt: skip


def _ansi_c(m: re.Match[str]) -> str:
    """A `$'...'` word as the shell reads it (`$'/v\x61ult'` is `/vault`), quoted again for shlex."""

    def one(e: re.Match[str]) -> str:
        code = e.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(min(int(code[1:], 16), 0x10FFFF))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c" and len(code) == 2:
            return chr(ord(code[1]) & 0x1F)
        return _ANSI_C_LETTERS.get(code, code)

    return shlex.quote(_ANSI_C_ESCAPE.sub(one, m.group(1)))


def tokens(command: str) -> list[str]:
    """Shell words and operators (`&&`, `;`, `|`, `(`, newline, ...), comments left out, `$'...'` words decoded;
    raises ValueError on an unbalanced quote or a trailing backslash."""
    command = without_comments(command) if "#" in command else command
    command = _ANSI_C.sub(_ansi_c, command) if "$'" in command else command
    lex = shlex.shlex(command, posix=True, punctuation_chars=PUNCT)
    lex.whitespace = " \t\r"  # a newline separates commands, so it comes back as an operator
    lex.whitespace_split = True  # words run to the next blank or operator, as in the shell
    lex.commenters = ""  # `#` mid-word is not a comment in the shell; real comments are taken out above
    return list(lex)


def is_operator(token: str) -> bool:
    return token != "" and all(c in PUNCT for c in token)


def split_commands(toks: list[str]) -> list[SimpleCommand]:
    """Simple commands, each with its redirections taken out of its words; `(` and `)` come back as
    commands of their own with no words, so that a subshell's `cd` can be undone."""
    out: list[SimpleCommand] = []
    current = SimpleCommand("", [])
    i = 0
    while i < len(toks):
        tok = toks[i]
        if is_operator(tok) and REDIRECT.fullmatch(tok):
            if current.words and current.words[-1].isdigit():  # the fd of `2>file`
                current.words.pop()
            if i + 1 < len(toks) and not is_operator(toks[i + 1]):
                current.redirects.append((tok, toks[i + 1]))  # the target is not an argument
                i += 1
            i += 1
            continue
        if is_operator(tok):
            if current.words or current.redirects:
                out.append(current)
            current = SimpleCommand(tok, [])
            for ch in tok:
                if ch in "()":
                    out.append(SimpleCommand(ch, []))
            i += 1
            continue
        current.words.append(tok)
        i += 1
    if current.words or current.redirects:
        out.append(current)
    return out


def expand(word: str, env: Mapping[str, str]) -> str | None:
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


def absolute(word: str, base: Path | None, env: Mapping[str, str]) -> str | None:
    """The absolute path `word` spells when the shell runs in `base` (links not followed); None when it
    cannot be known."""
    text = expand(word, env)
    if text is None:
        return None
    if not os.path.isabs(text):
        if base is None:
            return None
        text = os.path.join(base, text)
    return text


def resolve(word: str, base: Path | None, env: Mapping[str, str]) -> Path | None:
    """The real absolute path `word` names when the shell runs in `base`; None when it cannot be known."""
    text = absolute(word, base, env)
    return None if text is None else Path(os.path.realpath(text))


def read_script(word: str, base: Path | None, env: Mapping[str, str], limit: int = MAX_SCRIPT_BYTES) -> str | None:
    """The text of the script file `word` names (a regular file up to `limit` bytes), or None: not there yet
    (written later on the same line, perhaps), too large, not a file, or not readable."""
    path = resolve(word, base, env)
    if path is None:
        return None
    try:
        if not path.is_file() or path.stat().st_size > limit:
            return None
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None


def inside(path: Path, vault: Path) -> bool:
    return path == vault or path.is_relative_to(vault)


def under_by_identity(path: Path, vault: Path) -> Path | None:
    """The folder of `path` (or `path` itself) that is the vault's own folder by device and inode, when one is:
    the vault by another name that no comparison of text sees (a bind mount of it, a spelling a case- or
    normalisation-blind file system takes for it). None otherwise."""
    try:
        root = os.stat(vault)
    except OSError:
        return None
    for folder in (path, *path.parents):
        try:
            st = os.stat(folder)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (root.st_dev, root.st_ino):
            return folder
    return None


def strip_wrappers(words: list[str]) -> tuple[list[str], list[str]]:
    """Drop `VAR=value` prefixes, the reserved words of compound commands (`then`, `do`, `!`, `{` ...: the body of
    an `if`, a loop or a function is a command too) and wrappers that run their argument as a command; also
    return any `env -C DIR` directory changes met on the way."""
    chdirs: list[str] = []
    while words:
        if ASSIGNMENT.match(words[0]) or words[0] in LEADING_RESERVED:
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
            while rest and (rest[0].startswith("-") or ASSIGNMENT.match(rest[0])) and rest[0] != "--":
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


def option_values(args: Sequence[str], short: str, longs: Sequence[str]) -> list[str]:
    """Every value given to an option spelled `-X V`, `-XV`, inside a bundle (`-abX V`, `-abXV`), `--long V`
    or `--long=V` (`short` is the letter, or "" for none)."""
    values: list[str] = []
    i = 0
    while i < len(args):
        arg, nxt = args[i], args[i + 1] if i + 1 < len(args) else None
        i += 1
        if arg == "--":
            break
        if arg in longs and nxt is not None:
            values.append(nxt)
            i += 1
        elif arg.startswith("--") and arg.split("=", 1)[0] in longs and "=" in arg:
            values.append(arg.split("=", 1)[1])
        elif short and arg.startswith("-") and not arg.startswith("--") and short in arg[1:]:
            rest = arg[arg.index(short, 1) + 1 :]
            if rest:
                values.append(rest)
            elif nxt is not None:
                values.append(nxt)
                i += 1
    return values


def short_flag(args: Sequence[str], flag: str, value_letters: str, longs: Sequence[str] = ()) -> bool:
    """Whether the short option `flag` is given, alone or in a bundle before any letter that takes the rest of
    the bundle as its value (`-ni`, `-Ei.bak`, `-pi`, `-sSLO`; not the `O` of `-XPOST`), or a long option
    starting with one of `longs` (`--in-place=.bak`)."""
    for arg in args:
        if arg == "--":
            return False
        if longs and arg.startswith(tuple(longs)):
            return True
        if arg.startswith("-") and not arg.startswith("--"):
            for ch in arg[1:]:
                if ch == flag:
                    return True
                if ch in value_letters:
                    break
    return False


def positionals(args: list[str], value_opts: Sequence[str], bundled_value: str = "") -> list[str]:
    """Positional arguments of a command, skipping its options (and the values of `value_opts`;
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


class ShellWalker:
    """Walks a command line (see the module docstring); subclasses judge commands and redirections."""

    def __init__(self, vault: Path, env: Mapping[str, str]) -> None:
        self.vault = Path(os.path.realpath(vault))
        self.env = dict(env)  # the command's own `X=...` assignments are added as it is read
        self.line = ""  # the whole command line, as given
        self.prefix: dict[str, str] = {}  # the `X=value` words before the command being decided
        self.fed: list[str] = []  # the files the command being decided reads on its input (`< FILE`)

    @classmethod
    def check(
        cls,
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
        walker = cls(Path(vault), env)
        walker.line = command
        return walker.walk(command, start, 0)

    def walk(self, command: str, cwd: Path | None, depth: int) -> Verdict:
        try:
            toks = tokens(command)
        except ValueError:
            return self.unreadable(command, cwd)
        stack: list[Path | None] = []
        # heredocs a line opened, in order: (delimiter, the command fed, its body's words or None when a shell
        # runs it); their bodies follow the line that opened them, one after the other
        pending: list[tuple[str, list[str], list[str] | None]] = []
        body = False  # reading a heredoc's body
        catted: list[str] = []  # the files `cat` sends down a pipe (`cat tool.sh | sh` runs them)
        for cmd in split_commands(toks):
            if pending and (body or cmd.before == "\n"):
                body = True
                delimiter, fed, data = pending[0]
                if cmd.words == [delimiter]:
                    pending.pop(0)
                    body = bool(pending)
                    verdict = self.heredoc_data(fed, data, cwd) if data is not None else ALLOW
                    if verdict.deny:
                        return verdict
                    continue
                if data is not None:
                    data.extend(cmd.words)
                    continue
            for op, target in cmd.redirects:
                if op in ("<<", "<<-"):
                    pending.append((target.lstrip("-") if op == "<<" else target, cmd.words, None))
                    if not self.runs_heredoc(cmd.words):
                        pending[-1] = (pending[-1][0], cmd.words, [])
                elif op == "<<<":  # a here-string: one word fed to the command
                    verdict = (
                        self.walk(target, cwd, depth + 1)
                        if self.runs_heredoc(cmd.words) and depth < MAX_DEPTH
                        else self.heredoc_data(cmd.words, [target], cwd)
                    )
                    if verdict.deny:
                        return verdict
            marker = not cmd.words and not cmd.redirects
            if cmd.before == "(" and marker:
                stack.append(cwd)
                continue
            if cmd.before == ")" and marker:
                if stack:
                    cwd = stack.pop()
                    self.seen(cwd, certain=True)
                continue
            verdict = self.redirected(cmd.redirects, cwd) if cmd.redirects else ALLOW
            if verdict.deny:
                return verdict
            self.fed = [target for op, target in cmd.redirects if op == "<"] or (catted if cmd.before == "|" else [])
            catted = [w for w in cmd.words[1:] if not w.startswith("-")] if cmd.words[:1] == ["cat"] else []
            verdict, cwd = self.simple(cmd.words, cwd, depth)
            if verdict.deny:
                return verdict
            self.seen(cwd, certain=False)
        for _delimiter, fed, data in pending:  # no closing line: the rest of the text was the body
            if data is not None:
                verdict = self.heredoc_data(fed, data, cwd)
                if verdict.deny:
                    return verdict
        return ALLOW

    def unreadable(self, command: str, cwd: Path | None) -> Verdict:
        """The decision on a command line shlex cannot split (an unbalanced quote, which the shell may still run:
        a quote inside a comment). Here: let it through."""
        return ALLOW

    def seen(self, cwd: Path | None, *, certain: bool) -> None:
        """Told each directory the line has been in, in turn: `certain` when it is known to be there (a subshell
        ended), not only read so from a `cd` that may have failed or run in a subshell of its own."""

    def shell_without_script(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """The decision on a shell given no `-c` script: it runs a script file, or what it reads on its input (a
        pipe, a heredoc). Here: let it through."""
        return ALLOW

    def runs_heredoc(self, words: list[str]) -> bool:
        """Whether the command `words` runs a heredoc (or a here-string) fed to it as shell commands; its lines are
        then read as commands in their turn, and otherwise handed to `heredoc_data`. Here always."""
        return True

    def heredoc_data(self, fed: list[str], data: list[str], cwd: Path | None) -> Verdict:
        """The decision on a heredoc's body (its words) when the command `fed` reads it as data or as a program."""
        return ALLOW

    def simple(self, words: list[str], cwd: Path | None, depth: int) -> tuple[Verdict, Path | None]:
        assigns = words[1:] if words and words[0] in ("export", "local", "declare", "readonly") else words
        if assigns and all(ASSIGNMENT.match(w) for w in assigns):  # `X=...` alone sets a shell variable
            for w in assigns:
                name, value = w.split("=", 1)
                expanded = expand(value, self.env)
                if expanded is None:
                    self.env.pop(name, None)  # `X=$(mktemp -d)`: "$X" cannot be known
                else:
                    self.env[name] = expanded
            return ALLOW, cwd
        leading = itertools.takewhile(lambda w: ASSIGNMENT.match(w) is not None, words)  # before the command only
        self.prefix = {w.split("=", 1)[0]: w.split("=", 1)[1] for w in leading}
        if "env" in words:  # `env GIT_DIR=… git …`: an environment given through `env` is the command's too
            given = itertools.takewhile(
                lambda w: w.startswith("-") or ASSIGNMENT.match(w), words[words.index("env") + 1 :]
            )
            self.prefix.update({w.split("=", 1)[0]: w.split("=", 1)[1] for w in given if ASSIGNMENT.match(w)})
        words, chdirs = strip_wrappers(words)
        if not words:
            return ALLOW, cwd
        here = cwd
        for d in chdirs:
            here = resolve(d, here, self.env)
        name = os.path.basename(words[0])
        args = words[1:]
        if name in ("cd", "pushd", "chdir"):
            back = self.env.get("OLDPWD")
            if cwd is not None:
                self.env["OLDPWD"] = str(cwd)
            targets = [a for a in args if not (a.startswith("-") and a != "-")]
            if not targets:
                home = self.env.get("HOME")
                return ALLOW, Path(os.path.realpath(home)) if home else None
            if targets[0] == "-":  # back where the line was, when it said so (`OLDPWD=…; cd -`)
                return ALLOW, Path(os.path.realpath(back)) if back and os.path.isabs(back) else None
            cdpath = self.prefix.get("CDPATH", self.env.get("CDPATH", ""))
            if cdpath and not targets[0].startswith(("/", "./", "../", "~")):  # `CDPATH=/tmp cd vault`
                for base in cdpath.split(":"):
                    found = resolve(targets[0], Path(base), self.env) if base else None
                    if found is not None and found.is_dir():
                        return ALLOW, found
            return ALLOW, resolve(targets[0], cwd, self.env)
        if name == "popd":
            return ALLOW, None
        if depth < MAX_DEPTH and name in SHELLS:
            for start in (self.prefix.get("BASH_ENV"), self.prefix.get("ENV")):  # files the shell runs first
                text = read_script(start, here, self.env) if start else None
                verdict = self.walk(text, here, depth + 1) if text is not None else ALLOW
                if verdict.deny:
                    return verdict, cwd
            script = self.shell_script(args)
            if script is not None:
                return self.walk(script, here, depth + 1), cwd
            operands = self.shell_operands(args)
            fed = operands[:1] or self.fed[:1]  # `bash tool.sh`, or `bash < tool.sh`
            text = read_script(fed[0], here, self.env) if fed else None
            if text is not None:  # the file's commands, read as the shell will run them
                return self.walk(text, here, depth + 1), cwd
            return self.shell_without_script(name, args, here), cwd
        text = read_script(words[0], here, self.env) if depth < MAX_DEPTH and "/" in words[0] else None
        if text is not None and SHELL_SHEBANG.match(text):  # `./tool.sh`: a shell script run as a program
            return self.walk(text, here, depth + 1), cwd
        if depth < MAX_DEPTH and name in ("source", ".") and args:
            text = read_script(args[0], here, self.env)
            if text is not None:
                return self.walk(text, here, depth + 1), cwd
        if depth < MAX_DEPTH and name == "eval":
            return self.walk(" ".join(args), here, depth + 1), cwd
        return self.command(name, words, here), cwd

    @staticmethod
    def shell_operands(args: list[str]) -> list[str]:
        """A shell's operands (its script file first), past its options and their values (`-o pipefail`)."""
        out, i = [], 0
        while i < len(args):
            if args[i] in SHELL_VALUE_OPTIONS:
                i += 2
                continue
            if not args[i].startswith(("-", "+")):
                out.append(args[i])
            i += 1
        return out

    @staticmethod
    def shell_script(args: list[str]) -> str | None:
        """The script of `sh -c SCRIPT` (after any options: `-o pipefail`, `-O extglob`, `--`), or None."""
        given = False
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
                given = True
            elif arg == "--" or (arg.startswith("-") and len(arg) > 1):
                pass
            else:
                return arg if given else None  # `bash script.sh`: a file we do not read
            i += 1
        return None

    def command(self, name: str, words: list[str], cwd: Path | None) -> Verdict:
        """The decision on one simple command (`name` is the basename of `words[0]`, wrappers stripped)."""
        return ALLOW

    def redirected(self, redirects: list[tuple[str, str]], cwd: Path | None) -> Verdict:
        """The decision on a simple command's redirections, opened in `cwd`."""
        return ALLOW


_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
MAX_SPELLINGS = 64  # words a brace expansion or a glob may stand for that the guard reads


def spellings(word: str, cwd: Path | None) -> list[str]:
    """The words the shell makes of `word`: its brace expansion (`{vault,x}`), and for each, the existing paths
    a glob in it matches (`vau?t`), beside the word itself; at most MAX_SPELLINGS."""
    words = [word]
    for _ in range(8):  # nested or several groups, one at a time
        grown = []
        for w in words:
            m = _BRACES.search(w)
            grown += [w[: m.start()] + part + w[m.end() :] for part in m.group(1).split(",")] if m else [w]
        if grown == words:
            break
        words = grown[:MAX_SPELLINGS]
    out = list(words)
    for w in words:
        if any(ch in w for ch in "*?[") and "$" not in w and "`" not in w:
            pattern = w if os.path.isabs(w) or cwd is None else os.path.join(cwd, w)
            out += sorted(glob.glob(os.path.expanduser(pattern)))[:MAX_SPELLINGS]
    return out[:MAX_SPELLINGS]


_ENCODED = re.compile(
    r"(?<![\w+/=])(?:[A-Za-z0-9+/]{4}){3,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![\w+/=])|"
    r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])"
)


def decoded_literals(text: str) -> list[str]:
    """The texts that base64 or hex words of `text` decode to, when they decode to printable text: what
    `echo WORD | base64 -d | sh` runs, read by the guards as the command it is."""
    out: list[str] = []
    for m in _ENCODED.finditer(text):
        word = m.group()
        try:
            raw = bytes.fromhex(word) if re.fullmatch(r"[0-9A-Fa-f]+", word) and len(word) % 2 == 0 else b""
            raw = raw or base64.b64decode(word, validate=True)
            decoded = raw.decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if decoded.strip() and all(c.isprintable() or c in "\n\t" for c in decoded):
            out.append(decoded)
    return out
