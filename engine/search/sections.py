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
from collections.abc import Callable, Mapping, Sequence
from math import log
from typing import NamedTuple, Protocol

from agentmd.vault_schema import Chunk, Section, chunk_text, sections

LARGE = 200_000  # characters; above it a note's sections are located through its outline (measured: bench)
CANDIDATES = 64  # sections of a large note cut and scored for one query
FORMS_KEPT = 1_024  # query forms whose sections an outline remembers
COMMON = 500  # a query form found more often than this in a note does not help locate its sections

_HEADING_LINE = re.compile(r"(?m)^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")

# Small notes: their sections with the counts of their analysed terms, by path, kept with the text they were
# cut from (a result's text is compared with it, so an edited note is cut again): the best section of a note
# is looked for in every search that returns it, and the hook's searches return the same notes again and again.
_MEMO: dict[str, tuple[str, list[tuple[Chunk, Counter[str], int]]]] = {}
_MEMO_MAX = 2_048
# Notes a query names by a heading: their sections as `sections` splits them, by path, with the text (the same
# heading is asked for again and again; splitting a long note costs milliseconds).
_SPLIT: dict[str, tuple[str, list[Section]]] = {}
_SPLIT_MAX = 256
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
    case, for locating words, and `places` the sections where the forms asked for so far occur."""

    starts: array[int]
    levels: bytes
    parents: array[int]
    lowered: str
    places: dict[str, list[int]]  # sections where a query form occurs (`_places`)


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
    return Outline(starts, bytes(levels), parents, text.lower(), {})


def split(path: str, text: str) -> list[Section]:
    """The note's `sections`, remembered by path with the text they were split from."""
    known = _SPLIT.get(path)
    if known is not None and known[0] == text:
        return known[1]
    found = sections(text)
    if len(_SPLIT) >= _SPLIT_MAX:
        _SPLIT.pop(next(iter(_SPLIT)), None)  # the oldest (another thread may have taken it)
    _SPLIT[path] = (text, found)
    return found


def heading_path(parts: Sequence[Section], matches: Callable[[str], bool]) -> tuple[str, ...] | None:
    """The heading path (outermost first) of the first section whose own heading `matches`: the heading path of
    the first of `chunk_text`'s chunks whose last heading does, read from the sections without cutting chunks."""
    path: list[tuple[int, str]] = []
    for sec in parts:
        if not sec.level:
            continue
        while path and path[-1][0] >= sec.level:
            path.pop()
        path.append((sec.level, sec.heading))
        if matches(sec.heading):
            return tuple(h for _lvl, h in path)
    return None


def _heading(text: str, start: int) -> str:
    end = text.find("\n", start)
    m = _HEADING_LINE.match(text, start, len(text) if end < 0 else end)
    return (m.group(2) or "").strip() if m else ""


def best(
    index: Analyzer,
    texts: Texts,
    path: str,
    text: str,
    words: Sequence[str],
    n: int,
    nearness: Mapping[str, float] | None = None,
) -> list[tuple[str | None, str]]:
    """The note's best `n` sections for `words`: (heading path, or None for the opening section, and a
    snippet). The opening section needs no anchor: the note's path already leads there.

    A section is judged by the query's words it holds, each weighed by how few of the note's sections hold it
    (a word in every turn of a conversation, such as a speaker's name, tells none of them apart); between
    sections holding the same weight, by `nearness` when given (the dense arm's cosine of each section, by
    heading path), then by how densely they hold the words. Measured on conversations, where the section is the
    turn that answers: bench/RESULTS.md, "The section a result points at"."""
    wanted = {t for w in words for t in index.analyze(w)}
    large = len(text) > LARGE
    sections = _located(index, path, text, words, wanted) if large else _all(index, path, text)
    if len(sections) <= 1 and not (large and sections and sections[0][0].ordinal > 0):
        return [(None, texts.snippet_of(text))]
    spread = Counter(t for _c, counts, _length in sections for t in wanted.intersection(counts))
    weight = {t: log(1 + len(sections) / k) for t, k in spread.items()}
    near = nearness or {}
    scored = []
    for c, counts, length in sections:
        present = wanted.intersection(counts)
        held = round(sum(weight[t] for t in present), 9)
        hits = sum(counts[t] for t in present)
        scored.append((held, near.get(" > ".join(c.heading_path), -1.0), hits / (1 + length) ** 0.5, -c.ordinal, c))
    scored.sort(key=lambda x: x[:4], reverse=True)
    out: list[tuple[str | None, str]] = []
    for held, _near, _density, _neg, c in scored[:n]:
        if held == 0 and out:
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


def _places(shape: Outline, form: str) -> list[int]:
    """The sections where `form` occurs, COMMON + 1 at most; remembered with the outline."""
    known = shape.places.get(form)
    if known is not None:
        return known
    places: list[int] = []
    at = shape.lowered.find(form)
    while at >= 0 and len(places) <= COMMON:
        places.append(bisect_right(shape.starts, at) - 1)
        at = shape.lowered.find(form, at + len(form))
    if len(shape.places) < FORMS_KEPT:
        shape.places[form] = places
    return places


def _located(
    index: Analyzer, path: str, text: str, words: Sequence[str], wanted: set[str]
) -> list[tuple[Chunk, Counter[str], int]]:
    """The sections of a large note that hold the most of the query's words, cut and counted."""
    shape = _outline_of(path, text)
    forms = sorted({f for f in (*(w.lower() for w in words), *wanted) if len(f) >= 2})
    held: dict[int, set[str]] = {}
    first: dict[str, int] = {}  # each form's first section, for a query whose every form is common
    for form in forms:
        places = _places(shape, form)
        if places:
            first[form] = places[0]
        if len(places) > COMMON:
            continue  # in most sections: it tells none apart
        for place in places:
            held.setdefault(place, set()).add(form)
    if not held:
        held = {i: {f} for f, i in first.items()}
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
