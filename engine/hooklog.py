"""The hooks' run log, `<state dir>/hook.log`: one line per hook run (`<local time> <hook> <outcome> <ms>ms
session=<id> <detail>`), rotated at 1 MB. A hook never fails the prompt or the session it serves, so a hook
that gives up (its time budget spent) prints nothing there; this log and `status` are where that shows:
`gave_up` counts the give-ups of the last hour for `status`'s hooks line."""

from __future__ import annotations

import os
import time

from agentmd.engine.errors import AgentmdError

TYPE_CHECKING = False  # `typing` is one more import on the prompt hook's path; mypy reads the block below
if TYPE_CHECKING:
    pass

HOOK_LOG = "hook.log"
HOOK_LOG_MAX = 1 * 2**20
GAVE_UP = "timeout"  # the outcome of a run whose time budget ran out
RECALL_TIME_BUDGET = 1.5  # seconds, the prompt hook's default budget from process start to exit
_STAMP = "%Y-%m-%dT%H:%M:%S"
_TAIL = 256 * 1024  # bytes of the log read for the last hour's give-ups


class HookError(AgentmdError):
    """Why a hook printed nothing (logged, never shown to the agent)."""


class HookGaveUp(HookError):
    """The time budget ran out before the answer came (a busy daemon or machine): logged as a give-up."""


def append(path: str | os.PathLike[str], hook: str, outcome: str, ms: float, session: str | None, detail: str) -> str:
    """Append one run's line (the log rotated first when it is over HOOK_LOG_MAX); the line. Never raises."""
    stamp = time.strftime(_STAMP, time.localtime())
    line = f"{stamp} {hook} {outcome} {ms:.0f}ms session={session or '-'} {detail}\n"
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        if os.path.exists(path) and os.stat(path).st_size > HOOK_LOG_MAX:
            os.replace(path, f"{os.fspath(path)}.1")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line)
    except OSError:
        pass
    return line


def gave_up(state_dir: str | os.PathLike[str], now: float | None = None, window: float = 3600.0) -> dict[str, int]:
    """How many times each hook gave up (its budget spent) in the `window` seconds before `now` (epoch)."""
    now = time.time() if now is None else now
    try:
        with open(os.path.join(state_dir, HOOK_LOG), "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - _TAIL))
            tail = fh.read().decode("utf-8", "replace")
    except OSError:
        return {}
    counts: dict[str, int] = {}
    for line in tail.splitlines()[1:] if len(tail) >= _TAIL else tail.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 3 or parts[2] != GAVE_UP:
            continue
        try:
            at = time.mktime(time.strptime(parts[0], _STAMP))
        except ValueError:
            continue
        if now - window <= at <= now + 60:
            counts[parts[1]] = counts.get(parts[1], 0) + 1
    return counts
