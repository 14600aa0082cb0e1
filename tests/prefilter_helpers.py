"""Helpers for the prefilter tests.

Fake secrets are generated at run time (seeded random characters after the public prefix), so no test file holds
a secret-shaped literal; `assert_no_leak` checks that no finding message, verdict reason or exception text
contains any 6-character piece of a value.
"""

from __future__ import annotations

import random
import string

from agentmd.rules.prefilter import check_text

FENCE = "`" * 3
RNG = random.Random(20240611)
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"


def rand(n: int, alphabet: str = ALNUM) -> str:
    """Random characters that mix letters and digits (so entropy and character-class tests see a real secret)."""
    while True:
        value = "".join(RNG.choice(alphabet) for _ in range(n))
        if n < 4 or alphabet.isdigit() or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
            return value


def codes(text: str, field: str = "body") -> set[str]:
    return {f.code for f in check_text(text, field)}


PUBLIC_PREFIXES = ("github" + "_pat_", "ghp" + "_", "gho" + "_", "glpat-", "xoxb-", "xapp-", "sk" + "_live_",
                   "sk" + "-proj-", "sk" + "-ant-api03-")  # fmt: skip


def assert_no_leak(value: str, *texts: str) -> None:
    """No 6-character piece of the secret part of `value` (its public format prefix aside) is in any text."""
    for prefix in PUBLIC_PREFIXES:
        value = value.removeprefix(prefix)
    for text in texts:
        for i in range(len(value) - 5):
            piece = value[i : i + 6]
            assert piece not in text, f"secret piece {piece!r} echoed in {text!r}"
