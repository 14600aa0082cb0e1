"""A pause for prompt-time recall: while it holds, the recall hook injects no note.

Three ways to pause:
- `agentmd recall off` pauses recall for every session until `agentmd recall on`;
- `--for 2h` (minutes `m`, hours `h`, days `d`) makes the pause end by itself;
- `--project P` pauses only the sessions bound to project P (the project the hook binds from the working
  directory), so other projects keep their recall.
One session alone: start it with the environment variable `AGENTMD_RECALL=off` (also `0`, `no`, `false`,
`paused`); the hooks of that session see it, no other session does.

The pause lives in `<state dir>/recall-pause.json`: `{"all": {"at", "until"}, "projects": {slug: {"at",
"until"}}}`, times in UTC ISO 8601, `until` null for a pause without end. A pause whose end has passed is
over, and the next write drops it. The hook says so once per session: the first prompt of a session while
recall is paused gets one line saying it is paused and until when, and later prompts of that session get
nothing. Which sessions were told is kept beside it, in `recall-pause-told.txt` (`<pause stamp> <session>`
lines), so a new pause is told again.

Standard library only: the prompt hook's light path reads this on every prompt.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

from agentmd.engine.errors import AgentmdError
from agentmd.engine.times import parse_utc, stamp

PAUSE_FILE = "recall-pause.json"
TOLD_FILE = "recall-pause-told.txt"
TOLD_MAX_BYTES = 256 * 1024  # the told list is cut back to its newest half past this
ENV = "AGENTMD_RECALL"
ENV_OFF = frozenset({"off", "0", "no", "false", "paused", "pause"})
# compiled where a duration is read (re caches it), not at import: the prompt hook imports this module
_DURATION = r"(?i)^\s*(\d+(?:\.\d+)?)\s*(m|min|mins|minutes?|h|hours?|d|days?)\s*$"
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400}


class Pause(NamedTuple):
    """One pause in effect: what it covers (`all`, a project slug, or `session` for the environment variable),
    its stamp (when it was set), and its end (None: until `agentmd recall on`)."""

    scope: str
    at: str
    until: dt.datetime | None

    @property
    def key(self) -> str:
        """What the told list is keyed by: a new pause of the same scope is told again."""
        return f"{self.scope}@{self.at}"

    def describe(self) -> str:
        """`until 2026-03-02 14:30 UTC`, or `until \\`agentmd recall on\\``."""
        if self.until is None:
            return "until `agentmd recall on`" if self.scope != "session" else f"for this session ({ENV}=off)"
        return "until " + self.until.strftime("%Y-%m-%d %H:%M UTC")

    def to_dict(self) -> dict[str, object]:
        return {"scope": self.scope, "at": self.at, "until": stamp(self.until) if self.until else None}


class PauseError(AgentmdError, ValueError):
    """A pause that cannot be set as asked (a duration that is not one)."""


def duration(text: str) -> dt.timedelta:
    """`90m`, `2h`, `1.5h`, `3d` as a time span; raises PauseError naming the forms it takes."""
    m = re.match(_DURATION, text or "")
    if not m or float(m.group(1)) <= 0:
        raise PauseError(f"--for {text!r} is not a duration; write e.g. 30m, 2h or 1d")
    return dt.timedelta(seconds=float(m.group(1)) * _UNIT_SECONDS[m.group(2)[0].lower()])


def _now(now: dt.datetime | None) -> dt.datetime:
    return now if now is not None else dt.datetime.now(dt.UTC)


def _read(state_dir: Path) -> dict[str, object]:
    try:
        data = json.loads((state_dir / PAUSE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _entry(raw: Any, scope: str, now: dt.datetime) -> Pause | None:
    """A stored pause that still holds at `now`, else None."""
    if not isinstance(raw, Mapping):
        return None
    until = parse_utc(raw.get("until"))
    if raw.get("until") is not None and until is None:
        return None  # an end that cannot be read: treated as over rather than as forever
    if until is not None and until <= now:
        return None
    return Pause(scope, str(raw.get("at") or ""), until)


def stored(state_dir: Path, now: dt.datetime | None = None) -> list[Pause]:
    """Every pause in the state file that still holds: the vault-wide one first, then the projects'."""
    now = _now(now)
    data = _read(state_dir)
    out: list[Pause] = []
    whole = _entry(data.get("all"), "all", now)
    if whole is not None:
        out.append(whole)
    projects = data.get("projects")
    if isinstance(projects, Mapping):
        for slug in sorted(projects):
            found = _entry(projects[slug], str(slug), now)
            if found is not None:
                out.append(found)
    return out


def from_env(env: Mapping[str, str]) -> Pause | None:
    """The one-session pause the environment variable sets, if it does."""
    value = (env.get(ENV) or "").strip().lower()
    return Pause("session", "env", None) if value in ENV_OFF else None


def project_scoped(pauses: list[Pause]) -> bool:
    """Whether deciding needs the session's project (only project pauses hold)."""
    return bool(pauses) and all(p.scope not in ("all", "session") for p in pauses)


def applying(pauses: list[Pause], project: str | None) -> Pause | None:
    """The pause that covers a session of `project` (None: the session is bound to none), if any."""
    for p in pauses:
        if p.scope in ("session", "all"):
            return p
    wanted = (project or "").lower()
    return next((p for p in pauses if wanted and p.scope.lower() == wanted), None)


def in_effect(state_dir: Path, env: Mapping[str, str] | None = None, now: dt.datetime | None = None) -> list[Pause]:
    """The environment's pause (first) and the stored ones that still hold."""
    found = from_env(os.environ if env is None else env)
    return ([found] if found else []) + stored(state_dir, now)


# ------------------------------------------------------------------------------------------- writing


def _write(state_dir: Path, data: dict[str, object]) -> None:
    path = state_dir / PAUSE_FILE
    state_dir.mkdir(parents=True, exist_ok=True)
    if not data.get("all") and not data.get("projects"):
        path.unlink(missing_ok=True)
        (state_dir / TOLD_FILE).unlink(missing_ok=True)
        return
    tmp = path.with_name(f".{PAUSE_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _live(data: dict[str, object], now: dt.datetime) -> dict[str, Any]:
    """The stored pauses with the ended ones dropped."""
    out: dict[str, Any] = {}
    if _entry(data.get("all"), "all", now) is not None:
        out["all"] = data["all"]
    projects = data.get("projects")
    listed: Mapping[str, Any] = projects if isinstance(projects, Mapping) else {}
    kept = {str(k): v for k, v in listed.items() if _entry(v, str(k), now) is not None}
    if kept:
        out["projects"] = kept
    return out


def pause(
    state_dir: Path, *, project: str | None = None, span: dt.timedelta | None = None, now: dt.datetime | None = None
) -> Pause:
    """Pause recall (for `project` only when given) until `now + span`, or until resumed (to the second)."""
    now = _now(now).replace(microsecond=0)
    data = _live(_read(state_dir), now)
    at = stamp(now)
    entry = {"at": at, "until": stamp(now + span) if span else None}
    if project:
        data.setdefault("projects", {})[project] = entry
    else:
        data["all"] = entry
    _write(state_dir, data)
    return Pause(project or "all", at, now + span if span else None)


def resume(state_dir: Path, *, project: str | None = None, now: dt.datetime | None = None) -> list[Pause]:
    """End the pause (only `project`'s when given; every stored pause otherwise). Returns the pauses that were
    ended; the environment's one-session pause is not the state file's to end."""
    now = _now(now)
    before = stored(state_dir, now)
    data = _live(_read(state_dir), now)
    if project:
        projects = data.get("projects") or {}
        ended = [p for p in before if p.scope == project]
        projects.pop(project, None)
        if projects:
            data["projects"] = projects
        else:
            data.pop("projects", None)
    else:
        ended, data = before, {}
    _write(state_dir, data)
    return ended


# ------------------------------------------------------------------------------------------ telling


def first_telling(state_dir: Path, found: Pause, session: str | None) -> bool:
    """Whether this session has not yet been told of this pause; records that it now has. A prompt without a
    session id is told every time (nothing to remember it by)."""
    if not session:
        return True
    line = f"{found.key} {session}"
    path = state_dir / TOLD_FILE
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            if any(known.rstrip("\n") == line for known in fh):
                return False
    except OSError:
        pass
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > TOLD_MAX_BYTES:
            kept = path.read_text(encoding="utf-8", errors="replace").splitlines()[-1000:]
            path.write_text("\n".join(kept) + "\n", encoding="utf-8")
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except OSError:
        pass  # told again next time rather than never
    return True


def notice(found: Pause) -> str:
    """The one line a session is told on its first prompt while recall is paused."""
    if found.scope == "session":
        return f"agentmd: recall is off for this session ({ENV}=off); no notes from the vault are added to prompts.\n"
    what = "recall" if found.scope == "all" else f"recall for project {found.scope}"
    resume_hint = "" if found.until is not None else " (`agentmd recall on` resumes it)"
    return f"agentmd: {what} is paused {found.describe()}{resume_hint}; no notes from the vault are added to prompts.\n"


class RecallSummary(TypedDict):
    paused: bool
    pauses: list[dict[str, object]]  # scope, at, until


def summary(pauses: list[Pause]) -> RecallSummary:
    """The `recall` section of status: paused or not, and each pause with its end."""
    return {"paused": bool(pauses), "pauses": [p.to_dict() for p in pauses]}


def line(pauses: list[Pause]) -> str | None:
    """`recall paused until …` (with the projects), for status and the session-start hook; None when none."""
    if not pauses:
        return None
    parts = []
    for p in pauses:
        who = {"all": "", "session": ""}.get(p.scope, f" for project {p.scope}")
        parts.append(f"recall paused{who} {p.describe()}")
    return "; ".join(parts)
