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


@cache
def _chinese_lists() -> tuple[frozenset[str], ...]:
    """The two Chinese lists: one character a word, read only after a label (a run of twelve single characters
    between spaces is no rarer than a line of spaced-out text)."""
    from mnemonic import Mnemonic

    return tuple(frozenset(Mnemonic(lang).wordlist) for lang in ("chinese_simplified", "chinese_traditional"))


def seed_phrase_lines(text: str) -> Iterator[int]:
    """The line (1-based) where each run of SEED_WORDS or more words of one BIP-39 list begins."""
    if text.count(" ") + text.count("\n") + text.count("\u3000") < SEED_WORDS - 1:
        return
    lists, every = _lists()
    low = unicodedata.normalize("NFC", text.lower())
    runs = [0] * len(lists)
    starts = [0] * len(lists)
    recent: list[str] = []  # the run's last SEED_WORDS words: a phrase drawn at random hardly repeats one
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
                recent = []
            continue
        recent = [*recent[-(SEED_WORDS - 1) :], word]
        for i, wordlist in enumerate(lists):
            if word not in wordlist:
                runs[i] = 0
                continue
            if runs[i] == 0:
                starts[i] = m.start()
            runs[i] += 1
            if runs[i] >= SEED_WORDS and len(set(recent)) >= SEED_WORDS - 2:
                yield low.count("\n", 0, starts[i]) + 1
                runs = [-len(low)] * len(lists)  # one finding a run, whichever lists it reads in
                break


_SENTENCE_WORDS: Final = frozenset(
    ["the", "a", "an", "and", "or", "of", "to", "in", "on", "it", "is", "be", "for", "with", "this", "that", "never",
     "not", "please", "you", "your", "we", "our", "my"]
)  # fmt: skip
_LABEL = re.compile(
    r"(?i)\b(?:seed|mnemonic|(?:recovery|backup|secret)\s+(?:phrase|words))\b|助记词|助記詞|ニーモニック"
)
_WORDS_AFTER_LABEL = re.compile(
    r"(?i)(?:\b(?:seed|mnemonic|phrase|words)\b|助记词|助記詞|ニーモニック)[^\n:：]{0,40}[:=：]\s*\n?\s*(?P<words>[^\n]+)"
)
_PHRASE_LENGTHS: Final = frozenset({12, 15, 18, 21, 24})
_MAX_PHRASE_LINES: Final = 4


def _phrase_after(text: str, start: int) -> list[str]:
    """The words from `start` on: its line, and when it is short of a phrase, the lines after it until the words
    are a phrase's length (a phrase copied in rows of six or eight)."""
    words: list[str] = []
    for line in text[start:].split("\n")[:_MAX_PHRASE_LINES]:
        more = [w.strip(_EDGES).lower() for w in line.split() if not _NUMBER.fullmatch(w)]
        if words and (not more or len(words) + len(more) > 24):
            break
        first = not words
        words.extend(more)
        if (first and len(words) >= SEED_WORDS) or len(words) in _PHRASE_LENGTHS or len(words) >= 24:
            break
    return words


def labelled_phrase_lines(text: str) -> Iterator[int]:
    """The line of a phrase of twelve to twenty-four words given after a label that names it ("Seed phrase for
    the treasury Ledger: witch collapse …"), two in three of them words of one list and none of the short words
    every sentence has: a phrase copied with slips, or one made up to look like one, is still given as a key. A
    phrase of exactly a BIP-39 length whose words are a third or more letters-and-digits (a generated stand-in
    for each word, as a test harness writes one) is given as a key too."""
    if _LABEL.search(text) is None:
        return
    lists = _lists()[0] + _chinese_lists()
    for m in _WORDS_AFTER_LABEL.finditer(text):
        words = _phrase_after(text, m.start("words"))
        if not SEED_WORDS <= len(words) <= 24 or len(set(words)) < 10 or not all(w.isalnum() for w in words):
            continue
        if not _SENTENCE_WORDS.isdisjoint(words):
            continue  # a sentence after the label ("Seed phrase: never store it online"), not a phrase
        alpha = all(w.isalpha() for w in words)
        listed = alpha and any(3 * sum(w in wordlist for w in words) >= 2 * len(words) for wordlist in lists)
        generated = len(words) in _PHRASE_LENGTHS and 3 * sum(any(c.isdigit() for c in w) for w in words) >= len(words)
        if listed or generated:
            yield text.count("\n", 0, m.start("words")) + 1
