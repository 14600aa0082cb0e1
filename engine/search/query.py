"""The one entry to search: a request goes to the lexical searcher or, in mode `hybrid`, to the fusion of
the lexical default with the dense arm. Callers that may ask for `hybrid` come here; the lexical modules never
import the dense arm, so a plain search does not load numpy."""

from __future__ import annotations

from typing import Any

from agentmd.engine.errors import UsageError
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.search import confidence, searcher
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import Contract

HYBRID = "hybrid"
MODES = (*searcher.MODES, HYBRID)


def search(
    index: SearchIndex,
    contract: Contract,
    request: SearchRequest,
    catalog: Catalog | None = None,
    dense: Any = None,
    floor: float | None = None,
) -> dict[str, Any]:
    """Run one search in any mode. `hybrid` also needs `dense` (a `hybrid.DenseArm`); without it, or before any
    vectors exist, it answers lexically and says why in `note` and `dense`. Every result carries a
    `confidence`; those below `floor` (default: the contract's `search_floor`) are left out."""
    if request.mode not in MODES:
        raise UsageError(f"search mode {request.mode!r} is not known; use one of: {', '.join(MODES)}")
    if request.mode == HYBRID:
        from agentmd.engine.search.hybrid import hybrid_search  # numpy and the vectors load only here

        response = hybrid_search(index, contract, request, catalog, dense)
    else:
        response = searcher.search(index, contract, request, catalog)
    response = confidence.annotate(index, request.query, response)
    return confidence.apply_floor(response, contract.thresholds.search_floor if floor is None else floor)
