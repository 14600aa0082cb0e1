"""A wallet's recovery phrase (BIP-39): twelve to twenty-four words of one published word list in a row.

The word lists come from `mnemonic` (the reference implementation's package), in every language whose words a
phrase separates with spaces. Numbering between the words ("1. abandon 2. ability") and commas are read through.
No checksum is asked for: a phrase copied by hand with a slip is still the wallet's key, and a made-up example
reads the same as a real one. Prose never runs that long inside one list: over the shared corpora (4,264 vault
notes, 5,183 abstracts) the longest run is ten words (bench/RESULTS.md, "A wallet's recovery phrase").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import cache
from typing import Final

SEED_WORDS: Final = 12  # the shortest phrase BIP-39 defines
_LANGUAGES: Final = ("english", "spanish", "french", "italian", "portuguese", "czech", "turkish", "russian",
                     "korean", "japanese")  # fmt: skip
_TOKEN = re.compile(r"[^\s,;|·•、]+")
_NUMBER = re.compile(r"(?:#?\d{1,2}[.):\-]?|\(\d{1,2}\))")
_NUMBERED = re.compile(r"^\d{1,2}[.):\-]")
_DIGITISH: Final = frozenset("0123456789#(")
_EDGES: Final = ".,;:!?\"'()[]`*_"


@cache
def _lists() -> tuple[tuple[frozenset[str], ...], frozenset[str]]:
    """Each language's word list, and their union."""
    from mnemonic import Mnemonic  # the word lists are read on the first note long enough to hold a phrase

    lists = tuple(frozenset(unicodedata.normalize("NFC", w) for w in Mnemonic(lang).wordlist) for lang in _LANGUAGES)
    return lists, frozenset().union(*lists)


def seed_phrase_lines(text: str) -> Iterator[int]:
    """The line (1-based) where each run of SEED_WORDS or more words of one BIP-39 list begins."""
    if text.count(" ") + text.count("\n") + text.count("\u3000") < SEED_WORDS - 1:
        return
    lists, every = _lists()
    low = unicodedata.normalize("NFC", text.lower())
    runs = [0] * len(lists)
    starts = [0] * len(lists)
    for m in _TOKEN.finditer(low):
        word = m.group()
        if word[0] in _DIGITISH:
            if _NUMBER.fullmatch(word):
                continue
            word = _NUMBERED.sub("", word)
        word = word.strip(_EDGES)
        if word not in every:
            if any(runs):
                runs = [0] * len(lists)
            continue
        for i, wordlist in enumerate(lists):
            if word not in wordlist:
                runs[i] = 0
                continue
            if runs[i] == 0:
                starts[i] = m.start()
            runs[i] += 1
            if runs[i] == SEED_WORDS:
                yield low.count("\n", 0, starts[i]) + 1
                runs = [-len(low)] * len(lists)  # one finding a run, whichever lists it reads in
                break
