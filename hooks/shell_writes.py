"""Shell commands that write into the vault: the Bash half of `agentmd hook file-guard` (hooks/file_guard.py).

A shell write bypasses the door and the content prefilters, so `check_shell_writes` refuses a command that
may write, move, link or delete a path inside the vault. The rule is read whatever the command:

- output redirections `>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>&FILE` whose target lies in the vault (`2>&1`
  and `>&2` only duplicate a descriptor);
- commands that only read what they name (`READERS`: cat, grep, rg, ls, head, wc, jq ...) pass, less their
  writing options (`sort -o FILE`, `uniq IN OUT`); so do `agentmd` itself (its writes go through the door)
  and git's reading commands;
- commands whose writes are known are judged by what they write: `tee`; `cp`, `install`, `ln`, `link`,
  `rsync` by their destination (and by their sources when they make a hard link: a second name for a note,
  which writes through it would change unseen); `mv`, `rm`, `rmdir`, `unlink`, `shred` by any operand;
  `touch`, `mkdir`, `truncate`; `dd of=FILE`; `sed -i`, `perl -i`, `gawk -i inplace`; `curl -o`/`-O` and
  `wget`; `find` with `-delete`, `-fprint FILE` or `-exec CMD` (judged as CMD run on each starting point);
  `xargs CMD` and `busybox CMD` as CMD;
- git in the vault's repository (`-C`, `--git-dir`, `--work-tree` or the directory it runs in; `agentmd git`
  too) may only read: its history is the vault's undo, which agentmd keeps (`agentmd undo`, `restore`);
- any other command is refused when one of its words, or a path written inside one (a program given to
  `awk`, `python -c`, `sed` without `-i`, a heredoc or here-string), lies in the vault, or when it runs from
  inside the vault; so is a name this line makes a function or alias of, a reader given an option that runs
  a command (`rg --pre`, `tar --checkpoint-action`), and a shell reading its program from a pipe on a line
  that names the vault;
- deleting or moving a folder that holds the vault (`rm -r ~`), or a link into it made on the line, counts as
  doing it in the vault; so does a word that spells the vault's path (`$(echo V/a.md)`), a path on a bind mount
  of it (by device and inode), a relative path after the line was in it; a line shlex cannot split that names
  it, and an unnamed program given an owner's agentmd subcommand (`$A undo`), are refused;
- a program file the command runs: a shell script (`bash FILE`, `source FILE`, `./FILE` with a shell's `#!`) is
  read and its commands judged in turn (hooks/shell.py); any other (`python3 tool.py`, `./tool.py`) is refused
  when its text names the vault, or, not on disk yet (written on the same line), when the line does.

Paths are read as hooks/shell.py reads them: relative to the effective directory (`cwd`, `cd`, `pushd`), after
`~` and `$VAR` expansion, through `sh -c`, `eval` and the usual wrappers, links followed; a path is in the
vault when it resolves there or its name does (`rm` deletes a link in the vault that points out). A target the
text cannot settle (an unset variable, `$(...)`, names `xargs` reads, a path a script builds) is not positively
in the vault, so it passes: the guard stops what a line and the files it runs show, not a determined program.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from .pretool import ALLOW, Verdict
from .shell import (
    MAX_DEPTH,
    SHELLS,
    absolute,
    decoded_literals,
    inside,
    option_values,
    positionals,
    read_script,
    resolve,
    short_flag,
    spellings,
    strip_wrappers,
    under_by_identity,
)
from .shell_commands import (
    ALIAS,
    AWK_VALUES,
    AWKS,
    COMPRESSORS,
    DELETES,
    FILTERS,
    FUNCTION,
    INTERPRETERS,
    READERS,
    RUNS_OPTIONS,
    VALUE_OPTS,
    agentmd_subcommand,
    copy_destinations,
    download_targets,
    find_deletes,
    hidden_owner_command,
    inline_program,
    inplace,
    joined_literals,
    owner_command,
    owner_reason,
    paths_within,
    program_writes,
    python_module,
    script_reads_only,
    write_reason,
    xargs_command,
)
from .shell_git import GitJudge
from .shell_trees import copied_into, extracted_into, holds_vault

# commands that act on the names they are given (not copy them elsewhere): fed by `xargs` from a line that names
# the vault, those names may be its files
MAX_PROGRAM_FILES = 4  # the operands of one interpreter read as its possible program files
MAX_PROGRAM_BYTES = 16 << 20  # a program file read for the vault's name (a padded one is read whole up to this)
_ACTS_ON_NAMES = DELETES | {
    "mv", "sed", "perl", "truncate", "touch", "tee", "chmod", "chown", "chgrp", "chattr", "sponge", "ed", "ex", "dd",
    "gawk", "awk", "python", "python3", "node", "bash", "sh",
}  # fmt: skip
_COPIES = frozenset({"cp", "install", "ln", "link", "rsync"})
_REWRITES = frozenset({"sponge", "ed", "ex"})  # write the file named as their operand (sponge from stdin)
_MODES = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl"})  # who may read or write a file
# options whose value is the next word, per command (so the value is not read as an operand)


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


class _WriteWalker(GitJudge):
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
        """One simple command: judged by its own judge (`_JUDGES`), or as a command that may write anything."""
        args = words[1:]
        if name in self.redefined():  # a function or alias of this line: whatever it runs is not the command named
            return self.unknown(name, args, cwd)
        if (hidden := hidden_owner_command(words)) is not None:  # `$A undo`, `agentm? undo`
            return Verdict(True, owner_reason(hidden, self.vault))
        if name == "git" and any(k.startswith("GIT_CONFIG") for k in self.prefix):  # config given by environment
            return self.unknown(name, args, cwd)  # (`core.fsmonitor` runs a command): judged as any command
        prefixed = [v for k, v in self.prefix.items() if not k.startswith("GIT_")]
        if any(self.names_vault(v) for v in prefixed):  # `LESSOPEN='|rm V/…' less x`: an environment that runs
            return self.unknown(name, [*prefixed, *args], cwd)
        if name in RUNS_OPTIONS and any(a.split("=", 1)[0] in RUNS_OPTIONS[name] for a in args):
            return self.unknown(name, args, cwd)  # an option that runs a command or writes where it says
        verdict = self.script_run(name, words, cwd)
        if verdict.deny:
            return verdict
        judge = _JUDGES.get(name) or (_WriteWalker._python if name.startswith("python") else _WriteWalker.unknown)
        return judge(self, name, args, cwd)

    def script_run(self, name: str, words: list[str], cwd: Path | None) -> Verdict:
        """Program files this command runs (`./tool.py`, `python3 -W ignore tool.py`, `python3 < tool.py`,
        `BASH_ENV=setup.sh bash -c …`): what they do is not on the line, so the command is refused when one's text
        names the vault (its path, or `~/…` / `$HOME/…` for it), or, when it is not on disk yet (written earlier
        on this line, perhaps), when the line does. An interpreter given its program inline is judged as before."""
        files = [words[0]] if "/" in words[0] else []
        files += [v for k, v in self.prefix.items() if k in ("BASH_ENV", "ENV")]
        interpreter = "python" if name.startswith("python") else name
        if interpreter in INTERPRETERS:
            for arg in words[1:]:
                if inline_program(interpreter, arg):
                    return ALLOW
                if not arg.startswith("-"):
                    files.append(arg)
            files += self.fed
        for script in files[:MAX_PROGRAM_FILES]:
            text = read_script(script, cwd, self.env, limit=MAX_PROGRAM_BYTES)
            where = self.spelled_in(text if text is not None else self.line)
            if where is not None:
                said = (
                    " (its text names the vault)" if text is not None else " (not on disk yet, on a line that names it)"
                )
                return Verdict(True, write_reason(f"the program `{script}`{said}", "may write", where, self.vault))
        return ALLOW

    def spelled_in(self, text: str) -> Path | None:
        """The vault's path (or a path in it) as `text` spells it: whole, or from the home folder."""
        found = self.vault_words([text])
        if found:
            return Path(found[0])
        home = self.env.get("HOME")
        if home and inside(self.vault, Path(os.path.realpath(home))) and self.vault != Path(os.path.realpath(home)):
            rel = re.escape(str(self.vault.relative_to(os.path.realpath(home))))
            if re.search(r"(?:~|\$HOME|\$\{HOME\})/" + rel + r"(?![\w.-])", text):
                return self.vault
        return None

    # -- the judges, one per command or family of commands (`_JUDGES` below names which) ----------------------

    def _for(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """`for X in ITEMS`: the loop's variable stands for its items, one in the vault when one is, so what the
        body does to it is judged there."""
        if len(args) >= 3 and args[1] == "in":
            items = [spelled for w in args[2:] for spelled in spellings(w, cwd)]
            there = next((w for w in items if self.lands_in_vault(w, cwd) is not None), None)
            value = absolute(there or (items[0] if items else ""), cwd, self.env)
            if value is None:
                self.env.pop(args[0], None)
            else:
                self.env[args[0]] = value
        return ALLOW

    def _relay(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """`xargs CMD` and `busybox CMD`, judged as CMD; names `xargs` reads from a pipe on a line that names
        the vault may be its files."""
        inner = xargs_command(args) if name == "xargs" else args
        if name == "xargs" and inner and os.path.basename(inner[0]) == "agentmd":  # its words come from the pipe too
            return self._agentmd("xargs agentmd", inner[1:], cwd)
        verdict = self.command(os.path.basename(inner[0]), inner, cwd) if inner else ALLOW
        fed = name == "xargs" and inner and os.path.basename(inner[0]) in _ACTS_ON_NAMES
        if not verdict.deny and fed and self.names_vault(self.line):
            return self.unknown(
                f"xargs {os.path.basename(inner[0])}", [*inner[1:], *self.vault_words([self.line])], cwd
            )
        return verdict

    def _git(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        return self.git(args, cwd, in_vault=False)

    def _python(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        module, rest = python_module(args)
        if module is not None and (module == "agentmd" or module.startswith("agentmd.")):
            return self._agentmd("agentmd", rest, cwd)
        return self.unknown(name, args, cwd)

    def _agentmd(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """Its writes go through the door as an agent's; `agentmd git` runs git in the vault. What only the
        vault's owner may do is refused: a command that speaks for the operator (`--operator`, and the ones
        that send the operator token: undo, revert, restore, jobs run, open), and the ones that change how the
        vault is guarded, served or synced (`OWNER_COMMANDS`)."""
        i = agentmd_subcommand(args)
        if args[i : i + 1] == ["git"]:
            return self.git(args[i + 1 :], cwd, in_vault=True)
        hidden = name == "xargs agentmd" or "`" in self.line or "$(" in self.line  # words the line does not show
        owned = owner_command(args, fed=hidden)
        return ALLOW if owned is None else Verdict(True, owner_reason(owned, self.vault))

    def _fd(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        return self.unknown(name, args, cwd) if {"-x", "--exec", "-X", "--exec-batch"} & set(args) else ALLOW

    def _zip(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """`zip` writes its archive, the first operand; `-m` moves the files it takes (deletes them)."""
        operands = positionals(args, ("-b", "-n", "-t", "-tt", "-x", "-i", "-O", "--out"))
        verdict = self.judge(operands[:1] + option_values(args, "O", ("--out",)), cwd, "`zip`", "write")
        moved = short_flag(args, "m", "bntxiO", ("--move",))
        return verdict if verdict.deny or not moved else self.judge(operands[1:], cwd, "`zip -m`", "delete")

    def _xxd(self, name: str, args: list[str], cwd: Path | None) -> Verdict:  # `xxd IN OUT` writes OUT
        return self.judge(positionals(args, ("-c", "-g", "-l", "-o", "-s", "-n"))[1:2], cwd, "`xxd`", "write")

    def _reader(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """A command that only reads what it names, less its options that write a file."""
        if name == "sort":
            return self.judge(option_values(args, "o", ("--output",)), cwd, "`sort -o`", "write")
        if name == "tree":
            return self.judge(option_values(args, "o", ()), cwd, "`tree -o`", "write")
        if name == "uniq":
            counts = ("-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars")
            return self.judge(positionals(args, counts)[1:2], cwd, "`uniq` (its output file)", "write")
        return ALLOW

    def _writes_operands(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """`tee`, `touch`, `mkdir`, `truncate`: write every operand."""
        return self.judge(positionals(args, VALUE_OPTS.get(name, ())), cwd, f"`{name}`", "write")

    def _deletes(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        return self.judge(positionals(args, ()), cwd, f"`{name}`", "delete")

    def _mv(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        dests = option_values(args, "t", ("--target-directory",))
        return self.judge(dests + positionals(args, VALUE_OPTS[name]), cwd, f"`{name}`", "move")

    def _copy(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """`cp`, `install`, `ln`, `link`, `rsync`: by their destination; by their sources when they delete them
        (`rsync --remove-source-files`) or make a hard link (a second name for a note, which writes through it
        would change unseen); by the target of a symbolic link (a link outside pointing into the vault, which
        later commands would write through unseen); by `rsync`'s log, link and backup folders."""
        operands = positionals(args, VALUE_OPTS[name])
        sources = operands[:-1] if len(operands) >= 2 else operands
        checks: list[tuple[list[str], str, str]] = []
        if name == "rsync":
            if {"--remove-source-files", "--remove-sent-files"} & set(args):
                checks.append((operands[:-1], "`rsync --remove-source-files`", "delete"))
            logs = option_values(
                args, "", ("--log-file", "--link-dest", "--copy-dest", "--compare-dest", "--backup-dir")
            )
            checks.append((logs, "`rsync` (a log, link or backup folder)", "write"))
        symbolic = name == "ln" and short_flag(args, "s", "St", ("--symbolic",))
        if symbolic:
            checks.append((sources, "`ln -s` (a link into the vault)", "link into"))
        if (
            (name == "ln" and not symbolic)
            or name == "link"
            or (name == "cp" and short_flag(args, "l", "St", ("--link",)))
        ):
            checks.append((sources, f"`{name}` (a hard link)", "link"))
        checks.append((copy_destinations(name, args), f"`{name}`", "write"))
        for words, what, verb in checks:
            verdict = self.judge(words, cwd, what, verb)
            if verdict.deny:
                return verdict
        if name not in ("cp", "rsync"):
            return ALLOW
        for dest in self._holding(copy_destinations(name, args), cwd):  # `cp -r SRC ~/`: by what SRC holds
            for word in (w for w in operands if w not in copy_destinations(name, args)):
                source = resolve(word, cwd, self.env)
                contents = (name == "rsync" and word.endswith("/")) or word.rstrip("/").endswith("/.")
                where = copied_into(self.vault, dest, source, contents=contents)
                if where is not None:
                    return Verdict(True, write_reason(f"`{name}` of {word} into {dest}", "write", where, self.vault))
        return ALLOW

    def _holding(self, words: list[str], cwd: Path | None) -> list[Path]:
        """The folders among `words` that hold the vault (its parent, the home folder, `/`)."""
        places = (resolve(w, cwd, self.env) for w in words)
        return [p for p in places if p is not None and holds_vault(p, self.vault)]

    def _rewrites(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        return self.judge(positionals(args, ()), cwd, f"`{name}`", "rewrite")

    def _modes(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        operands = positionals(args, ("--reference", "-m", "-x", "-M", "-X"))
        files = operands[1:] if name != "chattr" else operands
        return self.judge(files, cwd, f"`{name}`", "change the permissions of")

    def _dd(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        return self.judge([a[3:] for a in args if a.startswith("of=")], cwd, "`dd`", "write")

    def _sed(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """`sed -i` rewrites its files; otherwise it reads them, and its program may write where it names."""
        if short_flag(args, "i", "efl", ("--in-place",)):
            files = _script_files(args, ("-e", "-f", "-l", "--expression", "--file", "--line-length"), "efl")
            return self.judge(files, cwd, "`sed -i`", "rewrite")
        program = option_values(args, "e", ("--expression", "--source"))
        return self.program(name, program or positionals(args, ("-e", "--expression", "-f", "--file", "-l"))[:1], cwd)

    def _awk(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        if inplace(args):
            return self.judge(_script_files(args, AWK_VALUES, "fvF"), cwd, f"`{name} -i inplace`", "rewrite")
        program = option_values(args, "e", ("--expression", "--source")) or positionals(args, AWK_VALUES)[:1]
        # the values given to its variables (`-v f=PATH`, an operand `f=PATH`), where a `print > f` writes
        assigned = [*option_values(args, "v", ("--assign",)), *(a for a in positionals(args, AWK_VALUES) if "=" in a)]
        return self.program(name, program, cwd, [a.split("=", 1)[1] for a in assigned if "=" in a])

    def _perl(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        if short_flag(args, "i", "eEIMlx0"):
            return self.judge(_script_files(args, ("-e", "-E"), "eE"), cwd, "`perl -i`", "rewrite")
        if any(a.startswith("-") and ("e" in a[1:] or "E" in a[1:]) for a in args):
            program = option_values(args, "e", ()) + option_values(args, "E", ())  # reads its operands
            return self.program(name, program, cwd)
        return self.unknown(name, args, cwd)

    def _download(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        return self.judge(download_targets(name, args), cwd, f"`{name}`", "write")

    def _compress(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """With files named, each is replaced by its (un)compressed form."""
        if {"-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"} & set(args):  # to its output only
            return ALLOW
        outputs = option_values(args, "o", ("--output",)) if name.endswith("zstd") else []
        operands = positionals(args, ("-o", "--output", "-S", "--suffix"))
        return self.judge([*operands, *outputs], cwd, f"`{name}`", "rewrite")

    def _filter(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        return self.judge(option_values(args, "o", ("--output",)), cwd, f"`{name}`", "write")

    def program(self, tool: str, program: list[str], cwd: Path | None, values: Sequence[str] = ()) -> Verdict:
        """A sed, awk or perl program given on the command line: judged by where it writes (`program_writes`), or
        by every path in it and in the `values` its variables are given when it may run commands or writes where a
        variable says."""
        writes = program_writes(tool, program)
        if writes is None:
            writes = [*paths_within(program), *self.vault_words(program), *values]
        return self.judge(writes, cwd, f"`{tool}`'s program", "write")

    def runs_heredoc(self, words: list[str]) -> bool:
        """A heredoc fed to a shell is commands; fed to anything else (`cat`, `python3`, `sqlite3`) it is data."""
        words, _ = strip_wrappers(words)
        return bool(words) and os.path.basename(words[0]) in SHELLS

    def heredoc_data(self, fed: list[str], data: list[str], cwd: Path | None) -> Verdict:
        """A heredoc's body given to a command that only reads passes (it is text); given to any other command it
        is a program, refused when it names a path in the vault."""
        words, _ = strip_wrappers(fed)
        name = os.path.basename(words[0]) if words else ""
        if not name or name in READERS or name in ("tee", "agentmd"):
            return ALLOW
        what = f"the heredoc given to `{name}` (not a command the guard knows to only read)"
        named = next(iter(self.vault_words(data)), None)
        if named is not None:
            return Verdict(True, write_reason(what, "may write", Path(named), self.vault))
        return self.judge([*data, *paths_within(data)], cwd, what, "may write")

    def vault_words(self, words: list[str]) -> list[str]:
        """The paths in the vault written out whole inside `words` (its path, then `/...` or nothing more: not a
        sibling folder such as `vault-mirror`)."""
        pattern = re.compile(re.escape(str(self.vault)) + r"(?![\w.-])[^\s'\"`;|&<>()]*")
        return [m.group(0) for w in words for m in pattern.finditer(w)]

    def names_vault(self, text: str) -> bool:
        return bool(self.vault_words([text]))

    def redefined(self) -> set[str]:
        """The names this command line makes functions or aliases of (`cat() { rm "$@"; }`, `alias ls=rm`)."""
        if not hasattr(self, "_redefined"):
            self._redefined = set(FUNCTION.findall(self.line)) | set(ALIAS.findall(self.line))
        return self._redefined

    def unreadable(self, command: str, cwd: Path | None) -> Verdict:
        """A line shlex cannot split (a quote in a comment, say) may still run: refused when it names the vault or
        runs in it, as nothing in it can be judged."""
        if self.names_vault(command) or (cwd is not None and inside(cwd, self.vault)):
            return Verdict(
                True,
                f"agentmd file guard: this command names the agentmd vault {self.vault} (or runs in it) and the guard "
                "could not read it (an unbalanced quote, perhaps in a comment), so it cannot tell whether it writes "
                "there; write it without the stray quote, or read the vault with cat, grep or rg.",
            )
        return ALLOW

    def seen(self, cwd: Path | None, *, certain: bool) -> None:
        if cwd is not None and inside(cwd, self.vault):
            self.was_inside: Path | None = cwd  # a `cd` out that did not happen (`x=$(cd /tmp)`, `| cd`) leaves it here
        elif certain:
            self.was_inside = None

    def shell_without_script(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """A shell running a script file, or what it reads from a pipe (`echo 'rm …' | bash`): refused when the
        line names the vault, since what runs cannot be read here. Text the line decodes into the pipe
        (`echo BASE64 | base64 -d | sh`) is read as the commands it is."""
        for text in decoded_literals(self.line):
            verdict = self.walk(text, cwd, MAX_DEPTH - 1)
            if verdict.deny:
                return verdict
        if self.names_vault(self.line):
            return self.unknown(name, [*args, *self.vault_words([self.line])], cwd)
        return self.unknown(name, args, cwd)

    def unknown(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """A command the guard does not know to only read: refused when it runs in the vault, or when a word of it,
        or a path written inside a word (a program, an `--opt=PATH`), lies in the vault. A `python -c` or
        `node -e` one-liner that only reads (`script_reads_only`) passes."""
        if script_reads_only(name, args):
            return ALLOW
        if cwd is not None and inside(cwd, self.vault):
            what = f"`{name}`, run inside the vault and not a command the guard knows to only read,"
            return Verdict(True, write_reason(what, "may write", cwd, self.vault))
        seen = [*args, *decoded_literals(" ".join(args)), *joined_literals(args)]  # within a word, decoded, joined
        named = next((path for w in seen for path in self.vault_words([w])), None)  # the vault's path within a word
        if named is not None:
            what = f"`{name}` (not a command the guard knows to only read)"
            return Verdict(True, write_reason(what, "may write", Path(named), self.vault))
        words = [*args, *(a.split("=", 1)[1] for a in args if a.startswith("-") and "=" in a)]
        what = f"`{name}` (not a command the guard knows to only read)"
        return self.judge([*words, *paths_within(args)], cwd, what, "may write")

    def _tar(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """`tar` writes its archive (`-f FILE`) when it creates one, and the folder it extracts into (`-C DIR`, or
        where it runs) otherwise; creating or listing reads the files it names."""
        mode = args[0] if args and not args[0].startswith("-") else ""  # the old style: `tar czf FILE ...`
        letters = mode + "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
        longs = {a.split("=", 1)[0] for a in args if a.startswith("--")}
        archive = option_values(args, "f", ("--file",))
        if "f" in mode and len(args) > 1:  # the old style's `f` takes the next word
            archive.append(args[1])
        if ("c" in letters or "t" in letters or longs & {"--create", "--list"}) and "x" not in letters:
            return self.judge(
                archive if "c" in letters or "--create" in longs else [], cwd, "`tar` (its archive)", "write"
            )
        into = option_values(args, "C", ("--directory",)) or ["."]
        verdict = self.judge(into + archive, cwd, "`tar` (what it extracts or updates)", "write")
        return verdict if verdict.deny else self._unpacked(name, archive[:1], into[-1:], cwd)

    def _unpacked(self, name: str, archive: list[str], into: list[str], cwd: Path | None) -> Verdict:
        """An archive unpacked into a folder that holds the vault: refused when one of its members lands in the
        vault, or when the archive cannot be read (a pipe, not there yet, too large)."""
        for dest in self._holding(into, cwd):
            source = resolve(archive[0], cwd, self.env) if archive and archive[0] != "-" else None
            where = extracted_into(self.vault, dest, source)
            if where is not None:
                what = f"`{name}` of {archive[0] if archive else 'its input'} into {dest}"
                return Verdict(True, write_reason(what, "write", where, self.vault))
        return ALLOW

    def _unzip(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """`unzip ARCHIVE [-d DIR]`: what it extracts, into DIR or where it runs."""
        into = option_values(args, "d", ("--directory",)) or ["."]
        archive = positionals(args, ("-d", "-x", "-P", "--directory"))[:1]
        verdict = self.judge(into, cwd, "`unzip` (what it extracts)", "write")
        return verdict if verdict.deny else self._unpacked(name, archive, into[-1:], cwd)

    def _find(self, name: str, args: list[str], cwd: Path | None) -> Verdict:
        """`find` deletes with `-delete` (or `-exec rm`), writes the file of `-fprint FILE`, and runs every
        `-exec CMD ... ;` on each path it finds: judged as CMD run on each starting point."""
        verdict = self.judge(find_deletes(args), cwd, "`find -delete`", "delete")
        if verdict.deny:
            return verdict
        prints = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-fprint", "-fprint0", "-fprintf", "-fls")]
        verdict = self.judge(prints, cwd, "`find -fprint`", "write")
        if verdict.deny:
            return verdict
        starts = [a for a in itertools.takewhile(lambda a: not a.startswith(("-", "(", "!")), args)] or ["."]
        for k, arg in enumerate(args):
            if arg not in ("-exec", "-execdir", "-ok", "-okdir"):
                continue
            run = list(itertools.takewhile(lambda a: a not in (";", "+"), args[k + 1 :]))
            for start in starts if run else []:
                words = [start if w == "{}" else w for w in run]
                verdict = self.command(os.path.basename(words[0]), words, cwd)
                if verdict.deny:
                    return verdict
        return ALLOW

    def judge(self, words: list[str], cwd: Path | None, what: str, verb: str) -> Verdict:
        earlier = getattr(self, "was_inside", None)
        holding = verb in ("delete", "move", "change the permissions of")  # what it does to a folder, it does inside
        for word in (spelled for w in words for spelled in spellings(w, cwd)):
            where = self.lands_in_vault(word, cwd, holding=holding)
            if where is None and earlier is not None and earlier != cwd and not os.path.isabs(word):
                where = self.lands_in_vault(word, earlier)  # the line was in the vault: it may still be
            if where is None and absolute(word, cwd, self.env) is None and self.names_vault(word):
                where = Path(self.vault_words([word])[0])  # `$(ls V/a.md)`: unsettled, but there
            if where is None and cwd is None and not os.path.isabs(word) and self.names_vault(self.line):
                where = self.vault  # `cd $(echo V) && touch a`: somewhere the line cannot tell, on a line naming V
            if where is not None:
                return Verdict(True, write_reason(what, verb, where, self.vault))
        return ALLOW

    def lands_in_vault(self, word: str, cwd: Path | None, *, holding: bool = False) -> Path | None:
        """The path `word` names, when it is positively in the vault once followed, or by its own name (a
        link in the vault); None otherwise, or when it cannot be known."""
        text = absolute(word, cwd, self.env) if word else None
        if text is None:
            return self._folder_in_vault(word, cwd) if word else None
        real = Path(os.path.realpath(text))
        base = os.path.basename(text.rstrip("/"))
        named = Path(os.path.realpath(os.path.dirname(text.rstrip("/")) or "/")) / base if base else real
        for path in (real, named):
            if inside(path, self.vault) or (holding and path != Path("/") and self.vault.is_relative_to(path)):
                return path  # in the vault, or (`holding`) a folder holding it (`rm -r ~`, `chmod -R` of its parent)
        folder = under_by_identity(real, self.vault)  # the vault by another name: a bind mount of it
        return self.vault / real.relative_to(folder) if folder is not None else None

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
        if inside(real, self.vault):
            return real
        rest = word[len(known) :]
        # `/home/me/${v:5:5}/memory/x.md`: an unsettled folder below one that holds the vault may be the vault
        return self.vault if "/" in rest and holds_vault(real, self.vault) else None


_Judge = Callable[[_WriteWalker, str, list[str], Path | None], Verdict]


def _judges() -> dict[str, _Judge]:
    """Each command's judge; a name of two families takes the first listed (`zgrep` reads)."""
    w = _WriteWalker
    families: list[tuple[Iterable[str], _Judge]] = [
        (("for",), w._for),
        (("xargs", "busybox"), w._relay),
        (("git",), w._git),
        (("agentmd",), w._agentmd),
        (("fd", "fdfind"), w._fd),
        (("zip",), w._zip),
        (("xxd",), w._xxd),
        (READERS, w._reader),
        (("tee", "touch", "mkdir", "truncate"), w._writes_operands),
        (DELETES, w._deletes),
        (("mv",), w._mv),
        (_COPIES, w._copy),
        (_REWRITES, w._rewrites),
        (_MODES, w._modes),
        (("dd",), w._dd),
        (("sed",), w._sed),
        (("perl",), w._perl),
        (("curl", "wget"), w._download),
        (("find",), w._find),
        (("tar", "bsdtar"), w._tar),
        (("unzip",), w._unzip),
        (AWKS, w._awk),
        (COMPRESSORS, w._compress),
        (FILTERS, w._filter),
    ]
    table: dict[str, _Judge] = {}
    for names, judge in families:
        for name in names:
            table.setdefault(name, judge)
    return table


_JUDGES: Mapping[str, _Judge] = _judges()


check_shell_writes = _WriteWalker.check  # check_shell_writes(command, *, cwd, vault, env=None) -> Verdict
