"""Searching the index: a question's plan (groups fused by reciprocal rank, an admission rule read from the
top of its any-word ranking), the counts of matches per wall, the notes a query names, and the per-field
scores of --explain."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import tantivy

from agentmd.engine.index.fulltext.analyzer import quote_terms
from agentmd.engine.index.fulltext.core import DOC_FREQ_MEMO_MAX, IndexCore
from agentmd.engine.index.fulltext.hits import Hit, HitList, NameHit
from agentmd.engine.index.fulltext.schema import (
    FIELD_BOOSTS,
    NAME_CODES,
    NAME_KINDS,
    NO_WALL,
    SEARCH_FIELDS,
    WALL_NAMES,
    is_panic,
    name_key,
)
from agentmd.vocabulary import STOP_WORDS

# From this many notes a question of common words only is read from the top of its any-word ranking even for
# its whole list (a hybrid search's 200 candidates): per question of the search benchmark's vaults, 1.56 ms
# in full against 1.97 ms from the top at 10,000 notes, 12.5 against 7.5 ms at 100,000.
WIDE_HEAD_FROM = 30_000

# A search counts its matches (`SearchIndex._counts`) on a worker thread while it ranks them, and a fused search
# ranks its lists side by side: Tantivy releases the GIL while it searches, so on two cores the count, which
# visits every match, no longer adds to the ranking's time (bench/search_bench.py). One pool per process: a
# forked child makes its own, since the parent's threads do not exist in it.
_SEARCH_WORKERS = 2
_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def _pairs_cover(groups: Sequence[Sequence[str]]) -> bool:
    """Whether the notes matching any of `groups` are exactly those holding two or more of the first group's
    words: every group holds two or more of them, and every pair of them is a group (the three-word plan's
    full conjunction and its pairs)."""
    first = set(groups[0])
    if len(first) < 2:
        return False
    sets = [set(g) for g in groups]
    if any(len(g) < 2 or not g <= first for g in sets):
        return False
    return all({a, b} in sets for a in first for b in first if a < b)


def _search_pool() -> ThreadPoolExecutor:
    global _pool
    pid = os.getpid()
    with _pool_lock:
        if _pool is None or _pool[0] != pid:
            _pool = (pid, ThreadPoolExecutor(_SEARCH_WORKERS, thread_name_prefix="agentmd-search"))
        return _pool[1]


class IndexQueries(IndexCore):
    """Searches: ranked matches, names, near spellings and per-field scores."""

    def search(
        self,
        words: Sequence[str],
        *,
        limit: int,
        include_walled: bool = False,
        day_range: tuple[int | None, int | None] = (None, None),
        conjunction: bool = True,
        snippet_chars: int = 180,
        groups: Sequence[Sequence[str]] | None = None,
        weights: Sequence[float] | None = None,
        boosts: dict[str, float] | None = None,
        rrf_k: float = 60.0,
        evidence_weight: float = 0.0,
        min_match: int | None = None,
        sufficient: Sequence[str] = (),
        head: int | None = None,
    ) -> HitList:
        """Top `limit` matches. With `head` (below `limit`), a question's list may hold only its first `head`
        or more matches, when that is cheaper (`partial` is then True): for a caller that reads only the top
        and asks again without `head` when it needs more.

        Without `groups`: BM25 over `words`, each word required when `conjunction`. With several `groups`
        (fusion): each group is a conjunctive query of its own; their rankings are fused by reciprocal rank
        (sum of weight / (rrf_k + rank)), so a note that satisfies many groups, or ranks high in the strict
        ones, comes first, and a note matching no group is not returned at all.
        """
        empty = HitList([], 0, dict.fromkeys(WALL_NAMES, 0))
        if limit <= 0:
            return empty
        subqueries: list[Any] = []
        counted_q: Any = None  # what matches the same notes as the query, cheaper to count (see `_counts`)
        # a question's any-word query, its words and those of them that are not rare
        loose: tuple[Any, list[str], list[str]] | None = None
        if groups and len(groups) > 1:
            for group in groups:
                q = self._text_query(group, True, boosts)
                if q is not None:
                    subqueries.append(q)
            if not subqueries:
                return empty
            text_q = (
                subqueries[0]
                if len(subqueries) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in subqueries])
            )
        elif min_match is not None:
            terms = groups[0] if groups else words
            rule = self._at_least(terms, min_match, boosts)
            # a note holding one of the `sufficient` (rare) words qualifies too
            alone = [q for q in (self._text_query([w], True, boosts) for w in sufficient) if q is not None]
            admitted = [q for q in (rule, *alone) if q is not None]
            if not admitted:
                return empty
            gate = (
                admitted[0]
                if len(admitted) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in admitted])
            )
            # Every admitted note is scored alike, by BM25 over all the words: a constant 0 for the admission
            # rule plus the any-word query's score, so the top can be read from the any-word ranking
            # (`_question_top`) with the very scores the full search gives.
            anyword = self._at_least(terms, 1, boosts)
            clauses = [(tantivy.Occur.Must, tantivy.Query.const_score_query(gate, 0.0))]
            if anyword is not None:
                clauses.append((tantivy.Occur.Should, anyword))
                loose = (anyword, list(terms), [w for w in terms if w not in sufficient])
            text_q = tantivy.Query.boolean_query(clauses)
            counted_q = gate
        else:
            text_q = self._text_query(groups[0] if groups else words, conjunction, boosts)
            if text_q is None:
                return empty
        filters = self._filters(include_walled, day_range)
        self.ensure_sound()
        reader = self._reader
        searcher = reader.searcher
        try:
            lists = list(subqueries)
            w = list(weights or [1.0] * len(subqueries))
            if len(subqueries) > 1 and evidence_weight > 0:
                # One more ranking: BM25 of every word over the notes that hold at least two of them. It
                # weighs each word's evidence, which the conjunctions alone do not, and like them it
                # never returns a note that shares a single word with the question.
                evidence = self._at_least(groups[0] if groups else words, 2, boosts)
                if evidence is not None:
                    lists.append(evidence)
                    w.append(evidence_weight)
                    text_q = tantivy.Query.boolean_query(
                        [(tantivy.Occur.Should, text_q), (tantivy.Occur.Should, evidence)]
                    )
                    if groups and _pairs_cover(groups):
                        counted_q = evidence  # the same notes as the union of the groups, half the cost to count
            counting = _search_pool().submit(self._counts, searcher, counted_q or text_q, filters, include_walled)
            visible = self._must(text_q, *filters)
            schema = self.schema

            def generator() -> Any:  # built when the first snippet is cut (most rows never need one)
                made = tantivy.SnippetGenerator.create(searcher, text_q, schema, "body")
                made.set_max_num_chars(snippet_chars)
                return made

            if len(subqueries) <= 1:
                # Read from the top when the caller reads the top only, or for the whole list when that is
                # cheaper: a question with a rare word, or one of common words only in a large index (its
                # full admission rule visits most notes; in a small one the whole list costs less).
                wide_ok = bool(sufficient) or searcher.num_docs >= WIDE_HEAD_FROM
                if loose is not None and day_range == (None, None) and (head is not None or wide_ok):
                    first = min(head or limit, limit)
                    quick = self._question_top(searcher, loose, first, filters, boosts)
                    if quick is not None:
                        hidden, matched = counting.result()
                        partial = HitList(
                            quick,
                            matched,
                            hidden,
                            searcher,
                            None,
                            snippet_chars,
                            stored=reader.stored,
                            make_snippets=generator,
                            derived=reader.derived,
                        )
                        partial.partial = first < limit
                        return partial
                result = searcher.search(visible, limit, count=False)
                hidden, matched = counting.result()
                return HitList(
                    list(result.hits),
                    matched,
                    hidden,
                    searcher,
                    None,
                    snippet_chars,
                    stored=reader.stored,
                    make_snippets=generator,
                    derived=reader.derived,
                )
            fused: dict[tuple[int, int], float] = {}
            ranks: dict[tuple[int, int], dict[int, int]] = {}
            addresses: dict[tuple[int, int], Any] = {}
            # the lists after the first are ranked on the pool while this thread ranks the first
            # (no list counts its matches: the count above is the fused query's; a top without a count is cheaper)
            later: list[Future[Any]] = [
                _search_pool().submit(searcher.search, self._must(sub, *filters), limit, False) for sub in lists[1:]
            ]
            first_list = searcher.search(self._must(lists[0], *filters), limit, count=False)
            listed = [first_list, *(f.result() for f in later)]
            hidden, matched = counting.result()
            for i, res in enumerate(listed):
                for rank, (_score, addr) in enumerate(res.hits, 1):
                    key = (addr.segment_ord, addr.doc)
                    addresses[key] = addr
                    fused[key] = fused.get(key, 0.0) + w[i] / (rrf_k + rank)
                    ranks.setdefault(key, {})[i] = rank
            order = sorted(fused, key=lambda k: (-fused[k], min(ranks[k].values())))[:limit]
            hits = [(fused[k], addresses[k]) for k in order]
            details = {k: ranks[k] for k in order}
        except BaseException as exc:
            if isinstance(exc, ValueError) or is_panic(exc):
                raise self.damaged(exc) from None
            raise
        return HitList(
            hits,
            matched,
            hidden,
            searcher,
            None,
            snippet_chars,
            details,
            stored=reader.stored,
            make_snippets=generator,
            derived=reader.derived,
        )

    def _question_top(
        self,
        searcher: Any,
        loose: tuple[Any, Sequence[str], Sequence[str]],
        limit: int,
        filters: list[Any],
        boosts: dict[str, float] | None,
    ) -> list[tuple[float, Any]] | None:
        """A question's top `limit` found without its admission rule, when that provably gives the same list; else
        None. A question admits the notes holding two of its words or one of its rare words (if it has any), and
        scores each by BM25 over all its words (`loose[0]`, the any-word query, plus a constant 0 for the
        rule): the rule costs most of the search, since counting words per note is far slower than summing
        their scores. Every note the rule admits is in the any-word ranking with the same score (each score is
        the same sum: 0 + the words' BM25), so the top is the any-word ranking without the notes the rule
        turns away. Such a note matches exactly one of the words' clauses, one of a word that is not rare
        (`loose[2]`), and scores what that clause gives it alone. A word whose best score (`_word_best`,
        remembered) is below the `limit`-th kept note's cannot place such a note in the top; for any other
        word, the best-scored notes that hold it and none of the other words are read (`limit` of them)
        and taken out of the ranking. When every note left unread scores less than the `limit`-th kept note,
        the kept notes are the top, with the full search's scores and order."""
        anyword, words, loose_words = loose
        found = searcher.search(self._must(anyword, *filters), 2 * limit, count=False)
        hits = list(found.hits)
        turned_away: set[tuple[int, int]] = set()
        unread_below = float("-inf")  # every turned-away note not read scores at most this
        read: set[str] = set()
        while True:
            kept = [h for h in hits if (h[1].segment_ord, h[1].doc) not in turned_away]
            if len(kept) < limit:
                return None
            last = kept[limit - 1][0]
            if unread_below >= last:
                return None
            more = False
            for word in loose_words:
                if word in read or self._word_best(searcher, word, filters, boosts) < last:
                    continue
                read.add(word)
                alone = self._alone(searcher, word, words, filters, boosts, limit)
                turned_away.update((addr.segment_ord, addr.doc) for _score, addr in alone)
                if len(alone) == limit:
                    unread_below = max(unread_below, float(alone[-1][0]))
                more = True
            if not more:
                return kept[:limit]

    def _alone(
        self,
        searcher: Any,
        word: str,
        words: Sequence[str],
        filters: list[Any],
        boosts: dict[str, float] | None,
        limit: int,
    ) -> list[tuple[float, Any]]:
        """The best `limit` notes (with the walls' filter, scored as a search scores them) that match the clause
        of `word` and the clause of no other of `words`, each clause as `_at_least` makes it."""
        clause = self._text_query([word], True, boosts)
        if clause is None:
            return []
        others = [q for w in words if w != word and (q := self._text_query([w], True, boosts)) is not None]
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, clause)]
            + [(tantivy.Occur.MustNot, q) for q in others]
            + [(tantivy.Occur.Must, f) for f in filters]
        )
        return list(searcher.search(query, limit, count=False).hits)

    def _word_best(self, searcher: Any, word: str, filters: list[Any], boosts: dict[str, float] | None) -> float:
        """The best score a note holding `word` reaches through the word's query alone (with the walls'
        filter, as a search scores it), remembered until the index changes."""
        key = (word, tuple((boosts or FIELD_BOOSTS).items()), bool(filters))
        best = self._best_cache.get(key)
        if best is None:
            q = self._text_query([word], True, boosts)
            if q is None:
                best = float("-inf")
            else:
                got = searcher.search(self._must(q, *filters), 1, count=False).hits
                best = float(got[0][0]) if got else float("-inf")
            if len(self._best_cache) >= DOC_FREQ_MEMO_MAX:
                self._best_cache.clear()
            self._best_cache[key] = best
        return best

    def _counts(
        self, searcher: Any, query: Any, filters: list[Any], include_walled: bool
    ) -> tuple[dict[str, int], int]:
        """How many notes match `query` (and the day range): those no wall hides, and for each wall those it
        hides (all 0 when the walls are open, `include_walled`, and every match counts). One pass, a terms
        aggregation over the `wall` fast field, which scores nothing: cheaper than a scored count. `filters`
        as `_filters` makes them (the wall's filter last, when there is one)."""
        hidden = dict.fromkeys(WALL_NAMES, 0)
        scope = filters if include_walled else filters[:-1]
        counted = searcher.aggregate(
            self._must(query, *scope), {"walls": {"terms": {"field": "wall", "size": len(WALL_NAMES) + 1}}}
        )
        buckets = {str(b["key"]): int(b["doc_count"]) for b in counted["walls"]["buckets"]}
        if include_walled:
            return hidden, sum(buckets.values())
        for wall in WALL_NAMES:
            hidden[wall] = buckets.get(wall, 0)
        return hidden, buckets.get(NO_WALL, 0)

    def _filters(self, include_walled: bool, day_range: tuple[int | None, int | None]) -> list[Any]:
        filters: list[Any] = []
        lo, hi = day_range
        if lo is not None or hi is not None:
            filters.append(
                tantivy.Query.range_query(self.schema, "day", tantivy.FieldType.Integer, lower_bound=lo, upper_bound=hi)
            )
        if not include_walled:
            filters.append(tantivy.Query.term_query(self.schema, "wall", NO_WALL))
        return filters

    def name_hits(
        self,
        query: str,
        *,
        include_walled: bool = False,
        day_range: tuple[int | None, int | None] = (None, None),
        prefix_notes: int = 5,
        limit: int = 50,
    ) -> list[NameHit]:
        """The notes the query names, best first: a name equal to the query (a title, file name or alias, then
        a Dendron segment, then a heading of two words or more: one word that is only a heading, "Fix",
        "Overview", names a part of many notes, not one), then a title, file name or alias that begins with a
        query of two words or more, then a title that holds such a query as a phrase, each when at most `prefix_notes`
        notes share that beginning or phrase (one many names share names a topic, not a note). Among equals,
        a note the query names more ways (title and file name) comes first, then the higher BM25 of the
        query's words."""
        key = name_key(query)
        if not key:
            return []
        tries = [(kind, True) for kind in NAME_KINDS if kind != "heading" or " " in key]
        if " " in key:
            tries += [(kind, False) for kind in ("title", "file name", "alias")]
        self.ensure_sound()
        searcher = self._reader.searcher
        filters = self._filters(include_walled, day_range)

        def named_query(kind: str, exact: bool) -> Any:
            term = f"{NAME_CODES[kind]}:{key}"
            # keys hold only letters, digits and single spaces, so the term needs no regex escaping
            if exact:
                return tantivy.Query.term_query(self.schema, "names", term)
            # a prefix automaton at distance 0: names that begin with the key and a space (a regex query
            # compiles a DFA per call, about 1.3 ms; this costs microseconds)
            return tantivy.Query.fuzzy_term_query(self.schema, "names", term + " ", distance=0, prefix=True)

        inside = self._title_phrase(searcher, key) if " " in key else None
        try:
            tries = self._present(searcher, key, tries, named_query)
            if not tries and inside is None:
                return []
        except BaseException as exc:
            if isinstance(exc, ValueError) or is_panic(exc):
                raise self.damaged(exc) from None
            raise
        if inside is not None:
            tries.append(("title", False))  # a title holding the words as a phrase (ranked last, see below)
        text_q = self._text_query(key.split(), False)  # orders the notes of one name
        found: dict[str, tuple[int, NameHit]] = {}
        ways: dict[str, int] = {}
        for at, (kind, exact) in enumerate(tries):
            within = inside is not None and at == len(tries) - 1
            named = inside if inside is not None and within else named_query(kind, exact)
            clauses = [(tantivy.Occur.Must, tantivy.Query.const_score_query(named, 0.0))]
            clauses += [(tantivy.Occur.Must, f) for f in filters]
            if text_q is not None:
                clauses.append((tantivy.Occur.Should, text_q))
            try:
                res = searcher.search(tantivy.Query.boolean_query(clauses), limit, count=True)
            except BaseException as exc:
                if isinstance(exc, ValueError) or is_panic(exc):
                    raise self.damaged(exc) from None
                raise
            if not exact and int(res.count) > prefix_notes:
                continue
            rank = {"segment": 1, "heading": 2}.get(kind, 0) if exact else 4 if within else 3
            for score, addr in res.hits:
                doc = searcher.doc(addr)
                path = doc["path"][0]
                if rank == 0:
                    ways[path] = ways.get(path, 0) + 1
                if path in found:
                    continue
                facts = json.loads(bytes(doc["facts"][0]).decode("utf-8")) if doc["facts"] else {}
                shown = "file name" if kind == "segment" else kind
                found[path] = (rank, NameHit(shown, exact, float(score), Hit(path, float(score), facts, doc)))
        ordered = sorted(found.values(), key=lambda r: (r[0], -ways.get(r[1].hit.path, 0), -r[1].score, r[1].hit.path))
        return [h for _rank, h in ordered]

    def names_beginning(self, key: str, limit: int = 16) -> set[str]:
        """The whole titles, file names and aliases (as name keys) that begin with `key` and a space: what a
        run of a query's words may be the start of. Empty where this Tantivy cannot walk its term dictionary."""
        self.ensure_sound()
        searcher = self._reader.searcher
        if not key or not hasattr(searcher, "terms_with_prefix"):
            return set()
        out: set[str] = set()
        for kind in ("title", "file name", "alias"):
            code = f"{NAME_CODES[kind]}:"
            for term, _count in searcher.terms_with_prefix("names", f"{code}{key} ", limit=limit):
                out.add(term[len(code) :])
        return out

    def may_name(self, key: str, *, alone: bool = False) -> bool:
        """Whether a run of a query's words whose name key is or begins with `key` may name a note, as the term
        dictionary tells before any search (`named.named_runs` asks before `name_hits`, which most runs of a
        question's words would search in vain). `alone`, a run of one word: a title, file name, alias or
        file-name segment is the key. Otherwise `key` is a run's first two words: some name of any kind begins
        with them, or a title holds them as a phrase (as it would hold the whole run). Never false where
        `name_hits` finds a name such a run may take; true where the term dictionary cannot be walked."""
        self.ensure_sound()
        searcher = self._reader.searcher
        if not key or not hasattr(searcher, "terms_with_prefix"):
            return True
        if alone:
            kinds = ("title", "file name", "alias", "segment")
            return any(searcher.doc_freq("names", f"{NAME_CODES[kind]}:{key}") for kind in kinds)
        if any(searcher.terms_with_prefix("names", f"{code}:{key}", limit=1) for code in NAME_CODES.values()):
            return True
        terms = list(self._analyzer.analyze(key))
        if len(terms) < 2:
            return True
        if any(not searcher.doc_freq("title", t) for t in terms):
            return False
        return bool(searcher.search(tantivy.Query.phrase_query(self.schema, "title", terms), 1).hits)

    def _title_phrase(self, searcher: Any, key: str) -> Any | None:
        """A phrase query for the words of `key` inside a title (`karma theory` in "Studying the Karma
        Theory"), or None when `key` holds fewer than two words that are not stop words, or some word is in no
        title (the term dictionary tells, before any search)."""
        if sum(word not in STOP_WORDS for word in key.split()) < 2:  # `notes on` is in titles, but names nothing
            return None
        terms = list(self._analyzer.analyze(key))
        if len(terms) < 2 or any(not searcher.doc_freq("title", t) for t in terms):
            return None
        return tantivy.Query.phrase_query(self.schema, "title", terms)

    @staticmethod
    def _present(
        searcher: Any, key: str, tries: list[tuple[str, bool]], named_query: Callable[[str, bool], Any]
    ) -> list[tuple[str, bool]]:
        """The ways of naming in `tries` that some note may have, so only those are searched: most runs of a
        query's words name no note, and the term dictionary tells, before one search. It counts deleted notes
        too, which only sends a way on to its search, which finds nothing. A Tantivy without
        `terms_with_prefix` is asked by one search over every way, and all are kept if any matches."""
        if hasattr(searcher, "terms_with_prefix"):
            return [
                (kind, exact)
                for kind, exact in tries
                if (
                    searcher.doc_freq("names", f"{NAME_CODES[kind]}:{key}")
                    if exact
                    else searcher.terms_with_prefix("names", f"{NAME_CODES[kind]}:{key} ", limit=1)
                )
            ]
        anyway = tantivy.Query.boolean_query([(tantivy.Occur.Should, named_query(k, e)) for k, e in tries])
        return tries if int(searcher.search(anyway, 1, count=True).count) else []

    def near_spelling(self, term: str, paths: Sequence[str]) -> bool:
        """Whether one of the notes at `paths` holds a term one edit (an insertion, deletion, substitution or
        swap of neighbours) from `term`, an analysed term: what a misspelt query word reads as."""
        if not paths:
            return False
        self.ensure_sound()
        fuzzy = tantivy.Query.fuzzy_term_query
        near = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, fuzzy(self.schema, f, term, 1, True)) for f in SEARCH_FIELDS]
        )
        scope = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "path", p)) for p in paths]
        )
        return bool(self._reader.searcher.search(self._must(near, scope), 1).hits)

    def field_scores(self, words: Sequence[str], path: str, boosts: dict[str, float] | None = None) -> dict[str, float]:
        """BM25 of the words (any of them) in each field of one note, with the field boosts: for --explain."""
        out: dict[str, float] = {}
        self.ensure_sound()
        searcher = self._reader.searcher
        path_q = tantivy.Query.term_query(self.schema, "path", path)
        for field_name in SEARCH_FIELDS:
            quoted = quote_terms(words)
            if not quoted:
                break
            try:
                q = self._index.parse_query(
                    " ".join(quoted), [field_name], field_boosts={field_name: (boosts or FIELD_BOOSTS)[field_name]}
                )
                res = searcher.search(self._must(q, path_q), 1)
            except ValueError:
                continue
            out[field_name] = round(float(res.hits[0][0]), 4) if res.hits else 0.0
        return out
