"""The capture path prepared at start-up (engine/write/capture.py)."""

from __future__ import annotations

from pathlib import Path

from daemon_helpers import make_repo

from agentmd.engine.index.store import Store
from agentmd.engine.write.capture import Capturer, CaptureRequest
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
