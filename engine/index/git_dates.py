"""When notes entered the vault's git history: the captured date of a note whose frontmatter has none.

A copied or cloned vault gives every file the copy's mtime, so mtime says nothing about when a note was written;
the commit that added the note does. `added_dates` reads the whole history once (`git log -M --name-status`,
newest first) and follows each wanted path back through renames to the commit that added it. One `git log` per
pass, however many notes need a date; nothing when the vault is not in a git repository, or git fails or is
slow (the caller falls back to mtime).

Plain `git` through subprocess: the index does not use the git room (they are peers), and this is read-only.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import subprocess
from collections.abc import Collection
from pathlib import Path

log = logging.getLogger("agentmd.reconcile")

TIMEOUT = 120.0


def _iso(seconds: int) -> str:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC).isoformat().replace("+00:00", "Z")


def _in_git(vault: Path) -> bool:
    return any((folder / ".git").exists() for folder in (vault, *vault.parents))


def added_dates(vault: Path, paths: Collection[str], *, whole_history: bool = True) -> dict[str, str]:
    """The date (ISO 8601, UTC) of the commit that added each of `paths` (vault-relative), following renames;
    paths git does not know are left out. `whole_history=False` limits git to the given paths (cheaper for a
    handful of notes), which does not follow renames."""
    wanted = set(paths)
    if not wanted or not _in_git(vault):
        return {}
    cmd = [
        "git", "-C", str(vault), "-c", "core.quotepath=off", "log", "--no-color", "--no-ext-diff", "--relative",
        "-M", "--diff-filter=AR", "--name-status", "-z", "--format=%x01%at", "HEAD",
    ]
    if not whole_history:
        cmd += ["--", *sorted(wanted)]
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("captured dates from git skipped: %s", exc)
        return {}
    if done.returncode != 0:  # no commits yet, not a repository after all, a broken repository
        return {}
    tracking = {p: p for p in wanted}  # the name a note had at this point of history -> its name now
    dates: dict[str, str] = {}
    when: int | None = None
    tokens = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    while i < len(tokens) and tracking:
        token = tokens[i].lstrip("\n")
        i += 1
        if token.startswith("\x01"):
            when = int(token[1:]) if token[1:].isdigit() else None
        elif token == "A" and i < len(tokens):
            current = tracking.pop(tokens[i], None)
            i += 1
            if current is not None and when is not None:
                dates[current] = _iso(when)
        elif token.startswith("R") and i + 1 < len(tokens):
            old, new = tokens[i], tokens[i + 1]
            i += 2
            current = tracking.pop(new, None)
            if current is not None:
                tracking[old] = current
    return dates
