"""Markdown structure read with a line scanner: fenced code, ATX headings, inline tags, and the split of a
text into its prose and its code that the link, entity and alias passes share (`split_code`). Code that reads
a note's lines and must skip its code (the curation's split points, the recall digest's opening line) reads
them through `code_lines`.

The scanner follows CommonMark's fence rules (three or more backticks or tildes, closed by a run of the
same character at least as long) and is fast enough to run on every note of a large vault at index time.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_TICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")
_TAG = re.compile(r"#([^\W\d_][\w/-]*|[\d_][\w/-]*[^\W\d_][\w/-]*)")
_TAG_BEFORE = frozenset(" \t\r\n(,;")


@dataclass(frozen=True, slots=True)
class FencedBlock:
    info: str  # the info string after the opening fence, e.g. "yaml"
    content: str  # the text between the fences
    start_line: int  # 0-based line of the opening fence


@dataclass(frozen=True, slots=True)
class Section:
    level: int  # 0 for the text before the first heading
    heading: str
    content: str  # the section's own text, up to the next heading of any level
    start_line: int


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _scan(text: str) -> Iterator[tuple[int, str, bool, FencedBlock | None]]:
    """Yield (line number, line, inside_code, finished block) for every line of `text`."""
    fence: tuple[str, int, str, int] | None = None  # (char, length, info, start)
    buf: list[str] = []
    for i, line in enumerate(_lines(text)):
        if fence is None:
            m = _FENCE_OPEN.match(line)
            if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                fence = (m.group(2)[0], len(m.group(2)), m.group(3).strip(), i)
                buf = []
                yield i, line, True, None
                continue
            yield i, line, False, None
        else:
            stripped = line.strip()
            ch, n, info, start = fence
            if stripped and set(stripped) == {ch} and len(stripped) >= n and len(line) - len(line.lstrip()) < 4:
                yield i, line, True, FencedBlock(info, "\n".join(buf) + ("\n" if buf else ""), start)
                fence = None
            else:
                buf.append(line)
                yield i, line, True, None
    if fence is not None:  # an unclosed fence runs to the end of the document (CommonMark)
        yield -1, "", True, FencedBlock(fence[2], "\n".join(buf) + ("\n" if buf else ""), fence[3])


def code_lines(text: str) -> Iterator[tuple[str, bool]]:
    """Each line of `text` (split at newlines, each line without its `\n`) and whether it is fenced code: a
    fence line itself counts as code. The one fence reading every caller shares."""
    for i, line, code, _ in _scan(text):
        if i >= 0:
            yield line, code


def fenced_blocks(text: str, info: str | None = None) -> list[FencedBlock]:
    """Every fenced code block, optionally only those whose info string's first word is `info`."""
    blocks = [b for _, _, _, b in _scan(text) if b is not None]
    if info is None:
        return blocks
    return [b for b in blocks if (b.info.split() or [""])[0].lower() == info.lower()]


CONFLICT_START = "<<<<<<< "


def has_conflict_markers(text: str) -> bool:
    """Whether `text` holds an unresolved merge conflict as git writes it: a line starting `<<<<<<< `, then a
    line `=======`, then a line starting `>>>>>>> `, outside fenced code blocks (a note showing markers in a
    code block, say one explaining git, holds no conflict). Git writes longer markers, all three of one length,
    for a conflict inside another (a note renamed on both sides): those count too."""
    if CONFLICT_START not in text:
        return False
    want, size = 0, 0  # want 0: the start marker, 1: the separator, 2: the end marker
    for i, line, code, _ in _scan(text):
        if i < 0 or code:
            continue
        if want == 0 and line.startswith(CONFLICT_START[:-1]):
            size = len(line) - len(line.lstrip("<"))
            want = 1 if line[size : size + 1] in (" ", "") or line[size:] == "\r" else 0
        elif want == 1 and line.rstrip("\r") == "=" * size:
            want = 2
        elif want == 2 and line.startswith(">" * size) and line[size : size + 1] in (" ", "", "\r"):
            return True
    return False


def strip_code(text: str, span: str = " ") -> str:
    """The text with fenced blocks and inline code spans blanked out (line count kept): a fenced line is left
    empty and a code span becomes `span` (a space; a caller that must tell where a span stood gives another
    character)."""
    if "```" in text or "~~~" in text:
        text = "\n".join("" if code else line for i, line, code, _ in _scan(text) if i >= 0)
    if "`" in text:
        text = _blank_code_spans(text, span)
    return text


def code_spans(text: str) -> list[tuple[int, int, int, int]]:
    """Inline code spans as (start, inner start, inner end, end): a backtick run closed by the next run of
    the same length in the same paragraph (a blank line ends a paragraph, so a stray backtick cannot turn
    the rest of the note into code); a run with no partner is literal text. Linear time (a backtracking
    regex here took seconds on a few KB of backtick runs)."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    spans = _pair(runs, [])
    if any("\n" in text[a:d] and _BLANK_LINE.search(text, a, d) for a, _b, _c, d in spans):
        spans = _pair(runs, [m.start() for m in _BLANK_LINE.finditer(text, runs[0][0], runs[-1][0])])
    return spans


def _pair(runs: list[tuple[int, int]], breaks: list[int]) -> list[tuple[int, int, int, int]]:
    """Each run paired with the next run of the same width, not across a paragraph break (positions in
    `breaks`); a pairing consumes every run in between. Most notes have no span crossing a blank line, so
    this runs first without breaks and again with them only when one does."""
    partner = [-1] * len(runs)
    last: dict[tuple[int, int], int] = {}
    for k in range(len(runs) - 1, -1, -1):
        key = (bisect_right(breaks, runs[k][0]) if breaks else 0, runs[k][1] - runs[k][0])
        partner[k] = last.get(key, -1)
        last[key] = k
    spans: list[tuple[int, int, int, int]] = []
    k = 0
    while k < len(runs):
        j = partner[k]
        if j < 0:
            k += 1
            continue
        spans.append((runs[k][0], runs[k][1], runs[j][0], runs[j][1]))
        k = j + 1
    return spans


def _blank_code_spans(text: str, span: str = " ") -> str:
    """Each code span replaced by `span` (line breaks inside it kept)."""
    out: list[str] = []
    pos = 0
    for start, _a, _b, end in code_spans(text):
        out.append(text[pos:start] + span + "\n" * text.count("\n", start, end))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def sections(text: str) -> list[Section]:
    """Split at ATX headings outside code. The text before the first heading is a level-0 section."""
    result: list[Section] = []
    level, heading, start = 0, "", 0
    buf: list[str] = []
    for i, line, code, _ in _scan(text):
        if i < 0:
            continue
        m = None if code else _ATX.match(line)
        if m:
            if buf or level:
                result.append(Section(level, heading, "\n".join(buf).strip("\n"), start))
            level, heading, start, buf = len(m.group(1)), (m.group(2) or "").strip(), i, []
        else:
            buf.append(line)
    if buf or level:
        result.append(Section(level, heading, "\n".join(buf).strip("\n"), start))
    return result


# A heading's line as `_ATX` reads it, matched from the line's first character to its end (`match` with pos and
# endpos: `^` would only match at the text's start there), and where such a line may begin: a pattern that opens
# with a literal is searched for quickly, where one that opens with `^` is tried at every character.
_ATX_LINE = re.compile(_ATX.pattern.removeprefix("^"))
_HEADING_START = re.compile(r"\n {0,3}#")


def headings(text: str) -> list[tuple[int, str]]:
    """(level, text) of each ATX heading outside code, in order: the headings `sections` splits at, read
    without building the sections. A text with no fence (no run of three backticks or tildes) is read
    without splitting it into lines: only the lines that begin with `#` (after up to three spaces) are read."""
    if "#" not in text:
        return []
    if "```" in text or "~~~" in text:
        return [(sec.level, sec.heading) for sec in sections(text) if sec.level]
    out: list[tuple[int, str]] = []
    starts = [0, *(m.start() + 1 for m in _HEADING_START.finditer(text))]
    for start in starts:
        end = text.find("\n", start)
        m = _ATX_LINE.match(text, start, len(text) if end < 0 else end)
        if m:
            out.append((len(m.group(1)), (m.group(2) or "").strip()))
    return out


def section_text(text: str, heading: str, parsed: list[Section] | None = None) -> str | None:
    """The text under the first heading named `heading` (case-insensitive), including its subsections.
    `parsed`: the text's `sections`, when the caller has them already."""
    secs = sections(text) if parsed is None else parsed
    want = heading.strip().lower()
    for n, sec in enumerate(secs):
        if sec.level and sec.heading.lower() == want:
            parts = [sec.content]
            for sub in secs[n + 1 :]:
                if sub.level <= sec.level:
                    break
                parts.append("#" * sub.level + " " + sub.heading + "\n" + sub.content)
            return "\n\n".join(p for p in parts if p).strip()
    return None


def inline_tags(text: str) -> list[str]:
    """Obsidian `#tags` in prose (not in code, not headings, not purely numeric), in first-seen order."""
    seen: dict[str, None] = {}
    if "#" not in text:
        return []
    text = strip_code(text)
    for m in _TAG.finditer(text):
        start = m.start()
        if start and text[start - 1] not in _TAG_BEFORE:
            continue  # part of a word, a URL fragment or a heading marker run
        if text[start - 2 : start] == "](":
            continue  # a Markdown link to a heading: [text](#anchor)
        tag = m.group(1).rstrip("/-")
        if tag:
            seen.setdefault(tag, None)
    return list(seen)


class CodeSplit(NamedTuple):
    unfenced: str  # the text with fenced blocks blanked (their lines left empty)
    prose: str  # `unfenced` with each code span blanked to spaces of the same length (newlines kept)
    code: list[str]  # the text inside the fenced blocks and code spans
    spans: list[tuple[int, int]]  # where the code spans are, in `unfenced` and `prose` (the same offsets)


def split_code(text: str) -> CodeSplit:
    """The text with its code blanked, and the code. Same rules as `markdown.strip_code` (CommonMark fences,
    backtick runs closed by a run of the same length), in one linear pass; line count is kept."""
    code: list[str] = []
    spans: list[tuple[int, int]] = []
    unfenced = text
    if ("`" in text and "```" in text) or ("~" in text and "~~~" in text):  # one-character tests are memchr-fast
        lines: list[str] = []
        for i, line, in_code, block in _scan(text):
            if block is not None and block.content:
                code.append(block.content)
            if i >= 0:
                lines.append("" if in_code else line)
        unfenced = "\n".join(lines)
    prose = unfenced
    if "`" in unfenced:
        out: list[str] = []
        pos = 0
        for start, inner_start, inner_end, end in code_spans(unfenced):
            inner = unfenced[inner_start:inner_end]
            code.append(inner)
            spans.append((start, end))
            blank = " " * (end - start) if "\n" not in inner else re.sub(r"[^\n]", " ", unfenced[start:end])
            out.append(unfenced[pos:start] + blank)
            pos = end
        out.append(unfenced[pos:])
        prose = "".join(out)
    return CodeSplit(unfenced, prose, code, spans)
