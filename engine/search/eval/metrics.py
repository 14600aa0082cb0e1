"""The pure metrics of retrieval evaluation, and the fixture model they score. Nothing here touches an index.

Fixture metrics: recall@K (the expected note or an alternate in the top K; no-answer lines left out),
MRR over the fetched ranking, and correct rejection (the share of no-answer queries answered with no
results at all). BEIR metrics: nDCG@10 (graded by the qrels score, linear gain as trec_eval computes it),
recall@100 and MRR@10.

Miss taxonomy (`classify_miss`; first that applies, against the smallest K the query missed):

- `not_indexed`: neither the expected path nor any alternate is in the index.
- `ranking_loss`: the mode's query returns the note, but at rank R greater than K (R reported, in the whole
  ranking when the floor left the note out; when every query word reaches the note yet it is not within the
  fetched depth, R is null and `beyond` the depth).
- `below_floor`: the mode's whole ranking (floor 0) has the note within K (at rank R), but its confidence is
  under the floor the search ran with, so `agentmd search` leaves it out (R, the confidence and the floor
  reported). A note the floor left out that the whole ranking has beyond K is a `ranking_loss` at that rank.
- `walled`: the note comes back only with include_archived (an archived, superseded or staged note).
- `vocabulary_mismatch`: not one query word that carries meaning (stop words aside, as the engine's
  `query_terms` judges them), searched alone and restricted to the note, matches it.
- `partial_match`: some meaningful query words reach the note, yet the mode's query does not return it
  within the fetched depth (for `and`: a word the note lacks; for `fusion`: no word group it satisfies);
  the words that reach it and the words that do not are listed.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_KS = (5, 15)
BEIR_DEPTH = 100  # results fetched per BEIR query (recall@100 needs them all)
NDCG_K = 10
MRR_K = 10
MISS_KINDS = ("not_indexed", "ranking_loss", "below_floor", "walled", "vocabulary_mismatch", "partial_match")


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
) -> dict[str, object]:
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
    miss: dict[str, object] | None = None  # taxonomy entry when the query missed at the smallest K


def summarize(outcomes: Sequence[QueryOutcome], ks: Sequence[int]) -> dict[str, object]:
    """Recall@K, MRR and correct rejection over a set of outcomes (pure)."""
    ranks = [o.rank for o in outcomes if o.case.answerable]
    counts = [o.result_count for o in outcomes if not o.case.answerable]
    out: dict[str, object] = {"answerable": len(ranks), "no_answer": len(counts)}
    for k in ks:
        out[f"recall@{k}"] = rounded(recall_at(ranks, k))
        out[f"hits@{k}"] = sum(hit_at(r, k) for r in ranks)
    out["mrr"] = rounded(mean_reciprocal_rank(ranks))
    out["correct_rejection"] = rounded(correct_rejection(counts))
    out["rejected"] = sum(1 for n in counts if n == 0)
    return out


def merge_summaries(summaries: Sequence[Mapping[str, Any]], ks: Sequence[int]) -> dict[str, object]:
    """One summary for several (e.g. one per corpus), weighted by their query counts (pure)."""
    answerable = sum(s["answerable"] for s in summaries)
    no_answer = sum(s["no_answer"] for s in summaries)
    out: dict[str, object] = {"answerable": answerable, "no_answer": no_answer}
    for k in ks:
        hits = sum(s[f"hits@{k}"] for s in summaries)
        out[f"recall@{k}"] = rounded(hits / answerable) if answerable else None
        out[f"hits@{k}"] = hits
    rr = sum((s["mrr"] or 0.0) * s["answerable"] for s in summaries)
    out["mrr"] = rounded(rr / answerable) if answerable else None
    rejected = sum(s["rejected"] for s in summaries)
    out["correct_rejection"] = rounded(rejected / no_answer) if no_answer else None
    out["rejected"] = rejected
    return out


def summarize_by_category(outcomes: Sequence[QueryOutcome], ks: Sequence[int]) -> dict[str, dict[str, object]]:
    groups: dict[str, list[QueryOutcome]] = {}
    for o in outcomes:
        groups.setdefault(o.case.category, []).append(o)
    return {name: summarize(groups[name], ks) for name in sorted(groups)}


@dataclass(frozen=True, slots=True)
class MissEvidence:
    """What the harness found out about one missed query; `classify_miss` turns it into a verdict."""

    indexed: bool  # the expected path or an alternate is in the index
    rank: int | None  # rank in the mode's own results (beyond K, else it would not be a miss)
    unfloored_rank: int | None = None  # rank in the whole ranking (floor 0) when the floor left the note out
    confidence: float | None = None  # the note's confidence there
    floor: float | None = None  # the floor the search ran with
    walled_rank: int | None = None  # rank when the walls are lifted (include_archived)
    wall: str | None = None
    reaching_words: tuple[str, ...] = ()  # query words that, alone, match the note
    words: tuple[str, ...] = ()  # every query word that was checked
    content_words: tuple[str, ...] | None = None  # the words that carry meaning (None: all of `words`)
    depth: int | None = None  # how many results were fetched


def classify_miss(evidence: MissEvidence) -> dict[str, object]:
    """The taxonomy verdict for one miss (pure; see the module docstring for the order)."""
    if not evidence.indexed:
        return {"kind": "not_indexed"}
    if evidence.rank is not None:
        return {"kind": "ranking_loss", "rank": evidence.rank}
    if evidence.unfloored_rank is not None:
        return {"kind": "below_floor", "rank": evidence.unfloored_rank, "confidence": evidence.confidence,
                "floor": evidence.floor}  # fmt: skip
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


def rounded(value: float | None) -> float | None:
    """A metric as reported: six decimals, None kept."""
    return None if value is None else round(value, 6)
