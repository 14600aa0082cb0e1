"""`agentmd serve` as a small parent that keeps the daemon alive through a crash in native code.

The index is read through memory maps (engine/index/integrity.py): an index file cut short by someone else
between the daemon's check and its read kills the reading process with SIGBUS, and garbled bytes can crash
Tantivy itself. No handler turns either into an exception, so the daemon runs in a child process and this
parent, which imports and maps nothing, starts it again when it dies of a crash signal (SIGBUS, SIGSEGV,
SIGABRT, SIGILL, SIGFPE). The new daemon checks the index files before it maps them, sets a damaged index
aside and rebuilds it. The parent keeps the listening socket (agentmd/cli/daemon.py), so the port stays the
same and a client's connection waits in its queue while the new daemon starts.

- Stopping: SIGTERM, SIGINT and SIGHUP sent to the parent are passed to the daemon, which stops cleanly;
  the parent then exits with the daemon's exit code.
- Any other end of the daemon is final: a normal exit, an error exit (another daemon holds the vault), or a
  SIGKILL (someone meant it, or the kernel's out-of-memory killer), each returned as the parent's own.
- More than MAX_RESTARTS crashes within RESTART_WINDOW seconds is final too: the parent says so and exits,
  rather than rebuilding an index in a loop.
- The daemon dies with the parent: on Linux it asks the kernel for SIGKILL when its parent goes
  (PR_SET_PDEATHSIG), so a `kill -9` of `agentmd serve` still leaves nothing running. Where that is not
  available the daemon runs in the foreground process, unsupervised (`supported`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TextIO

CRASH_SIGNALS = frozenset({signal.SIGBUS, signal.SIGSEGV, signal.SIGABRT, signal.SIGILL, signal.SIGFPE})
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
MAX_RESTARTS = 5
RESTART_WINDOW = 60.0
_PR_SET_PDEATHSIG = 1
SUPERVISOR_ENV = "AGENTMD_SUPERVISOR"  # the supervising parent's pid, in the daemon's environment


def supported() -> bool:
    """Whether the daemon can be tied to this process's life (Linux's PR_SET_PDEATHSIG)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def _die_with_parent(parent: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent was gone before the request took effect
        os._exit(1)


def _child(run: Callable[[], int], parent: int) -> None:
    """The forked daemon: tied to the parent's life, default signal handling, `run`'s code as its exit."""
    code = 1
    try:
        for s in FORWARDED:
            signal.signal(s, signal.SIG_DFL)
        _die_with_parent(parent)
        os.environ[SUPERVISOR_ENV] = str(parent)
        code = run()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # the CLI's own handler is in the parent: say it here, in one line
        print(f"agentmd: the daemon stopped: {exc}", file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def describe(status: int) -> str:
    """A child's wait status in words."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"killed by {name}"
    return f"exited with code {os.waitstatus_to_exitcode(status)}"


def supervise(
    run: Callable[[], int],
    err: TextIO,
    *,
    clock: Callable[[], float] = time.monotonic,
    max_restarts: int = MAX_RESTARTS,
    window: float = RESTART_WINDOW,
) -> int:
    """Run `run` (the daemon) in a forked child, start it again after each crash signal, and return the exit
    code of its last run (128 + the signal for a death by signal, as a shell reports it)."""
    parent = os.getpid()
    crashes: deque[float] = deque()
    child = 0
    stopping = False

    def forward(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True
        if child:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signum)

    old = {s: signal.signal(s, forward) for s in FORWARDED}
    try:
        while True:
            sys.stdout.flush()
            sys.stderr.flush()
            err.flush()
            child = os.fork()
            if child == 0:
                _child(run, parent)
            _pid, status = os.waitpid(child, 0)  # retried by Python across the forwarded signals
            child = 0
            if os.WIFSIGNALED(status) and os.WTERMSIG(status) in CRASH_SIGNALS and not stopping:
                now = clock()
                crashes.append(now)
                while crashes and now - crashes[0] > window:
                    crashes.popleft()
                if len(crashes) > max_restarts:
                    print(
                        f"agentmd: the daemon was {describe(status)}, {len(crashes)} crashes within {window:g} s; "
                        "not starting it again (the agentmd log holds each crash's stacks)",
                        file=err,
                    )
                    return 128 + os.WTERMSIG(status)
                print(f"agentmd: the daemon was {describe(status)}; starting it again", file=err)
                continue
            if os.WIFSIGNALED(status):
                return 128 + os.WTERMSIG(status)
            return os.waitstatus_to_exitcode(status)
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def supervisor_alive(info: dict[str, object]) -> bool:
    """Whether the parent named in a daemon's info (`supervisor`) still runs; True when none is named."""
    pid = info.get("supervisor")
    if not isinstance(pid, int) or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
