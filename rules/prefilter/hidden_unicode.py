"""Hidden Unicode, reported as ``hidden-unicode:*``: bidi controls, Unicode tag characters, zero-width runs or
zero-width characters inside ASCII words, runs of variation selectors, and the control characters text does not
use (the C0 set but tab, line feed, vertical tab, form feed and carriage return, DEL, and the C1 set; a vertical
tab is the soft line break of text pasted from a word processor): a NUL makes git store the note as binary, an
escape makes a terminal act instead of print.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Final

from agentmd.rules.prefilter.core import Finding, Lines

_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_TAGS = re.compile("[\U000e0000-\U000e007f]+")
_FLAG_TAGS: Final = frozenset(
    "".join(chr(0xE0000 + ord(c)) for c in region) + "\U000e007f" for region in ("gbeng", "gbsct", "gbwls")
)  # the three standard subdivision flags (England, Scotland, Wales), after U+1F3F4
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u180e\u2061-\u2064\u3164\uffa0\u115f\u1160]+")
_VS_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")  # C0 but text's own, DEL, and C1 (U+009B opens an escape)


def _ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def unicode_findings(text: str, field: str) -> Iterator[Finding]:
    lines = Lines(text)
    control = _CONTROL.search(text)
    if control is not None:
        line = lines.at(control.start())
        yield Finding(
            "hidden-unicode:control",
            field,
            f"the control character U+{ord(control.group()):04X} on line {line}: text holds none (git would store "
            "the note as binary, and a terminal acts on an escape instead of showing it). Remove it.",
            line,
        )
    if text.isascii():
        return
    for m in _BIDI.finditer(text):
        line = lines.at(m.start())
        yield Finding(
            "hidden-unicode:bidi",
            field,
            f"bidirectional control character U+{ord(m.group()):04X} ({unicodedata.name(m.group(), '?')}) on line "
            f"{line}: it makes text display in a different order than it is stored. Remove it (plain right-to-left "
            "text needs none; the marks U+200E and U+200F are allowed).",
            line,
        )
    for m in _TAGS.finditer(text):
        if m.group() in _FLAG_TAGS and m.start() > 0 and text[m.start() - 1] == "\U0001f3f4":
            continue
        line = lines.at(m.start())
        yield Finding(
            "hidden-unicode:tag-chars",
            field,
            f"{len(m.group())} invisible Unicode tag character(s) (U+E0000–U+E007F) on line {line}: they can carry "
            "text a reader cannot see. Remove them.",
            line,
        )
    for m in _ZERO_WIDTH.finditer(text):
        run, start, end = m.group(), m.start(), m.end()
        if start == 0 and run[0] == "\ufeff":
            run, start = run[1:], 1  # a leading byte-order mark is fine
            if not run:
                continue
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < len(text) else ""
        if len(run) == 1 and not (_ascii_alnum(before) and _ascii_alnum(after)):
            continue  # a joiner in an emoji sequence or a non-joiner in Persian or Indic script, for instance
        line = lines.at(start)
        names = ", ".join(f"U+{ord(c):04X}" for c in dict.fromkeys(run))
        where = " inside a word" if len(run) == 1 else f", a run of {len(run)},"
        yield Finding(
            "hidden-unicode:zero-width",
            field,
            f"invisible zero-width character(s) ({names}){where} on line {line}: they split or hide words from "
            "filters and readers. Remove them.",
            line,
        )
    for m in _VS_RUN.finditer(text):
        if len(m.group()) < 4 and len(set(m.group())) == 1:
            continue  # a doubled emoji selector (a typo) carries no hidden data
        line = lines.at(m.start())
        yield Finding(
            "hidden-unicode:variation-selectors",
            field,
            f"a run of {len(m.group())} variation selectors on line {line}: such runs can hide encoded data "
            "behind one visible character. Remove them.",
            line,
        )
