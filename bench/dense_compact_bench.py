"""The vector store at scale, and what its compact vectors cost in quality.

    .venv/bin/python bench/dense_compact_bench.py scale [--sizes 10000,100000] [--queries 200] [--json-out FILE]
    .venv/bin/python bench/dense_compact_bench.py scan [--sizes 350000] [--rounds 20]
    .venv/bin/python bench/dense_compact_bench.py quality [--corpus NAME ...] [--scifact-cache FILE] [--json-out FILE]

`scale` fills a store with random unit vectors (not the real embedder: 100,000 chunks would take hours to embed,
and a search's cost and a store's size do not depend on the vectors' values), saves it, and then, in a fresh
process per size, opens it and runs `--queries` random queries through `VectorStore.scan` (what a hybrid search
calls) and `VectorStore.search`. Printed as JSON: the file's bytes per chunk, the resident memory the open store
adds per chunk (VmRSS before and after opening it), the peak while opening, the open time, and search p50/p99.

`scan` times one full scan of random unit vectors kept as float32, float16 and int8, taking turns in one process
(the float16 and int8 rows converted a block at a time, as the store scans), to choose between them.

`quality` ranks notes by their best chunk's cosine, with the chunk vectors as float32 (what the model gives),
as float16, as int8 with one scale per vector (what the store keeps, `vectors.quantize`) and as int8 with one
scale per dimension (each dimension's largest magnitude over the corpus), and scores each ranking:

- SciFact (BEIR test and train qrels, `../shared/corpora/ir/scifact`): the dense arm alone and the shipped
  fusion (`hybrid.CHOSEN`, with the engine's own lexical list), nDCG@10 and recall@100, from the real model's
  vectors cached by `bench/dense_bench.py --embed-only`;
- the dev fixtures (`bench/fixtures/dev-<corpus>*.jsonl`): the dense arm alone, recall@5/@15 and MRR over the
  answerable questions, every note of the vault indexed and embedded by the real model (cached under /tmp per
  corpus, as the store would cut them: the chunks the model reads).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from agentmd.engine.index.vectors import VectorStore  # noqa: E402
from agentmd.vault_schema import EmbedChunk  # noqa: E402

CORPORA = REPO.parent / "shared" / "corpora"
FIXTURES = REPO / "bench" / "fixtures"
PER_NOTE = 4  # chunks per synthetic note (the shared vaults average 3 to 5)
CANDIDATES = 200


# ----- scale -----


class RandomEmbedder:
    """Random unit vectors, for sizing the store without the model."""

    def __init__(self, dim: int = 384, seed: int = 7) -> None:
        self.model_id = "random-unit"
        self.dim = dim
        self._rng = np.random.default_rng(seed)

    def embed(self, texts: list[str]) -> np.ndarray:
        v = self._rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def build(cache: Path, size: int) -> float:
    """A saved store of `size` random chunk vectors; returns the seconds it took."""
    start = time.perf_counter()
    fake = RandomEmbedder()
    store = VectorStore(cache, fake.model_id)
    for n in range((size + PER_NOTE - 1) // PER_NOTE):
        count = min(PER_NOTE, size - n * PER_NOTE)
        store.set_note(f"n{n}.md", str(n), [EmbedChunk(i, (), f"note {n} chunk {i}") for i in range(count)])
    while store.embed_pending(fake, 8192):
        pass
    store.save()
    return time.perf_counter() - start


def status_mib() -> dict[str, float]:
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _colon, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(rest.split()[0]) / 1024
    return fields


def measure_open(cache: Path, size: int, n_queries: int) -> dict[str, Any]:
    """Run in a fresh process: open the store, then time scans and searches."""
    fake = RandomEmbedder(seed=11)
    queries = fake.embed(["q"] * n_queries)
    before = status_mib()
    start = time.perf_counter()
    store = VectorStore(cache, fake.model_id)
    open_s = time.perf_counter() - start
    opened = status_mib()
    assert store.coverage().done == size, store.coverage()
    scan_ms, search_ms = [], []
    store.scan(queries[0], CANDIDATES)
    for q in queries:
        t0 = time.perf_counter()
        store.scan(q, CANDIDATES)
        t1 = time.perf_counter()
        store.search(q, 10)
        scan_ms.append(1000 * (t1 - t0))
        search_ms.append(1000 * (time.perf_counter() - t1))
    after = status_mib()
    return {
        "chunks": size,
        "file_bytes_per_chunk": round((cache / "vectors.npz").stat().st_size / size, 1),
        "open_s": round(open_s, 3),
        "rss_before_mib": round(before["VmRSS"], 1),
        "store_rss_mib": round(opened["VmRSS"] - before["VmRSS"], 1),
        "store_rss_bytes_per_chunk": round((opened["VmRSS"] - before["VmRSS"]) * 2**20 / size, 1),
        "peak_while_opening_mib": round(opened["VmHWM"] - before["VmRSS"], 1),
        "rss_after_searches_mib": round(after["VmRSS"], 1),
        "scan_top200_ms": {"p50": _pct(scan_ms, 50), "p99": _pct(scan_ms, 99)},
        "search_top10_ms": {"p50": _pct(search_ms, 50), "p99": _pct(search_ms, 99)},
    }


def _pct(values: list[float], q: int) -> float:
    return round(float(np.percentile(values, q)), 2)


def scale(sizes: list[int], n_queries: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "vectors": "random unit vectors (384 dimensions), not the real embedder",
        "chunks_per_note": PER_NOTE,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="agentmd-compact-") as tmp:
            built = build(Path(tmp), size)
            child = subprocess.run(
                [sys.executable, __file__, "_open", tmp, str(size), str(n_queries)],
                check=True,
                capture_output=True,
                text=True,
            )
            out[str(size)] = {"build_s": round(built, 1), **json.loads(child.stdout)}
        print(f"  {size}: {out[str(size)]}", file=sys.stderr, flush=True)
    return out


# ----- the scan per format -----


def scan_formats(rows: int, rounds: int) -> dict[str, Any]:
    """One full scan of `rows` random unit vectors per format, the formats taking turns `rounds` times in this
    process: float32 rows as they are, float16 and int8 rows converted a block at a time into a float32
    buffer (as the store scans its int8 codes, `vector_codes.block_cosines`)."""
    from agentmd.engine.index.vector_codes import BLOCK, block_cosines, quantize

    vectors = RandomEmbedder(seed=5).embed(["v"] * rows)
    query = vectors[0].copy()
    halves = vectors.astype(np.float16)
    codes, scales = quantize(vectors)

    def float32() -> None:
        out = np.empty(rows, dtype=np.float32)
        for i in range(0, rows, BLOCK):
            np.dot(vectors[i : i + BLOCK], query, out=out[i : i + BLOCK])

    def float16() -> None:
        out = np.empty(rows, dtype=np.float32)
        buf = np.empty((BLOCK, vectors.shape[1]), dtype=np.float32)
        for i in range(0, rows, BLOCK):
            block = halves[i : i + BLOCK]
            np.copyto(buf[: len(block)], block)
            np.dot(buf[: len(block)], query, out=out[i : i + BLOCK])

    runs = {"float32": float32, "float16": float16, "int8": lambda: block_cosines(codes, scales, query)}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(1000 * (time.perf_counter() - start))
    return {
        "rows": rows,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        **{f"{name}_ms": {"p50": _pct(t, 50), "min": round(min(t), 2)} for name, t in times.items()},
    }


# ----- quality -----


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "_open":
        print(json.dumps(measure_open(Path(args[1]), int(args[2]), int(args[3]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["scale", "scan", "quality"])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=20, help="scans per format (scan)")
    ap.add_argument("--corpus", action="append", help="dev corpora to embed and score (default: all)")
    ap.add_argument("--scifact-cache", type=Path, default=Path("/tmp/agentmd-dense-scifact.npz"))
    ap.add_argument("--skip-scifact", action="store_true")
    ap.add_argument("--json-out", type=Path)
    opts = ap.parse_args(args)
    if opts.what == "scale":
        report = scale([int(s) for s in opts.sizes.split(",")], opts.queries)
    elif opts.what == "scan":
        report = scan_formats(int(opts.sizes.split(",")[-1]), opts.rounds)
    else:
        from dense_quality import quality

        report = quality(opts.corpus, None if opts.skip_scifact else opts.scifact_cache)
    text = json.dumps(report, ensure_ascii=False)
    if opts.json_out:
        opts.json_out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
