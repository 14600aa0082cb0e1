"""Hybrid ranking: the lexical list and the dense list fused into one, plus two relevance signals.

The fusion rule (`CHOSEN`): each list's scores z-scored over the candidates and combined, the cosine's share
0.6. It was chosen among reciprocal-rank fusion, min-max and z-score combinations and a share that rises as the
lexical list's hold on the query falls, on SciFact's train split (bench/dense_bench.py) and the dev questions of
three shared vaults (bench/vocab_bench.py); the figures are in bench/RESULTS.md, "Constants of the search".

The share falls to the rule's `alike` share in a vault whose passages the model finds alike
(`VectorStore.sameness`, the mean cosine between two chunks, from ALIKE_FROM to ALIKE_AT): there a passage's
cosine tells notes apart little, and its words more. A vault of notes on many subjects reads low, the sessions
of one conversation, every turn under the same headings, high (bench/RESULTS.md, "Constants of the search",
`ALIKE_FROM`, `ALIKE_AT`).

A note found by only one list has a lexical score of 0 (it does not hold enough of the query's words) or
its real best-chunk cosine (every note with vectors has one), so the combinations compare like with like.
While the vectors cover only part of the vault, a note without them takes the candidates' mean cosine (no
evidence either way), so the lexical list alone places it and a note found by its words is not pushed down
for lacking vectors.

A note the query names (its title, file name, alias or heading; `name` in its row) comes first, as in the
lexical search and in the same order (`rows.names_first`); only an entity page the query names comes
before it. Each fused result also carries, for a later relevance floor:

- `cosine`: the best chunk's cosine to the query (alone it separates answerable from unanswerable
  questions poorly: AUC 0.65 on the shared vaults);
- `word_share`: the IDF-weighted share of the query's content words that occur in the note (title and
  body), which separated them better (AUC 0.80).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple, overload

from agentmd.engine.errors import AgentmdError
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.fulltext import Hit, HitList, SearchIndex
from agentmd.engine.index.vector_types import TextEmbedder
from agentmd.engine.index.vectors import VectorStore
from agentmd.engine.search.confidence import idf
from agentmd.engine.search.dense import scan_soon
from agentmd.engine.search.planning import SearchRequest, query_terms, split_words
from agentmd.engine.search.result import Cut, DenseUse, Result, SearchResponse
from agentmd.engine.search.rows import complete, facts_row, fill, names_first, row_terms
from agentmd.engine.search.searcher import QueryPlan
from agentmd.rules import Contract
from agentmd.vault_schema import scripts, section_text

DEFAULT_K = 60


MAX_DENSE_WEIGHT = 0.95
ALIKE_FROM, ALIKE_AT = 0.3, 0.5  # the vault's sameness where the cosine's share starts to fall and reaches `alike`
HOLD_DEPTH = 3  # the lexical candidates, best first, whose word share is the lexical list's hold on the query


@dataclass(frozen=True, slots=True)
class FusionRule:
    kind: str  # "rrf", "minmax", "zscore" or "dense"
    dense_weight: float = 0.5  # rrf: the dense list's weight (lexical 1 - w); combinations: the cosine's share
    k: int = DEFAULT_K
    # combinations: how much the cosine's share rises as the lexical list's hold on the query falls (the hold
    # is the best IDF-weighted word share among its first HOLD_DEPTH notes: 1 when one holds every word)
    lift: float = 0.0
    # combinations: the cosine's share in a vault whose passages are alike (sameness ALIKE_AT and above)
    alike: float | None = None

    @property
    def name(self) -> str:
        if self.kind == "dense":
            return "dense"
        if self.kind == "rrf":
            return f"rrf k={self.k} dense={self.dense_weight:g}"
        lift = f" lift={self.lift:g}" if self.lift else ""
        alike = f" alike={self.alike:g}" if self.alike is not None else ""
        return f"{self.kind} dense={self.dense_weight:g}{lift}{alike}"

    def weight(self, hold: float, sameness: float = 0.0) -> float:
        """The dense list's share for a query whose lexical list holds `hold` (0..1) of its words, in a vault
        whose passages are `sameness` alike (`VectorStore.sameness`)."""
        share = min(MAX_DENSE_WEIGHT, self.dense_weight + self.lift * (1.0 - max(0.0, min(1.0, hold))))
        if self.alike is None:
            return share
        t = max(0.0, min(1.0, (sameness - ALIKE_FROM) / (ALIKE_AT - ALIKE_FROM)))
        return share + t * (self.alike - share)


# The rule the hybrid mode ships (SciFact train and the vaults' dev questions; see the module docstring).
CHOSEN = FusionRule("zscore", 0.6, alike=0.3)


class Fused(NamedTuple):
    """One candidate in fused order (a named tuple: a search makes one for each of some 400 candidates)."""

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
    hold: float = 1.0,
    sameness: float = 0.0,
    covered: float = 1.0,
) -> Fusion:
    """The candidates of both lists in fused order, best first (ties by path).

    `lexical` and `dense` are (path, score) in rank order. `cosine_of` gives the best-chunk cosine of
    notes outside the dense list (e.g. from `VectorStore.cosines`), so a lexical candidate is scored by
    its real cosine, not by its absence. `hold` is the lexical list's hold on the query (`lexical_hold`),
    which sets the cosine's share under a rule with a `lift`; `sameness` (`VectorStore.sameness`) sets it under
    a rule with an `alike` share. `covered` is the share of the vault's chunks with vectors so far: the cosine's
    share is that much of its own while the vault is being embedded, so a note found by its words but not yet
    embedded is not pushed down by notes the dense arm reached only because they were embedded first (a fifth
    of a vault embedded: the note that held every word of the question ranked eighth, behind notes whose
    cosines of 0.3 stood out among the few there were)."""
    lex_rank = {p: r for r, (p, _s) in enumerate(lexical, 1)}
    den_rank = {p: r for r, (p, _s) in enumerate(dense, 1)}
    lex_score = dict(lexical)
    cos = dict(cosine_of or {})
    cos.update(dict(dense))
    paths = list(dict.fromkeys([*lex_rank, *den_rank]))
    scores: dict[str, float]
    w = (rule.weight(hold, sameness) if rule.kind in ("minmax", "zscore") else rule.dense_weight) * covered
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
        # A note without vectors yet (coverage still growing) has no cosine: it takes the candidates' mean,
        # so its lexical score decides its place instead of a cosine it never had.
        neutral = sum(cos.values()) / len(cos) if cos else 0.0
        cos_n = norm({p: cos.get(p, neutral) for p in paths})
        scores = {p: (1 - w) * lex_n[p] + w * cos_n[p] for p in paths}
    else:
        raise ValueError(f"unknown fusion rule {rule.kind!r}")
    return Fusion(sorted(paths, key=lambda p: (-scores[p], p)), scores, lex_rank, den_rank, lex_score, cos)


class Fusion(Sequence[Fused]):
    """The fused candidates, best first; each `Fused` is made when it is read (a search reads the first
    few of some 400)."""

    def __init__(
        self,
        order: list[str],
        scores: dict[str, float],
        lex_rank: dict[str, int],
        den_rank: dict[str, int],
        lex_score: dict[str, float],
        cos: dict[str, float],
    ) -> None:
        self.order = order  # the candidates' paths, best first
        self._scores, self._lex_rank, self._den_rank, self._lex_score, self._cos = (
            scores, lex_rank, den_rank, lex_score, cos
        )  # fmt: skip

    def of(self, path: str) -> Fused:
        """The fused candidate of one path (a path of `order`)."""
        return Fused(path, self._scores[path], self._lex_rank.get(path), self._den_rank.get(path),
                     self._lex_score.get(path, 0.0), self._cos.get(path))  # fmt: skip

    def __len__(self) -> int:
        return len(self.order)

    @overload
    def __getitem__(self, i: int) -> Fused: ...

    @overload
    def __getitem__(self, i: slice) -> list[Fused]: ...

    def __getitem__(self, i: int | slice) -> Fused | list[Fused]:
        if isinstance(i, slice):
            return [self.of(p) for p in self.order[i]]
        return self.of(self.order[i])

    def __iter__(self) -> Iterator[Fused]:
        return (self.of(p) for p in self.order)


def word_share(words: Iterable[str], note_terms: Container[str], idf: Mapping[str, float]) -> float:
    """The IDF-weighted share of the query's content words (already analysed into index terms) found in
    a note's terms: Σ idf(found) / Σ idf(all). 0 for a query without content words."""
    wanted = list(dict.fromkeys(words))
    total = sum(idf.get(t, 0.0) for t in wanted)
    if total <= 0:
        return 0.0
    return sum(idf.get(t, 0.0) for t in wanted if t in note_terms) / total


def idf_weights(terms: Iterable[str], doc_freq: Callable[[str], int], docs: int) -> dict[str, float]:
    """The confidence model's IDF (`confidence.idf`) for each term (a term in no note weighs most)."""
    return {t: idf(doc_freq(t), docs) for t in dict.fromkeys(terms)}


def query_words(index: SearchIndex, query: str) -> tuple[list[str], dict[str, float]]:
    """The query's content words as index terms, and each term's IDF."""
    terms = [t for w in split_words(query_terms(query)) for t in index.analyze(w)]
    return terms, idf_weights(terms, index.doc_freq, max(index.doc_count(), 1))


def lexical_hold(
    index: SearchIndex,
    terms: Sequence[str],
    idf: Mapping[str, float],
    paths: Sequence[str],
    terms_of: Callable[[str], Container[str]] | None = None,
) -> float:
    """How well the lexical list holds the query: the best word share among its first HOLD_DEPTH notes
    (0 when it is empty). A keyword question's top note holds all its words; a question in other words
    than its note's leaves the lexical list with notes that share a word or two, and the dense list is
    then the one to trust. `terms_of`: a note's terms by path, when the caller has them at hand."""
    read = terms_of or (lambda p: index.note_terms(p)[0])
    return max((word_share(terms, read(p), idf) for p in paths[:HOLD_DEPTH]), default=0.0)


# ----- the `hybrid` search mode -----


@dataclass(frozen=True, slots=True)
class DenseArm:
    """What the hybrid mode needs: the vector store and the embedder that made its vectors."""

    store: VectorStore
    embedder: TextEmbedder


def _fallback(response: SearchResponse, reason: str) -> SearchResponse:
    """A lexical answer to a hybrid request, marked with why the dense arm took no part."""
    note = f"lexical results only: {reason}"
    results = tuple(
        replace(row, explain={**row.explain, "dense": {"used": False, "reason": reason}})
        if row.explain is not None
        else row
        for row in response.results
    )
    return replace(
        response,
        mode="hybrid",
        results=results,
        dense=DenseUse(False, reason=reason),
        note=f"{response.note}; {note}" if response.note else note,
    )


def hybrid_search(
    index: SearchIndex,
    contract: Contract,
    request: SearchRequest,
    catalog: Catalog | None = None,
    arm: DenseArm | None = None,
    rule: FusionRule = CHOSEN,
    *,
    cut: bool = True,
) -> SearchResponse:
    """The lexical search (default mode) fused with the dense arm by `rule`; one result per note.
    Without `cut`, a row's best section and snippet may be left to `rows.fill` (for a caller that drops
    rows first, as the confidence floor does).

    Walls, date bounds and multipliers apply to dense candidates as to lexical ones: a fused score is
    multiplied by the note's penalty. Without vectors (none yet, or no model) the response is the
    lexical one, marked `dense.used = false` with the reason, and its `note` says so. Every result
    carries `cosine` and `word_share` (see the module docstring)."""
    asked = QueryPlan.of(request)
    if arm is None:
        return _fallback(asked.answer(index, contract, catalog), "no embedding model is loaded")
    coverage = arm.store.coverage()
    if coverage.done == 0:
        return _fallback(asked.answer(index, contract, catalog), "no note has vectors yet")
    if not scripts.reads(arm.embedder, request.query):  # e.g. a Chinese or Russian query, an English model
        return _fallback(
            asked.answer(index, contract, catalog),
            "the embedding model reads Latin script only, and this query is mostly in another script",
        )
    # the model and the scan of the vectors run while the lexical arm searches
    scanning = scan_soon(arm.store, arm.embedder, request.query, asked.fetched)
    wide = asked.candidates(index, contract, catalog)
    try:
        qvec, scan = scanning.result()
    except AgentmdError as exc:
        return _fallback(asked.answer(index, contract, catalog), str(exc))
    rows = {r.note: r for r in wide.results if r.entity is None}
    lexical = [(p, r.raw_score) for p, r in rows.items()]
    dense: list[tuple[str, float]] = []
    headings: dict[str, str] = {}
    paths = [p for p, _s in lexical]
    found, cosine_of = scan.hits, arm.store.best_cosines(scan, paths)
    if cosine_of is None:  # the vectors changed while the lexical arm searched (the daemon embeds meanwhile)
        found, cosine_of = arm.store.search_and_score(qvec, asked.fetched, paths)
    for hit in found:
        dense.append((hit.path, hit.cosine))
        headings[hit.path] = hit.heading
    terms, idf = query_words(index, asked.words)  # the time words are not words to find
    held = lambda p: row_terms(index, rows[p])[0]  # noqa: E731  # read from the hits the search found
    hold = lexical_hold(index, terms, idf, paths, held) if rule.lift else 1.0
    sameness = arm.store.sameness() if rule.alike is not None else 0.0
    fused = fuse(lexical, dense, rule, cosine_of, hold, sameness, coverage.share)
    # A note only the dense arm found is read from the index when it may enter the top: walls, probe and
    # dates leave it out, its multipliers lower its score (never raise it), so once the fused score of the
    # next candidate is below the `limit`-th best lowered score, nothing further down can enter.
    kept: list[Fused] = []
    best: list[float] = []  # min-heap of the top `limit` lowered scores
    for f in fused:
        if len(best) >= request.limit and f.score < best[0]:
            break
        if f.path not in rows:
            row = _dense_candidate(index, contract, asked, f.path, headings[f.path])
            if row is None:
                continue
            rows[f.path] = row
        kept.append(f)
        lowered = f.score * rows[f.path].penalty
        if len(best) < request.limit:
            heapq.heappush(best, lowered)
        elif lowered > best[0]:
            heapq.heapreplace(best, lowered)
    named = [r for r in wide.results if r.name is not None]  # the notes the query names (rows.names_first)
    named_notes = {r.note for r in named}
    taken = {f.path for f in kept}
    kept += [fused.of(p) for p in fused.order if p in named_notes and p not in taken]  # named, further down
    ordered = sorted(kept, key=lambda f: (-f.score * rows[f.path].penalty, f.path))
    ranked = [f for n, f in enumerate(ordered) if n < request.limit or f.path in named_notes]
    results: list[Result] = []
    nearness = arm.store.section_cosines(qvec, [f.path for f in ranked])  # which section a row points at
    for f in ranked:
        row = complete(rows[f.path])
        if row.cut is not None and f.path in nearness:
            row = replace(row, cut=row.cut.near(nearness[f.path]))
        if cut:
            row = fill(row)
        cosine = None if f.cosine is None else round(f.cosine, 6)
        share = round(word_share(terms, row_terms(index, row)[0], idf), 6)
        explain = row.explain
        if request.explain:
            explain = {
                **(explain or {"mode": "hybrid", "plan": "dense"}),
                "dense": {
                    "used": True,
                    "rule": rule.name,
                    "sameness": round(sameness, 4),
                    "share": round(rule.weight(hold, sameness) * coverage.share, 4),
                    "lexical_rank": f.lexical_rank,
                    "lexical_score": round(f.lexical_score, 6),
                    "dense_rank": f.dense_rank,
                    "cosine": cosine,
                    "word_share": share,
                },
            }
        results.append(
            replace(
                row,
                score=round(f.score * row.penalty, 6),
                raw_score=round(f.score, 6),
                cosine=cosine,
                word_share=share,
                arms=tuple(
                    arm for arm, rank in (("lexical", f.lexical_rank), ("dense", f.dense_rank)) if rank is not None
                ),
                explain=explain,
            )
        )
    if named:
        by_note = {r.note: r for r in results}
        top = results[0].score if results else 0.0
        pinned = [
            replace(by_note[r.note], score=round(max(top, by_note[r.note].score), 6))
            for r in named
            if r.note in by_note
        ]
        results = names_first(results, pinned, request.limit)
    pages = [r for r in wide.results if r.entity is not None]  # an entity page the query names stays first
    if pages:
        results = [pages[0], *(r for r in results if r.note != pages[0].note)][: request.limit]
    note = wide.note
    if coverage.done < coverage.total:
        covered = f"{100 * coverage.share:.0f}%"
        note = "; ".join(
            x for x in (wide.note if not results else None, f"vectors cover {covered} of the notes' chunks so far") if x
        )
    elif results:
        note = None
    return replace(
        wide,
        mode="hybrid",
        results=tuple(results),
        matched=max(wide.matched, len(rows)),
        dense=DenseUse(True, rule=rule.name, coverage=round(coverage.share, 4)),
        note=note,
    )


def _dense_candidate(
    index: SearchIndex, contract: Contract, asked: QueryPlan, path: str, heading: str
) -> Result | None:
    """The row of a note only the dense arm found, or None when the index no longer holds it or the request
    leaves it out (a wall, a self-probe note, a date outside the bounds)."""
    found = index.hit_for(path)
    if found is None:
        return None  # vectors of a note the index no longer holds
    note, hits = found
    if not asked.admits(note.facts):
        return None
    return _dense_row(index, note, hits, heading, asked.penalties(note.facts, path, contract))


def _dense_row(index: SearchIndex, hit: Hit, hits: HitList, heading: str, penalties: list[tuple[str, float]]) -> Result:
    """A result row for a note only the dense arm found (its best chunk's section is the anchor). Its snippet
    is cut only if the row is shown (`rows.fill`)."""
    last = heading.split(" > ")[-1] if heading else None
    penalty = 1.0
    for _name, m in penalties:
        penalty *= m

    def cut() -> tuple[str | None, str]:
        text = hits.text_of(hit)
        section = section_text(text, last) if last else None
        return heading or None, hits.snippet_of(section or text)

    return facts_row(
        hit,
        score=0.0,
        raw_score=0.0,
        penalty=round(penalty, 6),
        penalties=penalties,
        path=hit.path + (f"#{last}" if last else ""),
        section=heading or None,
        cut=Cut(index, hits, hit, cut),
    )
