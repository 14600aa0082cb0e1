"""Writing notes: new notes rendered from fields, and field edits that keep every other byte of a note.

A new note's frontmatter is rendered with PyYAML's safe dumper in the order the fields are given.

An edit to an existing note changes only the lines of the keys it names. The block is composed (not loaded)
to learn on which line each top-level key starts; a key's lines run from there to the next key, less the
blank and unindented comment lines at their end (those belong to what follows). A removed key's lines are
cut, a replaced key's lines are swapped for the new `key: value` text rendered by ruamel.yaml's round-trip
dumper, and a new key is appended at the end of the block. Everything else (the byte-order mark, the
newline style, the fences as written, key order, quoting, comments, blank lines and the body) is copied
from the note unchanged; new lines take the newline of the opening fence.

Before the text is returned, the new block is read back and compared with the old one: every key that was
not named must hold the same value, in the same order. When that fails (a removed key held an anchor
another key refers to, say) or the block is not a block mapping (`{...}` written as JSON), the edit is
refused with `YamlRefused` rather than written: the note is left for a person.

A note without frontmatter gets a new block; a block left empty by removing its keys is dropped, so a key
added to such a note and removed again gives back the note's bytes.
"""

from __future__ import annotations

import datetime as dt
import io
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from .errors import YamlRefused
from .frontmatter import KeyLine, load_yaml, split_frontmatter, top_level_keys


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_presenter)


def render_frontmatter(fields: Mapping[str, Any]) -> str:
    """YAML text (without fences) for the fields, None values left out."""
    data = {k: v for k, v in fields.items() if v is not None and v != [] and v != ""}
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=4096, default_flow_style=False)


def render_note(fields: Mapping[str, Any], body: str) -> str:
    """A complete note: `---` fenced frontmatter, then the body, ending with a newline."""
    text = "---\n" + render_frontmatter(fields) + "---\n" + body
    return text if text.endswith("\n") else text + "\n"


def _rt() -> YAML:
    y = YAML(typ="rt")
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    y.version = (1, 1)  # quote what YAML 1.1 readers (PyYAML, the note model) would not read as text: `'yes'`
    return y


_RT = _rt()  # building a YAML instance costs as much as a dump; one is kept, used under a lock
_RT_LOCK = threading.Lock()


def _render_key(key: str, value: Any, indent: str, newline: str) -> str:
    """`key: value` lines as ruamel's round-trip dumper writes them, indented and with the note's newline."""
    out = io.StringIO()
    data = CommentedMap()
    data[key] = value
    with _RT_LOCK:
        _RT.dump(data, out)
    lines = out.getvalue().split("\n")
    if lines[:2] == ["%YAML 1.1", "---"]:  # the version directive and document start that `version` adds
        del lines[:2]
    if lines and lines[-1] == "":
        lines.pop()
    return "".join(indent + line + newline for line in lines)


def _newline(text: str) -> str:
    """The newline the note's first line ends with (LF when it has none)."""
    nl = text.find("\n")
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


def _indent_of(keys: list[KeyLine]) -> str:
    """The indentation of a block's top-level keys (none in all but hand-made oddities)."""
    return " " * (keys[0].column if keys else 0)


def _is_trailer(line: str) -> bool:
    """A line at the end of a key's lines that belongs to what follows: blank, or an unindented comment."""
    return not line.strip() or line.startswith("#")


def update_frontmatter(text: str, updates: Mapping[str, Any], remove: Iterable[str] = ()) -> str:
    """Set and remove frontmatter keys, leaving every other byte of the note as it was.

    A note without frontmatter gets a new block (nothing is written when there is nothing to set). Raises
    `YamlRefused` when the existing block cannot be read safely or cannot be edited without touching other
    keys (the note is then left for a person to fix).
    """
    removed = [k for k in remove if k not in updates]
    split = split_frontmatter(text)
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    newline = _newline(text[len(bom) :])
    if split.yaml_text is None:
        block = render_frontmatter(updates)
        if not block.strip() or block.strip() == "{}":
            return text
        return bom + "---" + newline + block.replace("\n", newline) + "---" + newline + split.body
    yaml_text = split.yaml_text
    before = load_yaml(yaml_text)  # the safety checks (size, aliases, node budget) before anything else
    keys = top_level_keys(yaml_text)
    if keys is None:
        raise YamlRefused("frontmatter is not written as `key: value` lines (a `{...}` mapping?); edit it by hand")
    lines = yaml_text.split("\n")
    lines = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    ends = [k.line for k in keys[1:]] + ([len(lines)] if keys else [])
    named = set(updates) | set(removed)
    rendered = {key: _render_key(key, value, _indent_of(keys), newline) for key, value in updates.items()}
    replaced: dict[int, str] = {}  # first line of a named key -> its new text
    cut: set[int] = set()  # lines dropped
    placed: set[str] = set()
    for k, end in zip(keys, ends, strict=True):
        if k.key is None or k.key not in named:
            continue
        while end > k.line + 1 and _is_trailer(lines[end - 1]):
            end -= 1
        cut.update(range(k.line, end))
        if k.key in updates and k.key not in placed:
            replaced[k.line] = rendered[k.key]
            placed.add(k.key)
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in replaced:
            out.append(replaced[i])
        if i not in cut:
            out.append(line)
    out.extend(text_ for key, text_ in rendered.items() if key not in placed)
    new_yaml = "".join(out)
    _check(before, new_yaml, {k: _as_read(v) for k, v in updates.items()}, removed)
    start = len(bom) + text[len(bom) :].find("\n") + 1  # the block starts after the opening fence line
    if not new_yaml and yaml_text and not updates:
        return bom + split.body  # the last keys are gone: so is the block
    return text[:start] + new_yaml + text[start + len(yaml_text) :]


def _as_read(value: Any) -> Any:
    """A value as the note model reads it back: dates as ISO text, tuples as lists, keys as text."""
    if isinstance(value, Mapping):
        return {str(k): _as_read(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_read(v) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


def _check(before: dict[str, object], new_yaml: str, updates: Mapping[str, Any], removed: list[str]) -> None:
    """Refuse an edit whose new block does not read as the old one with exactly the named changes: the keys not
    named keep their values and order, each named key reads back as the value given."""
    try:
        after = load_yaml(new_yaml)
    except YamlRefused as exc:
        raise YamlRefused(f"frontmatter could not be edited safely ({exc}); edit it by hand") from None
    expected = {k: v for k, v in before.items() if k not in removed}
    expected.update(updates)
    if list(after.items()) != list(expected.items()):
        changed = sorted(k for k in set(after) | set(expected) if after.get(k) != expected.get(k) or k not in after)
        raise YamlRefused(
            "frontmatter could not be edited without changing more than was asked"
            + (f" ({', '.join(changed)})" if changed else " (their order)")
            + "; edit it by hand"
        )
