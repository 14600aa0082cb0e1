"""Where a capture's time goes: wall time per stage, one JSON line per capture, for profiling under load.

Off unless `AGENTMD_CAPTURE_STAGES` names a file. Then every capture appends one line to it once it has its
answer: `{"stages": {"prefilter": 1.2, "door": 0.3, ...}, "total": 41.0, "at": 1767225600.125, "cpu": 3.2,
"batch": 6, "batch_stages": {...}}` in milliseconds, the stages in the order they ran, `at` when the capture
began (seconds since the epoch, to line captures up with each other and with the daemon's log), `cpu` the CPU
time its thread used (a batch it led included), and for a note that was written the size of the index batch
that took it and what that batch spent by stage (the wake-up of a capture handed the lead, waiting for the
store, the index and catalog update, and the CPU time of the thread that ran it).
bench/capture_load.py sets it and reports each stage's percentiles. Lines are appended under a lock by one
`write` each, so lines of captures finishing together never interleave. Measuring costs two `perf_counter_ns`
calls a stage whether the log is on or not; only the writing is skipped when it is off.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

ENV = "AGENTMD_CAPTURE_STAGES"


class StageClock:
    """The stage times of one capture: `mark(name)` closes the stage that ran since the last mark."""

    __slots__ = ("_cpu", "_last", "_start", "at", "batch", "batch_stages", "stages")

    def __init__(self) -> None:
        self.at = time.time()  # when the capture began (seconds since the epoch), to line it up with other logs
        self._cpu = time.thread_time_ns()  # the CPU time this thread has used so far
        self._start = self._last = time.perf_counter_ns()
        self.stages: dict[str, float] = {}
        self.batch = 0  # notes in the index batch that took this capture's note
        self.batch_stages: dict[str, float] = {}  # what that batch spent, by stage

    def mark_until(self, name: str, at_ns: int) -> None:
        """Close a stage that ended at `at_ns` (a perf_counter_ns taken by another thread); nothing when that
        moment is not after the last mark."""
        if at_ns > self._last:
            self.stages[name] = self.stages.get(name, 0.0) + (at_ns - self._last) / 1e6
            self._last = at_ns

    def mark(self, name: str) -> None:
        now = time.perf_counter_ns()
        self.stages[name] = self.stages.get(name, 0.0) + (now - self._last) / 1e6
        self._last = now

    def total_ms(self) -> float:
        return (self._last - self._start) / 1e6

    def to_dict(self) -> dict[str, object]:
        return {
            "stages": {k: round(v, 3) for k, v in self.stages.items()},
            "total": round(self.total_ms(), 3),
            "at": round(self.at, 3),
            "cpu": round((time.thread_time_ns() - self._cpu) / 1e6, 3),
            "batch": self.batch,
            "batch_stages": {k: round(v, 3) for k, v in self.batch_stages.items()},
        }


class StageLog:
    """Appends finished captures' stage times to `path`; with no path it keeps nothing."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls) -> StageLog:
        name = os.environ.get(ENV, "").strip()
        return cls(Path(name) if name else None)

    def write(self, clock: StageClock) -> None:
        """Append one capture's line. Never raises: a log that cannot be written loses lines, not captures."""
        if self.path is None:
            return
        line = (json.dumps(clock.to_dict(), sort_keys=True) + "\n").encode()
        try:
            with self._lock:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, line)
                finally:
                    os.close(fd)
        except OSError:
            pass
