"""What the full-text index stores: its schema, its version, the document of one note and the names it is
found by. One document per note, keyed by its vault-relative path (a `raw` field, so delete-by-term works); a
`names` field (raw terms, never scored on its own) holds the note's names, normalised by `name_key`, each as
`<kind code>:<key>`. A small JSON file beside the segments (`MARKER`) records the schema version and a
generation id."""

from __future__ import annotations

import functools
import json
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any

import tantivy

# 4: facts carry the note's summary and opening line (vault_schema/digest.py); 5: the names field (title, file
# name, aliases, headings; see name_key); 6: facts carry `trust` and `probe` (engine/search/trust.py) and `meta`
# (engine/search/confidence.py)
SCHEMA_VERSION = 7
ANALYZER = "agentmd_text"
FIELD_BOOSTS = {"title": 4.0, "meta": 3.0, "body": 1.0}
# The boosts a question's words are scored with (engine/search/planning.py, QUESTION_BOOSTS): a word counted
# before it is searched (`doc_freq`) is parsed with them, so the question's search finds it parsed.
QUESTION_FIELD_BOOSTS = {"title": 0.2, "meta": 0.2, "body": 1.0}
SEARCH_FIELDS = ["title", "meta", "body"]
NO_WALL = "none"
WALL_NAMES = ("archived", "superseded", "staged")
MARKER = "agentmd-index.json"
WRITER_HEAP = 128_000_000
WRITER_BUSY_WAIT = 5.0  # seconds a writer waits for the write lock of a writer just closed before IndexBusy
# The kinds of name, in the order they rank: a Dendron hierarchy's last segments (`b.c` and `c` of `a.b.c`)
# are a `segment`, reported as a file name; an exact title, file name or alias ranks before them.
NAME_KINDS = ("title", "file name", "alias", "segment", "heading")
NAME_CODES = {"title": "t", "file name": "f", "alias": "a", "segment": "s", "heading": "h"}
_APOSTROPHES = dict.fromkeys(map(ord, "'\u2019`\u00b4"), None)
# An ASCII name's key in one `translate`: every character that is not a letter or digit a space, apostrophes gone.
_ASCII_KEY: dict[int, str | None] = {i: " " for i in range(128) if not chr(i).isalnum()} | dict.fromkeys(
    map(ord, "'`"), None
)


@dataclass(frozen=True, slots=True)
class IndexDoc:
    """What the index stores for one note."""

    path: str
    title: str  # the text the title field indexes
    meta: str
    body: str  # frontmatter text + Markdown body: what the body field searches
    text: str  # the Markdown body alone: what snippets are cut from
    wall: str | None
    day: int  # captured date as yyyymmdd
    facts: dict[str, object] = field(default_factory=dict)  # stored JSON: title, captured, status, project...
    names: tuple[tuple[str, str], ...] = ()  # (kind, name) with kind one of NAME_KINDS; normalised on write
    # `facts` and `names` as the index stores them, made ahead by `encoded` (then those two are left empty)
    facts_json: bytes = b""
    name_terms: tuple[str, ...] | None = None

    def __reduce__(self) -> tuple[type[IndexDoc], tuple[Any, ...]]:
        # pickled as its fields through the constructor: a pass's worker processes send thousands of documents
        return IndexDoc, tuple(getattr(self, name) for name in self.__slots__)


@functools.lru_cache(maxsize=16_384)
def name_key(text: str) -> str:
    """A name as it is matched: accents, case and a trailing `.md` ignored, apostrophes dropped, any other
    character that is not a letter or digit (`-`, `_`, `.`, punctuation) read as a space. Remembered for the
    words and runs of words a search asks about again and again (a question's runs ask for each word's key
    up to a dozen times)."""
    text = text.strip()
    if text.lower().endswith(".md"):
        text = text[:-3]
    if text.isascii():  # most names: nothing to fold, decompose or recompose
        return " ".join(text.lower().translate(_ASCII_KEY).split())
    folded = unicodedata.normalize("NFKD", text.casefold().translate(_APOSTROPHES))
    bare = "".join(ch if ch.isalnum() else " " for ch in folded if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", " ".join(bare.split()))


def encoded(doc: IndexDoc) -> IndexDoc:
    """The document with its facts and names as the index stores them (the facts as JSON, the names as sorted
    `<kind code>:<key>` terms), so that work can be done in a pass's worker process, which also sends fewer
    objects."""
    if doc.name_terms is not None:
        return doc
    terms = tuple(sorted({f"{NAME_CODES[k]}:{key}" for k, n in doc.names if (key := name_key(n))}))
    facts = json.dumps(doc.facts, ensure_ascii=False).encode("utf-8")
    return IndexDoc(doc.path, doc.title, doc.meta, doc.body, doc.text, doc.wall, doc.day, {}, (), facts, terms)


def facts_of(doc: IndexDoc) -> dict[str, object]:
    """The facts of a document, encoded or not."""
    if doc.name_terms is None:
        return doc.facts
    loaded: dict[str, object] = json.loads(doc.facts_json)
    return loaded


def with_facts(doc: IndexDoc, facts: dict[str, object]) -> IndexDoc:
    """The document with other facts, in the form it has (encoded or not)."""
    if doc.name_terms is None:
        return replace(doc, facts=facts)
    return replace(doc, facts_json=json.dumps(facts, ensure_ascii=False).encode("utf-8"))


def index_schema() -> Any:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("title", stored=False, tokenizer_name=ANALYZER)
    sb.add_text_field("meta", stored=False, tokenizer_name=ANALYZER)
    sb.add_text_field("body", stored=False, tokenizer_name=ANALYZER)
    sb.add_bytes_field("text", stored=True, indexed=False)  # the Markdown body alone, for snippets
    sb.add_text_field("wall", stored=False, tokenizer_name="raw", index_option="basic", fast=True)
    sb.add_text_field("names", stored=False, tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("day", stored=False, indexed=True, fast=True)
    sb.add_bytes_field("facts", stored=True, indexed=False)
    return sb.build()


def is_panic(exc: BaseException) -> bool:
    """A Rust panic inside Tantivy (pyo3's PanicException derives from BaseException, not Exception)."""
    return type(exc).__name__ == "PanicException"
