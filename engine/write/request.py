"""The capture request: its fields and their checks, and what a capture derives from them before it goes
near the vault (engine/write/capture.py runs the whole capture).

`validate` checks the fields' shape (the content prefilters run after it, in the capturer); `stamp_fields`
derives the note's frontmatter, the status and stamps included (status is never taken from the caller);
`route` names the folder the note is filed in (a named space, else the contract's route by type).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypedDict

from agentmd.engine.errors import AgentmdError, UsageError
from agentmd.engine.request_fields import described, missing_fields, over_length
from agentmd.vault_schema import SLUG

if TYPE_CHECKING:
    from agentmd.rules import ContractState
    from agentmd.rules.prefilter import Verdict

MAX_TITLE = 200
MAX_TITLE_CHARS = MAX_TITLE  # the bound the capture tool's schema publishes: the one a capture applies
MAX_BODY_BYTES = 512 * 1024
MAX_LIST = 50
MAX_SLUG_CHARS = 100  # a project slug's length a request may give
# The other text fields' bounds: together, with fifty entries in each list, the frontmatter stays well under the
# 64 KiB the vault's reader takes (`vault_schema`), so a capture is never written as a note that cannot be read.
MAX_LINE_CHARS = 1_000  # summary, task
MAX_WHY_CHARS = 2_000
MAX_URL_CHARS = 2_048
MAX_TAG_CHARS = 100
MEMORY_SPACE = "memory"
IMPORTANCE_WORDS = {"minimal": 1, "low": 2, "medium": 3, "high": 4, "critical": 5}


class CaptureRefused(AgentmdError):
    """A capture was refused; `code` names the rule, the message says what to change."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def refusal(verdict: Verdict) -> str:
    """A prefilter refusal as a client reads it: every reason with its fields, then what the first finding
    was and how to fix it (the others are of the same kind or listed in the reasons)."""
    first = verdict.findings[0]
    more = len(verdict.findings) - 1
    rest = f" ({more} more finding{'s' if more > 1 else ''} of the reasons above)" if more else ""
    return f"{verdict.reason()}. In {first.field}: {first.message}{rest}"


def _about(description: str, **schema: object) -> Any:
    return field(default=None, metadata=described(description, **schema))


def _words(description: str, longest: int) -> Any:
    return field(
        default=(),
        metadata=described(
            description, maxItems=MAX_LIST, items={"type": "string", "minLength": 1, "maxLength": longest}
        ),
    )


@dataclass(frozen=True)
class CaptureRequest:
    """One capture, as the MCP tool, the `/v1/capture` route and the CLI take it (engine/request_fields.py
    derives the tool's input schema and the route's field checks from these fields)."""

    title: str = field(
        metadata=described(
            "One line saying what the note is about; it names the file.", minLength=1, maxLength=MAX_TITLE_CHARS
        )
    )
    body: str = field(
        default="",
        metadata=described(
            "The note's Markdown body: the fact, decision or lesson itself, with its context (at most 512 KiB).",
            maxLength=MAX_BODY_BYTES,
        ),
    )
    type: str | None = _about(
        "The kind of memory, in kebab-case as the vault's contract names it: decision, convention, lesson, "
        "fact, procedure, reference... With `why`, files the note as active; without, it waits unfiled.",
        maxLength=MAX_SLUG_CHARS,
    )
    summary: str | None = _about("One sentence summing the note up.", maxLength=MAX_LINE_CHARS)
    why: str | None = _about(
        "Why this is worth keeping; with `type`, files the note as active.", maxLength=MAX_WHY_CHARS
    )
    # a word (low, high...) is taken from the CLI and the JSON route; the tool publishes the number
    importance: int | str | None = _about("1 (record) to 5 (vital).", type="integer", minimum=1, maximum=5)
    related: tuple[str, ...] = _words("Names of existing notes to link from this one.", MAX_TITLE_CHARS * 2)
    project: str | None = _about("The project slug this belongs to.", maxLength=MAX_SLUG_CHARS)
    task: str | None = _about("The task this came from.", maxLength=MAX_LINE_CHARS)
    tags: tuple[str, ...] = _words("Tags, without the leading #.", MAX_TAG_CHARS)
    aliases: tuple[str, ...] = _words("Other names the note should be found by.", MAX_TITLE_CHARS)
    source: str | None = _about(
        "Where this came from, as one of the contract's source tags (e.g. conversation).", maxLength=MAX_SLUG_CHARS
    )
    source_url: str | None = _about(
        "The URL it came from; notes with one are marked untrusted.", maxLength=MAX_URL_CHARS
    )
    space: str | None = _about(
        "A contract space other than memory (e.g. projects); the default is memory.", maxLength=MAX_SLUG_CHARS
    )
    supersedes: str | None = _about(
        "The path or exact title of an earlier note this one corrects or replaces: that note is marked superseded "
        "and leaves search and recall (it stays in the vault and in git).",
        maxLength=MAX_TITLE_CHARS * 4,
    )
    instructions: str | None = None  # CLI only: the operator's own instructions, kept on the note

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> CaptureRequest:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError(f"unknown capture field(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        missing = missing_fields(cls, data)
        if missing:
            raise UsageError(
                f"a capture needs {' and '.join(f'`{m}`' for m in missing)}: one line saying what the note is about"
            )
        values = dict(data)
        for key in ("related", "tags", "aliases"):
            if key in values and values[key] is not None:
                v = values[key]
                values[key] = tuple(x.strip() for x in (v.split(",") if isinstance(v, str) else v) if str(x).strip())
        return cls(**values)


class CaptureAnswer(TypedDict):
    """A capture's answer as `/v1/capture`, the `memory_capture` tool and `agentmd capture --json` give it."""

    path: str
    status: str
    stamps: dict[str, object]
    warnings: list[str]
    indexed: bool
    reinforced: bool
    note: str | None


@dataclass
class CaptureResult:
    path: str
    status: str
    stamps: dict[str, object]
    warnings: list[str] = field(default_factory=list)
    indexed: bool = False
    reinforced: bool = False
    note: str | None = None

    def to_dict(self) -> CaptureAnswer:
        return {
            "path": self.path,
            "status": self.status,
            "stamps": self.stamps,
            "warnings": self.warnings,
            "indexed": self.indexed,
            "reinforced": self.reinforced,
            "note": self.note,
        }


def slugify(title: str, limit: int = 80) -> str:
    """A file-name slug: lower case, letters and digits of any script (with the marks that belong to them: an
    Indic vowel sign, a combining accent), words joined by hyphens."""
    text = unicodedata.normalize("NFKC", title).lower()
    kept = "".join(
        ch if ch.isalnum() or (unicodedata.category(ch) in ("Mn", "Mc") and i and text[i - 1] != " ") else " "
        for i, ch in enumerate(text)
    )
    words = re.findall(r"[^\W_][^\s_]*", kept)
    slug = "-".join(words)
    if len(slug.encode("utf-8")) > limit:
        cut = slug.encode("utf-8")[:limit].decode("utf-8", "ignore")
        slug = cut.rsplit("-", 1)[0] if "-" in cut else cut
    slug = slug.strip("-") or "note"
    from agentmd.rules import reserved_name

    return f"{slug}-note" if reserved_name(slug) else slug  # `CON` would be a device on Windows: `con-note.md`


def _importance(value: int | str | None) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in IMPORTANCE_WORDS:
            return IMPORTANCE_WORDS[word]
        try:
            value = int(word)
        except ValueError:
            raise CaptureRefused(
                "invalid-importance", f"importance {value!r} is not 1-5 (or low/medium/high/critical)"
            ) from None
    if isinstance(value, bool) or not 1 <= int(value) <= 5:
        raise CaptureRefused("invalid-importance", f"importance {value!r} is out of range; use 1 (record) to 5 (vital)")
    return int(value)


def validate(req: CaptureRequest) -> None:
    if not isinstance(req.title, str) or not req.title.strip():
        raise CaptureRefused("missing-title", "a capture needs a title: one line saying what the note is about")
    if len(req.title) > MAX_TITLE or "\n" in req.title.strip():
        raise CaptureRefused("invalid-title", f"the title must be one line of at most {MAX_TITLE} characters")
    control = next((c for c in req.title.strip() if unicodedata.category(c) == "Cc"), None)
    if control is not None:  # a terminal escape or a NUL in a title would reach every listing of the note
        raise CaptureRefused(
            "invalid-title", f"the title holds a control character (U+{ord(control):04X}); take it out and try again"
        )
    if not isinstance(req.body, str):
        raise CaptureRefused("invalid-body", "the body must be text")
    if len(req.body.encode("utf-8", "surrogatepass")) > MAX_BODY_BYTES:
        raise CaptureRefused(
            "body-too-large", f"the body is over {MAX_BODY_BYTES // 1024} KiB; split it into smaller notes"
        )
    if req.type is not None and not SLUG.match(req.type):
        raise CaptureRefused("invalid-type", f"type {req.type!r} must be kebab-case, e.g. decision or how-to")
    for name in ("related", "tags", "aliases"):
        items = getattr(req, name)
        if len(items) > MAX_LIST:
            raise CaptureRefused("too-many-items", f"{name} has {len(items)} entries; keep it to {MAX_LIST}")
        if any(not isinstance(x, str) or "\n" in x for x in items):
            raise CaptureRefused("invalid-list", f"each entry of {name} must be one line of text")
    bad_tag = next((t for t in req.tags if not _TAG.fullmatch(tag_of(t))), None)
    if bad_tag is not None:
        raise CaptureRefused(
            "invalid-tag",
            f"tag {bad_tag!r} is not one Obsidian reads: use letters, digits, -, _ and / (not digits alone), "
            "without the leading #; nothing was written",
        )
    bad_link = next((r for r in req.related if not _RELATED.fullmatch(r.strip())), None)
    if bad_link is not None:
        raise CaptureRefused(
            "invalid-related",
            f"related entry {bad_link!r} is not a note's name: give a title or path (without [, ], | or #), or one "
            "[[link]]; nothing was written",
        )
    for name in ("summary", "why", "project", "task", "source", "source_url", "space", "instructions", "supersedes"):
        value = getattr(req, name)
        if value is not None and not isinstance(value, str):
            raise CaptureRefused("invalid-field", f"{name} must be text")
    if isinstance(req.supersedes, str) and len(req.supersedes) > MAX_TITLE_CHARS * 4:
        raise CaptureRefused(
            "invalid-field",
            f"supersedes is {len(req.supersedes)} characters long; give the path or title of one note "
            f"(at most {MAX_TITLE_CHARS * 4} characters); nothing was written",
        )
    too_long = over_length(req)
    if too_long:
        raise CaptureRefused("field-too-long", f"{too_long}; shorten it (nothing was written)")
    if req.source_url and _SCRIPT_ADDRESS.match(req.source_url):
        raise CaptureRefused(
            "invalid-source-url",
            f"source_url {req.source_url[:80]!r} is a script or inline data, not where the note came from; give "
            "the page's http:// or https:// address (or leave it out)",
        )
    if req.project is not None and len(req.project) > MAX_SLUG_CHARS:
        raise CaptureRefused("invalid-project", f"the project slug is over {MAX_SLUG_CHARS} characters; shorten it")
    if req.project is not None and not SLUG.match(req.project):
        raise CaptureRefused(
            "invalid-project", f"project {req.project!r} must be the project's kebab-case slug, e.g. `billing-api`"
        )


# A tag as Obsidian reads one: letters (any script), digits, `_`, `-` and `/`, not digits alone.
_TAG = re.compile(r"(?=.*[^\d/])[\w\-/]+")
# A related note: a name or path (no link syntax of its own), or one whole `[[link]]` (an alias or heading kept).
_RELATED = re.compile(r"[^\[\]|#\n]+|\[\[[^\[\]\n]+\]\]")


def tag_of(given: str) -> str:
    """A tag as written in the frontmatter: without a leading `#`, spaces inside turned into `-`."""
    return re.sub(r"\s+", "-", given.strip().lstrip("#"))


# an address that runs code or carries its content when opened (a link a person may click in a rendered note)
_SCRIPT_ADDRESS = re.compile(r"(?i)\s*(?:javascript|vbscript|data|livescript)\s*:")


# A note in the shape agents write (prose addressed to a reader, a link, a URL, a comment, a code fence,
# letters of several scripts): reading it once builds every rule set the content prefilters compile on first
# use, so the first captures after a start do not compile them, each on its own, while they are timed.
WARM_UP = CaptureRequest(
    title="Warm-up: how the capture path reads a note",
    type="decision",
    why="read once at start-up",
    body=(
        "We decided to keep the cache.\n\nYou should run the tests first; the AI assistant reads this later.\n\n"
        "- see [[another note]] and https://example.org/a?b=c\n<!-- a comment -->\n\n```python\nprint('x')\n```\n\n"
        "From now on the team reviews every change. Café, naïve, 東京, Привет.\n"
    ),
)


def stamp_fields(
    req: CaptureRequest, state: ContractState, now: dt.datetime, extra: Mapping[str, object]
) -> dict[str, object]:
    """The note's frontmatter fields: the request's, with the status and stamps a capture derives, then `extra`."""
    contract = state.contract
    typed = bool(req.type)
    status = "active" if typed and (req.why or "").strip() else "unfiled"
    trust = contract.trust(req.source_url or req.source)
    if req.source_url and trust == "trusted":
        trust = "untrusted"
    fields: dict[str, object] = {
        "title": req.title.strip(),
        "type": req.type,
        "status": status,
        "lifecycle": contract.default_lifecycle,
        "filing_confidence": "high" if typed else "low",
        "trust": trust,
        "captured": now.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "source": req.source,
        "source_url": req.source_url,
        "project": req.project,
        "task": req.task,
        "importance": _importance(req.importance),
        "summary": req.summary,
        "why": req.why,
        "tags": [tag_of(t) for t in req.tags] or None,
        "aliases": list(req.aliases) or None,
        "related": [r if r.startswith("[[") else f"[[{r}]]" for r in req.related] or None,
        "instructions": req.instructions,
    }
    fields.update(extra)
    return fields


def retype(req: CaptureRequest, state: ContractState) -> tuple[CaptureRequest, list[str]]:
    """A request naming a type the contract retires (`deprecations`), retyped as its replacement, and the
    warning the reply carries; any other request as it is, with no warning."""
    if not req.type or state.halted:
        return req, []
    current = state.contract.current_type(req.type)
    if current == req.type:
        return req, []
    warning = (
        f"type {req.type!r} is retired by the storage-rules contract ({state.source}, `deprecations`); the note "
        f"was filed as {current!r}, its replacement"
    )
    return replace(req, type=current), [warning]


def route(req: CaptureRequest, state: ContractState, now: dt.datetime) -> tuple[str, str]:
    """The folder a note of this request is filed in, and why (a named space, else the contract's route)."""
    if req.space and req.space != MEMORY_SPACE:
        spaces = state.contract.spaces
        if req.space not in spaces:
            raise CaptureRefused(
                "unknown-space", f"space {req.space!r} is not in the contract; use one of: {', '.join(spaces)}"
            )
        return str(spaces[req.space]), f"space:{req.space}"
    return state.route(req.type, now.date())


def request_from_cli(values: Mapping[str, Any]) -> CaptureRequest:
    data = {k: v for k, v in values.items() if v is not None}
    return CaptureRequest.from_mapping(data)


def result_json(result: CaptureResult) -> str:
    return json.dumps(result.to_dict(), ensure_ascii=False)


def field_names() -> Sequence[str]:
    return list(CaptureRequest.__dataclass_fields__)
