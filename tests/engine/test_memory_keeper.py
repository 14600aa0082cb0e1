"""The daemon gives memory back after a burst of work: freed heap pages return to the system once the resident
size has grown by the keeper's threshold, and not before."""

from __future__ import annotations

import pytest

from agentmd.engine.memory import Keeper, resident_bytes


def test_resident_size_is_read() -> None:
    size = resident_bytes()
    assert size is not None and size > 1_000_000


def test_a_burst_that_grew_the_heap_is_given_back_and_a_small_one_is_not() -> None:
    if not Keeper().can_trim:
        pytest.skip("this system's allocator has no malloc_trim")
    baseline = Keeper(growth=1)
    baseline.after_work()  # start from a trimmed heap
    keeper = Keeper(growth=48 * 2**20)
    assert keeper.after_work() == 0 and keeper.trims == 0  # nothing grew yet
    # many heap blocks (larger than Python's small-object arenas, smaller than glibc's mmap threshold),
    # of which one in fifty is kept: the freed ones stay in the heap between the kept ones
    blocks = [bytearray(4000) for _ in range(40_000)]
    kept = blocks[::50]
    del blocks
    grown = resident_bytes()
    given = keeper.after_work()
    assert keeper.trims == 1
    assert given > 48 * 2**20, (given, grown)
    assert keeper.after_work() == 0 and keeper.trims == 1  # it did not grow again since
    assert len(kept) == 800
