"""A query that asks for a time and nothing else ("what did I capture yesterday", "notes from last week",
"2026-12-04"; `planning.time_only`): the notes captured in that span, newest first.

Such a query has no word to rank notes by, so a word search finds nothing or, worse, a note outside the span
that happens to hold a word of the question. Each note of the span is named by its day as a title names its
note: its row carries `name` "date" and the confidence of a named note. Walls, self-probe notes and the
request's own date bounds apply as in every search; the notes a wall hides are counted as a search counts
them."""

from __future__ import annotations

from dataclasses import replace

from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.search import when
from agentmd.engine.search.result import Result, SearchResponse
from agentmd.engine.search.rows import facts_row
from agentmd.engine.search.searcher import QueryPlan, SearchRequest
from agentmd.rules import Contract


def search(
    index: SearchIndex, contract: Contract, request: SearchRequest, catalog: Catalog, span: when.Span
) -> SearchResponse:
    """The notes captured in `span`, newest first, at most `request.limit`."""
    asked = QueryPlan.of(request)
    first = span.first.isoformat() if span.first else None
    last = span.last.isoformat() if span.last else None
    hidden = {"archived": 0, "superseded": 0, "staged": 0}
    results: list[Result] = []
    matched = 0
    for path in catalog.captured_within(first, last, span.month):
        found = index.hit_for(path)
        if found is None:
            continue  # catalogued, not yet in the index (a note being written)
        hit, hits = found
        if not asked.admits(hit.facts):
            wall = hit.facts.get("wall")
            if isinstance(wall, str) and wall in hidden and not request.include_archived:
                hidden[wall] += 1
            continue
        matched += 1
        if len(results) >= request.limit:
            continue
        penalties = asked.penalties(hit.facts, path, contract)
        penalty = 1.0
        for _name, m in penalties:
            penalty *= m
        rank = 1.0 - len(results) / (request.limit + 1)  # the order is the date's: newest first
        row = facts_row(
            hit,
            score=round(rank, 6),
            raw_score=round(rank, 6),
            penalty=round(penalty, 6),
            penalties=penalties,
            snippet=hits.snippet_of(hits.text_of(hit)),
        )
        results.append(replace(row, name="date"))
    said = span.text or "that time"
    note = None if results else f"no note was captured {said}; try a wider span of days"
    return SearchResponse(
        query=request.query,
        mode=request.mode,
        results=tuple(results),
        note=note,
        matched=matched,
        archived_hidden=hidden["archived"],
        superseded_hidden=hidden["superseded"],
        staged_hidden=hidden["staged"],
    )
