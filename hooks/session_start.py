"""`agentmd hook session-start`: a Claude Code SessionStart hook that tells a new session how its memory is.

It prints one to three lines on stdout, which Claude Code adds to the session's context (with `--json`, the
same text as `hookSpecificOutput.additionalContext`):

    agentmd memory: RED — probe-failed: search did not find the probe note within 5.0 s
    queue 3 unfiled, oldest 1.2 days · last probe FAILED 2 h ago: ... · from the daemon · vault /home/me/vault
    Morning 2026-03-02: RED — probe-failed · 4 added, 1 edited, 3 retired (daily/morning-note-2026-03-02.md)

The third line is the headline of the latest morning note (engine/jobs/morning.py), when it is from today or
yesterday.

Where the facts come from: the running daemon's `GET /status` over loopback (never through a proxy), found
through the port in its state file (or `--port`); when no daemon answers, a cheap read-only look at disk —
the catalog opened read-only for the queue and the last pass, the probe and commit state files, a
`git rev-parse`/`git worktree list`, the contract — assembled by the same functions `agentmd status` uses
(colour and red items therefore agree with it), without opening the search index.

It never fails the session: the whole look-up runs under a hard budget (`--budget`, default 1 s); past it,
or on any error, the hook prints a single short line saying the status is not available and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from agentmd.engine.client import DaemonError, Located, running
from agentmd.engine.fsutil import read_json
from agentmd.engine.index.catalog import Catalog, CatalogError

from .protocol import read_hook_input, standalone, write_output

if TYPE_CHECKING:
    from agentmd.engine.daemon.status_types import DaemonInfo, IndexSection, QueueSection, Sections, Status

HOOK_EVENT = "SessionStart"
DEFAULT_BUDGET = 1.0
_MAX_RED = 3
_MAX_ITEM = 180


# --------------------------------------------------------------------------------------------------
# Where the status comes from


def daemon_status(settings: Any, port: int | None, timeout: float) -> Status | None:
    """The daemon's `/status` for this vault, or None when no daemon for this vault answers in time.

    Asked: `port` when given (the person's own setting); else only a daemon that proves it serves the vault,
    by holding the vault lease (whatever its XDG folders) or this state folder's instance lock. A port that
    `daemon.json` names after a crash, or the default port, is never asked: whatever listens there now would be
    sent the access token, and what it answered would go into the agent's context. Only an answer naming this
    vault counts."""
    own = settings.state_dir
    found = running(own, settings.vault)
    if port and (found is None or found.port != port):
        found = Located(port, own)  # a port given that the vault lease does not name: this folder's token
    candidates: list[Located | None] = [found]
    daemons = list(dict.fromkeys(d for d in candidates if d is not None))
    deadline = time.monotonic() + max(timeout, 0.05)
    for candidate in daemons:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        try:
            data = candidate.client(timeout=left).get("/status")  # loopback only, never a proxy
        except DaemonError:
            continue
        if not isinstance(data, dict) or data.get("color") not in ("green", "yellow", "red"):
            continue
        vault = data.get("vault")
        if isinstance(vault, str) and os.path.realpath(vault) != os.path.realpath(settings.vault):
            continue  # a stale port now held by another vault's daemon
        return cast("Status", data)
    return None


class _EmptyCatalog:
    """Stands in for a catalog that was never built."""

    def unfiled(self) -> list[tuple[str, str]]:
        return []

    def get_meta(self, key: str) -> str | None:
        return None

    def pass_record(self) -> str | None:
        return None

    def flag_counts(self) -> dict[str, int]:
        return {}

    def close(self) -> None:
        pass


class _NoIndex:
    def doc_count(self) -> None:  # the search index is not opened: too slow for a session start
        return None


class _StoreView:
    def __init__(self, catalog: Any) -> None:
        self.catalog = catalog
        self.index = _NoIndex()


def disk_status(settings: Any, now: dt.datetime | None = None) -> Status:
    """`agentmd status` without a daemon, read-only and without the search index."""
    from agentmd.engine.daemon.status import (
        assemble,
        contract_section,
        git_section,
        index_section,
        probe_section,
        queue_section,
    )
    from agentmd.engine.git.health import COMMIT_STATE, CommitState
    from agentmd.rules import load_contract

    now = now or dt.datetime.now(dt.UTC)
    path = settings.catalog_path
    catalog: Any = _EmptyCatalog()
    if path.exists():  # read-only: a hook never creates, resets or writes the catalog, even beside a daemon
        try:
            catalog = Catalog.reader(path, timeout=0.25)
            catalog.get_meta("schema_version")
        except CatalogError:
            catalog = _EmptyCatalog()
    index: IndexSection
    queue: QueueSection
    try:
        store: Any = _StoreView(catalog)
        try:
            index = index_section(store, settings.vault, daemon_running=False, stale=False, now=now)
            line = getattr(settings, "queue_baseline", None)  # the config file's line, when the owner set one
            if line is not None or (settings.state_dir / "queue-baseline.json").exists():
                queue = queue_section(store, settings.state_dir, now, line=line, may_record=False)
            else:  # the first status records the baseline; a hook only reads, so count all as inherited
                queue = {"count": 0, "oldest_age_days": None, "inherited": len(catalog.unfiled()), "red": []}
        except CatalogError as exc:  # a catalog from another schema, or locked beyond the timeout
            index = {"red": [], "unreadable": str(exc)}
            queue = {"red": []}
    finally:
        catalog.close()
    parts: Sections = {
        "index": index,
        "queue": queue,
        "git": git_section(settings.vault, CommitState.from_mapping(read_json(settings.state_dir / COMMIT_STATE)), now),
        "contract": contract_section(load_contract(settings.vault, settings.contract_path)),
        "probe": probe_section(settings.state_dir, now),
    }
    daemon: DaemonInfo = {"running": False}
    found = running(settings.state_dir, settings.vault)
    if found is not None:  # it holds the vault and did not answer in time: busy, or stopped (SIGSTOP, a debugger)
        daemon["slow"] = (
            f"daemon-not-answering: the daemon serving this vault (port {found.port}) did not answer in time; "
            "it may be busy or stopped (`agentmd status` waits longer)"
        )
    return assemble(parts, settings.vault, daemon)


# --------------------------------------------------------------------------------------------------
# The lines


def _short(text: str, limit: int = _MAX_ITEM) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ago(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return ""
    s = max(0.0, float(seconds))
    if s < 90:
        return f"{int(s)} s ago"
    if s < 90 * 60:
        return f"{int(s // 60)} min ago"
    if s < 48 * 3600:
        return f"{int(s // 3600)} h ago"
    return f"{int(s // 86400)} days ago"


def summarize(status: Status, *, from_disk: bool) -> str:
    """One or two lines: colour and red items; queue, last probe, worktrees in the vault, source, vault."""
    color = str(status.get("color") or "unknown").upper()
    red = [str(r) for r in status.get("red") or []]
    yellow = [str(y) for y in status.get("yellow") or []]
    head = f"agentmd memory: {color}"
    if red:
        head += " — " + "; ".join(_short(r) for r in red[:_MAX_RED])
        if len(red) > _MAX_RED:
            head += f"; +{len(red) - _MAX_RED} more (run `agentmd status`)"
    elif yellow:
        head += " (" + ", ".join(y.split(":", 1)[0] for y in yellow) + ")"
    facts: list[str] = []
    queue = status.get("queue") or {}
    if isinstance(queue.get("count"), int):
        count = queue["count"]
        total = queue.get("total") or count + int(queue.get("inherited") or 0)
        # what `agentmd queue` lists: the backlog from before the baseline too, which never pages
        text = f"queue {count} unfiled"
        if total != count:
            text = f"queue {total} awaiting review ({count} since the baseline)"
        if queue.get("oldest_age_days") is not None:
            text += f", oldest {queue['oldest_age_days']} days"
        facts.append(text)
    probe = status.get("probe")
    last = probe.get("last") if isinstance(probe, dict) else None
    if isinstance(probe, dict) and isinstance(last, dict):
        when = _ago(probe.get("age_s"))
        if last.get("ok"):
            ms = last.get("round_trip_ms")
            facts.append(f"last probe ok {when}" + (f" ({ms} ms)" if ms is not None else ""))
        else:
            facts.append(_short(f"last probe FAILED {when}: {last.get('error')}", 120))
    elif isinstance(probe, dict) and "last" in probe:
        facts.append("probe never run")
    git = status.get("git")
    worktrees = (git.get("worktrees_inside_vault") if isinstance(git, dict) else None) or []
    if worktrees:
        facts.append("git worktrees inside the vault: " + ", ".join(str(w) for w in worktrees[:5]))
    daemon = status.get("daemon")
    answered = not (isinstance(daemon, dict) and daemon.get("slow"))
    facts.append(("daemon not running" if answered else "daemon not answering") + ", read from disk"
                 if from_disk else "from the daemon")  # fmt: skip
    if status.get("vault"):
        facts.append(f"vault {status['vault']}")
    return head + "\n" + " · ".join(facts)


def _gather(args: argparse.Namespace, deadline: float, seen: dict[str, str] | None = None) -> str:
    from agentmd.engine.errors import AgentmdError
    from agentmd.engine.settings import resolve

    try:
        settings = resolve(vault=args.vault, index=args.index, config=args.config)
    except AgentmdError as exc:
        return f"agentmd memory: status unavailable — {_short(str(exc), 240)}"
    if seen is not None:
        seen["state_dir"] = str(settings.state_dir)
    remaining = deadline - time.monotonic()
    status = daemon_status(settings, getattr(args, "port", None), timeout=remaining * 0.6)
    if status is not None:
        text = summarize(status, from_disk=False)
    else:
        text = summarize(disk_status(settings), from_disk=True)
    return text + pause_line(settings.state_dir) + morning_line(settings.state_dir)


def pause_line(state_dir: Any) -> str:
    """`recall paused until …` as a line of its own when the prompt hook's recall is paused for this session's
    environment or the vault (engine/recall_pause.py), else nothing."""
    from agentmd.engine import recall_pause

    held = recall_pause.line(recall_pause.in_effect(state_dir))
    return f"\nagentmd {held}: no notes are added to prompts" if held else ""


def morning_line(state_dir: Any) -> str:
    """The latest morning note's headline (today's or yesterday's) as a third line, else nothing."""
    from agentmd.engine.jobs.morning import headline_for

    headline = headline_for(state_dir, dt.date.today())
    return f"\n{headline}" if headline else ""


def session_context(args: argparse.Namespace, budget: float = DEFAULT_BUDGET, err: TextIO | None = None) -> str:
    """The context text, computed within `budget` seconds; a one-line notice when that is not possible."""
    started = time.monotonic()
    deadline = started + budget
    box: dict[str, str] = {}

    def run() -> None:
        try:
            box["text"] = _gather(args, deadline, box)
        except Exception as exc:
            box["text"] = f"agentmd memory: status unavailable ({type(exc).__name__}: {_short(str(exc), 160)})"

    worker = threading.Thread(target=run, name="agentmd-session-start", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if "text" not in box:
        _gave_up(box.get("state_dir"), budget, (time.monotonic() - started) * 1000, err or sys.stderr)
        return f"agentmd memory: status not available within {budget:g} s (run `agentmd status`)"
    return box["text"]


def _gave_up(state_dir: str | None, budget: float, ms: float, err: TextIO) -> None:
    """A give-up goes in the hooks' log, for `status` to count, and in one line on stderr."""
    from agentmd.engine.hooklog import GAVE_UP, HOOK_LOG, append
    from agentmd.engine.settings import state_root

    folder = state_root() if state_dir is None else Path(state_dir)
    line = append(folder / HOOK_LOG, "session-start", GAVE_UP, ms, None, f"no status within {budget:g} s")
    with contextlib.suppress(OSError, ValueError):
        err.write("agentmd hook: " + line)


# --------------------------------------------------------------------------------------------------
# The command


def cmd_hook_session_start(args: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO | None = None) -> int:
    """SessionStart hook: print the memory's status in one or two lines. Always exits 0."""
    try:
        budget = float(getattr(args, "budget", None) or DEFAULT_BUDGET)
        start = time.monotonic()
        read_hook_input(sys.stdin if stdin is None else stdin, timeout=min(0.25, budget / 4))
        text = session_context(args, max(0.05, budget - (time.monotonic() - start)), err)
        if getattr(args, "json", False):
            write_output(out, {"hookSpecificOutput": {"hookEventName": HOOK_EVENT, "additionalContext": text}})
        else:
            out.write(text + "\n")
            out.flush()
    except Exception as exc:  # the session starts whatever happens here
        with contextlib.suppress(Exception):
            err.write(f"agentmd session-start: {type(exc).__name__}: {exc}\n")
    return 0


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int)
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET)


# `python -m agentmd.hooks.session_start [--vault PATH] [--json]`: the same hook without the full CLI
main = standalone("session-start", cmd_hook_session_start, _options)

if __name__ == "__main__":
    sys.exit(main())
