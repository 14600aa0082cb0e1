"""The hand-over of the store between captures and a rebuild of the index.

While the daemon serves, a damaged or deleted index is set aside and a fresh store opened in its place
(engine/daemon/upkeep.py). A capture holds the store from its twin check to its index update, so the old store
must not close under it, and a capture arriving during the swap must not pick up the closed one. `StoreSwap`
is that rule: captures enter with `using()`; `swapping()` waits until the captures in flight are done, holds new
ones back while the store is replaced, then lets them go on with the new store.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from agentmd.engine.errors import AgentmdError

SWAP_WAIT_SECONDS = 30.0  # a capture waits this long for a swap before it is refused (the swap takes ms)


class StoreSwapping(AgentmdError):
    """A capture arrived while the index was being replaced and the replacement did not finish in time."""


class StoreSwap:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._users = 0
        self._swapping = False

    @contextlib.contextmanager
    def using(self) -> Iterator[None]:
        """Hold the store for one capture; waits while a swap is under way."""
        with self._cond:
            if not self._cond.wait_for(lambda: not self._swapping, SWAP_WAIT_SECONDS):
                raise StoreSwapping(
                    "the daemon is replacing a damaged index and has not finished; nothing was written: retry in "
                    "a moment, and see `agentmd status` if it goes on"
                )
            self._users += 1
        try:
            yield
        finally:
            with self._cond:
                self._users -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def swapping(self) -> Iterator[None]:
        """Replace the store inside this block: captures in flight finish first, new ones wait."""
        with self._cond:
            self._cond.wait_for(lambda: not self._swapping)
            self._swapping = True
            self._cond.wait_for(lambda: self._users == 0)
        try:
            yield
        finally:
            with self._cond:
                self._swapping = False
                self._cond.notify_all()
