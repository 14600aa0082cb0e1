"""Helpers the note-model tests share: parse text as a note at a fixed mtime, wrap YAML in a frontmatter block."""

from __future__ import annotations

from agentmd.vault_schema import Note, parse_note

MTIME_NS = 1_700_000_000 * 10**9  # 2023-11-14T22:13:20Z
MTIME_ISO = "2023-11-14T22:13:20Z"


def parse(data: str | bytes, path: str = "notes/note.md", mtime_ns: int = MTIME_NS) -> Note:
    return parse_note(path, data.encode("utf-8") if isinstance(data, str) else data, mtime_ns)


def fm(yaml_text: str, body: str = "Body.\n") -> str:
    return f"---\n{yaml_text.strip()}\n---\n{body}"
