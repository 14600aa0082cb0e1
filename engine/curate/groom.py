"""Groom: deterministic detectors propose, the owner reviews the plan, `--apply` carries it out in one commit.

The detectors, in the order they claim a note (a note gets at most one proposal):
- duplicate: the same text (whitespace folded) twice within one space; the oldest note (captured, then path)
  is kept, the others are retired;
- near-duplicate: the same title within one space and at least 80 % of the same words; the oldest is kept;
- status-snapshot: a note made mostly of status lines (`STATUS:`, shipped / merged / deployed, date-led lines);
  a short note needs a `STATUS:` marker;
- todo-list: a finished to-do list, a note that is nothing but checkbox items, every one done or cancelled (a
  list with an open item is someone's work in progress, as in a vault kept with the Tasks plugin);
- stale-status: a note about status (a `STATUS:` line, or "status" in its title or a heading) whose newest date
  in the text is older than the stale age (14 days by default);
- split: an over-long note of several stories (at least 6,000 bytes and three `##` sections outside code),
  split at those headings into children that concatenate back to the parent's body byte for byte.
Records (the contract's `record_kinds`), pinned notes, progress logs and notes with broken frontmatter are
never proposed. No model is asked anything by these detectors. One more kind of proposal is added to a plan
only on request (`agentmd groom --propose --restated`, engine/enrich/restated.py): restated, a rule stated twice
that the model CLI judged the same rule, merged into the newer note (engine/curate/merge.py).

The plan carries the content hash of every note it read; applying it is refused as stale when a note one of
its proposals touches (the note, and the one it keeps or merges into) changed since, and names that note. Notes
written since that no proposal touches (the morning note, a self-probe, a capture) leave the plan standing.
Applying never rewrites content: retirements are frontmatter edits, and a split writes children whose bodies are
exact slices of the parent's body, while the parent keeps every byte and is walled as superseded (`split_into`).
`--split-revert` walls the children and gives the parent back exactly the bytes it had.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict

from agentmd.engine.curate.actions import read_frontmatter, stamp
from agentmd.engine.curate.merge import merged_texts
from agentmd.engine.curate.steps import Edit, Step, digest
from agentmd.engine.errors import AgentmdError
from agentmd.engine.index.catalog import Catalog
from agentmd.rules import Contract
from agentmd.vault_schema import (
    Note,
    code_lines,
    is_progress_log,
    parse_note,
    render_note,
    split_frontmatter,
    target_key,
    update_frontmatter,
)

SCHEMA_VERSION = 1
STALE_AGE = dt.timedelta(days=14)
SPLIT_MIN_BYTES = 6000
SPLIT_MIN_SECTIONS = 3
SPLIT_MIN_SEGMENT = 200
NEAR_DUPLICATE = 0.8
RECORD_TYPES = frozenset({"decision", "adr", "decision-record"})
RECORD_FIELD_WORDS = 4  # `## Status` over one short line ("Accepted", "Superseded by ADR-12") is a field
PLAN_MAX = 100  # proposals in one plan, oldest notes first: a plan a person can read; the rest come next time
DETECTORS = ("duplicate", "near-duplicate", "status-snapshot", "todo-list", "stale-status", "split", "restated")

_STATUS_LINE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:STATUS:|\*\*STATUS\*\*|.*\b(?:SHIPPED|MERGED|DEPLOYED)\b|.*\bmerged (?:and|&) deployed\b|"
    r"\d{4}-\d{2}-\d{2}\b)",
)
_TODO = re.compile(r"^\s*[-*+]\s+\[([ xX/-])\]\s+\S")
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Read:
    path: str
    data: bytes
    note: Note
    space: str | None


def snapshot_hash(rows: Iterable[tuple[str, str]]) -> str:
    """One hash over (path, content hash) of the notes read, in path order."""
    h = hashlib.sha256()
    for path, content in sorted(rows):
        h.update(f"{path}\0{content}\n".encode())
    return h.hexdigest()


def eligible(r: Read, contract: Contract) -> bool:
    """Whether a detector may propose anything for the note (see the module docstring)."""
    fm = r.note.frontmatter
    kind = fm.get("kind") if isinstance(fm.get("kind"), str) else r.note.type
    return not (
        r.note.frontmatter_error
        or r.note.decode_error
        or r.note.is_probe
        or contract.is_record_kind(kind)
        or contract.is_record_kind(r.note.type)
        or (r.note.lifecycle or "").lower() == "pinned"
        or is_progress_log(r.path)
        or fm.get("split_into")
    )


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def is_status_snapshot(text: str) -> bool:
    lines = _lines(text)
    if not lines:
        return False
    hits = sum(1 for ln in lines if _STATUS_LINE.match(ln))
    if len(lines) < 3:
        return any("STATUS:" in ln for ln in lines) and hits == len(lines)
    return hits * 10 >= len(lines) * 6


def is_todo_list(text: str) -> bool:
    """Nothing but checkbox items, each one done (`x`) or cancelled (`-`)."""
    lines = _lines(text)
    marks = [m.group(1) for ln in lines if (m := _TODO.match(ln))]
    return len(lines) >= 2 and len(marks) == len(lines) and all(mark in "xX-" for mark in marks)


def newest_date(text: str) -> dt.date | None:
    best = None
    for y, m, d in _DATE.findall(text):
        try:
            day = dt.date(int(y), int(m), int(d))
        except ValueError:
            continue
        best = day if best is None or day > best else best
    return best


def is_about_status(note: Note) -> bool:
    """A note that reports the state of something at a moment: a `STATUS:` line, "status" in its title, or a
    status heading over a report. A record with a `Status` field of its own (a decision record's `## Status`
    followed by `Accepted`, a note typed as a decision) is durable, not a report."""
    if str(note.frontmatter.get("type") or "").lower() in RECORD_TYPES:
        return False
    if "STATUS:" in note.text or "status" in note.title.lower():
        return True
    lines = note.text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#") and "status" in line.lower():
            section = []
            for nxt in lines[i + 1 :]:
                if nxt.startswith("#"):
                    break
                if nxt.strip():
                    section.append(nxt)
            if not (len(section) == 1 and len(section[0].split()) <= RECORD_FIELD_WORDS):
                return True  # a report under the heading, not one word of a record's field
    return False


def split_points(body: str) -> list[int]:
    """Offsets in `body` where a child starts: `##` headings outside fenced code, runts merged into the
    neighbour before them. The first child starts at 0. Fewer than two children: no split."""
    offsets, pos = [], 0
    for line, in_code in code_lines(body):
        if not in_code and line.startswith("## "):
            offsets.append(pos)
        pos += len(line.encode("utf-8")) + 1  # the line and its newline
    if len(offsets) < SPLIT_MIN_SECTIONS:
        return []
    raw = body.encode("utf-8")
    cuts = [0] + [o for o in offsets if o > 0]
    kept = [0]
    for i, start in enumerate(cuts[1:], 1):
        end = cuts[i + 1] if i + 1 < len(cuts) else len(raw)
        if len(raw[start:end].strip()) >= SPLIT_MIN_SEGMENT and len(raw[kept[-1] : start].strip()) >= SPLIT_MIN_SEGMENT:
            kept.append(start)
    return kept if len(kept) >= 2 else []


def slices(body: str, points: Sequence[int]) -> list[str]:
    raw = body.encode("utf-8")
    ends = [*points[1:], len(raw)]
    return [raw[a:b].decode("utf-8") for a, b in zip(points, ends, strict=True)]


def read_notes(vault: Path, catalog: Catalog, contract: Contract) -> tuple[list[Read], str]:
    """Every note no wall hides, read from disk (each with its content hash, `Read.digest`), and the snapshot
    hash of what was read."""
    reads, seen = [], []
    for path, _captured, _status, _hash, _flags in catalog.review_rows():
        try:
            data = (vault / path).read_bytes()
        except OSError:
            continue
        seen.append((path, digest(data)))
        note = parse_note(path, data, 0, link_convention=contract.link_convention)
        reads.append(Read(path, data, note, contract.space_of(path)))
    return reads, snapshot_hash(seen)


class Proposal(TypedDict):
    """One proposal of a plan: a detector's finding on one note and what applying it does."""

    detector: str
    path: str
    reason: str
    action: str  # retire | split | merge
    keep: NotRequired[str]  # the note that stays: a duplicate's older one, a restated rule's newer one
    offsets: NotRequired[list[int]]  # where a split cuts the body
    similarity: NotRequired[float]  # a restated rule's: how near in meaning the two notes are


class GroomPlan(TypedDict):
    """A grooming plan as `agentmd groom --propose` writes it and `--apply` reads it back."""

    schema_version: int
    snapshot_hash: str
    read: dict[str, str]  # the content hash of each note read, by path: what applying checks
    created: str
    notes_read: int
    proposals: list[Proposal]
    stats: dict[str, int]
    held_back: int  # proposals beyond PLAN_MAX, proposed again once these are applied
    restated: NotRequired[dict[str, object]]  # with --restated: what was asked to find restated rules


def propose(
    vault: Path,
    catalog: Catalog,
    contract: Contract,
    *,
    now: dt.datetime | None = None,
    stale_age: dt.timedelta = STALE_AGE,
) -> GroomPlan:
    """The plan: every proposal with its reason, the snapshot hash and counts per detector."""
    now = now or dt.datetime.now(dt.UTC)
    reads, snap = read_notes(vault, catalog, contract)
    notes = sorted((r for r in reads if eligible(r, contract)), key=lambda r: (r.note.captured, r.path))
    proposals: list[Proposal] = []
    claimed: set[str] = set()

    def claim(
        r: Read, detector: str, reason: str, action: str, *, keep: str | None = None, offsets: list[int] | None = None
    ) -> None:
        claimed.add(r.path)
        proposal: Proposal = {"detector": detector, "path": r.path, "reason": reason, "action": action}
        if keep is not None:
            proposal["keep"] = keep
        if offsets is not None:
            proposal["offsets"] = offsets
        proposals.append(proposal)

    same_text: dict[tuple[str | None, str], list[Read]] = {}
    for r in notes:
        text = " ".join(r.note.text.split())
        if len(text) >= 20:
            same_text.setdefault((r.space, hashlib.sha256(text.encode("utf-8")).hexdigest()), []).append(r)
    for group in (g for g in same_text.values() if len(g) > 1):
        # the oldest is kept; of notes as old, the one most linked to (the original others point at, not a copy)
        inbound = {r.path: len(catalog.links_with_keys([target_key(r.path)])) for r in group}
        keep = min(group, key=lambda r: (r.note.captured, -inbound[r.path], r.path))
        for r in group:
            if r is not keep:
                why = "older" if keep.note.captured < r.note.captured else "as old and more linked to"
                claim(
                    r, "duplicate", f"the same text as {keep.path}, which is {why} and kept", "retire", keep=keep.path
                )
    by_title: dict[tuple[str | None, str], list[Read]] = {}
    for r in notes:
        if r.path not in claimed:
            by_title.setdefault((r.space, r.note.title.casefold()), []).append(r)
    for group in by_title.values():
        kept: list[tuple[Read, set[str]]] = []
        for r in group:
            words = _words(r.note.text)
            match = next(
                (k for k, kw in kept if words and kw and len(words & kw) / len(words | kw) >= NEAR_DUPLICATE), None
            )
            if match is None:
                kept.append((r, words))
            else:
                claim(
                    r,
                    "near-duplicate",
                    f"the same title as {match.path} and most of its words",
                    action="retire",
                    keep=match.path,
                )
    for r in notes:
        if r.path in claimed:
            continue
        text = r.note.text
        if is_status_snapshot(text):
            claim(r, "status-snapshot", "a snapshot of status lines, not durable knowledge", action="retire")
        elif is_todo_list(text):
            claim(r, "todo-list", "a finished to-do list: every item done or cancelled", action="retire")
        elif is_about_status(r.note) and (day := newest_date(text)) and now.date() - day > stale_age:
            claim(r, "stale-status", f"a status note whose newest date is {day.isoformat()}", action="retire")
        elif len(r.data) >= SPLIT_MIN_BYTES and (points := split_points(text)):
            claim(r, "split", f"{len(points)} stories in one over-long note", action="split", offsets=points)
    stats = {d: sum(1 for p in proposals if p["detector"] == d) for d in DETECTORS}
    held_back = max(0, len(proposals) - PLAN_MAX)
    proposals = proposals[:PLAN_MAX]
    return {
        "schema_version": SCHEMA_VERSION,
        "snapshot_hash": snap,
        "read": {r.path: digest(r.data) for r in reads},
        "created": stamp(now),
        "notes_read": len(reads),
        "proposals": proposals,
        "stats": stats,
        "held_back": held_back,
    }


def add_proposals(plan: GroomPlan, proposals: Sequence[Proposal]) -> None:
    """Adds proposals a later pass made (restated rules) to `plan`, within PLAN_MAX; the rest are counted as held
    back, proposed again next time."""
    room = max(0, PLAN_MAX - len(plan["proposals"]))
    plan["proposals"] = [*plan["proposals"], *proposals[:room]]
    plan["held_back"] = int(plan.get("held_back") or 0) + max(0, len(proposals) - room)
    for p in proposals:
        plan["stats"][p["detector"]] = plan["stats"].get(p["detector"], 0) + 1


class StalePlan(AgentmdError):
    """The notes changed since the plan was made."""


def _body_of(text: str) -> tuple[str, str]:
    """(everything before the body, the body) of a note's text."""
    split = split_frontmatter(text)
    if split.yaml_text is None:
        return "", text
    return text[: len(text) - len(split.body)], split.body


def apply_plan(
    vault: Path, catalog: Catalog, contract: Contract, plan: GroomPlan, *, now: dt.datetime | None = None
) -> tuple[Step, list[dict[str, object]]]:
    """The one step that carries out `plan` (read back from its file, so read forgivingly), refused with
    `StalePlan` when its snapshot no longer holds."""
    if plan.get("schema_version") != SCHEMA_VERSION:
        raise StalePlan(f"the plan is of schema {plan.get('schema_version')}; propose a new one")
    _stale_since(vault, catalog, contract, plan)
    when = stamp(now or dt.datetime.now(dt.UTC))
    edits: list[Edit] = []
    done: list[dict[str, object]] = []
    for p in plan.get("proposals", []):
        path = str(p["path"])
        data = (vault / path).read_bytes()
        text = data.decode("utf-8")
        if p.get("action") == "retire":
            reason = f"groom:{p['detector']}" + (f" (kept {p['keep']})" if p.get("keep") else "")
            new = update_frontmatter(text, {"lifecycle": "archived", "retired_reason": reason, "retired_at": when})
            edits.append(Edit(path, new, digest(data)))
            done.append({"path": path, "action": "retire", "reason": reason})
        elif p.get("action") == "split":
            children, parent_edit = _split(vault, path, text, data, [int(o) for o in p["offsets"]], when)
            edits.extend([*children, parent_edit])
            done.append({"path": path, "action": "split", "children": [c.path for c in children]})
        elif p.get("action") == "merge":
            keep = str(p["keep"])
            kept = (vault / keep).read_bytes()
            reason = f"groom:{p['detector']} (merged into {keep})"
            older, newer = merged_texts(
                path,
                text,
                keep,
                kept.decode("utf-8"),
                when=when,
                reason=reason,
                link_convention=contract.link_convention,
            )
            edits += [Edit(path, older, digest(data)), Edit(keep, newer, digest(kept))]
            done.append({"path": path, "action": "merge", "into": keep, "reason": reason})
    return Step("groom", f"groom {len(done)} proposal(s)", tuple(edits)), done


def _stale_since(vault: Path, catalog: Catalog, contract: Contract, plan: GroomPlan) -> None:
    """Refuse (`StalePlan`) a plan a note of whose proposals (the note, and the one it keeps or merges into)
    changed since it was read, naming the notes; a plan without the hashes of its notes (an older one) is
    refused when any note of the vault changed."""
    read = plan.get("read")
    if not isinstance(read, dict):
        _reads, snap = read_notes(vault, catalog, contract)
        if snap != plan.get("snapshot_hash"):
            raise StalePlan("the vault changed since the plan was made; run `agentmd groom --propose` again")
        return
    touched = sorted({str(p[k]) for p in plan.get("proposals", []) for k in ("path", "keep") if p.get(k)})
    changed = []
    for path in touched:
        try:
            now = digest((vault / path).read_bytes())
        except OSError:
            now = None
        if now is None or read.get(path) != now:
            changed.append(path)
    if changed:
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        raise StalePlan(f"{shown} changed since the plan was made; run `agentmd groom --propose` again")


def _split(vault: Path, path: str, text: str, data: bytes, offsets: list[int], when: str) -> tuple[list[Edit], Edit]:
    _head, body = _body_of(text)
    pieces = slices(body, offsets)
    if "".join(pieces) != body:  # never: the slices are cut from the body itself; fail closed all the same
        raise StalePlan(f"the split of {path} would not concatenate back to it; nothing was written")
    stem = path[:-3] if path.endswith(".md") else path
    fm = read_frontmatter(text) or {}
    children = []
    for i, piece in enumerate(pieces, 1):
        heading = next((ln[3:].strip() for ln in piece.splitlines() if ln.startswith("## ")), None)
        fields = {
            "title": f"{fm.get('title') or Path(stem).name} ({heading or i})"[:200],
            "status": fm.get("status"),
            "lifecycle": fm.get("lifecycle"),
            "type": fm.get("type"),
            "project": fm.get("project"),
            "split_from": path,
            "split_part": i,
        }
        child = f"{stem}.part-{i}.md"
        if (vault / child).exists():
            raise StalePlan(f"{child} exists already; nothing was written")
        children.append(Edit(child, _exact(fields, piece), None))
    parent = update_frontmatter(
        text, {"superseded_by": children[0].path, "split_into": [c.path for c in children], "split_at": when}
    )
    return children, Edit(path, parent, digest(data))


def _exact(fields: dict[str, object], piece: str) -> str:
    """A child note whose body is exactly `piece` (no newline added)."""
    head = render_note(fields, "")
    head = head if head.endswith("---\n") else head.rstrip("\n") + "\n"
    return head + piece


def child_body(text: str) -> str:
    return _body_of(text)[1]


def plan_split_revert(vault: Path, catalog: Catalog, now: dt.datetime | None = None) -> tuple[Step, list[dict]]:
    """Give every split parent back its bytes and wall its children, where the children still hold it whole."""
    when = stamp(now or dt.datetime.now(dt.UTC))
    edits: list[Edit] = []
    report: list[dict[str, object]] = []
    for path in catalog.paths():
        try:
            data = (vault / path).read_bytes()
        except OSError:
            continue
        if b"split_into:" not in data:
            continue
        text = data.decode("utf-8", "replace")
        fm = read_frontmatter(text) or {}
        children = fm.get("split_into")
        if not isinstance(children, list) or not children:
            continue
        bodies, child_edits = [], []
        for child in children:
            try:
                cdata = (vault / str(child)).read_bytes()
            except OSError:
                break
            ctext = cdata.decode("utf-8", "replace")
            cfm = read_frontmatter(ctext) or {}
            if str(cfm.get("lifecycle", "")).lower() == "archived":
                break
            bodies.append(child_body(ctext))
            reason = f"groom-split-revert:{path}"
            new = update_frontmatter(ctext, {"lifecycle": "archived", "retired_reason": reason, "retired_at": when})
            child_edits.append(Edit(str(child), new, digest(cdata)))
        if len(bodies) != len(children) or "".join(bodies) != _body_of(text)[1]:
            report.append({"path": path, "skipped": "its children changed or are gone; revert it by hand"})
            continue
        restored = update_frontmatter(text, {}, ["superseded_by", "split_into", "split_at"])
        edits.extend([*child_edits, Edit(path, restored, digest(data))])
        report.append({"path": path, "children": [str(c) for c in children]})
    return Step("groom", f"revert {len(report)} split(s)", tuple(edits)), report
