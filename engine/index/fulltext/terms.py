"""The terms the index makes of a text or a note, and how many notes hold a word: remembered, since one search
asks for the same ones many times."""

from __future__ import annotations

from collections.abc import Container, Iterable
from itertools import chain

from agentmd.engine.index.fulltext.core import DOC_FREQ_MEMO_MAX, IndexCore
from agentmd.engine.index.fulltext.hits import Hit, HitList
from agentmd.engine.index.terms import BothTerms, TextTerms
from agentmd.vault_schema import cjk

# The analyzer's tokens never hold white space, so analysing each white-space-separated run of a text apart
# gives exactly the terms of the whole text (tests/engine/index/test_index_memos.py checks it on the shared corpora).
_SEGMENT_TERMS: dict[str, tuple[str, ...]] = {}
_SEGMENT_MEMO_MAX = 200_000
# A note's terms (all of them, and its title's) by path, with the title, meta and body they were analysed
# from: kept across index changes, which forget the per-state memo of `note_terms` (see `_terms_of`).
_NOTE_TERMS_KEPT: dict[str, tuple[tuple[str, str, str], tuple[Container[str], frozenset[str]]]] = {}
_NOTE_TERMS_MEMO_MAX = 2_048


class IndexTerms(IndexCore):
    """The analysed terms of texts and notes, and the notes a word is in."""

    def analyze(self, text: str) -> list[str]:
        """The terms the index makes of `text` (lower-cased, folded, stemmed), in order, exactly as the
        analyzer would (see `_looked_up`)."""
        return list(chain.from_iterable(self._looked_up(text.split())))

    def analyze_whole(self, text: str) -> list[str]:
        """The analyzer run over the whole text at once, as the index runs it when it indexes (and without the
        memo); `analyze` gives the same terms, faster."""
        return list(self._analyzer.analyze(text))

    def term_set(self, text: str) -> set[str]:
        """The distinct terms of `text`."""
        return set(chain.from_iterable(self._looked_up(set(text.split()))))

    def _looked_up(self, segments: Iterable[str]) -> list[tuple[str, ...]]:
        """The terms of each white-space-separated run of a text, from a memo shared by every index: a search
        analyses every section of every note it returns, and the analyzer costs about 1.1 µs a word where
        the memo costs a tenth of that."""
        memo = _SEGMENT_TERMS
        segments = list(segments)
        looked = list(map(memo.get, segments))
        if None in looked:
            if len(memo) >= _SEGMENT_MEMO_MAX:
                memo.clear()
            for i, terms in enumerate(looked):
                if terms is None:
                    looked[i] = memo[segments[i]] = tuple(self._analyzer.analyze(segments[i]))
        return looked  # type: ignore[return-value]  # every None was filled above

    def note_terms(self, path: str, known: tuple[Hit, HitList] | None = None) -> tuple[Container[str], frozenset[str]]:
        """The analysed terms of a note (title, meta and text) and of its title alone, read from the index
        and remembered until the index changes (after it, a note that reads as before takes its terms from
        `_terms_of` instead of being analysed again): the confidence model and the hybrid's word share ask
        for the same notes in one search, and the hook's searches return the same notes again and again.
        `known`: the note's hit as a search of the current state found it, read instead of looking it up."""
        self._check_state()
        cached = self._terms_cache.get(path)
        if cached is not None:
            return cached
        if known is not None and known[1].searcher is not self._reader.searcher:
            known = None  # found before the last reload: read the note as it is now
        found = known or self.hit_for(path)
        if found is None:
            return frozenset(), frozenset()
        hit, hits = found
        facts = hit.facts
        meta = str(facts.get("meta") or "")
        if facts.get("front"):  # the frontmatter's values: the body field a search matches holds them too
            meta = f"{meta}\n{facts['front']}"
        terms = self._terms_of(path, str(facts.get("title") or ""), meta, hits.text_of(hit))
        if len(self._terms_cache) >= _NOTE_TERMS_MEMO_MAX:
            self._terms_cache.pop(next(iter(self._terms_cache)))
        self._terms_cache[path] = terms
        return terms

    def _cjk_pairs(self, text: str) -> set[str]:
        """The joined pairs of neighbouring CJK characters of `text` (`cjk.pairs`), so a note is known to hold
        a query's `中文` only when the two characters stand together in it."""
        out: set[str] = set()
        if not cjk.has_cjk(text):  # one scan of the text spares splitting most notes that are not ASCII
            return out
        for segment in {s for s in text.split() if cjk.has_cjk(s)}:
            out.update(cjk.pairs(self._looked_up([segment])[0]))
        return out

    def _terms_of(self, path: str, title: str, meta: str, body: str) -> tuple[Container[str], frozenset[str]]:
        """The terms of a note's title, meta and body, and of its title alone; taken from `_NOTE_TERMS_KEPT`
        when the note reads as it did when they were analysed, so a note that an index change left as it was
        is not analysed again (the analysis depends on the text alone, never on the index's contents). The
        terms of an ASCII note's meta and body are found one at a time, as they are asked for (`TextTerms`)."""
        kept = _NOTE_TERMS_KEPT.get(path)
        if kept is not None and kept[0] == (title, meta, body):
            return kept[1]
        title_terms = self.term_set(title)
        terms: tuple[Container[str], frozenset[str]]
        if title.isascii() and meta.isascii() and body.isascii():
            title_set = frozenset(title_terms)
            terms = (BothTerms(title_set, TextTerms(f"{meta}\n{body}", self.run_terms, self.term_set)), title_set)
        else:
            rest = self.term_set(f"{meta}\n{body}")
            title_terms |= self._cjk_pairs(title)  # CJK words are pairs of terms
            rest |= self._cjk_pairs(f"{meta}\n{body}")
            terms = (frozenset(title_terms | rest), frozenset(title_terms))
        if len(_NOTE_TERMS_KEPT) >= _NOTE_TERMS_MEMO_MAX:
            _NOTE_TERMS_KEPT.pop(next(iter(_NOTE_TERMS_KEPT)), None)  # the oldest
        _NOTE_TERMS_KEPT[path] = ((title, meta, body), terms)
        return terms

    def run_terms(self, run: str) -> tuple[str, ...]:
        """The terms of one run of word characters (from the analyzer's memo)."""
        return self._looked_up([run])[0]

    def doc_freq(self, word: str) -> int:
        """How many notes contain `word` in any searched field. Remembered until the index changes: a
        question's words are counted by the plan, the confidence model and the hybrid's word share."""
        self._check_state()
        cached = self._df_cache.get(word)
        if cached is not None:
            return cached
        q = self._word_query(word)
        if q is None:
            n = 0
        else:
            self.ensure_sound()
            n = int(self._reader.searcher.search(q, 1, count=True).count)
        if len(self._df_cache) < DOC_FREQ_MEMO_MAX:
            self._df_cache[word] = n
        return n
