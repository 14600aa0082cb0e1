"""The capture path prepared at start-up, and the stage log's timestamps (engine/write/capture.py, stages.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from daemon_helpers import make_repo

from agentmd.engine.index.store import Store
from agentmd.engine.write.capture import Capturer, CaptureRequest
from agentmd.engine.write.stages import StageLog
from agentmd.rules import ContractCache


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_warm_up_writes_nothing_and_captures_work_after_it(tmp_path: Path) -> None:
    vault = make_repo(tmp_path / "vault").resolve()
    state = tmp_path / "state"
    store = Store(tmp_path / "cache")
    try:
        capturer = Capturer(vault, state, ContractCache(vault), store)
        before = _tree(vault)
        seconds = capturer.warm()
        assert seconds > 0
        assert _tree(vault) == before  # no note, no temp file
        assert not state.exists() or not any(state.rglob("*.count"))  # the day's count untouched
        result = capturer.capture(CaptureRequest(title="After the warm-up", body="Captured as usual.", type="decision"))
        assert result.indexed and (vault / result.path).is_file()
    finally:
        store.close()


def test_the_stage_log_says_when_each_capture_began(tmp_path: Path) -> None:
    vault = make_repo(tmp_path / "vault").resolve()
    store = Store(tmp_path / "cache")
    try:
        capturer = Capturer(vault, tmp_path / "state", ContractCache(vault), store)
        log_path = tmp_path / "stages.jsonl"
        capturer.stages = StageLog(log_path)
        began = time.time()
        capturer.capture(CaptureRequest(title="Timed capture one", body="First.", type="decision"))
        capturer.capture(CaptureRequest(title="Timed capture two", body="Second.", type="decision"))
        ended = time.time()
        lines = [json.loads(line) for line in log_path.read_text().splitlines()]
        assert len(lines) == 2
        assert began - 0.01 <= lines[0]["at"] <= lines[1]["at"] <= ended + 0.01
        for line in lines:  # the capture took its time after it began: `at` plus the total is no later than the end
            assert line["at"] + line["total"] / 1000 <= ended + 0.01
            assert line["batch"] >= 1 and "reconcile" in line["batch_stages"]
            # CPU time of one thread: never more than the wall time it ran for (each capture led its own batch)
            assert 0 < line["cpu"] <= line["total"] + 1
            assert 0 <= line["batch_stages"]["reconcile-cpu"] <= line["batch_stages"]["reconcile"] + 1
    finally:
        store.close()
