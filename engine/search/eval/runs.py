"""What both evaluation harnesses share: the engine's search modes and result limit, read when asked (a
mode added to the engine is measured without a change here), and one search reduced to note paths."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agentmd.engine.errors import UsageError
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.search import searcher as search_module
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import Contract


def max_limit() -> int:
    """The most results one search may return."""
    return int(getattr(search_module, "MAX_LIMIT", 200))


def available_modes() -> tuple[str, ...]:
    """The search modes the engine knows right now (read at call time, never cached)."""
    return tuple(search_module.MODES)


def check_modes(modes: Iterable[str] | None, known: Sequence[str] | None = None) -> tuple[str, ...]:
    """The modes asked for, each once and in order (every mode of `known`, by default the lexical searcher's,
    when none is given); an unknown one refused."""
    known = tuple(known) if known is not None else available_modes()
    chosen = tuple(dict.fromkeys(modes)) if modes else known
    for m in chosen:
        if m not in known:
            raise UsageError(f"search mode {m!r} is not known; use one of: {', '.join(known)}")
    return chosen


def modes_with_dense(
    modes: Sequence[str] | None, dense: object, why: str | None
) -> tuple[tuple[str, ...], dict[str, str]]:
    """(the modes to run, {mode left out: why}) for a harness that can also run `hybrid`: by default every mode,
    `hybrid` only when the dense arm (or an embedder for it) is at hand; `hybrid` asked for by name without one
    is refused with the reason `why`."""
    from agentmd.engine.search import query as query_module

    chosen = check_modes(modes, query_module.MODES)
    reason = why or "no embedding model was given"
    if query_module.HYBRID in chosen and dense is None:
        if modes:
            raise UsageError(f"mode hybrid needs the dense arm, which is not available: {reason}")
        return tuple(m for m in chosen if m != query_module.HYBRID), {query_module.HYBRID: reason}
    return chosen, {}


def search_paths(
    index: SearchIndex,
    contract: Contract,
    query: str,
    mode: str,
    limit: int,
    include_archived: bool = False,
    *,
    catalog: Catalog | None = None,
    dense: Any = None,
    floor: float | None = None,
) -> tuple[list[str], list[dict[str, Any]]]:
    """The note path of each result, in rank order, and the results themselves, as `agentmd search` returns
    them: through the contract's search floor (scaled in a small vault), or through `floor` as given (0: the
    whole ranking). `dense`: the `hybrid.DenseArm` a hybrid search fuses."""
    from agentmd.engine.search import query as query_module

    request = SearchRequest(query=query, limit=limit, mode=mode, include_archived=include_archived, floor=floor)
    response = query_module.search(index, contract, request, catalog, dense)
    return [r.note for r in response.results], [r.to_json() for r in response.results]


def fmt(value: float | None) -> str:
    """A metric in a text report: three decimals, `-` for none."""
    return "-" if value is None else f"{value:.3f}"
