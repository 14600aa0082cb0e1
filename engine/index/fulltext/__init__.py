"""The Tantivy full-text index. This package is the only one that imports tantivy.

One document per note, keyed by its vault-relative path (a `raw` field, so delete-by-term works).
`title`, `meta` and `body` go through one analyzer: words of letters, marks and digits (each CJK
ideograph its own token), ASCII folding, lower case and the Snowball English stemmer. Scores are BM25
with field boosts title 4, meta 3, body 1. A `names` field (raw terms, never scored on its own) holds the
note's names, normalised by `name_key`: its title, its file name (and a Dendron hierarchy's last segments),
its aliases and its headings, each as `<kind code>:<key>`, so a query that is a name finds its note by an
exact term (or a term prefix), whatever the query's length. A small JSON file beside the segments records the schema
version and a generation id; the catalog keeps the same id, so a rebuilt index is never paired with a
catalog that describes the old one.

Its parts: `schema` (the fields, the document of one note, its names), `analyzer` (the tokenizer and filters),
`hits` (what a search returns), `core` (opening, reloading, damage checks, parsed queries), `writer` (adds and
deletes), `terms` (the terms of texts and notes, word counts) and `query` (searches and names). `SearchIndex`
is all of them.
"""

from __future__ import annotations

from agentmd.engine.index.fulltext.hits import Hit, HitList, NameHit
from agentmd.engine.index.fulltext.query import IndexQueries
from agentmd.engine.index.fulltext.schema import (
    FIELD_BOOSTS,
    QUESTION_FIELD_BOOSTS,
    SCHEMA_VERSION,
    name_key,
)
from agentmd.engine.index.fulltext.terms import IndexTerms
from agentmd.engine.index.fulltext.writer import IndexWriting

__all__ = [
    "FIELD_BOOSTS",
    "QUESTION_FIELD_BOOSTS",
    "SCHEMA_VERSION",
    "Hit",
    "HitList",
    "NameHit",
    "SearchIndex",
    "name_key",
]


class SearchIndex(IndexWriting, IndexTerms, IndexQueries):
    """A Tantivy index in `directory`, created, upgraded or set aside and rebuilt as needed."""
