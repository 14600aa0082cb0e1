"""The runtime-read storage-rules contract: load, merge, validate, and answer routing questions.

The packaged default (`storage-rules.default.md`, shipped inside this package) always exists. A vault may
carry its own copy at `standards/storage-rules.md`; its settings are merged over the default's and the
result is validated as a whole. A contract that cannot be read or does not validate never raises: it is
reported as *halted* (`ContractState.halted`), the packaged default supplies the values, and routing falls
through to the date shard until the file is fixed. `ContractCache` re-reads the file when it changes.
"""

from __future__ import annotations

import copy
import datetime as dt
import difflib
import math
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from agentmd import vault_schema
from agentmd.vocabulary import VAULT_CONTRACT

from .errors import ContractError

DEFAULT_RESOURCE: Final = "storage-rules.default.md"
MAX_CONTRACT_BYTES: Final = 1024 * 1024

TRUST_TIERS: Final = ("trusted", "untrusted")
AUTHORITY_LEVELS: Final = ("standing", "shared", "alignment", "private")
SELF_SOURCE: Final = "self"  # the `sources` entry used for a capture that names no source
SHARD_PLACEHOLDERS: Final = ("yyyy", "mm", "dd")
THRESHOLD_NAMES: Final = ("low_confidence", "daily_write_cap", "daily_card_budget")
CLASS_WEIGHT_NAMES: Final = ("unfiled", "fragment", "archived", "superseded", "staged", "project_mismatch")
KNOWN_KEYS: Final = (
    "types",
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
)
LINK_CONVENTIONS: Final = ("obsidian", "dendron")
# Keys whose entries fall back one by one when a vault file sets only some of them; every other key is
# replaced whole by a vault file that sets it.
PER_ENTRY_KEYS: Final = frozenset({"thresholds", "class_weights"})
SPACE_KEYED: Final = ("authority", "dampened_spaces")  # keys whose entries name spaces
# Obsidian note properties that may sit in a contract file's frontmatter without being settings.
NOTE_PROPERTIES: Final = frozenset(
    {"title", "tags", "aliases", "cssclasses", "created", "updated", "date", "description"}
)

_KEBAB = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:)?//")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_YAML_LINE = re.compile(r"at line (\d+), column")


# --------------------------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Thresholds:
    low_confidence: float  # filing_confidence below this is unsure (0..1)
    daily_write_cap: int  # captures per day in the memory space; 0 disables the cap
    daily_card_budget: int  # new cards per day before a warning (never refuses)


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

    def section(self, heading: str) -> str | None:
        """The prose under `heading` (case-insensitive); the packaged default's when this text lacks it."""
        found = vault_schema.section_text(self.text, heading)
        if found is None and self.fallback_text:
            found = vault_schema.section_text(self.fallback_text, heading)
        return found

    def class_dir(self, type_: str | None) -> str | None:
        """The class directory a type routes to, or None for no type or a type the contract does not list."""
        if not type_:
            return None
        return self.types.get(type_)

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

    def is_phone_path(self, path: str) -> bool:
        """True when a vault-relative path lies under one of `phone_paths`."""
        rel = _relative(path)
        return rel is not None and any(_is_under(rel, area) for area in self.phone_paths)


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
        return class_dir, f"type: {type_!r} routes to {class_dir}"

    def to_status(self) -> dict[str, Any]:
        """A JSON-ready status entry: red with the exact errors when halted, else green."""
        status: dict[str, Any] = {
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


# ----------------------------------------------------------------------------------------- validation


class _Problems:
    """Validation problems, each a message plus the top-level key it concerns."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, key: str, problem: str, fix: str) -> None:
        top = key.split(".", 1)[0].split("[", 1)[0]
        self.items.append((top, f"`{key}` {problem}; {fix}"))


def is_url_shaped(source: str) -> bool:
    """True for `scheme://…` and `//host…` sources, which are never trusted."""
    return bool(_URL.match(source.strip()))


def validate(settings: Mapping[str, Any]) -> list[str]:
    """Every problem in a settings mapping, each naming the key, what is wrong, and how to fix it.

    Keys that are absent are not checked (absent means the default); checks that relate two keys run
    when both are present. Load-time validation runs this on the vault's settings merged over the default.
    """
    return [message for _, message in _problems(settings)]


def _problems(settings: Mapping[str, Any]) -> list[tuple[str, str]]:
    p = _Problems()
    if not isinstance(settings, Mapping):
        p.add("settings", f"are a {type(settings).__name__}", "write them as `key: value` lines")
        return p.items
    for key in settings:
        if key not in KNOWN_KEYS:
            near = difflib.get_close_matches(str(key), KNOWN_KEYS, n=1, cutoff=0.6)
            fix = f"did you mean `{near[0]}`?" if near else f"remove it; known keys are {', '.join(KNOWN_KEYS)}"
            p.add(str(key), "is not a storage-rules key", fix)

    for key in ("lifecycle", "facets", "record_kinds"):
        if key in settings:
            _check_name_list(p, key, settings[key])
    for key in ("phone_paths", "recall_exempt_areas"):
        if key in settings:
            _check_path_list(p, key, settings[key])

    types = _mapping(p, settings, "types", "`decision: memory/decisions`")
    if types is not None:
        for name, folder in types.items():
            _check_name(p, f"types.{name}", name, "type name")
            _check_path(p, f"types.{name}", folder, "memory/decisions")

    if "default_lifecycle" in settings:
        value = settings["default_lifecycle"]
        lifecycle = settings.get("lifecycle")
        if not isinstance(value, str) or not value:
            p.add("default_lifecycle", f"is {_show(value)}, not a lifecycle value", "set it to e.g. `active`")
        elif isinstance(lifecycle, list) and value not in lifecycle:
            values = ", ".join(str(v) for v in lifecycle) or "nothing"
            p.add(
                "default_lifecycle",
                f"is {value!r}, which is not in `lifecycle` ({values})",
                "set it to one of those values or add it to `lifecycle`",
            )

    sources = _mapping(p, settings, "sources", "`operator: trusted`")
    if sources is not None:
        for tag, tier in sources.items():
            if is_url_shaped(str(tag)):
                p.add(
                    f"sources.{tag}",
                    "is a URL; URL-shaped sources are always untrusted",
                    "remove the entry (list source tags such as `web` instead)",
                )
            else:
                _check_name(p, f"sources.{tag}", tag, "source tag")
            if tier not in TRUST_TIERS:
                p.add(
                    f"sources.{tag}",
                    f"is {_show(tier)}, not a trust tier",
                    "use exactly `trusted` or `untrusted` (there are only two tiers)",
                )

    thresholds = _mapping(p, settings, "thresholds", "`daily_write_cap: 200`")
    if thresholds is not None:
        _check_thresholds(p, thresholds)

    spaces = _mapping(p, settings, "spaces", "`memory: memory`")
    if spaces is not None:
        seen: dict[str, str] = {}
        for name, folder in spaces.items():
            _check_name(p, f"spaces.{name}", name, "space name")
            if _check_path(p, f"spaces.{name}", folder, "memory") and isinstance(folder, str):
                norm = folder.rstrip("/")
                if norm in seen:
                    p.add(
                        f"spaces.{name}",
                        f"uses the folder {norm!r}, which space `{seen[norm]}` already uses",
                        "give every space its own folder",
                    )
                else:
                    seen[norm] = name

    if "shard" in settings:
        _check_shard(p, settings["shard"])

    space_names = set(spaces) if spaces is not None else None
    authority = _mapping(p, settings, "authority", "`memory: standing`")
    if authority is not None:
        for name, level in authority.items():
            _check_space_ref(p, f"authority.{name}", name, space_names)
            if level not in AUTHORITY_LEVELS:
                p.add(f"authority.{name}", f"is {_show(level)}, not a door level", f"use one of {_levels()}")
    if "default_authority" in settings and settings["default_authority"] not in AUTHORITY_LEVELS:
        p.add(
            "default_authority",
            f"is {_show(settings['default_authority'])}, not a door level",
            f"use one of {_levels()} (`alignment` is the safe choice)",
        )

    if "link_convention" in settings and settings["link_convention"] not in LINK_CONVENTIONS:
        p.add(
            "link_convention",
            f"is {_show(settings['link_convention'])}, not a link convention",
            "use `obsidian` ([[target|label]]) or `dendron` ([[label|target]])",
        )

    dampened = _mapping(p, settings, "dampened_spaces", "`daily: 0.9`")
    if dampened is not None:
        for name, value in dampened.items():
            _check_space_ref(p, f"dampened_spaces.{name}", name, space_names)
            _check_multiplier(p, f"dampened_spaces.{name}", value)

    weights = _mapping(p, settings, "class_weights", "`archived: 0.5`")
    if weights is not None:
        for name, value in weights.items():
            if name not in CLASS_WEIGHT_NAMES:
                near = difflib.get_close_matches(name, CLASS_WEIGHT_NAMES, n=1, cutoff=0.6)
                hint = f"did you mean `{near[0]}`?" if near else f"use one of {', '.join(CLASS_WEIGHT_NAMES)}"
                p.add(f"class_weights.{name}", "is not a class agentmd weighs", hint)
            _check_multiplier(p, f"class_weights.{name}", value)
    return p.items


def _show(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, int | float):
        return str(value)
    return f"a {_yaml_kind(value)}"


def _yaml_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if value is None:
        return "empty value"
    return "text"


def _levels() -> str:
    return ", ".join(f"`{level}`" for level in AUTHORITY_LEVELS)


def _kebab_hint(value: str) -> str:
    hint = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
    return hint if _KEBAB.match(hint) else "my-name"


def _mapping(p: _Problems, settings: Mapping[str, Any], key: str, example: str) -> dict[str, Any] | None:
    if key not in settings:
        return None
    value = settings[key]
    if not isinstance(value, dict):
        p.add(key, f"is {_show(value)}, not a mapping", f"write it as indented `name: value` lines, e.g. {example}")
        return None
    return value


def _check_name(p: _Problems, key: str, name: Any, what: str) -> None:
    name = str(name)
    if not _KEBAB.match(name):
        p.add(key, f"has the {what} {name!r}, which is not kebab-case", f"rename it to e.g. `{_kebab_hint(name)}`")


def _check_name_list(p: _Problems, key: str, value: Any) -> None:
    if not isinstance(value, list):
        p.add(key, f"is {_show(value)}, not a list", f"write it as a list, e.g. `{key}: [one, two]`")
        return
    seen: set[str] = set()
    for i, item in enumerate(value):
        if not isinstance(item, str):
            p.add(f"{key}[{i}]", f"is {_show(item)}, not a name", "write a kebab-case word such as `active`")
            continue
        if not _KEBAB.match(item):
            p.add(f"{key}[{i}]", f"is {item!r}, which is not kebab-case", f"write it as `{_kebab_hint(item)}`")
        if item in seen:
            p.add(f"{key}[{i}]", f"repeats {item!r}", "list each value once")
        seen.add(item)


def _check_path_list(p: _Problems, key: str, value: Any) -> None:
    if not isinstance(value, list):
        p.add(key, f"is {_show(value)}, not a list", f"write it as a list of folders, e.g. `{key}: [inbox/phone]`")
        return
    seen: set[str] = set()
    for i, item in enumerate(value):
        if _check_path(p, f"{key}[{i}]", item, "inbox/phone") and isinstance(item, str):
            norm = item.rstrip("/")
            if norm in seen:
                p.add(f"{key}[{i}]", f"repeats {norm!r}", "list each folder once")
            seen.add(norm)


def _path_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"is {_show(value)}, not a folder path"
    if not value.strip():
        return "is an empty folder path"
    if value != value.strip():
        return f"is {value!r}, with spaces at its ends"
    if "\\" in value:
        return f"is {value!r}, which uses a backslash"
    if value.startswith("/") or re.match(r"^[A-Za-z]:", value):
        return f"is {value!r}, an absolute path"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return f"is {value!r}, which contains a control character"
    for part in value.rstrip("/").split("/"):
        if part == "":
            return f"is {value!r}, which has an empty folder name (`//`)"
        if part in (".", ".."):
            return f"is {value!r}, which contains `{part}`"
        if part.startswith("."):
            return f"is {value!r}, which names the dot folder {part!r} (dot folders are never indexed)"
    return None


def _check_path(p: _Problems, key: str, value: Any, example: str) -> bool:
    problem = _path_problem(value)
    if problem is None:
        return True
    p.add(key, problem, f"write a folder relative to the vault root with `/` between names, e.g. `{example}`")
    return False


def _check_shard(p: _Problems, value: Any) -> None:
    if not isinstance(value, str):
        p.add(
            "shard", f"is {_show(value)}, not a folder path", 'write it in quotes, e.g. `shard: "memory/{yyyy}/{mm}"`'
        )
        return
    bad = [m.group(0) for m in _PLACEHOLDER.finditer(value) if m.group(1) not in SHARD_PLACEHOLDERS]
    if bad:
        p.add(
            "shard",
            f"uses the placeholder {', '.join(bad)}",
            "use only {yyyy}, {mm} and {dd}, e.g. `memory/{yyyy}/{mm}`",
        )
        return
    filled = _PLACEHOLDER.sub("0000", value)
    if "{" in filled or "}" in filled:
        p.add("shard", f"is {value!r}, which has an unmatched brace", "write placeholders as {yyyy}, {mm} or {dd}")
        return
    problem = _path_problem(filled)
    if problem is not None:
        p.add(
            "shard",
            problem.replace(repr(filled), repr(value)),
            "write a folder relative to the vault root, e.g. `memory/{yyyy}/{mm}`",
        )


def _check_space_ref(p: _Problems, key: str, name: str, spaces: set[str] | None) -> None:
    if spaces is None or name in spaces:
        return
    near = difflib.get_close_matches(name, sorted(spaces), n=1, cutoff=0.6)
    hint = f"did you mean `{near[0]}`?" if near else "add the space under `spaces` or remove this entry"
    p.add(key, f"names {name!r}, which is not a space in `spaces`", hint)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_multiplier(p: _Problems, key: str, value: Any) -> None:
    if not _is_number(value) or not 0 < value <= 1:
        p.add(
            key, f"is {_show(value)}, not a multiplier in (0, 1]", "use a number above 0 and at most 1 (1 = no effect)"
        )


def _check_thresholds(p: _Problems, thresholds: dict[str, Any]) -> None:
    for name, value in thresholds.items():
        key = f"thresholds.{name}"
        if name not in THRESHOLD_NAMES:
            near = difflib.get_close_matches(name, THRESHOLD_NAMES, n=1, cutoff=0.6)
            hint = f"did you mean `{near[0]}`?" if near else f"use one of {', '.join(THRESHOLD_NAMES)}"
            p.add(key, "is not a threshold", hint)
        elif name == "low_confidence":
            if not _is_number(value) or not 0 <= value <= 1:
                p.add(key, f"is {_show(value)}, not a number from 0 to 1", "set it to e.g. 0.5")
        elif not isinstance(value, int) or isinstance(value, bool) or value < 0:
            example = "200 (0 turns the cap off)" if name == "daily_write_cap" else "30"
            p.add(key, f"is {_show(value)}, not a whole number 0 or more", f"set it to e.g. {example}")


# ------------------------------------------------------------------------------------------ reading


class _Halt(Exception):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


def _shift_lines(message: str, offset: int) -> str:
    """Turn a YAML block's line number into the file's line number."""
    return _YAML_LINE.sub(lambda m: f"at line {int(m.group(1)) + offset} of the file, column", message)


def read_settings(text: str, name: str) -> tuple[dict[str, Any], list[str]]:
    """The settings in a contract's Markdown (fenced `yaml` blocks, else frontmatter) and any read errors.

    `name` is how messages refer to the file. Blocks are merged in order; a key set in two blocks is an error.
    """
    split = vault_schema.split_frontmatter(text)
    errors: list[str] = []
    front: dict[str, Any] = {}
    if split.yaml_text is not None:
        try:
            front = vault_schema.load_yaml(split.yaml_text, what=f"the frontmatter of {name}")
        except vault_schema.YamlRefused as exc:
            errors.append(_shift_lines(str(exc), 1))
    front_settings = {k: v for k, v in front.items() if k not in NOTE_PROPERTIES}

    blocks = vault_schema.fenced_blocks(split.body, "yaml")
    settings: dict[str, Any] = {}
    origin: dict[str, int] = {}
    for block in blocks:
        fence_line = split.body_line + block.start_line + 1  # 1-based line of the opening fence
        try:
            data = vault_schema.load_yaml(block.content, what=f"the yaml block at line {fence_line} of {name}")
        except vault_schema.YamlRefused as exc:
            errors.append(_shift_lines(str(exc), fence_line))
            continue
        for key, value in data.items():
            if key in origin:
                errors.append(
                    f"`{key}` is set in the yaml block at line {origin[key]} and again in the one at line "
                    f"{fence_line} of {name}; keep one of them"
                )
            else:
                settings[key] = value
                origin[key] = fence_line
    if not blocks:
        return front_settings, errors
    if front_settings:
        keys = ", ".join(f"`{k}`" for k in front_settings)
        errors.append(
            f"{name} has settings both in its frontmatter ({keys}) and in yaml blocks; "
            "move the frontmatter ones into a yaml block"
        )
    return settings, errors


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """`override` over `base`: a set key replaces the base value, except per-entry keys, merged entry by entry.

    When `override` replaces `spaces` but not `authority` or `dampened_spaces`, the base's entries for
    spaces that no longer exist are dropped: they could never apply, and they are not the writer's typos.
    """
    merged = dict(base)
    for key, value in override.items():
        old = merged.get(key)
        if key in PER_ENTRY_KEYS and isinstance(old, dict) and isinstance(value, dict):
            merged[key] = {**old, **value}
        else:
            merged[key] = value
    spaces = merged.get("spaces")
    if "spaces" in override and isinstance(spaces, dict):
        for key in SPACE_KEYED:
            inherited = merged.get(key)
            if key not in override and isinstance(inherited, dict):
                merged[key] = {name: v for name, v in inherited.items() if name in spaces}
    return merged


def _read_text(path: Path) -> str:
    shown = str(path)
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONTRACT_BYTES + 1)
    except FileNotFoundError:
        raise _Halt([f"{shown} does not exist; create it or point the contract setting at an existing file"]) from None
    except IsADirectoryError:
        raise _Halt([f"{shown} is a directory, not a file; replace it with the storage-rules Markdown file"]) from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise _Halt([f"{shown} could not be read ({reason}); check that it exists and is readable"]) from None
    if len(data) > MAX_CONTRACT_BYTES:
        raise _Halt([f"{shown} is over {MAX_CONTRACT_BYTES:,} bytes; a storage-rules file should be a few KB"])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Halt([f"{shown} is not UTF-8 (bad byte at offset {exc.start}); save it with UTF-8 encoding"]) from None


def _build(settings: Mapping[str, Any], text: str, fallback_text: str) -> Contract:
    th = settings["thresholds"]
    return Contract(
        text=text,
        types=MappingProxyType({k: v.rstrip("/") for k, v in settings["types"].items()}),
        lifecycle=tuple(settings["lifecycle"]),
        default_lifecycle=settings["default_lifecycle"],
        sources=MappingProxyType(dict(settings["sources"])),
        facets=tuple(settings["facets"]),
        record_kinds=tuple(settings["record_kinds"]),
        thresholds=Thresholds(
            low_confidence=float(th["low_confidence"]),
            daily_write_cap=int(th["daily_write_cap"]),
            daily_card_budget=int(th["daily_card_budget"]),
        ),
        spaces=MappingProxyType({k: v.rstrip("/") for k, v in settings["spaces"].items()}),
        shard=settings["shard"].rstrip("/"),
        phone_paths=tuple(p.rstrip("/") for p in settings["phone_paths"]),
        authority=MappingProxyType(dict(settings["authority"])),
        default_authority=settings["default_authority"],
        dampened_spaces=MappingProxyType({k: float(v) for k, v in settings["dampened_spaces"].items()}),
        recall_exempt_areas=tuple(p.rstrip("/") for p in settings["recall_exempt_areas"]),
        class_weights=MappingProxyType({k: float(v) for k, v in settings["class_weights"].items()}),
        link_convention=str(settings["link_convention"]),
        fallback_text=fallback_text,
    )


@dataclass(frozen=True)
class _Packaged:
    source: str
    text: str
    settings: Mapping[str, Any]
    contract: Contract


@lru_cache(maxsize=1)
def _packaged() -> _Packaged:
    resource = resources.files("agentmd.rules") / DEFAULT_RESOURCE
    source = str(resource)
    try:
        text = resource.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractError(f"the packaged contract {source} could not be read ({exc}); reinstall agentmd") from None
    settings, errors = read_settings(text, source)
    errors += validate(settings)
    missing = [key for key in KNOWN_KEYS if key not in settings]
    if missing:
        errors.append(f"it does not set {', '.join(missing)}")
    if errors:
        raise ContractError(f"the packaged contract {source} is invalid: {'; '.join(errors)}; reinstall agentmd")
    return _Packaged(source, text, MappingProxyType(settings), _build(settings, text, ""))


def default_settings() -> dict[str, Any]:
    """A fresh copy of the packaged default's settings (safe to modify)."""
    return copy.deepcopy(dict(_packaged().settings))


def default_contract() -> Contract:
    """The packaged default contract. Raises `ContractError` only when the installation is broken."""
    return _packaged().contract


def default_state() -> ContractState:
    """The packaged default as a (never halted) state."""
    packaged = _packaged()
    return ContractState(packaged.contract, packaged.source, halted=False, errors=())


def contract_path(vault: Path | None, path: Path | None = None) -> Path | None:
    """The contract file `load_contract` would read: the explicit path, else the vault's (which may not exist)."""
    if path is not None:
        return path
    if vault is not None:
        return vault / VAULT_CONTRACT
    return None


def load_contract(vault: Path | None, path: Path | None = None) -> ContractState:
    """The contract in effect: `path` if given, else the vault's `standards/storage-rules.md`, else the default.

    Never raises on bad content: an unreadable, malformed or invalid file gives a halted state carrying the
    packaged default's values and the exact errors, each naming the file.
    """
    target = contract_path(vault, path)
    if target is None or (path is None and not os.path.lexists(target)):
        return default_state()
    packaged = _packaged()
    shown = str(target)
    try:
        text = _read_text(target)
        own, errors = read_settings(text, shown)
        if errors:
            raise _Halt([_prefixed(shown, e) for e in errors])
        merged = merge(packaged.settings, own)
        problems = _problems(merged)
        if problems:
            raise _Halt([_explain(shown, top, message, own) for top, message in problems])
        contract = _build(merged, text, packaged.text)
    except _Halt as halt:
        return ContractState(packaged.contract, shown, halted=True, errors=tuple(halt.errors))
    return ContractState(contract, shown, halted=False, errors=())


def _prefixed(shown: str, message: str) -> str:
    return message if shown in message else f"{shown}: {message}"


def _explain(shown: str, top: str, message: str, own: Mapping[str, Any]) -> str:
    if top in KNOWN_KEYS and top not in own:
        message += f" (this value comes from the packaged default; set `{top}` in {shown} to change it)"
    return f"{shown}: {message}"


def check_file(path: Path) -> list[str]:
    """Every error in a contract file as `load_contract` would report it; an empty list means valid."""
    return list(load_contract(None, path).errors)


# --------------------------------------------------------------------------------------------- cache


_Stamp = tuple[Any, ...] | None


class ContractCache:
    """The contract in effect for a vault, re-read whenever its file changes, appears or disappears.

    `get()` stats the file on every call (cheap) and reloads only when (mtime_ns, size, inode) changed.
    Safe to share between threads.
    """

    def __init__(self, vault: Path | None, path: Path | None = None) -> None:
        self._vault = vault
        self._path = path
        self._target = contract_path(vault, path)
        self._lock = threading.Lock()
        self._stamp: _Stamp = None
        self._state: ContractState | None = None

    @property
    def target(self) -> Path | None:
        """The file watched: the explicit path or the vault's `standards/storage-rules.md`."""
        return self._target

    def _current_stamp(self) -> _Stamp:
        if self._target is None:
            return None
        try:
            st = os.stat(self._target)
        except FileNotFoundError:
            return ("missing", os.path.lexists(self._target))
        except OSError as exc:
            return ("error", exc.errno)
        return ("file", st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)

    def get(self) -> ContractState:
        with self._lock:
            stamp = self._current_stamp()  # stat before reading, so an edit mid-read is seen next time
            if self._state is None or stamp != self._stamp:
                self._state = load_contract(self._vault, self._path)
                self._stamp = stamp
            return self._state

    def refresh(self) -> ContractState:
        """Re-read the file now, whatever its stamp says."""
        with self._lock:
            self._state = None
        return self.get()


def _relative(path: str) -> str | None:
    """A vault-relative POSIX path with `.` and empty parts removed; None for absolute or `..` paths."""
    if not path or path.startswith("/"):
        return None
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        return None
    return "/".join(parts)


def _is_under(rel: str, folder: str) -> bool:
    return rel == folder or rel.startswith(folder + "/")
