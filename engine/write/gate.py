"""The daily volume gate: how many captures a day may write into the memory space, counted exactly.

The count lives in the state folder (`captures/<day>.count`) and changes only under an exclusive file lock
(`captures/lock`), so captures in this process and in another (the CLI writing without a daemon) share it.
A capture takes its place in the count before its note is written: under the lock, check the cap and raise
the count by one, then release the lock and write. The lock is never held through the write, so captures
write their notes side by side, and still the cap is exact: at cap−1, of any number arriving together,
exactly one is admitted. A write that fails before the note is on disk gives its place back. A crash between
taking the place and writing leaves the count one high, which errs on the side of the cap.

Captures of this process that ask together are admitted together: the first to find no admission running
takes the file lock once for every capture waiting so far, reads the count once, admits them in the order
they asked while the cap allows (refusing the rest) and saves the new count once. So many captures at once
cost one lock, one read and one write, not one of each per capture, and the count is as exact as before.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import logging
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from agentmd.engine.errors import AgentmdError

log = logging.getLogger("agentmd.capture")


class CapReached(AgentmdError):
    """The day's captures have reached the cap; the message says how to raise it."""


@dataclass
class Admission:
    """One admitted capture. `problem`: why its place could not be saved (the note is written all the same,
    uncounted); `landed`: set once the note is on disk, so the place is kept."""

    problem: str | None = None
    landed: bool = False


@dataclass(eq=False)
class _Asking:
    """A capture waiting for its place in one day's count."""

    day: dt.date
    done: bool = False
    admission: Admission | None = None
    failure: BaseException | None = None  # CapReached, or why the count could not be read


class VolumeGate:
    """Captures per day into the memory space, counted in the state dir under an exclusive file lock."""

    def __init__(self, state_dir: Path, cap: Callable[[], int], contract_file: Callable[[], str]) -> None:
        self.state_dir = state_dir
        self.cap = cap
        self.contract_file = contract_file
        self._mutex = threading.Lock()  # guards `_asking`
        self._admitting = threading.Lock()  # held by the one capture admitting everyone asking (see above)
        self._asking: list[_Asking] = []

    def _count_path(self, day: dt.date) -> Path:
        return self.state_dir / "captures" / f"{day.isoformat()}.count"

    def count(self, day: dt.date) -> int:
        try:
            return int(self._count_path(day).read_text().strip() or 0)
        except (OSError, ValueError):
            return 0

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        folder = self.state_dir / "captures"
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / "lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _save(self, day: dt.date, value: int) -> None:
        path = self._count_path(day)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(str(value))
        os.replace(tmp, path)

    @contextlib.contextmanager
    def admit(self, day: dt.date) -> Iterator[Admission]:
        """Take a place in the day's count, or raise CapReached; yields the Admission. Set its `landed` once
        the note is on disk; leaving the block without it gives the place back."""
        admission = self._take(day)
        try:
            yield admission
        finally:
            if not admission.landed and admission.problem is None:
                self._give_back(day)

    def _take(self, day: dt.date) -> Admission:
        asking = _Asking(day)
        with self._mutex:
            self._asking.append(asking)
        with self._admitting:
            if not asking.done:  # no admission that ran while this one waited took it: admit everyone waiting
                with self._mutex:
                    batch, self._asking = self._asking, []
                self._admit_all(batch)
        if asking.failure is not None:
            raise asking.failure
        assert asking.admission is not None
        return asking.admission

    def _admit_all(self, batch: list[_Asking]) -> None:
        """Admit `batch` in order under one file lock: one read and one save of each day's count."""
        try:
            with self._locked():
                cap = self.cap()
                for day in dict.fromkeys(a.day for a in batch):
                    start = current = self.count(day)
                    admitted: list[Admission] = []
                    for a in batch:
                        if a.day != day:
                            continue
                        if cap > 0 and current >= cap:
                            a.failure = CapReached(
                                f"{current} captures today have reached the daily cap of {cap}; raise "
                                f"thresholds.daily_write_cap in {self.contract_file()}, or set "
                                "AGENTMD_DAILY_WRITE_CAP where the captures are written (the daemon's environment when "
                                "one runs), or capture again tomorrow"
                            )
                        else:
                            current += 1
                            a.admission = Admission()
                            admitted.append(a.admission)
                    if current != start:
                        try:
                            self._save(day, current)
                        except OSError as exc:
                            for admission in admitted:
                                admission.problem = f"{type(exc).__name__}: {exc}"
        except BaseException as exc:  # the lock or the cap could not be had: nobody of this batch is admitted
            for a in batch:
                if a.admission is None and a.failure is None:
                    a.failure = exc
            if not isinstance(exc, Exception):
                raise
        finally:
            for a in batch:
                if a.admission is None and a.failure is None:
                    a.failure = RuntimeError("the capture count was not reached")
                a.done = True

    def _give_back(self, day: dt.date) -> None:
        try:
            with self._locked():
                self._save(day, max(0, self.count(day) - 1))
        except OSError as exc:  # the count stays one high: never over the cap
            log.warning("a capture that wrote nothing could not give its place in the daily count back: %s", exc)
