"""The vector store of the dense arm: one vector per embedding chunk of every note, a rebuildable cache.

It lives in the index's cache folder (`vectors.npz` beside the Tantivy index and the catalog); deleting
it costs one re-embedding, never data. Each chunk is keyed by the hash of the text the embedder reads,
under one model id: a note edit re-embeds only the chunks whose text changed (any other note's identical
chunk is reused too), and a file written under another model id is ignored, so a model change
re-embeds everything.

A vector is kept as int8 with one float32 scale, on disk and in memory alike (`quantize`: the vector's
largest magnitude maps to 127), a quarter of float32: 388 bytes a chunk of 384 dimensions. Against float32 it
moves SciFact's nDCG@10 by 0.0012 at most and the dev sets' recall not at all (`bench/dense_compact_bench.py
quality`, bench/RESULTS.md). float16 would halve float32 with no loss at all, but this machine's numpy converts
float16 to float32 about ten times slower than int8: one scan of 350,000 chunks took 588 ms over float16, 61 ms
over float32 and 43 ms over int8. A store of 350,000 chunks (a 100,000-note vault) is about 295 MiB resident,
130 MiB of it the vectors (676 MiB when they were float32). The codes live in one matrix, a row per chunk,
which searches scan in place: a note's chunks hold row numbers, freed rows are reused, and nothing is rebuilt
when a slice of vectors arrives, so a search while the background embedding runs costs what it costs at rest.
Search is brute-force cosine (engine/index/vector_codes.py): a block of rows at a time is converted to float32
in one small buffer and multiplied by the query, then by the rows' scales, so no float32 copy of the matrix is
ever held. A file of the first format (float16 or float32 vectors) is converted block by block when it is
opened, and written in the current format at the next save.

Embedding is slow (about 20 chunks a second on 2 cores), so the work is incremental and resumable:
`outdated` compares the store with the catalog's note hashes, `set_note` records a note's chunks
(vectors already known are reused at once, the rest are queued with their text), `embed_pending`
embeds at most N queued chunks, `coverage` says how far it got, `remove` drops deleted notes, and
`save` writes the file atomically (queued texts included, so a restart resumes where it stopped).
The queue is taken note by note in the order `prioritise` last gave (the daemon puts the most-used and
newest notes first), else by path; taking a slice costs the slice, not the vault. `refresh`
(engine/index/vector_refresh.py) reads the changed notes from the vault and records their chunks.
"""

from __future__ import annotations

import hashlib
import heapq
import io
import json
import logging
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agentmd.engine.fsutil import atomic_write
from agentmd.engine.index.vector_codes import Coded, block_cosines, block_sum, converted, quantize
from agentmd.engine.index.vector_types import ChunkHit, Coverage, Scan, TextEmbedder
from agentmd.vault_schema import EmbedChunk, scripts

log = logging.getLogger("agentmd.vectors")

FILE_NAME = "vectors.npz"
FORMAT = 2  # int8 vectors, a float32 scale each
FIRST_FORMAT = 1  # float16 (or float32) vectors: converted on open
LAST = sys.maxsize  # the rank of a note `prioritise` did not name


def chunk_key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


@dataclass(slots=True)
class _Note:
    content_hash: str
    keys: list[str]
    headings: list[str]  # each chunk's heading path joined by " > " ("" for the opening text)
    rows: np.ndarray  # int32: each chunk's row in the matrix
    slot: int  # the note's number in `_slot_path`, what a row's owner names
    missing: int  # chunks still without a vector


ALL_CHUNKS = scripts.ALL_CHUNKS  # a store whose notes keep every chunk, cut the current way
FIRST_CUT = "all"  # the tag of a store saved before stores kept one: every chunk, cut the first way


class VectorStore:
    """Chunk vectors of one model, per note. Thread-safe; the caller decides when to `save`."""

    def __init__(self, cache_dir: Path, model_id: str, dim: int | None = 384) -> None:
        """The store of `model_id`'s vectors in `cache_dir`. `dim=None` takes the dimension the file has (for
        reading a store whose model is not loaded)."""
        self.path = cache_dir / FILE_NAME
        self.model_id = model_id
        self.dim = dim or 0
        self._any_dim = dim is None
        self._lock = threading.RLock()
        # held over a whole save, so saves write in the order they were taken; searches wait only on `_lock`,
        # which a save holds just while it copies the store (not while it encodes and writes the copy)
        self._save_lock = threading.Lock()
        self._notes: dict[str, _Note] = {}
        self._pending: dict[str, str] = {}  # chunk key -> text, for queued chunks
        self._spare: dict[str, Coded] = {}  # vectors of freed rows, reusable until the next save
        self._key_row: dict[str, int] = {}  # chunk key -> a row holding its vector
        # the matrix (int8 codes, a scale per row) and what each row holds; rows below `_used` are live or in `_free`
        self._vectors = np.zeros((0, self.dim), dtype=np.int8)
        self._scale = np.zeros(0, dtype=np.float32)
        self._has = np.zeros(0, dtype=bool)  # the row is live and holds its vector
        self._owner = np.zeros(0, dtype=np.int32)  # the owning note's slot
        self._ordinal = np.zeros(0, dtype=np.int32)  # the chunk's number in its note
        self._row_key: list[str | None] = []
        self._used = 0
        self._generation = 0  # moves whenever a row changes hands or gains its vector (see `Scan`)
        self._sameness: tuple[int, float] | None = None  # (chunks with vectors, value) at the last `sameness`
        self._free: list[int] = []
        self._slot_path: list[str | None] = []
        self._free_slots: list[int] = []
        # the queue: a heap of (rank, path) of notes with chunks to embed; stale entries are skipped
        self._queue: list[tuple[int, str]] = []
        self._rank: dict[str, int] = {}
        self._done = 0
        self._total = 0
        self._complete = 0
        self.dirty = False
        self.reset_reason: str | None = None
        # which chunks the notes were cut to keep (`refresh`'s `chunks`): "all", or the name of a rule
        self.chunks = ALL_CHUNKS
        self._load()

    # ----- persistence -----

    def _load(self) -> None:
        if not self.path.is_file():
            return
        try:
            with np.load(self.path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                if self._any_dim and isinstance(meta.get("dim"), int):
                    self.dim = meta["dim"]
                    self._vectors = np.zeros((0, self.dim), dtype=np.int8)
                form = meta.get("format")
                if (
                    form not in (FORMAT, FIRST_FORMAT)
                    or meta.get("model_id") != self.model_id
                    or meta.get("dim") != self.dim
                ):
                    self.reset_reason = (
                        f"vectors were made by {meta.get('model_id')!r} (format {form}); "
                        f"they are rebuilt for {self.model_id!r}"
                    )
                    return
                vectors = data["vectors"]
                scales = data["scales"] if form == FORMAT else None
                has = data["has"].astype(bool)
                row_note = data["row_note"].astype(np.int32)
            pending = dict(meta["pending"])
            listed = meta["notes"]
            chunks = str(meta.get("chunks", FIRST_CUT))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.reset_reason = f"vector file {self.path} was unreadable ({exc}); it is rebuilt"
            return
        counts = np.array([len(keys) for _p, _h, keys, _hd in listed], dtype=np.int64)
        rows = int(counts.sum())
        if (
            vectors.shape != (rows, self.dim)
            or (vectors.dtype != np.int8 if scales is not None else vectors.dtype.kind != "f")
            or (scales is not None and scales.shape != (rows,))
            or len(has) != rows
            or len(row_note) != rows
            or not np.array_equal(row_note, np.repeat(np.arange(len(listed), dtype=np.int32), counts))
        ):
            self.reset_reason = f"vector file {self.path} is inconsistent; it is rebuilt"
            return
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if len(listed) else counts
        if scales is None:  # the first format: floats, converted a block at a time
            self._vectors, self._scale = converted(vectors)
            self.dirty = True
            log.info("vectors in %s converted to int8; written so at the next save", self.path)
        else:
            self._vectors, self._scale = np.ascontiguousarray(vectors), scales.astype(np.float32)
        del vectors
        self._has = has
        self._owner = row_note
        self._ordinal = (np.arange(rows) - np.repeat(starts, counts)).astype(np.int32)
        self._used = rows
        row_key: list[str | None] = []
        for n, (path, content_hash, keys, headings) in enumerate(listed):
            start = int(starts[n])
            missing = int(len(keys) - has[start : start + len(keys)].sum())
            note = _Note(
                content_hash,
                list(keys),
                [sys.intern(h) for h in headings],
                np.arange(start, start + len(keys), dtype=np.int32),
                n,
                missing,
            )
            self._notes[path] = note
            self._slot_path.append(path)
            row_key.extend(note.keys)
            self._count(note, 1)
        self._row_key = row_key
        self._pending = pending
        self.chunks = chunks
        self._key_row = {row_key[r]: r for r in np.flatnonzero(has).tolist()}  # type: ignore[misc]
        self._requeue()

    def save(self) -> None:
        """Write the store atomically (int8 vectors and their scales, the queued chunks' texts included). The
        store is copied under its lock and the copy encoded and written after it is released: at the start of a
        large vault's embedding the queued texts alone are megabytes of JSON, and a search must not wait for
        them."""
        with self._save_lock:
            with self._lock:
                self._fill_known()
                notes = sorted(self._notes.items())
                rows = np.concatenate([n.rows for _p, n in notes]) if notes else np.zeros(0, dtype=np.int32)
                counts = np.array([len(n.keys) for _p, n in notes], dtype=np.int64)
                vectors = self._vectors[rows]
                scales = self._scale[rows]
                has = self._has[rows]
                row_note = np.repeat(np.arange(len(notes), dtype=np.int32), counts)
                wanted = {
                    n.keys[i] for _p, n in notes if n.missing for i in np.flatnonzero(~self._has[n.rows]).tolist()
                }
                self._pending = {k: t for k, t in self._pending.items() if k in wanted}
                self._spare = {}  # forget the vectors of chunks no note holds any more
                live = np.flatnonzero(self._has[: self._used]).tolist()
                self._key_row = {self._row_key[r]: r for r in live}  # type: ignore[misc]
                meta = {
                    "format": FORMAT,
                    "model_id": self.model_id,
                    "dim": self.dim,
                    "notes": [[p, n.content_hash, list(n.keys), list(n.headings)] for p, n in notes],
                    "pending": dict(self._pending),
                    "chunks": self.chunks,
                }
                self.dirty = False  # a change made while the copy is written marks the store dirty again
            try:
                buf = io.BytesIO()
                text = np.array(json.dumps(meta, ensure_ascii=False))
                np.savez(buf, meta=text, vectors=vectors, scales=scales, has=has, row_note=row_note)
                self._write(buf.getvalue())
            except BaseException:
                with self._lock:
                    self.dirty = True
                raise

    def _write(self, data: bytes) -> None:
        """Put the encoded store in place (atomically; the store is a cache, so not fsynced)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, data, durable=False)

    # ----- rows, slots and counts -----

    def _alloc(self, n: int) -> np.ndarray:
        self._generation += 1
        take = [self._free.pop() for _ in range(min(n, len(self._free)))]
        extra = n - len(take)
        if extra:
            need = self._used + extra
            if need > len(self._has):
                size = max(need, 2 * len(self._has), 256)
                self._vectors = _grown(self._vectors, size)
                self._scale = _grown(self._scale, size)
                self._has = _grown(self._has, size)
                self._owner = _grown(self._owner, size)
                self._ordinal = _grown(self._ordinal, size)
            take.extend(range(self._used, need))
            self._row_key.extend([None] * extra)
            self._used = need
        return np.array(take, dtype=np.int32)

    def _release(self, note: _Note) -> None:
        """Free a note's rows; their vectors stay reusable (`_spare`) until the next save."""
        self._generation += 1
        for i, r in enumerate(note.rows.tolist()):
            key = note.keys[i]
            if self._has[r]:
                if self._key_row.get(key) == r:
                    del self._key_row[key]
                self._spare.setdefault(key, (self._vectors[r].copy(), float(self._scale[r])))
            self._has[r] = False
            self._row_key[r] = None
            self._free.append(r)
        self._count(note, -1)

    def _count(self, note: _Note, sign: int) -> None:
        self._total += sign * len(note.keys)
        self._done += sign * (len(note.keys) - note.missing)
        self._complete += sign * (note.missing == 0)

    def _known(self, key: str) -> Coded | None:
        """The vector of a chunk text some note holds (its codes a view of the matrix), or a freed one's."""
        r = self._key_row.get(key)
        if r is not None and self._has[r] and self._row_key[r] == key:
            return self._vectors[r], float(self._scale[r])
        return self._spare.get(key)

    def _put(self, note: _Note, i: int, vec: Coded) -> None:
        self._generation += 1
        r = int(note.rows[i])
        self._vectors[r] = vec[0]
        self._scale[r] = vec[1]
        self._has[r] = True
        self._key_row[note.keys[i]] = r
        note.missing -= 1
        self._done += 1
        if note.missing == 0:
            self._complete += 1

    def _fill_known(self) -> None:
        """Give every queued chunk whose text another note's chunk has already had embedded its vector."""
        for note in self._notes.values():
            if note.missing:
                for i in np.flatnonzero(~self._has[note.rows]).tolist():
                    vec = self._known(note.keys[i])
                    if vec is not None:
                        self._put(note, i, vec)

    # ----- incremental work -----

    def note_hashes(self) -> dict[str, str]:
        with self._lock:
            return {p: n.content_hash for p, n in self._notes.items()}

    def outdated(self, current: Mapping[str, str]) -> tuple[list[str], list[str]]:
        """(paths whose chunks must be (re)computed, paths to remove), given path -> note content hash
        (the catalog's `hash`)."""
        with self._lock:
            stale = sorted(p for p, h in current.items() if (n := self._notes.get(p)) is None or n.content_hash != h)
            gone = sorted(p for p in self._notes if p not in current)
        return stale, gone

    def set_note(self, path: str, content_hash: str, chunks: Sequence[EmbedChunk]) -> int:
        """Record a note's chunks. Returns how many are queued for embedding (the others were known)."""
        with self._lock:
            keys = [chunk_key(c.text) for c in chunks]
            known = [None if (v := self._known(k)) is None else (v[0].copy(), v[1]) for k in keys]
            old = self._notes.pop(path, None)
            if old is not None:
                self._release(old)
                slot = old.slot
            elif self._free_slots:
                slot = self._free_slots.pop()
                self._slot_path[slot] = path
            else:
                slot = len(self._slot_path)
                self._slot_path.append(path)
            rows = self._alloc(len(keys))
            note = _Note(
                content_hash, keys, [sys.intern(" > ".join(c.heading_path)) for c in chunks], rows, slot, len(keys)
            )
            self._count(note, 1)
            for i, (r, key, vec, chunk) in enumerate(zip(rows.tolist(), keys, known, chunks, strict=True)):
                self._owner[r] = slot
                self._ordinal[r] = i
                self._row_key[r] = key
                if vec is None:
                    self._pending[key] = chunk.text
                else:
                    self._put(note, i, vec)
            self._notes[path] = note
            if note.missing:
                heapq.heappush(self._queue, (self._rank.get(path, LAST), path))
            self.dirty = True
            return note.missing

    def remove(self, paths: Iterable[str]) -> int:
        with self._lock:
            n = 0
            for p in paths:
                note = self._notes.pop(p, None)
                if note is not None:
                    self._release(note)
                    self._slot_path[note.slot] = None
                    self._free_slots.append(note.slot)
                    n += 1
            if n:
                self.dirty = True
            return n

    def prioritise(self, order: Sequence[str]) -> None:
        """Embed the notes of `order` first, in that order; the rest follow by path."""
        rank = {p: i for i, p in enumerate(order)}
        with self._lock:
            if rank != self._rank:
                self._rank = rank
                self._requeue()

    def _requeue(self) -> None:
        self._queue = [(self._rank.get(p, LAST), p) for p, n in self._notes.items() if n.missing]
        heapq.heapify(self._queue)

    def has_pending(self) -> bool:
        with self._lock:
            return self._done < self._total

    def _next(self, limit: int | None) -> list[tuple[str, _Note, list[int]]]:
        """The queue's next chunks: (path, note, chunk numbers) for at most `limit` distinct texts, in queue
        order. Leaves the queue as it was (every entry taken is put back)."""
        out: list[tuple[str, _Note, list[int]]] = []
        popped: list[tuple[int, str]] = []
        seen: set[str] = set()
        visited: set[str] = set()
        while self._queue and (limit is None or len(seen) < limit):
            entry = heapq.heappop(self._queue)
            note = self._notes.get(entry[1])
            if note is None or not note.missing or entry[0] != self._rank.get(entry[1], LAST) or entry[1] in visited:
                continue  # gone, done, queued again under another rank, or listed twice
            visited.add(entry[1])
            popped.append(entry)
            take = []
            for i in np.flatnonzero(~self._has[note.rows]).tolist():
                key = note.keys[i]
                if key not in seen:
                    if limit is not None and len(seen) >= limit:
                        break
                    seen.add(key)
                take.append(i)
            out.append((entry[1], note, take))
        for entry in popped:
            heapq.heappush(self._queue, entry)
        return out

    def pending(self, limit: int | None = None) -> list[str]:
        """Keys of queued chunks, in queue order (a note's chunks together), at most `limit`."""
        with self._lock:
            keys = dict.fromkeys(n.keys[i] for _p, n, take in self._next(limit) for i in take)
            # a chunk whose text another note has had embedded meanwhile only waits to be copied
            return [k for k in keys if self._known(k) is None][:limit]

    def pending_texts(self, limit: int | None = None) -> list[str]:
        """The texts of the queued chunks `pending` lists, in the same order."""
        with self._lock:
            return [self._pending[k] for k in self.pending(limit)]

    def vector_bytes(self) -> int:
        """The bytes the vectors take in memory (codes and scales, freed and spare rows included)."""
        with self._lock:
            return int(self._vectors.nbytes + self._scale.nbytes)

    def embed_pending(self, embedder: TextEmbedder, limit: int) -> int:
        """Embed at most `limit` queued chunks now; returns how many were embedded. The model runs outside
        the lock, so searches go on meanwhile."""
        if embedder.model_id != self.model_id:
            raise ValueError(f"embedder {embedder.model_id!r} does not match the store's {self.model_id!r}")
        texts: dict[str, str] = {}
        with self._lock:
            while not texts and self._done < self._total:
                taken = self._next(limit)
                if not taken:
                    break
                lost: list[str] = []
                for path, note, take in taken:
                    for i in take:
                        key = note.keys[i]
                        vec = self._known(key)
                        if vec is not None:  # another note's identical chunk was embedded meanwhile
                            self._put(note, i, (vec[0].copy(), vec[1]))
                        elif key in self._pending:
                            texts.setdefault(key, self._pending[key])
                        else:
                            lost.append(path)  # neither vector nor text: re-chunked on the next `refresh`
                self.remove(dict.fromkeys(lost))
        if not texts:
            return 0
        keys = list(texts)
        codes, scales = quantize(embedder.embed([texts[k] for k in keys]))
        with self._lock:
            got = {k: (codes[j], float(scales[j])) for j, k in enumerate(keys)}
            for path, note, take in taken:
                if self._notes.get(path) is not note:
                    continue  # replaced or removed while the model ran
                for i in take:
                    vec = got.get(note.keys[i])
                    if vec is not None and not self._has[note.rows[i]]:
                        self._put(note, i, vec)
            for k in keys:
                self._pending.pop(k, None)
                if k not in self._key_row:
                    self._spare[k] = got[k]  # its note changed meanwhile: kept for reuse
            self.dirty = True
        return len(keys)

    def coverage(self) -> Coverage:
        with self._lock:
            return Coverage(self._done, self._total, len(self._notes), self._complete)

    # ----- search -----

    def search(self, query: np.ndarray, limit: int, allowed: set[str] | None = None) -> list[ChunkHit]:
        """The `limit` notes whose best chunk is closest to `query` (a unit vector), best first; a note
        scores by its best chunk. `allowed` restricts the notes considered."""
        return self.search_and_score(query, limit, (), allowed)[0]

    def search_and_score(
        self, query: np.ndarray, limit: int, also: Iterable[str], allowed: set[str] | None = None
    ) -> tuple[list[ChunkHit], dict[str, float]]:
        """`search`, and the best-chunk cosine of each note of `also` that has vectors, from the same pass
        over the vectors."""
        with self._lock:
            if not self._done or limit < 1:
                return [], {}
            scores = self._scores(query)
            scored = self._best_of(scores, also)
            if allowed is not None:
                slots = np.zeros(len(self._slot_path), dtype=bool)
                slots[[n.slot for p in allowed if (n := self._notes.get(p)) is not None]] = True
                scores[~slots[self._owner[: self._used]]] = -np.inf
            return self._best(scores, limit), scored

    def scan(self, query: np.ndarray, limit: int) -> Scan:
        """The query's cosine to every chunk and the `limit` nearest notes (see `Scan`)."""
        with self._lock:
            if not self._done or limit < 1:
                return Scan(np.full(self._used, -np.inf, dtype=np.float32), self._generation, [])
            scores = self._scores(query)
            return Scan(scores, self._generation, self._best(scores, limit))

    def best_cosines(self, scan: Scan, paths: Iterable[str]) -> dict[str, float] | None:
        """The best-chunk cosine of each note of `paths` that has vectors, read from `scan`; None when the
        store has changed since the scan (a row moved or gained its vector): scan again."""
        with self._lock:
            if scan.generation != self._generation:
                return None
            return self._best_of(scan.scores, paths)

    def section_cosines(self, query: np.ndarray, paths: Iterable[str]) -> dict[str, dict[str, float]]:
        """Each note's sections' cosines to `query`, by heading path ("" for the opening text), for the notes
        of `paths` that have vectors (a section cut into several chunks: its best)."""
        out: dict[str, dict[str, float]] = {}
        with self._lock:
            for path in paths:
                note = self._notes.get(path)
                if note is None or not len(note.rows):
                    continue
                has = self._has[note.rows]
                scores = block_cosines(self._vectors[note.rows], self._scale[note.rows], query)
                near: dict[str, float] = {}
                for heading, cosine, known in zip(note.headings, scores.tolist(), has.tolist(), strict=True):
                    if known and cosine > near.get(heading, -2.0):
                        near[heading] = cosine
                out[path] = near
        return out

    def sameness(self) -> float:
        """How alike the model finds the vault's passages: the mean cosine between two different chunks with
        vectors (near 0 for unrelated texts, 1 when every chunk says the same). One pass over the vectors (about
        one query's scan), taken again once the count of chunks with vectors has moved by more than 1 %: a
        vault's sameness barely moves with one edit."""
        with self._lock:
            if self._sameness is not None and abs(self._done - self._sameness[0]) <= self._sameness[0] // 100:
                return self._sameness[1]
            live = self._has[: self._used]
            n = int(live.sum())
            value = 0.0
            if n > 1:  # |sum of n unit rows|^2 = n + the sum of their n(n-1) cosines to one another
                total = block_sum(self._vectors[: self._used], np.where(live, self._scale[: self._used], 0))
                value = min(1.0, max(0.0, (float(total @ total) - n) / (n * (n - 1))))
            self._sameness = (self._done, value)
            return value

    def _scores(self, query: np.ndarray) -> np.ndarray:
        scores = block_cosines(self._vectors[: self._used], self._scale[: self._used], query)
        scores[~self._has[: self._used]] = -np.inf
        return scores

    def _best_of(self, scores: np.ndarray, paths: Iterable[str]) -> dict[str, float]:
        notes = self._notes
        wanted = [
            (path, note)
            for path in paths
            if (note := notes.get(path)) is not None and note.missing < len(note.keys) and len(note.rows)
        ]
        if not wanted:
            return {}
        # each note's best row in one pass (a hybrid search asks for some 200 notes)
        rows = np.concatenate([note.rows for _path, note in wanted])
        starts = np.cumsum([0] + [len(note.rows) for _path, note in wanted[:-1]])
        best = np.maximum.reduceat(scores[rows], starts).tolist()
        return {path: float(b) for (path, _note), b in zip(wanted, best, strict=True)}

    def _best(self, scores: np.ndarray, limit: int) -> list[ChunkHit]:
        fetch = min(len(scores), max(4 * limit, 64))
        while True:
            top = np.argpartition(-scores, fetch - 1)[:fetch] if fetch < len(scores) else np.arange(len(scores))
            top = top[np.argsort(-scores[top], kind="stable")]
            top = top[np.isfinite(scores[top])]
            _notes, first = np.unique(self._owner[top], return_index=True)
            chosen = top[np.sort(first)][:limit]  # each note's best row, best first
            if len(chosen) >= limit or fetch >= len(scores):
                break
            fetch = min(len(scores), fetch * 4)
        out = []
        for r in chosen.tolist():
            path = self._slot_path[int(self._owner[r])]
            assert path is not None
            ordinal = int(self._ordinal[r])
            out.append(ChunkHit(path, float(scores[r]), self._notes[path].headings[ordinal], ordinal))
        return out

    def note_vectors(self, path: str, content_hash: str) -> np.ndarray | None:
        """The float32 vectors of a note's embedded chunks, one row each, when the store holds the note at
        `content_hash` (the catalog's); None when it holds another version, none, or no vector of it yet."""
        with self._lock:
            note = self._notes.get(path)
            if note is None or note.content_hash != content_hash or note.missing == len(note.keys):
                return None
            rows = note.rows[self._has[note.rows]]
            return self._vectors[rows].astype(np.float32) * self._scale[rows][:, None]

    def cosines(self, query: np.ndarray, paths: Iterable[str]) -> dict[str, float]:
        """Best-chunk cosine of each given note that has vectors."""
        with self._lock:
            out: dict[str, float] = {}
            q = query.astype(np.float32)
            for p in paths:
                note = self._notes.get(p)
                if note is not None and note.missing < len(note.keys):
                    rows = note.rows[self._has[note.rows]]
                    out[p] = float(np.max((self._vectors[rows].astype(np.float32) @ q) * self._scale[rows]))
            return out


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros((size, *array.shape[1:]), dtype=array.dtype)
    out[: len(array)] = array
    return out
