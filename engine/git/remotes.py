"""Whether the vault's git repository names a remote, read from its config file (no git process: a capture
asks on every note) and read again only when that file changes."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

_REMOTE_SECTION = re.compile(rb'^\s*\[\s*remote\s+"', re.MULTILINE)


def config_file(vault: Path) -> Path | None:
    """The config file of the git repository holding `vault`: the first `.git` found from the vault up, a
    folder or a `gitdir:` file (a linked worktree's config is its main repository's); None outside git."""
    for folder in (vault, *vault.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot / "config"
        if dot.is_file():
            try:
                line = dot.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not line.startswith("gitdir:"):
                return None
            gitdir = (folder / line[len("gitdir:") :].strip()).resolve()
            common = gitdir / "commondir"
            if common.is_file():
                try:
                    gitdir = (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
                except (OSError, UnicodeDecodeError):
                    return None
            return gitdir / "config"
    return None


class RemoteConfig:
    """`has_remote()` for one vault, cached on the config file's size and change time."""

    def __init__(self, vault: Path) -> None:
        self._file = config_file(vault)
        self._lock = threading.Lock()
        self._seen: tuple[tuple[int, int] | None, bool] = ((-1, -1), False)

    def has_remote(self) -> bool:
        if self._file is None:
            return False
        try:
            st = os.stat(self._file)
            key: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except OSError:
            key = None
        with self._lock:
            if key == self._seen[0]:
                return self._seen[1]
            try:
                found = key is not None and bool(_REMOTE_SECTION.search(self._file.read_bytes()))
            except OSError:
                found = False
            self._seen = (key, found)
            return found
