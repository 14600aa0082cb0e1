"""Shell commands that visibly write into the vault: the Bash half of `agentmd hook file-guard`
(hooks/file_guard.py).

A shell write bypasses the door and the content prefilters, so `check_shell_writes` refuses a command whose
text shows it writing, moving or deleting a path inside the vault:

- output redirections `>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>&FILE` whose target lies in the vault (`2>&1`
  and `>&2` only duplicate a descriptor);
- `tee [-a] FILE...`; `cp`, `install`, `ln`, `rsync` with a destination in the vault (the last operand, or
  `-t DIR`); `mv` and `rm`, `rmdir`, `unlink`, `shred` with any operand in the vault; `touch`, `mkdir`,
  `truncate` with an operand in the vault; `dd of=FILE`; `sed -i` and `perl -i` on a file in the vault;
  `curl -o FILE`, `curl -O` and `wget` writing into the vault (`-O FILE`, `-P DIR`, or the directory it runs
  in); `find` in the vault with `-delete` or `-exec rm ...`.

Paths are read as hooks/shell.py reads them: relative to the effective directory (`cwd`, `cd`, `pushd`),
after `~` and `$VAR` expansion, through `sh -c`, `eval` and the usual wrappers, and with links followed; a
path counts as in the vault when it resolves there, or when its name does (`rm` deletes a link in the vault
even when the link points out). Reading (`cat`, `grep -r`, `rg`, `less`, `cp` out of the vault) passes, and
git commands are left to git and the worktree guard. A target the text cannot settle (an unset variable,
`$(...)`, a `cd` into one) is not positively in the vault, so it passes: the guard stops visible writes, not
a determined program (`python -c`, a script, a path built at run time).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from .pretool import ALLOW, Verdict
from .shell import ShellWalker, absolute, inside, positionals

# a cheap look at the text first: a command with none of these cannot write visibly
_MIGHT_WRITE = re.compile(
    r">|\b(?:tee|cp|mv|rm|rmdir|unlink|shred|ln|install|rsync|touch|mkdir|truncate|dd|sed|perl|curl|wget|find"
    r"|sponge|ed|ex|chmod|chown|chgrp|chattr|setfacl)\b"
)
_CURL_VALUE_LETTERS = "AbCcDdEeFHhKmoQrTtuwXYyz"  # curl's short options that take a value
_DELETES = frozenset({"rm", "rmdir", "unlink", "shred"})
_COPIES = frozenset({"cp", "install", "ln", "rsync"})
_REWRITES = frozenset({"sponge", "ed", "ex"})  # write the file named as their operand (sponge from stdin)
_MODES = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl"})  # who may read or write a file
# options whose value is the next word, per command (so the value is not read as an operand)
_VALUE_OPTS: Mapping[str, tuple[str, ...]] = {
    "cp": ("-t", "--target-directory", "-S", "--suffix"),
    "mv": ("-t", "--target-directory", "-S", "--suffix"),
    "ln": ("-t", "--target-directory", "-S", "--suffix"),
    "install": ("-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"),
    "rsync": ("-e", "--rsh", "-f", "--filter", "--exclude", "--include", "-T", "--temp-dir", "--partial-dir"),
    "touch": ("-d", "--date", "-t", "-r", "--reference"),
    "mkdir": ("-m", "--mode"),
    "truncate": ("-s", "--size", "-r", "--reference"),
}


def might_write(command: str) -> bool:
    """False when the command text has no redirection and names no command this guard reads."""
    return bool(_MIGHT_WRITE.search(command))


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


def _script_files(args: list[str], script_opts: tuple[str, ...], value_letters: str) -> list[str]:
    """The files a sed or perl command reads (and rewrites with -i): its operands, less the script when the
    script is not given with -e/-E/-f."""
    operands = positionals(args, script_opts, bundled_value=value_letters)
    scripted = any(
        a in script_opts
        or a.startswith(("--expression", "--file"))
        or (a.startswith("-") and not a.startswith("--") and any(c in value_letters for c in a[1:]))
        for a in args
    )
    return operands if scripted else operands[1:]


class _WriteWalker(ShellWalker):
    def walk(self, command: str, cwd: Path | None, depth: int) -> Verdict:
        return super().walk(command, cwd, depth) if might_write(command) else ALLOW

    def redirected(self, redirects: list[tuple[str, str]], cwd: Path | None) -> Verdict:
        for op, target in redirects:
            if ">" not in op:
                continue  # input: <, <<, <<<, <&
            if op.endswith(">&") and (target.isdigit() or target == "-"):
                continue  # 2>&1, >&2, >&-: a descriptor, not a file
            verdict = self.judge([target], cwd, f"the redirection `{op} {target}`", "write")
            if verdict.deny:
                return verdict
        return ALLOW

    def command(self, name: str, words: list[str], cwd: Path | None) -> Verdict:
        args = words[1:]
        shown = f"`{name}`"
        if name == "tee":
            return self.judge(positionals(args, ()), cwd, shown, "write")
        if name in _DELETES:
            return self.judge(positionals(args, ()), cwd, shown, "delete")
        if name == "mv":
            dests = option_values(args, "t", ("--target-directory",))
            return self.judge(dests + positionals(args, _VALUE_OPTS[name]), cwd, shown, "move")
        if name == "ln" and not short_flag(args, "s", "St", ("--symbolic",)):
            # a hard link to a note is a second name for the same file, which writes through it would change
            # unseen (a symbolic one is followed to the vault, and judged there)
            sources = positionals(args, _VALUE_OPTS[name])
            sources = sources[:-1] if len(sources) >= 2 else sources
            verdict = self.judge(sources, cwd, "`ln` (a hard link)", "link")
            if verdict.deny:
                return verdict
        if name in _COPIES:
            return self.judge(self.copy_destinations(name, args), cwd, shown, "write")
        if name in _REWRITES:
            return self.judge(positionals(args, ()), cwd, shown, "rewrite")
        if name in _MODES:
            operands = positionals(args, ("--reference", "-m", "-x", "-M", "-X"))
            return self.judge(operands[1:] if name != "chattr" else operands, cwd, shown, "change the permissions of")
        if name in ("touch", "mkdir", "truncate"):
            return self.judge(positionals(args, _VALUE_OPTS[name]), cwd, shown, "write")
        if name == "dd":
            return self.judge([a[3:] for a in args if a.startswith("of=")], cwd, shown, "write")
        if name == "sed" and short_flag(args, "i", "efl", ("--in-place",)):
            files = _script_files(args, ("-e", "-f", "-l", "--expression", "--file", "--line-length"), "efl")
            return self.judge(files, cwd, "`sed -i`", "rewrite")
        if name == "perl" and short_flag(args, "i", "eEIMlx0"):
            return self.judge(_script_files(args, ("-e", "-E"), "eE"), cwd, "`perl -i`", "rewrite")
        if name in ("curl", "wget"):
            return self.judge(self.download_targets(name, args), cwd, shown, "write")
        if name == "find":
            return self.judge(self.find_deletes(args), cwd, "`find -delete`", "delete")
        return ALLOW

    @staticmethod
    def copy_destinations(name: str, args: list[str]) -> list[str]:
        if name == "install" and any(a in ("-d", "--directory") for a in args):
            return positionals(args, _VALUE_OPTS[name])  # install -d creates every operand
        dests = [] if name == "rsync" else option_values(args, "t", ("--target-directory",))
        operands = positionals(args, _VALUE_OPTS[name])
        if dests:
            return dests
        if len(operands) >= 2:
            return operands[-1:]
        if name == "ln" and operands:
            return [os.path.basename(operands[0].rstrip("/")) or "."]  # `ln -s TARGET`: a link here
        return []

    @staticmethod
    def download_targets(name: str, args: list[str]) -> list[str]:
        if name == "curl":
            files = [f for f in option_values(args, "o", ("--output",)) if f != "-"]
            if short_flag(args, "O", _CURL_VALUE_LETTERS, ("--remote-name",)):  # named after the URL, here
                files += option_values(args, "", ("--output-dir",)) or ["."]
            return files
        logs = option_values(args, "o", ("--output-file",)) + option_values(args, "a", ("--append-output",))
        if "--spider" in args:
            return logs
        files = option_values(args, "O", ("--output-document",))
        if files:
            return logs + [f for f in files if f != "-"]
        return logs + (option_values(args, "P", ("--directory-prefix",)) or ["."])

    @staticmethod
    def find_deletes(args: list[str]) -> list[str]:
        starts: list[str] = []
        for arg in args:
            if arg.startswith(("-", "(", "!")):
                break
            starts.append(arg)
        runs = {args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-exec", "-execdir", "-ok", "-okdir")}
        if "-delete" in args or {os.path.basename(r) for r in runs} & (_DELETES | {"mv", "truncate"}):
            return starts or ["."]
        return []

    def judge(self, words: list[str], cwd: Path | None, what: str, verb: str) -> Verdict:
        for word in (spelled for w in words for spelled in _spellings(w, cwd)):
            where = self.lands_in_vault(word, cwd)
            if where is not None:
                return Verdict(True, _reason(what, verb, where, self.vault))
        return ALLOW

    def lands_in_vault(self, word: str, cwd: Path | None) -> Path | None:
        """The path `word` names, when it is positively in the vault once followed, or by its own name (a
        link in the vault); None otherwise, or when it cannot be known."""
        text = absolute(word, cwd, self.env) if word else None
        if text is None:
            return self._folder_in_vault(word, cwd) if word else None
        real = Path(os.path.realpath(text))
        base = os.path.basename(text.rstrip("/"))
        named = Path(os.path.realpath(os.path.dirname(text.rstrip("/")) or "/")) / base if base else real
        for path in (real, named):
            if inside(path, self.vault):
                return path
        return None

    def _folder_in_vault(self, word: str, cwd: Path | None) -> Path | None:
        """For a path whose name the text cannot settle (`memory/$f.md`, `$(date).md`), the folder it is
        spelled in, when that folder is known and in the vault: whatever the name, it lands there."""
        known = re.split(r"[$`]", word, maxsplit=1)[0]
        if "/" not in known:
            return None
        folder = absolute(known.rsplit("/", 1)[0] or "/", cwd, self.env)
        if folder is None:
            return None
        real = Path(os.path.realpath(folder))
        return real if inside(real, self.vault) else None


_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
MAX_SPELLINGS = 64  # words a brace expansion or a glob may stand for that the guard reads


def _spellings(word: str, cwd: Path | None) -> list[str]:
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


def _reason(what: str, verb: str, where: Path, vault: Path) -> str:
    instead = (
        "to retire a note use `agentmd retire` (it archives, never deletes)"
        if verb == "delete"
        else "to save a memory use the `memory_capture` MCP tool (or `agentmd capture`); to change a note use "
        "the Write or Edit tool, which this guard checks"
    )
    return (
        f"agentmd file guard: {what} would {verb} {where}, inside the agentmd vault {vault}. A shell write "
        "bypasses the door (who may write where) and the content prefilters (secrets, directives, executable "
        f"blocks), so it is refused; {instead}. Reading the vault (cat, grep, rg) is fine."
    )


check_shell_writes = _WriteWalker.check  # check_shell_writes(command, *, cwd, vault, env=None) -> Verdict
