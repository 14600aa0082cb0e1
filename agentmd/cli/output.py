"""How commands print: one JSON object with --json, else the text a person reads; a progress bar on a terminal."""

from __future__ import annotations

import argparse
from typing import Any, TextIO


def emit(out: TextIO, args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    """Write `payload` as one line of JSON when --json was given, else `text` ending with a newline."""
    if getattr(args, "json", False):
        import json

        out.write(json.dumps(payload, ensure_ascii=False, indent=None) + "\n")
    else:
        out.write(text + ("\n" if text and not text.endswith("\n") else ""))


def notices(err: TextIO, lines: list[str]) -> None:
    """Notes a command passes on to the person (e.g. the store rebuilt a damaged index), one per line."""
    for line in lines:
        err.write(f"agentmd: {line}\n")


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
    """`42 s`, `3 min`, `1.5 h`."""
    if seconds < 90:
        return f"{max(0, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


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
