"""The contract cache: re-read when the vault's file changes, appears or disappears; safe across threads."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from contract_helpers import write_vault_contract, yaml_block

from agentmd.rules.contract import ContractCache

# --------------------------------------------------------------------------------------------- cache


def test_cache_rereads_after_changes_and_deletion(tmp_path: Path) -> None:
    cache = ContractCache(tmp_path)
    first = cache.get()
    assert not first.halted
    assert first.source.endswith("storage-rules.default.md")
    assert cache.get() is first  # nothing changed: no re-read

    path = write_vault_contract(tmp_path, yaml_block("thresholds:\n  daily_write_cap: 50\n"))
    second = cache.get()
    assert second.source == str(path)
    assert second.contract.thresholds.daily_write_cap == 50
    assert cache.get() is second

    path.write_text(yaml_block("thresholds:\n  daily_write_cap: 1234\n"), encoding="utf-8")  # size changes
    assert cache.get().contract.thresholds.daily_write_cap == 1234

    # same size, same inode: only the mtime tells; set it explicitly instead of sleeping
    before = path.stat()
    path.write_text(yaml_block("thresholds:\n  daily_write_cap: 4321\n"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 5_000_000_000))
    assert cache.get().contract.thresholds.daily_write_cap == 4321

    path.write_text(yaml_block("thresholds:\n  daily_write_cap: -1\n"), encoding="utf-8")
    halted = cache.get()
    assert halted.halted
    assert "thresholds.daily_write_cap" in halted.errors[0]

    path.unlink()
    gone = cache.get()
    assert not gone.halted
    assert gone.source.endswith("storage-rules.default.md")


def test_cache_with_explicit_path_and_refresh(tmp_path: Path) -> None:
    path = tmp_path / "rules.md"
    cache = ContractCache(None, path)
    assert cache.target == path
    assert cache.get().halted  # explicit file missing
    path.write_text(yaml_block("thresholds:\n  daily_card_budget: 3\n"), encoding="utf-8")
    assert cache.get().contract.thresholds.daily_card_budget == 3
    state = cache.get()
    assert cache.refresh() is not state


def test_cache_is_safe_across_threads(tmp_path: Path) -> None:
    write_vault_contract(tmp_path, yaml_block("thresholds:\n  daily_write_cap: 77\n"))
    cache = ContractCache(tmp_path)
    seen: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            cap = cache.get().contract.thresholds.daily_write_cap
            with lock:
                seen.append(cap)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [77] * 400
