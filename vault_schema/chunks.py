"""Section chunks: a note cut at its headings, long sections cut again into overlapping windows.

Boundaries depend only on the note's text (headings, then line positions), so they are the same every
time the note is read. Each chunk keeps its heading path (e.g. ("Setup", "Linux")). A note without
headings is one unit, unless it is longer than the budget, when it is windowed like a long section.
"""

from __future__ import annotations

from dataclasses import dataclass

from .markdown import sections

DEFAULT_BUDGET = 1600  # characters per chunk before a section is windowed
OVERLAP = 0.10


@dataclass(frozen=True, slots=True)
class Chunk:
    ordinal: int
    heading_path: tuple[str, ...]
    start_line: int  # 0-based, within the text given to `chunk_text`
    text: str

    @property
    def heading(self) -> str | None:
        return self.heading_path[-1] if self.heading_path else None


def _windows(lines: list[str], budget: int) -> list[tuple[int, int]]:
    """(start, end) line ranges of at most ~budget characters, overlapping by ~10 %."""
    out: list[tuple[int, int]] = []
    start = 0
    n = len(lines)
    while start < n:
        size = 0
        end = start
        while end < n and (size + len(lines[end]) + 1 <= budget or end == start):
            size += len(lines[end]) + 1
            end += 1
        out.append((start, end))
        if end >= n:
            break
        back = 0
        overlap_chars = 0
        while end - back - 1 > start and overlap_chars < budget * OVERLAP:
            back += 1
            overlap_chars += len(lines[end - back]) + 1
        start = max(start + 1, end - back)
    return out


def chunk_text(text: str, budget: int = DEFAULT_BUDGET) -> list[Chunk]:
    """The chunks of a note's Markdown body (frontmatter already removed)."""
    chunks: list[Chunk] = []
    path: list[tuple[int, str]] = []  # (level, heading) stack
    for sec in sections(text):
        if sec.level:
            while path and path[-1][0] >= sec.level:
                path.pop()
            path.append((sec.level, sec.heading))
        heading_path = tuple(h for _lvl, h in path)
        body = sec.content
        title_line = 1 if sec.level else 0
        if not body.strip() and not sec.level:
            continue
        lines = body.split("\n")
        if len(body) <= budget:
            chunks.append(Chunk(len(chunks), heading_path, sec.start_line, body))
            continue
        for a, b in _windows(lines, budget):
            chunks.append(Chunk(len(chunks), heading_path, sec.start_line + title_line + a, "\n".join(lines[a:b])))
    if not chunks:
        chunks.append(Chunk(0, (), 0, text))
    return chunks
