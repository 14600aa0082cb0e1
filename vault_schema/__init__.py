"""The note model: the only package that parses YAML and Markdown."""

from .aliases import derived_aliases
from .chunks import Chunk, EmbedChunk, chunk_text, clean_for_embedding, embedding_chunks, token_windows
from .entities import EntityRef, entity_uri, extract_entities, query_entity_uris
from .errors import VaultSchemaError, YamlRefused
from .frontmatter import Split, load_yaml, split_frontmatter
from .links import Link, Structure, extract_links, read_structure, target_key
from .markdown import FencedBlock, Section, code_lines, fenced_blocks, inline_tags, section_text, sections, strip_code
from .note import (
    CONFLICT_STATUS,
    ENTITY_KEY,
    LINK_CONVENTIONS,
    SLUG,
    WALLS,
    Note,
    is_progress_log,
    parse_date,
    parse_note,
    spaced_stem,
)
from .writer import render_frontmatter, render_note, update_frontmatter

__all__ = [
    "CONFLICT_STATUS",
    "ENTITY_KEY",
    "LINK_CONVENTIONS",
    "SLUG",
    "WALLS",
    "Chunk",
    "EmbedChunk",
    "EntityRef",
    "FencedBlock",
    "Link",
    "Note",
    "Section",
    "Split",
    "Structure",
    "VaultSchemaError",
    "YamlRefused",
    "chunk_text",
    "clean_for_embedding",
    "code_lines",
    "derived_aliases",
    "embedding_chunks",
    "entity_uri",
    "extract_entities",
    "extract_links",
    "fenced_blocks",
    "inline_tags",
    "is_progress_log",
    "load_yaml",
    "parse_date",
    "parse_note",
    "query_entity_uris",
    "read_structure",
    "render_frontmatter",
    "render_note",
    "section_text",
    "sections",
    "spaced_stem",
    "split_frontmatter",
    "strip_code",
    "target_key",
    "token_windows",
    "update_frontmatter",
]
