"""Capture temp files: how they are named, and the start-up sweep that removes those a crash left behind.

A capture writes its bytes to a hidden temp file in the vault's scratch folder (SCRATCH_DIR, at the top,
hidden, so never watched nor indexed) before linking it into place; a phone-note edit, and a capture whose
scratch folder is on another file system, write theirs in the note's own folder. The name carries the
writing process's id, so a sweep can tell a file a live writer is still using from one an interrupted
writer left.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from agentmd.engine.fsutil import SCRATCH_DIR as SCRATCH_DIR  # owned by fsutil: a sync round's move writes there too
from agentmd.engine.fsutil import temp_name as temp_name

_TEMP_OWNER = re.compile(r"\.(\d+)-[0-9a-f]{8}\.capture-tmp$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists but belongs to someone else
    return True


def _folders(vault: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """The vault's folders outside dot folders, and the scratch folder (SCRATCH_DIR) itself, not below it."""
    yield from os.walk(vault)
    scratch = os.path.join(vault, SCRATCH_DIR)
    if os.path.isdir(scratch) and not os.path.islink(scratch):
        with contextlib.suppress(OSError):
            yield scratch, [], os.listdir(scratch)


def sweep_temp_files(vault: Path, *, older_than: float | None = None) -> int:
    """Remove capture temp files left by a crash (they are hidden and never indexed).

    A temp file is only removed when the process that wrote it (named in the file name) is no longer running,
    and, with `older_than` (a time.time() value, the daemon's start), when it was last written before that:
    a capture in flight in this or another live process keeps its temp file.
    """
    removed = 0
    for dirpath, dirnames, filenames in _folders(vault):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not (name.startswith(".") and name.endswith(".capture-tmp")):
                continue
            owner = _TEMP_OWNER.search(name)
            if owner and _alive(int(owner.group(1))):
                continue
            path = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                if older_than is not None and os.lstat(path).st_mtime >= older_than:
                    continue
                os.unlink(path)
                removed += 1
    return removed
