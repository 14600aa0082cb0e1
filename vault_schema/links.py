"""Links read from a note's text, and the one pass that reads a note's whole structure (`read_structure`:
links here, entity references in `entities.py`, derived aliases in `aliases.py`, the code split in `markdown.py`).

Everything here runs on every note at index time, so it is built on the fence scanner in `markdown.py` and on
regular expressions rather than a full CommonMark parse: markdown-it costs about 1 ms a note, these passes
together (code split included) 40 µs on the benchmark's notes and 60-300 µs on the real corpora. The scanner
gives exact CommonMark fences and code spans, which is the only structure these passes need: a link, entity
or identifier is recognised by its own shape. Patterns open with a literal where they can and cheap `in` or
byte-translation tests gate the rest, because Python's regex engine tries a pattern that opens with a common
character class at every position of the text.

Links
    Wikilinks `[[target]]`, `[[target|alias]]`, `[[target#heading|alias]]`, `[[target#^block]]`, `[[#heading]]`
    (the note itself: target ""), embeds `![[...]]`, and Markdown links `[text](path.md)`, `(path.md#h)`,
    `(<path with spaces.md>)`, `%20`-encoded paths and reference definitions `[ref]: path.md`. Links inside
    fenced code and inline code are samples, not links, and are skipped; a wikilink is read before code spans,
    as Obsidian does (a note may be named ``a `b` c``), unless its `[[` is itself inside a span. A table's
    escaped pipe `\\|` reads as a pipe. A Dendron address `dendron://vault/note` reads as `note`.

    Attachments: a target whose extension is a known non-note file type (images, audio, video, PDF, canvas,
    ...) is kept with `attachment=True`: it is recorded (so "which notes embed this image" can be answered)
    but it is not a note link, so it never counts as dangling and never makes a note non-orphan. A wikilink
    target with any other extension, or none, is a note (`dendron.topic.lookup` is a note named with dots).
    Markdown links count only when they name a `.md` file or an attachment; web addresses, `mailto:` and other
    schemes, and extension-less paths are not vault links.

    Dendron writes the label first, `[[Label|note]]`. With `dendron_reverse=True` the part after the pipe is
    the target. It is a parameter rather than a guess: the caller reads a per-vault setting (proposed
    contract key `link_convention: obsidian | dendron`).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from .aliases import read_aliases
from .entities import EntityRef, read_entities
from .markdown import CodeSplit, split_code

# fmt: off
ATTACHMENT_EXTENSIONS = frozenset((
    "png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif", "heic", "ico", "tif", "tiff", "mp3", "wav",
    "m4a", "ogg", "oga", "flac", "webm", "3gp", "mp4", "mkv", "mov", "ogv", "avi", "pdf", "canvas", "base",
    "zip", "csv", "xlsx", "xls", "docx", "doc", "pptx", "ppt", "txt", "json",
))
# fmt: on


@dataclass(frozen=True, slots=True)
class Link:
    target: str  # as written (decoded): a note name or path, "" for the note itself
    heading: str | None
    block: str | None  # the block id after `#^`
    alias: str | None  # the display text
    embed: bool  # `![[...]]` or `![...](...)`
    kind: str  # "wiki" or "markdown"
    line: int  # 1-based line within the text it was read from (Note.links: within the file)
    attachment: bool = False  # the target is a file that is not a note (see the module docstring)

    def __reduce__(self) -> tuple[type[Link], tuple[Any, ...]]:
        # pickled as its fields through the constructor: far cheaper to load than the default (worker
        # processes send the links of thousands of notes)
        return Link, tuple(getattr(self, name) for name in self.__slots__)

    @property
    def key(self) -> str:
        """The lower-cased file name the target must have (without `.md`): what resolution looks up."""
        return target_key(self.target)


def target_key(target: str) -> str:
    """The lower-cased file name a link target names, without `.md`; Unicode in NFC, so a name typed on one
    system matches a file name stored decomposed (macOS) on another."""
    name = target.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].strip().lower()
    if not name.isascii():
        name = unicodedata.normalize("NFC", name)
    return name[:-3] if name.endswith(".md") else name


def _extension(target: str) -> str:
    name = target.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


_WIKI = re.compile(r"\[\[([^\[\]\n]*)\]\]")
_MDLINK = re.compile(
    r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_REFDEF = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^<>\n]*>|\S+)", re.M)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_DENDRON = re.compile(r"^dendron://[^/]*/")


def _fragment(frag: str) -> tuple[str | None, str | None]:
    frag = frag.strip()
    if not frag:
        return None, None
    if frag.startswith("^"):
        return None, frag[1:].strip() or None
    return frag, None


def _wiki(inner: str, embed: bool, line: int, dendron_reverse: bool) -> Link | None:
    inner = inner.replace("\\|", "|")
    alias: str | None = None
    if "|" in inner:
        left, right = inner.split("|", 1)
        if dendron_reverse:
            alias, inner = left.strip() or None, right
        else:
            inner, alias = left, right.strip() or None
    if inner.startswith("dendron://"):
        inner = _DENDRON.sub("", inner)
    target, _, frag = inner.partition("#")
    target = target.strip()
    if dendron_reverse and frag and "," in frag:  # a Dendron note reference range: #heading,1:#*
        frag = frag.split(",", 1)[0]
    heading, block = _fragment(frag)
    if not target and not heading and not block:
        return None
    attachment = bool(target) and _extension(target) in ATTACHMENT_EXTENSIONS
    return Link(target, heading, block, alias, embed, "wiki", line, attachment)


def _markdown(dest: str, text: str | None, embed: bool, line: int) -> Link | None:
    dest = dest.strip()
    if dest.startswith("<") and dest.endswith(">"):
        dest = dest[1:-1].strip()
    if not dest or _SCHEME.match(dest) or dest.startswith("//"):
        return None  # web addresses, mailto:, obsidian://, command: ...
    path, _, frag = dest.partition("#")
    path = unquote(path).strip()
    heading, block = _fragment(unquote(frag))
    ext = _extension(path)
    if not path:
        if not heading and not block:
            return None
        attachment = False  # `[text](#heading)`: a heading of this note
    elif ext == "md":
        if not target_key(path):
            return None  # `(.md)`: no file name
        attachment = False
    elif ext in ATTACHMENT_EXTENSIONS:
        attachment = True
    else:
        return None
    return Link(path, heading, block, (text or "").strip() or None, embed, "markdown", line, attachment)


def extract_links(text: str, *, dendron_reverse: bool = False) -> list[Link]:
    """Every link in `text` outside code, in order. Line numbers are 1-based within `text`."""
    if "[" not in text:
        return []
    return _links(split_code(text), dendron_reverse)


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def _links(split: CodeSplit, dendron_reverse: bool, first_line: int = 1) -> list[Link]:
    """Wikilinks are read before code spans, as Obsidian does (a note may be named `a `b` c`), unless the
    `[[` itself is inside a span; Markdown links are read from the text with code spans blanked."""
    unfenced, prose, spans = split.unfenced, split.prose, split.spans
    found: list[tuple[int, str, str | None, bool]] = []  # (pos, what was written, markdown text, embed)
    has_md = "(" in prose and "](" in prose
    has_ref = ":" in prose and "]:" in prose
    rest = prose
    if "[[" in unfenced:
        span_starts = [a for a, _b in spans]
        for m in _WIKI.finditer(unfenced):
            start = m.start()
            k = bisect_right(span_starts, start) - 1
            if k >= 0 and start < spans[k][1]:
                continue  # `[[sample]]` in inline code
            found.append((start, m.group(1), None, unfenced[start - 1 : start] == "!"))
        if has_md or has_ref:
            rest = _WIKI.sub(_blank, prose)
    if has_md:
        for m in _MDLINK.finditer(rest):
            start = m.start()
            found.append((start, m.group(2), m.group(1), rest[start - 1 : start] == "!"))
    if has_ref:
        for m in _REFDEF.finditer(rest):
            found.append((m.start(), m.group(1), "", False))
    if not found:
        return []
    found.sort(key=lambda f: f[0])
    out: list[Link] = []
    line, last = first_line, 0
    for pos, written, md_text, embed in found:
        line += prose.count("\n", last, pos)
        last = pos
        if md_text is None:
            link = _wiki(written, embed, line, dendron_reverse)
        else:
            link = _markdown(written, md_text, embed, line)
        if link is not None:
            out.append(link)
    return out


# -- one pass for the note model -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Structure:
    links: tuple[Link, ...]
    entities: tuple[EntityRef, ...]
    derived_aliases: tuple[str, ...]
    prose: str = ""  # the text with fenced code and code spans blanked: `markdown.strip_code(text)`


def read_structure(
    title: str, text: str, *, line_offset: int = 0, dendron_reverse: bool = False, alias_limit: int = 20
) -> Structure:
    """Links, entity references and derived aliases of a note body, splitting out its code once.
    `line_offset` is added to every line number (the body's 0-based first line within its file)."""
    split = split_code(text)
    unfenced, prose, code = split.unfenced, split.prose, split.code
    links = _links(split, dendron_reverse, line_offset + 1) if "[" in unfenced else []
    entities = read_entities(unfenced, line_offset + 1)
    aliases = read_aliases(title, prose, code, alias_limit)
    return Structure(tuple(links), tuple(entities), tuple(aliases), prose)
