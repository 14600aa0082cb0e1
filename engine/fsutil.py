"""File helpers every writer shares: fsync of a folder, atomic replacement, small JSON state files.

Standard library only, so the light hook entry point can use them.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any


def fsync_dir(path: Path) -> None:
    """Make a rename or a new link inside `path` durable. Raises OSError when the folder cannot be synced."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir_quietly(path: Path) -> None:
    """`fsync_dir` for callers whose write already succeeded and for whom durability is best-effort."""
    with contextlib.suppress(OSError):
        fsync_dir(path)


def atomic_write(path: Path, data: bytes | str, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace `path` with `data` so a reader sees the old bytes or the new ones, never half a file.

    The bytes go to a hidden temp file beside `path` (fsynced when `durable`), which is then renamed over it;
    a failure removes the temp file and leaves `path` as it was. Text is written as UTF-8 with its newlines
    untouched.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.agentmd-{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644 if mode is None else mode)
        try:
            os.write(fd, raw)
            if mode is not None:
                os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir_quietly(path.parent)


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from a state file, or None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Atomic replace, so a reader never sees half a file. State files are caches: no fsync."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=1, sort_keys=True), durable=False)
