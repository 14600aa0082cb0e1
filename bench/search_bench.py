"""Search benchmark at 10,000 notes, in the daemon: question-length and name queries, lexical and hybrid.

Generates a synthetic vault (the generator of index_bench.py; by default its words are the commonest
words of a real English vault, so questions are cut into as many word pieces by the embedding model as a
person's are; `--words made-up` takes made-up words, three or four pieces each), indexes it, fills the
dense arm's vector store, starts the real daemon (`agentmd serve`) in its own process on a loopback port
and sends it what a person and the hook send, over HTTP (`POST /v1/search`, the CLI's and the hook's route):

- questions: 4-12 words taken from a note's text, the recall hook's shape;
- names: a note's title or file name written as words.

Each shape runs in the lexical default (`fusion`) and in `hybrid`; p50/p99 of the round trip. Requests
carry `count_usage: false`, as `agentmd search` and the recall hook send them; one more row,
`lexical_question_counted`, sends the questions as an agent's `memory_search` does, each returned note
counted as a recall (the daemon's background writer updates the catalog after the answer). Before the timed
rows the daemon answers --warm other questions and names (another draw from the same vault, none of the
timed ones), as a daemon that has been searched before has; `--warm 0` times a daemon's first searches.
Bars (issue #10): hybrid p50 <= 20 ms and p99 <= 60 ms, lexical questions p50 <= 5 ms.

While embedding: the same questions again (lexical and hybrid) while the daemon's background worker
embeds: a few hundred notes are edited (one sentence appended), so their chunks are queued again, and the
rows are timed while `/status` says chunks are still pending (`still_embedding` says whether they were
until the last query). The daemon must stay responsive while it embeds.

The floor, measured in the same run: an HTTP round trip to `/health` (the transport alone), plus, in this
process on the same index, one plain BM25 query of the same words (top 10, tantivy alone) and, for hybrid,
one matrix-vector product over every chunk vector with a query embedding (numpy and the model alone); and
the product's own lexical and hybrid searches of the same questions in this process
(`in_process_lexical_question`, `in_process_hybrid_question`: the hybrid embeds each query, new to this
process, on a worker thread beside its lexical arm), so the difference to the daemon's answer is the
daemon's own cost (transport, JSON, threads), and the in-process hybrid over the sum of the lexical search
and embed + scan shows what running the two arms side by side saves.

Vectors: embedding 35,000 chunks takes this machine about half an hour, so the store is filled by a
stand-in embedder that gives each chunk a deterministic unit vector (a search's cost does not depend on the
values; queries are embedded by the real model). The real model's throughput is measured on a sample of
the same chunks, in the daemon's slices of 8, and the time to full coverage is computed from it;
`--real-vectors` embeds every chunk with the real model instead (and reports the time it took).

Also reported: the daemon's resident memory (VmRSS) with every vector loaded and the model warm.

    .venv/bin/python bench/search_bench.py [--notes 10000] [--queries 200] [--real-vectors]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hook_bench import bench_env, daemon_pid, stop_daemon, wait_for_daemon
from index_bench import ENGLISH, english, generate, percentile

from agentmd.engine.client import DaemonClient, access_token
from agentmd.engine.index.embedder import MODEL_ID, shared_embedder
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.index.vector_refresh import note_chunks, refresh
from agentmd.engine.index.vectors import VectorStore
from agentmd.engine.search.hybrid import DenseArm
from agentmd.engine.search.query import search
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import resolve
from agentmd.rules import Contract, default_contract
from agentmd.vault_schema import scripts

BARS = {"hybrid_p50_ms": 20.0, "hybrid_p99_ms": 60.0, "lexical_question_p50_ms": 5.0}
SLICE = 8  # chunks per embedding call, as the daemon's background worker embeds them


class StandIn:
    """An embedder whose vectors are deterministic unit vectors drawn from each text's hash."""

    model_id = MODEL_ID
    dim = 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


def queries(vault: Path, n: int, seed: int = 5) -> dict[str, list[str]]:
    rng = random.Random(seed)
    files = sorted(vault.rglob("*.md"))
    picked = rng.sample(files, min(n, len(files)))
    questions, names = [], []
    for i, path in enumerate(picked):
        text = path.read_text(encoding="utf-8").split("---", 2)[-1]
        words = [w for w in text.split() if w.isalpha() and len(w) > 2]
        questions.append(" ".join(rng.sample(words, min(rng.randint(4, 12), len(words)))))
        stem = path.stem.rsplit("-", 1)[0]
        names.append(stem.replace("-", " ") if i % 2 else f"{path.stem.replace('-', ' ')}")
    return {"question": questions, "name": names}


def fill_vectors(settings_cache: Path, vault: Path, catalog_hashes: dict[str, str], real: bool) -> dict[str, float]:
    store = VectorStore(settings_cache, MODEL_ID)
    model = shared_embedder()
    keep, chunks = scripts.chunk_rule(model)  # the chunks the daemon gives its model, so it cuts none again
    t0 = time.perf_counter()
    refresh(store, vault, catalog_hashes, keep=keep, chunks=chunks)
    chunking_s = time.perf_counter() - t0
    total = store.coverage().total
    sample = store.pending_texts(256)  # the texts the daemon would embed first
    for path in sorted(catalog_hashes) if not sample else ():  # a kept vault embedded before: its first notes
        got = note_chunks(vault, path)
        sample += [c.text for c in got[1]] if got else []
        if len(sample) >= 256:
            break
    sample = sample[:256]
    model.embed(sample[:SLICE])  # load and warm the model
    t0 = time.perf_counter()
    for i in range(0, len(sample), SLICE):
        model.embed(sample[i : i + SLICE])
    rate = len(sample) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    embedder = model if real else StandIn()
    while store.embed_pending(embedder, 512 if not real else SLICE):
        pass
    fill_s = time.perf_counter() - t0
    store.save()
    return {
        "chunks": total,
        "chunking_s": round(chunking_s, 2),
        "model_chunks_per_s": round(rate, 1),
        "coverage_eta_s": round(total / rate, 1),
        "fill_s": round(fill_s, 2),
        "real_vectors": real,
    }


def embedding_state(client: DaemonClient) -> tuple[int, int]:
    dense = client.get("/status").get("dense") or {}
    return int(dense.get("chunks_done") or 0), int(dense.get("chunks_total") or 0)


def while_embedding(client: DaemonClient, vault: Path, asked: list[str], edits: int) -> dict[str, object]:
    """Edit `edits` notes so the daemon re-embeds their chunks, then time the questions while it does."""
    files = sorted(vault.rglob("*.md"))[:edits]
    for path in files:
        with path.open("a", encoding="utf-8") as fh:
            fh.write("\nA sentence appended so that this note's last chunk is embedded again.\n")
    deadline = time.monotonic() + 120
    while True:
        done, total = embedding_state(client)
        if total and done < total:
            break
        if time.monotonic() > deadline:
            return {"error": "the daemon did not start embedding the edited notes within 120 s"}
        time.sleep(0.1)
    out: dict[str, object] = {"pending_chunks_at_start": total - done}
    for mode in ("fusion", "hybrid"):
        got = timed(client, [{"query": q, "mode": mode, "count_usage": False} for q in asked])
        out[f"{'lexical' if mode == 'fusion' else mode}_question"] = summary(got)
    done, total = embedding_state(client)
    out["still_embedding"] = done < total
    return out


def timed(client: DaemonClient, payloads: list[dict[str, object]]) -> list[float]:
    out = []
    for p in payloads:
        t0 = time.perf_counter()
        answer = client.post("/v1/search", p)
        out.append((time.perf_counter() - t0) * 1000)
        assert "results" in answer, answer
    return out


def summary(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(values, 0.5), 2), "p99_ms": round(percentile(values, 0.99), 2)}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def floors(
    cache: Path, vault: Path, asked: dict[str, list[str]], http: DaemonClient, contract: Contract
) -> dict[str, float]:
    health = []
    for _ in range(100):
        t0 = time.perf_counter()
        http.get("/health")
        health.append((time.perf_counter() - t0) * 1000)
    model = shared_embedder()
    store = VectorStore(cache, MODEL_ID)
    bm25, dense, lexical, hybrid = [], [], [], []
    arm = DenseArm(store, model)
    with Store(cache) as st:
        for q in asked["question"][:10]:  # warm, as the daemon was
            search(st.index, contract, SearchRequest(query=q, mode="fusion"), st.catalog)
            search(st.index, contract, SearchRequest(query=q, mode="hybrid"), st.catalog, arm)
        for q in asked["question"]:
            t0 = time.perf_counter()
            st.index.search(q.split(), limit=10, conjunction=False)
            bm25.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            qv = model.embed([q])[0].astype(np.float32)
            store.scan(qv, 10)  # every chunk's cosine (int8 rows), the 10 nearest notes
            dense.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            json.dumps(search(st.index, contract, SearchRequest(query=q, mode="fusion"), st.catalog).to_json())
            lexical.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()  # the query is new to this process: it is embedded, beside the lexical arm
            json.dumps(search(st.index, contract, SearchRequest(query=q, mode="hybrid"), st.catalog, arm).to_json())
            hybrid.append((time.perf_counter() - t0) * 1000)
    return {
        "http_health_p50_ms": round(percentile(health, 0.5), 2),
        "bm25_question_p50_ms": round(percentile(bm25, 0.5), 2),
        "embed_and_scan_p50_ms": round(percentile(dense, 0.5), 2),
        "in_process_lexical_question_p50_ms": round(percentile(lexical, 0.5), 2),
        "in_process_lexical_question_p99_ms": round(percentile(lexical, 0.99), 2),
        "in_process_hybrid_question_p50_ms": round(percentile(hybrid, 0.5), 2),
        "in_process_hybrid_question_p99_ms": round(percentile(hybrid, 0.99), 2),
        "vectors": store.coverage().done,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--real-vectors", action="store_true", help="embed every chunk with the real model")
    ap.add_argument("--keep", help="work in this folder and keep it (a kept vault is reused, as it is)")
    ap.add_argument("--edits", type=int, default=300, help="notes edited to time searches while embedding")
    ap.add_argument("--warm", type=int, default=200, help="other questions and names asked before the timed rows")
    ap.add_argument(
        "--words",
        choices=("english", "made-up"),
        default="english",
        help=f"the vault's words: the commonest words of {ENGLISH} (default) or made-up ones",
    )
    args = ap.parse_args()

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="agentmd-search-bench-"))
    vault = work / "vault"
    env = bench_env(work, vault)
    serve: subprocess.Popen[bytes] | None = None
    try:
        if not vault.is_dir():
            generate(vault, args.notes, words_of=english() if args.words == "english" else None)
        settings = resolve(vault=str(vault), env=env)
        with Store(settings.cache_dir) as store:
            reconcile(vault, store)
            hashes = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
        vectors = fill_vectors(settings.cache_dir, vault, hashes, args.real_vectors)
        asked = queries(vault, args.queries)

        serve = subprocess.Popen(
            [sys.executable, "-m", "agentmd", "serve", "--port", "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        port = wait_for_daemon(settings.state_dir, serve)
        client = DaemonClient(port, timeout=30, token=access_token(settings.state_dir))
        deadline = time.monotonic() + 300
        while True:
            dense = client.get("/status").get("dense") or {}
            if dense.get("chunks_total") and dense.get("chunks_done") == dense.get("chunks_total"):
                break
            if dense.get("state") == "lexical-only" or time.monotonic() > deadline:
                raise SystemExit(f"the daemon's dense arm is not ready: {dense}")
            time.sleep(0.2)

        # A daemon runs for days: before the timed rows it answers other questions and names of the same vault
        # (another draw), once in each mode, as a daemon that has been searched before has. Each timed query is
        # new to it, so its embedding is never cached.
        warm = queries(vault, args.warm, seed=6) if args.warm else {}
        timed_texts = {q for texts in asked.values() for q in texts}
        for texts in warm.values():
            for q in (q for q in texts if q not in timed_texts):
                for mode in ("fusion", "hybrid"):
                    client.post("/v1/search", {"query": q, "mode": mode, "count_usage": False})
        latency: dict[str, dict[str, float]] = {}
        for shape, texts in asked.items():
            for mode in ("fusion", "hybrid"):
                got = timed(client, [{"query": q, "mode": mode, "count_usage": False} for q in texts])
                latency[f"{'lexical' if mode == 'fusion' else mode}_{shape}"] = summary(got)
        counted = timed(client, [{"query": q, "mode": "fusion"} for q in asked["question"]])
        latency["lexical_question_counted"] = summary(counted)
        rss = rss_kib(daemon_pid(settings.state_dir))
        floor = floors(settings.cache_dir, vault, asked, client, default_contract())
        embedding = while_embedding(client, vault, asked["question"], args.edits) if args.edits else {}
        result = {
            "notes": args.notes,
            "words": args.words,
            "warmed_with": args.warm,
            "queries_per_shape": args.queries,
            "latency": latency,
            "floor": floor,
            "while_embedding": embedding,
            "daemon_rss_mib": round(rss / 1024, 1),
            "vectors": vectors,
            "bars": BARS,
        }
        result["pass"] = {
            "hybrid_p50": max(latency["hybrid_question"]["p50_ms"], latency["hybrid_name"]["p50_ms"])
            <= BARS["hybrid_p50_ms"],
            "hybrid_p99": max(latency["hybrid_question"]["p99_ms"], latency["hybrid_name"]["p99_ms"])
            <= BARS["hybrid_p99_ms"],
            "lexical_question_p50": latency["lexical_question"]["p50_ms"] <= BARS["lexical_question_p50_ms"],
        }
        print(json.dumps(result, indent=2))
        print(
            f"\n{args.notes} notes ({args.words} words), {vectors['chunks']} chunks, {args.queries} queries a shape,"
            " daemon over HTTP:"
        )
        for name, row in latency.items():
            print(f"  {name:18s} p50 {row['p50_ms']:6.2f} ms  p99 {row['p99_ms']:6.2f} ms")
        print(
            f"  floor: HTTP /health {floor['http_health_p50_ms']} ms; BM25 alone {floor['bm25_question_p50_ms']} ms;"
            f" embed + scan {floor['vectors']} vectors {floor['embed_and_scan_p50_ms']} ms; lexical search in"
            f" process {floor['in_process_lexical_question_p50_ms']} ms, hybrid search in process"
            f" {floor['in_process_hybrid_question_p50_ms']} ms (p50)"
        )
        lex, hyb = latency["lexical_question"]["p50_ms"], latency["hybrid_question"]["p50_ms"]
        summed = floor["in_process_lexical_question_p50_ms"] + floor["embed_and_scan_p50_ms"]
        side_by_side = floor["in_process_hybrid_question_p50_ms"] / max(summed, 1e-9)
        print(
            f"  ratios (p50): lexical question / BM25 alone {lex / max(floor['bm25_question_p50_ms'], 1e-9):.2f},"
            f" / in process {lex / max(floor['in_process_lexical_question_p50_ms'], 1e-9):.2f};"
            f" hybrid question / embed + scan {hyb / max(floor['embed_and_scan_p50_ms'], 1e-9):.2f},"
            f" / in process {hyb / max(floor['in_process_hybrid_question_p50_ms'], 1e-9):.2f}; in process, hybrid /"
            f" (lexical + embed and scan) {side_by_side:.2f}"
        )
        for name in ("lexical_question", "hybrid_question"):
            during = embedding.get(name)
            if isinstance(during, dict):
                print(
                    f"  while embedding ({embedding['pending_chunks_at_start']} chunks pending, still embedding at"
                    f" the end: {embedding['still_embedding']}): {name} p50 {during['p50_ms']} ms"
                    f" p99 {during['p99_ms']} ms"
                )
        print(
            f"  daemon RSS {result['daemon_rss_mib']} MiB; model {vectors['model_chunks_per_s']} chunks/s, full"
            f" coverage of {vectors['chunks']} chunks in about {vectors['coverage_eta_s'] / 60:.0f} min"
        )
        print("  bars: " + ", ".join(f"{k} {'pass' if v else 'FAIL'}" for k, v in result["pass"].items()))
        return 0
    finally:
        stop_daemon(serve, timeout=120)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
