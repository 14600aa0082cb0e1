"""The queue baseline: the line between the backlog a vault came with and what has waited since.

A vault adopted with years of unfiled notes would page on its first day and every day after if every waiting
note were held to the queue's thresholds. So the first status computed once the vault is indexed (by the
daemon after its first pass, or by `agentmd status` run from disk) records a baseline in the state folder:
the moment, and how many notes waited then. Notes captured before that moment are the inherited backlog:
counted, their oldest age shown, never red. Notes captured after it are held to the thresholds, however
deep the backlog is.

A note's date is its `captured` as the catalog keeps it (the frontmatter field, else the commit that added
the note, else the file's first modification time), the same date the queue sorts and ages by. A sync tool
that rewrites modification times does not move a note across the line once the catalog has dated it.

`queue_baseline = "2026-11-01"` in the config file (a date, or a time with an offset) moves the line by hand;
the recorded file stays as it was. Deleting the file records it again at the next status.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentmd.engine.fsutil import read_json, temp_name
from agentmd.engine.times import parse_utc, stamp

BASELINE_FILE = "queue-baseline.json"

log = logging.getLogger("agentmd.queue")


@dataclass(frozen=True)
class Baseline:
    """The line in effect: `at`, and where it comes from: `recorded` (the state file), `config` (the config
    file's `queue_baseline`) or `pending` (nothing recorded yet: the index was never built, so every note
    waiting now counts as inherited until it is)."""

    at: dt.datetime
    source: str
    recorded_at: dt.datetime | None = None  # the state file's moment, when there is one
    recorded_count: int | None = None  # notes waiting when it was recorded


@dataclass(frozen=True)
class QueueSplit:
    """The queue cut at the baseline: `measured` is what the thresholds read; the backlog is counted."""

    baseline: Baseline
    total: int
    measured: list[tuple[str, str]]  # (path, captured) captured at or after the baseline, or undated
    inherited: int
    inherited_oldest: dt.datetime | None  # the backlog's oldest capture


def baseline_path(state_dir: Path) -> Path:
    return state_dir / BASELINE_FILE


def read_recorded(state_dir: Path) -> tuple[dt.datetime, int | None] | None:
    """The recorded baseline's moment and count, or None when there is none (or it cannot be read: a torn or
    hand-broken file reads as absent and is recorded again). A file from before counts were kept lists the
    paths that waited then; their number is its count."""
    data = read_json(baseline_path(state_dir))
    if data is None:
        return None
    at = parse_utc(data.get("recorded_at"))
    if at is None:
        return None
    count = data.get("count")
    if not isinstance(count, int) or isinstance(count, bool):
        paths = data.get("paths")
        count = len(paths) if isinstance(paths, list) else None
    return at, count


def record(state_dir: Path, now: dt.datetime, waiting: int) -> tuple[dt.datetime, int | None]:
    """Record the baseline at `now` with `waiting` notes in the queue, unless one is already recorded (another
    process may have recorded it a moment before: the first file stays); the baseline in the file."""
    path = baseline_path(state_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(temp_name(path.name))
    try:  # (the write inside: a full disk fails it after the file is made, and the finally removes it)
        tmp.write_text(json.dumps({"recorded_at": stamp(now), "count": waiting}, indent=1, sort_keys=True), "utf-8")
        os.link(tmp, path)  # creates the file only where none is: two first runs cannot overwrite each other
        log.info("queue baseline recorded at %s with %d notes waiting (%s)", stamp(now), waiting, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return read_recorded(state_dir) or (now, waiting)


def resolve_baseline(
    state_dir: Path,
    now: dt.datetime,
    waiting: int,
    *,
    override: dt.datetime | None = None,
    may_record: bool = True,
) -> Baseline:
    """The baseline in effect. Records one when none is and `may_record` (the vault has been indexed, so the
    count is real, and the caller is allowed to write the state folder)."""
    recorded = read_recorded(state_dir)
    if recorded is None and may_record:
        recorded = record(state_dir, now, waiting)
    at, count = recorded if recorded is not None else (None, None)
    if override is not None:
        return Baseline(override, "config", at, count)
    if at is None:
        return Baseline(now, "pending")
    return Baseline(at, "recorded", at, count)


def split(waiting: Sequence[tuple[str, str]], baseline: Baseline) -> QueueSplit:
    """Cut `waiting` (path, captured) at the baseline: a note captured before it is inherited; one captured at
    or after it, or with no readable date, is measured."""
    measured: list[tuple[str, str]] = []
    inherited = 0
    oldest: dt.datetime | None = None
    for path, captured in waiting:
        at = parse_utc(captured)
        if at is not None and at < baseline.at:
            inherited += 1
            oldest = at if oldest is None or at < oldest else oldest
        else:
            measured.append((path, captured))
    return QueueSplit(baseline, len(waiting), measured, inherited, oldest)
