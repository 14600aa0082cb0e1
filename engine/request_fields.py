"""Request fields declared once: a request dataclass's fields (engine/search/planning.py's `SearchRequest`,
engine/write/request.py's `CaptureRequest`) carry what a client must know of them, and the two doors that
take requests as JSON read it from there:

- the MCP tools' input schemas (`input_schema`: each field's JSON type from its annotation, its description,
  bounds, enum, pattern and the default a client may leave to the server), and
- the `/v1` routes' check of each field's JSON type before any work is done (`json_types`).

A field is declared with `dataclasses.field(metadata=described(...))`; one without a description is not a
tool argument (e.g. `explain`, which only the CLI and the JSON routes take), though its JSON type is checked.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypedDict

DESCRIPTION = "description"
SCHEMA = "schema"
DEFAULT = "json_default"


def described(description: str, *, default: object = dataclasses.MISSING, **schema: object) -> dict[str, object]:
    """The metadata of a request field that is a tool argument: its description for a model, the JSON-schema
    keywords that bound it (`minimum`, `maxLength`, `enum`, `pattern`, or `type` where the schema's type is
    narrower than the field's own, as for `importance`), and `default`, the value a request left without the
    field is given by the doors (published in the schema)."""
    out: dict[str, object] = {DESCRIPTION: description, SCHEMA: schema}
    if default is not dataclasses.MISSING:
        out[DEFAULT] = default
    return out


def _arms(hint: object) -> tuple[object, ...]:
    """The members of a union annotation (`str | None` -> str, NoneType); any other annotation alone."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return typing.get_args(hint)
    return (hint,)


def _is_words(hint: object) -> bool:
    return typing.get_origin(hint) is tuple and typing.get_args(hint) == (str, ...)


_SCHEMA_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _schema_type(hint: object) -> dict[str, object]:
    arms = [a for a in _arms(hint) if a is not type(None)]
    if len(arms) == 1 and _is_words(arms[0]):
        return {"type": "array", "items": {"type": "string", "minLength": 1}}
    if len(arms) == 1 and arms[0] in _SCHEMA_TYPES:
        return {"type": _SCHEMA_TYPES[arms[0]]}
    raise TypeError(f"no JSON-schema type for {hint!r}; give one with described(type=...)")


class InputSchema(TypedDict):
    """A tool's input schema as the MCP tool list publishes it."""

    type: str  # "object"
    properties: dict[str, dict[str, object]]  # each field's JSON schema, in declaration order
    required: list[str]
    additionalProperties: bool


def input_schema(cls: type[Any]) -> InputSchema:
    """The JSON schema of `cls`'s tool arguments (its described fields, in declaration order): a field without
    a default of its own is required; no other property is allowed."""
    hints = typing.get_type_hints(cls)
    properties: dict[str, dict[str, object]] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        if DESCRIPTION not in f.metadata:
            continue
        shape: Mapping[str, object] = f.metadata[SCHEMA]
        prop = _schema_type(hints[f.name]) if "type" not in shape else {}
        prop.update(shape)
        if DEFAULT in f.metadata:
            prop["default"] = f.metadata[DEFAULT]
        prop[DESCRIPTION] = f.metadata[DESCRIPTION]
        properties[f.name] = prop
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def missing_fields(cls: type[Any], data: Mapping[str, object]) -> list[str]:
    """The fields of `cls` a request must give (no default) that `data` leaves out, in declaration order."""
    return [
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING and f.name not in data
    ]


def json_defaults(cls: type[Any]) -> dict[str, object]:
    """The values the doors give the fields a request leaves out, where they differ from the dataclass's own."""
    return {f.name: f.metadata[DEFAULT] for f in dataclasses.fields(cls) if DEFAULT in f.metadata}


def json_types(cls: type[Any]) -> dict[str, tuple[type, ...]]:
    """The JSON types each field of `cls` may arrive as in a `/v1` body: its annotation's, with an integer
    also taken for a number, and a comma-separated string for a list of words (split by the request)."""
    hints = typing.get_type_hints(cls)
    out: dict[str, tuple[type, ...]] = {}
    for f in dataclasses.fields(cls):
        allowed: list[type] = []
        for arm in _arms(hints[f.name]):
            if _is_words(arm):
                allowed += [list, str, type(None)]
            elif arm is float:
                allowed += [int, float]
            elif isinstance(arm, type):
                allowed.append(arm)
        out[f.name] = tuple(dict.fromkeys(allowed))
    return out


def over_length(request: object) -> str | None:
    """What of a request dataclass is longer than its field's schema allows (`maxLength` of a text, or of
    each entry of a list), as a phrase naming the field; None when all fit. The doors that skip the tool schema
    (the CLI, `/v1`) apply the same bounds with it."""
    for f in dataclasses.fields(request):  # type: ignore[arg-type]
        shape: Mapping[str, Any] = f.metadata.get(SCHEMA, {})
        value = getattr(request, f.name)
        longest = shape.get("maxLength")
        if isinstance(value, str) and isinstance(longest, int) and len(value) > longest:
            return f"{f.name} is {len(value):,} characters long, over the {longest:,} allowed"
        items = shape.get("items")
        longest = items.get("maxLength") if isinstance(items, Mapping) else None
        if isinstance(value, tuple | list) and isinstance(longest, int):
            for i, x in enumerate(value):
                if isinstance(x, str) and len(x) > longest:
                    return f"entry {i} of {f.name} is {len(x):,} characters long, over the {longest:,} allowed"
    return None
