"""The BEIR harness: a public retrieval collection scored through the engine.

A BEIR collection (`corpus.jsonl`, `queries.jsonl`, `qrels/test.tsv` or `qrels.tsv`) is written out as a
throwaway vault (one note per document), indexed into a throwaway store, and every judged query is run per
search mode: nDCG@10, recall@100 and MRR@10 (`metrics.score_beir_run`).
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmd.engine.errors import UsageError
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.eval.metrics import BEIR_DEPTH, note_path, rounded, score_beir_run
from agentmd.engine.search.eval.runs import check_modes, fmt, max_limit, search_paths
from agentmd.rules import default_contract


@dataclass(frozen=True, slots=True)
class BeirCollection:
    corpus_path: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # judged queries only, in file order
    qrels_path: Path


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
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


def load_beir(directory: Path) -> BeirCollection:
    """Read a BEIR collection's queries and test qrels (the corpus is streamed later)."""
    corpus = directory / "corpus.jsonl"
    queries_path = directory / "queries.jsonl"
    qrels_path = next((p for p in (directory / "qrels" / "test.tsv", directory / "qrels.tsv") if p.is_file()), None)
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


def run_beir(
    directory: Path,
    *,
    modes: Sequence[str] | None = None,
    limit_queries: int | None = None,
    work_dir: Path | None = None,
    keep_runs: bool = False,
) -> dict[str, Any]:
    """Index a BEIR collection into a throwaway vault and store, run every judged query per mode."""
    modes = check_modes(modes)
    collection = load_beir(directory)
    qids = list(collection.qrels)
    if limit_queries is not None:
        if limit_queries < 1:
            raise UsageError("--limit-queries must be at least 1")
        qids = qids[:limit_queries]
    qrels = {q: collection.qrels[q] for q in qids}
    contract = default_contract()
    limit = min(BEIR_DEPTH, max_limit())
    with tempfile.TemporaryDirectory(prefix="agentmd-beir-", dir=work_dir) as tmp:
        vault = Path(tmp) / "vault"
        start = time.perf_counter()
        doc_of = build_beir_vault(collection.corpus_path, vault)
        written = time.perf_counter() - start
        with Store(Path(tmp) / "cache") as store:
            start = time.perf_counter()
            rec = reconcile(vault, store, allow_mass_delete=True)
            indexed = time.perf_counter() - start
            if rec.errors:
                raise UsageError(f"{len(rec.errors)} documents could not be indexed, e.g. {rec.errors[0]}")
            docs = store.index.doc_count()
            results: dict[str, Any] = {}
            runs: dict[str, dict[str, list[str]]] = {}
            for mode in modes:
                run: dict[str, list[str]] = {}
                empty = 0
                start = time.perf_counter()
                for q in qids:
                    paths, _r = search_paths(store.index, contract, collection.queries[q], mode, limit)
                    ranked = [doc_of.get(note_path(p)) for p in paths]
                    run[q] = [d for d in ranked if d is not None]
                    empty += not paths
                seconds = time.perf_counter() - start
                scores = score_beir_run(run, qrels, recall_k=BEIR_DEPTH)
                results[mode] = {k: rounded(v) if isinstance(v, float) else v for k, v in scores.items()} | {
                    "empty_results": empty,
                    "seconds": round(seconds, 3),
                    "ms_per_query": round(1000 * seconds / max(len(qids), 1), 3),
                }
                runs[mode] = run
    report: dict[str, Any] = {
        "collection": str(directory),
        "qrels": str(collection.qrels_path),
        "documents": docs,
        "queries": len(qids),
        "judgments": sum(len(r) for r in qrels.values()),
        "depth": limit,
        "build_seconds": {"write_vault": round(written, 3), "index": round(indexed, 3)},
        "modes": results,
    }
    if keep_runs:
        report["runs"] = runs
    return report


def render_beir(report: Mapping[str, Any]) -> str:
    """The `eval beir` report as text: one line per mode."""
    b = report["build_seconds"]
    lines = [
        f"BEIR {report['collection']}: {report['documents']} documents, {report['queries']} judged queries "
        f"({report['judgments']} judgments); vault written in {b['write_vault']:.2f}s, indexed in {b['index']:.2f}s",
        f"  {'mode':<10}  {'nDCG@10':>8}  {'R@100':>8}  {'MRR@10':>8}  {'empty':>6}  {'ms/query':>9}",
    ]
    for mode, r in report["modes"].items():
        lines.append(
            f"  {mode:<10}  {fmt(r['ndcg@10']):>8}  {fmt(r['recall@100']):>8}  {fmt(r['mrr@10']):>8}"
            f"  {r['empty_results']:>6}  {r['ms_per_query']:>9.2f}"
        )
    return "\n".join(lines)
