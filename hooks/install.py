"""`agentmd hooks install|uninstall`: put agentmd's four Claude Code hooks into a settings file, or take
them out again, leaving everything else in the file as it was.

The hooks (Claude Code settings, `{"hooks": {"<Event>": [{"matcher": ..., "hooks": [{"type": "command",
"command": ...}]}]}}`):

    UserPromptSubmit             -> <agentmd> hook recall --vault <vault>
    SessionStart                 -> <agentmd> hook session-start --vault <vault>
    PreToolUse, matcher "Bash"   -> <agentmd> hook worktree-guard --vault <vault>
    PreToolUse, matcher "Read|Grep|Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*"
                                 -> <agentmd> hook file-guard --vault <vault>

`<agentmd>` is the absolute path of the running `agentmd` (or the one on PATH, else `<python> -m agentmd`),
so the hooks work outside any virtualenv; the vault is named explicitly (and `--index`/`--config` when they
were given to `install`). Which file: `--user` (the default) is `~/.claude/settings.json`; `--project DIR` is
`DIR/.claude/settings.local.json`, the project's settings of this person alone: the commands name this
machine's paths, which the team's shared `DIR/.claude/settings.json` (checked in) must not hold. `uninstall
--project` takes them out of both, an earlier install having written the shared one.

How an entry is recognised as agentmd's: its command, split as a shell would, is `<...>/agentmd hook <name>
...` (or `<python> -m agentmd hook <name>`, or the light entry point `<...>/agentmd-hook <name>` /
`<python> -m agentmd.hooks.entry <name>`) with `<name>` the hook that belongs under that event. Any
install location and any vault match, so installing again after a move or with another vault updates the
entry in place instead of adding a second one; nothing else is ever matched.

Guarantees: the file is written atomically (temporary file, fsync, rename; through a symlink to its target)
and only when something changes — repeating `install` leaves the file byte-identical — with the old bytes
kept first as `<file>.agentmd-backup-<UTC time>`; the unified diff is printed (`--dry-run` prints it and
writes nothing); the file's own layout is kept (indent, ASCII escaping, final newline), so `uninstall` after
`install` gives back the same JSON (no file at all when it held agentmd's hooks alone, and no backup of it:
`install` writes it again), byte for byte for a file in `json.dumps(indent=2)` layout (with or
without ASCII escapes, a final newline or CRLF line ends); a file that is not a JSON object (including an
empty file), or whose `hooks` are not in the documented shape, is refused with nothing changed.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import difflib
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmd.engine.errors import AgentmdError, UsageError
from agentmd.engine.fsutil import atomic_write

# (event, matcher or None, hook name): the order they are written in
HOOKS: tuple[tuple[str, str | None, str], ...] = (
    ("UserPromptSubmit", None, "recall"),
    ("SessionStart", None, "session-start"),
    ("PreToolUse", "Bash", "worktree-guard"),
    ("PreToolUse", "Read|Grep|Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*", "file-guard"),
)
BACKUP_INFIX = ".agentmd-backup-"


class SettingsRefused(AgentmdError):
    """The settings file is not something agentmd will edit."""


# --------------------------------------------------------------------------------------------------
# Which file, which commands


def settings_path(*, project: str | None = None, user: bool = False, home: str | None = None) -> Path:
    """`DIR/.claude/settings.local.json` for `--project DIR`, else the user's `~/.claude/settings.json`."""
    if project is not None:
        return project_root(project) / ".claude" / "settings.local.json"
    base = Path(home) if home else Path(os.environ.get("HOME") or Path.home())
    return base / ".claude" / "settings.json"


def in_checkout(path: str) -> Path | None:
    """The source checkout whose virtualenv holds `path` (`<checkout>/<venv>/bin/agentmd`, with a
    `pyproject.toml` beside the venv), or None. A command there stops working when the checkout is moved;
    one installed by a tool manager (pipx, uv tool) or on PATH does not."""
    venv = Path(path).parent.parent
    if (venv / "pyvenv.cfg").is_file() and (venv.parent / "pyproject.toml").is_file():
        return venv.parent
    return None


def agentmd_argv(argv0: str | None = None, on_path: str | None = None) -> list[str]:
    """How to run this agentmd from anywhere: the absolute path of the `agentmd` being run, else the one on
    PATH, else this interpreter with `-m agentmd`. When the one being run lives in a source checkout's
    virtualenv and another `agentmd` on PATH does not, the one on PATH is used: the hooks then survive the
    checkout being moved. (Absolute, not symlink-resolved: a pipx or Homebrew shim stays valid across upgrades.)"""
    argv0 = (sys.argv[0] if sys.argv else "") if argv0 is None else argv0
    found = shutil.which("agentmd") if on_path is None else on_path
    if argv0 and os.path.basename(argv0) == "agentmd" and os.path.isfile(argv0):
        running = os.path.abspath(argv0)
        if found and in_checkout(running) is not None and in_checkout(os.path.abspath(found)) is None:
            return [os.path.abspath(found)]
        return [running]
    if found:
        return [os.path.abspath(found)]
    # -P: the current folder is not put on the import path, so a project holding an `agentmd/` folder of its own
    # cannot stand in for this one when a hook or an MCP client starts it there
    return [os.path.abspath(sys.executable), "-P", "-m", "agentmd"]


def moved_checkout_note(executable: Sequence[str]) -> str | None:
    """What to tell the person installing hooks that run a command inside a source checkout: moving the
    checkout breaks them, and how to avoid that. None when the command lives elsewhere."""
    checkout = in_checkout(executable[0]) if executable else None
    if checkout is None:
        return None
    program = light_entry(executable) or executable[0]  # what the settings file names (`hook_commands`)
    return (
        f"note: the hooks run {program}, inside {checkout}; if you move or delete that folder, run "
        "`agentmd hooks install` again from its new place. To have hooks that do not depend on it, install "
        f"the command with a tool manager (`pipx install {checkout}` or `uv tool install {checkout}`) and run "
        "that `agentmd hooks install`."
    )


def light_entry(executable: Sequence[str]) -> str | None:
    """The `agentmd-hook` installed beside `agentmd` (hooks/entry.py): it starts in a fraction of the time
    the full command line takes, which matters for a hook that runs before every prompt or shell call."""
    if len(executable) != 1:
        return None
    candidate = os.path.join(os.path.dirname(executable[0]), "agentmd-hook")
    return candidate if os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None


def hook_commands(
    executable: Sequence[str], vault: Path, *, index: str | None = None, config: str | None = None
) -> dict[str, str]:
    """The shell command of each hook, by hook name."""
    tail = ["--vault", str(vault)]
    if index:
        tail += ["--index", str(Path(index).expanduser().resolve())]
    if config:
        tail += ["--config", str(Path(config).expanduser().resolve())]
    light = light_entry(executable)
    if light is not None:
        return {name: shlex.join([light, name, *tail]) for _event, _matcher, name in HOOKS}
    return {name: shlex.join([*executable, "hook", name, *tail]) for _event, _matcher, name in HOOKS}


def agentmd_hook_name(command: Any) -> str | None:
    """The agentmd hook a settings command runs (`recall`, `session-start`, ...), or None if it is not one.
    Recognised: `.../agentmd hook NAME`, `<python> -m agentmd hook NAME`, and the light entry point
    `.../agentmd-hook NAME` / `<python> -m agentmd.hooks.entry NAME` (hooks/entry.py)."""
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    base = os.path.basename(words[0]) if words else ""
    if base == "agentmd" and len(words) >= 3 and words[1] == "hook":
        return words[2]
    if base == "agentmd-hook" and len(words) >= 2:
        return words[1]
    if base.startswith("python"):  # the interpreter's own flags first (`-P`, `-I`), then `-m MODULE`
        words = [words[0], *[w for w in words[1:] if w not in ("-P", "-I", "-s", "-E", "-B")]]
    if base.startswith("python") and len(words) >= 4 and words[1] == "-m":
        # The module names before the agentmd namespace are still recognised, so uninstall finds older entries.
        if words[2] in ("agentmd", "agentmd.cli", "engine.cli") and words[3] == "hook" and len(words) >= 5:
            return words[4]
        if words[2] in ("agentmd.hooks.entry", "hooks.entry"):
            return words[3]
    return None


def _is_ours(entry: Any, name: str) -> bool:
    return isinstance(entry, dict) and agentmd_hook_name(entry.get("command")) == name


# --------------------------------------------------------------------------------------------------
# Reading and writing the file


@dataclass(frozen=True)
class Layout:
    """How a JSON file was laid out, so that writing it back changes only what changed."""

    indent: int | str | None = 2
    separators: tuple[str, str] | None = None
    ensure_ascii: bool = False
    final_newline: bool = True
    newline: str = "\n"

    @classmethod
    def of(cls, text: str | None) -> Layout:
        if text is None:
            return cls()
        body = text.strip()
        final = text.endswith("\n")
        ascii_only = text.isascii()
        newline = "\r\n" if "\r\n" in text else "\n"
        if "\n" not in body:  # one line
            sep = (",", ":") if re.search(r'"\s*:\S', body) or re.search(r"[\]}\"\d],\S", body) else None
            return cls(indent=None, separators=sep, ensure_ascii=ascii_only, final_newline=final, newline=newline)
        m = re.search(r"\n([ \t]+)\S", body)
        indent: int | str = 2
        if m:
            ws = m.group(1)
            indent = len(ws) if set(ws) == {" "} else ws
        return cls(indent=indent, ensure_ascii=ascii_only, final_newline=final, newline=newline)

    def dumps(self, data: Any) -> str:
        text = json.dumps(data, indent=self.indent, ensure_ascii=self.ensure_ascii, separators=self.separators)
        text += "\n" if self.final_newline else ""
        return text.replace("\n", self.newline) if self.newline != "\n" else text


def read_settings(path: Path) -> tuple[str | None, dict[str, object]]:
    """(the file's text or None when it does not exist, its JSON object). Refuses anything else."""
    try:
        with open(path, encoding="utf-8", newline="") as fh:  # keep CRLF as it is
            text = fh.read()
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsRefused(f"{path} could not be read ({exc}); nothing was changed") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsRefused(
            f"{path} is not valid JSON ({exc}); agentmd will not edit it. Fix the file (or move it aside) and "
            "run the command again; nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise SettingsRefused(f"{path} holds JSON but not an object ({type(data).__name__}); nothing was changed")
    _check_shape(path, data)
    return text, data


def _check_shape(path: Path, data: dict[str, object]) -> None:
    hooks = data.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise SettingsRefused(f'{path}: "hooks" is not an object; fix it by hand first; nothing was changed')
    for event, _matcher, _name in HOOKS:
        groups = hooks.get(event)
        if groups is None:
            continue
        if not isinstance(groups, list):
            raise SettingsRefused(f'{path}: "hooks.{event}" is not a list; fix it by hand first; nothing was changed')
        for g in groups:
            if not isinstance(g, dict) or not isinstance(g.get("hooks", []), list):
                raise SettingsRefused(
                    f'{path}: an entry of "hooks.{event}" is not {{"matcher": ..., "hooks": [...]}}; fix it by hand '
                    "first; nothing was changed"
                )


def _backup(path: Path, old: bytes, now: dt.datetime) -> Path:
    stamp = now.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    for n in range(100):
        candidate = path.with_name(f"{path.name}{BACKUP_INFIX}{stamp}" + (f"-{n}" if n else ""))
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(old)
            fh.flush()
            os.fsync(fh.fileno())
        return candidate
    raise AgentmdError(f"could not pick a free backup name next to {path}; nothing was changed")


# --------------------------------------------------------------------------------------------------
# Merging


def merge(data: dict[str, object], commands: dict[str, str]) -> dict[str, object]:
    """A copy of `data` with agentmd's hooks in it: an existing agentmd entry under the right event is
    updated in place (and any second one removed); a missing one is added as a group of its own at the end."""
    data = copy.deepcopy(data)
    for event, matcher, name in HOOKS:
        command = commands[name]
        hooks = data.get("hooks")
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        found = False
        if isinstance(groups, list):
            new_groups = []
            for g in groups:
                entries = g.get("hooks")
                if isinstance(entries, list) and any(_is_ours(e, name) for e in entries):
                    keep = []
                    for entry in entries:
                        if _is_ours(entry, name):
                            if found:
                                continue  # a second agentmd entry: drop it
                            found = True
                            if entry.get("command") != command or entry.get("type") != "command":
                                entry["type"] = "command"
                                entry["command"] = command
                        keep.append(entry)
                    if not keep:
                        continue  # a group emptied by dropping a duplicate
                    g["hooks"] = keep
                    if matcher is not None and all(_is_ours(e, name) for e in keep) and g.get("matcher") != matcher:
                        g["matcher"] = matcher  # a group of ours alone takes the matcher of this version
                new_groups.append(g)
            groups[:] = new_groups
        if found:
            continue
        group: dict[str, object] = {"matcher": matcher} if matcher is not None else {}
        group["hooks"] = [{"type": "command", "command": command}]
        if not isinstance(hooks, dict):  # no `hooks` yet (or a null one)
            hooks = data["hooks"] = {}
        if not isinstance(groups, list):
            groups = hooks[event] = []
        groups.append(group)
    return data


def unmerge(data: dict[str, object]) -> dict[str, object]:
    """A copy of `data` without agentmd's hooks: a group, event or `hooks` object left empty by their
    removal goes too; everything else stays exactly as it is."""
    data = copy.deepcopy(data)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    removed_any = False
    for event, _matcher, name in HOOKS:
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        kept_groups = []
        removed_here = False
        for g in groups:
            entries = g.get("hooks") if isinstance(g, dict) else None
            if isinstance(entries, list):
                kept = [e for e in entries if not _is_ours(e, name)]
                if len(kept) != len(entries):
                    removed_here = True
                    if not kept:
                        continue
                    g["hooks"] = kept
            kept_groups.append(g)
        if removed_here:
            removed_any = True
            if kept_groups:
                hooks[event] = kept_groups
            else:
                del hooks[event]
    if removed_any and not hooks:
        del data["hooks"]
    return data


# --------------------------------------------------------------------------------------------------
# Plans


@dataclass
class Plan:
    path: Path
    action: str  # "install" or "uninstall"
    old_text: str | None  # None: there is no file
    new_text: str | None
    commands: dict[str, str] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return self.new_text != self.old_text

    def diff(self) -> str:
        before = [] if self.old_text is None else self.old_text.splitlines(keepends=True)
        after = [] if self.new_text is None else self.new_text.splitlines(keepends=True)
        lines = difflib.unified_diff(
            before,
            after,
            fromfile="/dev/null" if self.old_text is None else f"{self.path} (before)",
            tofile=f"{self.path} (after)",
        )
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _plan(
    path: Path, action: str, change: Callable[[dict[str, object]], dict[str, object]], commands: dict[str, str]
) -> Plan:
    old_text, data = read_settings(path)
    new_data = change(data)
    if old_text is not None and new_data == data:
        return Plan(path, action, old_text, old_text, commands)
    if old_text is None and action == "uninstall":
        return Plan(path, action, None, None, commands)
    if action == "uninstall" and new_data == {}:  # nothing but agentmd's hooks: the file goes, as before install
        return Plan(path, action, old_text, None, commands)
    new_text = Layout.of(old_text).dumps(new_data)
    if json.loads(new_text) != new_data:  # never write what does not read back
        raise AgentmdError(f"internal error: the new {path} does not read back as written; nothing was changed")
    return Plan(path, action, old_text, new_text, commands)


def plan_install(path: Path, commands: dict[str, str]) -> Plan:
    return _plan(path, "install", lambda data: merge(data, commands), commands)


def project_root(project: str) -> Path:
    root = Path(project).expanduser()
    if not root.is_dir():
        raise UsageError(f"--project {project}: not a directory; give the project's root folder")
    return root.resolve()


def shared_project_settings(project: str) -> Path:
    """The project's settings file shared with the team (`DIR/.claude/settings.json`), where an earlier install
    put the hooks."""
    return project_root(project) / ".claude" / "settings.json"


def plan_uninstall(path: Path) -> Plan:
    return _plan(path, "uninstall", unmerge, {})


def apply(plan: Plan, now: dt.datetime | None = None) -> Path | None:
    """Write the plan's new text (backing up the old bytes first); the backup's path, or None. A plan whose new
    text is None removes a file that held agentmd's hooks alone (no backup: `install` writes it again)."""
    if not plan.changed:
        return None
    now = now or dt.datetime.now(dt.UTC)
    target = Path(os.path.realpath(plan.path))  # through a symlink (dotfiles), never replacing the link
    if plan.new_text is None:
        try:
            if plan.old_text is not None and target.read_bytes() != plan.old_text.encode("utf-8"):
                raise AgentmdError(f"{plan.path} changed while agentmd was editing it; run the command again")
            target.unlink()
        except FileNotFoundError:
            pass
        if target.parent.name == ".claude":  # the folder install made for it, when nothing else is in it
            with contextlib.suppress(OSError):
                target.parent.rmdir()
        return None
    backup = None
    mode = None
    if plan.old_text is not None:
        try:
            old = target.read_bytes()
        except OSError as exc:
            raise AgentmdError(f"{plan.path} could not be read again ({exc}); nothing was changed") from None
        if old != plan.old_text.encode("utf-8"):
            raise AgentmdError(f"{plan.path} changed while agentmd was editing it; run the command again")
        mode = target.stat().st_mode & 0o7777
        backup = _backup(target, old, now)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, plan.new_text, mode=mode)
    return backup
