"""What recall shows of a note besides its title, read once when the note is indexed.

`digest` gives two facts the index stores with each note (`IndexDoc.facts`): `summary`, the frontmatter's
`summary` (any YAML scalar or block scalar, already parsed by the note model), and `opening`, the note's
first line of prose: no headings, fences, callout markers, tables, embeds, rules or comments. Both are
Markdown read as prose (`plain`): code out, links as their text, heading/list/quote/task markers and strong
emphasis out, white space collapsed. The recall gathering (engine/search/recall.py) reads these facts
instead of the note's file, and reads search snippets, also Markdown, through `plain` too. It lives here because
vault_schema is the only package that reads Markdown.

Only the standard library: pure text functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .markdown import code_lines

_WIKILINK = re.compile(r"!?\[\[([^\[\]|#^]*)(?:[#^][^\[\]|]*)?(?:\|([^\[\]]*))?(?:\]\]|$)")
_MDLINK = re.compile(r"!?\[([^\[\]]*)\]\([^()\s]*\)")
_CODE_SPAN = re.compile(r"(`{3,}|~{3,}).*?(?:\1|$)", re.S)  # a fenced block, folded into one line by a snippet
_MARKS = re.compile(r"(?:^|(?<=\s))(?:#{1,6}|[-*+]|\[[ xX]\]|\[![\w-]+\][+-]?)(?=\s)")
_LEAD = re.compile(r"^\s*(?:>\s*)*(?:\d+[.)]\s+)?")
_MARK_STARTS = "#-*+["  # the characters a match of _MARKS begins with
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_QUOTE_LEAD = re.compile(r"^>\s*(\[![^\]]*\][+-]?\s*)?")
_LIST_LEAD = re.compile(r"^([-*+]|\d+[.)])\s+")
_NOT_PROSE = ("#", "|", "![[", "---", "<!--", "%%")


def plain(text: str) -> str:
    """Markdown read as prose: code blocks out, links as their text, heading/list/quote/task markers and
    emphasis out, link brackets cut in half by a snippet's edge dropped."""
    # Each pattern runs only on text holding what it must start with (one fast scan each): an index build
    # reads the opening line of every note, and most are plain prose.
    if "```" in text or "~~~" in text:
        text = _CODE_SPAN.sub(" ", text)
    if "[[" in text:
        text = _WIKILINK.sub(lambda m: (m.group(2) or m.group(1) or "").strip(), text)
        text = text.replace("[[", "")
    text = text.replace("]]", "")
    if "](" in text:
        text = _MDLINK.sub(lambda m: m.group(1), text)
    text = _LEAD.sub("", text)
    if any(mark in text for mark in _MARK_STARTS):
        text = _MARKS.sub(" ", text)
    text = _LEAD.sub("", text.strip())
    if "**" in text or "__" in text:
        text = _STRONG.sub(r"\2", text)
    return " ".join(text.split())


def opening_line(body: str) -> str:
    """The first line of prose of a Markdown body (see the module docstring), its markers taken off."""
    for line, in_code in code_lines(body):
        s = line.strip()
        if in_code or not s or s.startswith(_NOT_PROSE):
            continue
        s = _LIST_LEAD.sub("", _QUOTE_LEAD.sub("", s))
        if s:
            return s
    return ""


def frontmatter_summary(frontmatter: Mapping[str, Any]) -> str | None:
    """The frontmatter's `summary` as text, when it is a scalar (a list or mapping is not a summary)."""
    value = frontmatter.get("summary")
    if value is None or isinstance(value, list | dict):
        return None
    text = str(value).strip()
    return text or None


def digest(frontmatter: Mapping[str, Any], body: str) -> dict[str, object]:
    """The facts recall and a result's confidence read for a note: `summary` (None when the frontmatter has
    none), `opening`, and `front` (`front_words`)."""
    summary = frontmatter_summary(frontmatter)
    return {
        "summary": plain(summary) if summary else None,
        "opening": plain(opening_line(body)),
        "front": front_words(frontmatter),
    }


FRONT_WORDS_MAX = 4000  # characters of frontmatter values kept as the note's words
_NAMED_ELSEWHERE = frozenset({"title", "aliases", "alias", "tags", "tag"})  # the title and meta fields hold these


def front_words(frontmatter: Mapping[str, Any]) -> str:
    """The frontmatter's values as text (`why`, `summary`, `description`, `project` ...; lists and mappings read
    through; keys left out): words a search finds in the note, which its confidence must count as the note's
    too. The title, aliases and tags are left out, being words of the note's other fields already."""
    out: list[str] = []
    size = 0

    def walk(value: Any) -> None:
        nonlocal size
        if size > FRONT_WORDS_MAX:
            return
        if isinstance(value, Mapping):
            for v in value.values():
                walk(v)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)
        elif value is not None and not isinstance(value, bool):
            text = str(value).strip()
            if text:
                out.append(text)
                size += len(text) + 1

    for key, value in frontmatter.items():
        if str(key).lower() not in _NAMED_ELSEWHERE:
            walk(value)
    return "\n".join(out)[:FRONT_WORDS_MAX]
