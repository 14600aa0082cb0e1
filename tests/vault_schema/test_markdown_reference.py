"""The fast Markdown scanner against markdown-it-py, the reference CommonMark parser, on every corpus note.

The scanner (vault_schema/markdown.py, the link passes in links.py) is a line scanner that knows fences and
code spans and nothing else about block structure; markdown-it builds the whole CommonMark tree. Over every
note of ../shared/corpora both must find the same ATX headings, fenced code blocks and links. Where they
differ, the difference must fall in one of the categories below, each with its reason, and each category
must hold exactly the number of differences pinned here, so any new difference (or a fixed one) fails.

markdown-it runs with tables on (notes use them) and with a small wikilink rule written here: mdit-py-plugins
has none. The rule only recognises `[[...]]` where markdown-it reads inline text; deciding where that is
(code spans, fenced and indented code, HTML blocks) is what is being compared. Notes are parsed without
their frontmatter, as the scanner sees them (`Note.text`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from urllib.parse import unquote

import pytest
from conftest import CORPORA, md_files
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from agentmd.vault_schema import Link, extract_links, fenced_blocks, sections, split_frontmatter
from agentmd.vault_schema.links import ATTACHMENT_EXTENSIONS
from agentmd.vault_schema.markdown import _scan

# (what, category) -> (differences on the corpora, why they are accepted)
ACCEPTED: dict[tuple[str, str], tuple[int, str]] = {
    ("heading only markdown-it finds", "in a block quote"): (
        246,
        "`> ## Heading` (callouts are block quotes): the scanner reads headings only at the start of a line",
    ),
    ("heading only markdown-it finds", "in a list"): (15, "`- ## Heading`: the same, inside a list item"),
    ("heading only markdown-it finds", "in scanner code"): (
        13,
        "the scanner is inside a fence markdown-it reads differently (one opened inside an HTML block or a list)",
    ),
    ("heading only the scanner finds", "in a list"): (
        61,
        "a `#` line markdown-it keeps in a list item (lazy continuation, tab-indented items read as code)",
    ),
    ("heading only the scanner finds", "in an HTML block"): (
        24,
        "a `#` line inside raw HTML (`<details>`, comments): markdown-it copies HTML blocks as they are",
    ),
    ("heading only the scanner finds", "in a fence"): (1, "inside a fence only markdown-it sees (opened in a list)"),
    ("fence only markdown-it finds", "in a block quote"): (46, "`> ```tasks`: fences in block quotes and callouts"),
    ("fence only markdown-it finds", "in a list"): (91, "fences in list items, often tab-indented"),
    ("fence only markdown-it finds", "in scanner code"): (3, "a fence the scanner takes as closing an earlier one"),
    ("fence only the scanner finds", "in an HTML block"): (13, "a fence line inside raw HTML or an HTML comment"),
    ("fence only the scanner finds", "in a fence"): (1, "inside a fence only markdown-it sees (opened in a list)"),
    ("markdown link only the scanner finds", "in an HTML block"): (
        2,
        "a link inside raw HTML: markdown-it copies HTML blocks as they are; Obsidian shows the HTML",
    ),
    ("wiki link only the scanner finds", "in an HTML block"): (80, "the same for wikilinks (`<details>` sections)"),
    ("wiki link only the scanner finds", "in a list"): (7, "a wikilink in a list item markdown-it reads as code"),
    ("wiki link only markdown-it finds", "in a list"): (1, "a wikilink in a list item the scanner reads as code"),
    ("wiki link only markdown-it finds", "in scanner code"): (
        8,
        "after a fence the scanner reads differently (one opened inside an HTML block)",
    ),
}


def _wikilink(state: StateInline, silent: bool) -> bool:
    """`[[inner]]` on one line, no brackets inside: a wikilink token holding `inner`."""
    src, pos = state.src, state.pos
    if not src.startswith("[[", pos):
        return False
    end = src.find("]]", pos + 2)
    inner = src[pos + 2 : end] if end >= 0 else ""
    if end < 0 or "[" in inner or "]" in inner or "\n" in inner:
        return False
    if not silent:
        state.push("wikilink", "", 0).content = inner
    state.pos = end + 2
    return True


MD = MarkdownIt("commonmark").enable("table")
MD.inline.ruler.before("link", "wikilink", _wikilink)
CONTAINERS = {"blockquote_open": "in a block quote", "bullet_list_open": "in a list", "ordered_list_open": "in a list"}
BLOCKS = {"html_block": "in an HTML block", "code_block": "in indented code", "fence": "in a fence"}


def _where(tokens: Sequence[Token], line: int, scanner_code: set[int] | None) -> str:
    """The category of a difference at `line`: the scanner's code (for what only markdown-it finds), else what
    markdown-it has around it."""
    if scanner_code is not None and line in scanner_code:
        return "in scanner code"
    for t in tokens:  # outermost first: a container wins over the block inside it
        if t.map and t.map[0] <= line < t.map[1]:
            if t.type in CONTAINERS:
                return CONTAINERS[t.type]
            if t.type in BLOCKS:
                return BLOCKS[t.type]
    return "elsewhere"


def _reference_target(kind: str, raw: str) -> tuple[str, str] | None:
    """The target of a reference link, by the scanner's documented rules for what counts as a vault link."""
    if kind == "wiki":
        inner = raw.replace("\\|", "|").split("|", 1)[0]
        if inner.startswith("dendron://"):
            inner = inner.split("/", 3)[-1]
        target, _, frag = inner.partition("#")
        return (kind, inner.strip()) if target.strip() or frag.strip() else None
    dest = unquote(raw)
    if dest.startswith("//") or ":" in dest.split("/", 1)[0]:
        return None  # web addresses, mailto:, obsidian:// ...
    path, _, frag = dest.partition("#")
    path = path.strip()
    name = path.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if not path:
        return (kind, "") if frag.strip() else None
    if (ext == "md" and name[:-3].strip()) or ext in ATTACHMENT_EXTENSIONS:
        return kind, path
    return None


def _written(link: Link) -> str:
    """A wikilink's target and fragment as written (`note#heading`, `#^block`)."""
    frag = f"#^{link.block}" if link.block else f"#{link.heading}" if link.heading else ""
    return (link.target + frag).strip()


def _differences(text: str) -> Counter[tuple[str, str]]:
    tokens = MD.parse(text)
    scanner_code = {i for i, _line, code, _block in _scan(text) if code and i >= 0}
    found: Counter[tuple[str, str]] = Counter()

    def note(what: str, lines: set[int], n: int = 1) -> None:
        for line in lines:
            found[(what, _where(tokens, line, scanner_code if "markdown-it finds" in what else None))] += n

    ref_heads = {
        (t.map[0], int(t.tag[1:]), tokens[i + 1].content.strip())
        for i, t in enumerate(tokens)
        if t.type == "heading_open" and t.markup.startswith("#") and t.map  # setext headings are not compared
    }
    heads = {(s.start_line, s.level, s.heading) for s in sections(text) if s.level}
    note("heading only markdown-it finds", {h[0] for h in ref_heads - heads})
    note("heading only the scanner finds", {h[0] for h in heads - ref_heads})
    ref_fences = {(t.map[0], t.info.strip()) for t in tokens if t.type == "fence" and t.map}
    fences = {(b.start_line, b.info) for b in fenced_blocks(text)}
    note("fence only markdown-it finds", {f[0] for f in ref_fences - fences})
    note("fence only the scanner finds", {f[0] for f in fences - ref_fences})

    ref_links: Counter[tuple[str, str]] = Counter()
    ref_line: dict[tuple[str, str], int] = {}
    for t in tokens:
        for child in t.children or () if t.type == "inline" else ():
            raw = child.content if child.type == "wikilink" else child.attrs.get("href") or child.attrs.get("src")
            if child.type in ("wikilink", "link_open", "image") and isinstance(raw, str):
                target = _reference_target("wiki" if child.type == "wikilink" else "markdown", raw)
                if target is not None and t.map:
                    ref_links[target] += 1
                    ref_line.setdefault(target, t.map[0])
    links: Counter[tuple[str, str]] = Counter()
    link_line: dict[tuple[str, str], int] = {}
    for link in extract_links(text):
        key = (link.kind, link.target if link.kind == "markdown" else _written(link))
        links[key] += 1
        link_line.setdefault(key, link.line - 1)
    for target, n in (ref_links - links).items():
        note(f"{target[0]} link only markdown-it finds", {ref_line[target]}, n)
    for target, n in (links - ref_links).items():
        note(f"{target[0]} link only the scanner finds", {link_line[target]}, n)
    return found


def test_scanner_agrees_with_markdown_it_on_every_corpus_note() -> None:
    if not CORPORA.is_dir():
        pytest.fail(f"the test corpora must be present at {CORPORA}")
    paths = sorted(md_files(CORPORA))
    assert len(paths) >= 4265
    found: Counter[tuple[str, str]] = Counter()
    for rel in paths:
        found += _differences(split_frontmatter((CORPORA / rel).read_text(encoding="utf-8")).body)
    assert dict(found) == {key: n for key, (n, _why) in ACCEPTED.items()}
