"""The index's analyzer: words of letters, marks and digits (each CJK ideograph its own token), ASCII folding,
lower case and the Snowball English stemmer; the faster plain analyzer a build uses for plain text; and user
words quoted for the query parser."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import tantivy

from agentmd.engine.index.fulltext.schema import IndexDoc

_WORD = re.compile(r"\w")
# A token is a run of letters, marks, digits and `_`, except that each CJK ideograph, hiragana or katakana is a
# token of its own. The two alternatives never match the same character, so their order changes no token; the
# run comes first because nearly every token is one (bench/token_check.py compares the streams on the corpora).
TOKEN_PATTERN = r"[\p{L}\p{M}\p{N}_--\p{Han}--\p{Hiragana}--\p{Katakana}]+|[\p{Han}\p{Hiragana}\p{Katakana}]"


def text_analyzer() -> Any:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(TOKEN_PATTERN))
        .filter(tantivy.Filter.remove_long(80))
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def plain_analyzer() -> Any:
    """The analyzer's chain on Tantivy's simple tokenizer (runs of letters and digits), about three times
    faster: on text `plain_words` accepts it makes exactly the analyzer's tokens at the same positions (ASCII
    folding is left out: such text has nothing to fold)."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(80))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def plain_words(text: str) -> bool:
    """Whether both tokenizers read `text` alike: in ASCII without `_` the analyzer's runs of letters, marks,
    digits and `_` are the simple tokenizer's runs of [A-Za-z0-9], and there is no CJK character."""
    return text.isascii() and "_" not in text


def plain_doc(doc: IndexDoc) -> bool:
    return plain_words(doc.body) and plain_words(doc.title) and plain_words(doc.meta)


def quote_terms(words: Iterable[str]) -> list[str]:
    """Each user word as a quoted phrase, so no operator, field prefix or wildcard keeps its meaning."""
    out = []
    for word in words:
        if not _WORD.search(word):
            continue
        out.append('"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return out
