"""Validation of contract settings: every problem named by its key, with what is wrong and how to fix it."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from typing import Any

from agentmd.rules.contract.model import (
    AUTHORITY_LEVELS,
    CAPTURE_NAMES,
    CLASS_WEIGHT_NAMES,
    FLOOR_NAMES,
    KNOWN_KEYS,
    LINK_CONVENTIONS,
    SHARD_PLACEHOLDERS,
    THRESHOLD_NAMES,
    TRUST_TIERS,
    is_url_shaped,
)
from agentmd.rules.contract.synctool import MAX_PATTERNS, SYNC_PATTERN_KINDS, PatternError, compile_pattern

_KEBAB = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


class _Problems:
    """Validation problems, each a message plus the top-level key it concerns."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, key: str, problem: str, fix: str) -> None:
        top = key.split(".", 1)[0].split("[", 1)[0]
        self.items.append((top, f"`{key}` {problem}; {fix}"))


def validate(settings: Mapping[str, Any]) -> list[str]:
    """Every problem in a settings mapping, each naming the key, what is wrong, and how to fix it.

    Keys that are absent are not checked (absent means the default); checks that relate two keys run
    when both are present. Load-time validation runs this on the vault's settings merged over the default.
    """
    return [message for _, message in keyed_problems(settings)]


def keyed_problems(settings: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every problem as (top-level key, message); the key lets a loader say which problems a default caused."""
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
    # `deprecations:` left empty retires nothing
    deprecations = None
    if settings.get("deprecations") is not None:
        deprecations = _mapping(p, settings, "deprecations", "`note: fact`")
    if deprecations is not None:
        _check_deprecations(p, deprecations, types)

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

    if "capture_names" in settings and settings["capture_names"] not in CAPTURE_NAMES:
        p.add(
            "capture_names",
            f"is {_show(settings['capture_names'])}, not a way of naming captures",
            "use `auto` (tagged with the machine while the vault has a git remote), `title` or `machine`",
        )

    dampened = _mapping(p, settings, "dampened_spaces", "`daily: 0.9`")
    if dampened is not None:
        for name, value in dampened.items():
            _check_space_ref(p, f"dampened_spaces.{name}", name, space_names)
            _check_multiplier(p, f"dampened_spaces.{name}", value)

    patterns = _mapping(p, settings, "sync_tool_patterns", '`temp: ["*.partial"]`')
    if patterns is not None:
        _check_sync_patterns(p, patterns)

    weights = _mapping(p, settings, "class_weights", "`archived: 0.5`")
    if weights is not None:
        for name, value in weights.items():
            if name not in CLASS_WEIGHT_NAMES:
                near = difflib.get_close_matches(name, CLASS_WEIGHT_NAMES, n=1, cutoff=0.6)
                hint = f"did you mean `{near[0]}`?" if near else f"use one of {', '.join(CLASS_WEIGHT_NAMES)}"
                p.add(f"class_weights.{name}", "is not a class agentmd weighs", hint)
            _check_multiplier(p, f"class_weights.{name}", value)
    return p.items


def _check_deprecations(p: _Problems, deprecations: Mapping[str, Any], types: Mapping[str, Any] | None) -> None:
    """Each retired type names its replacement: a type listed under `types`, never another retired one (so a
    retired name is read as its replacement in one step, and no chain can loop), never the retired name itself.
    A retired name may not stay listed under `types`: a name is either in use or retired."""
    for old, new in deprecations.items():
        key = f"deprecations.{old}"
        _check_name(p, key, old, "type name")
        if not isinstance(new, str) or not new:
            p.add(key, f"is {_show(new)}, not a type name", f"write the type that replaces it, e.g. `{old}: fact`")
            continue
        if new == old:
            p.add(key, f"retires {old!r} in favour of itself", "name the type that replaces it, or remove the entry")
        elif new in deprecations:
            then = deprecations[new]
            p.add(
                key,
                f"names {new!r} as the replacement, but {new!r} is retired too (for {_show(then)})",
                f"point it straight at a type listed under `types`, e.g. `{old}: {then}`"
                if isinstance(then, str) and then != old
                else "point each retired type at a type listed under `types`",
            )
        elif types is not None and new not in types:
            near = difflib.get_close_matches(new, sorted(types), n=1, cutoff=0.6)
            hint = f"did you mean `{near[0]}`?" if near else "name a type listed under `types`, or add it there"
            p.add(key, f"names {new!r} as the replacement, which is not a type in `types`", hint)
        if types is not None and old in types:
            p.add(
                f"types.{old}",
                f"is retired by `deprecations` (for {_show(new)})",
                f"remove `{old}` from `types`, or remove its line under `deprecations` to keep using it",
            )


def _check_sync_patterns(p: _Problems, patterns: Mapping[str, Any]) -> None:
    for kind, entries in patterns.items():
        key = f"sync_tool_patterns.{kind}"
        if kind not in SYNC_PATTERN_KINDS:
            p.add(key, "is not a kind of sync-tool file", f"use {', '.join(SYNC_PATTERN_KINDS)}")
            continue
        if entries is None:
            continue  # an empty kind adds nothing
        if not isinstance(entries, list):
            p.add(key, f"is {_show(entries)}, not a list", 'write a list of patterns, e.g. `["*.partial"]`')
            continue
        if len(entries) > MAX_PATTERNS:
            p.add(key, f"lists {len(entries)} patterns", f"keep to {MAX_PATTERNS} at most")
        for i, entry in enumerate(entries):
            if not isinstance(entry, str):
                p.add(f"{key}[{i}]", f"is {_show(entry)}, not a pattern", 'quote it as text, e.g. `"*.partial"`')
                continue
            try:
                compile_pattern(entry, kind)
            except PatternError as exc:
                p.add(f"{key}[{i}]", f"({entry!r}) {exc}", "see the File-sync tools section of storage-rules")


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


def _mapping(p: _Problems, settings: Mapping[str, Any], key: str, example: str) -> dict[str, object] | None:
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
        elif name == "low_confidence" or name in FLOOR_NAMES:
            if not _is_number(value) or not 0 <= value <= 1:
                p.add(key, f"is {_show(value)}, not a number from 0 to 1", "set it to e.g. 0.5")
        elif not isinstance(value, int) or isinstance(value, bool) or value < 0:
            example = {
                "daily_write_cap": "200 (0 turns the cap off)",
                "dormant_after_days": "180 (0 turns it off)",
            }.get(name, "30")
            p.add(key, f"is {_show(value)}, not a whole number 0 or more", f"set it to e.g. {example}")
