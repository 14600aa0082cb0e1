"""Section chunks: a note cut at its headings, long sections cut again into overlapping windows.

Boundaries depend only on the note's text (headings, then line positions), so they are the same every
time the note is read. Each chunk keeps its heading path (e.g. ("Setup", "Linux")). A note without
headings is one unit, unless it is longer than the budget, when it is windowed like a long section.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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


# Chunks for a text embedder. A bi-encoder reads a few hundred word-pieces at most and blurs a long text
# into one vague vector, so sections are cut into windows of WINDOW_TOKENS tokens that overlap by
# OVERLAP_TOKENS; a token is a run of non-space characters, or one CJK character. Markup that carries no
# meaning for the model is dropped (HTML comments and tags, URLs); link text is kept. Each chunk opens
# with `Title > heading path`, so a window deep in a section still says what it is about.
# How `embedding_chunks` cuts a note, counted up when that changes, so a vector store cut the older way is
# cut again once (its vectors kept for every chunk whose text is the same): 2 added the summary chunk and
# Dendron's frontmatter variables, 3 the cap below.
EMBED_CUT = 3
# At most this many chunks of one note are embedded, spread evenly over it (the first and the last kept): a
# note of 20 MB (a long log, an exported chat) is some 226,000 chunks, hours of embedding that would hold the
# rest of the vault back and some 350 MB of vectors in memory, while its words still find every part of it.
# 512 chunks are about half a megabyte of text; the most any note of the shared vaults has is 215.
MAX_EMBED_CHUNKS = 512
WINDOW_TOKENS = 200
OVERLAP_TOKENS = 50
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_EMBED_TOKEN = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>\n]*>")
_MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_WIKILINK = re.compile(r"!?\[\[([^\]|\n]*)(?:\|([^\]\n]*))?\]\]")
_URL = re.compile(r"<?\b(?:https?|ftp)://[^\s>)\]]+>?")
# Frontmatter fields that say in a sentence what a note is about (Dendron writes `desc`, many Obsidian vaults
# `description` or `summary`): the first one a note has is embedded with its title as a chunk of its own.
SUMMARY_FIELDS = ("description", "desc", "summary", "abstract", "excerpt")
SUMMARY_TOKENS = 80
# `{{fm.title}}`: a frontmatter value that Dendron writes into the page when it renders the note.
_FM_VARIABLE = re.compile(r"\{\{\s*fm\.([A-Za-z_][\w-]*)\s*\}\}")


@dataclass(frozen=True, slots=True)
class EmbedChunk:
    ordinal: int
    heading_path: tuple[str, ...]
    text: str  # what the embedder reads: the `Title > heading path` line, then the window's text


def clean_for_embedding(text: str) -> str:
    """Markdown reduced to what a text embedder should read: comments, tags and URLs out, link text in."""
    text = _HTML_COMMENT.sub(" ", text)
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1).split("#")[0], text)
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    text = _URL.sub(" ", text)
    return _HTML_TAG.sub(" ", text)


def token_windows(text: str, window: int = WINDOW_TOKENS, overlap: int = OVERLAP_TOKENS) -> list[str]:
    """`text` cut into slices of at most `window` tokens, each starting `window - overlap` tokens after the
    previous one; the last slice ends at the last token. The slices keep the original spacing."""
    if not 0 <= overlap < window:
        raise ValueError("overlap must be at least 0 and smaller than the window")
    spans = [m.span() for m in _EMBED_TOKEN.finditer(text)]
    if not spans:
        return []
    out: list[str] = []
    start = 0
    while True:
        end = min(start + window, len(spans))
        out.append(text[spans[start][0] : spans[end - 1][1]])
        if end == len(spans):
            return out
        start += window - overlap


def summary_of(frontmatter: Mapping[str, Any]) -> str:
    """The note's one-sentence description from its frontmatter (see SUMMARY_FIELDS), cut to SUMMARY_TOKENS
    tokens; "" when it has none."""
    for key in SUMMARY_FIELDS:
        value = frontmatter.get(key)
        if isinstance(value, str) and value.strip():
            windows = token_windows(" ".join(clean_for_embedding(value).split()), SUMMARY_TOKENS, 0)
            return windows[0] if windows else ""
    return ""


def _fill_variables(body: str, frontmatter: Mapping[str, Any]) -> str:
    """`{{fm.key}}` replaced by the frontmatter's value for `key` when it is plain text or a number."""

    def value(m: re.Match[str]) -> str:
        v = frontmatter.get(m.group(1))
        return str(v) if isinstance(v, str | int | float) and not isinstance(v, bool) else " "

    return _FM_VARIABLE.sub(value, body) if "{{" in body else body


def embedding_chunks(
    body: str,
    title: str = "",
    window: int = WINDOW_TOKENS,
    overlap: int = OVERLAP_TOKENS,
    frontmatter: Mapping[str, Any] | None = None,
) -> list[EmbedChunk]:
    """The chunks of a note's Markdown body (frontmatter removed) to embed, in reading order. A note
    with no text still gives one chunk of its title, so every titled note can be found. With the note's
    `frontmatter`, its description (`summary_of`) comes first, as a chunk of the title and that sentence, and
    the Dendron variables of the body (`{{fm.title}}`) read as their values."""
    chunks: list[EmbedChunk] = []
    path: list[tuple[int, str]] = []
    title = " ".join(title.split())
    if frontmatter:
        body = _fill_variables(body, frontmatter)
        summary = summary_of(frontmatter)
        if summary:
            chunks.append(EmbedChunk(0, (), f"{title}\n{summary}" if title else summary))
    for sec in sections(body):
        if sec.level:
            while path and path[-1][0] >= sec.level:
                path.pop()
            path.append((sec.level, " ".join(clean_for_embedding(sec.heading).split())))
        heading_path = tuple(h for _lvl, h in path if h)
        head = " > ".join(p for p in (title, *heading_path) if p)
        for piece in token_windows(clean_for_embedding(sec.content), window, overlap):
            chunks.append(EmbedChunk(len(chunks), heading_path, f"{head}\n{piece}" if head else piece))
    if not chunks and title:
        chunks.append(EmbedChunk(0, (), title))
    if len(chunks) > MAX_EMBED_CHUNKS:
        last = len(chunks) - 1
        chunks = [chunks[round(i * last / (MAX_EMBED_CHUNKS - 1))] for i in range(MAX_EMBED_CHUNKS)]
    return chunks
