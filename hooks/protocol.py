"""Claude Code's hook protocol as every agentmd hook speaks it, and the one `main` each hook's module exposes.

A hook gets one JSON object on stdin (`session_id`, `cwd`, `hook_event_name` and the event's own fields) and
answers on stdout: nothing, plain text, or one JSON object on one line (`hookSpecificOutput` and the event's
fields). It always exits 0: a hook that fails must not block the agent, so a failure is a line on stderr or in
the hooks' log, never an exit code. Standard library only: the hooks load this on every prompt and tool call.

- `parse_payload` reads the payload strictly, saying what is wrong with it (the recall hook logs that);
  `read_hook_input` reads it forgivingly, giving {} for a missing, late or broken payload (the guards and the
  session-start hook).
- `write_output` prints a JSON answer the way Claude Code reads it.
- `standalone` builds a hook's `main(argv=None, stdin=None, out=None, err=None)` from its command function.
"""

from __future__ import annotations

import sys

from agentmd.engine import jsonwire

TYPE_CHECKING = False  # `typing` is one more import on the prompt hook's path; mypy reads the block below
if TYPE_CHECKING:  # argparse is loaded when a hook's arguments are read: the recall hook reads its own, lighter
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import TextIO

MAX_INPUT_BYTES = 4 * 2**20  # the most the recall hook reads of its payload


def parse_payload(data: str | bytes) -> dict[str, object]:
    """The hook payload in `data`. A `ValueError` says what is wrong: no input, not JSON, not an object."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    if not data.strip():
        raise ValueError("no hook input on stdin")
    try:
        payload = jsonwire.loads(data)
    except ValueError as exc:
        raise ValueError(f"hook input is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise ValueError("hook input is not a JSON object")
    return payload


def prompt_fields(payload: Mapping[str, object]) -> tuple[str | None, str, str | None]:
    """(session id, prompt, cwd) of a UserPromptSubmit payload (the recall hook's). A `ValueError` says what is
    wrong: another event, or no prompt; the session id is read first, so the log line can name it either way
    (`session_of`)."""
    event = payload.get("hook_event_name")
    if event not in (None, "UserPromptSubmit"):
        raise ValueError(f"hook_event_name is {event!r}; the recall hook answers UserPromptSubmit")
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise ValueError("hook input has no prompt")
    cwd = payload.get("cwd")
    return session_of(payload), prompt, cwd if isinstance(cwd, str) else None


def session_of(payload: Mapping[str, object]) -> str | None:
    """The payload's session id as text, None when it has none."""
    given = payload.get("session_id")
    return str(given) if given else None


def read_hook_input(stream: TextIO | None, timeout: float = 2.0) -> dict[str, object]:
    """The hook's JSON input from `stream`, or {} when there is none, it is not JSON, or it does not arrive
    within `timeout` seconds (a terminal, or a parent that never closes the pipe)."""
    if stream is None:
        return {}
    try:
        if stream.isatty():
            return {}
    except (AttributeError, ValueError, OSError):
        pass
    box: dict[str, str] = {}

    def read() -> None:
        try:
            box["text"] = stream.read()
        except (OSError, ValueError, UnicodeDecodeError):
            box["text"] = ""

    import threading

    reader = threading.Thread(target=read, name="agentmd-hook-stdin", daemon=True)
    reader.start()
    reader.join(timeout)
    try:
        return parse_payload(box.get("text") or "")
    except ValueError:
        return {}


def write_output(out: TextIO, output: Mapping[str, object]) -> None:
    """Print a hook's JSON answer on one line, the way Claude Code reads it."""
    import json  # the guards' answers keep their characters; jsonwire escapes them

    out.write(json.dumps(output, ensure_ascii=False) + "\n")
    out.flush()


def standalone_common() -> argparse.ArgumentParser:
    """The options every hook takes: where the vault, index and config are, `--json` and `-v`."""
    import argparse

    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--vault")
    p.add_argument("--index")
    p.add_argument("--config")
    p.add_argument("--json", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def standalone(
    name: str,
    cmd: Callable[[argparse.Namespace, TextIO, TextIO, TextIO | None], int],
    options: Callable[[argparse.ArgumentParser], None] | None = None,
) -> Callable[..., int]:
    """A hook's `main(argv=None, stdin=None, out=None, err=None)`: the hook run from its own argument list
    (`agentmd-hook NAME ...`, `python -m agentmd.hooks.MODULE`), without the full CLI's start-up. `options`
    adds the hook's own options to the common ones; options it does not know are ignored (a hook must not
    fail on them)."""

    def main(
        argv: Sequence[str] | None = None,
        stdin: TextIO | None = None,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ) -> int:
        import argparse

        parser = argparse.ArgumentParser(prog=f"agentmd hook {name}", parents=[standalone_common()])
        if options is not None:
            options(parser)
        args, _unknown = parser.parse_known_args(argv)
        return cmd(args, out or sys.stdout, err or sys.stderr, stdin)

    return main
