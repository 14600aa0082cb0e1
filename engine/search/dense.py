"""Dense candidates: the notes whose chunks are closest in meaning to the query.

The query is embedded as it is (no prefix, no stop-word removal: the model was trained on raw
sentences) and compared with every chunk vector; a note scores by its best chunk, and the chunk's heading
path says which section matched. Query vectors are cached per process for a few hundred queries, since a
prompt hook and a search often ask the same thing twice.

A hybrid search embeds its query and scans the chunk vectors with it on a small pool of threads (`scan_soon`)
while its own thread runs the lexical search: the model (onnxruntime and the tokenizer), the matrix product
and Tantivy all run without holding Python's lock, so the two arms overlap and the search costs about the
longer of the two instead of their sum.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from agentmd.engine.index.vector_types import ChunkHit, Scan, TextEmbedder
from agentmd.engine.index.vectors import VectorStore

QUERY_CACHE = 256
EMBED_THREADS = 4  # queries embedded at once, for searches that arrive together (each waits for its own)

_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


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


def scan_soon(store: VectorStore, embedder: TextEmbedder, query: str, limit: int) -> Future[tuple[np.ndarray, Scan]]:
    """The query's vector and its `store.scan` for the `limit` nearest notes, both made on a worker thread.
    The future's `result()` gives them or raises what `embed` raised."""
    return _workers().submit(_scanned, store, embedder, query, limit)


def _scanned(store: VectorStore, embedder: TextEmbedder, query: str, limit: int) -> tuple[np.ndarray, Scan]:
    vec = query_vector(embedder, query)
    return vec, store.scan(vec, limit)


def _workers() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=EMBED_THREADS, thread_name_prefix="agentmd-query-embed")
        return _pool


def dense_candidates(
    store: VectorStore, embedder: TextEmbedder, query: str, limit: int, allowed: set[str] | None = None
) -> list[ChunkHit]:
    """The `limit` notes nearest to the query by their best chunk's cosine, best first."""
    if not query.strip():
        return []
    return store.search(query_vector(embedder, query), limit, allowed)
