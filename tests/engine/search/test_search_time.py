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
    ["before she moved", "May I ask about the parser", "fix port 8080 bug", "upgrade to python 3.11", "march 3 times"],
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
