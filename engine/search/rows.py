"""Hit assembly: a search's hits made into result rows, each pointing at its best section, a deferred row cut
when it is shown (`fill`), and the rows of the notes the query names put first (engine/search/searcher.py).
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

from agentmd.engine.index.fulltext import FIELD_BOOSTS, Hit, HitList, NameHit, SearchIndex, name_key
from agentmd.engine.search import sections, trust
from agentmd.engine.search.multipliers import note_penalties
from agentmd.engine.search.planning import SearchRequest
from agentmd.rules import Contract
from agentmd.vault_schema import chunk_text, section_text


def best_sections(
    index: SearchIndex, found: HitList, hit: Hit, words: list[str], n: int
) -> list[tuple[str | None, str]]:
    """The note's best `n` sections for the words (engine/search/sections.py)."""
    return sections.best(index, found, hit.path, found.text_of(hit), words, n)


FILL = "_fill"  # a deferred row's cutter of its section and snippet; removed by `fill`


class Cut:
    """A deferred row's cutter of its best section and snippet (called by `fill`), which keeps the hit its
    search found, so the note's terms are read from that hit (`terms`) rather than looked up again."""

    __slots__ = ("_cut", "_found", "_hit", "_index", "_words", "penalties")

    def __init__(
        self,
        index: SearchIndex,
        found: HitList,
        hit: Hit,
        cut: Callable[[], tuple[str | None, str]] | None = None,
        words: list[str] | None = None,
    ) -> None:
        """`cut` cuts the row's section and snippet; without it, the note's best section for `words` is cut
        (`best_sections`), the note's terms read from the hit first, since the row's confidence asks for them next."""
        self._index, self._found, self._hit, self._cut, self._words = index, found, hit, cut, words
        self.penalties: list[tuple[str, float]] | None = None  # set for a short row (see `complete`)

    def __call__(self) -> tuple[str | None, str]:
        if self._cut is not None:
            return self._cut()
        self._index.note_terms(self._hit.path, (self._hit, self._found))
        return best_sections(self._index, self._found, self._hit, self._words or [], 1)[0]

    def terms(self) -> tuple[Container[str], frozenset[str]]:
        """The note's terms and its title's (`SearchIndex.note_terms`), read from the hit."""
        return self._index.note_terms(self._hit.path, (self._hit, self._found))


def row_terms(index: SearchIndex, row: dict[str, Any]) -> tuple[Container[str], frozenset[str]]:
    """The terms of a result row's note and of its title: read from the hit the search found while the row
    is deferred (`Cut`), else looked up (remembered once read)."""
    cut = row.get(FILL)
    if isinstance(cut, Cut):
        return cut.terms()
    return index.note_terms(str(row["note"]))


def cut_for(index: SearchIndex, found: HitList, hit: Hit, terms: list[str]) -> Cut:
    return Cut(index, found, hit, words=terms)


def complete(row: dict[str, Any]) -> dict[str, Any]:
    """Give a short row (a hybrid candidate: note, scores and penalty only) the rest of a result row's
    fields, read from the note's facts; its section and snippet are still left to `fill`. Any other row is
    left as it is."""
    cut = row.get(FILL)
    if isinstance(cut, Cut) and cut.penalties is not None:
        penalties, cut.penalties = cut.penalties, None
        facts = cut._hit.facts
        row.update(
            path=row["note"],
            section=None,
            title=facts.get("title"),
            penalties=[name for name, _m in penalties],
            captured=facts.get("captured"),
            captured_source=facts.get("captured_source"),
            wall=facts.get("wall"),
            **trust.labels(facts),
            snippet="",
        )
    return row


def fill(row: dict[str, Any]) -> dict[str, Any]:
    """Make a deferred row whole (`complete`) and cut its best section and snippet (a row that is not
    deferred is left as it is)."""
    complete(row)
    cut = row.pop(FILL, None)
    if cut is not None:
        heading, snippet = cut()
        row["path"] = row["note"] + (f"#{heading.split(' > ')[-1]}" if heading else "")
        row["section"] = heading
        row["snippet"] = snippet
    return row


def names_first(
    results: list[dict[str, Any]], named: list[dict[str, Any]], cap: int, per_note: int = 1
) -> list[dict[str, Any]]:
    """The rows of the notes the query names first, in their order, each followed by up to `per_note` - 1 of
    that note's other sections, then the rest; cut to `cap`. The lexical search and the hybrid both order
    their results by it."""
    others: dict[str, list[dict[str, Any]]] = {r["note"]: [] for r in named}
    pinned = {r["path"] for r in named}
    rest = []
    for r in results:
        if r["note"] not in others:
            rest.append(r)
        elif r["path"] not in pinned and len(others[r["note"]]) < per_note - 1:
            others[r["note"]].append(r)
    out = [row for n in named for row in (n, *others[n["note"]])]
    return (out + rest)[:cap]


def name_row(
    index: SearchIndex,
    found: HitList,
    named: NameHit,
    lexical: dict[str, Any] | None,
    request: SearchRequest,
    contract: Contract,
    top: float,
    within: str | None = None,
) -> dict[str, Any]:
    """The result row of a note the query names: its lexical row when it has one, else a row of its own,
    marked with the kind of name (`name`); a heading points at its section. Its `score` is at least the
    best lexical score, so the order of the list stays the order of the scores. `within`: the words of the
    query that name it, when they are not the whole query (`name_within` in the row)."""
    hit = named.hit
    text = found.text_of(hit)
    row = dict(lexical) if lexical is not None else None
    if row is None:
        penalties = note_penalties(hit.facts, hit.path, request, contract)
        penalty = 1.0
        for _name, m in penalties:
            penalty *= m
        row = {
            "path": hit.path,
            "note": hit.path,
            "section": None,
            "title": hit.facts.get("title"),
            "score": 0.0,
            "raw_score": 0.0,  # the note is not in the lexical ranking
            "penalty": round(penalty, 6),
            "penalties": [name for name, _m in penalties],
            "captured": hit.facts.get("captured"),
            "captured_source": hit.facts.get("captured_source"),
            "wall": hit.facts.get("wall"),
            "snippet": found.snippet_of(text),
        }
        if request.explain:
            row["explain"] = {
                "mode": request.mode,
                "plan": "name",
                "fields": index.field_scores(request.query.split(), hit.path, FIELD_BOOSTS),
                "multipliers": {name: m for name, m in penalties},
                "fusion_ranks": {},
            }
    was_deferred = row.pop(FILL, None) is not None  # a name row is cut here, pointing at the note or heading
    chunk = None
    if named.kind == "heading":
        key = name_key(within or request.query)
        chunk = next((c for c in chunk_text(text) if c.heading_path and name_key(c.heading_path[-1]) == key), None)
    if chunk is not None:
        heading = chunk.heading_path[-1]
        row["path"] = f"{hit.path}#{heading}"
        row["section"] = " > ".join(chunk.heading_path)
        row["snippet"] = found.snippet_of(section_text(text, heading) or chunk.text)
    elif within is not None:  # a name inside a longer query: the note's best section for the query's words
        if was_deferred or row["section"] is None:
            best, snippet = best_sections(index, found, hit, request.query.split(), 1)[0]
            row["path"] = hit.path + (f"#{best.split(' > ')[-1]}" if best else "")
            row["section"], row["snippet"] = best, snippet
    elif row["section"] is not None or was_deferred:  # the note itself is named: the result points at the note
        row["path"], row["section"] = hit.path, None
        row["snippet"] = found.snippet_of(text)
    row["score"] = round(max(top, float(row["score"])) or named.score * float(row["penalty"]), 6)
    row["name"] = named.kind
    if within is not None:
        row["name_within"] = within
    if request.explain:
        row["explain"] = dict(row.get("explain") or {})
        row["explain"]["name"] = {
            "kind": named.kind,
            "match": "exact" if named.exact else "prefix",
            "lexical_score": round(named.score, 6),
        }
    return row
