"""Helpers for the storage-rules contract tests: vault contract files written into a real temporary vault."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

DAY = dt.date(2026, 3, 7)


def yaml_block(text: str) -> str:
    return f"```yaml\n{text.strip()}\n```\n"


def write_vault_contract(vault: Path, text: str) -> Path:
    path = vault / "standards" / "storage-rules.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
