"""The BEIR harness: a public retrieval collection scored through the engine.

A BEIR collection (`corpus.jsonl`, `queries.jsonl`, `qrels/test.tsv` or `qrels.tsv`, or another judgments file)
is written out as a vault of its own (one note per document), indexed into a store of its own, and every judged
query is run per search mode, `hybrid` included (the collection is embedded first): nDCG@10, recall@100 and
MRR@10 (`metrics.score_beir_run`) of the whole ranking, which is what those measures are defined on, and of
what `agentmd search` returns through the contract's default confidence floor, where a query the floor
leaves with nothing scores 0. The vault, index and vectors are thrown away, or kept in a folder of their own
so that a second run only searches.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentmd.engine.errors import UsageError
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search import confidence
from agentmd.engine.search import query as query_module
from agentmd.engine.search.eval.metrics import BEIR_DEPTH, note_path, rounded, score_beir_run
from agentmd.engine.search.eval.runs import fmt, max_limit, modes_with_dense
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

if TYPE_CHECKING:
    from agentmd.engine.index.vector_types import TextEmbedder


@dataclass(frozen=True, slots=True)
class BeirCollection:
    corpus_path: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # judged queries only, in file order
    qrels_path: Path


def read_jsonl(path: Path) -> Iterator[dict[str, object]]:
    """The JSON objects of a JSONL file, one per non-blank line (other JSON values skipped)."""
    with path.open("r", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise UsageError(f"{path}:{n}: not JSON ({exc})") from None
            if isinstance(obj, dict):
                yield obj


def load_beir(directory: Path, judgments: Path | None = None) -> BeirCollection:
    """Read a BEIR collection's queries and its test qrels, or the judgments file `judgments` (e.g. a train split);
    the corpus is streamed later."""
    corpus = directory / "corpus.jsonl"
    queries_path = directory / "queries.jsonl"
    if judgments is not None and not judgments.is_file():
        raise UsageError(f"the judgments file {judgments} does not exist; give a qrels TSV: query, document, score")
    defaults = (directory / "qrels" / "test.tsv", directory / "qrels.tsv")
    qrels_path = judgments if judgments is not None else next((p for p in defaults if p.is_file()), None)
    missing = [str(p.name) for p in (corpus, queries_path) if not p.is_file()]
    if qrels_path is None:
        missing.append("qrels/test.tsv or qrels.tsv")
    if missing or qrels_path is None:
        raise UsageError(f"{directory} is not a BEIR collection: missing {', '.join(missing)}")
    queries = {str(q["_id"]): str(q.get("text") or "") for q in read_jsonl(queries_path) if "_id" in q}
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open("r", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or not parts[0].strip():
                continue
            try:
                score = int(float(parts[2]))
            except ValueError:
                if n == 1:
                    continue  # the header line
                raise UsageError(f"{qrels_path}:{n}: score {parts[2]!r} is not a number") from None
            qrels.setdefault(parts[0].strip(), {})[parts[1].strip()] = score
    judged = {q: rels for q, rels in qrels.items() if q in queries and any(s > 0 for s in rels.values())}
    return BeirCollection(corpus, queries, judged, qrels_path)


_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


def doc_slug(doc_id: str) -> str:
    """A safe file stem for a document id (no dots, slashes or spaces; never empty)."""
    slug = _SLUG.sub("-", doc_id).strip("-")[:100]
    return slug or "doc"


def _yaml_string(text: str) -> str:
    # A double-quoted scalar: JSON string escapes are valid YAML; one line, so no block-scalar surprises.
    return json.dumps(" ".join(text.split()), ensure_ascii=False)


def build_beir_vault(corpus_path: Path, vault: Path) -> dict[str, str]:
    """Write one note per BEIR document into `vault`; returns {vault-relative path: document id}."""
    vault.mkdir(parents=True, exist_ok=True)
    paths: dict[str, str] = {}
    taken: set[str] = set()
    for doc in read_jsonl(corpus_path):
        if "_id" not in doc:
            continue
        doc_id = str(doc["_id"])
        stem = doc_slug(doc_id)
        name, n = f"{stem}.md", 1
        while name.lower() in taken:  # slugs that collide (or differ only in case) get a counter
            n += 1
            name = f"{stem}-{n}.md"
        taken.add(name.lower())
        title = str(doc.get("title") or "")
        text = str(doc.get("text") or "")
        front = f"---\ntitle: {_yaml_string(title)}\n---\n" if title.strip() else ""
        (vault / name).write_text(front + text + "\n", encoding="utf-8")
        paths[name] = doc_id
    return paths


MARKER = "agentmd-beir.json"  # in a kept work folder: the collection it holds and each note's document id


@dataclass(frozen=True, slots=True)
class DenseSide:
    """What the `hybrid` mode needs to embed a collection: the embedder (`search.arm.load_embedder`), or the
    reason there is none, and where to report the foreground embedding's progress."""

    embedder: TextEmbedder | None
    reason: str | None = None
    progress: Callable[[Any], None] | None = None


def _work_folder(keep: Path) -> None:
    """Make `keep` ready to hold this collection's vault and cache: a new or empty folder, or one an earlier
    run kept (its marker names the collection); never a folder of anything else."""
    marker = keep / MARKER
    if keep.exists() and not keep.is_dir():
        raise UsageError(f"--work {keep} is a file; give a folder (new, empty, or kept by an earlier run)")
    if keep.is_dir() and any(keep.iterdir()) and not marker.is_file():
        raise UsageError(
            f"--work {keep} holds other files; give a new or empty folder, or one an earlier `eval beir` kept"
        )
    keep.mkdir(parents=True, exist_ok=True)


def _kept_vault(keep: Path, collection: BeirCollection) -> dict[str, str]:
    """The vault in `keep` for this collection (written once; rewritten when the corpus file changed)."""
    marker = keep / MARKER
    stamp = collection.corpus_path.stat()
    source = {"corpus": str(collection.corpus_path.resolve()), "size": stamp.st_size, "mtime_ns": stamp.st_mtime_ns}
    if marker.is_file():
        try:
            held = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            held = {}
        fresh = isinstance(held, dict) and held.get("source") == source and (keep / "vault").is_dir()
        if fresh and isinstance(held.get("doc_of"), dict):
            return {str(k): str(v) for k, v in held["doc_of"].items()}
    marker.write_text(json.dumps({"source": None}), encoding="utf-8")  # a run cut short here is rewritten next time
    vault = keep / "vault"
    if vault.is_dir():
        for old in vault.glob("*.md"):
            old.unlink()
    doc_of = build_beir_vault(collection.corpus_path, vault)
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps({"source": source, "doc_of": doc_of}), encoding="utf-8")
    tmp.replace(marker)
    return doc_of


def run_beir(
    directory: Path,
    *,
    modes: Sequence[str] | None = None,
    limit_queries: int | None = None,
    work_dir: Path | None = None,
    keep_runs: bool = False,
    qrels_path: Path | None = None,
    dense: DenseSide | None = None,
    keep: Path | None = None,
) -> dict[str, object]:
    """Index a BEIR collection into a vault and store of its own, run every judged query per mode.

    Each mode is scored on its whole ranking (the first 100 results, no confidence floor: what nDCG and recall
    are defined on) and, under `floored`, on what `agentmd search` returns with the contract's default floor.
    `hybrid` embeds the collection first (in the foreground, `dense.progress` told after each slice). `keep`
    holds the vault, index and vectors for the next run, which then only searches; without it they go in a
    throwaway folder (under `work_dir`). `qrels_path`: another judgments file (e.g. a train split)."""
    collection = load_beir(directory, qrels_path)
    chosen, skipped = modes_with_dense(modes, dense.embedder if dense else None, dense.reason if dense else None)
    qids = list(collection.qrels)
    if limit_queries is not None:
        if limit_queries < 1:
            raise UsageError("--limit-queries must be at least 1")
        qids = qids[:limit_queries]
    qrels = {q: collection.qrels[q] for q in qids}
    contract = default_contract()
    limit = min(BEIR_DEPTH, max_limit())
    if keep is not None:
        _work_folder(keep)
    with contextlib.ExitStack() as stack:
        home = keep if keep is not None else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="agentmd-beir-", dir=work_dir)
        ))  # fmt: skip
        vault = home / "vault"
        start = time.perf_counter()
        doc_of = _kept_vault(home, collection) if keep is not None else build_beir_vault(collection.corpus_path, vault)
        written = time.perf_counter() - start
        store = stack.enter_context(Store(home / "cache"))
        start = time.perf_counter()
        rec = reconcile(vault, store, allow_mass_delete=True)
        indexed = time.perf_counter() - start
        if rec.errors:
            raise UsageError(f"{len(rec.errors)} documents could not be indexed, e.g. {rec.errors[0]}")
        docs = store.index.doc_count()
        arm = None
        embedding: dict[str, object] | None = None
        if query_module.HYBRID in chosen and dense is not None and dense.embedder is not None:
            arm, embedding = _embed(vault, home / "cache", store, dense)
        floor = confidence.search_floor(store.index, contract.thresholds.search_floor)
        results: dict[str, object] = {}
        runs: dict[str, dict[str, list[str]]] = {}
        for mode in chosen:
            run: dict[str, list[str]] = {}
            floored: dict[str, list[str]] = {}
            start = time.perf_counter()
            for q in qids:
                request = SearchRequest(query=collection.queries[q], limit=limit, mode=mode)
                response = query_module.search(store.index, contract, request, store.catalog, arm, floor=0.0)
                ranked = [(doc_of.get(note_path(r.note)), r) for r in response.results]
                run[q] = [d for d, _r in ranked if d is not None]
                floored[q] = [d for d, r in ranked if d is not None and confidence.clears(r, floor)]
            seconds = time.perf_counter() - start
            results[mode] = _scored(run, qrels) | {
                "seconds": round(seconds, 3),
                "ms_per_query": round(1000 * seconds / max(len(qids), 1), 3),
                "floored": _scored(floored, qrels) | {"floor": round(floor, 4)},
            }
            runs[mode] = run
    report: dict[str, object] = {
        "collection": str(directory),
        "qrels": str(collection.qrels_path),
        "documents": docs,
        "queries": len(qids),
        "judgments": sum(len(r) for r in qrels.values()),
        "depth": limit,
        "build_seconds": {"write_vault": round(written, 3), "index": round(indexed, 3)},
        "modes": results,
    }
    if embedding is not None:
        report["embedding"] = embedding
    if skipped:
        report["skipped"] = skipped
    if keep is not None:
        report["kept"] = str(keep)
    if keep_runs:
        report["runs"] = runs
    return report


def _scored(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]) -> dict[str, object]:
    scores = score_beir_run(run, qrels, recall_k=BEIR_DEPTH)
    return {k: rounded(v) if isinstance(v, float) else v for k, v in scores.items()} | {
        "empty_results": sum(1 for q in qrels if not run.get(q)),
    }


def _embed(vault: Path, cache: Path, store: Store, dense: DenseSide) -> tuple[Any, dict[str, object]]:
    """Embed every chunk of the collection's vault (what a kept folder already holds is not embedded again);
    (the dense arm, what the embedding did)."""
    from agentmd.engine.index.vectors import VectorStore
    from agentmd.engine.search.arm import embed_foreground
    from agentmd.engine.search.hybrid import DenseArm
    from agentmd.engine.settings import Settings

    assert dense.embedder is not None
    embedder = dense.embedder
    current = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
    place = Settings(vault=vault, cache_dir=cache, state_dir=cache, config_file=None, contract_path=None,
                     daily_write_cap=None)  # fmt: skip
    done = embed_foreground(place, current, embedder, dense.progress)
    vectors = VectorStore(cache, embedder.model_id, embedder.dim)
    return DenseArm(vectors, embedder), {
        "model": embedder.model_id,
        "embedded": done.embedded,
        "chunks": done.chunks_total,
        "seconds": round(done.seconds, 3),
    }


def render_beir(report: Mapping[str, Any]) -> str:
    """The `eval beir` report as text: one line per mode, its whole ranking and what the default floor keeps."""
    b = report["build_seconds"]
    lines = [
        f"BEIR {report['collection']}: {report['documents']} documents, {report['queries']} judged queries "
        f"({report['judgments']} judgments); vault written in {b['write_vault']:.2f}s, indexed in {b['index']:.2f}s",
    ]
    emb = report.get("embedding")
    if emb:
        lines.append(
            f"  embedded {emb['embedded']:,} of {emb['chunks']:,} chunks in {emb['seconds']:.1f}s ({emb['model']})"
        )
    floors = {r["floored"]["floor"] for r in report["modes"].values()}
    floor = f"floor {next(iter(floors)):g}" if len(floors) == 1 else "floor"
    lines += [
        f"  {'':<10}  {'whole ranking (no floor)':^44}  {'as `agentmd search` returns, ' + floor:^30}",
        f"  {'mode':<10}  {'nDCG@10':>8}  {'R@100':>8}  {'MRR@10':>8}  {'empty':>6}  {'ms/query':>9}"
        f"  {'nDCG@10':>8}  {'MRR@10':>8}  {'empty':>6}",
    ]
    for mode, r in report["modes"].items():
        f = r["floored"]
        lines.append(
            f"  {mode:<10}  {fmt(r['ndcg@10']):>8}  {fmt(r['recall@100']):>8}  {fmt(r['mrr@10']):>8}"
            f"  {r['empty_results']:>6}  {r['ms_per_query']:>9.2f}"
            f"  {fmt(f['ndcg@10']):>8}  {fmt(f['mrr@10']):>8}  {f['empty_results']:>6}"
        )
    for mode, why in (report.get("skipped") or {}).items():
        lines.append(f"  {mode}: not run ({why})")
    if report.get("kept"):
        lines.append(f"  the vault, index and vectors are kept in {report['kept']}; a second run there only searches")
    return "\n".join(lines)
