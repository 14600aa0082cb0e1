"""Hit assembly: a search's hits made into result rows, each pointing at its best section, a deferred row cut
when it is shown (`fill`), and the rows of the notes the query names put first (engine/search/searcher.py).
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import replace

from agentmd.engine.index.fulltext import FIELD_BOOSTS, Hit, HitList, NameHit, SearchIndex, name_key
from agentmd.engine.search import sections
from agentmd.engine.search.multipliers import note_penalties
from agentmd.engine.search.planning import SearchRequest
from agentmd.engine.search.result import Cut, Result
from agentmd.rules import Contract
from agentmd.vault_schema import chunk_text, section_text


def best_sections(
    index: SearchIndex, found: HitList, hit: Hit, words: list[str], n: int
) -> list[tuple[str | None, str]]:
    """The note's best `n` sections for the words (engine/search/sections.py)."""
    return sections.best(index, found, hit.path, found.text_of(hit), words, n)


def facts_row(
    hit: Hit,
    *,
    score: float,
    raw_score: float,
    penalty: float,
    penalties: list[tuple[str, float]] | None = None,
    path: str | None = None,
    section: str | None = None,
    snippet: str = "",
    cut: Cut | None = None,
) -> Result:
    """A whole result row for a note: its scores, and the fields read from its facts (title, capture, wall,
    trust tier and status)."""
    facts = hit.facts
    return Result(
        path=hit.path if path is None else path,
        note=hit.path,
        section=section,
        title=facts.get("title"),
        score=score,
        raw_score=raw_score,
        penalty=penalty,
        penalties=tuple(name for name, _m in penalties or ()),
        captured=facts.get("captured"),
        captured_source=facts.get("captured_source"),
        wall=facts.get("wall"),
        trust=facts.get("trust"),
        status=facts.get("status"),
        snippet=snippet,
        cut=cut,
    )


def row_terms(index: SearchIndex, row: Result) -> tuple[Container[str], frozenset[str]]:
    """The terms of a result row's note and of its title: read from the hit the search found while the row
    is deferred (`Cut`), else looked up (remembered once read)."""
    if row.cut is not None:
        return row.cut.terms()
    return index.note_terms(row.note)


def cut_for(index: SearchIndex, found: HitList, hit: Hit, terms: list[str]) -> Cut:
    return Cut(index, found, hit, words=terms)


def complete(row: Result) -> Result:
    """Give a short row (a hybrid candidate: note, scores and penalty only) the rest of a result row's
    fields, read from the note's facts; its section and snippet are still left to `fill`. Any other row is
    returned as it is."""
    cut = row.cut
    if cut is None or cut.penalties is None:
        return row
    return facts_row(
        cut.hit, score=row.score, raw_score=row.raw_score, penalty=row.penalty, penalties=cut.penalties, cut=cut.whole()
    )


def fill(row: Result) -> Result:
    """The deferred row made whole (`complete`), its best section and snippet cut (a row that is not
    deferred is returned as it is)."""
    row = complete(row)
    if row.cut is None:
        return row
    heading, snippet = row.cut()
    path = row.note + (f"#{heading.split(' > ')[-1]}" if heading else "")
    return replace(row, path=path, section=heading, snippet=snippet, cut=None)


def names_first(results: list[Result], named: list[Result], cap: int, per_note: int = 1) -> list[Result]:
    """The rows of the notes the query names first, in their order, each followed by up to `per_note` - 1 of
    that note's other sections, then the rest; cut to `cap`. The lexical search and the hybrid both order
    their results by it."""
    others: dict[str, list[Result]] = {r.note: [] for r in named}
    pinned = {r.path for r in named}
    rest = []
    for r in results:
        if r.note not in others:
            rest.append(r)
        elif r.path not in pinned and len(others[r.note]) < per_note - 1:
            others[r.note].append(r)
    out = [row for n in named for row in (n, *others[n.note])]
    return (out + rest)[:cap]


def name_row(
    index: SearchIndex,
    found: HitList,
    named: NameHit,
    lexical: Result | None,
    request: SearchRequest,
    contract: Contract,
    top: float,
    within: str | None = None,
) -> Result:
    """The result row of a note the query names: its lexical row when it has one, else a row of its own,
    marked with the kind of name (`name`); a heading points at its section. Its `score` is at least the
    best lexical score, so the order of the list stays the order of the scores. `within`: the words of the
    query that name it, when they are not the whole query (`name_within` in the row)."""
    hit = named.hit
    text = found.text_of(hit)
    row = lexical
    if row is None:
        penalties = note_penalties(hit.facts, hit.path, request, contract)
        penalty = 1.0
        for _name, m in penalties:
            penalty *= m
        row = facts_row(
            hit,
            score=0.0,
            raw_score=0.0,  # the note is not in the lexical ranking
            penalty=round(penalty, 6),
            penalties=penalties,
            snippet=found.snippet_of(text),
        )
        if request.explain:
            row = replace(
                row,
                explain={
                    "mode": request.mode,
                    "plan": "name",
                    "fields": index.field_scores(request.query.split(), hit.path, FIELD_BOOSTS),
                    "multipliers": {name: m for name, m in penalties},
                    "fusion_ranks": {},
                },
            )
    was_deferred = row.cut is not None  # a name row is cut here, pointing at the note or heading
    path, section, snippet = row.path, row.section, row.snippet
    heading_path = None
    if named.kind == "heading":
        key = name_key(within or request.query)

        def is_named(heading: str) -> bool:
            return name_key(heading) == key

        parts = sections.split(hit.path, text)
        heading_path = sections.heading_path(parts, is_named)
    if heading_path is not None:
        heading = heading_path[-1]
        path = f"{hit.path}#{heading}"
        section = " > ".join(heading_path)
        shown = section_text(text, heading, parts)
        if not shown:  # an empty section: the text of its first chunk, as its snippet always was
            shown = next(c.text for c in chunk_text(text) if c.heading_path and is_named(c.heading_path[-1]))
        snippet = found.snippet_of(shown)
    elif within is not None:  # a name inside a longer query: the note's best section for the query's words
        if was_deferred or section is None:
            best, snippet = best_sections(index, found, hit, request.query.split(), 1)[0]
            path = hit.path + (f"#{best.split(' > ')[-1]}" if best else "")
            section = best
    elif section is not None or was_deferred:  # the note itself is named: the result points at the note
        path, section = hit.path, None
        snippet = found.snippet_of(text)
    explain = row.explain
    if request.explain:
        explain = {
            **(explain or {}),
            "name": {
                "kind": named.kind,
                "match": "exact" if named.exact else "prefix",
                "lexical_score": round(named.score, 6),
            },
        }
    return replace(
        row,
        path=path,
        section=section,
        snippet=snippet,
        score=round(max(top, row.score) or named.score * row.penalty, 6),
        name=named.kind,
        name_within=within,
        explain=explain,
        cut=None,
    )
