"""A name inside a question: the notes a run of the query's words names (title, file name, alias, heading) come
first whatever the words around it, the stop words inside that name are kept, and a question a note answers
with every one of its words is still answered by that note (engine/search/named.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Vault
from search_helpers import lexical_search as search

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search import planning
from agentmd.engine.search.named import named_runs
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

CONTRACT = default_contract()


@pytest.fixture
def store(vault: Vault, cache_dir: Path):  # type: ignore[no-untyped-def]
    vault.note("tools/QuickAdd.md", "Capture a thought in two keystrokes with macros.\n")
    vault.note("tools/Templater.md", "What do I know about templates? I know they expand when a note is made.\n")
    vault.note("philosophy/Free Will.md", "A short note.\n")
    vault.note("philosophy/Free Will 2.md", "A stronger note on the same question.\n")
    vault.note(
        "philosophy/Determinism essay.md",
        "Does free will survive determinism in physics? Free will survives determinism: physics leaves the "
        "will free, and determinism in physics is no proof against free will.\n",
    )
    vault.note("people/ada.md", "Wrote the first program.\n", aliases=["Ada Lovelace"])
    vault.note("ops/setup guide.md", "# Setup guide\n## Install\nRun the installer.\n")
    vault.note("ops/other.md", "# Other\n## Install\nA second install section.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        yield s


def top(store: Store, query: str, **kw: object) -> list[dict]:
    return search(store.index, CONTRACT, SearchRequest(query=query, **kw))["results"]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("what do I know about QuickAdd", "tools/QuickAdd.md"),
        ("who is Ada Lovelace", "people/ada.md"),
        ("notes on quickadd please", "tools/QuickAdd.md"),
    ],
)
def test_a_name_inside_a_question_puts_its_note_first(store: Store, query: str, note: str) -> None:
    first = top(store, query)[0]
    assert first["note"] == note
    assert first["name"] in ("title", "file name", "alias")
    assert first["name_within"].lower() in query.lower()


def test_the_filler_around_a_name_is_not_required(store: Store) -> None:
    # `know` is in Templater.md, not in QuickAdd.md: the words beside the name do not decide
    assert [r["note"] for r in top(store, "what do I know about QuickAdd")][:1] == ["tools/QuickAdd.md"]
    assert top(store, "what do I know about QuickAdd", mode="and") != []


def test_a_stop_word_inside_a_name_is_kept(store: Store) -> None:
    results = top(store, "what did I note about free will and determinism")
    assert [r["note"] for r in results[:2]] == ["philosophy/Free Will.md", "philosophy/Free Will 2.md"]
    runs = named_runs(store.index, "what did I note about free will and determinism")
    assert [" ".join(r.words) for r in runs] == ["free will"]
    how = planning.plan(store.index, SearchRequest(query="note about free will"), ["will"])
    assert "will" in how.groups[0]


def test_a_question_a_note_answers_word_for_word_is_answered_by_content(store: Store) -> None:
    results = top(store, "does free will survive determinism in physics")
    assert results[0]["note"] == "philosophy/Determinism essay.md"
    assert not any("name" in r for r in results)


def test_a_single_word_heading_inside_a_question_names_no_note(store: Store) -> None:
    assert named_runs(store.index, "how do I install the printer driver") == []
    assert not any("name" in r for r in top(store, "how do I install the printer driver"))


def test_a_query_of_only_filler_and_stop_words_names_nothing(store: Store) -> None:
    assert named_runs(store.index, "what do I want to know about it") == []


def test_a_name_inside_a_query_clears_the_search_floor_but_not_the_recall_floor_alone(store: Store) -> None:
    from agentmd.engine.search import query

    response = query.search(
        store.index, CONTRACT, SearchRequest(query="what do I know about QuickAdd", mode="fusion")
    ).to_json()
    first = response["results"][0]
    assert first["note"] == "tools/QuickAdd.md"
    assert CONTRACT.thresholds.search_floor <= first["confidence"]
    whole = query.search(store.index, CONTRACT, SearchRequest(query="QuickAdd", mode="fusion")).to_json()["results"][0]
    assert whole["confidence"] >= CONTRACT.thresholds.recall_floor > first["confidence"] or (
        first["confidence"] >= CONTRACT.thresholds.recall_floor and "name_within" in first
    )


def test_a_stop_word_inside_a_phrase_of_the_vault_is_kept(vault: Vault, cache_dir: Path) -> None:
    vault.note("essays/one.md", "Free will is the question. Is free will an illusion?\n")
    vault.note("essays/two.md", "Determinism and free will: compatibilists say both.\n")
    vault.note("essays/three.md", "A free lunch: the parser will parse it.\n")
    vault.note("essays/four.md", "Free will, again.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        from agentmd.engine.search.named import phrase_stop_words

        assert phrase_stop_words(s.index, "notes on free will and determinism") == ["will"]
        assert phrase_stop_words(s.index, "the parser will fail") == []  # "parser will" is no phrase here
        how = planning.plan(s.index, SearchRequest(query="free will determinism"), ["will"])
        assert how.groups[0] == ["free", "will", "determinism"]
        got = search(s.index, CONTRACT, SearchRequest(query="free will determinism"))["results"]  # type: ignore[arg-type]
        assert [r["note"] for r in got][:1] == ["essays/two.md"]


def test_two_words_of_a_longer_title_name_its_note(vault: Vault, cache_dir: Path) -> None:
    vault.note("Karma.md", "Karma is action and its fruit.\n")
    vault.note("Studying the Karma Theory.md", "Reading the Gita on action, duty and rebirth.\n")
    vault.note("Osho on the Karma-Rebirth Theory.md", "A critique.\n")
    vault.note("Extra notes on Theology.md", "Theology, briefly.\n")
    vault.note("To Take Notes On.md", "A list.\n")
    vault.note("Scalar Bosons.md", "The Higgs boson is the only scalar boson.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        for query in ("notes on karma theory", "what do I know about the karma theory"):
            first = search(s.index, CONTRACT, SearchRequest(query=query))["results"][0]  # type: ignore[arg-type]
            assert first["note"] == "Studying the Karma Theory.md", query
            assert "karma theory" in first["name_within"].lower()
        # `notes on` is in two titles, but holds one word that is not a stop word: it names neither note
        assert [" ".join(r.words) for r in named_runs(s.index, "notes on Scalar Bosons")] == ["Scalar Bosons"]
        got = search(s.index, CONTRACT, SearchRequest(query="notes on Scalar Bosons"))["results"]  # type: ignore[arg-type]
        assert got[0]["note"] == "Scalar Bosons.md"


def test_the_words_that_only_ask_do_not_judge_a_named_note(vault: Vault, cache_dir: Path) -> None:
    from agentmd.engine.search import query

    assert planning.judged_query(SearchRequest(query="summarise what I wrote about karma theory")) == (
        "what I about karma theory"
    )
    assert planning.judged_query(SearchRequest(query="remind me please")) == "remind me please"  # nothing else
    for n in range(120):  # a vault of a size where the floor applies in full
        vault.note(f"filler/note {n}.md", f"Gardening log {n}: tomatoes, basil and the summer's rain.\n")
    vault.note("Karma.md", "Karma is action and its fruit.\n")
    vault.note("Studying the Karma Theory.md", "Reading the Gita on action, duty and rebirth.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        for ask in ("summarise what I wrote about karma theory", "what have I got on karma theory"):
            got = query.search(s.index, CONTRACT, SearchRequest(query=ask)).results
            assert got and got[0].note == "Studying the Karma Theory.md", ask
            assert got[0].confidence is not None and got[0].confidence >= CONTRACT.thresholds.search_floor
        # a question about what the vault does not hold is still turned away, request words or not
        assert (
            query.search(s.index, CONTRACT, SearchRequest(query="summarise what I wrote about kubernetes")).results
            == ()
        )


def test_a_title_longer_than_a_run_named_whole_inside_a_question_puts_its_note_first(
    vault: Vault, cache_dir: Path
) -> None:
    vault.note("templates/tasks with range of due dates - Templater plugin.md", "A template of due dates.\n")
    vault.note("templates/tasks with range of scheduled dates - Templater plugin.md", "Scheduled dates.\n")
    vault.note("docs/Dates.md", "Due dates and scheduled dates, with a range of dates in a query.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        for query in (
            "notes on tasks with range of due dates Templater plugin",
            "where did I write about tasks with range of scheduled dates - Templater plugin",
        ):
            runs = named_runs(s.index, query)
            assert len(runs) == 1 and len(runs[0].words) >= 8 and runs[0].hits[0].exact, query
            first = search(s.index, CONTRACT, SearchRequest(query=query))["results"][0]  # type: ignore[arg-type]
            kind = "due" if "due" in query else "scheduled"
            assert first["note"] == f"templates/tasks with range of {kind} dates - Templater plugin.md", query


def test_a_sentence_whose_pieces_begin_titles_names_none_of_them(vault: Vault, cache_dir: Path) -> None:
    """A claim is about its words: the beginnings of other notes' titles inside it ("expression is associated",
    "breast cancer") name none of those notes, and a beginning cut at a stop word names nothing at all."""
    vault.note("a.md", "Body.\n", title="Expression is associated with outcome in a cohort")
    vault.note("b.md", "Body.\n", title="Breast cancer screening in older women")
    vault.note("c.md", "Body.\n", title="Breast cancer and diet")
    vault.note("d.md", "Body.\n", title="Risk of dementia after surgery")
    vault.note(
        "aldh1.md",
        "ALDH1 expression in tumours is associated with poorer prognosis in breast cancer patients.\n",
        title="Stem cell markers in tumours",
    )
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        claim = "ALDH1 expression is associated with poorer prognosis in breast cancer."
        assert named_runs(s.index, claim) == []
        assert search(s.index, CONTRACT, SearchRequest(query=claim))["results"][0]["note"] == "aldh1.md"  # type: ignore[arg-type,index]
        assert named_runs(s.index, "the risk of") == []  # a beginning ending at a stop word
        assert [" ".join(r.words) for r in named_runs(s.index, "notes on breast cancer and diet")] == [
            "breast cancer and diet"
        ]


def test_the_term_dictionary_tells_which_runs_may_name_a_note(store: Store) -> None:
    """`may_name`, asked before any name search: true wherever a run could name a note (a name of any kind
    begins with its first two words, a title holds them as a phrase, a title, file name or alias is its one
    word), false for the runs of a question that name nothing."""
    idx = store.index
    assert idx.may_name("free will")  # a title is those two words
    assert idx.may_name("setup guide")  # a heading and a file name begin with them
    assert idx.may_name("ada lovelace")  # an alias
    assert idx.may_name("will 2")  # inside the title "Free Will 2", as a phrase
    assert not idx.may_name("capture thought")  # words of a body only
    assert not idx.may_name("will free")  # both words in titles, but never in that order
    assert idx.may_name("quickadd", alone=True) and idx.may_name("templater", alone=True)
    assert not idx.may_name("install", alone=True)  # a heading alone names a part of many notes, not one
    assert not idx.may_name("keystrokes", alone=True)


def test_runs_that_name_nothing_search_nothing(store: Store) -> None:
    """A question whose runs the term dictionary rules out never reaches the name search; one that names a note
    still finds it."""
    calls: list[str] = []
    idx = store.index

    class Counting:
        def __getattr__(self, name: str) -> object:
            return getattr(idx, name)

        def name_hits(self, query: str, **kw: object) -> object:
            calls.append(query)
            return idx.name_hits(query, **kw)  # type: ignore[arg-type]

    assert named_runs(Counting(), "capture a thought in two keystrokes") == []  # type: ignore[arg-type]
    assert calls == []
    runs = named_runs(Counting(), "what do I know about Free Will")  # type: ignore[arg-type]
    assert [r.words for r in runs] == [("Free", "Will")] and calls
