"""A note's neighbourhood in the link graph: the notes within two links of it (either way), at most
`MAX_NODES`, with the clusters engine/curate/clusters.py finds among them (the same algorithm as `agentmd
clusters`, run over the neighbourhood, so a page costs a few dozen notes' reading, never the vault's)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentmd.engine.curate.clusters import compute
from agentmd.engine.search.graph import Graph, LinksJson
from agentmd.engine.web.html import Markup
from agentmd.engine.web.svg import Node, neighbourhood
from agentmd.vault_schema import parse_note

MAX_NODES = 36


def _near(links: LinksJson) -> list[str]:
    out = [to for e in links["out"] if (to := e["resolved"])]
    back = [source for e in links["back"] if (source := e.get("path"))]
    return list(dict.fromkeys(out + back))


def picture(vault: Path, graph: Graph, path: str, first: LinksJson, href: Callable[[str], str]) -> Markup:
    """The neighbourhood of `path` as SVG; `first` is its own `links_of` answer."""
    seen: dict[str, list[str]] = {path: _near(first)}
    frontier = list(seen[path])
    for depth in (1, 2):
        nxt: list[str] = []
        for p in frontier:
            if p in seen or len(seen) >= MAX_NODES:
                continue
            seen[p] = _near(graph.links_of(p)) if depth == 1 else []
            nxt += seen[p]
        frontier = nxt
        if depth == 1:
            for p in frontier:
                if p not in seen and len(seen) < MAX_NODES:
                    seen[p] = []
    paths = list(seen)
    edges = sorted({tuple(sorted((a, b))) for a, near in seen.items() for b in near if b in seen and a != b})
    titles, texts = {}, []
    for p in paths:
        try:
            n = parse_note(p, (vault / p).read_bytes(), 0)
            titles[p] = n.title
            texts.append(f"{n.title}\n{n.text}")
        except OSError:
            titles[p] = p
            texts.append(p)
    links = {a: [b for b in near if b in seen] for a, near in seen.items()}
    found = compute(paths, texts, links, {})["clusters"] if len(paths) > 2 else []
    cluster = {m: i for i, c in enumerate(found) for m in c["members"]}
    nodes = [Node(p, titles[p], cluster.get(p, -1), p == path) for p in paths]
    return neighbourhood(nodes, [(a, b) for a, b in edges], {p: href(p) for p in paths})
