"""Content that runs, reported as ``executable:*``: ``dataviewjs`` fences and inline ``$=`` queries, Templater
tags outside code, destructive or download-and-run commands in shell blocks or on bare command lines,
``<script>`` tags and ``javascript:`` links.

A Templater tag that only prints a date, a fact of the note's file (its title, dates, path, folder, tags) or a
frontmatter value, with literal arguments (``<% tp.date.now("YYYY-MM-DD", -1) %>``, ``<% tp.file.title %>``), is
not refused: it reads and prints, nothing more, and daily-note templates and notes that explain them are full of
such tags. Every other tag is: an execution block (``<%* … %>``), a call that acts or reaches further
(``tp.system.prompt``, ``tp.file.include``, ``tp.file.move``, ``tp.user.…``, ``tp.web.…``, ``tp.app``) or any
other JavaScript.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Iterator
from typing import Final

from agentmd import vault_schema
from agentmd.rules.prefilter.core import Finding, Lines, fence_lines, flatten_containers
from agentmd.rules.prefilter.executable_shapes import (
    CODE_INFOS,
    MAKE_INFOS,
    Verdict,
    button_commands,
    code_verdicts,
    download_then_run,
)

_SCRIPT_INFOS: Final = frozenset(
    {"sh", "bash", "shell", "zsh", "fish", "ksh", "dash", "powershell", "ps1", "pwsh", "posh", "ps", "cmd", "bat",
     "batch"}
)  # fmt: skip
_SESSION_INFOS: Final = frozenset({"console", "shell-session", "shellsession", "terminal", "bash-session"})
# A user prompt ("$ ", "user@host:~$ ", "PS C:\> ", "C:\> ") marks a command line anywhere; "# " is a root prompt
# only in a terminal-session block (in a script it starts a comment, in prose a heading).
_PROMPT = re.compile(r"^(?:\$|PS [^>\n]{0,80}>|[A-Za-z]:\\[^>\n]{0,80}>|[\w.\-]+@[\w.\-]+(?::[^$#\s]*)?[$#%])[ \t]+")
_ROOT_PROMPT = re.compile(r"^#[ \t]+")
_TRAILING_COMMENT = re.compile(r"(?:^|[ \t])#.*$")
_LIST_MARKER = re.compile(r"^(?:[-*+][ \t]+|\d+[.)][ \t]+)")
# a line that is a label and one inline code span ("Tunnel: `nc -e /bin/sh …`"), the label not one that warns
_GIVEN_IN_CODE = re.compile(
    r"^(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?:\*\*)?([A-Za-z][\w ()/-]{0,40})(?:\*\*)?:(?:\*\*)?[ \t]+"
    r"`([^`\n]+)`[ \t.]*$"
)
_NOT_TO_RUN = re.compile(
    r"(?i)\b(?:never|don'?t|do not|avoid|dangerous|danger|warning|bad|wrong|not|example|e\.g|"
    r"beware|caution|careful|destructive|attack\w*|malicious|payload|exploit)\b"
)
_LABEL = re.compile(r"^(?:\*\*)?[A-Za-z][\w ()/-]{0,40}(?:\*\*)?:(?:\*\*)?[ \t]+")  # "Cleanup: ", "**Fix**: "
# inline code the sentence tells the reader to run ("just run `…`", "by running `…` in any terminal"), and a line
# that is one inline code span after a line that ends with a colon ("Fix for the alert, just run:" then `…`)
_RUN_IN_CODE = re.compile(r"(?i)\b(?:run|execute|paste|type|enter|running|executing|pasting)\s+`([^`\n]+)`")
_CODE_ALONE = re.compile(r"^`([^`\n]+)`[ \t.]*$")
# a command written as a template, not to run as it stands: a placeholder device or value (`/dev/sdX`, `<disk>`,
# `$DISK`, `{device}`)
_TEMPLATE = re.compile(r"/dev/(?:[shv]d[X-Z]|nvme[X-Z]n\d|disk[X-Z])\b|<[\w -]+>|\$\{?[A-Z_]{2,}\}?|\{[\w-]+\}")
_COMMAND_START = re.compile(
    r"^\(?[ \t]*(?:sudo[ \t]+)?(?:rm|mkfs(?:\.\w+)?|dd|curl|wget|chmod|iwr|irm|iex|invoke-\w+|format|remove-item|"
    r"shred|find|"
    r"source|eval|echo|(?:ba|z|k|da)?sh|nc|ncat|socat|python[23]?|perl|php|ruby|rd|rmdir|del|mkfifo|powershell|pwsh|"
    r"certutil|bitsadmin|mshta|regsvr32|format-volume|clear-disk|wipefs|sgdisk|blkdiscard|vssadmin|wmic|wbadmin|"
    r"bcdedit|pip[23]?|pipx|uv|npx|bunx|pnpx|npm|pnpm|yarn|bun|deno|start-(?:process|bitstransfer)|\.{1,2}/\S+|~/\S+|"
    r"crontab|osascript|launchctl|schtasks|printf|cat|tee|[A-Za-z_]\w*=\S*;)(?:\.exe)?(?:\s|$)|^[\w:]+\s*\(\s*\)\s*\{[^}\n]*\|",
    re.IGNORECASE,
)
_DANGEROUS_RM_TARGETS: Final = frozenset(
    {"/", "/*", "~", "~/", "~/*", "*", ".", "./", "./*", "..", "../", "$HOME", "${HOME}", "$HOME/", "$HOME/*",
     "${HOME}/", "${HOME}/*", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/root",
     "/sbin", "/srv", "/sys", "/usr", "/var", "/Users", "/System", "C:\\", "C:\\*", "c:\\"}
)  # fmt: skip
# `sudo` or `doas` with up to four options and values before the program it runs (`sudo -E`, `sudo -u root`)
_SUDO = r"(?:sudo|doas)(?:\s+\S+){0,4}?\s+"
# a drive's root, the Windows or Users folder, or a home folder, as a whole argument of a Windows delete
_DRIVE_OR_HOME = (
    r"(?:-(?:literal)?path\s+)?[\"']?(?:[a-z]:\\(?:windows(?:\\system32)?|users|program files)?\\?\*?|~|\$home|"
    r"\$env:(?:userprofile|systemroot|windir))[\"']?(?=\s|$)"
)
_DESTRUCTIVE: Final[tuple[tuple[str, str, re.Pattern[str]], ...]] = (
    ("executable:destructive-shell", "makes a file system (erases a disk or partition)",
     re.compile(r"(?<![\w.\-])mkfs(?:\.\w+)?\b[^\n]*\s/dev/", re.IGNORECASE)),
    ("executable:destructive-shell", "writes raw data over a disk with dd",
     re.compile(r"(?<![\w.\-])dd\b[^\n]*\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b|tty)", re.IGNORECASE)),
    ("executable:destructive-shell", "is a fork bomb",
     re.compile(r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:")),
    ("executable:destructive-shell", "opens the whole file system to everyone",
     re.compile(r"\bchmod\s+(?:-\w+\s+)*(?:(?:-R|--recursive)\s+(?:-\w+\s+)*(?:0?777|a\+rwx|ugo\+rwx)|"
                r"(?:0?777|a\+rwx|ugo\+rwx)\s+(?:-\w+\s+)*(?:-R|--recursive))\s+/\*?(?:\s|$)")),
    ("executable:destructive-shell", "overwrites a disk device",
     re.compile(r">\s*/dev/(?:sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d)")),
    ("executable:destructive-shell", "shreds a disk device", re.compile(r"\bshred\b[^\n]*\s/dev/(?:sd|nvme|hd|vd)")),
    ("executable:destructive-shell", "deletes everything under the root or home folder (find -delete)",
     re.compile(r"(?<![\w.\-])find\s+(?:/|~/?|\$HOME/?|\$\{HOME\}/?)\s[^\n]*(?:-delete\b|-exec\s+rm\b)")),
    ("executable:destructive-shell", "formats a Windows drive",
     re.compile(r"(?i)(?:^|[;&|]\s*)format(?:\.com)?\s+[a-z]:(?:\s+/|\s*$)|\b(?:format-volume|clear-disk)\b"
                r"[^\n]*\s-(?:driveletter|number|removedata)\b")),
    ("executable:destructive-shell", "deletes a whole drive or home folder recursively",
     # the recursion flag and the target in either order: `Remove-Item C:\ -Recurse`, `rd /s /q C:\Windows`
     re.compile(r"(?i)\b(?:remove-item|ri|rd|rmdir|del)\b[^\n]{0,300}?(?:\s(?:-recurse|/s)\b[^\n]{0,300}?\s"
                + _DRIVE_OR_HOME + r"|\s" + _DRIVE_OR_HOME + r"[^\n]{0,300}?\s(?:-recurse|/s)\b)")),
    ("executable:remote-script", "downloads a script and runs it",
     re.compile(r"(?i)\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n]*\|\s*"
                r"(?:" + _SUDO + r")?(?:(?:/\S*/)?env\s+(?:\S+=\S+\s+)*)?(?:(?:/\S*/)?busybox\s+)?"
                r"(?:/\S*/)?(?:(?:ba|z|k|da|fi)?sh|pwsh|powershell)\b(?![.\-])")),
    ("executable:remote-script", "downloads a script and runs it",
     re.compile(r"(?i)\b(?:curl|wget)\b[^\n|]*\|\s*(?:" + _SUDO + r")?(?:/\S*/)?(?:python[23]?|perl|ruby|node|php)\b"
                r"(?!\s+-[mce]\b)")),
    ("executable:remote-script", "downloads a script and runs it",
     re.compile(r"(?i)(?:\b(?:ba|z|k|da)?sh\s+(?:-c\s+)?|\bsource\s+|(?:^|[;&|]\s*)\.\s+|\beval\s+|"
                r"\b(?:python[23]?|perl|ruby|node)\s+-[ce]\s+)[\"']?(?:\$\(|<\(|`)\s*(?:curl|wget)\b")),
    ("executable:remote-script", "decodes hidden code and runs it",
     re.compile(r"(?i)\bbase64\s+(?:-[a-z]*d[a-z]*|--decode)\b[^\n]*\|\s*(?:" + _SUDO
                + r")?(?:/\S*/)?(?:ba|z|k|da)?sh\b")),
    ("executable:remote-script", "downloads a program, makes it executable and runs it",
     re.compile(r"(?i)\b(?:curl|wget)\b[^\n]{0,300}?\bchmod\s+(?:[ugoa]*\+x|[0-7]?[1357][0-7]{2})\s[^\n]{0,300}?"
                r"(?:&&|;)\s*(?:sudo\s+)?(?:\./|/|~/)\S")),
    ("executable:reverse-shell", "opens a shell to another machine over the network (a reverse shell)",
     re.compile(r"(?i)\b(?:ba|z)?sh\s+-i\b[^\n]*[<>]&?\s*/dev/(?:tcp|udp)/")),
    ("executable:reverse-shell", "adds a key that lets someone log in to this machine (authorized_keys)",
     re.compile(r"(?i)\bssh-(?:rsa|ed25519|dss|ecdsa\S*)\s+AAAA[^\n]*>>?\s*[\"']?\S*\.ssh/authorized_keys\b")),
    ("executable:reverse-shell", "opens a shell to another machine over the network (a reverse shell)",
     re.compile(r"(?i)\b(?:nc|ncat|netcat)\b[^\n]*\s(?:-[ec]|--exec|--sh-exec)[=\s]+[\"']?\S*\b(?:ba|z|k|da)?sh\b")),
    ("executable:reverse-shell", "opens a shell to another machine over the network (a reverse shell)",
     re.compile(r"(?i)\bsocat\b[^\n]*\bexec:[\"']?\S*sh\b")),
    ("executable:reverse-shell", "opens a shell to another machine over the network (a reverse shell)",
     re.compile(r"(?i)\bmkfifo\b[^\n]*\|\s*(?:/\S*/)?(?:ba|z|k|da)?sh\b[^\n]*\|\s*(?:nc|ncat|netcat|openssl)\b")),
    # a one-line program that connects out and hands the connection a shell (python -c, php -r, perl -e, ruby -e)
    ("executable:reverse-shell", "opens a shell to another machine over the network (a reverse shell)",
     re.compile(r"(?i)\b(?:python[23]?|php|perl|ruby)(?:\s+-[\w.-]+)*?\s+-[cre]\s[^\n]*"
                r"(?:socket|fsockopen|tcpsocket)[^\n]*(?:dup2|pty\.spawn|/bin/(?:ba|z)?sh|cmd\.exe|\bexec\s*\(|\bsystem\s*\(|proc_open|popen|spawn)")),
    # Windows programs that fetch and run code: encoded PowerShell, certutil and bitsadmin downloads, mshta and
    # regsvr32 pointed at an address
    ("executable:remote-script", "runs hidden code (an encoded PowerShell command)",
     re.compile(r"(?i)\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]*\s[-/]e(?:c|n[a-z]*)?\s+[\"']?[A-Za-z0-9+/]{16,}={0,2}"
                r"(?=[\s\"']|$)")),
    ("executable:remote-script", "downloads a program with a Windows tool",
     re.compile(r"(?i)\b(?:certutil|bitsadmin)(?:\.exe)?\b[^\n]*\s[-/](?:urlcache|transfer)\b[^\n]*\bhttps?://")),
    ("executable:remote-script", "runs code from an address with a Windows tool",
     re.compile(r"(?i)\bmshta(?:\.exe)?\s+[\"']?(?:https?://|javascript:|vbscript:)")),
    ("executable:remote-script", "runs code from an address with a Windows tool",
     re.compile(r"(?i)\bregsvr32(?:\.exe)?\s[^\n]*/i:[\"']?https?://")),
    ("executable:remote-script", "downloads a script and runs it",
     re.compile(r"(?i)\b(?:curl|wget)\b[^\n]*(?:&&|;)\s*(?:sudo\s+)?(?:(?:ba|z|k|da)?sh|source|python[23]?|perl|"
                r"ruby|node)\s+(?:-\S+\s+)*[\w./~$-]+\.(?:sh|py|pl|rb|js)\b")),
    ("executable:remote-script", "downloads code and runs it",
     re.compile(r"(?i)\b(?:exec|eval)\s*\([^\n]*\b(?:urlopen|urllib\.request|requests\.get|httpx\.get)\b")),
    ("executable:remote-script", "downloads a script and runs it",
     re.compile(r"(?i)\b(?:iex|invoke-expression)\b[^\n]*(?:downloadstring|\biwr\b|\birm\b|invoke-webrequest|"
                r"invoke-restmethod)")),
    ("executable:remote-script", "downloads a script and runs it",
     re.compile(r"(?i)(?:downloadstring|\biwr\b|\birm\b|invoke-webrequest|invoke-restmethod)[^\n]*\|"
                r"\s*(?:iex|invoke-expression)\b")),
    # disks, the running system and its backups
    ("executable:destructive-shell", "erases a disk's partition table or file-system signatures",
     re.compile(r"(?i)(?<![\w.\-])wipefs\b[^\n]*\s(?:-[a-z]*a[a-z]*|--all)\s[^\n]*/dev/")),
    ("executable:destructive-shell", "erases a disk's partition table or file-system signatures",
     re.compile(r"(?i)(?<![\w.\-])wipefs\b[^\n]*\s/dev/\S+[^\n]*\s(?:-[a-z]*a[a-z]*|--all)(?:\s|$)")),
    ("executable:destructive-shell", "erases a disk's partition table or file-system signatures",
     re.compile(r"(?<![\w.\-])sgdisk\b[^\n]*\s(?:--zap-all|--zap|-Z|-z)(?:\s|$)")),
    ("executable:destructive-shell", "discards every block of a disk",
     re.compile(r"(?i)(?<![\w.\-])blkdiscard\b[^\n]*\s/dev/")),
    ("executable:destructive-shell", "crashes, reboots or powers off the machine at once (sysrq)",
     re.compile(r"(?i)\b(?:echo|printf)\s+(?:-\w+\s+)*[\"']?[bceio][\"']?\s*(?:>|\|\s*(?:sudo\s+)?tee\b)"
                r"[^\n]*/proc/sysrq-trigger")),
    ("executable:destructive-shell", "deletes the system's backups (shadow copies) or its recovery",
     re.compile(r"(?i)\b(?:vssadmin(?:\.exe)?\s+delete\s+shadows|wmic(?:\.exe)?\s+shadowcopy\s+delete|"
                r"wbadmin(?:\.exe)?\s+delete\s+(?:catalog|systemstatebackup|backup))\b")),
    ("executable:destructive-shell", "deletes the system's backups (shadow copies) or its recovery",
     re.compile(r"(?i)\bwin32_shadowcopy\b[^\n]*\|\s*(?:remove-(?:wmiobject|ciminstance)|%\s*\{\s*\$_\.delete\(\))")),
    ("executable:destructive-shell", "deletes the system's backups (shadow copies) or its recovery",
     re.compile(r"(?i)\bbcdedit(?:\.exe)?\b[^\n]*\brecoveryenabled\s+(?:no|off|0)\b")),
    # code installed or run straight from an address: a package's install code runs as it is installed
    ("executable:remote-script", "installs a package from an address (its install code runs)",
     re.compile(r"(?i)\b(?:pip[23]?(?:\.\d+)?|pipx|uv\s+pip)\s+install\b[^\n]*\s[\"']?https?://\S*?"
                r"\.(?:tar\.gz|tgz|tar\.bz2|tar\.xz|zip)(?=[\"'#?\s]|$)")),
    ("executable:remote-script", "installs a package from an address (its install code runs)",
     re.compile(r"(?i)\b(?:npm|pnpm|yarn|bun)\s+(?:install|i|add)\b[^\n]*\s[\"']?https?://\S*?"
                r"\.(?:tgz|tar\.gz)(?=[\"'#?\s]|$)")),
    ("executable:remote-script", "fetches a program from a repository or an address and runs it",
     re.compile(r"(?i)\b(?:npx|bunx|pnpx|pnpm\s+dlx|yarn\s+dlx)\s+(?:-\S+\s+)*?(?:--package[= ]|-p\s+)?[\"']?"
                r"(?:github:|gitlab:|bitbucket:|gist:|git\+|git://|https?://|(?![@.~/-])[\w.-]+/[\w.-]+(?:#\S*)?"
                r"(?=[\"']?(?:\s|$)))")),
    ("executable:remote-script", "fetches a program from a repository or an address and runs it",
     re.compile(r"(?i)\b(?:uv|pipx|deno|bun)\s+run\s+(?:-\S+\s+)*[\"']?https?://")),
)  # fmt: skip

# Most rules open with a word and then take any run of characters (but line breaks, or but `|`). Such a rule can
# only match from the first of its opening words in a stretch without `|`: a match from a later one is a match
# from the first as well. `re.search` tries each of them, each to the line's end, and a line of one word many
# times over took seconds; `_search` tries the first only. Each rule's opening: its words, and whether `|` ends
# its run (keyed by the rule's pattern; a rule not listed is searched as it is). A rule is one alternative: its
# opening is read as what comes before its first run.
_OPENINGS: Final[dict[str, tuple[re.Pattern[str], bool]]] = {
    rx.pattern: (re.compile(head, rx.flags), "[^\\n|]" in rx.pattern)
    for _code, _what, rx in _DESTRUCTIVE
    for head in [rx.pattern.split("[^\\n", 1)[0]]
    if "[^\\n" in rx.pattern and not rx.pattern.startswith(":")
}


def _search(rx: re.Pattern[str], command: str) -> re.Match[str] | None:
    """`rx.search(command)`, in time linear in the command's length (see `_OPENINGS`)."""
    opening = _OPENINGS.get(rx.pattern)
    if opening is None:
        return rx.search(command)
    head, bar_ends = opening
    stretch_end = -1
    for m in head.finditer(command):
        if m.start() < stretch_end:
            continue  # a later opening word in a stretch whose first one was tried
        found = rx.match(command, m.start())
        if found:
            return found
        bar = command.find("|", m.end()) if bar_ends else -1
        stretch_end = len(command) if bar < 0 else bar
    return None


# the folders of a home directory that hold its keys and credentials
_KEY_FOLDERS = re.compile(r"(?:~|\$HOME)/\.(?:ssh|gnupg|aws|kube|docker|azure|gcloud|config|password-store)/?\*?")


def _rm_target(token: str) -> str:
    """An `rm` target as the shell reads it: quotes dropped, `${HOME}` and `${HOME:?}` as `$HOME`, repeated
    slashes as one and a trailing `/.` dropped (`//` and `/.` are the root, `$HOME/.` the home)."""
    t = re.sub(r"\$\{HOME(?::[?-][^}]*)?\}", "$HOME", token.replace('"', "").replace("'", ""))
    t = re.sub(r"/{2,}", "/", t)
    while t.endswith("/.") and len(t) > 2:
        t = t[:-2]
    return "/" if t == "/." else t


def _above_home(target: str) -> bool:
    """`~/..`, `$HOME/../..`: the folder that holds the home, or above it."""
    return re.fullmatch(r"(?:~|\$HOME)(?:/\.\.)+/?\*?", target) is not None


def _rm_is_destructive(command: str) -> bool:
    """`rm` with a recursive flag and a root, home, parent, current or wildcard target, a system folder's
    contents (`/etc/*`), or a folder of the home's keys (`~/.ssh`)."""
    for m in re.finditer(r"(?:(?<![\w.\-/])|(?<=/bin/))rm\s+([^\n;&|]*)", command):
        tokens = m.group(1).split()
        flags = [t for t in tokens if t.startswith("-") and t != "--"]
        targets = [_rm_target(t) for t in tokens if not t.startswith("-")]
        recursive = any(f == "--recursive" or (not f.startswith("--") and ("r" in f or "R" in f)) for f in flags)
        if recursive and any(
            t in _DANGEROUS_RM_TARGETS
            or t.removesuffix("/*") in _DANGEROUS_RM_TARGETS
            or (len(t) > 1 and t.rstrip("/") in _DANGEROUS_RM_TARGETS)
            or _KEY_FOLDERS.fullmatch(t)
            or _above_home(t)
            for t in targets
        ):
            return True
    return False


def _info(b: vault_schema.FencedBlock) -> str:
    # `run-python`, `run-sh`: the Execute Code plugin runs such a block in the language named after `run-`
    return (b.info.split() or [""])[0].lower().strip("{}.").removeprefix("run-")


def _block_rows(rows: list[str], b: vault_schema.FencedBlock) -> Iterator[tuple[int, str]]:
    """(1-based line, stripped line) of a fence's content; `rows`: the note's lines before flattening. A fence at
    the top level keeps a line's leading `>` (`> /dev/sda` is a redirect there, not a quote marker, though the
    flattened copy drops it)."""
    opener = rows[b.start_line].lstrip() if b.start_line < len(rows) else ">"
    for k, line in enumerate(b.content.split("\n")):
        raw = (
            rows[b.start_line + 1 + k].strip()
            if not opener.startswith(">") and b.start_line + 1 + k < len(rows)
            else ""
        )
        yield b.start_line + 2 + k, raw if raw.startswith(">") else line.strip()


def _command_lines(flat: str, blocks: list[vault_schema.FencedBlock], rows: list[str]) -> Iterator[tuple[int, str]]:
    """(1-based line, command) for every line meant to run: lines of shell-script, terminal-session and makefile
    fences, and lines of unlabeled and program-code fences and of prose that start with a prompt or a command.
    Comments are dropped; inline code is not a command (it is a mention)."""
    for b in blocks:
        info = _info(b)
        shell = info in _SCRIPT_INFOS or info in MAKE_INFOS
        if not shell and info not in _SESSION_INFOS and info not in CODE_INFOS and info != "":
            continue
        for lineno, line in _block_rows(rows, b):
            pm = _PROMPT.match(line) or (_ROOT_PROMPT.match(line) if info in _SESSION_INFOS else None)
            if pm:
                line = line[pm.end() :]
            elif info in MAKE_INFOS:
                line = line.lstrip("@-+").replace("$$", "$")  # a recipe line, its echo and error prefixes dropped
            elif not shell and not _COMMAND_START.match(line):
                continue  # unlabeled and code blocks run their prompt and command lines; session output does not run
            line = _TRAILING_COMMENT.sub("", line).strip()
            if line:
                yield lineno, line
    prose = vault_schema.strip_code(flat).split("\n")
    flat_rows = flat.split("\n")
    in_fence = fence_lines(blocks, len(prose))
    for i, raw in enumerate(prose):
        if i in in_fence or not raw:
            continue
        given = _GIVEN_IN_CODE.match(flat_rows[i].strip()) if i < len(flat_rows) else None
        if given and not _NOT_TO_RUN.search(given.group(1)) and _COMMAND_START.match(given.group(2)):
            yield i + 1, given.group(2).strip()  # "Cleanup: `rm -rf ~/`": a step, its command in code
            continue
        told = [c for c in _told_to_run(flat_rows, i) if _COMMAND_START.match(c)]
        for command in told:
            yield i + 1, command
        if told:
            continue
        line = _LIST_MARKER.sub("", raw.strip())
        pm = _PROMPT.match(line)
        labelled = _LABEL.match(line) if not pm and not _COMMAND_START.match(line) else None
        if pm:
            line = line[pm.end() :]
        elif labelled and _COMMAND_START.match(line[labelled.end() :]):
            line = line[labelled.end() :]  # "Debug tunnel: bash -i >& /dev/tcp/…": a label, then the command
        elif not _COMMAND_START.match(line):
            continue
        line = _TRAILING_COMMENT.sub("", line).strip()
        if line:
            yield i + 1, line


def _told_to_run(rows: list[str], i: int) -> list[str]:
    """The inline code of line `i` that the note tells its reader to run (`_RUN_IN_CODE`, `_CODE_ALONE`), unless
    the sentence or the line before warns against it ("never run `…`", "Do not paste:")."""
    row = rows[i].strip() if i < len(rows) else ""
    if "`" not in row:
        return []
    found: list[str] = []
    for m in _RUN_IN_CODE.finditer(row):
        sentence = re.split(r"[.!?]\s", row[: m.start()])[-1]
        if not _NOT_TO_RUN.search(sentence):
            found.append(m.group(1).strip())
    alone = _CODE_ALONE.match(row)
    if alone and not found:
        before = next((r.strip() for r in reversed(rows[:i]) if r.strip()), "")
        if before.endswith(":") and not _NOT_TO_RUN.search(before):
            found.append(alone.group(1).strip())
    return [command for command in found if not _TEMPLATE.search(command)]


def _exec_message(line: int, what: str) -> str:
    return (
        f"a command meant to run on line {line} {what}. Memory must not carry commands that destroy data or run "
        "downloaded code: describe the step in prose (for example 'installed with the vendor's install script') "
        "or remove it."
    )


_SCRIPT_TAG = re.compile(r"<script\b", re.IGNORECASE)
# an HTML tag that runs code when shown: an event handler attribute with code in it (`<img src=x onerror=...>`;
# embed snippets carry empty ones, `onmousewheel=""`), or a frame or object whose document is inline (`srcdoc`, a
# `data:` address)
_ACTIVE_TAG = re.compile(
    r"<[a-z][\w-]*\b[^<>]{0,400}?[\s/]on(?:error|load|click|dblclick|auxclick|contextmenu|mouse[a-z]+|pointer[a-z]+|"
    r"key(?:down|up|press)|focus(?:in|out)?|blur|change|input|invalid|submit|reset|select|search|toggle|wheel|scroll|"
    r"drag[a-z]*|drop|copy|cut|paste|touch[a-z]+|animation[a-z]+|transition[a-z]+|begin|end|repeat|play[a-z]*|pause|"
    r"show|message|hashchange|popstate|pageshow|resize|unload|beforeunload|abort|canplay[a-z]*|loadstart|"
    r"loadeddata|progress|seek[a-z]+|timeupdate|volumechange|waiting|ended)\s*=\s*(?:\"[^\"]+\"|'[^']+'|[^\s\"'>{][^\s\"'>]*)|"
    r"<(?:iframe|object|embed|frame)\b[^<>\n]*?"
    r"(?:\bsrcdoc\s*=|\b(?:src|data)\s*=\s*[\"']?\s*data:)",
    re.IGNORECASE,
)
# code blocks that an Obsidian plugin runs as JavaScript when the note is shown
_RUNNING_BLOCKS: Final = {"dataviewjs": "Dataview", "js-engine": "JS Engine", "meta-bind-js-view": "Meta Bind"}
# an address that runs script when opened: JavaScript or VBScript, or an HTML or script document inline (`data:`)
_SCRIPT_SCHEMES: Final = ("javascript:", "vbscript:", "livescript:", "data:")
_SCRIPT_ADDRESS = (
    r"(?:(?:java|vb|live)script:|data:(?:text/html|application/xhtml\+xml|(?:text|application)/(?:x-)?"
    r"(?:java|ecma)script)[;,])"
)
# a link whose address runs script: inline, as a reference definition (`[1]: javascript:…`), an autolink, any
# attribute's value (`href=`, `data=`, a refresh's `content="0;url=…"`) or a CSS url(), read after HTML entities
# are decoded and the tabs, line breaks and control characters a browser drops from an address are removed
_JS_URL = re.compile(
    r"(?i)(?:\]\(\s*<?|^\s{0,3}\[[^\]\n]+\]:\s*<?|<|=\s*[\"']?\s*|\burl\(\s*[\"']?\s*)" + _SCRIPT_ADDRESS
)
_INLINE_DVJS = re.compile(r"(?<!`)`\$=[^`\n]+`(?!`)")
_TEMPLATER_OPEN = re.compile(r"<%[-_*+~]?")
_MAX_TEMPLATER_SPAN: Final = 4000
# What a tag that only reads and prints holds: a date, a fact of the note's file or a frontmatter value, its
# arguments literals (a string without quotes or backslashes inside, a number, true, false or null).
_LITERAL = r"""(?:"[^"\\\n]*"|'[^'\\\n]*'|-?\d+(?:\.\d+)?|true|false|null)"""
_ARGUMENTS = rf"(?:\(\s*(?:{_LITERAL}(?:\s*,\s*{_LITERAL})*)?\s*\))?"
_PRINTS_ONLY = re.compile(
    rf"[-_]?\s*tp\.(?:date\.(?:now|tomorrow|yesterday|weekday){_ARGUMENTS}"
    rf"|file\.(?:title|creation_date|last_modified_date|path|folder|tags|cursor){_ARGUMENTS}"
    r"|frontmatter(?:\.[A-Za-z_]\w*|\[\s*(?:\"[^\"\\\n]*\"|'[^'\\\n]*')\s*\]))\s*[-_]?"
)


def _templater_tags(prose: str) -> Iterator[int]:
    """Start positions of `<% … %>` tags (closed within 4,000 characters) that do more than print a date, a
    fact of the note's file or a frontmatter value (`_PRINTS_ONLY`). `prose`: the text with its code blanked
    out, each inline code span as one NUL, so a tag that holds one (a JavaScript template literal is written in
    backticks) never reads as a tag that only prints."""
    closes = [m.start() for m in re.finditer("%>", prose)]
    if not closes:
        return
    last_end = -1
    for m in _TEMPLATER_OPEN.finditer(prose):
        if m.start() < last_end:
            continue
        k = bisect.bisect_left(closes, m.end())
        if k < len(closes) and closes[k] - m.start() <= _MAX_TEMPLATER_SPAN:
            last_end = closes[k] + 2
            if not (m.group() in ("<%", "<%-", "<%_") and _PRINTS_ONLY.fullmatch(prose, m.end(), closes[k])):
                yield m.start()


def _js_link_lines(prose: str) -> Iterator[int]:
    """Lines (1-based) holding a link whose address runs script, entities decoded (`j&#97;vascript:`) and the
    control characters a browser drops from an address (`java<TAB>script:`) removed."""
    for i, line in enumerate(prose.split("\n")):
        low = html.unescape(line).lower() if "&" in line else line.lower()
        if _ADDRESS_DROPS.search(low):
            low = _ADDRESS_DROPS.sub("", low)
        if ("script:" in low or "data:" in low) and _JS_URL.search(low):
            yield i + 1


_ADDRESS_DROPS = re.compile(r"[\x00-\x1f\x7f]")
_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # but the line break


def executable_findings(text: str, field: str) -> Iterator[Finding]:
    flat = flatten_containers(text)
    blocks = vault_schema.fenced_blocks(flat)
    for b in blocks:
        info = _info(b)
        if info in _RUNNING_BLOCKS:
            line = b.start_line + 1
            yield Finding(
                "executable:dataviewjs",
                field,
                f"a ```{info} block on line {line}: {_RUNNING_BLOCKS[info]} runs it as JavaScript inside Obsidian. "
                "Describe it in prose, or fence it as plain ```js so it is shown and not run.",
                line,
            )
    if "`$=" in flat:
        flat_lines = flat.split("\n")
        in_fence = fence_lines(blocks, len(flat_lines))
        for i, line_text in enumerate(flat_lines):
            if i not in in_fence and _INLINE_DVJS.search(line_text):
                yield Finding(
                    "executable:dataviewjs",
                    field,
                    f"an inline Dataview JS query (`$= …`) on line {i + 1}: Obsidian runs it as JavaScript. Remove "
                    "the `$=` prefix or describe the query in prose.",
                    i + 1,
                )
    low = flat.lower()
    if "<" in flat and ("on" in low or "data:" in low or "srcdoc" in low):
        prose = vault_schema.strip_code(flat)
        lines = Lines(prose)
        for m in _ACTIVE_TAG.finditer(prose):
            line = lines.at(m.start())
            yield Finding(
                "executable:html-script",
                field,
                f"an HTML tag that runs code when shown (an event handler such as onerror=, or an inline frame) "
                f"outside code on line {line}: memory must not carry code that runs when it is rendered. Put the "
                "markup in a code block, or remove the attribute.",
                line,
            )
            break
    address = _CONTROLS.sub("", low) if _CONTROLS.search(low) else low
    if (
        "<%" in flat
        or "<script" in low
        or "script:" in address
        or "data:" in address
        or ("&" in low and ("script" in low or "&#" in low or "data" in low))
    ):
        prose = vault_schema.strip_code(flat)
        lines = Lines(prose)
        for pos in _templater_tags(vault_schema.strip_code(flat, "\0") if "<%" in flat else ""):
            line = lines.at(pos)
            yield Finding(
                "executable:templater",
                field,
                f"a Templater tag (<% … %>) outside code on line {line}: it runs as JavaScript when the note is "
                "used as a template. Put it in inline code or a code block to document it, or remove it.",
                line,
            )
        for m in _SCRIPT_TAG.finditer(prose):
            line = lines.at(m.start())
            yield Finding(
                "executable:html-script",
                field,
                f"an HTML <script> tag outside code on line {line}: memory must not carry code that runs when it "
                "is rendered. Link to the page instead, or put the markup in a code block.",
                line,
            )
        for line in _js_link_lines(prose):
            yield Finding(
                "executable:javascript-url",
                field,
                f"a link whose address runs script (javascript:, vbscript: or an HTML data: address) on line {line}: "
                "it runs code when clicked or shown. Use an ordinary link or remove it.",
                line,
            )
    rows = text.split("\n")
    commands = list(_command_lines(flat, blocks, rows))
    flagged: set[int] = set()
    for line, command in commands:
        verdict = _judge(command)
        if verdict:
            flagged.add(line)
            yield Finding(verdict[0], field, _exec_message(line, verdict[1]), line)
    verdicts = list(_downloads_run(commands, blocks, rows))
    for b in blocks:
        info = _info(b)
        if info in CODE_INFOS or info in _SCRIPT_INFOS or info in _SESSION_INFOS or info in MAKE_INFOS or info == "":
            verdicts += code_verdicts(list(_block_rows(rows, b)), _judge)
        elif info == "button":
            for k, action in button_commands(b.content):
                plain = _ADDRESS_DROPS.sub("", action.lower()).lstrip()
                verdict = ("executable:javascript-url", "opens an address that runs script")
                if not plain.startswith(_SCRIPT_SCHEMES):
                    verdict = _judge(action)
                if verdict:
                    verdicts.append((b.start_line + 2 + k, verdict))
    for line, (code, what) in verdicts:
        if line not in flagged:
            flagged.add(line)
            yield Finding(code, field, _exec_message(line, what), line)


def _downloads_run(
    commands: list[tuple[int, str]], blocks: list[vault_schema.FencedBlock], rows: list[str]
) -> Iterator[tuple[int, Verdict]]:
    """A download run later, read across the lines of a script (a fence whose lines run one after another:
    a shell, makefile or unlabeled block without prompts) and within each other command line. A terminal
    transcript (lines behind a prompt) and shell history in prose are steps typed one at a time, where a separate
    download and run is the download-look-run practice, so across their lines it is not read."""
    ordered = sorted(commands)
    starts = [line for line, _command in ordered]
    in_script: set[int] = set()
    for b in blocks:
        info = _info(b)
        if info not in _SCRIPT_INFOS and info not in MAKE_INFOS and info != "":
            continue
        block = list(_block_rows(rows, b))
        if not block or any(_PROMPT.match(row) for _line, row in block):
            continue
        lo, hi = bisect.bisect_left(starts, block[0][0]), bisect.bisect_right(starts, block[-1][0])
        in_script.update(range(lo, hi))
        yield from download_then_run(ordered[lo:hi])
    for k, command in enumerate(ordered):
        if k not in in_script:
            yield from download_then_run([command])


def _judge(command: str) -> Verdict | None:
    """(code, what it does) for a command line that destroys data or runs downloaded code, else None."""
    if _rm_is_destructive(command):
        return "executable:destructive-shell", "deletes a root, home, parent or wildcard directory recursively (rm -r)"
    for code, what, rx in _DESTRUCTIVE:
        if _search(rx, command):
            return code, what
    return None
