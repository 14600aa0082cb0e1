"""The note model: the only package that parses YAML and Markdown."""

from .errors import VaultSchemaError, YamlRefused
from .frontmatter import Split, load_yaml, split_frontmatter
from .markdown import FencedBlock, Section, fenced_blocks, inline_tags, section_text, sections, strip_code
from .note import WALLS, Note, is_progress_log, parse_date, parse_note, spaced_stem
from .writer import render_frontmatter, render_note, update_frontmatter

__all__ = [
    "WALLS",
    "FencedBlock",
    "Note",
    "Section",
    "Split",
    "VaultSchemaError",
    "YamlRefused",
    "fenced_blocks",
    "inline_tags",
    "is_progress_log",
    "load_yaml",
    "parse_date",
    "parse_note",
    "render_frontmatter",
    "render_note",
    "section_text",
    "sections",
    "spaced_stem",
    "split_frontmatter",
    "strip_code",
    "update_frontmatter",
]
