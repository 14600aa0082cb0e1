"""The notes that record outcomes, what they name, and the arithmetic bar a recurrence must clear before the
model is asked what it taught (engine/enrich/lessons.py). Nothing here calls a model.

A source is a note that records how something turned out (its type `episode` or `decision`, a project's decision
record, or an `## Outcome`, `Result` or `What happened` section), confirmed (filed, not untrusted), behind no
wall, no record kind, and allowed to leave the machine; a note a lesson already rests on is not read again.
Subjects are what a note names: its tags, its terms in backticks outside code, the notes it links to. A cluster
is the notes that name the same subjects, kept when it clears the bar and no larger cluster holds all its notes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentmd.engine.curate.groom import Read, eligible
from agentmd.engine.enrich.kinds import project_of_record
from agentmd.rules import Contract
from agentmd.vault_schema import code_lines, sections, target_key

LESSON_TYPE = "lesson"
SOURCE = "lessons"  # the `source:` of a proposed lesson: the review queue names it by this
OUTCOME_TYPES = ("episode", "decision")
OUTCOME_HEADINGS = ("outcome", "outcomes", "result", "results", "what happened")
MIN_SOURCES = 3
MIN_SPAN_DAYS = 7
PROMPT_VERSION = "lessons-1"  # the question a cluster is asked (engine/enrich/lessons.py); part of its ledger key

_TICKED = re.compile(r"`([^`\n]{2,40})`")


@dataclass(frozen=True)
class Source:
    path: str
    title: str
    day: str  # the captured date, YYYY-MM-DD
    text: str  # the body
    body_hash: str
    origin: str  # what makes it distinct: its source_url folded, else its path
    project: str

    @property
    def link(self) -> str:
        return f"[[{self.path[:-3] if self.path.endswith('.md') else self.path}]]"


def _lower(value: Any) -> str:
    return value.strip().lower() if isinstance(value, str) else ""


def _fold_url(url: str) -> str:
    url = re.sub(r"^[a-z][a-z0-9+.-]*://", "", url.strip().lower()).split("#", 1)[0]
    return url.removeprefix("www.").rstrip("/")


def records_outcome(r: Read, contract: Contract) -> bool:
    fm = r.note.frontmatter
    if _lower(fm.get("type")) in OUTCOME_TYPES:
        return True
    record = project_of_record(r.path, contract)
    if record is not None and "/decisions/" in r.path:
        return True
    return any(_lower(s.heading) in OUTCOME_HEADINGS for s in sections(r.note.text) if s.heading)


def is_lesson(r: Read) -> bool:
    fm = r.note.frontmatter
    return _lower(fm.get("type")) == LESSON_TYPE or _lower(fm.get("source")) == SOURCE


def consumed_by_lessons(reads: Iterable[Read]) -> set[str]:
    """The notes some lesson already rests on: the targets of every lesson's `consolidated_from`."""
    out: set[str] = set()
    for r in reads:
        if not is_lesson(r):
            continue
        named = r.note.frontmatter.get("consolidated_from")
        for item in named if isinstance(named, list) else [named]:
            if isinstance(item, str) and item.strip():
                out.add(item.strip().strip("[]").split("|", 1)[0].removesuffix(".md"))
    return out


def _confirmed(r: Read) -> bool:
    return _lower(r.note.frontmatter.get("status")) != "unfiled" and r.note.trust != "untrusted"


def outcome_sources(reads: Sequence[Read], contract: Contract) -> tuple[list[Source], int]:
    """The notes that may teach a lesson, and how many outcome notes were left out because they stay local."""
    consumed = consumed_by_lessons(reads)
    out: list[Source] = []
    kept_local = 0
    for r in reads:
        if is_lesson(r) or not eligible(r, contract) or not _confirmed(r) or not records_outcome(r, contract):
            continue
        if contract.kept_local(r.path):
            kept_local += 1
            continue
        if r.path.removesuffix(".md") in consumed:
            continue
        fm = r.note.frontmatter
        url = fm.get("source_url")
        origin = _fold_url(url) if isinstance(url, str) and url.strip() else r.path
        body_hash = hashlib.sha256(r.note.text.encode("utf-8")).hexdigest()
        project = fm.get("project")
        out.append(
            Source(
                r.path,
                " ".join(str(fm.get("title") or r.note.title).split()),
                r.note.captured[:10],
                r.note.text,
                body_hash,
                origin,
                project.strip() if isinstance(project, str) else "",
            )
        )
    return out, kept_local


def subjects_of(r: Read) -> set[str]:
    """What a note names: its tags, its terms in backticks (outside code blocks), the notes it links to."""
    out = {f"#{t.strip().lower()}" for t in r.note.tags if t.strip()}
    for line, in_code in code_lines(r.note.text):
        if not in_code:
            out |= {f"`{m.strip().lower()}`" for m in _TICKED.findall(line) if m.strip()}
    for link in r.note.links:
        if link.target and not link.attachment:
            out.add(f"[[{target_key(link.target)}]]")
    return out


# ------------------------------------------------------------------------------------------------ the bar


def bar(sources: Sequence[Source]) -> str | None:
    """Why these notes do not clear the bar, or None when they do."""
    distinct = {s.origin for s in sources}
    if len(distinct) < MIN_SOURCES:
        return f"{len(distinct)} distinct note(s), {MIN_SOURCES} needed"
    days = sorted({s.day for s in sources})
    try:
        span = (dt.date.fromisoformat(days[-1]) - dt.date.fromisoformat(days[0])).days
    except ValueError:
        return "a note's captured date cannot be read"
    if span < MIN_SPAN_DAYS:
        return f"written within {span} day(s) of each other, {MIN_SPAN_DAYS} needed"
    return None


@dataclass(frozen=True)
class Cluster:
    subjects: tuple[str, ...]
    sources: tuple[Source, ...]  # newest first

    @property
    def key(self) -> str:
        """The ledger key: the bodies of its notes, in a fixed order, and the prompt's version."""
        bodies = hashlib.sha256(":".join(sorted(s.body_hash for s in self.sources)).encode()).hexdigest()
        return f"{bodies}:{PROMPT_VERSION}"

    @property
    def name(self) -> str:
        return ", ".join(self.subjects[:3]) + (f" (+{len(self.subjects) - 3})" if len(self.subjects) > 3 else "")


def clusters(sources: Sequence[Source], reads: Mapping[str, Read]) -> list[Cluster]:
    """The clusters that clear the bar, the largest first (see the module docstring)."""
    named: dict[str, set[str]] = {}
    for s in sources:
        for subject in subjects_of(reads[s.path]):
            named.setdefault(subject, set()).add(s.path)
    by_path = {s.path: s for s in sources}
    groups: dict[frozenset[str], list[str]] = {}
    for subject, paths in named.items():
        if bar([by_path[p] for p in paths]) is None:
            groups.setdefault(frozenset(paths), []).append(subject)
    kept = [g for g in groups if not any(g < other for other in groups)]
    out = [
        Cluster(
            tuple(sorted(groups[g])),
            tuple(sorted((by_path[p] for p in g), key=lambda s: (s.day, s.path), reverse=True)),
        )
        for g in kept
    ]
    return sorted(out, key=lambda c: (-len(c.sources), c.subjects))
