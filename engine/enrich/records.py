"""What an enrichment run leaves in the state folder beside the ledger: one line per run in `runs.jsonl` (the
morning note and the dry run's estimate read it), and the run lock that lets one run at a time pay for notes."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NotRequired, TypedDict, cast

from agentmd.engine.errors import UsageError
from agentmd.engine.fsutil import read_json_lines

STATE_FOLDER = "enrich"
RUNS_FILE = "runs.jsonl"
DEFAULT_OUTPUT_TOKENS = 300  # the dry run's estimate of an answer when no run has been measured yet


class Estimate(TypedDict):
    """A dry run's sizing of the night: the notes owed by cause and by kind, and what the budgets let a run
    spend on them."""

    calls: int
    tokens: int
    tokens_per_call: int
    calls_per_note: int
    notes: int  # the notes the budgets cover
    later: int  # the notes past them, for a later run
    owed_by_cause: dict[str, int]
    owed_by_kind: dict[str, int]  # cards, idea cards, project records


class RunRecord(TypedDict):
    """An enrichment run as `agentmd enrich --json` prints it and `runs.jsonl` keeps it (there without `notes`,
    with `at`)."""

    dry_run: bool
    prompt_version: str
    gates_version: str
    budget: dict[str, object]  # the budget's limits (engine/enrich/budget.py)
    counts: dict[str, int]  # notes by outcome
    dormant: list[str]
    by_cause: dict[str, int]
    calls: int
    usage: dict[str, object]  # tokens and cost (engine/enrich/model.py `Usage`)
    stopped_by: str | None
    cursor: str | None
    commits: list[str]
    applied_by: str | None
    warnings: list[str]
    notes: NotRequired[list[dict[str, object]]]  # each note's outcome
    estimate: NotRequired[Estimate]  # a dry run's
    at: NotRequired[str]  # when it was recorded


def append_run(state_dir: Path, record: RunRecord) -> None:
    folder = state_dir / STATE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / RUNS_FILE).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def last_runs(state_dir: Path) -> list[RunRecord]:
    """The recorded runs, oldest first (a torn line skipped)."""
    return [cast(RunRecord, rec) for rec in read_json_lines(state_dir / STATE_FOLDER / RUNS_FILE)]


def tokens_per_call(state_dir: Path, prompt_chars: int) -> int:
    """What one call is expected to add: the mean of the measured runs, else the prompt's size in tokens."""
    added = calls = 0
    for rec in last_runs(state_dir)[-10:]:
        if not rec.get("dry_run") and rec.get("calls"):
            used = (rec.get("usage") or {}).get("added")
            added += int(used) if isinstance(used, int | float) else 0
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
