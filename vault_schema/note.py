"""The note model: one Markdown file parsed into an immutable value the index and the rules read."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from agentmd.vocabulary import MONTHS

from .entities import EntityRef, entity_uri, extract_entities
from .errors import YamlRefused
from .frontmatter import load_yaml, split_frontmatter
from .links import Link, extract_links, read_structure
from .markdown import inline_tags

PROGRESS_HEAD_BYTES = 88_192
_PROGRESS = re.compile(r"^progress(?:-[a-z0-9][a-z0-9-]*)?\.md$", re.IGNORECASE)
_STEM_SPACERS = str.maketrans({"-": " ", "_": " ", ".": " "})
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?$")

# A whole date in a note's file name or title: 2024-11-04 (or with _ or .), "29th Jan, 2025", "January 29, 2025"
_MONTH_NAME = "|".join(f"{m[:3]}(?:{m[3:]})?" if len(m) > 3 else m for m in MONTHS) + "|sept"
_TITLE_DATES = (
    re.compile(r"(?<![A-Za-z0-9])(?<!\d\.)(?P<y>(?:19|20)\d\d)([-_.])(?P<m>[01]\d)\2(?P<d>[0-3]\d)(?![\d])"),
    re.compile(
        rf"(?i)(?<![\w])(?P<d>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MONTH_NAME})\.?,?\s+(?P<y>(?:19|20)\d\d)(?!\d)"
    ),
    re.compile(
        rf"(?i)(?<![\w])(?P<mon>{_MONTH_NAME})\.?\s+(?P<d>[0-3]?\d)(?:st|nd|rd|th)?,?\s+(?P<y>(?:19|20)\d\d)(?!\d)"
    ),
)

# A type, project or space as a note's frontmatter names it: a kebab-case slug (`billing-api`)
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

WALLS = ("archived", "superseded", "staged")
CONFLICT_STATUS = "conflict"  # a version a sync or an undo kept beside its note, until a person ends it
ENTITY_KEY = "entity"  # frontmatter key marking a note as the page for an entity: `entity: repo:owner/name`
LINK_CONVENTIONS = ("obsidian", "dendron")  # `[[note|Label]]` or Dendron's `[[Label|note]]`
DERIVED_ALIAS_LIMIT = 20


@dataclass(frozen=True, slots=True)
class Note:
    """A parsed note. `body` is what the index searches: the frontmatter's text, then the Markdown body."""

    path: str  # vault-relative, POSIX separators
    title: str  # display title: frontmatter `title`, else the spaced file stem
    title_terms: str  # what the title field indexes: frontmatter title plus the spaced stem
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    body: str
    text: str  # the Markdown body alone, without frontmatter
    frontmatter: Mapping[str, Any]
    frontmatter_error: str | None
    decode_error: bool  # the bytes were not valid UTF-8 and were decoded with replacement characters
    truncated: bool  # a progress log cut to its head
    captured: str  # ISO 8601 date or date-time
    captured_source: str  # "captured", "date", "created", "title" or "mtime" (the index may set "git")
    status: str | None = None
    lifecycle: str | None = None
    type: str | None = None
    project: str | None = None
    superseded_by: str | None = None
    content_hash: str = ""
    size: int = 0
    body_line: int = 0  # 0-based line of the body's first line within the file
    links: tuple[Link, ...] = ()  # line numbers are 1-based within the file (frontmatter links included)
    entities: tuple[EntityRef, ...] = ()
    entity_page: str | None = None  # the entity URI this note is the page for (frontmatter `entity:`)
    derived_aliases: tuple[str, ...] = ()  # read from the note's own words (vault_schema.aliases)

    @property
    def meta(self) -> str:
        """Aliases, tags (nested tags and kebab names spaced out) and derived aliases as searchable text."""
        words = list(self.aliases) + [t.replace("/", " ").replace("-", " ") for t in self.tags]
        return "\n".join(words + list(self.derived_aliases))

    @property
    def wall(self) -> str | None:
        """The wall that hides this note from default searches, if any."""
        states = {(self.status or "").lower(), (self.lifecycle or "").lower()}
        if CONFLICT_STATUS in states:  # a conflict waits in plain sight, whatever the version it holds said
            return None
        if self.superseded_by or "superseded" in states:
            return "superseded"
        if "archived" in states:
            return "archived"
        if "staged" in states:
            return "staged"
        return None

    @property
    def captured_day(self) -> int:
        """`captured` as a yyyymmdd integer, for date-range filters."""
        return int(self.captured[:10].replace("-", ""))

    @property
    def trust(self) -> str | None:
        """The frontmatter `trust:` tier (`trusted` or `untrusted`, lower-cased), None when the note has none."""
        value = self.frontmatter.get("trust")
        return (value.strip().lower() or None) if isinstance(value, str) else None

    @property
    def is_probe(self) -> bool:
        """A note the daemon's self-probe wrote (frontmatter `probe: self-probe`): never recalled."""
        return self.frontmatter.get("probe") == "self-probe"

    @property
    def is_generated(self) -> bool:
        """A page agentmd derives from other notes (frontmatter `generated: agentmd ...`, e.g. a map of content):
        never recalled into a prompt, and its links are not anyone's use of a note."""
        value = self.frontmatter.get("generated")
        return isinstance(value, str) and value.startswith("agentmd")

    @property
    def flags(self) -> tuple[str, ...]:
        out = []
        if self.frontmatter_error:
            out.append("frontmatter_error")
        if self.decode_error:
            out.append("decode_error")
        if self.truncated:
            out.append("truncated")
        if self.is_probe:
            out.append("probe")
        if self.trust == "untrusted":
            out.append("untrusted")
        if self.is_generated:
            out.append("generated")
        return tuple(out)


def is_progress_log(path: str) -> bool:
    return bool(_PROGRESS.match(path.rsplit("/", 1)[-1]))


def spaced_stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    stem = name[:-3] if name.lower().endswith(".md") else name
    return " ".join(stem.translate(_STEM_SPACERS).split())


# a count of seconds or milliseconds since 1970 reads as a moment only between these years: Dendron writes
# `created: 1636492098692`; a smaller or larger number is an id, a size or a version
_EPOCH_YEARS = (2000, 2100)


def _epoch(value: int) -> str | None:
    for seconds in (value / 1000, float(value)) if value >= 10**12 else (float(value),):
        try:
            moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
        except (OverflowError, OSError, ValueError):
            continue
        if _EPOCH_YEARS[0] <= moment.year < _EPOCH_YEARS[1]:
            return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
    return None


def parse_date(value: Any) -> str | None:
    """An ISO date or date-time string from a frontmatter value, or None when it is not a date. A whole number of
    ten or thirteen digits is read as seconds or milliseconds since 1970 (UTC)."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, int) and not isinstance(value, bool):
        return _epoch(value) if len(str(value)) in (10, 13) else None
    if not isinstance(value, str):
        return None
    m = _DATE.match(value.strip())
    if not m:
        return None
    y, mo, d, hh, mm, ss, tz = m.groups()
    try:
        dt.date(int(y), int(mo), int(d))
        if hh is None:
            return f"{y}-{mo}-{d}"
        stamp = dt.datetime(int(y), int(mo), int(d), int(hh), int(mm), int(ss or 0))
    except ValueError:
        return None
    iso = stamp.isoformat()
    if tz:
        iso += "Z" if tz == "Z" else (tz if ":" in tz else tz[:3] + ":" + tz[3:])
    return iso


def title_date(title: str, written: str) -> str | None:
    """The one whole date a note's file name or title gives (`2024-11-04.md`, "Entry of 29th Jan, 2025"), as
    `YYYY-MM-DD`, or None. Not when the title gives two different dates, nor a date after the day the file was
    last written (`written`, an ISO date): such a date is a plan or a deadline, not when the note was written."""
    found: set[str] = set()
    for pattern in _TITLE_DATES:
        for m in pattern.finditer(title):
            month = int(m["m"]) if "m" in pattern.groupindex else _month_number(m["mon"])
            try:
                found.add(dt.date(int(m["y"]), month, int(m["d"])).isoformat())
            except ValueError:
                continue
    if len(found) != 1:
        return None
    (day,) = found
    return day if day <= written[:10] else None


def _month_number(name: str) -> int:
    low = name.lower()
    return 9 if low == "sept" else next(i for i, m in enumerate(MONTHS, 1) if m.startswith(low[:3]))


def mtime_iso(mtime_ns: int) -> str:
    stamp = dt.datetime.fromtimestamp(mtime_ns / 1e9, tz=dt.UTC).replace(microsecond=0)
    return stamp.isoformat().replace("+00:00", "Z")


def _text_list(value: Any) -> list[str]:
    """Tags/aliases as a list of strings, whether written as a list, a comma list or one word."""
    if value is None:
        return []
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")] if "," in value else [value.strip()]
        return [p for p in parts if p]
    if isinstance(value, list):
        out: list[str] = []
        for v in value:
            out.extend(_text_list(v) if isinstance(v, list) else ([str(v).strip()] if v is not None else []))
        return [v for v in out if v]
    return [str(value)]


def _scalar(value: Any) -> str | None:
    """A frontmatter field as one string. `[[Note]]` written unquoted (a nested list) becomes `Note`."""
    wikilink = isinstance(value, list) and bool(value) and isinstance(value[0], list)  # [[Note|alias]] unquoted
    while isinstance(value, list) and value:
        value = value[0]
    if value is None or isinstance(value, list | dict):
        return None
    text = str(value).strip()
    if text.startswith("[[") and text.endswith("]]"):
        text, wikilink = text[2:-2], True
    if wikilink:
        text = text.split("|", 1)[0].strip()
    return text or None


def _tag_list(value: Any) -> list[str]:
    out = []
    for raw in _text_list(value):
        for word in raw.split() if " " in raw else [raw]:
            tag = word.lstrip("#").strip()
            if tag:
                out.append(tag)
    return out


def decode(data: bytes) -> tuple[str, bool]:
    """UTF-8 text and whether replacement was needed."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), True


def parse_note(path: str, data: bytes, mtime_ns: int, *, link_convention: str = "obsidian") -> Note:
    """Parse one note. Never raises on content: problems are recorded on the note instead.

    `link_convention` is "obsidian" (`[[note|Label]]`) or "dendron" (`[[Label|note]]`), a per-vault setting.
    """
    content_hash = hashlib.blake2b(data, digest_size=16).hexdigest()
    size = len(data)
    truncated = False
    if is_progress_log(path) and len(data) > PROGRESS_HEAD_BYTES:
        head = data[:PROGRESS_HEAD_BYTES]
        cut = head.rfind(b"\n")
        if cut < 0:  # no line break: cut back to a character boundary instead
            cut = PROGRESS_HEAD_BYTES
            while cut > PROGRESS_HEAD_BYTES - 3 and data[cut] & 0xC0 == 0x80:
                cut -= 1
            cut -= 1
        data = head[: cut + 1]
        truncated = True
    text, decode_error = decode(data)
    split = split_frontmatter(text)
    fm: dict[str, object] = {}
    fm_error: str | None = None
    if split.yaml_text is not None:
        try:
            fm = load_yaml(split.yaml_text, first_line=2)  # line 1 is the opening fence
        except YamlRefused as exc:
            fm_error = str(exc)

    stem = spaced_stem(path)
    fm_title = _scalar(fm.get("title"))
    title = fm_title or stem
    title_terms = stem if not fm_title or fm_title.lower() == stem.lower() else f"{fm_title}\n{stem}"

    structure = read_structure(
        title,
        split.body,
        line_offset=split.body_line,
        dendron_reverse=link_convention == "dendron",
        alias_limit=DERIVED_ALIAS_LIMIT,
    )
    aliases = _text_list(fm.get("aliases", fm.get("alias")))
    # frontmatter tags first, then inline ones, each once, in first-seen order (a dict keeps it linear: a
    # list membership test here made a 60,000-tag note take half a minute)
    tags = list(
        dict.fromkeys([*_tag_list(fm.get("tags", fm.get("tag"))), *inline_tags(structure.prose)])
    )  # code already blanked in the prose: the scan inside finds none to blank

    captured, source = None, "mtime"
    for key in ("captured", "date", "created"):  # `created`: what many Obsidian templates write
        captured = parse_date(fm.get(key))
        if captured:
            source = key
            break
    if not captured:
        captured = mtime_iso(mtime_ns)
        named = title_date(f"{path.rsplit('/', 1)[-1]}\n{fm_title or ''}", captured)
        if named:  # a daily note or a journal entry: the day it names, not the day it was last saved
            captured, source = named, "title"

    links, entities = structure.links, structure.entities
    yaml_text = split.yaml_text or ""
    if "[[" in yaml_text or "](" in yaml_text:  # links in properties (`related: "[[Note]]"`); line 1 is the fence
        fm_links = extract_links(yaml_text, dendron_reverse=link_convention == "dendron")
        links = tuple(replace(link, line=link.line + 1) for link in fm_links) + links
    if "/" in yaml_text:  # addresses and owner/name references; a bare hex value there is a fingerprint
        fm_refs = [r for r in extract_entities(yaml_text) if r.kind != "commit" or "/" in r.text]
        entities = tuple(replace(r, line=r.line + 1) for r in fm_refs) + entities
    known = {a.casefold() for a in aliases}
    derived = tuple(a for a in structure.derived_aliases if a.casefold() not in known)

    body = split.body if split.yaml_text is None else split.yaml_text + "\n" + split.body
    return Note(
        path=path,
        title=title,
        title_terms=title_terms,
        aliases=tuple(dict.fromkeys(aliases)),
        tags=tuple(tags),
        body=body,
        text=split.body,
        frontmatter=MappingProxyType(fm),
        frontmatter_error=fm_error,
        decode_error=decode_error,
        truncated=truncated,
        captured=captured,
        captured_source=source,
        status=_scalar(fm.get("status")),
        lifecycle=_scalar(fm.get("lifecycle")),
        type=_scalar(fm.get("type")),
        project=_scalar(fm.get("project")),
        superseded_by=_scalar(fm.get("superseded_by")),
        content_hash=content_hash,
        size=size,
        body_line=split.body_line,
        links=links,
        entities=entities,
        entity_page=entity_uri(fm.get(ENTITY_KEY)),
        derived_aliases=derived,
    )
