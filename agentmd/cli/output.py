"""How commands print: one JSON object with --json, else the text a person reads; a progress bar on a terminal.

Titles, snippets and bodies come from notes anyone could have written, so nothing a command prints for a person
reaches the terminal raw: `terminal_safe` shows every control character (ESC and so every CSI or OSC sequence,
C1 controls, bare carriage returns and backspaces that would overwrite a line, bidi overrides that reorder it)
as a visible escape such as `\\x1b`. Every human-readable print goes through `say` (or `emit`, `notices`);
JSON output stays exact JSON, with the same characters written as `\\u` escapes.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from typing import Any, TextIO

# C0 controls except tab and line feed, DEL, C1 controls (CSI U+009B, OSC U+009D...), and the Unicode format
# characters that move or reorder text on screen (bidi embeddings, overrides and isolates, line separators).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with every control character shown as a visible escape; tabs and line breaks kept (a CR that
    ends a Windows line break is dropped, a bare CR is shown)."""
    return _UNSAFE.sub(_visible, text.replace("\r\n", "\n"))


def one_line(text: str) -> str:
    """A single-line field (a title, a path): `terminal_safe`, with line breaks and tabs shown too, so a value
    can never start a line of its own."""
    return terminal_safe(text).replace("\n", "\\n").replace("\t", "\\t")


def json_text(payload: Any) -> str:
    """`payload` as one line of exact JSON; characters a terminal would act on are written as `\\u` escapes
    (json already escapes C0 controls; DEL, C1 controls and bidi controls are escaped here)."""
    import json

    text = json.dumps(payload, ensure_ascii=False, indent=None)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def say(out: TextIO, text: str) -> None:
    """Write human-readable `text` through `terminal_safe`."""
    out.write(terminal_safe(text))


def emit(out: TextIO, args: argparse.Namespace, payload: Mapping[str, object], text: str) -> None:
    """Write `payload` as one line of JSON when --json was given, else `text` ending with a newline."""
    if getattr(args, "json", False):
        out.write(json_text(payload) + "\n")
    else:
        say(out, text + ("\n" if text and not text.endswith("\n") else ""))


def notices(err: TextIO, lines: list[str]) -> None:
    """Notes a command passes on to the person (e.g. the store rebuilt a damaged index), one per line."""
    for line in lines:
        say(err, f"agentmd: {line}\n")


class ProgressBar:
    """`indexing [####......] 120/400` on one terminal line, redrawn when the percentage moves."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        if total == 0:
            return
        pct = done * 100 // total
        if pct == self.last and done != total:
            return
        self.last = pct
        filled = pct * 30 // 100
        self.stream.write(f"\rindexing [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}")
        if done == total:
            self.stream.write("\r" + " " * 60 + "\r")
        self.stream.flush()


def duration(seconds: float) -> str:
    """`42 s`, `3 min`, `1.5 h` (engine/times.py), loaded when a duration is shown: the parser stays light."""
    from agentmd.engine.times import duration as shown

    return shown(seconds)


class EmbedBar:
    """Foreground embedding progress on stderr: notes and chunks done, rate, time left. On a terminal one
    line redrawn in place; otherwise a plain line every `every` seconds (and the first and last)."""

    def __init__(self, stream: TextIO, *, tty: bool, every: float = 10.0, clock: Any = None) -> None:
        import time

        self.stream = stream
        self.tty = tty
        self.every = every
        self.clock = clock or time.monotonic
        self.last: float | None = None
        self.width = 0

    def __call__(self, p: Any) -> None:
        finished = p.chunks_done >= p.chunks_total
        now = self.clock()
        if not self.tty and not finished and self.last is not None and now - self.last < self.every:
            return
        self.last = now
        rate = p.rate
        left = p.seconds_left
        text = (
            f"embedding {p.notes_done:,}/{p.notes_total:,} notes, {p.chunks_done:,}/{p.chunks_total:,} chunks"
            + (f", {rate:.1f} chunks/s" if rate else "")
            + (f", {duration(left)} left" if left is not None and not finished else "")
        )
        if self.tty:
            pad = " " * max(0, self.width - len(text))
            self.width = len(text)
            self.stream.write("\r" + text + pad + ("\n" if finished else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
