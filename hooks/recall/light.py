"""`agentmd-hook recall`: the prompt hook's light path, the one Claude Code runs before every prompt.

With a daemon serving the vault, the hook hands the prompt over whole (`POST /v1/recall`, engine/recall/
serve.py): the daemon checks for a pause, makes the query, binds the project, searches, gathers, renders within
the budgets and counts what is shown, and answers with the text to print and the line for `hook.log`. This
process imports the standard library's light modules and the engine's leaves that find and call the daemon
(places, lease, secret, client, hooklog), nothing else: its cost is close to a bare interpreter start
(bench/hook_bench.py measures both).

The daemon is the one the vault lease names, else the one holding the vault's state folder (a vault without
git). Everything else runs the full hook (hooks/recall/hook.py) in this process: no vault named by `--vault`
or `AGENTMD_VAULT` (a config file's vault is read there), no daemon up, or a daemon from an older install
without the route (the payload already read is handed on).

The time budget counts from process start. An interval timer ends a read of stdin or of the daemon's answer
that has not finished when it runs out; the run then prints nothing and logs a give-up, said on stderr in one
line and counted by `status`. Always exits 0.
"""

from __future__ import annotations

import os
import sys
import time

from agentmd.engine import places
from agentmd.engine.client import DaemonClient, DaemonError, DaemonHTTPError, DaemonTimeout, instance_port, lease_holder
from agentmd.engine.client import access_token as read_access_token
from agentmd.engine.hooklog import GAVE_UP, HOOK_LOG, RECALL_TIME_BUDGET, HookGaveUp, append
from agentmd.hooks.protocol import MAX_INPUT_BYTES, parse_payload, prompt_fields, session_of

TYPE_CHECKING = False  # `typing` is one more import on the prompt hook's path; mypy reads the block below
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TextIO

PRINT_MARGIN = 0.05  # seconds kept after the answer for printing and the log line
MIN_WAIT = 0.01  # the shortest wait worth asking the daemon for


class Options:
    """The hook's flags: its budgets (None: the render's defaults, engine/recall/render.py), where the vault is,
    whether to say each run on stderr."""

    __slots__ = ("config", "index", "max_entries", "time_budget", "token_budget", "vault", "verbose")

    def __init__(self) -> None:
        self.vault: str | None = None
        self.index: str | None = None
        self.config: str | None = None
        self.token_budget: int | None = None
        self.max_entries: int | None = None
        self.time_budget = RECALL_TIME_BUDGET
        self.verbose = False


def parse_hook_args(argv: Sequence[str]) -> Options:
    """The hook's flags (no argparse): --vault, --index, --config, --token-budget, --max-entries,
    --time-budget, -v/--verbose. Unknown flags and unreadable values are ignored: a hook must not fail on them."""
    opts = Options()
    it = iter(argv)
    for arg in it:
        name, eq, value = arg.partition("=")
        if name in ("-v", "--verbose"):
            opts.verbose = True
            continue
        if name not in ("--vault", "--index", "--config", "--token-budget", "--max-entries", "--time-budget"):
            continue
        if not eq:
            value = next(it, "")
        try:
            if name == "--token-budget":
                opts.token_budget = max(1, int(value))
            elif name == "--max-entries":
                opts.max_entries = max(1, int(value))
            elif name == "--time-budget":
                opts.time_budget = max(0.05, float(value))
            else:
                setattr(opts, name[2:], value)
        except ValueError:
            continue
    return opts


def process_age() -> float:
    """Seconds since this process started (Linux /proc; 0.0 elsewhere)."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
        start_ticks = int(stat.rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def the_daemon(opts: Options) -> tuple[int, str] | None:
    """(port, state folder) of the daemon serving the vault of `--vault` or `AGENTMD_VAULT`: the one the vault
    lease names (with the state folder where its token and the hooks' log live), else the one holding the
    vault's own state folder (a vault without git has no lease). None when neither runs, or no vault is named
    here (a config file's vault is read by the full hook)."""
    vault = opts.vault or os.environ.get("AGENTMD_VAULT")
    if not vault:
        return None
    vault = os.path.expanduser(vault)
    try:
        found = lease_holder(vault)
        if found is not None:
            return found if found[1] else None
        own = places.state_dir(vault)
        port = instance_port(own)
    except DaemonError:
        return None
    return (port, own) if port is not None else None


def run(
    daemon: tuple[int, str], opts: Options, stdin: TextIO, out: TextIO, started: float
) -> tuple[str, str, str | None] | str:
    """One run through the daemon: (outcome, detail, session) for the log once printed, or the payload's text
    when the daemon is too old to take it whole (the caller runs the full hook on it)."""
    session: str | None = None
    deadline = started + opts.time_budget
    try:
        _arm(deadline - time.monotonic())
        text = stdin.read(MAX_INPUT_BYTES)
        try:
            payload = parse_payload(text)
        except ValueError as exc:
            return "error", str(exc), None
        session = session_of(payload)
        try:
            session, prompt, cwd = prompt_fields(payload)
        except ValueError as exc:
            return "error", str(exc), session
        body = {
            "prompt": prompt,
            "cwd": cwd,
            "session_id": session,
            "recall_env": os.environ.get("AGENTMD_RECALL"),
        }
        for name in ("token_budget", "max_entries"):
            if getattr(opts, name) is not None:
                body[name] = getattr(opts, name)
        wait = deadline - PRINT_MARGIN - time.monotonic()
        if wait < MIN_WAIT:
            raise HookGaveUp
        port, state_dir = daemon
        try:
            answer = DaemonClient(port, token=read_access_token(state_dir)).post("/v1/recall", body, timeout=wait)
        except DaemonHTTPError as exc:
            if exc.status == 404:
                return text
            return "error", f"the daemon answered HTTP {exc.status}: {exc.message}", session
        except DaemonTimeout:
            raise HookGaveUp from None
        except DaemonError as exc:
            return "error", str(exc), session
        _arm(0)
    except HookGaveUp:
        return GAVE_UP, f"no answer within the {opts.time_budget}s time budget; printed nothing", session
    finally:
        _arm(0)
    if not isinstance(answer, dict) or not isinstance(answer.get("text"), str):
        return "error", f"the daemon's recall answer is not understood: {str(answer)[:200]}", session
    if time.monotonic() > deadline:
        return GAVE_UP, "the time budget ran out before printing; printed nothing", session
    shown = answer["text"]
    if shown:
        try:
            out.write(shown)
            out.flush()
        except (OSError, ValueError) as exc:
            return "error", f"could not write to stdout: {exc}", session
    return str(answer.get("outcome") or "ok"), str(answer.get("detail") or ""), session


def _arm(seconds: float) -> None:
    """Raise HookGaveUp in this (the main) thread after `seconds`; 0 disarms. `_signal`, not `signal`, whose
    enums cost the prompt hook a few milliseconds of imports."""
    import _signal

    if seconds > 0:
        _signal.signal(_signal.SIGALRM, _ring)
        _signal.setitimer(_signal.ITIMER_REAL, max(seconds, 0.001))
    else:
        _signal.setitimer(_signal.ITIMER_REAL, 0)


def _ring(_signum: int, _frame: object) -> None:
    raise HookGaveUp


def main(argv: Sequence[str] | None = None, *, started: float | None = None) -> int:
    """`agentmd-hook recall [flags]` (hooks/entry.py). Always exits 0."""
    argv = sys.argv[1:] if argv is None else argv
    if started is None:
        started = time.monotonic() - process_age()
    opts = parse_hook_args(argv)
    daemon = the_daemon(opts)
    if daemon is None:
        return _full(argv, started)
    try:
        done = run(daemon, opts, sys.stdin, sys.stdout, started)
    except Exception as exc:  # nothing reaches the agent but the notes: the reason goes to the log
        done = "error", f"{type(exc).__name__}: {exc}", None
    if isinstance(done, str):
        import io

        return _full(argv, started, io.StringIO(done))
    outcome, detail, session = done
    ms = (time.monotonic() - started) * 1000
    line = append(os.path.join(daemon[1], HOOK_LOG), "recall", outcome, ms, session, " ".join(detail.split()))
    if opts.verbose or outcome == GAVE_UP:  # a give-up is said on stderr too: the prompt went on without its notes
        try:  # noqa: SIM105 - contextlib is one more import on the prompt hook's path
            sys.stderr.write("agentmd hook: " + line)
        except (OSError, ValueError):
            pass
    return 0


def _full(argv: Sequence[str], started: float, stdin: TextIO | None = None) -> int:
    """The full hook in this process (hooks/recall/hook.py), reading `stdin` (default this process's)."""
    from agentmd.engine.recall.pipeline import Options as Budgets
    from agentmd.hooks.recall.hook import HookLog, run_hook

    flags = parse_hook_args(argv)
    budgets = Budgets(time_budget=flags.time_budget)
    if flags.token_budget is not None:
        budgets.token_budget = flags.token_budget
    if flags.max_entries is not None:
        budgets.max_entries = flags.max_entries

    def settings() -> Any:
        from agentmd.engine.settings import resolve

        return resolve(vault=flags.vault, index=flags.index, config=flags.config)

    log = HookLog(flags.verbose, sys.stderr)
    code, timed_out = run_hook(
        sys.stdin if stdin is None else stdin, sys.stdout, settings, options=budgets, started=started, log=log
    )
    if timed_out:  # a worker is stuck in a read: leave now rather than wait for it at shutdown
        sys.stdout.flush()
        os._exit(0)
    return code
