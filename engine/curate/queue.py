"""The review queue: every note that waits for the owner's judgment, oldest first, each with why it is there.

A note waits when it is
- an unfiled capture (`status: unfiled`: no type, or a type without a why);
- an ingested note (`source: ingest:<file>`, written unfiled for review);
- a phone clip without any status (the clipper wrote it, nobody has looked at it yet);
- a low-confidence filing: filed, but its `filing_confidence` is `low` or a number under the contract's
  `thresholds.low_confidence`, and nobody has confirmed it (a `confirmed:` record ends the wait);
- a lesson the model drew from recurring outcomes (`source: lessons`, engine/enrich/lessons.py), until the owner
  confirms or retires it;
- a conflict sibling (`status: conflict`): a version of a note kept beside it (engine/git/conflicts.py), another
  machine's that a sync could not merge or the one an undo would have written over a later edit, until the
  owner keeps what they want (`agentmd resolve`).
Notes behind a wall (archived, superseded, staged) and the self-probe's notes never wait.

The catalog gives the candidates and their content hash; the few frontmatter fields the catalog does not keep
(`source`, `filing_confidence`) are read from the note and remembered per content hash in the state folder, so
`agentmd status` reads again only the notes that changed since the last look.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmd.engine.fsutil import atomic_write
from agentmd.engine.git.conflicts import sibling_machine
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.times import parse_utc
from agentmd.rules import Contract
from agentmd.vault_schema import YamlRefused, load_yaml, split_frontmatter

CACHE_FILE = "queue-fields.json"
ORIGINS = ("capture", "phone", "ingest", "sync", "revert")
LESSON_SOURCE = "lessons"  # the `source:` of a lesson proposed by engine/enrich/lessons.py


@dataclass(frozen=True)
class QueueItem:
    path: str
    captured: str
    reason: str  # unfiled | ingested | phone-clip | lesson | low-confidence | conflict
    why: str  # the reason in words
    origin: str  # capture | phone | ingest | sync
    source: str | None

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "captured": self.captured,
            "reason": self.reason,
            "why": self.why,
            "origin": self.origin,
            "source": self.source,
        }


def _fields(vault: Path, path: str) -> dict[str, object]:
    """`source` and `filing_confidence` as the note's frontmatter gives them, and the reason of its latest review
    flag (`flag`: a phone clip's refused instructions); empty when unreadable."""
    try:
        text = (vault / path).read_bytes().decode("utf-8", "replace")
    except OSError:
        return {}
    split = split_frontmatter(text)
    if split.yaml_text is None:
        return {}
    try:
        fm = load_yaml(split.yaml_text)
    except YamlRefused:
        return {}
    out: dict[str, object] = {}
    for key in ("source", "filing_confidence"):
        value = fm.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            out[key] = value
    if fm.get("confirmed"):
        out["confirmed"] = True
    flags = fm.get("review_flags")
    last = (flags[-1] if flags else None) if isinstance(flags, list) else flags
    if isinstance(last, dict) and isinstance(last.get("reason"), str):
        out["flag"] = last["reason"]
    return out


class FieldCache:
    """The per-note fields the queue needs, keyed by path and checked against the catalog's content hash."""

    def __init__(self, state_dir: Path | None) -> None:
        self.path = state_dir / CACHE_FILE if state_dir else None
        self.entries: dict[str, list[Any]] = {}
        self.dirty = False
        if self.path is not None:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if isinstance(data, dict):
                    self.entries = {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 2}
            except (OSError, ValueError):
                pass

    def get(self, vault: Path, path: str, content_hash: str) -> dict[str, object]:
        hit = self.entries.get(path)
        if hit is not None and hit[0] == content_hash and isinstance(hit[1], dict):
            return hit[1]
        fields = _fields(vault, path)
        self.entries[path] = [content_hash, fields]
        self.dirty = True
        return fields

    def save(self, keep: Iterable[str]) -> None:
        wanted = set(keep)
        if set(self.entries) - wanted:
            self.entries = {k: v for k, v in self.entries.items() if k in wanted}
            self.dirty = True
        if self.path is None or not self.dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(self.entries, sort_keys=True), durable=False)
        except OSError:
            pass  # a cache: the next look reads the notes again (atomic_write leaves no temp file behind)


def _low_confidence(value: Any, threshold: float) -> bool:
    if isinstance(value, str):
        word = value.strip().lower()
        if word == "low":
            return True
        try:
            value = float(word)
        except ValueError:
            return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) < threshold
    return False


def origin_of(path: str, source: str | None, contract: Contract) -> str:
    if source and source.startswith("ingest:"):
        return "ingest"
    if contract.is_phone_path(path) or source == "phone":
        return "phone"
    return "capture"


def review_queue(
    vault: Path,
    catalog: Catalog,
    contract: Contract,
    *,
    state_dir: Path | None = None,
    origins: Iterable[str] = (),
    older_than: dt.timedelta | None = None,
    now: dt.datetime | None = None,
) -> list[QueueItem]:
    """What awaits judgment, oldest first (then by path). `origins` and `older_than` narrow the list."""
    now = now or dt.datetime.now(dt.UTC)
    wanted = set(origins)
    cache = FieldCache(state_dir)
    threshold = float(contract.thresholds.low_confidence)
    items: list[QueueItem] = []
    rows = catalog.review_rows()
    for path, captured, status, content_hash, flags in rows:
        if "probe" in flags:
            continue
        state = (status or "").strip().lower()
        phone = contract.is_phone_path(path)
        fields = cache.get(vault, path, content_hash)
        source = fields.get("source")
        source = str(source) if source is not None else None
        if state == "conflict":
            reason, why = (
                "conflict",
                (
                    "a version of a note kept beside it (another machine's, by a sync, or the one an undo would have "
                    "written over a later edit): compare the two, then `agentmd resolve PATH --keep mine|theirs|both`"
                ),
            )
            made_by = "revert" if sibling_machine(path) == "undo" else "sync"  # an undo's sibling, or a sync's
            item = QueueItem(path, captured, reason, why, made_by, source)
            if (not wanted or made_by in wanted) and (older_than is None or _older(captured, now, older_than)):
                items.append(item)
            continue
        if state == "unfiled":
            if source and source.startswith("ingest:"):
                reason, why = "ingested", f"ingested from {source[len('ingest:') :]}; confirm or retire it"
            elif source == LESSON_SOURCE:
                reason = "lesson"
                why = "a lesson the model drew from notes that recur; read it, then confirm or retire it"
            elif phone:
                reason, why = "phone-clip", "phone clip marked unfiled; file it or retire it"
            else:
                reason, why = "unfiled", "unfiled capture (no type, or a type without a why); confirm or retire it"
        elif phone and not state and fields.get("flag"):
            reason = "phone-clip"
            why = (
                f"phone clip whose instructions were refused: {fields['flag']}; fix them in the note (the next "
                "sweep files it), or file or retire it by hand"
            )
        elif phone and not state:
            reason, why = "phone-clip", "phone clip without a status: nobody has judged it yet"
        elif not fields.get("confirmed") and _low_confidence(fields.get("filing_confidence"), threshold):
            reason = "low-confidence"
            why = (
                f"filed with filing_confidence {fields.get('filing_confidence')!r} (under the contract's "
                f"low_confidence {threshold:g}); confirm the filing or retire it"
            )
        else:
            continue
        item = QueueItem(path, captured, reason, why, origin_of(path, source, contract), source)
        if wanted and item.origin not in wanted:
            continue
        if older_than is not None:
            at = parse_utc(captured)
            if at is None or now - at < older_than:
                continue
        items.append(item)
    cache.save(p for p, *_ in rows)
    return items


def _older(captured: str, now: dt.datetime, age: dt.timedelta) -> bool:
    at = parse_utc(captured)
    return at is not None and now - at >= age


def parse_age(text: str) -> dt.timedelta:
    """`3d`, `12h`, `2w`, `90m` as a duration; raises ValueError otherwise."""
    text = text.strip().lower()
    units = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
    if len(text) < 2 or text[-1] not in units or not text[:-1].isdigit():
        raise ValueError(f"{text!r} is not an age such as 90m, 12h, 3d or 2w")
    return dt.timedelta(seconds=int(text[:-1]) * units[text[-1]])
