"""Bringing the vector store in line with the vault: notes re-chunked when their content changed, deleted ones
dropped (engine/index/vectors.py keeps the vectors; embedding the queued chunks is `VectorStore.embed_pending`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from agentmd.engine.fsutil import read_regular
from agentmd.engine.index.vectors import ALL_CHUNKS, VectorStore
from agentmd.vault_schema import EmbedChunk, embedding_chunks, parse_note


def note_chunks(vault: Path, path: str) -> tuple[str, list[EmbedChunk]] | None:
    """A note's content hash and embedding chunks, read from the vault; None when it cannot be read."""
    try:
        full = vault / path
        data = read_regular(full)  # a note swapped for a FIFO or a device since it was indexed is not read
        mtime = full.stat().st_mtime_ns
    except OSError:
        return None
    note = parse_note(path, data, mtime)
    return note.content_hash, embedding_chunks(note.text, note.title, frontmatter=note.frontmatter)


def refresh(
    store: VectorStore,
    vault: Path,
    current: Mapping[str, str],
    limit: int | None = None,
    keep: Callable[[str], bool] | None = None,
    chunks: str = ALL_CHUNKS,
    withhold: Callable[[str], bool] | None = None,
    stop: Callable[[], bool] | None = None,
) -> tuple[int, int]:
    """Bring the store's note list in line with the catalog (`current`: path -> content hash): drop
    deleted notes, re-chunk at most `limit` changed ones, keeping only the chunks whose text passes `keep`
    (all without it; a note may be left with none, and then only the lexical arm finds it). `chunks` names
    that rule: a store cut by another rule has every note cut again, once (the vectors of the chunks kept are
    kept, by their text). Returns (re-chunked, removed). Embedding is separate (`embed_pending`), so this is
    cheap: reading and parsing files only. A note for which `withhold(path)` is true gets no chunk at all and is
    not even read (notes that must not leave the machine, when the embedder is an external endpoint); `chunks`
    must then name that rule too, so a change of it cuts every note again. `stop`, asked before each note, ends
    the re-chunking early (a daemon shutting down: at 100,000 notes a first re-chunking reads every note, minutes
    of work); the notes not reached are re-chunked by the next call."""
    stale, gone = store.outdated(current)
    recut = store.chunks != chunks
    if recut:
        stale = sorted(current)
    removed = store.remove(gone)
    done = 0
    for path in stale[:limit] if limit is not None else stale:
        if stop is not None and stop():
            return done, removed
        if withhold is not None and withhold(path):
            store.set_note(path, current[path], [])
            done += 1
            continue
        got = note_chunks(vault, path)
        if got is None:
            continue
        kept = got[1] if keep is None else [c for c in got[1] if keep(c.text)]
        store.set_note(path, current[path], kept)
        done += 1
    if recut and (limit is None or limit >= len(stale)):
        store.chunks = chunks
        store.dirty = True
    return done, removed
