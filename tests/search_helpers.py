"""Searches as the callers at the engine's edge see them: each answer as its JSON object
(`SearchResponse.to_json`: what the MCP tool, `/v1/search` and `agentmd search --json` return), so a test reads a
result's fields by their JSON names."""

from __future__ import annotations

from typing import Any

from agentmd.engine.search import query, searcher


def search(*args: Any, **kw: Any) -> dict[str, Any]:
    """`query.search` (any mode, through the confidence floor), its answer as JSON."""
    return query.search(*args, **kw).to_json()


def lexical_search(*args: Any, **kw: Any) -> dict[str, Any]:
    """`searcher.search` (the lexical modes, before the confidence floor), its answer as JSON."""
    return searcher.search(*args, **kw).to_json()


def hybrid_search(*args: Any, **kw: Any) -> dict[str, Any]:
    """`hybrid.hybrid_search` (the fusion with the dense arm), its answer as JSON."""
    from agentmd.engine.search import hybrid

    return hybrid.hybrid_search(*args, **kw).to_json()
