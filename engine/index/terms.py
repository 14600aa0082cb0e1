"""Whether a note holds a term, answered one term at a time.

A search asks of each note it returns whether it holds each of the query's words (the confidence model's word
shares, the hybrid's word share): a handful of terms against a note of hundreds of words. Analysing the whole
note to build its term set costs about 100 µs a note in Python; finding a few terms in it costs a tenth.

For an ASCII text the index's analyzer (fulltext/analyzer.py) makes one term of each run of `[A-Za-z0-9_]`: it
lower-cases the run and stems it (English Snowball), which changes only its ending. The stem less its last
letter begins the lower-cased run, except for `die`, `lie`, `tie` and the like, from `dying`, `lying`,
`tying`, whose run begins with the stem's first letter and `y` (every distinct token of the four shared vaults
and of SciFact's 5,183 abstracts, 95,000 in all, was checked; tests/engine/index/test_note_terms.py checks the
notes). So a term is held exactly when some run beginning with one of those openings analyses to it: each such run is
analysed (through the analyzer's memo) until one does. A text that is not ASCII is analysed in full instead
(folding, CJK characters and other scripts do not keep that shape), and so is a text in which one term's
openings begin more than CHECKS_BEFORE_WHOLE runs (60,000 tags of one stem, say), where reading every such
run one by one would cost more than the whole analysis.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence

_RUN = re.compile(r"[a-z0-9_]+")
CHECKS_BEFORE_WHOLE = 64


def openings(term: str) -> tuple[str, ...]:
    """What a lower-cased run that analyses to `term` begins with (one of these)."""
    first = term[:-1] or term
    if len(term) > 2 and term.endswith("ie"):
        return first, term[:-2] + "y"
    return (first,)


class TextTerms(Container[str]):
    """The terms of an ASCII text, found on demand (`term in terms`) and remembered."""

    __slots__ = ("_analyse", "_known", "_lowered", "_text", "_whole", "_whole_of")

    def __init__(
        self, text: str, analyse: Callable[[str], Sequence[str]], whole_of: Callable[[str], Container[str]]
    ) -> None:
        """`analyse`: a run of the text (already lower-cased) to its terms, as the index's analyzer gives them;
        `whole_of`: the terms of a whole text, as the analyzer gives them."""
        self._text = text
        self._analyse = analyse
        self._whole_of = whole_of
        self._whole: Container[str] | None = None
        self._lowered: str | None = None
        self._known: dict[str, bool] = {}

    def __contains__(self, term: object) -> bool:
        if not isinstance(term, str) or not term:
            return False
        known = self._known.get(term)
        if known is None:
            known = self._known[term] = self._find(term)
        return known

    def _find(self, term: str) -> bool:
        if self._whole is not None:
            return term in self._whole
        lowered = self._lowered
        if lowered is None:
            lowered = self._lowered = self._text.lower()
        checks = 0
        for opening in openings(term):
            at = lowered.find(opening)
            while at >= 0:
                if at == 0 or not _is_run_char(lowered[at - 1]):
                    checks += 1
                    if checks > CHECKS_BEFORE_WHOLE:
                        self._whole = self._whole_of(self._text)
                        return term in self._whole
                    run = _RUN.match(lowered, at)
                    if run is not None and term in self._analyse(run.group()):
                        return True
                at = lowered.find(opening, at + 1)
        return False


class BothTerms(Container[str]):
    """The terms of a note's title (a set) and of the rest of it (found on demand)."""

    __slots__ = ("_rest", "_title")

    def __init__(self, title: frozenset[str], rest: Container[str]) -> None:
        self._title = title
        self._rest = rest

    def __contains__(self, term: object) -> bool:
        return term in self._title or term in self._rest


def _is_run_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"
