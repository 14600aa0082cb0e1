"""The neighbours a prompt offers: up to five notes the lexical index finds near the one being judged. An
answer's `related` may name only these."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentmd.engine.curate.actions import read_frontmatter
from agentmd.engine.enrich.prompt import Neighbour
from agentmd.engine.errors import UsageError
from agentmd.engine.index.store import Store
from agentmd.engine.search.searcher import SearchRequest, search
from agentmd.rules import Contract

MAX_NEIGHBOURS = 5


def neighbours_of(
    store: Store, contract: Contract, vault: Path, path: str, fm: Mapping[str, Any], body: str
) -> list[Neighbour]:
    """Up to five notes the lexical index finds for the note's title, tags and first words, the note itself
    left out. Each is offered by its path without `.md`."""
    words = [str(fm.get("title") or "")] + [str(t) for t in (fm.get("tags") or []) if isinstance(t, str)]
    query = " ".join([*(w for w in words if w.strip()), *body.split()[:16]])
    query = " ".join(query.split()[:24])
    if not query.strip():
        return []
    try:
        with store.lock:
            found = search(store.index, contract, SearchRequest(query=query, limit=MAX_NEIGHBOURS + 5), store.catalog)
    except (UsageError, ValueError):
        return []
    out: list[Neighbour] = []
    for row in found.get("results", []):
        other = str(row.get("note") or "")
        if not other or other == path or not other.endswith(".md") or any(n.id == other[:-3] for n in out):
            continue
        summary = ""
        try:
            ofm = read_frontmatter((vault / other).read_bytes().decode("utf-8", "replace")) or {}
            summary = str(ofm.get("summary") or "")
        except OSError:
            pass
        title = str(row.get("title") or Path(other).stem)
        out.append(Neighbour(other[:-3], " ".join(title.split())[:200], " ".join(summary.split())[:300]))
        if len(out) == MAX_NEIGHBOURS:
            break
    return out
