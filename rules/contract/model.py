"""The storage-rules contract as values: the keys a contract file may set, their vocabularies, and the
validated `Contract` and `ContractState` that answer routing, trust, space and ranking questions.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, NotRequired, TypedDict

from agentmd import vault_schema
from agentmd.rules.contract.synctool import NO_PATTERNS, SyncToolPatterns

TRUST_TIERS: Final = ("trusted", "untrusted")
AUTHORITY_LEVELS: Final = ("standing", "shared", "alignment", "private")
SELF_SOURCE: Final = "self"  # the `sources` entry used for a capture that names no source
SHARD_PLACEHOLDERS: Final = ("yyyy", "mm", "dd")
RULE_TYPES: Final = frozenset({"rule", "convention", "preference"})  # the rules (see the default's Lifecycle)
STANDARDS_SPACE: Final = "standards"  # the operator's standards, the contract's own folder
THRESHOLD_NAMES: Final = (
    "low_confidence",
    "daily_write_cap",
    "daily_card_budget",
    "search_floor",
    "recall_floor",
    "dormant_after_days",
)
DORMANT_AFTER_DAYS: Final = 180  # the lifecycle policy's default quiet time before a note sinks to dormant
FLOOR_NAMES: Final = ("search_floor", "recall_floor")  # confidence floors (0..1) of search and the recall hook
CLASS_WEIGHT_NAMES: Final = (
    "unfiled",
    "untrusted",
    "fragment",
    "archived",
    "superseded",
    "staged",
    "dormant",
    "project_mismatch",
)
KNOWN_KEYS: Final = (
    "types",
    "deprecations",
    "lifecycle",
    "default_lifecycle",
    "sources",
    "facets",
    "record_kinds",
    "thresholds",
    "spaces",
    "shard",
    "phone_paths",
    "authority",
    "default_authority",
    "dampened_spaces",
    "recall_exempt_areas",
    "class_weights",
    "link_convention",
    "sync_tool_patterns",
    "capture_names",
)
LINK_CONVENTIONS: Final = ("obsidian", "dendron")
# How a capture's file is named: its title's slug, or the slug and this machine's tag (`<slug>-<tag>.md`)
# so two machines capturing one title make two files git merges without a conflict; `auto` tags the name
# while the vault's git has a remote, the title's slug alone otherwise.
CAPTURE_NAMES: Final = ("auto", "title", "machine")
# Keys whose entries fall back one by one when a vault file sets only some of them; every other key is
# replaced whole by a vault file that sets it.
PER_ENTRY_KEYS: Final = frozenset({"thresholds", "class_weights"})
SPACE_KEYED: Final = ("authority", "dampened_spaces")  # keys whose entries name spaces
# Obsidian note properties that may sit in a contract file's frontmatter without being settings.
NOTE_PROPERTIES: Final = frozenset(
    {"title", "tags", "aliases", "cssclasses", "created", "updated", "date", "description"}
)

_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:)?//")


# --------------------------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Thresholds:
    low_confidence: float  # filing_confidence below this is unsure (0..1)
    daily_write_cap: int  # captures per day in the memory space; 0 disables the cap
    daily_card_budget: int  # new cards per day before a warning (never refuses)
    search_floor: float = 0.0  # search returns no result whose confidence is below this (0..1)
    recall_floor: float = 0.0  # the prompt hook injects no note whose confidence is below this (0..1)
    dormant_after_days: int = DORMANT_AFTER_DAYS  # days unused before the lifecycle policy sinks a note; 0: never


@dataclass(frozen=True)
class Contract:
    """A validated storage-rules contract. Mappings are read-only views; sequences are tuples."""

    text: str  # the Markdown the settings came from
    types: Mapping[str, str]  # memory type -> class directory
    lifecycle: tuple[str, ...]
    default_lifecycle: str
    sources: Mapping[str, str]  # source tag -> "trusted" | "untrusted"
    facets: tuple[str, ...]
    record_kinds: tuple[str, ...]
    thresholds: Thresholds
    spaces: Mapping[str, str]  # space name -> top folder
    shard: str  # e.g. "memory/{yyyy}/{mm}"
    phone_paths: tuple[str, ...]
    authority: Mapping[str, str]  # space name -> door level
    default_authority: str
    dampened_spaces: Mapping[str, float]
    recall_exempt_areas: tuple[str, ...]
    class_weights: Mapping[str, float]
    link_convention: str  # "obsidian": [[target|label]]; "dendron": [[label|target]]
    fallback_text: str = ""  # the packaged default's Markdown, read for headings `text` lacks
    sync_tool_patterns: SyncToolPatterns = NO_PATTERNS  # file-sync tools' names added to engine/synctools.py's
    # a retired type -> the type that replaces it
    deprecations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    rules_hash: str = ""  # over the parsed settings (rules/contract/hashing.py)
    judgment_hash: str = ""  # over what an enrichment judgment reads: type names and deprecations
    capture_names: str = "auto"  # one of CAPTURE_NAMES

    def section(self, heading: str) -> str | None:
        """The prose under `heading` (case-insensitive); the packaged default's when this text lacks it."""
        found = vault_schema.section_text(self.text, heading)
        if found is None and self.fallback_text:
            found = vault_schema.section_text(self.fallback_text, heading)
        return found

    def current_type(self, type_: str) -> str:
        """The type a name stands for now: its replacement when `deprecations` retires it, else the name."""
        return self.deprecations.get(type_, type_)

    def class_dir(self, type_: str | None) -> str | None:
        """The class directory a type routes to (a retired type: its replacement's), or None for no type or a
        type the contract does not list."""
        if not type_:
            return None
        return self.types.get(self.current_type(type_))

    def shard_dir(self, when: dt.date) -> str:
        """The shard directory for a capture date, placeholders filled."""
        return (
            self.shard.replace("{yyyy}", f"{when.year:04d}")
            .replace("{mm}", f"{when.month:02d}")
            .replace("{dd}", f"{when.day:02d}")
        )

    def trust(self, source: str | None) -> str:
        """The trust tier of a source tag: URL-shaped and unlisted sources are untrusted.

        A capture without a source is looked up as `self`; it is trusted only when `sources` says so.
        """
        tag = (source or "").strip()
        if not tag:
            return self.sources.get(SELF_SOURCE, "untrusted")
        if is_url_shaped(tag):
            return "untrusted"
        return self.sources.get(tag.lower(), "untrusted")

    def space_of(self, path: str) -> str | None:
        """The space a vault-relative POSIX path falls in (longest matching folder), None when in none."""
        rel = _relative(path)
        if rel is None:
            return None
        best: str | None = None
        best_len = -1
        for name, folder in self.spaces.items():
            if _is_under(rel, folder) and len(folder) > best_len:
                best, best_len = name, len(folder)
        return best

    def authority_of(self, space: str | None) -> str:
        """The door level of a space; `default_authority` for None or a space without an entry."""
        if space is None:
            return self.default_authority
        return self.authority.get(space, self.default_authority)

    def multiplier(self, name: str) -> float:
        """A class weight by name (e.g. `archived`); 1.0 when the contract sets none."""
        return self.class_weights.get(name, 1.0)

    def dampening(self, space: str | None) -> float:
        """The rank multiplier of a space; 1.0 for None or an undampened space."""
        if space is None:
            return 1.0
        return self.dampened_spaces.get(space, 1.0)

    def is_record_kind(self, kind: str | None) -> bool:
        return bool(kind) and kind in self.record_kinds

    def is_lifecycle(self, value: str | None) -> bool:
        return bool(value) and value in self.lifecycle

    def recall_exempt(self, path: str) -> bool:
        """True when a vault-relative path lies in one of `recall_exempt_areas`."""
        rel = _relative(path)
        return rel is not None and any(_is_under(rel, area) for area in self.recall_exempt_areas)

    def for_every_project(self, path: str, note_type: str | None) -> bool:
        """True when a note holds whatever project a query names: a rule (type `rule`, `convention` or
        `preference`) or a note of the `standards` space. Without a `project:` of its own such a note is never
        lowered by `project_mismatch`; every other note without one is."""
        if (note_type or "").strip().lower() in RULE_TYPES:
            return True
        return STANDARDS_SPACE in self.spaces and self.space_of(path) == STANDARDS_SPACE

    def kept_local(self, path: str) -> bool:
        """True when a note must not leave this machine: it lies in a space whose authority is `private`, or in
        one of `recall_exempt_areas`. Such notes are never sent to an external embeddings endpoint nor offered
        to the enrichment model as neighbours."""
        if self.recall_exempt(path):
            return True
        space = self.space_of(path)
        return space is not None and self.authority_of(space) == "private"

    def kept_local_areas(self) -> list[str]:
        """The folders whose notes stay on this machine (see `kept_local`), sorted."""
        private = [self.spaces[s] for s in self.spaces if self.authority_of(s) == "private"]
        return sorted(set(private) | set(self.recall_exempt_areas))

    def is_phone_path(self, path: str) -> bool:
        """True when a vault-relative path lies under one of `phone_paths` (asked for every note when the review
        queue is read: an already plain path is compared as it is)."""
        if not self.phone_paths:
            return False
        rel = path if _plain(path) else _relative(path)
        if rel is None:
            return False
        return any(rel == area or rel.startswith(area + "/") for area in self.phone_paths)


class ContractStatus(TypedDict):
    """The contract's entry in status."""

    source: str
    halted: bool
    errors: list[str]
    color: str  # red when halted, else green
    remedy: NotRequired[str]  # how to end the halt, while halted


@dataclass(frozen=True)
class ContractState:
    """The contract in effect, where it came from, and whether it is halted."""

    contract: Contract  # when halted: the packaged default, so every value still exists
    source: str  # the file that was read (or tried)
    halted: bool
    errors: tuple[str, ...]

    def route(self, type_: str | None, when: dt.date) -> tuple[str, str]:
        """(directory, reason) for a capture of `type_` on `when`: the class directory, else the shard."""
        shard = self.contract.shard_dir(when)
        if self.halted:
            return shard, f"halted: the storage-rules contract {self.source} is invalid, so captures go to the shard"
        if not type_:
            return shard, "untyped: no type was given, so the capture goes to the shard"
        class_dir = self.contract.class_dir(type_)
        if class_dir is None:
            return shard, f"unknown-type: {type_!r} is not listed under `types`, so the capture goes to the shard"
        current = self.contract.current_type(type_)
        if current != type_:
            return class_dir, f"type: {type_!r} is retired for {current!r}, which routes to {class_dir}"
        return class_dir, f"type: {type_!r} routes to {class_dir}"

    def to_status(self) -> ContractStatus:
        """A JSON-ready status entry: red with the exact errors when halted, else green."""
        status: ContractStatus = {
            "source": self.source,
            "halted": self.halted,
            "errors": list(self.errors),
            "color": "red" if self.halted else "green",
        }
        if self.halted:
            status["remedy"] = (
                f"fix the errors in {self.source} (check with `agentmd contract check {self.source}`); "
                "until then every capture goes to the date shard and the packaged defaults apply"
            )
        return status


def is_url_shaped(source: str) -> bool:
    """True for `scheme://…` and `//host…` sources, which are never trusted."""
    return bool(_URL.match(source.strip()))


def _relative(path: str) -> str | None:
    """A vault-relative POSIX path with `.` and empty parts removed; None for absolute or `..` paths."""
    if not path or path.startswith("/"):
        return None
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        return None
    return "/".join(parts)


def _plain(path: str) -> bool:
    """Whether a path is already what `_relative` makes of it (no leading or doubled slash, no `.` or `..`
    part, no trailing slash)."""
    return bool(path) and not (
        path.startswith(("/", "./", "../"))
        or path.endswith(("/", "/.", "/.."))
        or "//" in path
        or "/./" in path
        or "/../" in path
        or path in (".", "..")
    )


def _is_under(rel: str, folder: str) -> bool:
    return rel == folder or rel.startswith(folder + "/")
