"""A search answer's JSON: the scores a person reads fall as the rows do."""

from __future__ import annotations

from agentmd.engine.search.result import Result, SearchResponse


def _row(note: str, rank_score: float, confidence: float | None) -> Result:
    return Result(path=note, note=note, score=rank_score, raw_score=rank_score, penalty=1.0, confidence=confidence)


def _answer(*rows: Result) -> SearchResponse:
    return SearchResponse(
        query="q", mode="fusion", results=rows, note=None, matched=len(rows),
        archived_hidden=0, superseded_hidden=0, staged_hidden=0,
    )  # fmt: skip


def test_a_lower_row_never_shows_a_higher_score_and_keeps_its_own_confidence() -> None:
    rows = _answer(_row("a.md", 9.0, 0.62), _row("b.md", 8.0, 0.91), _row("c.md", 7.0, 0.40), _row("d.md", 6.0, 0.55))
    got = rows.to_json()["results"]
    assert [r["score"] for r in got] == [0.62, 0.62, 0.40, 0.40]
    assert [r["confidence"] for r in got] == [0.62, 0.91, 0.40, 0.55]  # what the recall hook and floors read
    assert [r["note"] for r in got] == ["a.md", "b.md", "c.md", "d.md"]  # the ranking itself is unchanged


def test_rows_in_order_and_rows_without_a_confidence_are_shown_as_they_are() -> None:
    got = _answer(_row("a.md", 3.0, 0.9), _row("b.md", 2.0, None), _row("c.md", 1.0, 0.7)).to_json()["results"]
    assert [r["score"] for r in got] == [0.9, None, 0.7]
    assert _answer().to_json()["results"] == []
