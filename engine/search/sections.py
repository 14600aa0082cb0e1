"""A note's best sections for a query, cut for a result row: the heading to link to and the passage to show.

Every section of a note (`chunk_text`) is analysed and scored by how many of the query's words it holds and
how densely. That costs time in proportion to the note, so a note longer than `LARGE` characters is read
another way, in proportion to what is shown: its outline (where each heading line starts, its level and its
parent heading) is found once per version of the note and remembered compactly, the sections holding the
query's words are found by plain substring search of its lowered text, and only the `CANDIDATES` sections
holding the most of those words are cut and scored as above. A huge log or exported chat is then no slower
to show than a small note (bench/huge_note_bench.py). In such a note, heading lines are found as in a text
without fences, so a `#` line inside a code fence may start a section of its own there.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple, Protocol

from agentmd.vault_schema import Chunk, chunk_text

LARGE = 200_000  # characters; above it a note's sections are located through its outline (measured: bench)
CANDIDATES = 64  # sections of a large note cut and scored for one query
COMMON = 5_000  # a query form found more often than this in a note does not help locate its sections

_HEADING_LINE = re.compile(r"(?m)^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")

# Small notes: their sections with the counts of their analysed terms, by path, kept with the text they were
# cut from (a result's text is compared with it, so an edited note is cut again): the best section of a note
# is looked for in every search that returns it, and the hook's searches return the same notes again and again.
_MEMO: dict[str, tuple[str, list[tuple[Chunk, Counter[str], int]]]] = {}
_MEMO_MAX = 2_048
# Large notes: their outlines, by path, with the text; a few at most (each holds its note's lowered text).
_OUTLINES: dict[str, tuple[str, Outline]] = {}
_OUTLINES_MAX = 4


class Analyzer(Protocol):
    def analyze(self, text: str) -> list[str]: ...


class Texts(Protocol):
    def snippet_of(self, text: str) -> str: ...


class Outline(NamedTuple):
    """Where a large note's sections begin: `starts[i]` is the offset of heading line i, `levels[i]` its level
    and `parents[i]` the index of the heading it sits under (-1: none). `lowered` is the note's text in lower
    case, for locating words."""

    starts: array[int]
    levels: bytes
    parents: array[int]
    lowered: str


def outline(text: str) -> Outline:
    starts: array[int] = array("q")
    levels = bytearray()
    parents: array[int] = array("q")
    stack: list[int] = []
    for m in _HEADING_LINE.finditer(text):
        level = len(m.group(1))
        while stack and levels[stack[-1]] >= level:
            stack.pop()
        parents.append(stack[-1] if stack else -1)
        stack.append(len(starts))
        starts.append(m.start())
        levels.append(level)
    return Outline(starts, bytes(levels), parents, text.lower())


def _heading(text: str, start: int) -> str:
    end = text.find("\n", start)
    m = _HEADING_LINE.match(text, start, len(text) if end < 0 else end)
    return (m.group(2) or "").strip() if m else ""


def best(
    index: Analyzer, texts: Texts, path: str, text: str, words: Sequence[str], n: int
) -> list[tuple[str | None, str]]:
    """The note's best `n` sections for `words`: (heading path, or None for the opening section, and a
    snippet). The opening section needs no anchor: the note's path already leads there."""
    wanted = {t for w in words for t in index.analyze(w)}
    large = len(text) > LARGE
    sections = _located(index, path, text, words, wanted) if large else _all(index, path, text)
    if len(sections) <= 1 and not (large and sections and sections[0][0].ordinal > 0):
        return [(None, texts.snippet_of(text))]
    scored = []
    for c, counts, length in sections:
        present = wanted.intersection(counts)
        hits = sum(counts[t] for t in present)
        scored.append((len(present), hits / (1 + length) ** 0.5, -c.ordinal, c))
    scored.sort(key=lambda x: (x[0], x[1], x[2]), reverse=True)
    out: list[tuple[str | None, str]] = []
    for distinct, _density, _neg, c in scored[:n]:
        if distinct == 0 and out:
            break
        heading = " > ".join(c.heading_path) if c.heading_path and c.ordinal > 0 else None
        out.append((heading, texts.snippet_of(c.text)))
    return out


def _counted(index: Analyzer, chunks: Sequence[Chunk]) -> list[tuple[Chunk, Counter[str], int]]:
    out = []
    for c in chunks:
        terms = index.analyze(" ".join(c.heading_path) + "\n" + c.text)
        out.append((c, Counter(terms), len(terms)))
    return out


def _all(index: Analyzer, path: str, text: str) -> list[tuple[Chunk, Counter[str], int]]:
    """Every section of a note, with its analysed terms' counts and their number; remembered by path."""
    known = _MEMO.get(path)
    if known is not None and known[0] == text:
        return known[1]
    out = _counted(index, chunk_text(text))
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.pop(next(iter(_MEMO)), None)  # the oldest (another thread may have taken it)
    _MEMO[path] = (text, out)
    return out


def _outline_of(path: str, text: str) -> Outline:
    known = _OUTLINES.get(path)
    if known is not None and known[0] == text:
        return known[1]
    found = outline(text)
    if len(_OUTLINES) >= _OUTLINES_MAX:
        _OUTLINES.pop(next(iter(_OUTLINES)), None)
    _OUTLINES[path] = (text, found)
    return found


def _located(
    index: Analyzer, path: str, text: str, words: Sequence[str], wanted: set[str]
) -> list[tuple[Chunk, Counter[str], int]]:
    """The sections of a large note that hold the most of the query's words, cut and counted."""
    shape = _outline_of(path, text)
    forms = {f for f in (*(w.lower() for w in words), *wanted) if len(f) >= 2}
    counts = {f: shape.lowered.count(f) for f in forms}
    usable = sorted((f for f in forms if 0 < counts[f] <= COMMON), key=lambda f: counts[f])
    if not usable and counts:
        usable = [min((f for f in forms if counts[f]), key=lambda f: counts[f], default="")][:1]
    held: dict[int, set[str]] = {}
    for form in usable:
        if not form:
            continue
        at = shape.lowered.find(form)
        seen = 0
        while at >= 0 and seen < COMMON:
            held.setdefault(bisect_right(shape.starts, at) - 1, set()).add(form)
            at = shape.lowered.find(form, at + len(form))
            seen += 1
    chosen = sorted(held, key=lambda i: (-len(held[i]), i))[:CANDIDATES] or [-1]
    chunks: list[Chunk] = []
    for i in sorted(chosen):
        begin = shape.starts[i] if i >= 0 else 0
        end = shape.starts[i + 1] if i + 1 < len(shape.starts) else len(text)
        ancestors: list[str] = []
        parent = shape.parents[i] if i >= 0 else -1
        while parent >= 0:
            ancestors.append(_heading(text, shape.starts[parent]))
            parent = shape.parents[parent]
        above = tuple(reversed(ancestors))
        for c in chunk_text(text[begin:end]):
            ordinal = len(chunks) + (1 if i >= 0 else 0)  # only the note's opening section has ordinal 0
            chunks.append(Chunk(ordinal, above + c.heading_path, c.start_line, c.text))
    return _counted(index, chunks)
