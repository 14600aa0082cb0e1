"""`ContractCache`: the contract in effect for a vault, re-read when its file changes."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from agentmd.rules.contract.loading import contract_path, load_contract
from agentmd.rules.contract.model import ContractState

_Stamp = tuple[Any, ...] | None


class ContractCache:
    """The contract in effect for a vault, re-read whenever its file changes, appears or disappears.

    `get()` stats the file on every call (cheap) and reloads only when (mtime_ns, size, inode) changed.
    Safe to share between threads.
    """

    def __init__(self, vault: Path | None, path: Path | None = None) -> None:
        self._vault = vault
        self._path = path
        self._target = contract_path(vault, path)
        self._lock = threading.Lock()
        self._stamp: _Stamp = None
        self._state: ContractState | None = None

    @property
    def target(self) -> Path | None:
        """The file watched: the explicit path or the vault's `standards/storage-rules.md`."""
        return self._target

    def _current_stamp(self) -> _Stamp:
        if self._target is None:
            return None
        try:
            st = os.stat(self._target)
        except FileNotFoundError:
            return ("missing", os.path.lexists(self._target))
        except OSError as exc:
            return ("error", exc.errno)
        return ("file", st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)

    def get(self) -> ContractState:
        with self._lock:
            stamp = self._current_stamp()  # stat before reading, so an edit mid-read is seen next time
            if self._state is None or stamp != self._stamp:
                self._state = load_contract(self._vault, self._path)
                self._stamp = stamp
            return self._state

    def refresh(self) -> ContractState:
        """Re-read the file now, whatever its stamp says."""
        with self._lock:
            self._state = None
        return self.get()
