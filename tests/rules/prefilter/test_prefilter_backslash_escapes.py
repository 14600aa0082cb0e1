"""What the ninth pass over the prefilters changed (a second round written blind beside the eighth, by another
hand): a token whose punctuation carries a Markdown or JSON
backslash escape (`ghp\\_...`, which renders as the plain token) is read with the backslash dropped. Each refused
shape is checked next to a benign note of the same kind that must pass."""

from __future__ import annotations

import pytest
from prefilter_helpers import codes, rand


@pytest.mark.parametrize(
    "text",
    [
        "ghp" + "\\_" + rand(36),
        "STRIPE_KEY=sk" + "\\_live\\_" + rand(24),
        "token: glpat" + "\\-" + rand(20),
    ],
)
def test_backslash_escaped_tokens_are_refused(text: str) -> None:
    assert any(c.startswith("secret:") for c in codes(text)), text


@pytest.mark.parametrize(
    "text",
    [
        "In Markdown write snake\\_case\\_name so the underscores are not read as emphasis.",
        "Escape the path as C:\\\\Users\\\\me\\\\notes and the star as \\* in a table cell.",
    ],
)
def test_backslash_escapes_in_prose_pass(text: str) -> None:
    assert codes(text) == set(), text
