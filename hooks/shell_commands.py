"""What the file guard (hooks/shell_writes.py) knows of shell commands it does not judge by their writes: those
that only read, git's reading commands, options that make a reader run or write something, and how to find
the paths written inside a program's text."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from .shell import inside, option_values, positionals, short_flag

# Commands that only read the files they name, or write to standard output alone: the vault may be read freely.
READERS = frozenset({
    "cat", "tac", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "ls", "dir",
    "tree", "wc", "stat", "file", "du", "df", "diff", "cmp", "comm", "md5sum", "sha1sum", "sha256sum", "sha512sum",
    "b2sum", "cksum", "echo", "printf", "test", "[", "pwd", "which", "type", "whereis", "realpath", "readlink",
    "basename", "dirname", "jq", "bat", "batcat", "fd", "fdfind", "true", "false", "sort", "uniq", "cut", "tr",
    "column", "nl", "od", "hexdump", "strings", "fold", "fmt", "paste", "join", "look", "agentmd-hook", "sleep",
    "date", "whoami", "id", "uname", "env", "printenv", "set", "exit", "return", "read", "wait",
    "[[", "]]", "for", "case", "select", "in", "esac", "done", "fi",
})  # fmt: skip
# git's commands that only read the repository
GIT_READS = frozenset({
    "log", "show", "diff", "status", "blame", "annotate", "grep", "ls-files", "ls-tree", "ls-remote", "rev-parse",
    "rev-list", "cat-file", "describe", "shortlog", "whatchanged", "show-ref", "for-each-ref", "name-rev",
    "merge-base", "diff-tree", "diff-index", "diff-files", "count-objects", "check-ignore", "check-attr", "var",
    "version", "help", "range-diff", "cherry", "verify-commit", "verify-tag", "show-branch",
    "archive", "format-patch",  # these write only the file they are told, judged as any output
})  # fmt: skip
GIT_LISTS = {  # a git command that reads only in these forms: its first word, or an option among its words
    "stash": ({"list", "show"}, set()),
    "reflog": ({"show"}, set()),
    "worktree": ({"list"}, set()),
    "notes": ({"list", "show"}, set()),
    "remote": ({"show", "get-url"}, {"-v", "--verbose"}),
    "config": (set(), {"--get", "--get-all", "--get-regexp", "--list", "-l"}),
    "branch": (set(), {"--list", "-l", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--show-current", "--contains"}),
    "tag": (set(), {"--list", "-l", "--contains", "--points-at"}),
}
AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
# read their input, write standard output or only the file their `-o` names
FILTERS = frozenset({"base64", "base32", "rev", "shuf", "expand", "unexpand", "iconv", "zcat", "bzcat", "xzcat",
                     "zstdcat", "zless", "zmore", "zgrep", "shasum", "md5", "sha224sum", "sha384sum", "glow",
                     "xmllint", "pandoc", "numfmt", "tsort", "factor", "seq", "yes"})  # fmt: skip
COMPRESSORS = frozenset({"gzip", "gunzip", "xz", "unxz", "bzip2", "bunzip2", "zstd", "unzstd", "lz4", "brotli"})
# options with which a command the guard reads otherwise runs a command, or writes where the option says
RUNS_OPTIONS: Mapping[str, frozenset[str]] = {
    "tar": frozenset({"--remove-files", "--checkpoint-action", "--to-command", "--use-compress-program", "-I",
                      "--index-file", "-g", "--listed-incremental", "-F", "--info-script", "--new-volume-script"}),
    "rg": frozenset({"--pre"}),
    "less": frozenset({"-o", "-O", "--log-file", "--LOG-FILE"}),
    "file": frozenset({"-C", "--compile"}),
}  # fmt: skip
FUNCTION = re.compile(r"(?:^|[;&|\n{(]|\bfunction)\s*([A-Za-z_][\w.-]*)\s*\(\s*\)")
ALIAS = re.compile(r"\balias\s+([A-Za-z_][\w.-]*)=")
AWK_VALUES = ("-f", "--file", "-v", "--assign", "-F", "--field-separator", "-i", "--include", "-e", "--source")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|'([^'\n]+)'")
# sed's `w FILE`, after an address (`1w`, `$w`, `1,$w`) or none, and `s/a/b/w FILE`
_SED_WRITE = re.compile(r"(?:^|[\s;}/|,#\d$])[wW] +([^\n;}]+)")
_AWK_WRITE = re.compile(r"(?:>>?|\|)\s*\"([^\"\n]+)\"")  # awk's `print > "FILE"`, `| "command"`
_RUNS_CODE = re.compile(r"\b(?:system|exec|open|unlink|rename|mkdir|rmdir|popen|qx)\b|`")  # a program that acts
_PATHISH = re.compile(r"[^\s'\"<>|;&(){}\[\],`=]+")


GIT_VALUES = ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format")


def git_reads(sub: str, rest: list[str]) -> bool:
    """Whether `git SUB REST...` only reads the repository."""
    if sub in GIT_READS:
        return True
    if sub == "bundle":
        return rest[:1] in (["create"], ["verify"], ["list-heads"])
    if sub not in GIT_LISTS:
        return False
    firsts, options = GIT_LISTS[sub]
    positional = positionals(rest, GIT_VALUES)
    if not positional:  # options alone: a listing (`git reflog -5`, `git branch -a`), but `git stash` stashes
        return sub != "stash" and not ({"-d", "-D", "-m", "-M", "-c", "-C", "-f", "--delete", "--move"} & set(rest))
    if positional[0] in firsts:
        return True
    if sub == "config":
        return bool(options & set(rest))
    return bool({"--list", "-l"} & set(rest)) and sub in ("branch", "tag")  # a pattern to list by


def paths_within(words: list[str]) -> list[str]:
    """The paths spelled inside words that are not paths themselves (a program's `print > "/v/x.md"`,
    `open('memory/a.md', 'w')`, sed's `w FILE`): each quoted string, each run of path characters holding a `/`,
    starting with `~` or ending in a file name's extension, and the rest of a line after sed's `w`."""
    found: list[str] = []
    for word in words:
        found += [q for pair in _QUOTED.findall(word) for q in pair if q and q != word]
        found += [m.strip() for m in _SED_WRITE.findall(word)]
        for run in _PATHISH.findall(word):
            if run != word and ("/" in run or run.startswith("~") or re.search(r"\w\.[A-Za-z0-9]{1,8}$", run)):
                found.append(run)
    return found


def inplace(args: list[str]) -> bool:
    """gawk's `-i inplace` (or `--include=inplace`, `-iinplace`): the files it reads are rewritten."""
    return any(
        a in ("-iinplace", "--include=inplace") or (a in ("-i", "--include") and args[k + 1 : k + 2] == ["inplace"])
        for k, a in enumerate(args)
    )


def xargs_command(args: list[str]) -> list[str]:
    """The command `xargs` runs (its words before those read from its input), or [] for its default `echo`."""
    takes = {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter", "--max-args",
             "--max-procs", "--max-chars", "--max-lines", "--replace", "--eof", "--process-slot-var"}  # fmt: skip
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in takes else 1
    return args[i:]


def program_writes(tool: str, program: list[str]) -> list[str] | None:
    """Where a sed, awk or perl program given on the command line writes: sed's `w` files, awk's redirections;
    None when it may run commands or act on files in ways not read here (then every path in it counts). The
    paths and patterns it only matches (`s|/vault/||`, `m{^\\./}`) are no writes."""
    text = "\n".join(program)
    if tool == "sed":
        return [m.strip() for m in _SED_WRITE.findall(text)] if "e" not in _sed_flags(text) else None
    if tool in AWKS:
        # a redirection to anything but a quoted name (`print > f`, `-v f=...`): where it writes is not on the line
        unnamed = re.search(r"\bprintf?\b[^;{}\n]*?(?:>>?|\|)\s*(?!\")\S", text)
        runs = re.search(r"\bsystem\s*\(|\|\s*getline|\bclose\s*\(", text)
        return None if runs or unnamed else _AWK_WRITE.findall(text)
    return None if _RUNS_CODE.search(text) else []  # perl: `print if m{...}` reads


def _sed_flags(text: str) -> str:
    """The letters of sed commands that run the shell (`e`), from a rough read of the script."""
    return "e" if re.search(r"(?:^|[;\n])\s*e\b|/[gpiIm0-9]*e[gpiIm0-9]*(?:$|[;\n}])", text) else ""


# What a Python or JavaScript one-liner does to files beyond reading them: a write, a removal, a mode string
# that opens for writing, a process started, a database opened. A one-liner with none of these only reads.
_SCRIPT_ACTS = re.compile(
    r"\b(?:write\w*|remove\w*|unlink\w*|rename\w*|replace|rmtree|rmdir|rm|mkdir\w*|makedirs|touch|chmod|chown|"
    r"symlink\w*|link\w*|truncate|copy\w*|move|dump\w*|save\w*|connect|system|spawn\w*|exec\w*|popen|"
    r"subprocess|shutil|child_process|eval|import\s*\(|__import__|getattr|globals|compile|chr|fromhex|b64decode|"
    r"Function|require\s*\(\s*[^'\"\s]|appendFile\w*|createWriteStream|open\w*Sync|"
    r"unlinkSync|fs\.promises)\b|['\"][rwxa]?[wax]b?\+?['\"]|['\"]r\+['\"]"
)
_ONE_LINERS = {"python": ("-c",), "python3": ("-c",), "node": ("-e", "--eval", "-p", "--print")}


def script_reads_only(name: str, args: list[str]) -> bool:
    """Whether `python -c CODE` or `node -e CODE` (and nothing else on its command line but the code and
    options) only reads: the code holds nothing `_SCRIPT_ACTS` finds."""
    flags = _ONE_LINERS.get(name)
    if flags is None:
        return False
    for i, arg in enumerate(args[:-1]):
        if arg in flags:
            rest = args[i + 2 :]
            return not rest and not _SCRIPT_ACTS.search(_STRING.sub(_kept_if_mode, args[i + 1]))
    return False


_STRING = re.compile(r"(['\"])(?:\\.|(?!\1).)*\1")  # a string literal: its text (a path) is no code
_MODE = re.compile(r"['\"][rwxa]?[wax]b?\+?['\"]|['\"]r\+['\"]")


def _kept_if_mode(m: re.Match[str]) -> str:
    """A string literal emptied, unless it is a mode that opens a file for writing (`'w'`, `"a+"`)."""
    return m.group(0) if _MODE.fullmatch(m.group(0)) else '""'


# programs that run a script file named as an operand (`python3 tool.py`, `node build.js`), each with its options
# that give the program on the command line or name a module instead (then no script file runs); a short option
# ending a bundle counts too (`python -Sc`, `perl -ne`)
INLINE_PROGRAM: Mapping[str, frozenset[str]] = {
    "python": frozenset({"-c", "-m"}),
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}),
    "Rscript": frozenset({"-e"}),
    "julia": frozenset({"-e", "-E", "--eval", "--print"}),
    "pwsh": frozenset({"-c", "-Command", "-command"}),
    "tclsh": frozenset(),
    **dict.fromkeys(("sh", "bash", "zsh", "dash", "ksh", "mksh"), frozenset({"-c"})),  # a shell met through a relay
}
INTERPRETERS = frozenset(INLINE_PROGRAM)


def inline_program(interpreter: str, arg: str) -> bool:
    """Whether `arg`, given to `interpreter` (`python` for every python), hands it its program inline."""
    flags = INLINE_PROGRAM.get(interpreter, frozenset())
    bundle = arg.startswith("-") and not arg.startswith("--") and len(arg) > 2
    return arg in flags or (bundle and "-" + arg[-1] in flags)


_CURL_VALUE_LETTERS = "AbCcDdEeFHhKmoQrTtuwXYyz"  # curl's short options that take a value
DELETES = frozenset({"rm", "rmdir", "unlink", "shred"})
# options whose value is the next word, per command (so the value is not read as an operand)
VALUE_OPTS: Mapping[str, tuple[str, ...]] = {
    "cp": ("-t", "--target-directory", "-S", "--suffix"),
    "mv": ("-t", "--target-directory", "-S", "--suffix"),
    "ln": ("-t", "--target-directory", "-S", "--suffix"),
    "link": (),
    "install": ("-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"),
    "rsync": ("-e", "--rsh", "-f", "--filter", "--exclude", "--include", "-T", "--temp-dir", "--partial-dir"),
    "touch": ("-d", "--date", "-t", "-r", "--reference"),
    "mkdir": ("-m", "--mode"),
    "truncate": ("-s", "--size", "-r", "--reference"),
}


def copy_destinations(name: str, args: list[str]) -> list[str]:
    """Where `cp`, `install`, `ln`, `link` or `rsync` writes."""
    if name == "install" and any(a in ("-d", "--directory") for a in args):
        return positionals(args, VALUE_OPTS[name])  # install -d creates every operand
    dests = [] if name == "rsync" else option_values(args, "t", ("--target-directory",))
    operands = positionals(args, VALUE_OPTS[name])
    if dests:
        return dests
    if len(operands) >= 2:
        return operands[-1:]
    if name == "ln" and operands:
        return [os.path.basename(operands[0].rstrip("/")) or "."]  # `ln -s TARGET`: a link here
    return []


def download_targets(name: str, args: list[str]) -> list[str]:
    """The files `curl` or `wget` writes."""
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


def find_deletes(args: list[str]) -> list[str]:
    """The starting points a `find` deletes under (`-delete`, `-exec rm`), or none."""
    starts: list[str] = []
    for arg in args:
        if arg.startswith(("-", "(", "!")):
            break
        starts.append(arg)
    runs = {args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-exec", "-execdir", "-ok", "-okdir")}
    if "-delete" in args or {os.path.basename(r) for r in runs} & (DELETES | {"mv", "truncate"}):
        return starts or ["."]
    return []


# The agentmd commands only the vault's owner runs: a command with no subcommands listed is the owner's whole;
# with some, only those are (`hooks install`, but not `remote show`).
OWNER_COMMANDS: dict[str, frozenset[str]] = {
    "undo": frozenset(),
    "revert": frozenset(),
    "restore": frozenset(),
    "open": frozenset(),
    "hooks": frozenset(),
    "service": frozenset({"install", "uninstall", "start", "stop", "restart"}),
    "token": frozenset(),  # it shows the token, or where it is kept (`cat $(agentmd token path)`)
    "mcp-config": frozenset(),  # its output holds the access token
    "remote": frozenset({"add", "remove", "set-url"}),
    "jobs": frozenset({"run"}),
    # the judgments the review queue holds for the person: filing a note, promoting it, applying groom's plan,
    # moving notes through their lifecycle
    "confirm": frozenset(),
    "promote": frozenset(),
    "lifecycle": frozenset(),
    "groom": frozenset({"--apply"}),
}


def _spells(word: str, option: str) -> bool:
    """Whether `word` is `option` as argparse reads it: whole, with `=VALUE`, or cut short (`--oper`)."""
    name = word.split("=", 1)[0]
    return len(name) >= 4 and name.startswith("--") and option.startswith(name)


def agentmd_subcommand(words: list[str]) -> int:
    """Where the subcommand stands among agentmd's words, past its common options (`--vault PATH`, `--json`)."""
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in ("--vault", "--index", "--config") else 1
    return i


def owner_command(words: list[str], *, fed: bool = False) -> str | None:
    """The agentmd command `words` (its options, then its subcommand) as said in a refusal, when only the vault's
    owner runs it, or may: one that speaks for the operator (`--operator`, however shortened), one of
    `OWNER_COMMANDS`, a reindex allowed to delete in bulk, or one whose subcommand the line does not spell out
    (a substitution, a variable, or words `xargs` reads from a pipe: `fed`). None for any other."""
    i = agentmd_subcommand(words)
    sub, rest = (words[i], words[i + 1 :]) if i < len(words) else ("", [])
    if any(_spells(w, "--operator") for w in words):
        return f"`agentmd {sub} --operator`"
    if (not sub and fed) or (sub and not re.fullmatch(r"[a-z][a-z-]*", sub)):
        return "`agentmd` with a subcommand the line does not spell out"
    owned = OWNER_COMMANDS.get(sub)
    flagged = any(_spells(w, o) for w in rest for o in owned if o.startswith("--")) if owned else False
    if owned is not None and (not owned or (rest[:1] and rest[0] in owned) or flagged or (fed and not rest)):
        return f"`agentmd {' '.join([sub, *rest[:1]])}`"
    if sub == "reindex" and any(_spells(w, "--allow-mass-delete") for w in rest):
        return "`agentmd reindex --allow-mass-delete`"
    return None


def hidden_owner_command(words: list[str]) -> str | None:
    """A program the line does not name (`$A`, `$(which agentmd)`, `agentm?`) given one of the owner's agentmd
    subcommands: said as an owner's command, since it may well be agentmd."""
    if not words or not any(ch in words[0] for ch in "$`*?["):
        return None
    args = words[1:]
    i = agentmd_subcommand(args)
    sub = args[i] if i < len(args) else ""
    if sub not in OWNER_COMMANDS or owner_command(args) is None:
        return None
    return f"`{' '.join(words[:2])}` (a program the line does not name, given `{sub}`)"


def owner_reason(command: str, vault: object) -> str:
    return (
        f"agentmd file guard: {command} is for the owner of the agentmd vault {vault} to run (it speaks for the "
        "operator, or changes how the vault is guarded, served or synced), not an agent; ask the person to run it. "
        "To save a memory use the `memory_capture` MCP tool (or `agentmd capture`, which writes as an agent)."
    )


_PYTHON_VALUE_FLAGS = frozenset("WXcmQ")  # python's one-letter options that take a value (`-W ignore`, `-X dev`)


def python_module(args: list[str]) -> tuple[str | None, list[str]]:
    """The module `python ARGS` runs with `-m` (`-m agentmd`, `-Im agentmd`, `-I -m agentmd.__main__`), and
    the arguments after it; (None, args) when it runs none."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-" and not args[i].startswith("--"):
        flags = args[i][1:]
        for k, letter in enumerate(flags):
            if letter in _PYTHON_VALUE_FLAGS:
                value = flags[k + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
                step = 1 if flags[k + 1 :] else 2
                if letter == "m":
                    return value, args[i + step :]
                if letter == "c":
                    return None, args
                i += step - 1
                break
        i += 1
    return None, args


_CONCAT = re.compile(r"""(['"])\s*\+?\s*\1""")


def joined_literals(words: list[str]) -> list[str]:
    """Words of a program with its adjacent string literals joined (`'/ho'+'me/v'` or `"/ho" "me/v"` read as
    `/home/v`), for a path spelled in pieces; only the words that hold such a join."""
    return [_CONCAT.sub("", w) for w in words if _CONCAT.search(w)]


def write_reason(what: str, verb: str, where: Path, vault: Path) -> str:
    """A shell write's refusal: what would write where, why that is refused, and what to use instead."""
    instead = (
        "to retire a note use `agentmd retire` (it archives, never deletes)"
        if verb == "delete"
        else "to save a memory use the `memory_capture` MCP tool (or `agentmd capture`); to change a note use "
        "the Write or Edit tool, which this guard checks"
    )
    place = "inside the agentmd vault" if inside(where, vault) else "which holds the agentmd vault"
    return (
        f"agentmd file guard: {what} {verb if verb.startswith('may ') else 'would ' + verb} {where}, {place} {vault}. "
        "A shell write bypasses the door (who may write where) and the content prefilters (secrets, directives, "
        f"executable blocks), so it is refused; {instead}. Reading the vault with a command that only reads (cat, "
        "grep, rg, ls, head, jq) is fine."
    )
