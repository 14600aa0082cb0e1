"""Merging a rule stated twice: the older note folded into the newer, whose wording is kept.

The newer note keeps every byte of its body. Its frontmatter gains what the older one carried that it lacks:
the older's title and aliases as aliases (so a search or a link by the older name still finds the rule), its
tags, the notes it linked to (in its body or its properties) as `related` links, and `merged_from` naming the
older note. The older note is walled, never deleted: `lifecycle: superseded`, `superseded_by` naming the newer,
`retired_reason` and `retired_at`, so it stays in the vault and in git and drops out of search and recall like
any superseded note. Both edits are one step, so applying them is one commit and `agentmd undo` takes both back.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from agentmd.engine.curate.actions import read_frontmatter
from agentmd.vault_schema import parse_note, update_frontmatter


def _listed(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int | float) and str(v).strip()]
    return []


def _names_of(path: str) -> set[str]:
    """What a link to the note at `path` may say: its path with or without `.md`, its file name."""
    stem = path[:-3] if path.endswith(".md") else path
    return {path.casefold(), stem.casefold(), PurePosixPath(stem).name.casefold()}


def _targets(path: str, text: str, link_convention: str) -> list[str]:
    """The notes `text` links to, as written, each once, in order (attachments and self-links left out)."""
    note = parse_note(path, text.encode("utf-8"), 0, link_convention=link_convention)
    out: list[str] = []
    for link in note.links:
        target = link.target.strip()
        if target and not link.attachment and target not in out:
            out.append(target)
    return out


def merged_texts(
    older: str,
    older_text: str,
    newer: str,
    newer_text: str,
    *,
    when: str,
    reason: str,
    link_convention: str = "obsidian",
) -> tuple[str, str]:
    """(the older note's new text, the newer note's new text) for folding `older` into `newer`."""
    ofm = read_frontmatter(older_text) or {}
    nfm = read_frontmatter(newer_text) or {}
    updates: dict[str, object] = {}

    newer_title = str(nfm.get("title") or "").strip()
    aliases = _listed(nfm.get("aliases"))
    known = {a.casefold() for a in aliases} | {newer_title.casefold()}
    for name in [str(ofm.get("title") or "").strip(), *_listed(ofm.get("aliases"))]:
        if name and name.casefold() not in known:
            aliases.append(name)
            known.add(name.casefold())
    if aliases != _listed(nfm.get("aliases")):
        updates["aliases"] = aliases

    tags = list(dict.fromkeys([*_listed(nfm.get("tags")), *_listed(ofm.get("tags"))]))
    if tags != _listed(nfm.get("tags")):
        updates["tags"] = tags

    related = _listed(nfm.get("related"))
    linked = {t.casefold() for t in _targets(newer, newer_text, link_convention)} | _names_of(newer)
    linked |= {r.strip("[]").split("|")[0].casefold() for r in related}
    extra = [t for t in _targets(older, older_text, link_convention) if t.casefold() not in linked]
    if extra:
        updates["related"] = [*related, *(f"[[{t}]]" for t in extra)]

    updates["merged_from"] = list(dict.fromkeys([*_listed(nfm.get("merged_from")), older]))
    new_newer = update_frontmatter(newer_text, updates)
    new_older = update_frontmatter(
        older_text,
        {"lifecycle": "superseded", "superseded_by": newer, "retired_reason": reason, "retired_at": when},
    )
    return new_older, new_newer
