"""Executable shapes that take more than one command line, or a program's code, to see (read by `executable.py`):
a file downloaded and then run, or downloaded into a place the system runs on its own (cron, a service, a login
script); a shell string handed to a call that runs it (`os.system`, `subprocess`, `child_process`, `system`),
judged as the command it is; code run straight from a download or from an encoded literal (`exec(b64decode(…))`),
the encoded literal decoded and judged too; and an Obsidian Buttons block whose action runs a shell command.

Every reader here is linear in the text: one regex search per line from its first opening word, and a download
is matched to a later run by its file name, through a set.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final

Verdict = tuple[str, str]  # (code, what the command does)
Judge = Callable[[str], "Verdict | None"]

# code blocks in a programming language: their lines are read as code (a call that runs a shell string, code run
# from a download or a decoded literal) and, when they start with a prompt or a command, as commands
CODE_INFOS: Final = frozenset(
    {"python", "py", "python3", "py3", "ipython", "pycon", "js", "javascript", "jsx", "mjs", "cjs", "node", "nodejs",
     "ts", "typescript", "tsx", "ruby", "rb", "perl", "pl", "php", "lua", "go", "golang", "groovy", "java", "cs",
     "csharp", "vb", "vbs", "vbscript", "applescript", "rust", "rs"}
)  # fmt: skip
# makefile recipes are shell lines: every line is a command (`@`, `-`, `+` prefixes dropped, `$$` read as `$`)
MAKE_INFOS: Final = frozenset({"makefile", "make", "mk", "justfile", "just"})

# a call that hands its argument to a shell or starts a program; Ruby and Perl also run a bare string or backticks
_SHELL_CALL = re.compile(
    r"\b(?:os\.(?:system|popen|exec\w*|spawn\w*)|subprocess\.\w+|commands\.getoutput|pty\.spawn|"
    r"(?:child_process\W+)?(?:exec|execSync|execFile|execFileSync|spawn|spawnSync)|system|shell_exec|passthru|"
    r"popen[23]?|proc_open|Popen|check_output|check_call|getoutput|getstatusoutput|Command|ShellExecute|"
    r"Process\.Start|Runtime\.getRuntime\(\)\.exec)\s*\(|\b(?:system|exec)\s+(?=[\"'`])|%x[({\[]|\bqx[({\[/]"
)
_STRING = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'|`([^`\n]*)`")
_ESCAPE = re.compile(r"\\(.)")
# code run from a download (`exec(urlopen(…).read())`, `eval(await (await fetch(u)).text())`) or from a decoded
# or unpacked literal (`exec(base64.b64decode("…"))`, `eval(atob("…"))`): the run word first, the source after it
_RUN_CODE = re.compile(r"\b(?:exec|eval|execSync|instance_eval|class_eval|Invoke-Expression|iex)\b|\bnew\s+Function\b")
_FETCHED = re.compile(
    r"(?i)\b(?:urlopen|urllib\d?\.request|requests\.(?:get|post)|httpx\.\w+|fetch\s*\(|axios|uri\.open|"
    r"net::http|lwp::|httparty|https?\.get|downloadstring|invoke-webrequest|invoke-restmethod|"
    r"file_get_contents\s*\(\s*[\"']https?:)"
)
_UNPACKED = re.compile(
    r"(?i)\b(?:b64decode|urlsafe_b64decode|decodebytes|decodestring|atob|decode64|strict_decode64|base64_decode|"
    r"frombase64string|fromhex|unhexlify|zlib\.decompress|marshal\.loads|rot_?13|fromcharcode)\b|"
    r"\bbuffer\.from\s*\([^)\n]*base64"
)
# an encoded literal handed to a decoder
_ENCODED = re.compile(
    r"(?i)\b(?:b64decode|urlsafe_b64decode|decodebytes|decodestring|atob|decode64|strict_decode64|base64_decode|"
    r"frombase64string|buffer\.from)\s*\(\s*[bu]?[\"']([A-Za-z0-9+/_-]{8,}={0,2})[\"']"
)


def _strings(text: str) -> str:
    """The string literals of `text`, unescaped, joined by spaces (an argument list read as one command line)."""
    parts = []
    for m in _STRING.finditer(text):
        value = next(g for g in m.groups() if g is not None)
        parts.append(_ESCAPE.sub(r"\1", value))
    return " ".join(parts)


def _decoded(literal: str) -> str | None:
    """A base64 literal as text, or None when it is not base64 of readable text."""
    s = literal.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    for encoding in ("utf-8", "utf-16-le"):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if text and sum(c.isprintable() or c in "\n\t\r" for c in text) >= 0.95 * len(text):
            return text
    return None


def code_verdicts(rows: list[tuple[int, str]], judge: Judge, depth: int = 0) -> Iterator[tuple[int, Verdict]]:
    """(line, verdict) for lines of code (1-based line, text) that run fetched or decoded code, or hand a shell
    command that `judge` refuses to a call that runs it. An encoded literal is decoded and its text judged as
    commands and as code (two levels deep)."""
    for k, (line, text) in enumerate(rows):
        stripped = text.lstrip()
        if stripped.startswith(("#", "//")) and not stripped.startswith("#!"):
            continue  # a comment
        run = _RUN_CODE.search(text)
        if run and _FETCHED.search(text, run.end()):
            yield line, ("executable:remote-script", "downloads code and runs it")
            continue
        if run and _UNPACKED.search(text, run.end()):
            yield line, ("executable:remote-script", "decodes hidden code and runs it")
            continue
        verdict = None
        call = _SHELL_CALL.search(text)
        if call:
            # the call's arguments: to the line's end, and on up to eight more lines while its brackets are open
            span, depth_open = text[call.end() - 1 :], 0
            for _n, more in rows[k + 1 : k + 9]:
                depth_open = span.count("(") + span.count("[") - span.count(")") - span.count("]")
                if depth_open <= 0:
                    break
                span += "\n" + more
            command = _strings(span)
            verdict = judge(command) if command else None
        if verdict is None and depth < 2 and "(" in text:
            for m in _ENCODED.finditer(text):
                plain = _decoded(m.group(1))
                if plain is None:
                    continue
                inner = [(line, row) for row in plain.split("\n") if row.strip()]
                verdict = next((v for row in plain.split("\n") if row.strip() and (v := judge(row.strip()))), None)
                verdict = verdict or next((v for _l, v in code_verdicts(inner, judge, depth + 1)), None)
                if verdict:
                    break
        if verdict:
            yield line, verdict


# Downloads: the file a download command writes, by the tool's own options
_DOWNLOADERS: Final = frozenset(
    {"curl", "wget", "iwr", "irm", "invoke-webrequest", "invoke-restmethod", "start-bitstransfer", "aria2c", "fetch"}
)
_CURL_OUT = re.compile(r"(?:^|\s)(?:-[a-zA-Z]*o|--output)(?:\s+|=)(\S+)")
_CURL_REMOTE_NAME = re.compile(r"(?:^|\s)(?:-[a-zA-Z]*O[a-zA-Z]*|--remote-name(?:-all)?)(?=\s|$)")
_WGET_OUT = re.compile(r"(?:^|\s)(?:-[a-zA-Z]*O\s*|--output-document=)(\S+)")
_WGET_DIR = re.compile(r"(?:^|\s)(?:-P\s*|--directory-prefix=)(\S+)")
_PS_OUT = re.compile(r"(?i)(?:^|\s)-(?:outfile|outf|destination|dir|out)(?:\s*[:=]\s*|\s+)(\S+)")
_DOWNLOAD_FILE = re.compile(r"(?i)downloadfile(?:async)?\s*\(\s*([\"'])[^\"'\n]*\1\s*,\s*[\"']?([^\"')\s]+)")
_PIPED_TO = re.compile(r"(?:\|\s*(?:(?:sudo|doas)\s+(?:-\S+\s+)*)?tee\s+(?:-\S+\s+)*|(?<![0-9&>])>>?\s*)([^\s|;&<>]+)")
_URL = re.compile(r"(?i)https?://[^\s\"'<>|;&]+")
_SEGMENTS = re.compile(r"&&|\|\||;|(?<![>&|])&(?![>&])")
# places the system runs files from on its own: cron, services, init and login scripts, autostart folders
_AUTORUN = re.compile(
    r"(?i)^(?:/etc/(?:cron\.(?:d|daily|hourly|weekly|monthly)/|crontab$|anacrontab$|systemd/|init\.d/|init/|"
    r"rc\.local$|rc\d\.d/|profile$|profile\.d/|bash\.bashrc$|zshrc$|zsh/|sudoers|ld\.so\.preload$|"
    r"update-motd\.d/|xdg/autostart/|network/if-up\.d/)|/(?:usr/)?lib/systemd/|/var/spool/cron/|"
    r"/library/launch(?:agents|daemons)/|(?:~|\$home|\$\{home\})/(?:\.bashrc$|\.bash_profile$|\.bash_login$|"
    r"\.profile$|\.zshrc$|\.zprofile$|\.zshenv$|\.config/autostart/|\.config/systemd/|library/launchagents/|"
    r"\.config/fish/config\.fish$))|programs/startup/"
)
# what runs a file named after it, and the wrappers and options before it
_RUNNERS: Final = frozenset(
    {"sh", "bash", "zsh", "ksh", "dash", "fish", "source", ".", "python", "python2", "python3", "perl", "ruby", "node",
     "php", "pwsh", "powershell", "cmd", "start", "start-process", "saps", "invoke-item", "ii", "msiexec", "wscript",
     "cscript", "mshta", "rundll32", "regsvr32", "bun", "deno"}
)  # fmt: skip
_WRAPPERS: Final = frozenset({"sudo", "doas", "env", "nohup", "exec", "time", "nice", "command", "&", "call"})
_VALUED: Final = frozenset(
    {"-u", "-g", "-executionpolicy", "-ep", "-exec", "-windowstyle", "-w", "-verb", "-workingdirectory",
     "-argumentlist"}
)  # fmt: skip
_NOT_A_FILE_RUN: Final = frozenset({"-m", "-c", "-e", "-r", "--version", "-v", "-V"})


def _path(token: str) -> str:
    return token.strip("\"'()").replace("\\", "/")


def _name(token: str) -> str:
    return _path(token).rstrip("/").rsplit("/", 1)[-1].lower()


def _written(segment: str) -> list[str]:
    """The paths a download command in `segment` writes (the URL's last part where the tool names it so)."""
    words = [w.lower().removesuffix(".exe") for w in segment.split()]
    tool = next((w for w in words if w in _DOWNLOADERS), None)
    if tool is None:
        m = _DOWNLOAD_FILE.search(segment)
        return [m.group(2)] if m else []
    paths = [m.group(1) for m in _PIPED_TO.finditer(segment)]
    urls = _URL.findall(segment)
    if tool == "curl":
        paths += _CURL_OUT.findall(segment)
        if _CURL_REMOTE_NAME.search(segment):
            paths += urls
    elif tool == "wget":
        named = _WGET_OUT.findall(segment)
        paths += named
        if not named and not paths:
            paths += urls
    else:
        paths += _PS_OUT.findall(segment)
    return [p for p in paths if _name(p) not in ("", "-", "null") and not _path(p).startswith("/dev/")]


def _run_target(segment: str) -> str | None:
    """The file a command segment runs: a path run as a program (`./x`, `/tmp/x`, `$env:TEMP\\x.exe`), or the
    first file argument of a shell, interpreter or Windows launcher (`bash /tmp/u.sh`, `Start-Process x.exe`)."""
    words = [w for w in segment.split() if w != "|"]
    i = 0
    while i < len(words):
        w = words[i].lower()
        if w in _WRAPPERS or (i and (w.startswith("-") or "=" in w)):
            i += 2 if w in _VALUED else 1
            continue
        break
    if i >= len(words):
        return None
    first = words[i]
    runner = first.lower().removesuffix(".exe")
    if runner not in _RUNNERS:
        return first if ("/" in first or "\\" in first) and not first.startswith("-") else None
    rest = words[i + 1 :]
    j = 0
    while j < len(rest):
        w = rest[j].lower()
        if w in _NOT_A_FILE_RUN and runner not in ("pwsh", "powershell"):
            return None
        if w.startswith("-") or (w.startswith("/") and len(w) <= 3):
            j += 2 if w in _VALUED else 1
            continue
        return rest[j]
    return None


def download_then_run(commands: Iterable[tuple[int, str]]) -> Iterator[tuple[int, Verdict]]:
    """(line, verdict) for command lines, read in order, that run a file an earlier download wrote, or that
    download into a place the system runs on its own."""
    fetched: set[str] = set()
    for line, command in commands:
        verdict = None
        for segment in _SEGMENTS.split(command):
            target = _run_target(segment)
            if target and _name(target) in fetched:
                verdict = ("executable:remote-script", "runs a file it downloaded")
            for path in _written(segment):
                if _AUTORUN.search(_path(path)):
                    verdict = verdict or (
                        "executable:remote-script",
                        "downloads a file into a place the system runs on its own (cron, a service, a login script)",
                    )
                fetched.add(_name(path))
        if verdict:
            yield line, verdict


_BUTTON_FIELD = re.compile(r"^(type|action)\s+(.*)$", re.IGNORECASE)
_SHELL_COMMAND_ACTION = re.compile(r"(?i)^[^:\n]{0,80}:\s*(?:execute|run)\s*:\s*")


def button_commands(content: str) -> Iterator[tuple[int, str]]:
    """(0-based row, command) for a Buttons plugin block whose button runs a command: the action's text, a
    "Shell commands: Execute: …" prefix dropped, read as the shell command it runs."""
    fields: dict[str, tuple[int, str]] = {}
    for k, row in enumerate(content.split("\n")):
        m = _BUTTON_FIELD.match(row.strip())
        if m:
            fields.setdefault(m.group(1).lower(), (k, m.group(2).strip()))
    kind, action = fields.get("type", (0, "")), fields.get("action")
    if action and kind[1].lower().startswith(("command", "link")):
        yield action[0], _SHELL_COMMAND_ACTION.sub("", action[1])
