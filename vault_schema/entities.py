"""Entity references read from a note's text: repositories, issues, releases and commits.

Like the link passes (see `links.py`), this runs on every note at index time and is built on regular expressions
that open with a literal or a rare character, gated by cheap `in` and byte-translation tests.

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
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from .markdown import split_code

ENTITY_KINDS = ("repo", "issue", "release", "commit")


@dataclass(frozen=True, slots=True)
class EntityRef:
    uri: str  # repo:owner/name, issue:owner/name#12, release:owner/name@v1.2.3, commit:<sha>
    kind: str  # the URI's scheme
    text: str  # as written
    line: int  # 1-based, like Link.line

    def __reduce__(self) -> tuple[type[EntityRef], tuple[Any, ...]]:
        # pickled as its fields, like Link
        return EntityRef, tuple(getattr(self, name) for name in self.__slots__)


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
    return read_entities(split_code(text).unfenced)


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def blank_urls(text: str, *, www: bool = True) -> str:
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


def read_entities(unfenced: str, first_line: int = 1) -> list[EntityRef]:
    """Entity references in text whose fenced code is already blanked; lines count from `first_line`."""
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
    rest = blank_urls(unfenced, www=False)  # addresses are read above, or not at all
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
    refs = read_entities(text)
    uris = [r.uri for r in refs if r.kind != "repo"]
    named = {r.uri for r in refs}
    uris += [r.uri for r in refs if r.kind == "repo"]
    for m in _QUERY_REPO.finditer(_URL.sub(" ", text)):
        uri = f"repo:{m.group(1).lower()}/{_repo_name(m.group(2)).lower()}"
        if uri not in named and m.group(1).lower() not in GITHUB_NOT_OWNERS:
            named.add(uri)
            uris.append(uri)
    return list(dict.fromkeys(uris))
