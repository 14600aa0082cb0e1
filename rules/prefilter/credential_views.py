"""Other views of a text, read by the credential rules that have a fixed prefix: escapes decoded, look-alike
letters folded, spaced-out and concatenated tokens re-joined, reversed text, base64 decoded. Each view comes with
the words a finding's message adds to say where the value was hidden (" (URL-encoded)").
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Final

# Other views of the text, read by the rules with a fixed prefix: escapes decoded, look-alike letters folded,
# spaced-out and concatenated tokens re-joined, reversed text, base64 decoded.
_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|&#x([0-9a-fA-F]{1,6});|&#(\d{1,7});")
_SPACED_RUN = re.compile(r"(?:[A-Za-z0-9_\-+/=.]{1,16}[ \t]){3,}[A-Za-z0-9_\-+/=.]{1,32}")
_CONCAT = re.compile(r"[\"']\s*\+\s*[\"']")
B64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/=_\-])")
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"
_FOLD: Final = str.maketrans(
    {"І": "I", "і": "i", "А": "A", "а": "a", "Е": "E", "е": "e", "О": "O", "о": "o", "Р": "P", "р": "p",
     "С": "C", "с": "c", "Х": "X", "х": "x", "К": "K", "М": "M", "Н": "H", "Т": "T", "В": "B", "Ѕ": "S",
     "ѕ": "s", "у": "y", "Κ": "K", "Α": "A", "Ο": "O", "ο": "o", "Ι": "I"} | dict.fromkeys(_INVISIBLE, None)
)  # fmt: skip


def _unescape(m: re.Match[str]) -> str:
    code = int(next(g for g in m.groups() if g is not None), 10 if m.group(4) else 16)
    return chr(code) if code < 0x110000 else m.group()


def _token_pieces(run: str) -> bool:
    """A run of pieces that reads as a token written out in groups (`ghp_ aB3d eF5g ...`), not a sentence: most
    pieces after the first hold a digit or a capital after their first letter."""
    pieces = [p for p in run.split()[1:] if len(p) > 1]  # letters spelled out one by one ("x o x b") count for none
    if 2 * len(_MARK.findall(run)) < len(pieces):
        return False  # too few digits and capitals for half the pieces to hold one (most prose)
    marked = sum(any(c.isdigit() for c in p) or any(c.isupper() for c in p[1:]) for p in pieces)
    return 2 * marked >= len(pieces)


_MARK = re.compile(r"[0-9A-Z]")
WHITESPACE = re.compile(r"\s+")


def _changed_lines(text: str, read: Callable[[str], bool], change: Callable[[str], str]) -> str | None:
    """`text` with `change` applied to the lines `read` picks and every other line left empty, so that a view of
    a long note costs what its few changed lines cost and keeps its line numbers; None when no line changed."""
    out: list[str] = []
    changed = False
    for line in text.split("\n"):
        if not read(line):
            out.append("")
            continue
        new = change(line)
        changed = changed or new != line
        out.append(new)
    return "\n".join(out) if changed else None


_LONG_RUN = re.compile(r"\S{16,}")


# a backslash before punctuation, as Markdown and JSON writers add it (`ghp\\_...` renders as `ghp_...`)
_PUNCT_ESCAPE = re.compile(r"\\([_\-*.~`/+=])")


def _unescape_line(line: str) -> str:
    return _PUNCT_ESCAPE.sub(r"\1", _ESCAPED.sub(_unescape, line))


# What can disguise a token's letters: the look-alikes folded above, invisible characters, and the letters, digits
# and joiners that NFKC maps to ASCII (full-width, mathematical, circled, enclosed, super- and subscript,
# letterlike, ligatures). Other lines (Chinese prose with its full-width commas) are not folded.
_LOOK_ALIKE = re.compile(
    "[" + re.escape("".join(chr(c) for c in _FOLD)) + "\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff0d\uff3f"
    "\U0001d400-\U0001d7ff\u2460-\u24ff\U0001f100-\U0001f1ff\u2070-\u209f\u2100-\u214f\ufb00-\ufb06]"
)


def _has_look_alike(line: str) -> bool:
    return _LOOK_ALIKE.search(line) is not None


def _fold(line: str) -> str:
    return unicodedata.normalize("NFKC", line).translate(_FOLD)


def _concatenated(text: str) -> str | None:
    """The lines around string concatenations (`"ghp_" + "..."`), with the concatenations joined and every
    other line left empty; None when there is none."""
    marks = [m.span() for m in _CONCAT.finditer(text)]
    if not marks:
        return None
    breaks = [i for i, ch in enumerate(text) if ch == "\n"] if len(marks) < 64 else None
    if breaks is None:
        return _CONCAT.sub("", text)  # concatenations all over the text: read it whole
    keep: set[int] = set()
    for start, end in marks:
        first, last = bisect.bisect_left(breaks, start), bisect.bisect_left(breaks, end)
        keep.update(range(max(0, first - 1), last + 2))
    lines = text.split("\n")
    return _CONCAT.sub("", "\n".join(line if i in keep else "" for i, line in enumerate(lines)))


def views(text: str) -> Iterator[tuple[str, str]]:
    """(how, view) for each way `text` may hide a token that the view undoes."""
    if "%" in text and (decoded := _changed_lines(text, lambda line: "%" in line, urllib.parse.unquote)):
        yield " (URL-encoded)", decoded
    if ("\\" in text or "&#" in text) and (
        unescaped := _changed_lines(text, lambda line: "\\" in line or "&#" in line, _unescape_line)
    ):
        yield " (escaped)", unescaped
    if not text.isascii() and (folded := _changed_lines(text, _has_look_alike, _fold)):
        yield " (look-alike characters)", folded
    spaced = [re.sub(r"[ \t]+", "", m.group()) for m in _SPACED_RUN.finditer(text) if _token_pieces(m.group())]
    if spaced:
        yield " (spaced out)", "\n".join(spaced)
    if "+" in text and (joined := _concatenated(text)):
        yield " (concatenated)", joined
    # a reversed token is one long run; the lines without one are not read backwards
    backwards = _changed_lines(text, lambda line: _LONG_RUN.search(line) is not None, lambda line: line[::-1])
    if backwards:
        yield " (reversed)", backwards
    blobs = []
    for m in B64_RUN.finditer(text):
        blob = m.group()
        try:
            raw = base64.urlsafe_b64decode(blob.replace("+", "-").replace("/", "_") + "=" * (-len(blob) % 4))
            inner = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if inner.isprintable():
            blobs.append(inner)
    if blobs:
        yield " (base64-encoded)", "\n".join(blobs)
