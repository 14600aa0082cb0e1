"""Time in a query: "last May", "in June 2023", "two weeks ago" read as a span of days against the search's
clock (engine/search/when.py); the notes dated outside it are lowered, not hidden (`outside_time`), the time
words are not required of a note, and each result carries its note's date (`captured`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from conftest import Vault
from search_helpers import lexical_search, search

from agentmd.engine.errors import UsageError
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search import planning, when
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

CONTRACT = default_contract()
NOW = "2024-06-15"


@pytest.mark.parametrize(
    ("query", "first", "last", "month", "text"),
    [
        ("what did I do last May", "2024-05-01", "2024-05-31", None, "last May"),
        ("in June 2023 what did we decide", "2023-06-01", "2023-06-30", None, "June 2023"),
        ("what did Gina find on 1 February, 2023?", "2023-02-01", "2023-02-01", None, "1 February, 2023"),
        ("accepted on May 23, 2023", "2023-05-23", "2023-05-23", None, "May 23, 2023"),
        ("notes of 2023-06-08", "2023-06-08", "2023-06-08", None, "2023-06-08"),
        ("what happened yesterday", "2024-06-14", "2024-06-14", None, "yesterday"),
        ("notes from two weeks ago", "2024-05-29", "2024-06-04", None, "two weeks ago"),
        ("decisions before June 2023", None, "2023-05-31", None, "before June 2023"),
        ("what changed since March", "2024-03-01", None, None, "since March"),
        ("what we said last week", "2024-06-03", "2024-06-09", None, "last week"),
        ("beach trips in 2023", "2023-01-01", "2023-12-31", None, "in 2023"),
        ("when did we go camping in June?", None, None, 6, "in June"),
        ("anything new since Monday", "2024-06-10", None, None, "since Monday"),
        ("before Friday", None, "2024-06-13", None, "before Friday"),
    ],
)
def test_time_expressions_are_read_as_spans_against_the_clock(
    query: str, first: str | None, last: str | None, month: int | None, text: str
) -> None:
    span = when.read(query, NOW)
    assert span is not None
    assert (span.to_json()["first"], span.to_json()["last"], span.month, span.text) == (first, last, month, text)


@pytest.mark.parametrize(
    "query",
    [
        "before she moved",
        "May I ask about the parser",
        "fix port 8080 bug",
        "upgrade to python 3.11",
        "march 3 times",
        "Monday standup notes",
        "is the codec registered under IDNA 2008 rules",  # a year inside a standard's or a product's name
        "IDNA 2003 transitional processing",
        "drivers for Windows 2000",
    ],
)
def test_words_that_only_look_like_time_name_none(query: str) -> None:
    assert when.read(query, NOW) is None


def test_the_clock_is_the_request_s_or_today() -> None:
    assert when.read("yesterday", "2023-01-01T09:30:00+00:00").to_json()["first"] == "2022-12-31"  # type: ignore[union-attr]
    today = dt.date.today()
    assert when.read("what happened yesterday").first == today - dt.timedelta(days=1)  # type: ignore[union-attr]
    with pytest.raises(UsageError):
        planning.time_span(SearchRequest(query="last May", now="soon"))


@pytest.fixture
def store(vault: Vault, cache_dir: Path):  # type: ignore[no-untyped-def]
    vault.note("trips/a.md", "Camping by the lake with the kids.\n", date="2024-05-12")
    vault.note("trips/b.md", "Camping by the lake, the tent leaked.\n", date="2024-02-03")
    vault.note("trips/c.md", "Camping by the lake in the snow.\n", date="2023-12-20")
    vault.note("work/standup.md", "Standup: the parser release slipped.\n", date="2024-06-14")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        yield s


def notes(results: list[dict]) -> list[str]:
    return [r["note"] for r in results]


def test_notes_of_the_named_time_come_first_and_the_others_stay(store: Store) -> None:
    plain = lexical_search(store.index, CONTRACT, SearchRequest(query="camping lake", now=NOW))["results"]
    timed = lexical_search(store.index, CONTRACT, SearchRequest(query="camping lake last May", now=NOW))["results"]
    assert notes(timed)[0] == "trips/a.md"
    assert sorted(notes(timed)) == sorted(notes(plain))  # lowered, not hidden
    assert [r["penalties"] for r in timed[1:]] == [["outside_time"], ["outside_time"]]
    assert timed[0]["captured"].startswith("2024-05-12")  # the answer can say when
    earlier = lexical_search(store.index, CONTRACT, SearchRequest(query="camping lake in February", now=NOW))
    assert notes(earlier["results"])[0] == "trips/b.md"


def test_a_note_named_in_the_question_but_of_another_day_is_not_put_first(vault: Vault, cache_dir: Path) -> None:
    # "office hours" is the title of an undated hub note and of the notes of each meeting: the one of the day
    # asked for comes first, not the hub that the question names
    vault.note("Office hours.md", "Office hours: how they run, who comes, the agenda template.\n", date="2024-06-01")
    vault.note("meetings/oh-1.md", "Office hours: discussed the importer and the release.\n", title="Office hours",
               date="2024-05-08")  # fmt: skip
    vault.note("meetings/oh-2.md", "Office hours: discussed the parser and the docs.\n", title="Office hours",
               date="2024-05-22")  # fmt: skip
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        asked = SearchRequest(query="what was discussed at office hours on 2024-05-22", now=NOW)
        got = notes(lexical_search(s.index, CONTRACT, asked)["results"])
        plain = notes(lexical_search(s.index, CONTRACT, SearchRequest(query="office hours", now=NOW))["results"])
    assert got[0] == "meetings/oh-2.md", got
    assert sorted(got) == sorted(plain)  # the others are lowered, not hidden


def test_the_time_words_are_not_required(store: Store) -> None:
    # no note says "yesterday" or "May": a short query's time words are read as a time, not looked for
    got = lexical_search(store.index, CONTRACT, SearchRequest(query="parser yesterday", now=NOW))["results"]
    assert notes(got) == ["work/standup.md"]
    got = lexical_search(store.index, CONTRACT, SearchRequest(query="camping last May", now=NOW, mode="fusion"))
    assert notes(got["results"])[0] == "trips/a.md"
    how = planning.plan(store.index, SearchRequest(query="camping lake in May", now=NOW))
    assert how.groups[0] == ["camping", "lake"]
    # a question requires none of its words: its time words still score for a note that writes its date
    how = planning.plan(store.index, SearchRequest(query="where did we go camping by the lake last May", now=NOW))
    assert how.min_match == 2 and "May" in how.groups[0]


def test_the_clock_moves_the_span(store: Store) -> None:
    got = search(store.index, CONTRACT, SearchRequest(query="camping lake last December", now=NOW, floor=0.0))
    assert notes(got["results"])[0] == "trips/c.md"
    got = search(store.index, CONTRACT, SearchRequest(query="camping lake yesterday", now="2024-02-04", floor=0.0))
    assert notes(got["results"])[0] == "trips/b.md"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what did I do yesterday", ["work/standup.md"]),
        ("what did I work on yesterday?", ["work/standup.md"]),
        ("yesterday", ["work/standup.md"]),
        ("what did I capture in 2024?", ["work/standup.md", "trips/a.md", "trips/b.md"]),  # newest first
        ("notes from December", ["trips/c.md"]),  # a month alone: that month of any year
        ("what happened since February 2024", ["work/standup.md", "trips/a.md", "trips/b.md"]),
        ("anything new since Monday?", ["work/standup.md"]),
    ],
)
def test_a_time_alone_lists_the_notes_of_that_time_newest_first(store: Store, query: str, expected: list[str]) -> None:
    got = search(store.index, CONTRACT, SearchRequest(query=query, now=NOW, mode="fusion"), store.catalog)
    assert notes(got["results"]) == expected
    assert all(r["name"] == "date" and r["score"] >= 0.9 for r in got["results"])  # named by its day
    assert got["matched"] == len(expected) and got["note"] is None


@pytest.mark.parametrize(
    "query", ["what should I work on today", "what will I do tomorrow?", "what must we fix this week"]
)
def test_a_question_of_what_to_do_is_not_a_listing_of_that_time(store: Store, query: str) -> None:
    # a modal verb asks for advice or a plan: the notes captured that day are not its answer
    assert planning.time_only(SearchRequest(query=query, now=NOW)) is None
    got = search(store.index, CONTRACT, SearchRequest(query=query, now=NOW, mode="fusion"), store.catalog)
    assert all(r.get("name") != "date" for r in got["results"])


def test_a_time_with_other_words_is_a_word_search_and_an_empty_span_says_so(store: Store) -> None:
    # "parser" is looked for: the time only lowers the notes dated outside it
    got = search(store.index, CONTRACT, SearchRequest(query="parser yesterday", now=NOW, floor=0.0), store.catalog)
    assert notes(got["results"]) == ["work/standup.md"] and got["results"][0].get("name") is None
    empty = search(store.index, CONTRACT, SearchRequest(query="what did I do last week", now=NOW), store.catalog)
    assert empty["results"] == [] and empty["note"] == "no note was captured last week; try a wider span of days"
    # a hybrid request is listed the same way, and says why the dense arm took no part
    hybrid = search(store.index, CONTRACT, SearchRequest(query="yesterday", now=NOW, mode="hybrid"), store.catalog)
    assert notes(hybrid["results"]) == ["work/standup.md"]
    assert hybrid["dense"] == {"used": False, "reason": "a time alone is listed by date"}


def test_a_time_alone_keeps_walls_and_the_requests_own_bounds(vault: Vault, cache_dir: Path) -> None:
    vault.note("log/today.md", "Paired on the importer.\n", date="2024-06-14")
    vault.note("log/old-plan.md", "A plan we dropped.\n", date="2024-06-14", status="superseded")
    vault.note("log/earlier.md", "Read the release notes.\n", date="2024-06-10")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        got = search(s.index, CONTRACT, SearchRequest(query="last week", now="2024-06-17", mode="fusion"), s.catalog)
        assert notes(got["results"]) == ["log/today.md", "log/earlier.md"] and got["superseded_hidden"] == 1
        bounded = SearchRequest(query="last week", now="2024-06-17", mode="fusion", after="2024-06-12")
        assert notes(search(s.index, CONTRACT, bounded, s.catalog)["results"]) == ["log/today.md"]
        one = SearchRequest(query="last week", now="2024-06-17", mode="fusion", limit=1)
        assert notes(search(s.index, CONTRACT, one, s.catalog)["results"]) == ["log/today.md"]


def test_a_date_that_is_a_notes_title_finds_that_note_by_name(vault: Vault, cache_dir: Path) -> None:
    vault.note("daily/2024-06-01.md", "Planned the week.\n", title="2024-06-01", date="2024-06-03")
    vault.note("log/other.md", "Fixed the importer.\n", date="2024-06-01")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        got = search(s.index, CONTRACT, SearchRequest(query="2024-06-01", now=NOW, mode="fusion"), s.catalog)
        assert notes(got["results"])[0] == "daily/2024-06-01.md" and got["results"][0]["name"] != "date"
        listed = search(s.index, CONTRACT, SearchRequest(query="on 2024-06-03", now=NOW, mode="fusion"), s.catalog)
        assert notes(listed["results"]) == ["daily/2024-06-01.md"] and listed["results"][0]["name"] == "date"


def test_date_bounds_without_words_list_the_notes_between_them(store: Store) -> None:
    bounded = SearchRequest(query="", after="2024-02-01", before="2024-05-31", now=NOW, mode="fusion")
    got = search(store.index, CONTRACT, bounded, store.catalog)
    assert notes(got["results"]) == ["trips/a.md", "trips/b.md"] and got["results"][0]["name"] == "date"
    asking = SearchRequest(query="show me my notes", after="2024-06-01", now=NOW, mode="fusion")
    assert notes(search(store.index, CONTRACT, asking, store.catalog)["results"]) == ["work/standup.md"]
    # a word to look for makes it a word search within the bounds
    words = SearchRequest(query="camping", after="2024-02-01", now=NOW, mode="fusion", floor=0.0)
    found = search(store.index, CONTRACT, words, store.catalog)["results"]
    assert sorted(notes(found)) == ["trips/a.md", "trips/b.md"] and all("name" not in r for r in found)
    empty = search(store.index, CONTRACT, SearchRequest(query="", after="2030-01-01", now=NOW), store.catalog)
    assert empty["note"] == "no note was captured from 2030-01-01 on; try a wider span of days"
