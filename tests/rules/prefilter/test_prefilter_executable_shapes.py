"""Executable shapes that take more than one command line or one language to see. Each family has a refused case
and ordinary notes of the same kind that pass."""

from __future__ import annotations

import pytest
from prefilter_helpers import codes

from agentmd.rules.prefilter import check_text

REFUSED = [
    # links and HTML whose address runs script
    ("executable:javascript-url", '<meta http-equiv="refresh" content="0;url=javascript:fetch(1)">'),
    ("executable:javascript-url", "[Docs](java\tscript:alert(1))"),
    ("executable:javascript-url", "[Docs](java\x01script:alert(1))"),
    ("executable:javascript-url", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"),
    ("executable:javascript-url", "<a href=\"vbscript:msgbox('x')\">legacy docs</a>"),
    ("executable:javascript-url", '<object data="javascript:alert(1)"></object>'),
    ("executable:javascript-url", "<javascript:alert(1)>"),
    ("executable:javascript-url", '<a href="javas&#99;ript:alert(1)">x</a>'),
]


@pytest.mark.parametrize(("code", "text"), REFUSED)
def test_executable_shapes_are_refused(code: str, text: str) -> None:
    assert code in codes(text), check_text(text)


PASSING = [
    # embeds and ordinary links
    '<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ" allowfullscreen></iframe>',
    '<embed src="https://x.example/movie.swf">',
    "![diagram](data:image/png;base64,iVBORw0KGgo=)",
    "[guide](https://example.com/javascript:guide) and [tabs](https://example.com/a\tb)",
    "Set url=https://example.com in the config; the data: scheme is covered in the XSS notes.",
]


@pytest.mark.parametrize("text", PASSING)
def test_ordinary_notes_of_the_same_kinds_pass(text: str) -> None:
    assert check_text(text) == [], check_text(text)
