"""The daily volume gate admits captures that ask together in one go, and the count stays exact.

Real parts: the real gate on a real state folder (its file lock and count file), real threads released
together by a barrier, and a second process taking places in the same count meanwhile.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentmd.engine.write.gate import CapReached, VolumeGate

DAY = dt.date(2026, 3, 14)


def _gate(state: Path, cap: int) -> VolumeGate:
    return VolumeGate(state, lambda: cap, lambda: "standards/storage-rules.md")


def _together(n: int, work: object) -> list[object]:
    start = threading.Barrier(n)
    out: list[object] = []
    lock = threading.Lock()

    def one() -> None:
        start.wait()
        try:
            value: object = work()  # type: ignore[operator]
        except Exception as exc:  # counted by the caller
            value = exc
        with lock:
            out.append(value)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def test_many_asking_at_once_get_exactly_the_places_left(tmp_path: Path) -> None:
    gate = _gate(tmp_path, cap=12)

    def take() -> str:
        with gate.admit(DAY) as admission:
            admission.landed = True
        return "admitted"

    results = _together(30, take)
    assert results.count("admitted") == 12
    refused = [r for r in results if isinstance(r, CapReached)]
    assert len(refused) == 18 and all("daily cap of 12" in str(r) for r in refused)
    assert gate.count(DAY) == 12


def test_places_not_landed_are_given_back(tmp_path: Path) -> None:
    gate = _gate(tmp_path, cap=0)  # no cap: every capture is counted all the same

    def take(land: bool) -> None:
        with gate.admit(DAY) as admission:
            admission.landed = land

    _together(10, lambda: take(True))
    _together(10, lambda: take(False))  # the write failed before the note was on disk
    assert gate.count(DAY) == 10


def test_the_count_is_shared_with_another_process(tmp_path: Path) -> None:
    gate = _gate(tmp_path, cap=40)
    script = (
        "import datetime as dt, sys\n"
        "from pathlib import Path\n"
        "from agentmd.engine.write.gate import VolumeGate\n"
        "g = VolumeGate(Path(sys.argv[1]), lambda: 40, lambda: 'x')\n"
        "for _ in range(15):\n"
        "    with g.admit(dt.date(2026, 3, 14)) as a:\n"
        "        a.landed = True\n"
    )
    other = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)])

    def take() -> None:
        with gate.admit(DAY) as admission:
            admission.landed = True

    for _ in range(3):
        _together(5, take)
    assert other.wait(60) == 0
    assert gate.count(DAY) == 30


def test_a_cap_that_cannot_be_read_refuses_everyone_asking(tmp_path: Path) -> None:
    def broken() -> int:
        raise ValueError("thresholds.daily_write_cap is not a number")

    gate = VolumeGate(tmp_path, broken, lambda: "x")

    def take() -> None:
        with gate.admit(DAY):
            pass

    results = _together(6, take)
    assert len(results) == 6 and all(isinstance(r, ValueError) for r in results)
    assert gate.count(DAY) == 0
    with pytest.raises(ValueError):
        take()
