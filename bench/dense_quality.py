"""What the vector store's compact formats cost the dense arm: float32, float16, int8 with a scale per vector
(what the store keeps) and int8 with a scale per dimension, scored on SciFact and the dev fixtures.

Run through `bench/dense_compact_bench.py quality` (see its docstring); `embed-dev` fills the dev corpora's
vector caches alone:

    .venv/bin/python bench/dense_quality.py embed-dev [--corpus NAME ...]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from agentmd.engine.index.embedder import shared_embedder  # noqa: E402
from agentmd.engine.index.reconcile import reconcile  # noqa: E402
from agentmd.engine.index.store import Store  # noqa: E402
from agentmd.engine.index.vector_refresh import note_chunks  # noqa: E402
from agentmd.engine.search.eval.fixtures import load_fixtures  # noqa: E402
from agentmd.engine.search.eval.metrics import FixtureCase  # noqa: E402
from agentmd.vault_schema import scripts  # noqa: E402

CORPORA = REPO.parent / "shared" / "corpora"
FIXTURES = REPO / "bench" / "fixtures"
DEV_CORPORA = ("obsidian-tasks", "ailurus-zh", "dendron-site", "vaultofknowledge")
CACHE = Path(tempfile.gettempdir())


def dev_cases(corpus: str) -> list[FixtureCase]:
    return [c for f in sorted(FIXTURES.glob(f"dev-{corpus}*.jsonl")) for c in load_fixtures(f)[0]]


def dev_cache(corpus: str) -> Path:
    return CACHE / f"agentmd-dense-dev-{corpus}.npz"


def embed_dev(corpus: str) -> dict[str, np.ndarray]:
    """The corpus's chunk vectors (every indexed note, the chunks the model reads) and its dev questions'
    vectors, from the cache or made now by the real model."""
    cache = dev_cache(corpus)
    model = shared_embedder()
    cases = dev_cases(corpus)
    if cache.is_file():
        with np.load(cache, allow_pickle=False) as data:
            if str(data["model_id"]) == model.model_id and [str(q) for q in data["queries"]] == [
                c.query for c in cases
            ]:
                return {k: data[k] for k in data.files}
    keep, _rule = scripts.chunk_rule(model)
    paths: list[str] = []
    owner: list[int] = []
    texts: list[str] = []
    with tempfile.TemporaryDirectory(prefix="agentmd-devq-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(CORPORA / corpus, vault, ignore=shutil.ignore_patterns(".git"))
        with Store(Path(tmp) / "cache") as store:
            reconcile(vault, store, allow_mass_delete=True)
            listed = sorted(store.catalog.paths())
        for path in listed:
            got = note_chunks(vault, path)
            if got is None:
                continue
            kept = [c.text for c in got[1] if keep is None or keep(c.text)]
            if kept:
                owner.extend([len(paths)] * len(kept))
                paths.append(path)
                texts.extend(kept)
    print(f"{corpus}: embedding {len(texts)} chunks of {len(paths)} notes ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    parts = []
    for i in range(0, len(texts), 64):
        parts.append(model.embed(texts[i : i + 64]))
        done = i + len(parts[-1])
        print(f"  {corpus}: {done}/{len(texts)} ({done / (time.perf_counter() - start):.1f}/s)", file=sys.stderr)
    arrays = {
        "model_id": np.array(model.model_id),
        "paths": np.array(paths),
        "owner": np.array(owner, dtype=np.int32),
        "chunk_vectors": np.concatenate(parts) if parts else np.zeros((0, model.dim), np.float32),
        "queries": np.array([c.query for c in cases]),
        "query_vectors": model.embed([c.query for c in cases]),
    }
    tmp_file = cache.with_name(cache.name + ".tmp.npz")
    np.savez(tmp_file, **arrays)
    tmp_file.replace(cache)
    return arrays


# ----- the formats -----


def per_vector_int8(vectors: np.ndarray) -> np.ndarray:
    """int8 with one scale per vector, as the store keeps them, read back as float32."""
    from agentmd.engine.index.vector_codes import quantize

    codes, scales = quantize(vectors)
    return codes.astype(np.float32) * scales[:, None]


def per_dimension_int8(vectors: np.ndarray) -> np.ndarray:
    """int8 with one scale per dimension (each dimension's largest magnitude over the corpus), as float32."""
    scales = np.abs(vectors).max(axis=0) / 127
    scales[scales == 0] = 1
    return np.clip(np.rint(vectors / scales), -127, 127).astype(np.int8).astype(np.float32) * scales


FORMATS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "float32": lambda v: v.astype(np.float32),
    "float16": lambda v: v.astype(np.float16).astype(np.float32),
    "int8_per_vector": per_vector_int8,
    "int8_per_dimension": per_dimension_int8,
}


def note_ranking(vectors: np.ndarray, owner: np.ndarray, notes: int, query: np.ndarray) -> np.ndarray:
    """Note numbers, best first, by their best chunk's cosine (notes without chunks last)."""
    best = np.full(notes, -np.inf, dtype=np.float32)
    np.maximum.at(best, owner, vectors @ query.astype(np.float32))
    return np.argsort(-best, kind="stable")


def score_dev(corpus: str) -> dict[str, Any]:
    data = embed_dev(corpus)
    cases = dev_cases(corpus)
    paths = [str(p) for p in data["paths"]]
    pos = {p: i for i, p in enumerate(paths)}
    base = data["chunk_vectors"].astype(np.float32)
    answerable = [(n, c) for n, c in enumerate(cases) if c.answerable]
    out: dict[str, Any] = {"notes_with_vectors": len(paths), "chunks": len(base), "answerable": len(answerable)}
    reference: dict[int, list[int]] = {}
    for name, encode in FORMATS.items():
        vectors = encode(base)
        hits5 = hits15 = 0
        rr = 0.0
        same_top15 = 0
        for n, case in answerable:
            order = note_ranking(vectors, data["owner"], len(paths), data["query_vectors"][n])[:100].tolist()
            targets = {pos[t] for t in case.targets if t in pos}
            rank = next((i for i, p in enumerate(order) if p in targets), None)
            hits5 += rank is not None and rank < 5
            hits15 += rank is not None and rank < 15
            rr += 1 / (rank + 1) if rank is not None and rank < 10 else 0.0
            if name == "float32":
                reference[n] = order[:15]
            same_top15 += order[:15] == reference[n]
        k = max(1, len(answerable))
        out[name] = {
            "recall@5": round(hits5 / k, 4),
            "recall@15": round(hits15 / k, 4),
            "mrr@10": round(rr / k, 4),
            "top15_as_float32": f"{same_top15}/{len(answerable)}",
            "min_cosine_to_float32": _min_cosine(vectors, base),
        }
    return out


def _min_cosine(vectors: np.ndarray, base: np.ndarray) -> float:
    if not len(base):
        return 1.0
    cos = np.sum(vectors * base, axis=1) / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(base, axis=1))
    return round(float(cos.min()), 6)


def score_scifact(cache: Path) -> dict[str, Any]:
    """SciFact train and test: the dense arm alone and the shipped fusion, per format."""
    import dense_bench

    from agentmd.engine.search.hybrid import CHOSEN, FusionRule

    directory = CORPORA / "ir" / "scifact"
    queries = {
        str(q["_id"]): str(q.get("text") or "") for q in dense_bench.beir.read_jsonl(directory / "queries.jsonl")
    }
    train = dense_bench.read_qrels(directory / "qrels-train.tsv")
    test = dense_bench.read_qrels(directory / "qrels.tsv")
    qids = sorted({*train, *test} & set(queries), key=lambda q: (len(q), q))
    emb = dense_bench.embed_cached(directory, cache, qids, queries)
    train_q = [q for q in emb["qids"] if q in train]
    test_q = [q for q in emb["qids"] if q in test]
    lexical = dense_bench.lexical_runs(directory, [*train_q, *test_q], queries)
    base = emb["chunk_vectors"].astype(np.float32)
    out: dict[str, Any] = {"documents": len(emb["doc_ids"]), "chunks": len(base), "queries": len(qids)}
    for name, encode in FORMATS.items():
        dense = dense_bench.dense_lists([*train_q, *test_q], lexical, emb, encode(base))
        row: dict[str, Any] = {"min_cosine_to_float32": _min_cosine(encode(base), base)}
        for split, split_q, qrels in (("train", train_q, train), ("test", test_q, test)):
            for label, rule in (("dense", FusionRule("dense")), ("hybrid", CHOSEN)):
                s = dense_bench._score(dense_bench.run_rule(rule, split_q, lexical, dense), qrels)
                row[f"{split}_{label}"] = {"ndcg@10": s["ndcg@10"], "recall@100": s["recall@100"]}
        out[name] = row
        print(f"  scifact {name}: {row}", file=sys.stderr, flush=True)
    return out


def quality(corpora: list[str] | None, scifact_cache: Path | None) -> dict[str, Any]:
    report: dict[str, Any] = {"formats": list(FORMATS)}
    for corpus in corpora or DEV_CORPORA:
        report[f"dev-{corpus}"] = score_dev(corpus)
        print(f"  dev-{corpus}: {report[f'dev-{corpus}']}", file=sys.stderr, flush=True)
    if scifact_cache is not None:
        report["scifact"] = score_scifact(scifact_cache)
    return report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["embed-dev"])
    ap.add_argument("--corpus", action="append")
    args = ap.parse_args()
    for corpus in args.corpus or DEV_CORPORA:
        embed_dev(corpus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
