"""Which dirty files a commit cycle leaves to a later one because they are still being written.

A note written in pieces (a long paste, an export, a download, a sync tool writing in place) is dirty long
before it is whole, and a cycle that ran in between would put a torn copy into history. So the daemon's
committer commits a file only once it has settled:

- its mtime lies at least `settle` seconds (`COMMIT_SETTLE`) before the wall clock: the second of quiet the
  daemon already waits after the last change, measured on the file itself rather than on the watcher's
  events, which a busy watcher coalesces into batches a second apart. Or its size, mtime, ctime and inode are
  the ones a cycle at least `settle` seconds earlier saw (a file whose mtime lies in the future, copied from
  a machine whose clock runs ahead, settles that way);
- and it did not change while `git add` read it: the cycle looks at each file before staging and again
  after, and a file whose look differs is put back to its committed entry and left for the next cycle
  (`changed_while_staged`).

A file written into for longer than `max_defer` seconds (`COMMIT_MAX_DEFERRAL`) without a quiet moment, a
log appended to forever, is committed as it is then, with a warning, and deferred afresh afterwards: history
gets a copy of it at least that often. The daemon's own writes (a path with a registered origin: captures,
curation) are written whole and renamed into place, so their fresh mtimes defer nothing. The last cycle at a
daemon's stop, and every cycle of a committer with no settle time (the CLI's, which no later cycle follows),
commits everything as it is.

Nothing here sleeps: both clocks are injected, and the daemon asks for its next cycle `retry_in` seconds on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentmd.engine.git.runner import listing, plural
from agentmd.engine.settings import COMMIT_MAX_DEFERRAL, COMMIT_SETTLE

__all__ = ["COMMIT_MAX_DEFERRAL", "COMMIT_SETTLE", "Look", "Settling", "look_of"]

MIN_RETRY = 0.05  # seconds: the soonest the next cycle is asked for


@dataclass(frozen=True)
class Look:
    """What `lstat` says of a file: any write changes at least one of these."""

    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int


def look_of(path: Path) -> Look | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return Look(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@dataclass(frozen=True)
class _Waiting:
    look: Look | None
    since: float  # clock time a cycle first left the file
    seen: float  # clock time this same look was first seen


class Settling:
    """The settle rule's memory across cycles (the files left, since when) and one cycle's looks."""

    def __init__(
        self,
        settle: float = 0.0,
        max_defer: float = COMMIT_MAX_DEFERRAL,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.settle = settle  # 0: off, every cycle commits files as they are
        self.max_defer = max_defer
        self.clock = clock
        self.wall = wall
        self._waiting: dict[str, _Waiting] = {}
        self._earlier: dict[str, _Waiting] = {}
        self._looks: dict[str, Look | None] = {}  # this cycle's look at each path it stages (checked ones only)
        self.deferred: list[str] = []  # the paths this cycle left for a later one
        self.retry_in: float | None = None  # when the next cycle should run for them (seconds from now)

    def sort(
        self,
        vault: Path,
        paths: Sequence[str],
        *,
        exempt: Collection[str],
        final: bool,
        warnings: list[str],
        waited: float = 0.0,
    ) -> list[str]:
        """The paths of `paths` this cycle commits; the rest wait in `deferred`. `exempt` paths (the daemon's
        own writes) need no quiet time; `final` (or no settle time) commits everything as it is. A path first
        left now counts as left since `waited` seconds ago (when the first change this cycle takes was seen),
        so a file written into from then is forced in `max_defer` seconds after it began, not after this cycle."""
        self._earlier, self._waiting, self._looks = self._waiting, {}, {}
        self.deferred, self.retry_in = [], None
        if final or self.settle <= 0:
            return list(paths)
        now, wall = self.clock(), self.wall().timestamp()
        ready: list[str] = []
        forced: list[str] = []
        for path in paths:
            look = look_of(vault / path)
            if look is None:  # deleted: there is nothing to tear (one written again before `git add` waits)
                self._looks[path] = None
                ready.append(path)
                continue
            before = self._earlier.get(path)
            since = before.since if before is not None else now - max(0.0, waited)
            if before is not None and now - since >= self.max_defer:
                forced.append(path)
                ready.append(path)  # committed as it is; not checked after staging either
                self._waiting[path] = before  # until its commit lands (`committed`): a retried cycle forces it too
                continue
            self._looks[path] = look
            age = wall - look.mtime_ns / 1e9
            seen = before.seen if before is not None and before.look == look else now
            if path in exempt or age >= self.settle or now - seen >= self.settle:
                ready.append(path)
                continue
            wait = self.settle - (now - seen)
            if 0 <= age < self.settle:
                wait = min(wait, self.settle - age)
            self._defer(path, look, since, seen, wait)
        if forced:
            warnings.append(
                f"committed {plural(len(forced), 'file')} still being written, as they were "
                f"({listing(forced)}): written into for {self.max_defer:g} s without {self.settle:g} s of quiet"
            )
        return ready

    def changed_while_staged(self, vault: Path, paths: Sequence[str]) -> list[str]:
        """Of `paths`, just staged, the ones whose file changed since `sort` looked at it: `git add` may have
        read a torn copy. They are deferred; the caller puts their index entries back."""
        now = self.clock()
        moved = []
        for path in paths:
            if path not in self._looks:
                continue
            look = look_of(vault / path)
            if look != self._looks[path]:
                moved.append(path)
                before = self._earlier.get(path)
                self._defer(path, look, before.since if before is not None else now, now, self.settle)
        return moved

    def committed(self, paths: Collection[str]) -> None:
        """The paths are in a commit HEAD now points to: a later write to one waits afresh."""
        for path in paths:
            self._waiting.pop(path, None)

    def _defer(self, path: str, look: Look | None, since: float, seen: float, wait: float) -> None:
        self._waiting[path] = _Waiting(look, since, seen)
        self.deferred.append(path)
        wait = max(MIN_RETRY, wait)
        self.retry_in = wait if self.retry_in is None else min(self.retry_in, wait)
