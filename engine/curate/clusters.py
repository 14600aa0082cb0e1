"""Clusters: communities of notes found over a note-similarity graph, deterministic by construction.

The graph. Two notes are joined when one links to the other (a resolved `[[link]]`, weight 1) and when they
share distinctive words: each note's twelve highest TF-IDF words are its signature, and each note is joined to
the three notes whose signatures share the most IDF weight with its own (at least two shared words).

The communities. Label propagation in path order: every note starts with its own label and, visiting notes in
path order until nothing changes (at most 30 rounds), takes the label its neighbours carry with the most summed
weight, the lowest label on a tie. No randomness, no map order, no clock: the same vault gives byte-identical
output, and so does a rebuilt index (only the notes' text and links are read). A community of more than 40
notes gets a second level, found the same way over its members' strongest edge each.

Each cluster has an id made from its medoid (the member with the most edge weight, then the first path), a
label of up to three words that are frequent in it and rare elsewhere, and its members. An owner's name for a
cluster (`agentmd clusters --rename ID NAME`) is kept by id in the state folder and survives recomputation as
long as the cluster keeps its medoid.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

from agentmd.engine.fsutil import atomic_write
from agentmd.engine.index.store import Store
from agentmd.engine.search.graph import resolve, stem_index
from agentmd.vault_schema import parse_note
from agentmd.vocabulary import STOP_WORDS

SIGNATURE = 12
NEIGHBOURS = 3
MIN_SHARED = 2
SECOND_LEVEL = 40
ROUNDS = 30
NAMES_FILE = "cluster-names.json"
_WORD = re.compile(r"[^\W\d_][^\W_]{2,}")

Graph = dict[int, dict[int, float]]


def _terms(text: str) -> Counter[str]:
    return Counter(w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOP_WORDS)


def _add(graph: Graph, a: int, b: int, w: float) -> None:
    if a == b:
        return
    graph[a][b] = graph[a].get(b, 0.0) + w
    graph[b][a] = graph[b].get(a, 0.0) + w


def build_graph(
    paths: Sequence[str], texts: Sequence[str], links: Mapping[str, Iterable[str]]
) -> tuple[Graph, list[Counter[str]]]:
    """The weighted similarity graph over notes 0..n-1 (in `paths` order) and each note's term counts."""
    n = len(paths)
    counts = [_terms(t) for t in texts]
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    idf = {w: math.log((n + 1) / (d + 0.5)) for w, d in df.items()}
    signatures: list[list[str]] = []
    for c in counts:
        ranked = sorted(c, key=lambda w: (-(1 + math.log(c[w])) * idf[w], w))
        signatures.append([w for w in ranked[:SIGNATURE] if df[w] > 1])
    postings: dict[str, list[int]] = defaultdict(list)
    for i, sig in enumerate(signatures):
        for w in sig:
            postings[w].append(i)
    graph: Graph = {i: {} for i in range(n)}
    for i, sig in enumerate(signatures):
        scores: dict[int, float] = defaultdict(float)
        shared: Counter[int] = Counter()
        for w in sig:
            if len(postings[w]) > max(50, n // 20):  # a word most notes share joins nothing
                continue
            for j in postings[w]:
                if j != i:
                    scores[j] += idf[w]
                    shared[j] += 1
        best = sorted((j for j in scores if shared[j] >= MIN_SHARED), key=lambda j: (-scores[j], j))[:NEIGHBOURS]
        top = max((scores[j] for j in best), default=1.0)
        for j in best:
            _add(graph, i, j, round(scores[j] / top, 6))
    index = {p: i for i, p in enumerate(paths)}
    by_stem = stem_index(paths)
    for source in sorted(links):
        for target in sorted(set(links[source])):
            found = resolve(target, source, paths, by_stem=by_stem)
            if found is not None and source in index:
                _add(graph, index[source], index[found], 1.0)
    return graph, counts


def propagate(graph: Graph, nodes: Sequence[int]) -> dict[int, int]:
    """Label propagation over `nodes` (ascending), lowest label on ties; node -> label."""
    label = {v: v for v in nodes}
    members = set(nodes)
    for _ in range(ROUNDS):
        changed = False
        for v in nodes:
            weight: dict[int, float] = defaultdict(float)
            for u, w in graph[v].items():
                if u in members:
                    weight[label[u]] += w
            if not weight:
                continue
            best = min(weight, key=lambda lab: (-round(weight[lab], 9), lab))
            if best != label[v]:
                label[v] = best
                changed = True
        if not changed:
            break
    return label


def _medoid(graph: Graph, group: Sequence[int], paths: Sequence[str]) -> int:
    inside = set(group)
    return min(group, key=lambda v: (-round(sum(w for u, w in graph[v].items() if u in inside), 9), paths[v]))


def _label(group: Sequence[int], counts: Sequence[Counter[str]], df: Counter[str], n: int) -> list[str]:
    mass: Counter[str] = Counter()
    for v in group:
        for w, c in counts[v].items():
            mass[w] += 1 if c else 0
    scored = {w: (m / len(group)) * math.log((n + 1) / (df[w] + 0.5)) for w, m in mass.items() if m >= 2}
    return sorted(scored, key=lambda w: (-round(scored[w], 9), w))[:3]


def cluster_id(path: str) -> str:
    return "c-" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:8]


def _groups(labels: Mapping[int, int]) -> list[list[int]]:
    by: dict[int, list[int]] = defaultdict(list)
    for v, lab in labels.items():
        by[lab].append(v)
    return sorted((sorted(g) for g in by.values() if len(g) >= 2), key=lambda g: (-len(g), g[0]))


class Cluster(TypedDict):
    """One cluster as `agentmd clusters --json` prints it."""

    id: str
    label: str  # the name given to it, else its terms, else its medoid
    terms: list[str]
    renamed: bool
    size: int
    medoid: str
    members: list[str]
    children: NotRequired[list[Cluster]]  # a large top-level cluster's own clusters


class Clusters(TypedDict):
    notes: int
    clustered: int
    clusters: list[Cluster]


def compute(
    paths: Sequence[str], texts: Sequence[str], links: Mapping[str, Iterable[str]], names: Mapping[str, str]
) -> Clusters:
    """The clusters as a JSON-ready object (paths sorted; the same input gives the same bytes)."""
    order = sorted(range(len(paths)), key=lambda i: paths[i])
    paths = [paths[i] for i in order]
    texts = [texts[i] for i in order]
    graph, counts = build_graph(paths, texts, links)
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    n = len(paths)

    def describe(group: list[int], level: int) -> Cluster:
        medoid = _medoid(graph, group, paths)
        cid = cluster_id(paths[medoid])
        out: Cluster = {
            "id": cid,
            "label": names.get(cid) or " ".join(_label(group, counts, df, n)) or paths[medoid],
            "terms": _label(group, counts, df, n),
            "renamed": cid in names,
            "size": len(group),
            "medoid": paths[medoid],
            "members": [paths[v] for v in group],
        }
        if level == 1 and len(group) > SECOND_LEVEL:
            strongest: Graph = {v: {} for v in range(n)}
            inside = set(group)
            for v in group:
                near = [(u, w) for u, w in graph[v].items() if u in inside]
                if near:
                    u, w = min(near, key=lambda x: (-x[1], x[0]))
                    _add(strongest, v, u, w)
            sub = _groups(propagate(strongest, group))
            if len(sub) > 1:
                out["children"] = [describe(g, 2) for g in sub]
        return out

    top = _groups(propagate(graph, list(range(n))))
    clustered = sum(len(g) for g in top)
    return {"notes": n, "clustered": clustered, "clusters": [describe(g, 1) for g in top]}


def load_names(state_dir: Path) -> dict[str, str]:
    try:
        data = json.loads((state_dir / NAMES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def cluster_ids(result: Clusters) -> list[str]:
    """Every cluster's id, the second level's too."""
    return [c["id"] for top in result["clusters"] for c in (top, *top.get("children", []))]


def rename(state_dir: Path, cid: str, name: str) -> None:
    names = load_names(state_dir)
    names[cid] = name
    state_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(state_dir / NAMES_FILE, json.dumps(names, sort_keys=True, ensure_ascii=False).encode("utf-8"))


def clusters(vault: Path, store: Store, state_dir: Path) -> Clusters:
    """The vault's clusters, read from the notes no wall hides and their links."""
    paths, texts = [], []
    links: dict[str, list[str]] = {}
    for path, *_rest in store.catalog.review_rows():
        try:
            data = (vault / path).read_bytes()
        except OSError:
            continue
        note = parse_note(path, data, 0)
        if note.is_probe or note.is_generated:  # a map of content links every note of a facet: it is no subject
            continue
        paths.append(path)
        texts.append(f"{note.title}\n{note.text}")
        links[path] = [ln.target for ln in note.links if ln.target and not ln.attachment]
    return compute(paths, texts, links, load_names(state_dir))


def render(result: Clusters) -> str:
    lines = [f"{len(result['clusters'])} cluster(s) over {result['notes']} notes ({result['clustered']} clustered)"]
    for c in result["clusters"]:
        lines.append(f"{c['id']}  {c['label']}  ({c['size']} notes, medoid {c['medoid']})")
        for child in c.get("children", []):
            lines.append(f"    {child['id']}  {child['label']}  ({child['size']} notes)")
    return "\n".join(lines)
