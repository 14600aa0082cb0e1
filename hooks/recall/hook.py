"""The full recall hook, in the hook's own process: what hooks/recall/light.py runs when no daemon takes the
prompt whole, and what `agentmd hook recall` and `agentmd recall` run. The UserPromptSubmit payload on stdin,
the block on stdout, always exit 0, nothing printed on any failure, the reason in `<state dir>/hook.log`. While
recall is paused (`agentmd recall off`, or `AGENTMD_RECALL=off` in the session's environment:
engine/recall_pause.py) it searches nothing and injects nothing; the first prompt of each session is told so in
one line, later prompts get nothing.

The work runs in a worker thread and the caller waits at most until the time budget's end (counted from
process start), so a hung read (stdin, daemon, catalog, index) costs the budget and nothing more. Time
comes from a `Clock`: the system's monotonic clock in use, any other clock object in tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TextIO

from agentmd.engine import recall_pause
from agentmd.engine.client import DaemonError, DaemonHTTPError
from agentmd.engine.hooklog import GAVE_UP, HOOK_LOG, append
from agentmd.engine.recall.pipeline import HookError, HookGaveUp, Options, Recall, log_detail, paused, recall
from agentmd.engine.recall.render import inert
from agentmd.engine.settings import state_root
from agentmd.hooks.protocol import MAX_INPUT_BYTES, parse_payload, prompt_fields, session_of

PRINT_MARGIN = 0.05  # seconds kept after the work for printing and counting


class Clock(Protocol):
    """Where the hook's time comes from."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back."""
        ...

    def wait(self, worker: threading.Thread, timeout: float) -> None:
        """Wait until the worker ends or `timeout` seconds have passed on this clock."""
        ...


class SystemClock:
    """The system's monotonic clock; waiting is a real join."""

    def monotonic(self) -> float:
        return time.monotonic()

    def wait(self, worker: threading.Thread, timeout: float) -> None:
        worker.join(timeout)


class HookLog:
    """One line per run in `<state dir>/hook.log` (rotated at 1 MB); also to stderr when verbose."""

    def __init__(self, verbose: bool = False, err: TextIO | None = None) -> None:
        self.path: Path | None = None
        self.verbose = verbose
        self.err = err
        self.clock: Clock = SystemClock()

    def write(self, outcome: str, detail: str, session: str | None, started: float) -> None:
        ms = (self.clock.monotonic() - started) * 1000
        path = self.path or state_root() / HOOK_LOG
        line = append(path, "recall", outcome, ms, session, inert(detail, 2000))
        if self.err is not None and (self.verbose or outcome == GAVE_UP):
            # a give-up is said on stderr too (one line): the prompt went on without the notes it may have had
            try:  # noqa: SIM105 - contextlib is one more import on the prompt hook's path
                self.err.write("agentmd hook: " + line)
            except (OSError, ValueError):
                pass


def read_payload(stream: TextIO | Any) -> dict[str, object]:
    """The UserPromptSubmit payload (its first `MAX_INPUT_BYTES`); a `HookError` says what is wrong with it."""
    try:
        return parse_payload(stream.read(MAX_INPUT_BYTES) if stream is not None else "")
    except ValueError as exc:
        raise HookError(str(exc)) from None


class _Outcome:
    """What the worker thread leaves for the caller: the settings and session it read, then one of an error
    (outcome, detail), a pause (and whether this prompt tells of it) or the recall."""

    def __init__(self) -> None:
        self.settings: Any = None
        self.session: str | None = None
        self.error: tuple[str, str] | None = None
        self.paused: recall_pause.Pause | None = None
        self.tell = False
        self.recall: Recall | None = None


def run_hook(
    stdin: TextIO | Any,
    out: TextIO,
    settings_fn: Callable[[], Any],
    *,
    options: Options | None = None,
    started: float | None = None,
    log: HookLog | None = None,
    clock: Clock | None = None,
) -> tuple[int, bool]:
    """Run the UserPromptSubmit hook. Returns (exit code, timed_out); the exit code is always 0.

    `started` is the time the process started on `clock` (the budget counts from there; default now)."""
    options = options or Options()
    clock = clock or SystemClock()
    log = log or HookLog()
    log.clock = clock  # the log's durations on the same clock as the budget
    started = clock.monotonic() if started is None else started
    deadline = started + options.time_budget
    box = _Outcome()

    def work() -> None:
        try:
            settings = settings_fn()
            box.settings = settings
            log.path = settings.state_dir / HOOK_LOG
            payload = read_payload(stdin)
            box.session = session_of(payload)
            try:
                box.session, prompt, cwd = prompt_fields(payload)
            except ValueError as exc:
                raise HookError(str(exc)) from None
            held = paused(settings, cwd)
            if held is not None:
                box.paused = held
                box.tell = recall_pause.first_telling(settings.state_dir, held, box.session)
                return
            box.recall = recall(
                settings, prompt, cwd=cwd, options=options, deadline=deadline - PRINT_MARGIN, now=clock.monotonic
            )
        except HookGaveUp as exc:  # the budget ran out in the search: a give-up like the worker's own
            box.error = (GAVE_UP, f"{exc}; printed nothing")
        except HookError as exc:
            box.error = ("error", str(exc))
        except Exception as exc:
            box.error = ("error", f"{type(exc).__name__}: {exc}")

    worker = threading.Thread(target=work, name="agentmd-recall", daemon=True)
    worker.start()
    clock.wait(worker, max(0.0, deadline - clock.monotonic()))
    session = box.session
    if worker.is_alive():
        log.write(
            GAVE_UP, f"no answer within the {options.time_budget}s time budget; printed nothing", session, started
        )
        return 0, True
    if box.error is not None:
        outcome, detail = box.error
        log.write(outcome, detail, session, started)
        return 0, False
    if box.paused is not None:
        held = box.paused
        told = "said so" if box.tell else "said so before"
        if box.tell:
            try:
                out.write(recall_pause.notice(held))
                out.flush()
            except (OSError, ValueError) as exc:
                told = f"could not write to stdout: {exc}"
        log.write(
            "paused", f"recall is paused ({held.scope}, {held.describe()}); injected nothing; {told}", session, started
        )
        return 0, False
    result = box.recall
    if result is None:  # the worker was stopped by something that is not an Exception
        log.write("error", "the recall worker ended without an answer; printed nothing", session, started)
        return 0, False
    if clock.monotonic() > deadline:
        log.write(GAVE_UP, "the time budget ran out before printing; printed nothing", session, started)
        return 0, False
    try:
        out.write(result.rendered.text)
        out.flush()
    except (OSError, ValueError) as exc:
        log.write("error", f"could not write to stdout: {exc}", session, started)
        return 0, False
    counted = 0
    if result.rendered.entries:
        counted = count_injections(result, box.settings.catalog_path, deadline - clock.monotonic())
    log.write("ok", log_detail(result, counted), session, started)
    return 0, False


def count_injections(result: Recall, catalog_path: Path, left: float) -> int:
    """Count each note shown one injection; returns how many were counted. The daemon that answered the search
    counts them (`/v1/injected`, one more loopback call), so this process loads neither the catalog nor
    sqlite3; without a daemon, or with an older one that lacks the route, they are counted here."""
    paths = [e.path for e in result.rendered.entries]
    timeout = max(0.01, min(0.25, left))
    if result.daemon is not None:
        try:
            answer = result.daemon.client(timeout=timeout).post("/v1/injected", {"paths": paths})
        except DaemonHTTPError as exc:
            if exc.status != 404:
                return 0
        except DaemonError:  # it may have counted them before the answer was lost: never count twice
            return 0
        else:
            counted = answer.get("counted") if isinstance(answer, dict) else None
            return counted if isinstance(counted, int) else 0
    from agentmd.engine.index import usage

    return usage.record_quietly(catalog_path, paths, "injection", timeout=timeout)
