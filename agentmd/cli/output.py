"""How commands print: one JSON object with --json, else the text a person reads; a progress bar on a terminal."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO


def emit(out: TextIO, args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    """Write `payload` as one line of JSON when --json was given, else `text` ending with a newline."""
    if getattr(args, "json", False):
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
