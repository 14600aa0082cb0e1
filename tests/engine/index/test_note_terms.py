"""A note's terms found one at a time (engine/index/terms.py) against its whole analysis, on every note of the
shared corpora: a term is found exactly when the analysis of the whole note holds it."""

from __future__ import annotations

import random
from pathlib import Path

from conftest import CORPORA

from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.index.terms import BothTerms, TextTerms, openings


def test_a_term_is_found_exactly_when_the_whole_analysis_holds_it(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "ix")
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(CORPORA.rglob("*.md"))]
    texts = [t for t in texts if t.isascii()]
    assert len(texts) > 3000
    vocabulary = sorted({t for text in texts[:400] for t in index.term_set(text)})
    rng = random.Random(3)
    checked = 0
    for text in texts:
        whole = index.term_set(text)
        found = TextTerms(text, index.run_terms, index.term_set)
        assert [t for t in whole if t not in found] == []  # every term of the note is found
        others = rng.sample(vocabulary, 40)  # terms of other notes: found only if this note holds them too
        assert [t for t in others if (t in found) != (t in whole)] == []
        checked += len(whole) + len(others)
    assert checked > 300_000


def test_the_openings_of_a_stem() -> None:
    assert openings("run") == ("ru",)
    assert openings("die") == ("di", "dy")  # `dying`
    assert openings("a") == ("a",)


def test_words_inside_other_words_and_edges(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "ix")
    text = "Overrun tides; the_harbour at x9 and FLYING fish. dying-light"
    found = BothTerms(frozenset(index.term_set("Pier")), TextTerms(text, index.run_terms, index.term_set))
    whole = index.term_set(text) | index.term_set("Pier")
    for term in ["run", "overrun", "tide", "the_harbour", "harbour", "x9", "fli", "fish", "die", "light", "pier", ""]:
        assert (term in found) == (term in whole), term
    assert 5 not in found  # not a term at all


def test_a_text_where_a_term_opens_many_runs(tmp_path: Path) -> None:
    """60,000 tags of one stem: a term opening every run is answered from the whole analysis, the same answers."""
    index = SearchIndex(tmp_path / "ix")
    text = " ".join(f"#tangle{i}" for i in range(60_000)) + " tangles"
    found = TextTerms(text, index.run_terms, index.term_set)
    for term in ["tank", "tangl", "tangle59999", "tangle60000", "tangles"]:
        assert (term in found) == (term in index.term_set(text)), term
