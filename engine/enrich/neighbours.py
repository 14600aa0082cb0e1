"""The neighbours a prompt offers: up to five notes the lexical index finds near the one being judged. An
answer's `related` may name only these. When the note belongs to a project (a record by its path, a card by
its `project:`), that project's own records (its charter, decisions, designs and research) lead the list,
ahead of anything else the search found, each half in the search's order. Notes that stay on this machine
(a private space, a recall-exempt area: `Contract.kept_local`) are never offered."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentmd.engine.curate.actions import read_frontmatter
from agentmd.engine.enrich.kinds import project_of_record
from agentmd.engine.enrich.prompt import Neighbour
from agentmd.engine.errors import UsageError
from agentmd.engine.index.store import Store
from agentmd.engine.search.searcher import SearchRequest, search
from agentmd.rules import Contract

MAX_NEIGHBOURS = 5
OVERFETCH = 40  # how many search results are looked through for the five


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
            found = search(store.index, contract, SearchRequest(query=query, limit=OVERFETCH), store.catalog)
    except (UsageError, ValueError):
        return []
    project = project_of_record(path, contract) or (fm.get("project") if isinstance(fm.get("project"), str) else None)
    rows = [
        r for r in found.results if r.note.endswith(".md") and not contract.kept_local(r.note)
    ]  # a note of a private space or a recall-exempt area is never shown to the model
    if project:
        own = [r for r in rows if project_of_record(r.note, contract) == project]
        rows = own + [r for r in rows if r not in own]
    out: list[Neighbour] = []
    for row in rows:
        other = row.note
        if other == path or any(n.id == other[:-3] for n in out):
            continue
        summary = ""
        try:
            ofm = read_frontmatter((vault / other).read_bytes().decode("utf-8", "replace")) or {}
            summary = str(ofm.get("summary") or "")
        except OSError:
            pass
        title = str(row.title or Path(other).stem)
        out.append(Neighbour(other[:-3], " ".join(title.split())[:200], " ".join(summary.split())[:300]))
        if len(out) == MAX_NEIGHBOURS:
            break
    return out
