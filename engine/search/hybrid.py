"""Hybrid ranking: the lexical list and the dense list fused into one, plus two relevance signals.

The fusion rule was chosen on SciFact's train split (bench/dense_bench.py; the test split was read once
for the chosen rule). The lexical list ranks confident wrong notes high on paraphrases, so an
equal-weight reciprocal-rank fusion pulls them into the top; rules in which the dense list dominates do
better. The rules measured:

- `rrf`: Σ weight / (k + rank) over the two lists (k = 60), with a weight on the dense list;
- `minmax`: a convex combination of the scores, each min-max normalised over the candidates;
- `zscore`: the same with z-scores;
- `dense`: the dense list alone.

A note found by only one list has a lexical score of 0 (it does not hold enough of the query's words) or
its real best-chunk cosine (every note with vectors has one), so the combinations compare like with like.

Each fused result also carries, for a later relevance floor:

- `cosine`: the best chunk's cosine to the query (alone it separates answerable from unanswerable
  questions poorly: AUC 0.65 on the shared vaults);
- `word_share`: the IDF-weighted share of the query's content words that occur in the note (title and
  body), which separated them better (AUC 0.80).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

DEFAULT_K = 60


@dataclass(frozen=True, slots=True)
class FusionRule:
    kind: str  # "rrf", "minmax", "zscore" or "dense"
    dense_weight: float = 0.5  # rrf: the dense list's weight (lexical 1 - w); combinations: the cosine's share
    k: int = DEFAULT_K

    @property
    def name(self) -> str:
        if self.kind == "dense":
            return "dense"
        if self.kind == "rrf":
            return f"rrf k={self.k} dense={self.dense_weight:g}"
        return f"{self.kind} dense={self.dense_weight:g}"


# The rule the hybrid mode ships (best nDCG@10 on SciFact train; see the module docstring).
CHOSEN = FusionRule("minmax", 0.7)


@dataclass(frozen=True, slots=True)
class Fused:
    path: str
    score: float
    lexical_rank: int | None  # 1-based, None when the lexical list did not hold the note
    dense_rank: int | None
    lexical_score: float  # the raw lexical score, 0 when absent
    cosine: float | None  # best-chunk cosine, None when the note has no vectors


def _minmax(values: Mapping[str, float]) -> dict[str, float]:
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    span = hi - lo
    return {p: (v - lo) / span if span > 0 else 1.0 for p, v in values.items()}


def _zscore(values: Mapping[str, float]) -> dict[str, float]:
    if not values:
        return {}
    n = len(values)
    mean = sum(values.values()) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values.values()) / n)
    return {p: (v - mean) / std if std > 0 else 0.0 for p, v in values.items()}


def fuse(
    lexical: Sequence[tuple[str, float]],
    dense: Sequence[tuple[str, float]],
    rule: FusionRule = CHOSEN,
    cosine_of: Mapping[str, float] | None = None,
) -> list[Fused]:
    """The candidates of both lists in fused order, best first (ties by path).

    `lexical` and `dense` are (path, score) in rank order. `cosine_of` gives the best-chunk cosine of
    notes outside the dense list (e.g. from `VectorStore.cosines`), so a lexical candidate is scored by
    its real cosine, not by its absence."""
    lex_rank = {p: r for r, (p, _s) in enumerate(lexical, 1)}
    den_rank = {p: r for r, (p, _s) in enumerate(dense, 1)}
    lex_score = dict(lexical)
    cos = dict(cosine_of or {})
    cos.update(dict(dense))
    paths = list(dict.fromkeys([*lex_rank, *den_rank]))
    scores: dict[str, float]
    w = rule.dense_weight
    if rule.kind == "dense":
        scores = {p: cos.get(p, -1.0) for p in paths}
    elif rule.kind == "rrf":
        scores = {
            p: ((1 - w) / (rule.k + lex_rank[p]) if p in lex_rank else 0.0)
            + (w / (rule.k + den_rank[p]) if p in den_rank else 0.0)
            for p in paths
        }
    elif rule.kind in ("minmax", "zscore"):
        norm: Callable[[Mapping[str, float]], dict[str, float]] = _minmax if rule.kind == "minmax" else _zscore
        lex_n = norm({p: lex_score.get(p, 0.0) for p in paths})
        cos_n = norm({p: cos.get(p, min(cos.values(), default=0.0)) for p in paths})
        scores = {p: (1 - w) * lex_n[p] + w * cos_n[p] for p in paths}
    else:
        raise ValueError(f"unknown fusion rule {rule.kind!r}")
    order = sorted(paths, key=lambda p: (-scores[p], p))
    return [Fused(p, scores[p], lex_rank.get(p), den_rank.get(p), lex_score.get(p, 0.0), cos.get(p)) for p in order]


def word_share(words: Iterable[str], note_terms: set[str], idf: Mapping[str, float]) -> float:
    """The IDF-weighted share of the query's content words (already analysed into index terms) found in
    a note's terms: Σ idf(found) / Σ idf(all). 0 for a query without content words."""
    wanted = list(dict.fromkeys(words))
    total = sum(idf.get(t, 0.0) for t in wanted)
    if total <= 0:
        return 0.0
    return sum(idf.get(t, 0.0) for t in wanted if t in note_terms) / total


def idf_weights(terms: Iterable[str], doc_freq: Callable[[str], int], docs: int) -> dict[str, float]:
    """BM25-style IDF, ln(1 + (N - df + 0.5) / (df + 0.5)), for each term (a term in no note weighs most)."""
    return {t: math.log(1 + (docs - (df := doc_freq(t)) + 0.5) / (df + 0.5)) for t in dict.fromkeys(terms)}
