"""The confidence's last step counts only query words the vault lacks that are not everyday English: a product or
format a question names and no note holds says the vault cannot answer it; an everyday word no note holds says
only that the question is worded differently. Real vault, real index."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Vault
from search_helpers import search

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search import confidence as conf
from agentmd.engine.search import query
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

TOPICS = ["recurring", "priority", "due date", "start date", "filters", "grouping", "sorting", "presets"]


@pytest.fixture
def store(vault: Vault, cache_dir: Path) -> Store:
    for n in range(120):  # past MISSING_FULL_AT, so a missing word counts in full
        topic = TOPICS[n % len(TOPICS)]
        vault.note(
            f"docs/{topic.replace(' ', '-')}-{n}.md",
            f"How {topic} works for tasks in a note, case {n}: write the task line, then query it.",
            title=f"Tasks {topic} {n}",
        )
    vault.note(
        "docs/export.md",
        "Export tasks from a note as a list: run the export command on the note.",
        title="Export tasks",
    )
    vault.note(
        "docs/logseq.md",
        "Export tasks to logseq: run the export command with the logseq target.",
        title="Logseq export",
    )
    s = Store(cache_dir)
    reconcile(vault.root, s)
    return s


def test_everyday_words_are_the_tokenizers_whole_words() -> None:
    assert all(conf.everyday(w) for w in ("diary", "Laptop", "erase", "calendar", "the"))
    assert not any(conf.everyday(w) for w in ("todoist", "kubernetes", "intellij", "logseq", "co-op", "记忆", ""))
    assert not conf.everyday("vocab")  # the key the word list stands under, not a word of it


def test_a_missing_product_name_counts_and_a_missing_everyday_word_does_not(store: Store) -> None:
    with store:
        top = [store.index.note_terms("docs/export.md")[0]]
        product = conf.QueryWords(store.index, "export tasks to todoist")
        everyday = conf.QueryWords(store.index, "export tasks to diary")
        chinese = conf.QueryWords(store.index, "export tasks 记忆")
        assert product.missing([product.held(t) for t in top]) == pytest.approx(conf.MISSING_WEIGHT)
        assert everyday.missing([everyday.held(t) for t in top]) == 0.0
        assert chinese.missing([chinese.held(t) for t in top]) == pytest.approx(conf.CJK_MISSING_WEIGHT, rel=1e-3)

        def best(query: str) -> dict[str, object]:
            request = SearchRequest(query=query, limit=5)
            return search(store.index, default_contract(), request, store.catalog, floor=0.0)["results"][0]  # type: ignore[no-any-return]

        named, plain = best("export tasks to todoist"), best("export tasks to diary")
    assert named["note"] == plain["note"] == "docs/export.md"
    assert float(plain["confidence"]) > float(named["confidence"])  # type: ignore[arg-type]


def test_the_word_list_answers_the_same_by_text_search_and_by_set(tmp_path: Path) -> None:
    words = ["diary", "todoist", "calendar", "kubernetes", "erase", "intellij", "the", "vocab"]
    fresh = conf.Vocabulary(conf.VOCABULARY_FILE)
    by_text = [fresh.holds(w) for w in words]
    assert fresh.words is None  # a few lookups: the file's text is searched
    for _ in range(fresh.SET_AFTER):
        fresh.holds("diary")
    assert fresh.words is not None  # asked on and on: the set is built
    assert [fresh.holds(w) for w in words] == by_text == [True, False, True, False, True, False, True, False]
    unreadable = conf.Vocabulary(tmp_path / "absent.json")
    assert not unreadable.holds("diary")  # without the list every missing word counts


def test_a_missing_word_counts_by_its_share_of_the_querys_specific_words(store: Store) -> None:
    """A long question whose top note holds all its specific words but one (a scientific claim, say) is
    weighed less than one whose only specific word no note holds: the lost word's weight is scaled by the
    share it has of all the specific words' weights."""
    with store:
        top = [store.index.note_terms("docs/logseq.md")[0]]
        alone = conf.QueryWords(store.index, "export tasks to todoist")
        beside = conf.QueryWords(store.index, "export tasks from logseq to todoist")
        lost_alone = alone.missing([alone.held(t) for t in top])
        lost_beside = beside.missing([beside.held(t) for t in top])
        weights = dict(zip(beside.plain, (w for _t, w in beside.words), strict=True))
    assert lost_alone == pytest.approx(conf.MISSING_WEIGHT)
    share = weights["todoist"] / (weights["todoist"] + weights["logseq"])
    assert 0.0 < share < 1.0
    assert lost_beside == pytest.approx(conf.MISSING_WEIGHT * share)
    assert lost_beside < lost_alone


def test_a_missing_word_counts_for_less_in_a_query_longer_than_the_questions_it_was_fitted_on(store: Store) -> None:
    with store:
        top = [store.index.note_terms("docs/export.md")[0]]
        short = conf.QueryWords(store.index, "export tasks to todoist")
        words = "export every recurring tasks note priority grouping filters sorting todoist"
        long = conf.QueryWords(store.index, words)
        assert len(long.words) > conf.MISSING_LONG_FROM >= len(short.words)
        lost_short = short.missing([short.held(t) for t in top])
        lost_long = long.missing([long.held(t) for t in top])
    assert lost_short == pytest.approx(conf.MISSING_WEIGHT)
    assert lost_long == pytest.approx(conf.MISSING_WEIGHT * conf.MISSING_LONG_FROM / len(long.words))


def test_a_misspelt_word_is_not_a_word_the_vault_lacks(store: Store) -> None:
    """A query word in no note that a top note holds one edit away (`logesq` for `logseq`) is read as a
    misspelling, not as a product the vault does not hold; a word with no near spelling still counts."""
    with store:
        paths = ["docs/logseq.md", "docs/export.md"]
        top = [store.index.note_terms(p)[0] for p in paths]
        typo = conf.QueryWords(store.index, "export tasks to logesq")
        product = conf.QueryWords(store.index, "export tasks to todoist")
        assert typo.missing([typo.held(t) for t in top]) == pytest.approx(conf.MISSING_WEIGHT)  # without the notes
        assert typo.missing([typo.held(t) for t in top], paths) == 0.0
        assert product.missing([product.held(t) for t in top], paths) == pytest.approx(conf.MISSING_WEIGHT)
        assert store.index.near_spelling("logesq", paths)
        assert not store.index.near_spelling("logesq", ["docs/export.md"])  # only the notes asked about
        assert not store.index.near_spelling("logesq", [])
        short = conf.QueryWords(store.index, "export tasks to logsq")  # a deletion, but a term under 6 letters
        assert short.missing([short.held(t) for t in top], paths) == pytest.approx(conf.MISSING_WEIGHT)

        def first(query: str) -> dict[str, object]:
            request = SearchRequest(query=query, limit=5)
            return search(store.index, default_contract(), request, store.catalog, floor=0.0)["results"][0]  # type: ignore[no-any-return]

        typed, named = first("export tasks to logesq"), first("export tasks to todoist")
    assert typed["note"] in paths
    assert float(typed["confidence"]) > float(named["confidence"])  # type: ignore[arg-type]


def test_every_row_shows_its_signals_score_in_every_lexical_mode(store: Store) -> None:
    # the score a result shows is `confidence.score` over its signals, on one scale whatever the mode
    for mode in ("fusion", "and", "hybrid"):
        request = SearchRequest(query="export tasks logseq", mode=mode, floor=0.0, explain=True)
        response = query.search(store.index, default_contract(), request)
        rows = response.to_json()["results"]
        assert rows
        ceiling = 1.0
        for row in rows:  # the score shown is the row's confidence, capped by the rows above
            assert 0.0 <= row["score"] <= 1.0 and row["score"] == min(row["confidence"], ceiling)
            ceiling = row["score"]
        sigs = conf.signals(store.index, request.query, response.results)
        assert [round(conf.score(s), 4) for s in sigs] == [r["confidence"] for r in rows]


def test_a_named_note_and_an_entity_page_keep_their_least_score() -> None:
    plain = conf.Evidence(0.2, 0.5, 2)
    assert conf.score(conf.Signals(plain, missing=3.0, named=True)) >= conf.NAME_CONFIDENCE
    assert conf.score(conf.Signals(plain, missing=3.0, entity=True)) == conf.ENTITY_CONFIDENCE
    assert conf.score(conf.Signals(plain, missing=3.0)) < conf.score(conf.Signals(plain))
    # a best chunk far from the query in meaning takes the cosine curve's score, whatever the words
    full = conf.Evidence(1.0, 1.0, 3, 0.0, 1.0)
    assert conf.score(conf.Signals(full, cosine=0.1)) < 0.05 < conf.score(conf.Signals(full, cosine=0.6))
    # ... unless the note's title holds every word of the query: the query names it ("money" and "Money as
    # integer cents", a short query far from a long passage in meaning)
    titled = conf.Evidence(1.0, 1.0, 1, 1.0, 1.0)
    assert conf.score(conf.Signals(titled, cosine=0.1)) == conf.score(conf.Signals(titled, cosine=0.29)) > 0.5
    # ... unless most of the query is words the embedding model does not know, which the note holds: a name
    # or an identifier is cut into word pieces, so the cosine says little of whether a passage is about it
    assert conf.score(conf.Signals(full, cosine=0.1, unknown_share=1.0)) == conf.score(conf.Signals(full, cosine=0.6))
    assert conf.score(conf.Signals(full, cosine=0.1, unknown_share=conf.UNKNOWN_SHARE - 0.01)) < 0.05


@pytest.mark.parametrize(
    ("word", "unknown"),
    [
        ("ConsenSys", True),
        ("useEffect", True),
        ("user-data-dir", True),
        ("E1234", True),
        ("Zipporah", True),
        ("bread", False),  # everyday English: the model holds it whole
        ("Theory", False),
        ("2023", False),  # no letter: a number is not a name
        ("知识", False),  # CJK is weighed on its own (`CJK_MISSING_WEIGHT`)
    ],
)
def test_words_the_embedding_model_does_not_know(word: str, unknown: bool) -> None:
    assert conf.unknown(word) is unknown


def test_the_share_of_a_query_held_in_words_the_model_does_not_know(store: Store) -> None:
    with store:
        terms, _title = store.index.note_terms("docs/logseq.md")
        other, _title = store.index.note_terms("docs/export.md")
        words = conf.QueryWords(store.index, "logseq export")
        share = words.unknown_share(terms)
        assert 0.5 < share < 1.0  # `logseq` unknown and rare, `export` everyday: most, not all, of the weight
        assert words.unknown_share(other) == 0.0  # the note does not hold the unknown word
        assert conf.QueryWords(store.index, "export tasks").unknown_share(terms) == 0.0


def test_words_only_in_the_frontmatter_count_as_the_notes(vault: Vault, cache_dir: Path) -> None:
    """A capture's `why:` or a note's `description:` is text a search finds (the body field indexes the
    frontmatter): the confidence counts those words as the note's too, so the answer clears the floor."""
    from agentmd.vault_schema.digest import front_words

    words = front_words({"title": "T", "tags": ["x"], "why": "the volatile default rewrote it", "n": 3, "ok": True,
                         "links": ["a", {"deep": "value"}]})  # fmt: skip
    assert words.split("\n") == ["the volatile default rewrote it", "3", "a", "value"]
    for n in range(120):
        vault.note(f"notes/filler-{n}.md", f"Filler note {n} about gardening and bread.", title=f"Filler {n}")
    vault.write(
        "memory/lessons/migration.md",
        "---\ntitle: A migration locked the invoices table\ntype: lesson\n"
        "why: Adding a column with a volatile default rewrote the table and blocked writes.\n---\n\n"
        "A volatile default forces a full table rewrite under an exclusive lock.\n",
    )
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        request = SearchRequest(query="volatile default rewrote", mode="fusion")
        response = query.search(store.index, default_contract(), request)
        (top,) = [r for r in response.results if r.note == "memory/lessons/migration.md"]
        assert top.word_share == 1.0 and (top.confidence or 0) >= default_contract().thresholds.search_floor
