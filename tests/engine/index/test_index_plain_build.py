"""A build reads plain notes through the simple tokenizer and the others through the analyzer itself: the
index it makes scores every word of every note exactly as an index built by updates does."""

from __future__ import annotations

import re
from pathlib import Path

import tantivy
from conftest import corpus

from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.index.fulltext.analyzer import TOKEN_PATTERN, plain_analyzer, plain_words, text_analyzer
from agentmd.engine.index.fulltext.schema import IndexDoc
from agentmd.engine.index.notes import prepare
from agentmd.engine.index.reconcile import walk_vault


def corpus_docs(name: str) -> list[IndexDoc]:
    vault = corpus(name)
    prepared = [prepare(vault, rel, st, None, "obsidian") for rel, st in sorted(walk_vault(vault).files.items())]
    return [p.doc for p in prepared if p.doc is not None]


def test_plain_words_are_read_alike_by_both_tokenizers() -> None:
    texts = [line for doc in corpus_docs("obsidian-tasks") for line in doc.body.splitlines()]
    texts += ["Plain words, 42 of them: x-ray v2.0 (a+b)=c " + "w" * 90, "", "  \t "]
    plain = [t for t in texts if plain_words(t)]
    assert len(plain) > 1000 and len(plain) < len(texts)  # the corpus has both kinds of line
    raw_regex = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(TOKEN_PATTERN)).build()
    raw_simple = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()
    analyzer, fast = text_analyzer(), plain_analyzer()
    assert [t for t in plain if raw_simple.analyze(t) != raw_regex.analyze(t)] == []  # same tokens, same positions
    assert [t for t in plain if fast.analyze(t) != analyzer.analyze(t)] == []
    # what the simple tokenizer would read otherwise is never called plain
    for text in ("snake_case", "東京タワー", "naïve", "e\u0301", "__init__"):
        assert not plain_words(text)
        assert raw_simple.analyze(text) != raw_regex.analyze(text) or text == "naïve"


def test_a_build_scores_every_word_as_an_index_built_by_updates(tmp_path: Path) -> None:
    docs = corpus_docs("obsidian-tasks") + corpus_docs("ailurus-zh")
    plain = sum(plain_words(d.body) and plain_words(d.title) and plain_words(d.meta) for d in docs)
    assert 50 < plain < len(docs) - 50
    built = SearchIndex(tmp_path / "built")
    built.apply(iter(docs), new=True)  # an empty index: the build's two commits
    updated = SearchIndex(tmp_path / "updated")
    first = next(d for d in docs if not plain_words(d.body))
    updated.apply([first])
    updated.apply([d for d in docs if d is not first])  # one update: every note through the analyzer
    assert built.doc_count() == updated.doc_count() == len(docs)
    compared = 0
    for doc in docs:
        # words as a person types them: runs between spaces, so `a-b` or `x_y` keep their punctuation and
        # a word of several tokens is matched as a phrase, by position
        words = list(dict.fromkeys(w for w in re.split(r"\s+", f"{doc.title} {doc.body}") if w))[:12]
        if not words:
            continue
        expected = updated.field_scores(words, doc.path)
        assert built.field_scores(words, doc.path) == expected, doc.path
        compared += 1
    assert compared > 400
    for word in ("task", "_", "snake_case", "東", "中文", "tasks_plugin", "obsidian"):
        assert built.doc_freq(word) == updated.doc_freq(word)
    built.close()
    updated.close()


def test_a_build_with_a_path_twice_keeps_the_last_version(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "ix")
    docs = [
        IndexDoc("a.md", "A", "", "first_version words", "", None, 20250101),
        IndexDoc("b.md", "B", "", "plain words", "", None, 20250101),
        IndexDoc("a.md", "A", "", "second plain version", "", None, 20250101),
    ]
    index.apply(iter(docs), new=True)
    assert index.doc_count() == 2
    assert index.doc_freq("second") == 1 and index.doc_freq("first_version") == 0
    index.close()
