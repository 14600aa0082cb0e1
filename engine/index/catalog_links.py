"""The catalog's `links` and `entities` tables: the links each note writes and the entities it references or
is the page of."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agentmd.engine.index.catalog_base import CatalogBase

if TYPE_CHECKING:
    from agentmd.vault_schema import EntityRef, Link

_LINK_COLUMNS = "line, kind, target, heading, block, alias, embed, attachment"


def _links(rows: Iterable[tuple[Any, ...]]) -> list[Link]:
    """Links from rows of `_LINK_COLUMNS`."""
    from agentmd.vault_schema import Link

    return [
        Link(target, heading, block, alias, bool(embed), kind, line, bool(attachment))
        for line, kind, target, heading, block, alias, embed, attachment in rows
    ]


def _sourced_links(rows: Iterable[tuple[Any, ...]]) -> list[tuple[str, Link]]:
    """(source path, link) from rows of the source path followed by `_LINK_COLUMNS`."""
    rows = list(rows)
    return list(zip((r[0] for r in rows), _links(r[1:] for r in rows), strict=True))


class CatalogLinks(CatalogBase):
    """Reads of the links and entities tables."""

    def links_from(self, path: str) -> list[Link]:
        """The links written in one note, in text order. Targets are as written; resolve with engine.graph."""
        q = f"SELECT {_LINK_COLUMNS} FROM links WHERE path=? ORDER BY line, rowid"
        return _links(self._q(q, (path,)))

    def links_with_keys(self, keys: Iterable[str]) -> list[tuple[str, Link]]:
        """(source path, link) for every link whose target names one of these lower-cased file names
        (without `.md`; "" for links to a heading of the same note): the candidates for backlinks."""
        wanted = sorted(set(keys))
        out: list[tuple[str, Link]] = []
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT path, {_LINK_COLUMNS} FROM links WHERE target_key IN ({marks}) ORDER BY path, line, rowid"
            out.extend(_sourced_links(self._q(q, chunk)))
        return out

    def all_links(self) -> list[tuple[str, Link]]:
        """(source path, link) for every link in the vault, by source path and line."""
        q = f"SELECT path, {_LINK_COLUMNS} FROM links ORDER BY path, line, rowid"
        return _sourced_links(self._q(q))

    def entities_of(self, path: str) -> list[EntityRef]:
        """The entity references one note makes, in text order (not its own `entity:` declaration)."""
        from agentmd.vault_schema import EntityRef

        q = "SELECT uri, kind, text, line FROM entities WHERE path=? AND page=0 ORDER BY line, rowid"
        return [EntityRef(*r) for r in self._q(q, (path,))]

    def notes_mentioning(self, uri: str) -> list[str]:
        """Paths of the notes that reference an entity (or declare themselves its page), sorted."""
        q = "SELECT DISTINCT path FROM entities WHERE uri=? ORDER BY path"
        return [r[0] for r in self._q(q, (uri.lower(),))]

    def entity_page_paths(self, uris: Iterable[str]) -> dict[str, list[str]]:
        """uri -> the paths of the notes whose frontmatter declares them the page for it (sorted)."""
        wanted = sorted({u.lower() for u in uris})
        out: dict[str, list[str]] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT uri, path FROM entities WHERE page=1 AND uri IN ({marks}) ORDER BY uri, path"
            for uri, path in self._q(q, chunk):
                out.setdefault(uri, []).append(path)
        return out
