"""The catalog: one sqlite3 database beside the index holding what is known about each note.

It is a cache. Deleting it costs one rebuild. Per-note rows record the stat key reconcile compares
(mtime_ns, size, ctime_ns, inode), the content hash, the captured date and where it came from, and the
fields the rules read. Per-document tables (`PER_DOC_TABLES`) hang off the note's path; deleting a note
clears all of them in one transaction, and an orphan sweep is the backstop.

`Catalog` and the modules it is made of hold every SQL statement run against the catalog: the daemon's
indexer, the recall hook's read-only look-ups, the usage counters (engine/index/usage.py) and the
session-start hook's status reads all go through it. Its parts, each the owner of its tables:
catalog_schema (the tables, their version, the note row), catalog_base (opening, handles, transactions,
`meta`), catalog_notes (`notes` and the stat keys), catalog_links (`links`, `entities`) and catalog_usage
(`usage`). They import only the standard library at load time (the note model's `Link` and `EntityRef`
are imported when a query first builds them), so the light hook path can count injections without loading
the YAML parser.
"""

from __future__ import annotations

from agentmd.engine.index.catalog_notes import CatalogNotes
from agentmd.engine.index.catalog_schema import CatalogError
from agentmd.engine.index.catalog_usage import CatalogUsage

__all__ = ["Catalog", "CatalogError"]


class Catalog(CatalogNotes, CatalogUsage):
    """One catalog file: its notes, links, entities and usage counts."""
