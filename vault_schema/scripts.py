"""Which writing system a text is in, as far as an embedding model cares.

The bundled model (all-MiniLM-L6-v2) learnt English: text in other Latin-script languages still reads as
text to it, but Chinese, Japanese, Russian, Arabic and the like come out as vectors that are all alike (two
unrelated Russian sentences score a cosine of 0.56 to 0.67, Chinese passages 0.7 and more, against 0.0 to 0.2
for English ones). Such text is kept from a model that reads only Latin script: a query mostly in another
script is searched lexically, and a chunk mostly in one is not embedded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .chunks import EMBED_CUT
from .cjk import CJK_CLASS

# At least this share of a text in other scripts keeps it from a Latin-only model.
FOREIGN_SHARE = 0.5
# A word of letters weighs as much as this many CJK characters (a Chinese word is mostly two).
WORD_WEIGHT = 2
_CJK_CHAR = re.compile(f"[{CJK_CLASS}]")
_WORD = re.compile(f"[^\\W\\d_{CJK_CLASS}]+")  # a run of letters outside CJK
# Basic Latin, Latin-1 and the Latin extensions (accents, Vietnamese), which a Latin-only model reads.
_LATIN = re.compile("[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")


def foreign_share(text: str) -> float:
    """How much of `text` is in scripts other than Latin, in [0, 1]: each CJK character weighs one, each
    word of letters WORD_WEIGHT, and the share is that of the CJK characters and of the words whose first
    letter is not Latin (0.0 for a text with no letters)."""
    chars = len(_CJK_CHAR.findall(text))
    words = _WORD.findall(text)
    foreign = sum(1 for w in words if not _LATIN.match(w))
    total = chars + WORD_WEIGHT * len(words)
    return (chars + WORD_WEIGHT * foreign) / total if total else 0.0


def latin_only(embedder: Any) -> bool:
    """Whether `embedder` reads Latin script only (its `latin_only`; an embedder without it reads all)."""
    return bool(getattr(embedder, "latin_only", False))


def reads(embedder: Any, text: str) -> bool:
    """Whether `embedder` reads `text`: always, unless it reads Latin script only and the text is mostly in
    other scripts."""
    return not latin_only(embedder) or foreign_share(text) < FOREIGN_SHARE


# The names of the rules `chunk_rule` gives, which carry the way notes are cut (vault_schema/chunks.py).
ALL_CHUNKS = f"all, cut {EMBED_CUT}"  # every chunk
LATIN_CHUNKS = f"latin-script, cut {EMBED_CUT}"  # a Latin-only embedder's


def chunk_rule(embedder: Any) -> tuple[Callable[[str], bool] | None, str]:
    """The test a chunk's text passes to be given to `embedder` (None: every chunk) and the rule's name, which
    the vector store keeps, so a store cut by another rule is cut again."""
    if not latin_only(embedder):
        return None, ALL_CHUNKS
    return (lambda text: foreign_share(text) < FOREIGN_SHARE), LATIN_CHUNKS
