"""The link graph: links resolved at query time against the catalog's current paths.

The catalog stores each link as written (`vault_schema.Link`); resolution happens here, when asked, so a
dangling link resolves as soon as its target note appears, without re-reading the note that links to it,
and a renamed target shows up as dangling at once.

Resolution (`resolve`):
  1. A target written relative (`./x`, `../x/y.md`) is first joined to the linking note's folder; an exact
     match wins.
  2. A target starting with `/` is a vault path; an exact match wins.
  3. Otherwise, and as the fallback, every note whose file name is the target's (case-insensitive, `.md`
     optional, as Obsidian resolves `[[note]]` by name anywhere in the vault) is a candidate, and the one
     sharing the longest path suffix with the target wins (`[[b/note]]` prefers `a/b/note.md` over
     `c/note.md`; a target whose folders match no candidate still resolves by name, since agent-written
     links often carry a stale folder). Ties go to the nearest candidate: same folder first, then the
     fewest folder steps from the linking note, then the path in lexicographic order, so the answer never
     depends on the catalog's order.
  A link with an empty target (`[[#heading]]`) points at its own note. Attachments (images, PDFs...) are
  not notes: they are listed but never resolved, never dangling, and do not connect notes.

Orphans are notes with no resolved link to or from another note (links to themselves and to attachments
do not count).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

from agentmd.engine.errors import AgentmdError, UsageError
from agentmd.engine.index.catalog import Catalog
from agentmd.vault_schema import Link, target_key

StemIndex = dict[str, list[str]]


def stem_index(paths: Iterable[str]) -> StemIndex:
    """Lower-cased file name without `.md` -> the paths that have it (sorted)."""
    out: StemIndex = {}
    for p in sorted(paths):
        out.setdefault(target_key(p), []).append(p)
    return out


def _fold(text: str) -> str:
    """Lower case, and NFC for non-ASCII text (as `target_key` does)."""
    text = text.lower()
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _folder(path: str) -> list[str]:
    return path.split("/")[:-1]


def _join(folder: list[str], parts: list[str]) -> str | None:
    """`parts` (which may hold `.` and `..`) taken from `folder`; None when it climbs out of the vault."""
    out = list(folder)
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                return None
            out.pop()
        else:
            out.append(part)
    return "/".join(out)


def _exact(candidates: list[str], want: str) -> str | None:
    want = _fold(want)
    if not want.endswith(".md"):
        want += ".md"
    hits = [c for c in candidates if _fold(c) == want]
    return min(hits) if hits else None


def _distance(a: list[str], b: list[str]) -> int:
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return (len(a) - common) + (len(b) - common)


def resolve(target: str, source: str, paths: Sequence[str], *, by_stem: StemIndex | None = None) -> str | None:
    """The note path a link target written in `source` points to, or None when it is dangling.

    `paths` are the vault-relative paths of the notes that exist; pass `by_stem=stem_index(paths)` when
    resolving many links against the same paths.
    """
    written = target.strip().replace("\\", "/")
    if not written:
        return source
    key = target_key(written)
    if not key:
        return None
    candidates = by_stem.get(key, []) if by_stem is not None else [p for p in paths if target_key(p) == key]
    if not candidates:
        return None
    parts = written.split("/")
    if written.startswith(("./", "../")):
        joined = _join(_folder(source), parts)
        hit = _exact(candidates, joined) if joined else None
        if hit:
            return hit
    elif written.startswith("/"):
        hit = _exact(candidates, written.lstrip("/"))
        if hit:
            return hit
    wanted = [_fold(p) for p in parts if p not in ("", ".", "..")]
    wanted[-1] = key
    source_folder = [_fold(p) for p in _folder(source)]

    def rank(path: str) -> tuple[int, int, str]:
        folded = _fold(path)
        have = folded[:-3].split("/") if folded.endswith(".md") else folded.split("/")
        matched = 0
        for x, y in zip(reversed(have), reversed(wanted), strict=False):
            if x != y:
                break
            matched += 1
        return (-matched, _distance(source_folder, have[:-1]), path)

    return min(candidates, key=rank)


def written_form(link: Link) -> str:
    """The link as it would be written in the note."""
    frag = f"#^{link.block}" if link.block else (f"#{link.heading}" if link.heading else "")
    if link.kind == "wiki":
        alias = f"|{link.alias}" if link.alias else ""
        return f"{'!' if link.embed else ''}[[{link.target}{frag}{alias}]]"
    return f"{'!' if link.embed else ''}[{link.alias or ''}]({link.target}{frag})"


class LinkJson(TypedDict):
    """One link as `agentmd links --json` and the page show it."""

    path: NotRequired[str]  # the note it is written in, where that is not the note asked about
    line: int
    kind: str  # wiki | markdown
    target: str
    heading: str | None
    block: str | None
    alias: str | None
    embed: bool
    attachment: bool
    resolved: str | None  # the note it names, None for a dangling link or an attachment
    written: str  # as the note writes it


class LinksJson(TypedDict):
    """A note's links: out (each with `resolved`), back, dangling and attachments."""

    out: list[LinkJson]
    back: list[LinkJson]
    dangling: list[LinkJson]
    attachments: list[LinkJson]


def _link_dict(link: Link, resolved: str | None, source: str | None = None) -> LinkJson:
    out: LinkJson = {
        "line": link.line,
        "kind": link.kind,
        "target": link.target,
        "heading": link.heading,
        "block": link.block,
        "alias": link.alias,
        "embed": link.embed,
        "attachment": link.attachment,
        "resolved": resolved,
        "written": written_form(link),
    }
    return {"path": source, **out} if source is not None else out


# The note paths and their stem index, by catalog file, with the catalog's notes token they were read at: the
# recall hook builds a graph for every prompt that gets notes, and reading and indexing every path costs time in
# proportion to the vault (bench/RESULTS.md).
_SNAPSHOTS: dict[Path, tuple[str, list[str], StemIndex]] = {}
_SNAPSHOTS_MAX = 8


def _snapshot(catalog: Catalog) -> tuple[list[str], StemIndex]:
    """Every note path (sorted) and their stem index, read again only when the catalog's notes changed. The
    token is read first, so a change made meanwhile is read again next time, never missed."""
    token = catalog.notes_token()
    kept = _SNAPSHOTS.get(catalog.path)
    if token is not None and kept is not None and kept[0] == token:
        return kept[1], kept[2]
    paths = catalog.paths()
    by_stem = stem_index(paths)
    if token is not None:
        if len(_SNAPSHOTS) >= _SNAPSHOTS_MAX and catalog.path not in _SNAPSHOTS:
            _SNAPSHOTS.pop(next(iter(_SNAPSHOTS)))
        _SNAPSHOTS[catalog.path] = (token, paths, by_stem)
    return paths, by_stem


class Graph:
    """The catalog's links resolved against its current paths (one snapshot, shared by the graphs built
    until the catalog's notes change; read-only)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        paths, self.by_stem = _snapshot(catalog)
        self.paths: Sequence[str] = paths

    def resolve(self, target: str, source: str) -> str | None:
        return resolve(target, source, self.paths, by_stem=self.by_stem)

    def links_of(self, path: str) -> LinksJson:
        out, dangling, attachments = [], [], []
        for link in self.catalog.links_from(path):
            if link.attachment:
                attachments.append(_link_dict(link, None))
                continue
            resolved = self.resolve(link.target, path)
            out.append(_link_dict(link, resolved))
            if resolved is None:
                dangling.append(out[-1])
        back = [
            _link_dict(link, path, source)
            for source, link in self.catalog.links_with_keys([target_key(path)])
            if source != path and not link.attachment and self.resolve(link.target, source) == path
        ]
        return {"out": out, "back": back, "dangling": dangling, "attachments": attachments}

    def edges(self) -> list[tuple[str, Link, str | None]]:
        """(source, link, resolved path or None) for every note link (attachments left out)."""
        return [
            (source, link, self.resolve(link.target, source))
            for source, link in self.catalog.all_links()
            if not link.attachment
        ]

    def dangling(self) -> list[LinkJson]:
        rows = [_link_dict(link, None, source) for source, link, to in self.edges() if to is None]
        return sorted(rows, key=lambda r: (r["target"].lower(), r.get("path", ""), r["line"]))

    def orphans(self) -> list[str]:
        connected: set[str] = set()
        for source, _link, to in self.edges():
            if to is not None and to != source:
                connected.add(source)
                connected.add(to)
        return [p for p in self.paths if p not in connected]

    def summary(self) -> dict[str, int]:
        edges = self.edges()
        resolved = sum(1 for _s, _l, to in edges if to is not None)
        return {
            "notes": len(self.paths),
            "links": len(edges),
            "resolved": resolved,
            "dangling": len(edges) - resolved,
            "attachments": sum(1 for _s, link in self.catalog.all_links() if link.attachment),
            "orphans": len(self.orphans()),
        }


def links_of(catalog: Catalog, path: str) -> LinksJson:
    """A note's links out (each with `resolved`), its backlinks, its dangling links and its attachments."""
    return Graph(catalog).links_of(path)


def dangling(catalog: Catalog) -> list[LinkJson]:
    """Every link whose target matches no note, sorted by target, then source."""
    return Graph(catalog).dangling()


def orphans(catalog: Catalog) -> list[str]:
    """Notes with no resolved link to or from another note, sorted."""
    return Graph(catalog).orphans()


def entity_pages(catalog: Catalog, uris: Iterable[str]) -> dict[str, str]:
    """uri -> the note whose frontmatter (`entity: <uri>`) declares it that entity's page. A URI two notes
    both declare names neither, so it is left out."""
    return {uri: paths[0] for uri, paths in catalog.entity_page_paths(uris).items() if len(paths) == 1}


# -- naming a note ---------------------------------------------------------------------------------------------


def find_note(graph: Graph, vault: Path, given: str) -> str:
    """The one indexed note a person means by `given`: a vault-relative path, an absolute path inside the
    vault, or a name or path suffix as a [[link]] would write it. None or several: an error saying what to give."""
    text = given.strip()
    candidate = Path(text).expanduser()
    if candidate.is_absolute():
        try:
            text = candidate.resolve().relative_to(vault).as_posix()
        except ValueError:
            raise UsageError(f"{given} is outside the vault {vault}") from None
    text = text.removeprefix("./")
    candidates = graph.by_stem.get(target_key(text), [])
    if text in candidates:
        return text
    # A name, or a path suffix: every note it fits, not the one a link written at the vault root would pick.
    wanted = [_fold(p) for p in text.removesuffix(".md").split("/") if p]
    fits = [c for c in candidates if _fold(c).removesuffix(".md").split("/")[-len(wanted) :] == wanted]
    if len(fits) == 1:
        return fits[0]
    if not fits:
        raise AgentmdError(
            f"no indexed note matches {given!r}; give a vault-relative path (see `agentmd links --orphans` "
            "for the list of notes) or run `agentmd reindex` if the note is new"
        )
    raise UsageError(f"{given!r} names {len(fits)} notes; give one path: " + ", ".join(fits))
