"""Reading contracts: the packaged default, a vault's own file merged over it, and halting on bad content."""

from __future__ import annotations

import copy
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from agentmd import vault_schema
from agentmd.rules.contract.hashing import judgment_hash_of, rules_hash
from agentmd.rules.contract.model import (
    KNOWN_KEYS,
    NOTE_PROPERTIES,
    PER_ENTRY_KEYS,
    SPACE_KEYED,
    Contract,
    ContractState,
    Thresholds,
)
from agentmd.rules.contract.synctool import SyncToolPatterns
from agentmd.rules.contract.validation import keyed_problems, validate
from agentmd.rules.errors import ContractError, RulesError
from agentmd.vocabulary import VAULT_CONTRACT

DEFAULT_RESOURCE: Final = "storage-rules.default.md"
MAX_CONTRACT_BYTES: Final = 1024 * 1024
_YAML_LINE = re.compile(r"at line (\d+), column")


class _Halt(RulesError):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


def _shift_lines(message: str, offset: int) -> str:
    """Turn a YAML block's line number into the file's line number."""
    return _YAML_LINE.sub(lambda m: f"at line {int(m.group(1)) + offset} of the file, column", message)


def read_settings(text: str, name: str) -> tuple[dict[str, object], list[str]]:
    """The settings in a contract's Markdown (fenced `yaml` blocks, else frontmatter) and any read errors.

    `name` is how messages refer to the file. Blocks are merged in order; a key set in two blocks is an error.
    """
    split = vault_schema.split_frontmatter(text)
    errors: list[str] = []
    front: dict[str, object] = {}
    if split.yaml_text is not None:
        try:
            front = vault_schema.load_yaml(split.yaml_text, what=f"the frontmatter of {name}")
        except vault_schema.YamlRefused as exc:
            errors.append(_shift_lines(str(exc), 1))
    front_settings = {k: v for k, v in front.items() if k not in NOTE_PROPERTIES}

    blocks = vault_schema.fenced_blocks(split.body, "yaml")
    settings: dict[str, object] = {}
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


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, object]:
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


def _own_file(path: Path) -> None:
    """The vault's own contract must be a file of its own: through a symbolic or a hard link, whatever writes the
    other name (outside the vault, past the door) would set the rules the door follows."""
    try:
        st = os.lstat(path)
    except OSError:
        return  # reading it says what is wrong
    if stat.S_ISLNK(st.st_mode):
        raise _Halt([
            f"{path} is a symbolic link; the vault's contract must be a file of its own, since whatever writes the "
            "link's target would set the door's rules. Replace the link with a copy of the file, or name the file "
            "in the `contract` setting of the config file"
        ])  # fmt: skip
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise _Halt([
            f"{path} has {st.st_nlink} names (a hard link); the vault's contract must be a file of its own, since "
            "a write through another name would set the door's rules unseen. Replace it with a copy "
            "(`cp --remove-destination` or save it anew) and delete the other names"
        ])  # fmt: skip


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
            search_floor=float(th["search_floor"]),
            recall_floor=float(th["recall_floor"]),
            dormant_after_days=int(th["dormant_after_days"]),
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
        capture_names=str(settings["capture_names"]),
        fallback_text=fallback_text,
        sync_tool_patterns=SyncToolPatterns.of(
            **{k: tuple(v or ()) for k, v in settings["sync_tool_patterns"].items()}
        ),
        deprecations=MappingProxyType(dict(settings["deprecations"] or {})),
        rules_hash=rules_hash(settings),
        judgment_hash=judgment_hash_of(settings),
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


def default_settings() -> dict[str, object]:
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
    shown = str(target)
    try:
        if path is None:
            _own_file(target)
        text = _read_text(target)
    except _Halt as halt:
        return ContractState(_packaged().contract, shown, halted=True, errors=tuple(halt.errors))
    return contract_from_text(text, shown)


def contract_from_text(text: str, name: str) -> ContractState:
    """The contract a file's text gives, as `load_contract` would read it from a file called `name` (used for
    a version of the file taken from git history). Never raises on bad content: the state is halted instead."""
    packaged = _packaged()
    try:
        if len(text.encode("utf-8")) > MAX_CONTRACT_BYTES:
            raise _Halt([f"{name} is over {MAX_CONTRACT_BYTES:,} bytes; a storage-rules file should be a few KB"])
        own, errors = read_settings(text, name)
        if errors:
            raise _Halt([_prefixed(name, e) for e in errors])
        merged = merge(packaged.settings, own)
        problems = keyed_problems(merged)
        if problems:
            raise _Halt([_explain(name, top, message, own) for top, message in problems])
        contract = _build(merged, text, packaged.text)
    except _Halt as halt:
        return ContractState(packaged.contract, name, halted=True, errors=tuple(halt.errors))
    return ContractState(contract, name, halted=False, errors=())


def _prefixed(shown: str, message: str) -> str:
    return message if shown in message else f"{shown}: {message}"


def _explain(shown: str, top: str, message: str, own: Mapping[str, Any]) -> str:
    if top in KNOWN_KEYS and top not in own:
        message += f" (this value comes from the packaged default; set `{top}` in {shown} to change it)"
    return f"{shown}: {message}"


def check_file(path: Path) -> list[str]:
    """Every error in a contract file as `load_contract` would report it; an empty list means valid."""
    return list(load_contract(None, path).errors)
