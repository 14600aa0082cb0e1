"""The one time format agentmd writes into its files and reads back (engine/times.py)."""

from __future__ import annotations

import datetime as dt

from agentmd.engine.times import parse_utc, stamp


def test_a_stamp_reads_back_as_the_same_instant() -> None:
    when = dt.datetime(2025, 3, 1, 10, 30, 5, 123456, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert stamp(when) == "2025-03-01T09:30:05Z"
    assert parse_utc(stamp(when)) == when.replace(microsecond=0)


def test_a_time_without_an_offset_is_utc_and_anything_else_is_none() -> None:
    assert parse_utc("2025-03-01T09:30:00") == dt.datetime(2025, 3, 1, 9, 30, tzinfo=dt.UTC)
    assert parse_utc(" 2025-03-01T09:30:00+02:00 ") == dt.datetime(2025, 3, 1, 7, 30, tzinfo=dt.UTC)
    assert parse_utc(dt.datetime(2025, 3, 1)) == dt.datetime(2025, 3, 1, tzinfo=dt.UTC)
    for value in (None, "", "yesterday", 1740821400, ["2025-03-01"]):
        assert parse_utc(value) is None
