"""A query that asks for a time and nothing else ("what did I capture yesterday", "notes from last week",
"2026-12-04"; `planning.time_only`): the notes captured in that span, newest first.

Such a query has no word to rank notes by, so a word search finds nothing or, worse, a note outside the span
that happens to hold a word of the question. Each note of the span is named by its day as a title names its
note: its row carries `name` "date" and the confidence of a named note. Walls, self-probe notes and the
request's own date bounds apply as in every search; the notes a wall hides are counted as a search counts
them."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.search import when
from agentmd.engine.search.result import Result, SearchResponse
from agentmd.engine.search.rows import facts_row
from agentmd.engine.search.searcher import QueryPlan, SearchRequest
from agentmd.rules import Contract

SPARE = 5  # notes read beyond the limit, for those the index does not hold yet (a note being written)


def search(
    index: SearchIndex, contract: Contract, request: SearchRequest, catalog: Catalog, span: when.Span
) -> SearchResponse:
    """The notes captured in `span` (and within the request's own date bounds), newest first, at most
    `request.limit`. The catalog names them, their walls and self-probe notes; only the rows shown are read
    from the index, so a span of a year costs one catalog query, not a read of each of its notes."""
    asked = QueryPlan.of(request)
    first, last = _bounds(span, asked.days)
    paths, matched, hidden = catalog.captured_within(
        first,
        last,
        span.month,
        walled=request.include_archived,
        probes=request.include_probe,
        limit=request.limit + SPARE,
    )
    results: list[Result] = []
    for path in paths:
        if len(results) >= request.limit:
            break
        found = index.hit_for(path)
        if found is None or not asked.admits(found[0].facts):
            matched -= 1  # catalogued, not yet in the index (a note being written), or its index facts differ
            continue
        hit, hits = found
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
    said = span.text or _described(first, last)
    note = None if results else f"no note was captured {said}; try a wider span of days"
    return SearchResponse(
        query=request.query,
        mode=request.mode,
        results=tuple(results),
        note=note,
        matched=matched,
        archived_hidden=hidden.get("archived", 0),
        superseded_hidden=hidden.get("superseded", 0),
        staged_hidden=hidden.get("staged", 0),
    )


def _bounds(span: when.Span, days: tuple[int | None, int | None]) -> tuple[str | None, str | None]:
    """The span's days narrowed by the request's own bounds (yyyymmdd, either open), as the catalog reads them:
    the first day (ISO) and the day after the last (ISO, excluded), either end open."""
    first, last = span.first, span.last
    lo, hi = days
    if lo is not None:
        day = dt.date(lo // 10000, lo // 100 % 100, lo % 100)
        first = day if first is None else max(first, day)
    if hi is not None:
        day = dt.date(hi // 10000, hi // 100 % 100, hi % 100)
        last = day if last is None else min(last, day)
    return (
        first.isoformat() if first else None,
        (last + dt.timedelta(days=1)).isoformat() if last else None,
    )


def _described(first: str | None, until: str | None) -> str:
    """The days between the bounds, as a refusal names them ("from 2026-12-01 to 2026-12-04")."""
    last = (dt.date.fromisoformat(until) - dt.timedelta(days=1)).isoformat() if until else None
    if first and last:
        return f"from {first} to {last}"
    return f"from {first} on" if first else f"up to {last}" if last else "at any time"
