"""Helpers for the prefilter tests.

Fake secrets are generated at run time (seeded random characters after the public prefix), so no test file holds
a secret-shaped literal; `assert_no_leak` checks that no finding message, verdict reason or exception text
contains any 6-character piece of a value.
"""

from __future__ import annotations

import base64
import random
import re
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


_ALPHABETS = {
    "a": ALNUM,
    "b": B64,
    "x": ALNUM + "-_",
    "u": UPPER_DIGITS,
    "l": string.ascii_lowercase + string.digits,
    "h": "0123456789abcdef",
    "d": string.digits,
}
_SLOT = re.compile(r"\{([abxulhd]):(\d+)\}|\{(a4|h4|h8|h12)\}|\{pw\}|\{basic\}")
_REVERSED = re.compile(r"\{rev:((?:[^{}]|\{[^{}]*\})*)\}")


def expand(template: str, seed: int) -> str:
    """A secret-shaped payload from a template of the fresh rounds (tests/fixtures/payloads/secrets_fresh*.jsonl):
    `{a:36}` is 36 random letters and digits (`b` base64, `x` URL-safe, `u` upper case and digits, `l` lower case
    and digits, `h` hex, `d` digits), `{pw}` a password, `{basic}` base64 of user:password, `{rev:...}` its
    expansion reversed. Seeded, so a row reads the same on every run, and no file holds the value itself."""
    rng = random.Random(seed)

    def chars(alphabet: str, n: int) -> str:
        while True:
            value = "".join(rng.choice(alphabet) for _ in range(n))
            mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
            if n < 6 or alphabet == string.digits or mixed:
                return value

    def slot(m: re.Match[str]) -> str:
        if m.group(1):
            return chars(_ALPHABETS[m.group(1)], int(m.group(2)))
        if m.group(3):
            width = m.group(3)
            return chars(ALNUM if width == "a4" else _ALPHABETS["h"], int(width[1:]))
        password = chars(ALNUM, 9) + rng.choice("!#%&*+?") + chars(string.digits, 2)
        if m.group() == "{pw}":
            return password
        return base64.b64encode(f"deploy:{password}".encode()).decode()

    text = _REVERSED.sub(lambda m: _SLOT.sub(slot, m.group(1))[::-1], template)
    return _SLOT.sub(slot, text)
