"""Notes the index holds but could not read whole: frontmatter that is not valid YAML (so the note's title, tags,
status and type are not read) or bytes that are not UTF-8. Such a note is still indexed by its text; status
and `agentmd reindex` name it so that it gets fixed.

Template files are left out. Obsidian's Templates plugin and the Templater plugin keep templates whose
frontmatter holds placeholders such as `title: {{title}}`, which are not valid YAML until the template is
used; the folders they name in the vault's `.obsidian` settings are not reported.
"""

from __future__ import annotations

from pathlib import Path

from agentmd.engine.fsutil import read_json
from agentmd.engine.index.catalog import Catalog

SHOWN = 5  # notes named in a status or reindex line; the count covers them all

# (settings file under .obsidian, the key naming the templates folder)
TEMPLATE_SETTINGS = (
    ("templates.json", "folder"),  # the core Templates plugin
    ("plugins/templater-obsidian/data.json", "templates_folder"),  # Templater
)


def template_folders(vault: Path) -> tuple[str, ...]:
    """The vault-relative template folders the vault's Obsidian settings name (none when it has no such
    settings)."""
    out = []
    for name, key in TEMPLATE_SETTINGS:
        data = read_json(vault / ".obsidian" / name)
        folder = data.get(key) if data else None
        if isinstance(folder, str) and folder.strip("/ "):
            out.append(folder.strip("/ ") + "/")
    return tuple(out)


def unreadable_notes(vault: Path, catalog: Catalog) -> list[tuple[str, str]]:
    """Every (path, what could not be read) outside the template folders, in path order."""
    templates = template_folders(vault)
    return [(path, why) for path, why in catalog.unreadable() if not path.startswith(templates)]
