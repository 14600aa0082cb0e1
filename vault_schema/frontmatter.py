"""Frontmatter: split a note into its YAML block and body, and read YAML safely.

Reading is tolerant of the mistakes people make by hand and hard on hostile input: the block is capped
in size, aliases are capped in number, only the safe loader runs (no python tags), and the loaded value
is walked once into plain JSON-compatible data with a node budget, so an alias bomb cannot expand.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import yaml

from .errors import YamlRefused

try:  # libyaml ships in the PyPI wheels; the pure-Python loader is the fallback
    _SafeLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _SafeLoader = yaml.SafeLoader


class _Loader(_SafeLoader):
    """The safe loader, except that a date that does not exist (`date: 2024-02-30`) stays text."""


def _timestamp(loader: Any, node: Any) -> Any:
    try:
        return loader.construct_yaml_timestamp(node)
    except (ValueError, AttributeError):  # impossible date, or `!!timestamp` on text that is no date
        return loader.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)

MAX_YAML_BYTES = 64 * 1024
MAX_ALIASES = 64
MAX_NODES = 20_000

_ALIAS = re.compile(r"(?:^|[\s\[{,:-])\*[A-Za-z0-9_][^\s,\]}*]*(?=[\s,\]}]|$)", re.MULTILINE)
_FENCE_CLOSE = ("---", "...")


@dataclass(frozen=True, slots=True)
class Split:
    """A note cut at its frontmatter fence lines."""

    yaml_text: str | None  # the text between the fences, None when the note has no frontmatter
    body: str  # everything after the closing fence (the whole text when there is no frontmatter)
    body_line: int  # 0-based line number of the body's first line within the file


def split_frontmatter(text: str) -> Split:
    """Cut `text` at a leading `---` fence pair; a note without a closed pair is all body."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        return Split(None, text, 0)
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].rstrip() != "---":
        return Split(None, text, 0)
    pos = first_nl + 1
    line_no = 1
    while pos <= len(text):
        nl = text.find("\n", pos)
        end = len(text) if nl == -1 else nl
        if text[pos:end].rstrip() in _FENCE_CLOSE:
            body_start = len(text) if nl == -1 else nl + 1
            return Split(text[first_nl + 1 : pos], text[body_start:], line_no + 1)
        if nl == -1:
            break
        pos = nl + 1
        line_no += 1
    return Split(None, text, 0)


def load_yaml(text: str, *, what: str = "frontmatter", first_line: int = 1) -> dict[str, object]:
    """Load a YAML mapping safely into plain data (str keys, dates as ISO strings).

    Raises `YamlRefused` with a message naming the problem and the fix. `first_line` is the 1-based line of
    the file on which `text` starts, so a syntax error names the line an editor shows.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_YAML_BYTES:
        raise YamlRefused(
            f"{what} is {size:,} bytes, over the {MAX_YAML_BYTES:,}-byte limit; move long text into the note body"
        )
    if len(_ALIAS.findall(text)) > MAX_ALIASES:
        raise YamlRefused(f"{what} uses more than {MAX_ALIASES} YAML aliases; write the values out instead")
    if not text.strip():
        return {}
    simple = simple_mapping(text)
    if simple is not None:
        return simple
    return yaml_mapping(text, what=what, first_line=first_line)


def yaml_mapping(text: str, *, what: str = "frontmatter", first_line: int = 1) -> dict[str, object]:
    """`load_yaml` through the YAML loader alone, after the size and alias checks."""
    try:
        value = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + first_line}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlRefused(f"{what} is not valid YAML{where}: {problem}; fix the YAML syntax") from None
    except Exception as exc:  # constructors raise more than YAMLError on crafted input (`!!bool maybe`: KeyError)
        raise YamlRefused(f"{what} could not be read safely ({type(exc).__name__}); simplify it") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise YamlRefused(f"{what} is a YAML {type(value).__name__}, not a mapping; write it as `key: value` lines")
    budget = [MAX_NODES]
    try:
        plain = _plain(value, budget, 0)
    except RecursionError:
        raise YamlRefused(f"{what} is nested too deeply; flatten it") from None
    assert isinstance(plain, dict)
    return plain


# The frontmatter most notes carry, read without the YAML machinery: `key: value` lines of ASCII, where each
# value is a word run, a date, a whole number, a quoted text without escapes, or a flow list of words. What
# YAML would read differently (a keyword such as `yes`, `on` or `null`, a number with a leading zero, a
# colon or `#` in a value, any indentation, comment, tab or line break other than `\n`) does not match, and
# goes to the YAML loader; tests/vault_schema/test_frontmatter_simple.py compares both on the shared corpora.
_SIMPLE_LINE = re.compile(
    r"([A-Za-z][A-Za-z0-9_-]{0,199}):(?: +(?:"  # YAML takes no key longer than 1,024 characters
    r"(?P<word>[A-Za-z][A-Za-z0-9 ._/()'-]*?)"
    r"|(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})"
    r"|(?P<int>0|[1-9][0-9]{0,17})"
    r"|'(?P<single>[^'\n]*)'"
    r'|"(?P<double>[^"\\\n]*)"'
    r"|\[(?P<list> *(?:[A-Za-z][A-Za-z0-9_ -]*?(?: *, *[A-Za-z][A-Za-z0-9_ -]*?)*)? *)\]"
    r"))? *"
)
_YAML_WORDS = frozenset(
    w.lower() for w in ("yes", "no", "true", "false", "on", "off", "null", "y", "n", "empty")
)  # read as a boolean or null by some YAML reader in some case: always left to the loader


def simple_mapping(text: str) -> dict[str, object] | None:
    """`text` read as YAML, when it is only simple `key: value` lines (see _SIMPLE_LINE); else None."""
    if not text.isascii() or "\r" in text or "\t" in text:
        return None
    out: dict[str, object] = {}
    nodes = 0
    for line in text.split("\n"):
        if not line:
            continue
        m = _SIMPLE_LINE.fullmatch(line)
        if m is None:
            return None
        key = m.group(1)
        if key in out or key.lower() in _YAML_WORDS:
            return None
        word, date, number, single, double, items = m.group("word", "date", "int", "single", "double", "list")
        if word is not None:
            if word.lower() in _YAML_WORDS or word.endswith((" ", "-", ".")) or "  " in word:
                return None
            out[key] = word
        elif date is not None:
            out[key] = date  # a date YAML reads is written back in this form; one that does not exist stays text
        elif number is not None:
            out[key] = int(number)
        elif single is not None:
            out[key] = single
        elif double is not None:
            out[key] = double
        elif items is not None:
            values = [v.strip() for v in items.split(",")] if items.strip() else []
            if any(v.lower() in _YAML_WORDS or "  " in v or v.endswith("-") for v in values):
                return None
            out[key] = values
            nodes += len(values)
        else:
            out[key] = None
    if nodes + len(out) + 1 > MAX_NODES:  # the loader's count of values: it refuses such a block
        return None
    return out


_SCALARS = (str, int, float, bool, type(None))
_MAX_INT_BITS = 1024  # `0xfff…` or `1:2:3…` can build ints too large for str() (ValueError in Python ≥ 3.11)


def _check_int(value: Any) -> None:
    if type(value) is int and value.bit_length() > _MAX_INT_BITS:
        raise YamlRefused(f"YAML holds a number over {_MAX_INT_BITS} bits long; quote it to keep it as text")


def _plain(value: Any, budget: list[int], depth: int) -> Any:
    if type(value) in _SCALARS:
        budget[0] -= 1
        if budget[0] < 0:
            raise YamlRefused(f"YAML expands to more than {MAX_NODES:,} values; write it out plainly")
        _check_int(value)
        return value
    budget[0] -= 1
    if budget[0] < 0:
        raise YamlRefused(f"YAML expands to more than {MAX_NODES:,} values; write it out plainly")
    if depth > 64:
        raise YamlRefused("YAML is nested more than 64 levels deep; flatten it")
    if isinstance(value, dict):
        return {_key(k): _plain(v, budget, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v, budget, depth + 1) for v in value]
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _key(key: Any) -> str:
    if isinstance(key, dt.datetime | dt.date):
        return key.isoformat()
    if key is None:
        return "null"
    if isinstance(key, list | tuple | dict):
        return repr(key)
    _check_int(key)
    return str(key)


@dataclass(frozen=True, slots=True)
class KeyLine:
    """Where a top-level key of a frontmatter block starts."""

    key: str | None  # the key's text as written (quotes removed), None for a complex key (`? [a, b]`)
    line: int  # 0-based line within the YAML text
    column: int


def top_level_keys(text: str) -> list[KeyLine] | None:
    """The top-level keys of a YAML block mapping in the order written, or None when the text holds no block
    mapping (empty or comments only: an empty list; a flow mapping `{...}`, a list or a scalar: None).

    Only the composer runs (no values are built), so this is cheap and safe on text `load_yaml` accepted."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return None
    if node is None:
        return []
    if not isinstance(node, yaml.MappingNode) or node.flow_style:
        return None
    return [
        KeyLine(k.value if isinstance(k, yaml.ScalarNode) else None, k.start_mark.line, k.start_mark.column)
        for k, _v in node.value
    ]
