"""How a failed command ends: one line on stderr saying what was wrong and how to fix it, and an exit code.
No traceback reaches a person unless they ask for it with --verbose.

Every exception agentmd defines derives from one root, `AgentmdError` (agentmd/errors.py): its message
already says how to fix the problem, and it carries its own exit code. Those that are also an `OSError` (the
file-system guards of engine/fsutil.py) are told as any `OSError` is, naming their path. A reader
of the output that went away (`| head`) ends the command quietly; Ctrl-C ends it with the shell's code for
an interrupt.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TextIO

from agentmd.cli.base import EXIT_BROKEN_PIPE, EXIT_FAILURE, EXIT_INTERRUPTED
from agentmd.cli.output import say
from agentmd.errors import AgentmdError


def explain(exc: BaseException) -> tuple[str | None, int]:
    """The one line to print (None: print nothing) and the exit code for an exception that ended a command."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted; run the command again to finish it", EXIT_INTERRUPTED
    if isinstance(exc, BrokenPipeError):
        return None, EXIT_BROKEN_PIPE
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror or exc}{where}; check that the path exists and is readable and writable", EXIT_FAILURE
    if isinstance(exc, AgentmdError):
        return str(exc), exc.exit_code
    first = str(exc).splitlines()[0] if str(exc) else ""
    return (
        f"internal error ({type(exc).__name__}: {first}); run the command again with --verbose to see where it "
        "happened, and report it",
        EXIT_FAILURE,
    )


def report(exc: BaseException, err: TextIO, *, verbose: bool = False) -> int:
    """Print `exc` as one line on `err` (with the traceback first when `verbose`); the exit code."""
    message, code = explain(exc)
    with contextlib.suppress(OSError, ValueError):  # stderr itself may be gone
        if verbose and message is not None and not isinstance(exc, KeyboardInterrupt):
            import traceback

            err.write("".join(traceback.format_exception(exc)))
        if message is not None:
            # a message that already names its command ("agentmd capture: ...") is not prefixed a second time
            say(err, f"{message}\n" if message.startswith(("agentmd ", "agentmd:")) else f"agentmd: {message}\n")
            err.flush()
    return code


def silence_stdout() -> None:
    """After the reader of standard output went away: point it at /dev/null, so the interpreter's last flush
    at exit does not fail a second time with a message of its own."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
