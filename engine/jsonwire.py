"""JSON through the interpreter's own C codec (`_json`), without the `json` package's Python layer.

`json` imports `re` (and with it `enum`, `functools` and `collections`) for its pure-Python fallbacks; on this
machine that is about 18 ms of CPU at every process start, most of the prompt hook's own imports. The C scanner
and encoder that `json` itself uses when they exist need none of it. Same output as `json.dumps(obj,
separators=(",", ":"))` with ASCII escapes, and the same values as `json.loads`; an error is a `ValueError`
(`json.JSONDecodeError` when the scanner raises it, which loads `json.decoder` then; where that fails, the
scanner ends in a `SystemError`, which is turned into a `ValueError` too).
"""

from __future__ import annotations

import _json

TYPE_CHECKING = False  # `typing` is one more import on the prompt hook's path; mypy reads the block below
if TYPE_CHECKING:
    from typing import Any


class _Context:
    """What the C scanner reads off a decoder: `json.loads`'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


def _refuse(obj: object) -> object:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


_scan = _json.make_scanner(_Context())  # type: ignore[arg-type]  # the stub names the class, the C code reads these fields
_encode = _json.make_encoder({}, _refuse, _json.encode_basestring_ascii, None, ":", ",", False, False, True)


def loads(text: str | bytes) -> Any:
    """The JSON value in `text`; ValueError when it holds anything else."""
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8")
    body = text.strip(" \t\n\r")
    try:
        value, end = _scan(body, 0)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    except SystemError:  # the scanner's error path reaches for `json.decoder`, which this process never loaded
        raise ValueError("not JSON: the text is malformed or cut short") from None
    if end != len(body):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps(value: object) -> str:
    """`value` as compact JSON, non-ASCII escaped."""
    return "".join(_encode(value, 0))
