"""Ingest: existing Markdown (CLAUDE.md files, runbooks, old note folders) brought in as notes awaiting review.

Walk. A file is taken when it is a `.md` file (any depth, dot folders skipped) or named on the command line.
A link-index note (a body that is only a list of links, like a MEMORY.md or a map of content) is skipped.

Chunk. Leading frontmatter is dropped but for its `title` (the note's title when the body has no `#`
heading) and its `tags` (kept on each note). A body within the token budget (~512 estimated tokens, 4 characters a
token) is one chunk; a longer one is cut at its `##` headings, and a section still over budget at paragraph
and then line boundaries, so no chunk passes the budget.

Key. Each chunk's note is named by where it comes from alone: `slug(file)-slug(heading)`, later pieces of one
heading taking `-2`, `-3` in document order. The content is not part of the key, so an edited section lands
on the note its earlier edition made (updated in place) and an unchanged source changes nothing.

Govern. Every chunk passes the content prefilters (refusals counted per reason) and the door; an exact
duplicate of another chunk of the same run is written once. A note whose key is already retired is never
written again: retiring is the owner's verdict. Notes are written `status: unfiled`, `trust: untrusted`,
`source: ingest:<relative path>`, into `<memory>/ingested/`, and committed with `origin: ingest`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentmd.engine.curate.actions import read_frontmatter, stamp
from agentmd.engine.curate.steps import Edit, Step, digest
from agentmd.engine.write.request import MEMORY_SPACE, slugify
from agentmd.rules import Contract, check_fields, decide
from agentmd.vault_schema import YamlRefused, load_yaml, render_note, split_frontmatter, update_frontmatter

TOKEN_BUDGET = 512
CHARS_PER_TOKEN = 4
NAMED_FILES = ("CLAUDE.md", "AGENTS.md", "README.md")
INGEST_FOLDER = "ingested"
MAX_TAGS = 50  # a source's tags kept on its notes, as a capture keeps at most
_LINK_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])?\s*(?:\[\[[^\]]+\]\]|\[[^\]]*\]\([^)]+\))\s*(?:[-–—:].*)?$")
_H2 = re.compile(r"^##\s+(.*?)\s*#*\s*$")
_H1 = re.compile(r"^#\s+(.*?)\s*#*\s*$")


@dataclass(frozen=True)
class Chunk:
    key: str
    heading: str
    text: str
    title: str | None = None  # the note's title when not the heading: the source's frontmatter `title`
    tags: tuple[str, ...] = ()  # the source's frontmatter tags, kept on each of its notes
    aliases: tuple[str, ...] = ()  # the source file's name, on its first note: `[[name]]` links still resolve


@dataclass
class IngestReport:
    files: int = 0
    skipped_index: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    deduped: int = 0
    skipped_retired: list[str] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)
    # each part the content checks turned away: its source file, its heading and what was found there
    rejected_parts: list[dict[str, str]] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "files": self.files,
            "created": len(self.created),
            "updated": len(self.updated),
            "unchanged": self.unchanged,
            "deduped": self.deduped,
            "skipped_index": len(self.skipped_index),
            "skipped_retired": len(self.skipped_retired),
            "rejected": dict(sorted(self.rejected.items())),
            "rejected_parts": self.rejected_parts,
            "refused": self.refused,
            "errors": self.errors,
            "paths": {"created": self.created, "updated": self.updated, "retired": self.skipped_retired},
        }


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def is_link_index(body: str) -> bool:
    """A body that is only headings and a list of links: an index of other notes, not knowledge."""
    lines = [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return bool(lines) and all(_LINK_LINE.match(ln) for ln in lines)


def _pieces(text: str, budget_chars: int) -> list[str]:
    """`text` cut at paragraph, then line, then hard boundaries so no piece passes the budget."""
    if len(text) <= budget_chars:
        return [text]
    out: list[str] = []
    current = ""
    for para in re.split(r"(?<=\n)\n+", text):
        units = [para] if len(para) <= budget_chars else para.splitlines(keepends=True)
        for unit in units:
            while len(unit) > budget_chars:
                if current:
                    out.append(current)
                    current = ""
                out.append(unit[:budget_chars])
                unit = unit[budget_chars:]
            if current and len(current) + len(unit) + 1 > budget_chars:
                out.append(current)
                current = ""
            current = f"{current}\n{unit}" if current and not current.endswith("\n\n") and unit else current + unit
    if current.strip():
        out.append(current)
    return [p for p in out if p.strip()]


def file_slug(relpath: str) -> str:
    """The slug of a source file's relative path; a long one is cut and given a short hash of the whole path,
    so two long paths that share their first words still make different keys."""
    full = slugify(relpath.rsplit(".", 1)[0].replace("/", " "), limit=400)
    if len(full) <= 64:
        return full
    return f"{slugify(full, limit=56)}-{hashlib.sha256(relpath.encode('utf-8')).hexdigest()[:6]}"


def chunk_file(relpath: str, text: str, budget: int = TOKEN_BUDGET) -> list[Chunk]:
    """The chunks of one source file, each keyed by its place in the source."""
    split = split_frontmatter(text) if text.lstrip("\ufeff").startswith("---") else None
    body = split.body if split is not None else text.lstrip("\ufeff")
    if not body.strip():
        return []
    front = _front(split.yaml_text if split is not None else None)
    stem = file_slug(relpath)
    h1 = next((m.group(1) for ln in body.splitlines() if (m := _H1.match(ln))), None)
    title = h1 or Path(relpath).stem  # the key is made from this, as it always was
    named = front.get("title") if not h1 and isinstance(front.get("title"), str) else None
    raw_tags = front.get("tags")
    tags = tuple(str(t).lstrip("#") for t in (raw_tags if isinstance(raw_tags, list) else [raw_tags]) if t)
    budget_chars = budget * CHARS_PER_TOKEN
    sections: list[tuple[str, str]] = []
    if len(body) <= budget_chars:
        sections = [(title, body)]
    else:
        heading, lines = title, list[str]()
        for line in body.splitlines(keepends=True):
            m = _H2.match(line)
            if m and lines:
                sections.append((heading, "".join(lines)))
                heading, lines = m.group(1) or title, []
            elif m:
                heading = m.group(1) or title
            lines.append(line)
        sections.append((heading, "".join(lines)))
    seen: Counter[str] = Counter()
    chunks = []
    for heading, section in sections:
        for piece in _pieces(section, budget_chars):
            if not any(ln.strip() and not ln.lstrip().startswith("#") for ln in piece.splitlines()):
                continue  # headings alone are no knowledge
            base = f"{stem}-{slugify(heading, limit=48)}"
            seen[base] += 1
            key = base if seen[base] == 1 else f"{base}-{seen[base]}"
            shown = str(named).strip() if named and heading == title else None
            chunks.append(Chunk(key, heading, piece.strip("\n") + "\n", shown or None, tags))
    name = Path(relpath).stem
    if chunks and name.casefold() != (chunks[0].title or chunks[0].heading).casefold():
        chunks[0] = replace(chunks[0], aliases=(name,))  # the note a link to the file lands on
    return chunks


def _front(yaml_text: str | None) -> dict[str, Any]:
    """A source's frontmatter as a mapping ({} when it has none or it does not parse)."""
    if not yaml_text:
        return {}
    try:
        data = load_yaml(yaml_text)
    except YamlRefused:
        return {}
    return data if isinstance(data, dict) else {}


def is_markdown(name: str) -> bool:
    """Whether a file of this name is Markdown that ingest takes: `.md` or `.markdown`, or a named agent file."""
    return name.lower().endswith((".md", ".markdown")) or name in NAMED_FILES


def not_markdown(paths: Sequence[Path]) -> list[str]:
    """The files among `paths` (named one by one) that are not Markdown: ingest refuses them."""
    return [str(p) for p in paths if p.is_file() and not is_markdown(p.name)]


def walk(paths: Sequence[Path]) -> Iterator[tuple[Path, Path]]:
    """(file, the folder its relative path is taken from) for every Markdown file under `paths`, sorted; a file
    named in `paths` that is not Markdown is left out (`not_markdown` names it)."""
    for root in paths:
        if root.is_file():
            if is_markdown(root.name):
                yield root, root.parent
            continue
        found = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in filenames:
                if is_markdown(name) and not name.startswith("."):
                    found.append(Path(dirpath) / name)
        for f in sorted(found):
            yield f, root


def _folder(contract: Contract) -> str:
    return f"{contract.spaces.get(MEMORY_SPACE, MEMORY_SPACE)}/{INGEST_FOLDER}"


def _fields(chunk: Chunk, source: str, project: str | None, now: dt.datetime, body_hash: str) -> dict[str, object]:
    return {
        "title": (chunk.title or chunk.heading)[:200],
        **({"tags": list(chunk.tags)[:MAX_TAGS]} if chunk.tags else {}),
        **({"aliases": list(chunk.aliases)} if chunk.aliases else {}),
        "status": "unfiled",
        "lifecycle": "active",
        "filing_confidence": "low",
        "trust": "untrusted",
        "captured": stamp(now),
        "source": f"ingest:{source}",
        "project": project,
        "ingest_key": chunk.key,
        "ingest_hash": body_hash,
    }


def plan_ingest(
    vault: Path,
    sources: Sequence[Path],
    contract: Contract,
    *,
    project: str | None = None,
    now: dt.datetime | None = None,
    progress: Any = None,
) -> tuple[IngestReport, Step]:
    """What an ingest of `sources` would write, and the step that writes it."""
    now = now or dt.datetime.now(dt.UTC)
    report = IngestReport()
    edits: list[Edit] = []
    seen_content: set[str] = set()
    taken: set[str] = set()
    folder = _folder(contract)
    report.errors += [{"path": p, "error": "not a Markdown file (.md): ingest takes Markdown notes"}
                      for p in not_markdown(sources)]  # fmt: skip
    files = list(walk(sources))
    read: list[tuple[str, list[Chunk]]] = []
    for n, (file, base) in enumerate(files, 1):
        if progress is not None:
            progress(n, len(files))
        try:
            rel = file.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            rel = file.name
        inside = file.resolve().is_relative_to(vault.resolve())
        if inside and file.resolve().relative_to(vault.resolve()).as_posix().startswith(f"{folder}/"):
            continue  # never ingest what ingest wrote
        try:
            text = file.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            report.errors.append({"path": str(file), "error": f"unreadable or not UTF-8: {exc}"})
            continue
        report.files += 1
        body = split_frontmatter(text).body
        if is_link_index(body):
            report.skipped_index.append(rel)
            continue
        read.append((rel, chunk_file(rel, text)))
    renamed = {Path(rel).stem.casefold(): chunks[0].key for rel, chunks in read if chunks}
    for rel, chunks in read:
        for chunk in chunks:
            chunk = replace(chunk, text=_relinked(chunk.text, renamed))
            _plan_chunk(vault, contract, chunk, rel, project, now, folder, report, edits, seen_content, taken)
    return report, Step("ingest", f"ingest {len(edits)} note(s)", tuple(edits))


_WIKILINK = re.compile(r"(!?)\[\[([^\]|#\n]+)(#[^\]|\n]*)?(\|[^\]\n]*)?\]\]")


def _relinked(text: str, renamed: Mapping[str, str]) -> str:
    """`text` with each wikilink to a file of this ingest (`[[one]]`, `[[dir/one#Part|shown]]`) pointed at the note
    that file's start became, shown as it was written: the notes are filed under new names."""

    def one(m: re.Match[str]) -> str:
        target = m.group(2).strip()
        name = target.rsplit("/", 1)[-1].removesuffix(".md")
        key = renamed.get(name.casefold())
        if key is None or key == name:
            return m.group(0)
        return f"{m.group(1)}[[{key}{m.group(3) or ''}{m.group(4) or '|' + target}]]"

    return _WIKILINK.sub(one, text)


def _plan_chunk(
    vault: Path,
    contract: Contract,
    chunk: Chunk,
    rel: str,
    project: str | None,
    now: dt.datetime,
    folder: str,
    report: IngestReport,
    edits: list[Edit],
    seen_content: set[str],
    taken: set[str],
) -> None:
    content = hashlib.sha256(chunk.text.strip().encode("utf-8")).hexdigest()
    if content in seen_content:
        report.deduped += 1
        return
    seen_content.add(content)
    key, n = chunk.key, 1
    while f"{folder}/{key}.md" in taken:  # two sources whose slugs meet: later ones take an ordinal
        n += 1
        key = f"{chunk.key}-{n}"
    path = f"{folder}/{key}.md"
    taken.add(path)
    if key != chunk.key:
        chunk = replace(chunk, key=key)
    try:
        data: bytes | None = (vault / path).read_bytes()
    except FileNotFoundError:
        data = None
    old = data.decode("utf-8", "replace") if data is not None else ""
    if data is not None:
        fm = read_frontmatter(old) or {}
        if str(fm.get("lifecycle", "")).lower() == "archived" or str(fm.get("status", "")).lower() == "archived":
            report.skipped_retired.append(path)  # the owner's verdict stands: never written again
            return
        if fm.get("ingest_hash") == content[:16]:
            report.unchanged += 1  # what was read, checked and written before needs nothing
            return
    verdict = check_fields({"title": chunk.heading, "body": chunk.text})
    if not verdict.ok:
        for finding in verdict.findings:
            report.rejected[finding.code] += 1
        reason = verdict.findings[0].message
        report.rejected_parts.append({"source": rel, "heading": chunk.heading, "reason": reason})
        return
    decision = decide(vault, path, contract, actor="operator", creating=data is None)
    if not decision.allowed:
        report.refused.append({"path": path, "reason": decision.reason})
        return
    if data is None:
        text = render_note(_fields(chunk, rel, project, now, content[:16]), chunk.text)
        edits.append(Edit(path, text, None))
        report.created.append(path)
        return
    split = split_frontmatter(old)
    head = old[: len(old) - len(split.body)] if split.yaml_text is not None else ""
    try:
        new = update_frontmatter(
            head + chunk.text, {"ingest_hash": content[:16], "status": "unfiled", "ingest_updated": stamp(now)}
        )
    except YamlRefused as exc:  # a hand-broken frontmatter: leave the note for a person
        report.errors.append({"path": path, "error": f"cannot update: {exc}"})
        return
    edits.append(Edit(path, new, digest(data)))
    report.updated.append(path)


def sources_of(config: Iterable[Any]) -> list[Path]:
    """The folders and files of the config's `[[ingest]]` entries (`path = "..."`)."""
    out = []
    for entry in config:
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            out.append(Path(os.path.expanduser(entry["path"])))
    return out
