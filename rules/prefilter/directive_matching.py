"""How the co-occurrence rules of `directive_phrases` read a text: accents folded, a group of words matched
against a sentence's words (`Group`), a long text cut into overlapping chunks of lines so a rule is tried only
where its words are, and the sentences worth reading found in one scan.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Final, NamedTuple

_SENTENCE = re.compile(r"(?:[^.!?。！？\n]|[.!?](?=[^\s.!?]))+")  # ".npmrc" and "v1.2" do not end a sentence


WORDISH = re.compile(r"\w+")
_LETTER_SCRIPTS: Final = ((0x41, 0x24F), (0x370, 0x52F), (0x1E00, 0x1EFF))  # Latin, Greek, Cyrillic: spaced words


def spaced_script(word: str) -> bool:
    return any(lo <= ord(word[0]) <= hi for lo, hi in _LETTER_SCRIPTS)


_LATIN_MARKS = re.compile(r"[\u0300-\u036f]")


def fold_accents(text: str) -> str:
    """Latin, Greek and Cyrillic letters without their accents ("ignóralas" reads "ignoralas"); other scripts
    kept as they are (decomposed and composed again)."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _LATIN_MARKS.sub("", unicodedata.normalize("NFD", text)))


# A stressed final vowel marks a past form in the Romance languages ("olvidé", "ignoró", "oublié",
# "dimenticò"), where the same word without it is an order ("olvide", "ignore", "oublie"): such a word keeps its
# last letter when the rest is folded, so a diary line saying what the writer forgot is not read as an order.
_PAST_ENDING = re.compile(r"[éóèò](?!\w)")
_KEPT = "\ue000\ue001\ue002\ue003"


def fold_past_apart(text: str) -> str:
    """`fold_accents`, except that a word-final é, ó, è or ò stays as it is."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text)
    kept = _PAST_ENDING.sub(lambda m: _KEPT["éóèò".index(m.group())], text)
    return fold_accents(kept).translate({ord(k): v for k, v in zip(_KEPT, "éóèò", strict=True)})


_ENGLISH_WORDS: Final = frozenset(
    ("the", "and", "of", "to", "for", "with", "this", "that", "you", "your", "it", "by", "from", "any", "not", "if",
     "we", "our", "my", "they", "them", "these", "those", "was", "were", "will", "should", "must", "is", "are")
)  # fmt: skip


def english(words: list[str]) -> bool:
    return sum(w in _ENGLISH_WORDS for w in words) * 8 >= len(words)


class Group:
    """One group of a co-occurrence rule (entries split at `|`, or at spaces with `_` standing for a space inside
    an entry, and a trailing `=` marking a whole word). Words of spaced scripts are matched against the text's
    words: an entry of up to four letters as a whole word, a longer one as a word's start (a stem); entries of
    several words and of unspaced scripts are looked for as substrings."""

    def __init__(self, entries: str) -> None:
        listed = entries.split("|") if "|" in entries else [w.replace("_", " ") for w in entries.split()]
        forms = {unicodedata.normalize("NFKC", w).lower() for w in listed} | {w.lower() for w in listed}
        forms |= {fold_accents(w) for w in forms}
        marked = {w[:-1] for w in forms if w.endswith("=")}  # an entry ending in "=" is a whole word, not a stem
        forms = {w for w in forms if not w.endswith("=")}
        self.exact: frozenset[str] = frozenset(
            {w for w in forms if spaced_script(w) and " " not in w and len(w) <= 4} | marked
        )
        stems: dict[str, list[str]] = {}
        for w in forms:
            if spaced_script(w) and " " not in w and len(w) > 4:
                stems.setdefault(w[:3], []).append(w)
        self.stems = stems
        # Substrings indexed by what must be in the text for them to occur: their first word (entries of several
        # words) or their first character (entries of unspaced scripts), so a sentence is only searched for the
        # few entries that could be in it.
        self.phrases: dict[str, tuple[str, ...]] = {}
        self.unspaced: dict[str, tuple[str, ...]] = {}
        for w in sorted(forms):
            if spaced_script(w) and " " in w:
                first = (WORDISH.findall(w) or [w])[0]
                self.phrases[first] = (*self.phrases.get(first, ()), w)
            elif not spaced_script(w):
                self.unspaced[w[0]] = (*self.unspaced.get(w[0], ()), w)
        # The first three letters of every word that can match: a sentence none of whose words starts so, and
        # that holds no entry of an unspaced script, is passed over with two set operations.
        self.starts: frozenset[str] = frozenset(
            {w[:3] for w in self.exact} | set(stems) | {w[:3] for w in self.phrases}
        )
        self.ascii_unspaced = any(c.isascii() for c in self.unspaced)

    def may_hit(self, starts: set[str], ascii_text: bool) -> bool:
        """Whether a text whose words start with `starts` (first three letters) could hold an entry."""
        return not self.starts.isdisjoint(starts) or bool(self.unspaced and (self.ascii_unspaced or not ascii_text))

    def present(
        self, low: str, words: set[str], chars: set[str], index: Mapping[str, list[str]]
    ) -> tuple[tuple[str, ...], ...]:
        """The entries found in a text (its whitespace-joined, lowercased, accent-folded form `low`, its words,
        its characters and its words by their first three letters): (whole words, stems, phrases, substrings)."""
        stems = self.stems
        return (
            tuple(sorted(self.exact & words)),
            tuple(sorted({st for p in stems.keys() & index.keys() for st in stems[p] if _starts(index[p], st)})),
            tuple(sorted({p for w in words if w in self.phrases for p in self.phrases[w] if p in low})),
            tuple(sorted({e for c in self.unspaced.keys() & chars for e in self.unspaced[c] if e in low})),
        )

    def hit(self, low: str, words: AbstractSet[str], index: Mapping[str, list[str]] | None = None) -> bool:
        """Whether the text (`low`, its words) holds an entry; `index` (the words by their first three letters,
        see `by_start`) makes this cheap on a long text's many words."""
        if not self.exact.isdisjoint(words):
            return True
        stems = self.stems
        if index is not None:
            if any(w.startswith(st) for p in stems.keys() & index.keys() for st in stems[p] for w in index[p]):
                return True
        elif any(w.startswith(stem) for w in words for stem in stems.get(w[:3], ())):
            return True
        phrases = self.phrases
        if any(p in low for w in words if w in phrases for p in phrases[w]):
            return True
        unspaced = self.unspaced
        return any(e in low for c in unspaced.keys() & set(low) for e in unspaced[c])


_Phrases = tuple[tuple[str, frozenset[str], re.Pattern[str]], ...]
_Groups = tuple[tuple[str, tuple[Group, ...]], ...]


class Chunk(NamedTuple):
    """A run of whole lines of a long text, with the lowercased text and the words the rules' gates read."""

    start: int
    end: int
    low: str
    words: frozenset[str]


CHUNK_LINES: Final = 48  # lines a chunk starts with (it then reaches on over OVERLAP_LINES more)
OVERLAP_LINES: Final = 8  # more than any rule's match spans, so a match across a chunk's end is seen whole
LONG_TEXT: Final = 16_384  # shorter texts are one chunk


def chunks(view: str, low: str, words: set[str], word: re.Pattern[str] | None = None) -> tuple[Chunk, ...]:
    """`view` cut into overlapping runs of lines, each with its own words (found with `word`, by default words
    with their accents also folded away, as `phrase_hits` reads them), so that on a long note a rule is tried
    only where its gates are (one chunk, the whole text, when the text is short). `low` and `words` are the
    whole text's, used for that one chunk."""
    if len(view) < LONG_TEXT:
        return (Chunk(0, len(view), low, frozenset(words)),)
    breaks = [-1, *(i for i, ch in enumerate(view) if ch == "\n")] if view.count("\n") else [-1]
    out: list[Chunk] = []
    for first in range(0, len(breaks), CHUNK_LINES):
        # a chunk starts on the line break before its first line, so rules that open on a line break match there
        start = max(0, breaks[first])
        last = first + CHUNK_LINES + OVERLAP_LINES
        end = breaks[last] if last < len(breaks) else len(view)
        part = view[start:end].lower()
        found = set((word or WORDISH).findall(part))
        if word is None and not part.isascii():
            found |= set(WORDISH.findall(fold_accents(part)))
        out.append(Chunk(start, end, part, frozenset(found)))
    return tuple(out)


def chunked_finditer(rx: re.Pattern[str], view: str, parts: Sequence[Chunk]) -> Iterator[re.Match[str]]:
    """Every match of `rx` in the chunks `parts` of `view`, each once (chunks overlap)."""
    if len(parts) == 1 and parts[0].start == 0 and parts[0].end == len(view):
        yield from rx.finditer(view)
        return
    seen_to = -1
    for c in parts:
        for m in rx.finditer(view, c.start, c.end):
            if m.start() > seen_to or (m.start() == seen_to and m.end() == m.start()):
                seen_to = m.start()
                yield m


@functools.lru_cache(maxsize=256)
def _finder(present: tuple[tuple[str, ...], ...]) -> re.Pattern[str]:
    """One pattern for the entries of a group found in a text (see `Group.present`)."""
    exact, stems, phrases, unspaced = present
    alternatives = []
    if exact:
        alternatives.append(r"(?<!\w)(?:" + "|".join(map(re.escape, exact)) + r")(?!\w)")
    if stems:
        alternatives.append(r"(?<!\w)(?:" + "|".join(map(re.escape, stems)) + ")")
    alternatives += [r"\s+".join(map(re.escape, p.split())) for p in phrases]
    alternatives += [re.escape(e) for e in unspaced]
    return re.compile("|".join(alternatives))


def _starts(words: Iterable[str], stem: str) -> bool:
    return any(w.startswith(stem) for w in words)


def by_start(words: Iterable[str]) -> dict[str, list[str]]:
    """Words grouped by their first three letters (how a group's stems are looked up)."""
    index: dict[str, list[str]] = {}
    for w in words:
        index.setdefault(w[:3], []).append(w)
    return index


def sentences_to_read(
    view: str,
    live: list[tuple[str, tuple[Group, ...]]],
    low: str,
    words: set[str],
    index: Mapping[str, list[str]],
) -> Iterator[re.Match[str]]:
    """The sentences of `view` that could hold a word of every group of a live rule: for each rule, the lines
    where its group with the fewest entries present in the text occurs, found in one scan, then split into
    sentences. A long note is not read sentence by sentence for the few where an order could be."""
    folded = fold_accents(view.lower())
    if len(folded) != len(view) or len(view) < 4096:
        yield from _SENTENCE.finditer(view)  # a short text, or one whose folding moved its letters
        return
    starts: set[int] = set()
    chars = set(low)
    for _label, parts in live:
        found = [g.present(low, words, chars, index) for g in parts]
        if not all(any(kinds) for kinds in found):
            continue  # a group with no entry in the text: no sentence can hit this rule
        last_end = -1
        for m in _finder(min(found, key=lambda kinds: sum(map(len, kinds)))).finditer(folded):
            if m.start() < last_end:
                continue
            starts.add(view.rfind("\n", 0, m.start()) + 1)
            end = view.find("\n", m.end())
            last_end = len(view) if end < 0 else end
    for start in sorted(starts):
        end = view.find("\n", start)
        yield from _SENTENCE.finditer(view, start, len(view) if end < 0 else end)
