"""Shared by the curation tests: a real git vault, the CLI's arguments for it, HEAD and the tree."""

from __future__ import annotations

from pathlib import Path

from daemon_helpers import git


def head(vault: Path) -> str:
    return git(vault, "rev-parse", "HEAD").strip()


def dirty(vault: Path) -> str:
    return git(vault, "status", "--porcelain")


def snapshot(vault: Path) -> dict[str, bytes]:
    """Every file outside `.git`, with its bytes."""
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in sorted(vault.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(vault).parts
    }


def note(vault: Path, rel: str, body: str, **fm: object) -> Path:
    lines = ["---"] + [f"{k}: {v}" for k, v in fm.items()] + ["---", body]
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
