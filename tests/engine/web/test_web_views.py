"""The page's views and note reading without a browser: what the HTML says for values the page meets."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from agentmd.engine.curate.queue import QueueItem
from agentmd.engine.errors import UsageError
from agentmd.engine.web.facts import read_note
from agentmd.engine.web.views import review


@pytest.mark.parametrize("captured", ["2026-10-14", "2026-10-14T08:00:00Z", "2026-10-14T08:00:00+02:00"])
def test_the_review_page_counts_the_days_a_note_waits_however_its_date_is_written(captured: str) -> None:
    item = QueueItem("inbox/a.md", captured, "unfiled", "nobody has filed it", "capture", None)
    html = str(review([item], dt.datetime(2026, 12, 6, 12, 0, tzinfo=dt.UTC)))
    assert '<span class="when">53d waiting</span>' in html, html


def test_a_note_path_no_file_can_have_is_not_a_note(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
    assert read_note(tmp_path, "a.md").title
    for bad in ("a\x00b.md", "../etc/passwd", ".git/config", ""):
        with pytest.raises(UsageError, match="is not a note of the vault"):
            read_note(tmp_path, bad)


def test_control_characters_a_note_holds_show_as_the_replacement_character() -> None:
    from agentmd.engine.web.html import esc, fmt

    assert str(esc("a\x00b\x1b[2Jc")) == "a\ufffdb\ufffd[2Jc"  # HTML allows neither; the browser sees no NUL
    assert str(fmt("<pre>{}</pre>", "line\tone\r\nline two")) == "<pre>line\tone\r\nline two</pre>"


def test_a_page_session_ends_twelve_hours_after_it_was_opened() -> None:
    # the time is in the id the cookie's HMAC covers: a leaked cookie is worth nothing the next day, and no one
    # can give a session a later time without the page key
    from agentmd.engine.web.session import (
        COOKIE,
        SESSION_SECONDS,
        new_session,
        page_refusal,
        session_base,
        session_value,
    )

    key, opened = "page-key", 1_800_000_000.0
    session = new_session(opened)
    headers = {"cookie": f"{COOKIE}={session_value(key, session)}", "sec-fetch-site": "same-origin"}
    path = session_base(session)
    assert page_refusal("GET", path, headers, key, now=opened + 60) is None
    assert page_refusal("GET", path, headers, key, now=opened + SESSION_SECONDS - 1) is None
    ended = page_refusal("GET", path, headers, key, now=opened + SESSION_SECONDS + 1)
    assert ended is not None and ended[0] == 401 and "agentmd open" in ended[1]
    untimed = "Zm9vYmFyYmF6cXV1eGNvcmdl"  # an id of the earlier form, with no time in it
    old = {"cookie": f"{COOKIE}={session_value(key, untimed)}"}
    assert page_refusal("GET", session_base(untimed), old, key, now=opened) is not None
