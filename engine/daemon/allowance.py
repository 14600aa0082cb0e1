"""`agentmd reindex --allow-mass-delete` while the daemon runs: the daemon takes the allowance.

The daemon owns the index while it runs, so the command cannot reconcile by itself. It leaves a request in
the state folder (`allow-mass-delete.json`, with a fresh nonce) and waits. The daemon looks for the file
whenever its indexer is idle, runs one full pass that may remove more than the mass-deletion breaker
allows, writes the pass's report to `allow-mass-delete.done.json` under the same nonce and deletes the
request; the command prints that report. The request lives in the state folder, which is the operator's:
no tool the daemon publishes to agents can write it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from agentmd.engine.fsutil import read_json, write_json
from agentmd.engine.times import parse_utc

REQUEST_NAME = "allow-mass-delete.json"
ANSWER_NAME = "allow-mass-delete.done.json"
REQUEST_MAX_AGE = dt.timedelta(minutes=10)  # an older request (its command gave up long ago) is ignored


class MassDeleteAllowance:
    """The daemon's side: is a request waiting, and answering it."""

    def __init__(self, state_dir: Path) -> None:
        self.request_path = state_dir / REQUEST_NAME
        self.answer_path = state_dir / ANSWER_NAME

    def pending(self) -> dict[str, object] | None:
        """The waiting request, or None (a stale or unreadable one is removed)."""
        if not self.request_path.exists():
            return None
        request = read_json(self.request_path)
        at = parse_utc(request.get("requested_at") if request else None)
        if request is None or at is None or dt.datetime.now(dt.UTC) - at > REQUEST_MAX_AGE:
            with contextlib.suppress(OSError):
                self.request_path.unlink()
            return None
        return request

    def answer(self, request: dict[str, object], report: dict[str, object] | None, error: str | None = None) -> None:
        write_json(self.answer_path, {"nonce": request.get("nonce"), "report": report, "error": error})
        with contextlib.suppress(OSError):
            self.request_path.unlink()


def request_from_daemon(
    state_dir: Path,
    *,
    timeout: float = 120.0,
    clock: Callable[[], float] = time.monotonic,
    alive: Callable[[], bool] = lambda: True,
) -> dict[str, object]:
    """The command's side: ask the running daemon for one allowed pass and wait for its answer
    (`{"report": ..., "error": ...}`). TimeoutError when it does not answer in time."""
    nonce = secrets.token_hex(8)
    answer_path = state_dir / ANSWER_NAME
    with contextlib.suppress(OSError):
        answer_path.unlink()
    write_json(state_dir / REQUEST_NAME, {"nonce": nonce, "requested_at": dt.datetime.now(dt.UTC).isoformat()})
    deadline = clock() + timeout
    pause = threading.Event()
    while clock() < deadline and alive():
        answer = read_json(answer_path)
        if answer is not None and answer.get("nonce") == nonce:
            with contextlib.suppress(OSError):
                answer_path.unlink()
            return answer
        pause.wait(0.05)
    with contextlib.suppress(OSError):
        (state_dir / REQUEST_NAME).unlink()
    raise TimeoutError(f"the daemon did not take the allowance within {timeout:.0f} s")
