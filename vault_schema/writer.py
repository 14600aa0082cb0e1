"""Writing notes: new notes rendered from fields, and field edits that keep a human's frontmatter intact.

A new note's frontmatter is rendered with PyYAML's safe dumper in the order the fields are given. An
edit to an existing note goes through ruamel.yaml's round-trip mode, so key order, comments, quoting
and the body's bytes are kept; only the named keys change.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError as RuamelError

from .errors import YamlRefused
from .frontmatter import load_yaml, split_frontmatter


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
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def update_frontmatter(text: str, updates: Mapping[str, Any], remove: Iterable[str] = ()) -> str:
    """Set and remove frontmatter keys, leaving every other byte of the note as it was.

    A note without frontmatter gets a new block. Raises `YamlRefused` when the existing block cannot be
    read safely (the note is then left for a person to fix).
    """
    split = split_frontmatter(text)
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    if split.yaml_text is None:
        block = render_frontmatter(updates)
        return bom + "---\n" + block + "---\n" + split.body
    load_yaml(split.yaml_text)  # the safety checks (size, aliases, node budget) before ruamel sees it
    y = _rt()
    try:
        data = y.load(split.yaml_text) if split.yaml_text.strip() else None
    except RuamelError as exc:
        raise YamlRefused(f"frontmatter could not be edited safely: {exc}; fix the YAML by hand") from None
    if data is None:
        from ruamel.yaml.comments import CommentedMap

        data = CommentedMap()
    for key in remove:
        data.pop(key, None)
    for key, value in updates.items():
        data[key] = value
    out = io.StringIO()
    y.dump(data, out)
    head = text[: len(bom) + 4]  # the opening fence line as written ("---\n")
    newline = "\r\n" if "\r\n" in head else "\n"
    block = out.getvalue().replace("\n", newline) if newline != "\n" else out.getvalue()
    return bom + "---" + newline + block + "---" + newline + split.body
