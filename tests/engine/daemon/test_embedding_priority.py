"""The daemon's background embedding runs below the daemon's own priority, and so do the threads it starts
(the model's workers), so searches, captures and prompt hooks get the CPU first while a vault is embedded."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from agentmd.engine.daemon.embedding import BACKGROUND_NICE, lower_priority

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread priority is Linux's")


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_the_background_thread_and_the_threads_it_starts_run_lower_and_the_rest_do_not() -> None:
    seen: dict[str, int] = {}
    before = _nice()

    def child() -> None:
        seen["child"] = _nice()

    def background() -> None:
        seen["lowered"] = int(lower_priority())
        seen["background"] = _nice()
        worker = threading.Thread(target=child)
        worker.start()
        worker.join()

    thread = threading.Thread(target=background)
    thread.start()
    thread.join()
    assert seen["lowered"] == 1
    assert seen["background"] == min(19, before + BACKGROUND_NICE)
    assert seen["child"] == seen["background"]  # a thread started by it inherits the lowered priority
    assert _nice() == before  # the calling thread (a search, a capture) keeps its own
