"""Structure read from a note's text: links, entity references and derived aliases.

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

Entities (keyed by URI, owner and repository lower-cased)
    `repo:owner/name`         a github.com/owner/name address (a bare `a/b` is a path far more often)
    `issue:owner/name#12`     `owner/name#12`, and github.com/.../issues/12 and .../pull/12 addresses. Issues and
                              pull requests share one number space on GitHub, so they share one namespace: the
                              text `owner/name#12` cannot tell which it is, and both spellings must meet.
    `release:owner/name@v1.2.3`  `owner/name@v1.2.3` (X.Y.Z, optional pre-release) and .../releases/tag/<tag>
    `commit:<sha>`            .../commit/<sha> addresses, and a bare lower-case hex run of 7 to 40 characters
                              holding at least one digit and one letter (a run with no letter is a number or a
                              date; with no digit it is a word such as `defaced`; 7 is git's shortest
                              abbreviation). Refused: `#a1b2c3`-style colours and anything glued to `#`, `^`
                              (block ids), `/`, `.`, `:`, `@`, `=`, `-` or a word character; scientific notation
                              (`1e10000`); runs of five identical characters (`b1000000`, an address); hex
                              inside a web address that is not a commit address.
    `owner/name` before `#N` or `@version` must not continue a path (`src/a/b#12`) or a package scope
    (`@scope/pkg@1.2.3`); GitHub's own pages (`docs.`, `gist.`, `users/`, `settings/`...) are no repository,
    and neither is an image hosted on GitHub. A 41+ character hex run (a checksum) is no commit.
    An issue, release or commit reference also names its repository, so it adds the `repo:` row too. Fenced
    code is not read for entities (logs and hex dumps); inline code is.

Derived aliases
    Acronyms in both directions ("Write-Ahead Logging (WAL)", "WAL (write-ahead logging)"), kept only when the
    expansion's word initials spell the acronym (short function words may be skipped, a CamelCase word may give
    one letter per hump). Compound identifiers split into words: snake_case and camelCase anywhere; PascalCase
    in code, and in prose from three parts (`SearchIndexWriter`; two-part ones there are mostly names: GitHub,
    JavaScript, YouTube); kebab-case only inside code (a hyphen in prose is punctuation). A part of one letter,
    or fewer than two word-like parts, is no identifier (`iPhone`, `x_y`, a UUID); web addresses are not read.
    Acronym pairs sort first, then identifiers by how often the note uses them, then alphabetically; the sorted
    list is cut to `limit`, so which aliases survive is a property of the note, not of the scan order.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import unquote

from .markdown import _scan, code_spans

# -- code ------------------------------------------------------------------------------------------------------


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


# -- links -----------------------------------------------------------------------------------------------------

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


# -- entities --------------------------------------------------------------------------------------------------

ENTITY_KINDS = ("repo", "issue", "release", "commit")


@dataclass(frozen=True, slots=True)
class EntityRef:
    uri: str  # repo:owner/name, issue:owner/name#12, release:owner/name@v1.2.3, commit:<sha>
    kind: str  # the URI's scheme
    text: str  # as written
    line: int  # 1-based, like Link.line


# Patterns start with a literal or a rare character where they can: Python's regex engine skips ahead to such a
# start quickly, while a pattern opening with a lookbehind or a common character class is tried at every
# position (about ten times slower on prose). Boundaries before a match are checked on a short slice instead.
_URL = re.compile(r"(?:https?://|www\.)[^\s<>()\[\]{}\"'`|]+", re.I)  # for short texts (queries)
_URL_TAIL = re.compile(r"://[^\s<>()\[\]{}\"'`|]+")  # the scheme word before it may stay
_WWW = re.compile(r"www\.[^\s<>()\[\]{}\"'`|]+")
_GH_URL = re.compile(
    r"[Gg]it[Hh]ub\.com/([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})((?:/[^\s<>()\[\]{}\"'`|]*)?)"
)
_GH_PREFIX = re.compile(r"(?<![\w.@-])(?:[Hh][Tt][Tt][Pp][Ss]?://)?(?:[Ww][Ww][Ww]\.)?\Z")
_OWNER_REPO_TAIL = re.compile(r"(?<![\w./@-])([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9][A-Za-z0-9._-]{0,99})\Z")
_HASH_NUM = re.compile(r"#(\d{1,7})(?![\w-])")
_VERSION = r"[vV]?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z]+(?:[.-][0-9A-Za-z]+)*)?"
_AT_VERSION = re.compile(r"@(" + _VERSION + r")(?![\w-])")
_SHA = re.compile(r"(?<![\w#/.:@=^$%&+~\\-])[0-9a-f]{7,40}(?![\w/@\\-]|\.\w)")
_SHA_REFUSE = re.compile(r"^\d+e\d+$|^[01]+b$|(.)\1{4}")
_HEX_RUNS = bytes(ord("h") if chr(i) in "0123456789abcdef" else 32 for i in range(256))
_HEX_DIGIT = re.compile(r"\d")
_HEX_LETTER = re.compile(r"[a-f]")
_IMAGE_PATH = re.compile(r"\.(?:svg|png|jpe?g|gif|webp|ico|avif)$", re.I)
# fmt: off
GITHUB_NOT_OWNERS = frozenset((
    "about", "apps", "blog", "codespaces", "collections", "contact", "customer-stories", "enterprise",
    "enterprises", "events", "explore", "features", "join", "login", "logout", "marketplace", "new",
    "notifications", "organizations", "orgs", "pricing", "pulls", "issues", "readme", "resources", "search",
    "security", "settings", "site", "solutions", "sponsors", "team", "teams", "topics", "trending",
    "user-attachments", "users", "watching",
))
# fmt: on


def _line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    i = find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = find("\n", i + 1)
    return starts


def _repo_name(repo: str) -> str:
    repo = repo.rstrip(".")
    if repo.lower().endswith(".git"):
        repo = repo[:-4]
    return repo


def _github_url(m: re.Match[str]) -> list[tuple[str, str]]:
    owner, repo, rest = m.group(1).lower(), _repo_name(m.group(2)).lower(), m.group(3).rstrip(".,;:!?*_'\"")
    if owner in GITHUB_NOT_OWNERS or not repo:
        return []
    parts = [p for p in rest.split("/") if p]
    if len(parts) >= 3 and parts[0] in ("blob", "raw") and _IMAGE_PATH.search(parts[-1].split("?")[0]):
        return []  # an image hosted on GitHub is not a mention of the repository
    base = f"{owner}/{repo}"
    out = [("repo", f"repo:{base}")]
    head = parts[0].lower() if parts else ""
    if head in ("issues", "pull") and len(parts) >= 2:
        num = re.match(r"\d+", parts[1])
        if num:
            out.append(("issue", f"issue:{base}#{int(num.group(0))}"))
        if len(parts) >= 4 and parts[2] in ("commits", "commit"):
            sha = _url_sha(parts[3])
            if sha:
                out.append(("commit", f"commit:{sha}"))
    elif head in ("commit", "commits") and len(parts) >= 2:
        sha = _url_sha(parts[1])
        if sha:
            out.append(("commit", f"commit:{sha}"))
    elif head == "releases" and len(parts) >= 3 and parts[1] == "tag":
        tag = unquote(parts[2].split("?")[0].split("#")[0]).lower()
        if tag:
            out.append(("release", f"release:{base}@{tag}"))
    return out


def _url_sha(part: str) -> str | None:
    m = re.match(r"[0-9a-fA-F]{7,40}(?![0-9a-zA-Z])", part)
    return m.group(0).lower() if m else None


def _shas(text: str) -> list[tuple[int, str]]:
    """(position, sha) of each bare commit hash. Runs of 7+ lower-case hex characters are found by a byte
    translation (C speed); only those runs are then checked, instead of trying a pattern at every position."""
    out: list[tuple[int, str]] = []
    raw = text.encode("utf-8", "surrogatepass")
    runs = raw.translate(_HEX_RUNS)
    i = runs.find(b"hhhhhhh")
    ascii_only = len(raw) == len(text)
    last_byte = last_char = 0
    while i >= 0:
        end = runs.find(b" ", i)
        end = len(runs) if end < 0 else end
        if ascii_only:
            at = i
        else:  # a byte offset to a character offset: decode the stretch since the last run (both boundaries)
            at = last_char + len(raw[last_byte:i].decode("utf-8", "surrogatepass"))
            last_byte, last_char = i, at
        m = _SHA.match(text, at)  # the same boundaries as the pattern (a run starts after a non-hex character)
        if m is not None and m.end() - at == end - i and _is_sha(m.group(0)):
            out.append((at, m.group(0)))
        i = runs.find(b"hhhhhhh", end)
    return out


def _is_sha(s: str) -> bool:
    return bool(_HEX_DIGIT.search(s) and _HEX_LETTER.search(s) and not _SHA_REFUSE.search(s))


def extract_entities(text: str) -> list[EntityRef]:
    """Repository, issue, release and commit references in `text` (fenced code skipped), in text order,
    each (uri, line) once."""
    return _entities(split_code(text).unfenced)


def _blank_urls(text: str, *, www: bool = True) -> str:
    """`text` with web addresses blanked (same length). `www=False` leaves scheme-less `www.` addresses, which
    the entity patterns refuse anyway (a reference glued to `/` or `.` is part of a path)."""
    if ":" in text and "://" in text:
        text = _URL_TAIL.sub(_blank, text)
    if www and "www." in text:
        text = _WWW.sub(_blank, text)
    return text


def _qualified(text: str, pos: int) -> tuple[int, str] | None:
    """(start, "owner/name") written right before `pos` (as in `owner/name#12`), when it is not part of a path."""
    m = _OWNER_REPO_TAIL.search(text, max(0, pos - 140), pos)
    if m is None or m.group(1).lower() in GITHUB_NOT_OWNERS:
        return None
    return m.start(), f"{m.group(1).lower()}/{_repo_name(m.group(2)).lower()}"


def _entities(unfenced: str, first_line: int = 1) -> list[EntityRef]:
    found: list[tuple[int, str, str, str]] = []  # (pos, kind, uri, text)
    at = unfenced.find("ub.com")  # github.com, GitHub.com: anchored matches at each, not a scan of the text
    while at >= 0:
        m = _GH_URL.match(unfenced, at - 4) if at >= 4 else None
        at = unfenced.find("ub.com", at + 6)
        if m is not None:
            prefix = _GH_PREFIX.search(unfenced, max(0, m.start() - 12), m.start())
            if prefix is None:
                continue  # docs.github.com, gist.github.com, a longer word
            written = unfenced[prefix.start() : m.end()].rstrip(".,;:!?*_'\"")
            for kind, uri in _github_url(m):
                found.append((prefix.start(), kind, uri, written))
    rest = _blank_urls(unfenced, www=False)  # addresses are read above, or not at all
    if "#" in rest:
        for m in _HASH_NUM.finditer(rest):
            q = _qualified(rest, m.start())
            if q:
                start, base = q
                written = rest[start : m.end()]
                found.append((start, "repo", f"repo:{base}", written))
                found.append((start, "issue", f"issue:{base}#{int(m.group(1))}", written))
    if "@" in rest:
        for m in _AT_VERSION.finditer(rest):
            q = _qualified(rest, m.start())
            if q:
                start, base = q
                written = rest[start : m.end()]
                found.append((start, "repo", f"repo:{base}", written))
                found.append((start, "release", f"release:{base}@{m.group(1).lower()}", written))
    for start, sha in _shas(rest):
        found.append((start, "commit", f"commit:{sha}", sha))
    if not found:
        return []
    found.sort(key=lambda f: f[0])
    starts = _line_starts(unfenced)
    seen: set[tuple[str, int]] = set()
    out: list[EntityRef] = []
    for pos, kind, uri, written in found:
        line = bisect_right(starts, pos) + first_line - 1
        if (uri, line) not in seen:
            seen.add((uri, line))
            out.append(EntityRef(uri, kind, written, line))
    return out


_URI = re.compile(r"^(repo|issue|release|commit):\S+$", re.I)
_QUERY_REPO = re.compile(r"(?<![\w./@-])([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9][A-Za-z0-9._-]{0,99})(?![\w/#@-])")


def entity_uri(value: object) -> str | None:
    """The entity URI a frontmatter `entity:` value names: a URI (`repo:owner/name`), or any spelling
    `extract_entities` reads (a GitHub address, `owner/name#12`, `owner/name@v1.2.3`), or `owner/name`."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if _URI.match(text):
        return text.lower()
    uris = query_entity_uris(text)
    specific = [u for u in uris if not u.startswith("repo:")]  # an issue address also names its repository
    if len(specific) == 1:
        return specific[0]
    return uris[0] if len(uris) == 1 else None


def query_entity_uris(text: str) -> list[str]:
    """Entity URIs a search query names: everything `extract_entities` reads, plus a bare `owner/name` (in a
    query it is a name being asked about, not a path). The most specific reference comes first."""
    refs = _entities(text)
    uris = [r.uri for r in refs if r.kind != "repo"]
    named = {r.uri for r in refs}
    uris += [r.uri for r in refs if r.kind == "repo"]
    for m in _QUERY_REPO.finditer(_URL.sub(" ", text)):
        uri = f"repo:{m.group(1).lower()}/{_repo_name(m.group(2)).lower()}"
        if uri not in named and m.group(1).lower() not in GITHUB_NOT_OWNERS:
            named.add(uri)
            uris.append(uri)
    return list(dict.fromkeys(uris))


# -- derived aliases -------------------------------------------------------------------------------------------

# fmt: off
_STOP = frozenset((
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "per", "the", "to",
    "via", "with",
))
# fmt: on
_ACR = r"[A-Z][A-Za-z]{0,8}[A-Z]"
_PAREN = re.compile(r"\(([^()\n]{2,120})\)")
_ACR_ONLY = re.compile(_ACR + r"(?=s?\Z)")  # Expansion (ACR)
_ACR_TAIL = re.compile(r"(?<![\w-])(" + _ACR + r")s?\s*\Z")  # ACR (expansion)
_ACR_LAST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZs")
_EXPANSION_WORDS = re.compile(r"[A-Za-z][A-Za-z' -]*\Z")
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")
_INNER_CAP = re.compile(r"[a-z0-9][A-Z]")
_CAMEL_SEED = re.compile(r"[A-Z](?<=[a-z0-9][A-Z])|[A-Z](?=[a-z]{2})(?<=[A-Z]{3})")
_CASE_SHAPE = bytes(
    ord("a") if chr(i) in "abcdefghijklmnopqrstuvwxyz0123456789" else ord("A") if "A" <= chr(i) <= "Z" else 32
    for i in range(256)
)
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_ALNUM_STR = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_IDENT_CHARS = {
    "_": (_ALNUM_STR + "_", re.compile(r"[A-Za-z0-9_]+")),
    "-": (_ALNUM_STR + "-", re.compile(r"[A-Za-z0-9-]+")),
}
_EXPANSION_END = re.compile(r"[.;:!?()\[\]{}\"]")
MAX_PARTS = 8
_WORDISH = re.compile(r"[A-Za-z]{2,}\d*\Z")


def _units(word: str) -> list[tuple[str, bool]]:
    """(initial, may be skipped) for each letter a word can give: one per CamelCase hump, the first required."""
    if _INNER_CAP.search(word):
        humps = _HUMP.findall(word)
        return [(humps[0][0].lower(), False)] + [(h[0].lower(), True) for h in humps[1:]]
    return [(word[0].lower(), word.lower() in _STOP)]


def _spells(words: list[str], acronym: str) -> bool:
    """Whether the words' initials spell the acronym, in order, every word used (function words and inner
    CamelCase humps may be skipped), the first word giving the first letter."""
    units: list[tuple[str, bool, bool]] = []  # (letter, skippable, starts a word)
    for w in words:
        for j, (letter, skip) in enumerate(_units(w)):
            units.append((letter, skip, j == 0))
    letters = acronym.lower()
    if not units or units[0][0] != letters[0]:
        return False
    # a word's first unit may only be skipped when the word is a function word; humps after it may be skipped
    states = {0}
    for letter, skip, _first in units:
        nxt = set()
        for s in states:
            if s < len(letters) and letters[s] == letter:
                nxt.add(s + 1)
            if skip:
                nxt.add(s)
        states = nxt
        if not states:
            return False
    return len(letters) in states


def _expansion(words: list[str]) -> str:
    return " ".join(w.lower() for w in words)


def _acronyms(prose: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    if "(" not in prose:
        return pairs
    for m in _PAREN.finditer(prose):
        inside = m.group(1).strip()
        acr = _ACR_ONLY.match(inside) if inside[:1].isupper() else None
        if acr:  # Expansion Words (EW): the shortest run of words before the parenthesis that spells it
            acronym = acr.group(0)
            before = prose[max(0, m.start() - 200) : m.start()]
            cut = max(before.rfind("\n"), max((e.end() for e in _EXPANSION_END.finditer(before)), default=-1))
            words = [w for piece in before[cut + 1 :].replace("-", " ").split() for w in _WORD.findall(piece)]
            for start in range(len(words) - 1, max(-1, len(words) - 2 * len(acronym) - 2), -1):
                if words[start].lower() not in _STOP and _spells(words[start:], acronym):
                    pairs.append((acronym, _expansion(words[start:])))
                    break
        elif prose[m.start() - 2 : m.start()].rstrip()[-1:] in _ACR_LAST and _EXPANSION_WORDS.match(inside):
            tail = _ACR_TAIL.search(prose, max(0, m.start() - 14), m.start())  # EW (expansion words)
            if tail:
                acronym = tail.group(1)
                words = _WORD.findall(inside.replace("-", " "))
                if 2 <= len(words) <= 2 * len(acronym) + 2 and _spells(words, acronym):
                    pairs.append((acronym, _expansion(words)))
    return pairs


@lru_cache(maxsize=8192)
def _identifier_words(token: str) -> str | None:
    """The words of a compound identifier, or None when it is not one: fewer than two word-like parts (two or
    more letters, then digits: `base64` is one, `f06dcdd8` from a UUID is not), a one-letter part (`iPhone`,
    `x_y`), or more than MAX_PARTS parts."""
    parts: list[str] = []
    for piece in re.split(r"[_-]+", token):
        if not piece:
            continue
        parts.extend(_HUMP.findall(piece) if _INNER_CAP.search(piece) or piece[:1].isupper() else [piece])
    if not 2 <= len(parts) <= MAX_PARTS:
        return None
    if sum(1 for p in parts if _WORDISH.match(p)) < 2 or any(len(p) < 2 and p.isalpha() for p in parts):
        return None
    return " ".join(p.lower() for p in parts)


def derived_aliases(title: str, text: str, limit: int = 20) -> list[str]:
    """Aliases a note's own words support: acronyms whose expansion really spells them (both forms), and
    compound identifiers as words. Sorted (acronym pairs, then by uses, then alphabetically), then cut."""
    split = split_code(text)
    return _aliases(title, split.prose, split.code, limit)


def _count(counts: dict[str, int], token: str, pascal_parts: int) -> None:
    words = _identifier_words(token)
    if words and (not token[0].isupper() or words.count(" ") + 1 >= pascal_parts):
        counts[words] = counts.get(words, 0) + 1


def _camel_seeds(text: str) -> list[int]:
    """Positions of the capitals that step up from a lower-case letter or digit (`maxRetry`) or end a capital
    run before lower case (`HTTPServer`). The text's case shape comes from a byte translation (C speed) and,
    unless capitals are many, each capital is checked in turn; else the pattern runs over the text."""
    raw = text.encode("utf-8", "surrogatepass")
    shape = raw.translate(_CASE_SHAPE)
    capitals = shape.count(b"A")
    if not capitals:
        return []
    if capitals > 48:
        return [m.start() for m in _CAMEL_SEED.finditer(text)]
    seeds = []
    i = shape.find(b"A", 1)  # a capital opening the text steps up from nothing
    while i >= 0:
        before = shape[i - 1]
        if before == 97 or (before == 65 and i >= 2 and shape[i - 2] == 65 and shape[i + 1 : i + 3] == b"aa"):
            seeds.append(i)
        i = shape.find(b"A", i + 1)
    if len(raw) == len(text) or not seeds:
        return seeds
    out, last_byte, last_char = [], 0, 0  # byte offsets to character offsets (capitals are ASCII boundaries)
    for b in seeds:
        last_char += len(raw[last_byte:b].decode("utf-8", "surrogatepass"))
        last_byte = b
        out.append(last_char)
    return out


def _run_start(text: str, at: int, chars: str) -> int:
    """Where the run of `chars` that reaches `at` starts (`str.rstrip` walks back at C speed)."""
    start = at
    while True:
        piece = text[max(0, start - 48) : start]
        kept = len(piece.rstrip(chars))
        start -= len(piece) - kept
        if kept or not piece:
            return start


def _tokens_around(text: str, mark: str) -> list[str]:
    """Each maximal run of ASCII letters, digits and `mark` (`_` or `-`) holding `mark`, found from the marks
    themselves (`str.find` is C speed; a pattern would be tried at every letter of the text)."""
    out: list[str] = []
    chars, pattern = _IDENT_CHARS[mark]
    i = text.find(mark)
    while i >= 0:
        a = _run_start(text, i, chars)
        run = pattern.match(text, a)
        end = run.end() if run else i + 1
        if run:
            out.append(run.group(0))
        i = text.find(mark, end)
    return out


def _identifiers(text: str, counts: dict[str, int], *, code: bool) -> None:
    """Count the compound identifiers in `text` (web addresses blanked). snake_case and camelCase anywhere;
    PascalCase in prose only from three parts (two-part ones there are mostly names: GitHub, JavaScript,
    YouTube); kebab-case only in code."""
    for token in _tokens_around(text, "_"):  # snake_case: `_private`, `__init__` and `_em_` give one word
        token = token.strip("_")
        if "_" in token and token[0].isalpha():
            _count(counts, token, 2)
    pascal_parts = 2 if code else 3
    last = -1
    for a in _camel_seeds(text):
        if a < last:
            continue  # another hump of the identifier just counted
        a = _run_start(text, a, _ALNUM_STR)
        run = _ALNUM_RUN.match(text, a)
        if run is None:
            continue
        last = run.end()
        if (a and text[a - 1] == "_") or text[last : last + 1] == "_" or not text[a].isalpha():
            continue  # part of a snake_case identifier, or starts with a digit
        _count(counts, run.group(0), pascal_parts)
    for token in _tokens_around(text, "-") if code else ():  # kebab-case, and `--long-flag`
        token = token.lstrip("-")
        if "-" in token and token[0].isalpha() and "--" not in token and token[-1] != "-":
            _count(counts, token, 2)


def _aliases(title: str, prose: str, code: list[str], limit: int) -> list[str]:
    prose = title + "\n" + prose
    acronym_forms: dict[str, str] = {}
    for acronym, expansion in _acronyms(prose):
        for form in (acronym, expansion):
            acronym_forms.setdefault(form.casefold(), form)
    counts: dict[str, int] = {}
    _identifiers(_blank_urls(prose), counts, code=False)
    if code:
        _identifiers(_blank_urls("\n".join(code)), counts, code=True)
    ranked = sorted(acronym_forms.values(), key=str.casefold)
    ranked += sorted((w for w in counts if w.casefold() not in acronym_forms), key=lambda w: (-counts[w], w))
    return ranked[:limit]


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
    entities = _entities(unfenced, line_offset + 1)
    aliases = _aliases(title, prose, code, alias_limit)
    return Structure(tuple(links), tuple(entities), tuple(aliases), prose)
