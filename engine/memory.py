"""Memory given back: after a burst of work (a huge note indexed or embedded, a large pull reconciled) the
allocator keeps the freed pages for reuse, so a resident daemon would stay as large as its largest moment.
`Keeper.after_work` asks glibc to return free heap pages to the system once the resident size has grown by
`GROWTH` since the last time; elsewhere (another libc, another system) it does nothing.

Measured (bench/huge_note_bench.py, a 4 MB note of 46,361 sections indexed then deleted, in process): resident
size 45 MB before, 110 MB after indexing, 110 MB after deletion; 85 MB after the trim.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from typing import Any

GROWTH = 32 * 2**20  # bytes of resident growth since the last trim that make the next one worth its time
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int | None:
    """This process's resident size, or None where /proc is not there."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def _trimmer() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return getattr(libc, "malloc_trim", None)
    except OSError:
        return None


class Keeper:
    """One per process: trims the heap after work that grew it (thread-safe)."""

    def __init__(self, growth: int = GROWTH) -> None:
        self.growth = growth
        self._trim = _trimmer()
        self._lock = threading.Lock()
        self._low = resident_bytes() or 0  # the resident size after the last trim
        self.trims = 0
        self.given_back = 0  # bytes the trims returned, in all

    @property
    def can_trim(self) -> bool:
        """Whether this system's allocator can be asked to give pages back (glibc)."""
        return self._trim is not None

    def after_work(self) -> int:
        """Trim when the resident size grew by `growth` since the last trim; the bytes given back (0: none)."""
        if self._trim is None:
            return 0
        now = resident_bytes()
        if now is None or now - self._low < self.growth:
            return 0
        with self._lock:
            self._trim(0)
            after = resident_bytes() or now
            self._low = after
            self.trims += 1
            self.given_back += max(0, now - after)
            return max(0, now - after)
