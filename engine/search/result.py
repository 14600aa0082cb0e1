"""A search's answer as values: one `Result` a row, one `SearchResponse` for the whole answer (SPEC §7).

The rooms that search (the lexical searcher, the hybrid fusion, the confidence model) pass these values to
one another; the answer becomes JSON only where it leaves the engine (`to_json`: the MCP tools, the `/v1`
routes, the CLI's `--json`). A field that only some answers carry (`entity`, `explain`, `cosine`, `floor`,
...) is left out of the JSON while it is unset, so the JSON holds the keys it always held.

A row may be deferred: its best section and snippet are cut only when it is shown (`Result.cut`, a `Cut`),
and a hybrid candidate may be short until then (scores and penalty only; `rows.complete` fills the rest).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from typing import Final

from agentmd.engine.index.fulltext import Hit, HitList, SearchIndex
from agentmd.engine.search import sections


class Unset(enum.Enum):
    """A row field the answer does not carry (left out of its JSON), where None is a value it may carry."""

    UNSET = "unset"


UNSET: Final = Unset.UNSET

Explain = Mapping[str, object]  # the `explain` trace: free-form diagnostics, shown as they are


class Cut:
    """A deferred row's cutter of its best section and snippet (`rows.fill` calls it), which keeps the hit its
    search found, so the note's terms are read from that hit (`terms`) rather than looked up again."""

    __slots__ = ("_cut", "_found", "_index", "_words", "hit", "nearness", "penalties")

    def __init__(
        self,
        index: SearchIndex,
        found: HitList,
        hit: Hit,
        cut: Callable[[], tuple[str | None, str]] | None = None,
        words: list[str] | None = None,
        penalties: list[tuple[str, float]] | None = None,
        nearness: Mapping[str, float] | None = None,
    ) -> None:
        """`cut` cuts the row's section and snippet; without it, the note's best section for `words` is cut,
        the note's terms read from the hit first, since the row's confidence asks for them next. `penalties`:
        the multipliers of a short row (a hybrid candidate), which `rows.complete` names in the row.
        `nearness`: the dense arm's cosine of each of the note's sections, which chooses between sections that
        hold the query's words equally (`sections.best`)."""
        self._index, self._found, self.hit, self._cut, self._words = index, found, hit, cut, words
        self.penalties, self.nearness = penalties, nearness

    def whole(self) -> Cut:
        """The same cutter for the row made whole (no longer short)."""
        return Cut(self._index, self._found, self.hit, self._cut, self._words, nearness=self.nearness)

    def near(self, nearness: Mapping[str, float]) -> Cut:
        """The same cutter, choosing between equal sections by the dense arm's cosines."""
        return Cut(self._index, self._found, self.hit, self._cut, self._words, self.penalties, nearness)

    def __call__(self) -> tuple[str | None, str]:
        if self._cut is not None:
            return self._cut()
        self._index.note_terms(self.hit.path, (self.hit, self._found))
        text = self._found.text_of(self.hit)
        return sections.best(self._index, self._found, self.hit.path, text, self._words or [], 1, self.nearness)[0]

    def terms(self) -> tuple[Container[str], frozenset[str]]:
        """The note's terms and its title's (`SearchIndex.note_terms`), read from the hit."""
        return self._index.note_terms(self.hit.path, (self.hit, self._found))


@dataclass(frozen=True, slots=True)
class Result:
    """One result row: a note, or one section of it (`path` is `note#Heading` then)."""

    path: str
    note: str
    score: float  # the ranking score (the arms fused, times the penalty): orders the rows, shown only in `explain`
    raw_score: float
    penalty: float
    section: str | None = None
    title: str | None = None
    penalties: tuple[str, ...] = ()  # the names of the multipliers below 1.0 that lowered the score
    captured: str | None = None
    captured_source: str | None = None
    wall: str | None = None
    trust: str | None = None
    status: str | None = None
    snippet: str = ""
    entity: str | None = None  # the entity URI whose page this note is (a row the query names outright)
    explain: Explain | None = None
    name: str | None = None  # the kind of name the query gives the note: title, file name, alias, heading
    name_within: str | None = None  # the words of a longer query that name the note
    cosine: float | Unset | None = UNSET  # a hybrid row: its best chunk's cosine (None: the note has no vectors)
    word_share: float | None = None
    arms: tuple[str, ...] | None = None  # a hybrid answer's row: the arms that found it
    confidence: float | None = None
    cut: Cut | None = field(default=None, compare=False, repr=False)  # a deferred row's cutter (not in JSON)

    def to_json(self) -> dict[str, object]:
        """The row as its JSON object. Its `score` is the calibrated confidence (0 to 1, the same scale in every
        mode and vault; None only for a row that never went through the confidence step, inside the engine), also
        given as `confidence`; in an answer's list, `score` is capped by the rows above (`shown_scores`). The
        ranking's own numbers (the arms' fused score and the score before the multipliers), which order the rows
        but mean nothing across modes, are in `explain` as `rank_score` and `raw_score` when asked to explain."""
        out: dict[str, object] = {
            "path": self.path,
            "note": self.note,
            "section": self.section,
            "title": self.title,
            "score": self.confidence,
            "penalty": self.penalty,
            "penalties": list(self.penalties),
            "captured": self.captured,
            "captured_source": self.captured_source,
            "wall": self.wall,
            "trust": self.trust,
            "status": self.status,
            "snippet": self.snippet,
        }
        if self.entity is not None:
            out["entity"] = self.entity
        if self.explain is not None:
            out["explain"] = {**self.explain, "rank_score": self.score, "raw_score": self.raw_score}
        if self.name is not None:
            out["name"] = self.name
        if self.name_within is not None:
            out["name_within"] = self.name_within
        if not isinstance(self.cosine, Unset):
            out["cosine"] = self.cosine
        if self.word_share is not None:
            out["word_share"] = self.word_share
        if self.arms is not None:
            out["arms"] = list(self.arms)
        if self.confidence is not None:
            out["confidence"] = self.confidence  # the row's own; `score` is capped by the rows above (shown_scores)
        return out


def shown_scores(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """The rows with each `score` no higher than the score of the row above it, so the scores a person reads
    fall as the rows do. The rows are ranked by the fused score, which puts the answer first more often than the
    confidence alone would (re-ranking by confidence cost MRR: bench/RESULTS.md), so a lower row can be the more
    confident one; its `confidence` keeps its own value, which the recall hook and the floors read."""
    ceiling: float | None = None
    for row in rows:
        sure = row.get("score")
        if not isinstance(sure, float | int):
            continue
        if ceiling is not None and sure > ceiling:
            row["score"] = ceiling
        else:
            ceiling = float(sure)
    return rows


@dataclass(frozen=True, slots=True)
class DenseUse:
    """Whether the dense arm took part in a hybrid answer: the fusion rule and the vectors' coverage when it
    did, the reason when it did not."""

    used: bool
    rule: str | None = None
    coverage: float | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, object]:
        if self.used:
            return {"used": True, "rule": self.rule, "coverage": self.coverage}
        return {"used": False, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Miss:
    """The closest result below the confidence floor, named when the floor left nothing."""

    note: str
    title: str | None
    confidence: float | None

    def to_json(self) -> dict[str, object]:
        return {"note": self.note, "title": self.title, "confidence": self.confidence}


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """One search's answer: its rows, best first, and what the search says about them."""

    query: str
    mode: str
    results: tuple[Result, ...]
    note: str | None  # what a person should know: walls that hid matches, no match, a partial dense arm
    matched: int  # notes that matched before the limit
    archived_hidden: int
    superseded_hidden: int
    staged_hidden: int
    dense: DenseUse | None = None  # a hybrid answer: whether the dense arm took part
    floor: float | None = None  # the confidence floor applied (None: none applied yet)
    below_floor: int | None = None  # notes the floor left out
    closest_miss: Miss | None = None
    index_stale: bool | None = None  # the daemon's answer: whether its index is still being built
    recall: Mapping[str, object] | None = None  # the recall hook's candidates, when it asked (engine/search/recall.py)

    def to_json(self) -> dict[str, object]:
        """The answer as its JSON object (the MCP tool's output, the `/v1/search` body, `agentmd search --json`)."""
        out: dict[str, object] = {
            "query": self.query,
            "mode": self.mode,
            "results": shown_scores([r.to_json() for r in self.results]),
            "note": self.note,
            "matched": self.matched,
            "archived_hidden": self.archived_hidden,
            "superseded_hidden": self.superseded_hidden,
            "staged_hidden": self.staged_hidden,
        }
        if self.dense is not None:
            out["dense"] = self.dense.to_json()
        if self.floor is not None:
            out["floor"] = self.floor
        if self.below_floor is not None:
            out["below_floor"] = self.below_floor
        if self.closest_miss is not None:
            out["closest_miss"] = self.closest_miss.to_json()
        if self.index_stale is not None:
            out["index_stale"] = self.index_stale
        if self.recall is not None:
            out["recall"] = self.recall
        return out
