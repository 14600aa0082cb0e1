"""Dense candidates: the notes whose chunks are closest in meaning to the query.

The query is embedded as it is (no prefix, no stop-word removal: the model was trained on raw
sentences) and compared with every chunk vector; a note scores by its best chunk, and the chunk's heading
path says which section matched. Query vectors are cached per process for a few hundred queries, since a
prompt hook and a search often ask the same thing twice.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from agentmd.engine.index.vectors import ChunkHit, TextEmbedder, VectorStore

QUERY_CACHE = 256

_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()


def query_vector(embedder: TextEmbedder, query: str) -> np.ndarray:
    key = (embedder.model_id, query)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    vec = embedder.embed([query])[0]
    with _cache_lock:
        _cache[key] = vec
        while len(_cache) > QUERY_CACHE:
            _cache.popitem(last=False)
    return vec


def dense_candidates(
    store: VectorStore, embedder: TextEmbedder, query: str, limit: int, allowed: set[str] | None = None
) -> list[ChunkHit]:
    """The `limit` notes nearest to the query by their best chunk's cosine, best first."""
    if not query.strip():
        return []
    return store.search(query_vector(embedder, query), limit, allowed)
