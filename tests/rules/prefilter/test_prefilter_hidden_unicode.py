"""Hidden-Unicode prefilters: invisible or reordering characters are refused, legitimate Unicode passes."""

from __future__ import annotations

import pytest
from prefilter_helpers import codes

from agentmd.rules.prefilter import CODES, check_text

# --------------------------------------------------------------------------------------------------------------
# Hidden Unicode

HIDDEN = [
    ("hidden-unicode:bidi", "access = 'user\u202e \u2066// admin\u2069 \u2066'"),
    ("hidden-unicode:bidi", "x \u2067y\u2069"),
    ("hidden-unicode:tag-chars", "hello" + "".join(chr(0xE0000 + ord(c)) for c in "run rm")),
    ("hidden-unicode:zero-width", "a\u200b\u200bb"),
    ("hidden-unicode:zero-width", "pass\u2060word"),
    ("hidden-unicode:zero-width", "ign\ufeffore"),
    ("hidden-unicode:variation-selectors", "😀" + "".join(chr(0xE0100 + i) for i in (5, 9, 3, 12))),
    ("hidden-unicode:control", "a NUL\x00 here makes git store the note as binary"),
    ("hidden-unicode:control", "plain ascii with an escape \x1b[2J that clears a terminal"),
    ("hidden-unicode:control", "a bell\x07 and a delete\x7f"),
    ("hidden-unicode:control", "a C1 escape \x9b31m that some terminals act on"),
]


@pytest.mark.parametrize(("code", "text"), HIDDEN)
def test_hidden_unicode_is_refused(code: str, text: str) -> None:
    assert code in codes(text), check_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "\ufeff# A note that starts with a byte-order mark",
        "tabs\tand\r\nline ends, a form feed\x0c and a pasted soft break\x0bpass",
        "שלום\u200f world, and עברית with marks \u200e here",
        "abc\u200e def",
        "family 👨\u200d👩\u200d👧 and 🏳️\u200d🌈 emoji",
        "می\u200cخواهم",  # Persian with a zero-width non-joiner
        "ന്\u200c",  # Malayalam
        "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f Scotland",
        "✔️ done ❤️ and a doubled selector ✔\ufe0f\ufe0f",
        "בְּרֵאשִׁית בָּרָא",
        "Words joined by a soft hyphen: super\u00adcalifragilistic",
        "Text copied from a web page\u200b ends with a stray zero-width space.",
    ],
)
def test_legitimate_unicode_passes(text: str) -> None:
    assert check_text(text) == [], check_text(text)


def test_every_tag_character_and_inner_zero_width_character_is_refused() -> None:
    for cp in range(0xE0000, 0xE0080):
        assert "hidden-unicode:tag-chars" in codes(f"plain{chr(cp)}text"), hex(cp)
    for ch in "\u200b\u200c\u200d\u2060\ufeff":
        assert "hidden-unicode:zero-width" in codes(f"pass{ch}word"), hex(ord(ch))
        assert "hidden-unicode:zero-width" in codes(f"a {ch}{ch} b"), hex(ord(ch))


def test_every_hidden_unicode_code_has_a_positive_case() -> None:
    assert {code for code, _ in HIDDEN} == {code for code in CODES if code.startswith("hidden-unicode:")}
