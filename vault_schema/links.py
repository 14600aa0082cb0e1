"""Structure read from a note's text: links, entity references and derived aliases.

Everything here runs on every note at index time, so it is built on the line scanner in `markdown.py` and
on regular expressions rather than a full CommonMark parse (markdown-it costs about 1 ms a note; these
passes together cost tens of microseconds). The scanner gives exact CommonMark fences and code spans, which
is the only structure these passes need: a link, entity or identifier is recognised by its own shape.

Links
    Wikilinks `[[target]]`, `[[target|alias]]`, `[[target#heading|alias]]`, `[[target#^block]]`, `[[#heading]]`
    (the note itself: target ""), embeds `![[...]]`, and Markdown links `[text](path.md)`, `(path.md#h)`,
    `(<path with spaces.md>)`, `%20`-encoded paths and reference definitions `[ref]: path.md`. Links inside
    fenced code and inline code are samples, not links, and are skipped. A table's escaped pipe `\\|` reads as
    a pipe. A Dendron address `dendron://vault/note` reads as `note`.

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
    A reference in an address also names its repository, so `issue:`, `release:` and commit addresses add the
    `repo:` row too. Fenced code is not read for entities (logs and hex dumps); inline code is.

Derived aliases
    Acronyms in both directions ("Write-Ahead Logging (WAL)", "WAL (write-ahead logging)"), kept only when the
    expansion's word initials spell the acronym (short function words may be skipped, a CamelCase word may give
    one letter per hump). Compound identifiers split into words: snake_case and camelCase/PascalCase anywhere,
    kebab-case only inside code (a hyphen in prose is punctuation). Acronym pairs sort first, then identifiers
    by how often the note uses them, then alphabetically; the sorted list is cut to `limit`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from urllib.parse import unquote

from .markdown import _TICKS, _scan

# -- code ------------------------------------------------------------------------------------------------------


def split_code(text: str) -> tuple[str, str, list[str]]:
    """(text with fenced blocks blanked, text with fences and code spans blanked, the code's own text).

    Line count is kept in both blanked texts. Same rules as `markdown.strip_code`, in one pass.
    """
    code: list[str] = []
    unfenced = text
    if "```" in text or "~~~" in text:
        lines: list[str] = []
        for i, line, in_code, block in _scan(text):
            if block is not None and block.content:
                code.append(block.content)
            if i >= 0:
                lines.append("" if in_code else line)
        unfenced = "\n".join(lines)
    prose = unfenced
    if "`" in unfenced:
        runs = [(m.start(), m.end()) for m in _TICKS.finditer(unfenced)]
        partner = [-1] * len(runs)
        last: dict[int, int] = {}
        for k in range(len(runs) - 1, -1, -1):
            width = runs[k][1] - runs[k][0]
            partner[k] = last.get(width, -1)
            last[width] = k
        out: list[str] = []
        pos = k = 0
        while k < len(runs):
            j = partner[k]
            if j < 0:
                k += 1
                continue
            start, end = runs[k][0], runs[j][1]
            code.append(unfenced[runs[k][1] : runs[j][0]])
            out.append(unfenced[pos:start] + " " + "\n" * unfenced.count("\n", start, end))
            pos, k = end, j + 1
        out.append(unfenced[pos:])
        prose = "".join(out)
    return unfenced, prose, code


# -- links -----------------------------------------------------------------------------------------------------

# fmt: off
ATTACHMENT_EXTENSIONS = frozenset((
    "png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif", "heic", "ico", "tif", "tiff", "mp3", "wav",
    "m4a", "ogg", "oga", "flac", "webm", "3gp", "mp4", "mkv", "mov", "ogv", "avi", "pdf", "canvas", "base",
    "excalidraw", "zip", "csv", "xlsx", "xls", "docx", "doc", "pptx", "ppt", "txt", "json", "html", "htm",
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
    name = target.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].strip().lower()
    return name[:-3] if name.endswith(".md") else name


def _extension(target: str) -> str:
    name = target.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]*)\]\]")
_MDLINK = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_REFDEF = re.compile(r"^ {0,3}\[[^\]\n]+\]:\s*(<[^<>\n]*>|\S+)", re.M)
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
    return _links(split_code(text)[1], dendron_reverse)


def _links(prose: str, dendron_reverse: bool) -> list[Link]:
    out: list[Link] = []
    for n, line in enumerate(prose.split("\n"), 1):
        if "[" not in line:
            continue
        if "[[" in line:
            for m in _WIKI.finditer(line):
                link = _wiki(m.group(2), bool(m.group(1)), n, dendron_reverse)
                if link is not None:
                    out.append(link)
            line = _WIKI.sub(lambda m: " " * len(m.group(0)), line)
        if "](" in line:
            for m in _MDLINK.finditer(line):
                link = _markdown(m.group(3), m.group(2), bool(m.group(1)), n)
                if link is not None:
                    out.append(link)
        elif "]:" in line:
            ref = _REFDEF.match(line)
            if ref:
                link = _markdown(ref.group(1), None, False, n)
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
_URL_TAIL = re.compile(r"://[^\s<>()\[\]{}\"'`|]+|www\.[^\s<>()\[\]{}\"'`|]+")  # the scheme word may stay
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


def _is_sha(s: str) -> bool:
    return bool(_HEX_DIGIT.search(s) and _HEX_LETTER.search(s) and not _SHA_REFUSE.search(s))


def extract_entities(text: str) -> list[EntityRef]:
    """Repository, issue, release and commit references in `text` (fenced code skipped), in text order,
    each (uri, line) once."""
    return _entities(split_code(text)[0])


def _blank_urls(text: str) -> str:
    if "://" not in text and "www." not in text:
        return text
    return _URL_TAIL.sub(lambda m: " " * len(m.group(0)), text)


def _qualified(text: str, pos: int) -> tuple[int, str] | None:
    """(start, "owner/name") written right before `pos` (as in `owner/name#12`), when it is not part of a path."""
    m = _OWNER_REPO_TAIL.search(text, max(0, pos - 140), pos)
    if m is None or m.group(1).lower() in GITHUB_NOT_OWNERS:
        return None
    return m.start(), f"{m.group(1).lower()}/{_repo_name(m.group(2)).lower()}"


def _entities(unfenced: str) -> list[EntityRef]:
    found: list[tuple[int, str, str, str]] = []  # (pos, kind, uri, text)
    if "ithub.com" in unfenced or "itHub.com" in unfenced:
        for m in _GH_URL.finditer(unfenced):
            prefix = _GH_PREFIX.search(unfenced, max(0, m.start() - 12), m.start())
            if prefix is None:
                continue  # docs.github.com, gist.github.com, a longer word
            written = unfenced[prefix.start() : m.end()].rstrip(".,;:!?*_'\"")
            for kind, uri in _github_url(m):
                found.append((prefix.start(), kind, uri, written))
    rest = _blank_urls(unfenced)  # addresses are read above, or not at all
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
    if b"hhhhhhh" in rest.encode("utf-8", "surrogatepass").translate(_HEX_RUNS):  # a 7-long hex run exists
        for m in _SHA.finditer(rest):
            if _is_sha(m.group(0)):
                found.append((m.start(), "commit", f"commit:{m.group(0)}", m.group(0)))
    if not found:
        return []
    found.sort(key=lambda f: f[0])
    starts = _line_starts(unfenced)
    seen: set[tuple[str, int]] = set()
    out: list[EntityRef] = []
    for pos, kind, uri, written in found:
        line = bisect_right(starts, pos)
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
_PAREN = re.compile(r"\(\s*([^()\n]{2,120}?)\s*\)")
_ACR_ONLY = re.compile(_ACR + r"(?=s?\Z)")  # Expansion (ACR)
_ACR_TAIL = re.compile(r"(?<![\w-])(" + _ACR + r")s?\s*\Z")  # ACR (expansion)
_EXPANSION_WORDS = re.compile(r"[A-Za-z][A-Za-z' -]*\Z")
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")
_INNER_CAP = re.compile(r"[a-z][A-Z]")
_CAMEL_SEED = re.compile(r"[A-Z](?<=[a-z0-9][A-Z])|[A-Z](?=[a-z]{2})(?<=[A-Z]{3})")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_SNAKE = re.compile(r"(?<![A-Za-z0-9_])_*([A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+)_*(?![A-Za-z0-9_])")
_KEBAB = re.compile(r"(?<![\w-])-{0,2}([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+)(?![\w-])")
_EXPANSION_END = re.compile(r"[.;:!?()\[\]{}\"]")
MAX_PARTS = 8


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
        inside = m.group(1)
        acr = _ACR_ONLY.match(inside)
        if acr:  # Expansion Words (EW): the shortest run of words before the parenthesis that spells it
            acronym = acr.group(0)
            before = prose[max(0, m.start() - 200) : m.start()]
            cut = max(before.rfind("\n"), max((e.end() for e in _EXPANSION_END.finditer(before)), default=-1))
            words = [w for piece in before[cut + 1 :].replace("-", " ").split() for w in _WORD.findall(piece)]
            for start in range(len(words) - 1, max(-1, len(words) - 2 * len(acronym) - 2), -1):
                if words[start].lower() not in _STOP and _spells(words[start:], acronym):
                    pairs.append((acronym, _expansion(words[start:])))
                    break
        elif _EXPANSION_WORDS.match(inside):  # EW (expansion words)
            tail = _ACR_TAIL.search(prose, max(0, m.start() - 14), m.start())
            if tail:
                acronym = tail.group(1)
                words = _WORD.findall(inside.replace("-", " "))
                if 2 <= len(words) <= 2 * len(acronym) + 2 and _spells(words, acronym):
                    pairs.append((acronym, _expansion(words)))
    return pairs


def _identifier_words(token: str) -> str | None:
    parts: list[str] = []
    for piece in re.split(r"[_-]+", token):
        if not piece:
            continue
        parts.extend(_HUMP.findall(piece) if _INNER_CAP.search(piece) or piece[:1].isupper() else [piece])
    if not 2 <= len(parts) <= MAX_PARTS:
        return None
    if sum(1 for p in parts if p[:1].isalpha()) < 2 or any(len(p) < 2 and p.isalpha() for p in parts):
        return None
    return " ".join(p.lower() for p in parts)


def derived_aliases(title: str, text: str, limit: int = 20) -> list[str]:
    """Aliases a note's own words support: acronyms whose expansion really spells them (both forms), and
    compound identifiers as words. Sorted (acronym pairs, then by uses, then alphabetically), then cut."""
    _unfenced, prose, code = split_code(text)
    return _aliases(title, prose, code, limit)


def _count(counts: dict[str, int], token: str, pascal_parts: int) -> None:
    words = _identifier_words(token)
    if words and (not token[0].isupper() or words.count(" ") + 1 >= pascal_parts):
        counts[words] = counts.get(words, 0) + 1


def _identifiers(text: str, counts: dict[str, int], *, code: bool) -> None:
    """Count the compound identifiers in `text`. snake_case and camelCase anywhere; PascalCase in prose only
    from three parts (two-part ones there are mostly names: GitHub, JavaScript, YouTube); kebab-case in code."""
    text = _blank_urls(text)
    if "_" in text:
        for line in text.split("\n"):
            if "_" in line:
                for m in _SNAKE.finditer(line):
                    _count(counts, m.group(1), 2)
    pascal_parts = 2 if code else 3
    last = -1
    for m in _CAMEL_SEED.finditer(text):
        a = m.start()
        if a < last:
            continue  # another hump of the identifier just counted
        while a and text[a - 1] in _ALNUM:
            a -= 1
        run = _ALNUM_RUN.match(text, a)
        if run is None:
            continue
        last = run.end()
        if (a and text[a - 1] == "_") or text[last : last + 1] == "_" or not text[a].isalpha():
            continue  # part of a snake_case identifier, or starts with a digit
        _count(counts, run.group(0), pascal_parts)
    if code and "-" in text:
        for line in text.split("\n"):
            if "-" in line:
                for m in _KEBAB.finditer(line):
                    _count(counts, m.group(1), 2)


def _aliases(title: str, prose: str, code: list[str], limit: int) -> list[str]:
    prose = title + "\n" + prose
    acronym_forms: dict[str, str] = {}
    for acronym, expansion in _acronyms(prose):
        for form in (acronym, expansion):
            acronym_forms.setdefault(form.casefold(), form)
    counts: dict[str, int] = {}
    _identifiers(prose, counts, code=False)
    for chunk in code:
        _identifiers(chunk, counts, code=True)
    ranked = sorted(acronym_forms.values(), key=str.casefold)
    ranked += sorted((w for w in counts if w.casefold() not in acronym_forms), key=lambda w: (-counts[w], w))
    return ranked[:limit]


# -- one pass for the note model -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Structure:
    links: tuple[Link, ...]
    entities: tuple[EntityRef, ...]
    derived_aliases: tuple[str, ...]


def read_structure(
    title: str, text: str, *, line_offset: int = 0, dendron_reverse: bool = False, alias_limit: int = 20
) -> Structure:
    """Links, entity references and derived aliases of a note body, splitting out its code once.
    `line_offset` is added to every line number (the body's 0-based first line within its file)."""
    unfenced, prose, code = split_code(text)
    links = _links(prose, dendron_reverse) if "[" in prose else []
    entities = _entities(unfenced)
    if line_offset:
        links = [replace(link, line=link.line + line_offset) for link in links]
        entities = [replace(ref, line=ref.line + line_offset) for ref in entities]
    aliases = _aliases(title, prose, code, alias_limit)
    return Structure(tuple(links), tuple(entities), tuple(aliases))
