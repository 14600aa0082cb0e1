"""When the daemon's next commit cycle is due.

A change asks for a cycle `debounce` seconds later, so a burst of writes becomes one commit. Under
continuous activity that alone would push the cycle back forever, so the delay is bounded: a cycle is due
at the latest `max_wait` seconds after the first change it has not yet committed. A cycle that was skipped
(someone else's lock, a user's commit waiting in its editor) is retried after `retry` seconds, without
waiting for another change. The schedule holds no lock of its own: the daemon calls it under its condition.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agentmd.engine.settings import COMMIT_MAX_WAIT

__all__ = ["COMMIT_MAX_WAIT", "SKIP_RETRY", "CommitSchedule"]

SKIP_RETRY = 5.0


class CommitSchedule:
    def __init__(
        self,
        debounce: float,
        max_wait: float = COMMIT_MAX_WAIT,
        *,
        retry: float = SKIP_RETRY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if debounce < 0 or max_wait < 0 or retry < 0:
            raise ValueError("commit delays must be >= 0")
        self.debounce = debounce
        self.max_wait = max(max_wait, debounce)
        self.retry = retry
        self.clock = clock
        self.due: float | None = None  # clock time the next cycle is due, None when nothing is pending
        self._first: float | None = None  # the first pending change not yet taken by a cycle

    def changed(self, delay: float | None = None) -> bool:
        """Something changed: a cycle `delay` (default: the debounce) from now, and never later than
        `max_wait` after the first pending change. Returns whether the cycle is now due sooner than it was
        (or newly due): only then must a committer asleep until the time it had be woken. Under a stream of
        captures each one only pushes the cycle back, so none of them wakes it."""
        now = self.clock()
        if self._first is None:
            self._first = now
        previous = self.due
        wanted = now + (self.debounce if delay is None else max(0.0, delay))
        self.due = min(wanted, self._first + self.max_wait)
        return previous is None or self.due < previous

    def skipped(self) -> None:
        """The cycle that just ran could not commit: try again after `retry` seconds."""
        now = self.clock()
        if self._first is None:
            self._first = now
        retry_at = now + self.retry
        self.due = retry_at if self.due is None else min(self.due, retry_at)

    def ready(self) -> bool:
        return self.due is not None and self.clock() >= self.due

    def wait_seconds(self) -> float | None:
        """How long until the cycle is due (None: nothing pending)."""
        return None if self.due is None else max(0.0, self.due - self.clock())

    def take(self) -> float:
        """A cycle starts now and commits everything pending so far; how many seconds ago the first of it was
        seen (0 when nothing was pending), at most `max_wait`: beyond that, cycles were held up (a lock, a
        skipped cycle) and the time says nothing of when a file still being written began."""
        waited = 0.0 if self._first is None else min(self.max_wait, max(0.0, self.clock() - self._first))
        self.due = None
        self._first = None
        return waited
