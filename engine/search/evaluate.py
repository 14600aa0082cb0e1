"""Retrieval evaluation: how well search finds what a user meant, measured on fixtures and on BEIR.

Two harnesses share one set of pure metric functions:

- `eval fixtures`: a JSONL file of hand-written queries against a real vault. Each line is
  `{"id", "query", "expected", "alternates", "category"}`; `expected` is a vault-relative path, or null
  for a question the vault cannot answer. Per search mode it reports recall@K (expected or an alternate
  in the top K; null-expected lines left out), MRR over the fetched ranking, correct rejection (share of
  null-expected queries answered with no results at all), the same per category, the fixture file's
  SHA-256, a corpus fingerprint, and a deterministic miss taxonomy.
- `eval beir`: a BEIR collection (`corpus.jsonl`, `queries.jsonl`, `qrels/test.tsv` or `qrels.tsv`) is
  written out as a throwaway vault (one note per document), indexed into a throwaway store, and every
  judged query is run: nDCG@10 (graded by the qrels score, linear gain as trec_eval computes it),
  recall@100 and MRR@10.

Both call `engine.search.search` directly: an evaluation is not usage and must never be counted as such.
Miss taxonomy (first that applies, against the smallest K the query missed):

- `not_indexed`: neither the expected path nor any alternate is in the index.
- `ranking_loss`: the mode's query returns the note, but at rank R greater than K (R reported; when every
  query word reaches the note yet it is not within the fetched depth, R is null and `beyond` the depth).
- `walled`: the note comes back only with include_archived (an archived, superseded or staged note).
- `vocabulary_mismatch`: not one query word that carries meaning (stop words aside, as the engine's
  `query_terms` judges them), searched alone and restricted to the note, matches it.
- `partial_match`: some meaningful query words reach the note, yet the mode's query does not return it
  within the fetched depth (for `and`: a word the note lacks; for `fusion`: no word group it satisfies);
  the words that reach it and the words that do not are listed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import re
import tempfile
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from agentmd.engine.errors import IndexBusy, UsageError
from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search import searcher as search_module
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import resolve
from agentmd.rules import Contract, default_contract, load_contract

DEFAULT_KS = (5, 15)
BEIR_DEPTH = 100  # results fetched per BEIR query (recall@100 needs them all)
NDCG_K = 10
MRR_K = 10
MISS_KINDS = ("not_indexed", "ranking_loss", "walled", "vocabulary_mismatch", "partial_match")


def _max_limit() -> int:
    return int(getattr(search_module, "MAX_LIMIT", 200))


def available_modes() -> tuple[str, ...]:
    """The search modes the engine knows right now (read at call time, never cached)."""
    return tuple(search_module.MODES)


# -- pure metrics ------------------------------------------------------------------------------------


def note_path(result_path: str) -> str:
    """The note a result belongs to: a section result `a/b.md#Heading` counts as `a/b.md`."""
    head, sep, _tail = result_path.partition(".md#")
    return head + ".md" if sep else result_path


def rank_of(paths: Sequence[str], targets: Collection[str]) -> int | None:
    """1-based rank of the first result that is one of `targets` (sections count as their note)."""
    wanted = set(targets)
    for i, p in enumerate(paths, 1):
        if note_path(p) in wanted:
            return i
    return None


def hit_at(rank: int | None, k: int) -> bool:
    return rank is not None and rank <= k


def recall_at(ranks: Sequence[int | None], k: int) -> float | None:
    """Share of queries whose target is in the top k (None when there are no queries)."""
    if not ranks:
        return None
    return sum(hit_at(r, k) for r in ranks) / len(ranks)


def reciprocal_rank(rank: int | None, cutoff: int | None = None) -> float:
    if rank is None or (cutoff is not None and rank > cutoff):
        return 0.0
    return 1.0 / rank


def mean_reciprocal_rank(ranks: Sequence[int | None], cutoff: int | None = None) -> float | None:
    if not ranks:
        return None
    return sum(reciprocal_rank(r, cutoff) for r in ranks) / len(ranks)


def correct_rejection(result_counts: Sequence[int]) -> float | None:
    """Share of unanswerable queries that got no results at all (None when there are none)."""
    if not result_counts:
        return None
    return sum(1 for n in result_counts if n == 0) / len(result_counts)


def dcg(gains: Sequence[float], k: int) -> float:
    """Discounted cumulative gain with linear gain: sum of gain_i / log2(i + 1) over the top k."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def ndcg_at(ranked_ids: Sequence[str], qrels: Mapping[str, int], k: int = NDCG_K) -> float:
    """nDCG@k of one ranking against graded judgments (score > 0 is relevant; ideal from the qrels)."""
    ideal = sorted((s for s in qrels.values() if s > 0), reverse=True)
    best = dcg(ideal, k)
    if best == 0:
        return 0.0
    gains = [max(qrels.get(d, 0), 0) for d in _dedupe(ranked_ids)]
    return dcg(gains, k) / best


def recall_of_relevant(ranked_ids: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Share of the relevant documents (qrels score > 0) found in the top k."""
    relevant = {d for d, s in qrels.items() if s > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(_dedupe(ranked_ids)[:k])) / len(relevant)


def mrr_at(ranked_ids: Sequence[str], qrels: Mapping[str, int], k: int = MRR_K) -> float:
    """1/rank of the first relevant document within the top k, else 0."""
    for i, d in enumerate(_dedupe(ranked_ids)[:k], 1):
        if qrels.get(d, 0) > 0:
            return 1.0 / i
    return 0.0


def _dedupe(ids: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for d in ids:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def score_beir_run(
    run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]], *, recall_k: int = BEIR_DEPTH
) -> dict[str, Any]:
    """Mean nDCG@10, recall@`recall_k` and MRR@10 of a run ({query id: ranked doc ids}) over judged queries.

    Every judged query counts; one missing from `run` scores 0."""
    judged = [q for q, rels in qrels.items() if any(s > 0 for s in rels.values())]
    if not judged:
        return {"queries": 0, "ndcg@10": None, f"recall@{recall_k}": None, "mrr@10": None}
    n = len(judged)
    return {
        "queries": n,
        "ndcg@10": sum(ndcg_at(run.get(q, []), qrels[q], NDCG_K) for q in judged) / n,
        f"recall@{recall_k}": sum(recall_of_relevant(run.get(q, []), qrels[q], recall_k) for q in judged) / n,
        "mrr@10": sum(mrr_at(run.get(q, []), qrels[q], MRR_K) for q in judged) / n,
    }


# -- fixtures: model and pure scoring ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FixtureCase:
    id: str
    query: str
    expected: str | None
    alternates: tuple[str, ...] = ()
    category: str = "uncategorized"
    extra: Mapping[str, Any] = field(default_factory=dict)  # other keys (e.g. corpus, note), kept as given

    @property
    def answerable(self) -> bool:
        return self.expected is not None

    @property
    def targets(self) -> tuple[str, ...]:
        return ((self.expected,) if self.expected else ()) + self.alternates


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """What one query did in one mode: the inputs of every fixture metric."""

    case: FixtureCase
    rank: int | None  # rank of the first acceptable note in the fetched results (None: not there)
    result_count: int
    top: tuple[str, ...] = ()  # the first few result paths, for the report
    miss: dict[str, Any] | None = None  # taxonomy entry when the query missed at the smallest K


def summarize(outcomes: Sequence[QueryOutcome], ks: Sequence[int]) -> dict[str, Any]:
    """Recall@K, MRR and correct rejection over a set of outcomes (pure)."""
    ranks = [o.rank for o in outcomes if o.case.answerable]
    counts = [o.result_count for o in outcomes if not o.case.answerable]
    out: dict[str, Any] = {"answerable": len(ranks), "no_answer": len(counts)}
    for k in ks:
        out[f"recall@{k}"] = _round(recall_at(ranks, k))
        out[f"hits@{k}"] = sum(hit_at(r, k) for r in ranks)
    out["mrr"] = _round(mean_reciprocal_rank(ranks))
    out["correct_rejection"] = _round(correct_rejection(counts))
    out["rejected"] = sum(1 for n in counts if n == 0)
    return out


def merge_summaries(summaries: Sequence[Mapping[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    """One summary for several (e.g. one per corpus), weighted by their query counts (pure)."""
    answerable = sum(s["answerable"] for s in summaries)
    no_answer = sum(s["no_answer"] for s in summaries)
    out: dict[str, Any] = {"answerable": answerable, "no_answer": no_answer}
    for k in ks:
        hits = sum(s[f"hits@{k}"] for s in summaries)
        out[f"recall@{k}"] = _round(hits / answerable) if answerable else None
        out[f"hits@{k}"] = hits
    rr = sum((s["mrr"] or 0.0) * s["answerable"] for s in summaries)
    out["mrr"] = _round(rr / answerable) if answerable else None
    rejected = sum(s["rejected"] for s in summaries)
    out["correct_rejection"] = _round(rejected / no_answer) if no_answer else None
    out["rejected"] = rejected
    return out


def summarize_by_category(outcomes: Sequence[QueryOutcome], ks: Sequence[int]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[QueryOutcome]] = {}
    for o in outcomes:
        groups.setdefault(o.case.category, []).append(o)
    return {name: summarize(groups[name], ks) for name in sorted(groups)}


@dataclass(frozen=True, slots=True)
class MissEvidence:
    """What the harness found out about one missed query; `classify_miss` turns it into a verdict."""

    indexed: bool  # the expected path or an alternate is in the index
    rank: int | None  # rank in the mode's own results (beyond K, else it would not be a miss)
    walled_rank: int | None = None  # rank when the walls are lifted (include_archived)
    wall: str | None = None
    reaching_words: tuple[str, ...] = ()  # query words that, alone, match the note
    words: tuple[str, ...] = ()  # every query word that was checked
    content_words: tuple[str, ...] | None = None  # the words that carry meaning (None: all of `words`)
    depth: int | None = None  # how many results were fetched


def classify_miss(evidence: MissEvidence) -> dict[str, Any]:
    """The taxonomy verdict for one miss (pure; see the module docstring for the order)."""
    if not evidence.indexed:
        return {"kind": "not_indexed"}
    if evidence.rank is not None:
        return {"kind": "ranking_loss", "rank": evidence.rank}
    if evidence.walled_rank is not None:
        return {"kind": "walled", "wall": evidence.wall, "rank": evidence.walled_rank}
    content = evidence.words if evidence.content_words is None else evidence.content_words
    reaching = [w for w in content if w in evidence.reaching_words]
    if not reaching:
        return {"kind": "vocabulary_mismatch", "words": list(content)}
    missing = [w for w in evidence.words if w not in evidence.reaching_words]
    if not missing:  # every word reaches the note, so the query matches it: it ranks below the fetched depth
        return {"kind": "ranking_loss", "rank": None, "beyond": evidence.depth}
    return {"kind": "partial_match", "reaching_words": reaching, "missing_words": missing}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


# -- fixtures: I/O -----------------------------------------------------------------------------------


def parse_ks(text: str | Sequence[int]) -> tuple[int, ...]:
    if isinstance(text, str):
        parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
        try:
            ks = [int(p) for p in parts]
        except ValueError:
            raise UsageError(f"--k {text!r} must be comma-separated whole numbers, e.g. 5,15") from None
    else:
        ks = [int(k) for k in text]
    limit = _max_limit()
    if not ks or any(not 1 <= k <= limit for k in ks):
        raise UsageError(f"--k values must be between 1 and {limit}")
    return tuple(sorted(set(ks)))


def check_modes(modes: Iterable[str] | None) -> tuple[str, ...]:
    known = available_modes()
    chosen = tuple(dict.fromkeys(modes)) if modes else known
    for m in chosen:
        if m not in known:
            raise UsageError(f"search mode {m!r} is not known; use one of: {', '.join(known)}")
    return chosen


def load_fixtures(path: Path) -> tuple[list[FixtureCase], str]:
    """The cases of a JSONL fixture file and the SHA-256 of its bytes. Blank lines are skipped."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"could not read fixture file {path}: {exc.strerror or exc}") from None
    sha = hashlib.sha256(data).hexdigest()
    cases: list[FixtureCase] = []
    seen: set[str] = set()
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise UsageError(f"{where}: not JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise UsageError(f"{where}: each line must be a JSON object")
        cid = str(obj.get("id") or f"line-{n}")
        query = obj.get("query")
        expected = obj.get("expected")
        alternates = obj.get("alternates") or []
        category = obj.get("category") or "uncategorized"
        if not isinstance(query, str) or not query.strip():
            raise UsageError(f"{where}: `query` must be a non-empty string")
        if expected is not None and (not isinstance(expected, str) or not expected):
            raise UsageError(f"{where}: `expected` must be a vault-relative path or null")
        if not isinstance(alternates, list) or not all(isinstance(a, str) and a for a in alternates):
            raise UsageError(f"{where}: `alternates` must be a list of vault-relative paths")
        if expected is None and alternates:
            raise UsageError(f"{where}: a no-answer line (expected null) cannot have alternates")
        if not isinstance(category, str):
            raise UsageError(f"{where}: `category` must be a string")
        if cid in seen:
            raise UsageError(f"{where}: id {cid!r} is used twice")
        seen.add(cid)
        extra = {k: v for k, v in obj.items() if k not in ("id", "query", "expected", "alternates", "category")}
        cases.append(FixtureCase(cid, query, expected, tuple(alternates), category, extra))
    if not cases:
        raise UsageError(f"fixture file {path} has no queries")
    return cases, sha


def corpus_fingerprint(store: Store) -> dict[str, Any]:
    """Document count and newest modification time of the indexed notes."""
    stats = store.catalog.stat_keys()
    newest = max((s[0] for s in stats.values()), default=0)
    return {
        "documents": store.index.doc_count(),
        "catalogued": len(stats),
        "newest_mtime": dt.datetime.fromtimestamp(newest / 1e9, dt.UTC).isoformat(timespec="seconds")
        if newest
        else None,
        "newest_mtime_ns": newest,
    }


def _search_paths(
    index: SearchIndex, contract: Contract, query: str, mode: str, limit: int, include_archived: bool = False
) -> tuple[list[str], list[dict[str, Any]]]:
    response = search_module.search(
        index, contract, SearchRequest(query=query, limit=limit, mode=mode, include_archived=include_archived)
    )
    results = response["results"]
    return [r.get("note") or note_path(r["path"]) for r in results], results


def content_words(query: str) -> list[str]:
    """The query words that carry meaning, as the engine judges them (stop words out when it has a list);
    a query of stop words only keeps all its words."""
    terms = getattr(search_module, "query_terms", None)
    words = list(terms(query)) if terms is not None else []
    return words or list(dict.fromkeys(query.split()))


def reaching_words(index: SearchIndex, words: Sequence[str], targets: Collection[str]) -> tuple[str, ...]:
    """The query words that, each searched alone and restricted to the note (walls ignored), match one of
    `targets`."""
    out = []
    for word in dict.fromkeys(words):
        if any(_word_reaches(index, word, t) for t in targets):
            out.append(word)
    return tuple(out)


def _word_reaches(index: SearchIndex, word: str, path: str) -> bool:
    field_scores = getattr(index, "field_scores", None)
    if field_scores is not None:  # a query restricted to the one note: cheap at any vault size
        return any(score > 0 for score in field_scores([word], path).values())
    found = index.search([word], limit=max(index.doc_count(), 1), include_walled=True)
    return any(found.load(i).path == path for i in range(len(found)))


def _investigate(
    index: SearchIndex,
    contract: Contract,
    case: FixtureCase,
    mode: str,
    depth: int,
    rank: int | None,
    indexed_paths: set[str],
) -> dict[str, Any]:
    present = [t for t in case.targets if t in indexed_paths]
    words = tuple(dict.fromkeys(case.query.split()))
    content = tuple(content_words(case.query))
    if not present:
        evidence = MissEvidence(indexed=False, rank=None, words=words)
    elif rank is not None:
        evidence = MissEvidence(indexed=True, rank=rank, words=words)
    else:
        paths, results = _search_paths(index, contract, case.query, mode, depth, include_archived=True)
        wrank = rank_of(paths, present)
        wall = results[wrank - 1].get("wall") if wrank else None
        if wrank is not None and wall:
            evidence = MissEvidence(indexed=True, rank=None, walled_rank=wrank, wall=wall, words=words)
        else:
            reach = reaching_words(index, words, present)
            evidence = MissEvidence(
                indexed=True, rank=None, reaching_words=reach, words=words, content_words=content, depth=depth
            )
    verdict = classify_miss(evidence)
    return {"id": case.id, "query": case.query, "expected": case.expected, "category": case.category} | verdict


def run_fixtures(
    store: Store,
    contract: Contract,
    cases: Sequence[FixtureCase],
    *,
    modes: Sequence[str] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    depth: int | None = None,
) -> dict[str, Any]:
    """Run every case in every mode; the per-mode summaries, categories, misses and per-query ranks."""
    modes = check_modes(modes)
    ks = parse_ks(ks)
    depth = min(depth or _max_limit(), _max_limit())
    indexed_paths = store.index.paths()
    report: dict[str, Any] = {}
    for mode in modes:
        outcomes: list[QueryOutcome] = []
        start = time.perf_counter()
        for case in cases:
            paths, _results = _search_paths(store.index, contract, case.query, mode, depth)
            rank = rank_of(paths, case.targets) if case.answerable else None
            outcomes.append(QueryOutcome(case, rank, len(paths), tuple(paths[:3])))
        seconds = time.perf_counter() - start
        misses = []
        for o in outcomes:
            if o.case.answerable and not hit_at(o.rank, ks[0]):
                entry = _investigate(store.index, contract, o.case, mode, depth, o.rank, indexed_paths)
                entry["missed_at"] = [k for k in ks if not hit_at(o.rank, k)]
                misses.append(entry)
        report[mode] = {
            "overall": summarize(outcomes, ks),
            "categories": summarize_by_category(outcomes, ks),
            "misses": misses,
            "miss_kinds": {kind: sum(1 for m in misses if m["kind"] == kind) for kind in MISS_KINDS},
            "queries": [
                {
                    "id": o.case.id,
                    "category": o.case.category,
                    "expected": o.case.expected,
                    "rank": o.rank,
                    "results": o.result_count,
                    "top": list(o.top),
                }
                for o in outcomes
            ],
            "seconds": round(seconds, 4),
        }
    return {"ks": list(ks), "depth": depth, "modes": report}


def evaluate_fixtures(
    fixture: Path,
    store: Store,
    contract: Contract,
    *,
    modes: Sequence[str] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
) -> dict[str, Any]:
    """The whole `eval fixtures` report for one fixture file against an open, reconciled store."""
    cases, sha = load_fixtures(fixture)
    result = run_fixtures(store, contract, cases, modes=modes, ks=ks)
    corpora = sorted({str(c.extra["corpus"]) for c in cases if "corpus" in c.extra})
    return {
        "fixture": str(fixture),
        "fixture_sha256": sha,
        "fixture_corpus": corpora,
        "queries": len(cases),
        "corpus": corpus_fingerprint(store),
    } | result


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_fixtures(report: Mapping[str, Any]) -> str:
    ks = report["ks"]
    corpus = report["corpus"]
    lines = [
        f"fixture {report['fixture']} ({report['queries']} queries)",
        f"  sha256 {report['fixture_sha256']}",
        f"  corpus {corpus['documents']} notes indexed, newest modified {corpus['newest_mtime'] or '-'}",
    ]
    for mode, r in report["modes"].items():
        o = r["overall"]
        lines.append("")
        lines.append(f"mode {mode}: {o['answerable']} answerable, {o['no_answer']} no-answer, {r['seconds']:.2f}s")
        parts = [f"recall@{k} {_fmt(o[f'recall@{k}'])}" for k in ks]
        parts.append(f"MRR {_fmt(o['mrr'])}")
        parts.append(f"correct rejection {_fmt(o['correct_rejection'])} ({o['rejected']}/{o['no_answer']})")
        lines.append("  " + "  ".join(parts))
        width = max([len("category")] + [len(c) for c in r["categories"]])
        head = f"  {'category':<{width}}  {'n':>3}" + "".join(f"  {'R@' + str(k):>6}" for k in ks)
        lines.append(head + f"  {'MRR':>6}  {'reject':>6}")
        for name, c in r["categories"].items():
            n = c["answerable"] + c["no_answer"]
            row = f"  {name:<{width}}  {n:>3}" + "".join(f"  {_fmt(c[f'recall@{k}']):>6}" for k in ks)
            lines.append(row + f"  {_fmt(c['mrr']):>6}  {_fmt(c['correct_rejection']):>6}")
        if r["misses"]:
            lines.append(f"  misses at K={ks[0]}:")
            for m in r["misses"]:
                lines.append(f"    {m['id']}  {_miss_text(m)}  {m['expected']}  ({m['query']!r})")
        else:
            lines.append(f"  no misses at K={ks[0]}")
    return "\n".join(lines)


def _miss_text(m: Mapping[str, Any]) -> str:
    kind = m["kind"]
    if kind == "ranking_loss":
        return f"ranking_loss rank {m['rank']}" if m["rank"] else f"ranking_loss below rank {m.get('beyond')}"
    if kind == "walled":
        return f"walled ({m['wall']}) rank {m['rank']} with include_archived"
    if kind == "partial_match":
        return f"partial_match reached by {', '.join(m['reaching_words'])}"
    return str(kind)


# -- BEIR --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BeirCollection:
    corpus_path: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # judged queries only, in file order
    qrels_path: Path


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
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
    queries = {str(q["_id"]): str(q.get("text") or "") for q in _read_jsonl(queries_path) if "_id" in q}
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
    for doc in _read_jsonl(corpus_path):
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
    limit = min(BEIR_DEPTH, _max_limit())
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
                    paths, _r = _search_paths(store.index, contract, collection.queries[q], mode, limit)
                    ranked = [doc_of.get(note_path(p)) for p in paths]
                    run[q] = [d for d in ranked if d is not None]
                    empty += not paths
                seconds = time.perf_counter() - start
                scores = score_beir_run(run, qrels, recall_k=BEIR_DEPTH)
                results[mode] = {k: _round(v) if isinstance(v, float) else v for k, v in scores.items()} | {
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
    b = report["build_seconds"]
    lines = [
        f"BEIR {report['collection']}: {report['documents']} documents, {report['queries']} judged queries "
        f"({report['judgments']} judgments); vault written in {b['write_vault']:.2f}s, indexed in {b['index']:.2f}s",
        f"  {'mode':<10}  {'nDCG@10':>8}  {'R@100':>8}  {'MRR@10':>8}  {'empty':>6}  {'ms/query':>9}",
    ]
    for mode, r in report["modes"].items():
        lines.append(
            f"  {mode:<10}  {_fmt(r['ndcg@10']):>8}  {_fmt(r['recall@100']):>8}  {_fmt(r['mrr@10']):>8}"
            f"  {r['empty_results']:>6}  {r['ms_per_query']:>9.2f}"
        )
    return "\n".join(lines)


# -- command line ------------------------------------------------------------------------------------


def add_eval_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `eval fixtures` and `eval beir` to the top-level subparsers `sub` (with `common` options)."""
    p = sub.add_parser("eval", help="measure retrieval quality (read-only: never counted as usage)")
    esub = p.add_subparsers(dest="eval_command", metavar="SUITE", parser_class=type(p))
    f = esub.add_parser(
        "fixtures", parents=[common], help="recall@K, MRR, correct rejection and misses on a JSONL fixture file"
    )
    f.add_argument("file", help="JSONL: one {id, query, expected (path or null), alternates, category} per line")
    f.add_argument("--k", default=",".join(map(str, DEFAULT_KS)), help="cut-offs for recall, e.g. 5,15 (default)")
    f.add_argument(
        "--mode", action="append", metavar="M", help="search mode to measure (repeatable; default: every mode)"
    )
    f.set_defaults(func=cmd_eval_fixtures)
    b = esub.add_parser("beir", parents=[common], help="nDCG@10, recall@100 and MRR@10 on a BEIR collection")
    b.add_argument("dir", help="folder with corpus.jsonl, queries.jsonl and qrels/test.tsv (or qrels.tsv)")
    b.add_argument(
        "--mode", action="append", metavar="M", help="search mode to measure (repeatable; default: every mode)"
    )
    b.add_argument("--limit-queries", type=int, metavar="N", help="run only the first N judged queries")
    b.set_defaults(func=cmd_eval_beir)


def cmd_eval_fixtures(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.cli import _emit  # imported here: cli imports this module

    settings = resolve(vault=args.vault, index=args.index, config=args.config)
    contract = load_contract(settings.vault, settings.contract_path).contract
    fixture = Path(args.file)
    ks = parse_ks(args.k)
    modes = check_modes(args.mode)
    with Store(settings.cache_dir) as store:
        for notice in store.notices:
            err.write(f"agentmd: {notice}\n")
        try:
            rec = reconcile(settings.vault, store)
            if rec.refused:
                err.write(f"agentmd: reconcile refused ({rec.refused}); evaluating the index as it is\n")
        except IndexBusy as exc:
            err.write(f"agentmd: {exc}; evaluating the index as it is\n")
        report = evaluate_fixtures(fixture, store, contract, modes=modes, ks=ks)
    report["vault"] = str(settings.vault)
    _emit(out, args, report, render_fixtures(report))
    return 0


def cmd_eval_beir(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.cli import _emit  # imported here: cli imports this module

    directory = Path(args.dir)
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a folder; give the folder holding corpus.jsonl")
    report = run_beir(directory, modes=args.mode, limit_queries=args.limit_queries)
    _emit(out, args, report, render_beir(report))
    return 0
