"""What an enrichment run leaves in the state folder beside the ledger: one line per run in `runs.jsonl` (the
morning note and the dry run's estimate read it), and the run lock that lets one run at a time pay for notes."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agentmd.engine.errors import UsageError
from agentmd.engine.fsutil import read_json_lines

STATE_FOLDER = "enrich"
RUNS_FILE = "runs.jsonl"
DEFAULT_OUTPUT_TOKENS = 300  # the dry run's estimate of an answer when no run has been measured yet


def append_run(state_dir: Path, record: Mapping[str, Any]) -> None:
    folder = state_dir / STATE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / RUNS_FILE).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def last_runs(state_dir: Path) -> list[dict[str, Any]]:
    """The recorded runs, oldest first (a torn line skipped)."""
    return read_json_lines(state_dir / STATE_FOLDER / RUNS_FILE)


def tokens_per_call(state_dir: Path, prompt_chars: int) -> int:
    """What one call is expected to add: the mean of the measured runs, else the prompt's size in tokens."""
    added = calls = 0
    for rec in last_runs(state_dir)[-10:]:
        if not rec.get("dry_run") and rec.get("calls"):
            added += int((rec.get("usage") or {}).get("added", 0) or 0)
            calls += int(rec["calls"])
    if calls:
        return max(1, added // calls)
    return prompt_chars // 4 + DEFAULT_OUTPUT_TOKENS


class RunBusy(UsageError):
    """Another enrichment run holds the run lock: two runs would pay twice for the same notes."""


@contextlib.contextmanager
def run_lock(state_dir: Path) -> Iterator[None]:
    """One enrichment run at a time per vault (a hand run and the nightly job), by an exclusive file lock."""
    folder = state_dir / STATE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / "run.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RunBusy("another enrichment run is in progress for this vault; try again when it ends") from None
        yield
    finally:
        os.close(fd)
