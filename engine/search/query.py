"""The one entry to search: a request goes to the lexical searcher or, in mode `hybrid`, to the fusion of
the lexical default with the dense arm. Callers that may ask for `hybrid` come here; the lexical modules never
import the dense arm, so a plain search does not load numpy.

`hybrid` is the product's default: with a dense arm whose store has vectors it fuses both lists; without one
it answers lexically and says why (`dense.used = false`, `dense.reason`, and the `note`). Every hybrid result
names the arms that found it (`arms`: "lexical", "dense" or both). `fusion` and `and` are the lexical modes,
unchanged."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agentmd.engine.errors import UsageError
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.search import confidence, dated, searcher
from agentmd.engine.search.planning import HYBRID, REQUEST_MODES, judged_query, time_only
from agentmd.engine.search.result import DenseUse, SearchResponse
from agentmd.engine.search.rows import fill
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import Contract

if TYPE_CHECKING:
    from agentmd.engine.search.hybrid import DenseArm

MODES = REQUEST_MODES
DEFAULT_MODE = HYBRID
NO_WORDS = "the query has no words to search for"


def search(
    index: SearchIndex,
    contract: Contract,
    request: SearchRequest,
    catalog: Catalog | None = None,
    dense: DenseArm | None = None,
    dense_reason: str | None = None,
    *,
    floor: float | None = None,
) -> SearchResponse:
    """Run one search in any mode. `hybrid` also needs `dense` (a `hybrid.DenseArm`); without it, or before any
    vectors exist, it answers lexically and says why in `note` and `dense` (`dense_reason`, when the caller
    knows why it has no arm). Every result carries a `confidence`; those below `floor` (default: the request's
    `floor` as it is, else the contract's `search_floor`, scaled down in a small vault) are left out."""
    if request.mode not in MODES:
        raise UsageError(f"search mode {request.mode!r} is not known; use one of: {', '.join(MODES)}")
    if request.floor is not None and not _is_share(request.floor):
        raise UsageError(f"floor {request.floor!r} is out of range; use a number from 0 to 1 (0 returns every result)")
    span = time_only(request) if catalog is not None else None
    if span is not None and not index.name_hits(request.query, include_walled=request.include_archived):
        # a time and nothing else, which names no note outright (a daily note's title does): its notes by date
        assert catalog is not None
        response = dated.search(index, contract, request, catalog, span)
        if request.mode == HYBRID:
            response = replace(response, dense=DenseUse(False, reason="a time alone is listed by date"))
        return _floored(index, contract, request, response, floor)
    if request.mode != HYBRID:
        later = request.per_note == 1  # rows below the floor are never cut (see `_floored`)
        response = searcher.search(index, contract, request, catalog, cut_later=later)
        return _floored(index, contract, request, response, floor)
    if not any(ch.isalnum() for ch in request.query):  # punctuation or symbols alone: no word to search for,
        dense, dense_reason = None, NO_WORDS  # and the meaning of none is no question either
    if dense is None and dense_reason:
        later = request.per_note == 1  # as above: only the rows that clear the floor are cut
        lexical = searcher.search(
            index, contract, replace(request, mode=searcher.DEFAULT_MODE), catalog, cut_later=later
        )
        return _floored(index, contract, request, lexical_only(lexical, dense_reason), floor)
    from agentmd.engine.search.hybrid import hybrid_search  # numpy and the vectors load only here

    response = hybrid_search(index, contract, request, catalog, dense, cut=False)
    results = tuple(row if row.arms is not None else replace(row, arms=("lexical",)) for row in response.results)
    return _floored(index, contract, request, replace(response, results=results), floor)


def _is_share(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= float(value) <= 1.0


def _floored(
    index: SearchIndex, contract: Contract, request: SearchRequest, response: SearchResponse, floor: float | None
) -> SearchResponse:
    """The response with every result's confidence, without the results below the floor; a row whose best
    section and snippet were left to be cut (`rows.fill`) is cut only when it clears the floor."""
    response = confidence.annotate(index, judged_query(request), response)
    if floor is None and request.floor is not None:
        effective = float(request.floor)  # the request's own floor, as asked (`agentmd search --floor`)
    else:
        wanted = contract.thresholds.search_floor if floor is None else floor
        effective = confidence.search_floor(index, wanted)
    response = confidence.apply_floor(response, effective)
    return replace(response, results=tuple(fill(row) for row in response.results))


def lexical_only(response: SearchResponse, reason: str) -> SearchResponse:
    """A lexical answer to a hybrid request, marked with why the dense arm took no part."""
    note = f"lexical results only: {reason}"
    results = tuple(
        replace(
            row,
            arms=("lexical",),
            explain=None if row.explain is None else {**row.explain, "dense": {"used": False, "reason": reason}},
        )
        for row in response.results
    )
    return replace(
        response,
        mode=HYBRID,
        results=results,
        dense=DenseUse(False, reason=reason),
        note=f"{response.note}; {note}" if response.note else note,
    )
