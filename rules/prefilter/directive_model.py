"""The learned half of the directive filter: a linear model over hashed character and word n-grams that reads a
passage and says how much it reads as an order to an AI agent.

A note is cut into passages (blocks between blank lines; a long block into runs of whole lines, then of
sentences, of at most `PASSAGE_CHARS`), and a passage of several lines is read line by line as well. Each passage
is folded (lower case, digits read as 0, white space runs as one space) and described by the set of its
character 3-, 4- and 5-grams and the set of its words and word pairs, each hashed into one table of `BUCKETS`
weights. The score of a passage is the bias plus the mean weight of each set scaled by the square root of its
size (each set an L2-normalised binary vector), passed through the logistic function. The weights, the bias
and the threshold live in `directive_model.npz`, written by `bench/train_directive_model.py` from the payload
rounds' train rows and the shared vaults' notes; what chose them is in `bench/RESULTS.md`.

Everything here is arithmetic over the text: no model file but the weights, no network, no file access after the
weights are loaded once.
"""

from __future__ import annotations

import functools
import itertools
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Final

import numpy as np
import numpy.typing as npt

from agentmd.rules.prefilter.core import flatten_containers
from agentmd.rules.prefilter.directive_folding import scoring_view

BUCKETS: Final = 1 << 18
PASSAGE_CHARS: Final = 600
CHAR_FLOOR: Final = 200  # the character n-grams of a sentence of about ten words
WORD_FLOOR: Final = 20  # its words and word pairs
LINE_WORDS: Final = 4  # a line read alone: shorter ones are headings and list items
_CHAR_NS: Final = (3, 4, 5)
_MULT: Final = np.uint64(0x100000001B3)
_MIX: Final = np.uint64(0x9E3779B97F4A7C15)
_WORD_SALT: Final = 0x5BD1E995
_PAIR_SALT: Final = 0x27D4EB2F
_SPACE = re.compile(r"\s+")
_LINK = re.compile(r"\b(?:[a-z][a-z0-9+.-]*://|www\.)[^\s<>()\[\]\"'`]+")
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_HOST = re.compile(r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|app|co|xyz|info|biz|example|test|invalid|local)\b")
_DIGIT = re.compile(r"\d")
_WORD = re.compile(r"\w+")
_BLOCK = re.compile(r"(?:[^\n]*\S[^\n]*(?:\n|$))+")
_LINE = re.compile(r"[^\n]+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")

Index = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Passage:
    """A stretch of a note the model reads: where it starts in the text, and its text."""

    start: int
    text: str


def passages(text: str) -> list[Passage]:
    """The passages of `text`: blocks between blank lines, a long block cut into runs of whole lines, a long line
    into runs of whole sentences, a long sentence every `PASSAGE_CHARS` characters. They cover the text once."""
    out: list[Passage] = []
    for block in _BLOCK.finditer(text):
        _runs(text, [(m.start(), m.end()) for m in _LINE.finditer(text, block.start(), block.end())], out, 0)
    return out


def readings(text: str) -> list[Passage]:
    """What the model scores in `text`: its passages, and each line of `LINE_WORDS` words or more of a passage of
    several lines read alone too (an order that is one line of a long note is not diluted by the lines around
    it), in text order."""
    found = passages(text)
    lines = [
        Passage(p.start + m.start(), m.group())
        for p in found
        if "\n" in p.text.strip()
        for m in _LINE.finditer(p.text)
        if len(m.group().split()) >= LINE_WORDS
    ]
    return sorted(found + lines, key=lambda p: (p.start, len(p.text)))


def _runs(text: str, spans: list[tuple[int, int]], out: list[Passage], depth: int) -> None:
    """Spans joined into runs of at most `PASSAGE_CHARS` characters; a span longer than that is cut finer
    (lines into sentences, sentences into fixed windows)."""
    run_start = run_end = -1
    for start, end in spans:
        if end - start > PASSAGE_CHARS:
            if run_start >= 0:
                _add(text, run_start, run_end, out)
                run_start = -1
            if depth == 0:
                cuts = [start, *(m.end() for m in _SENTENCE_END.finditer(text, start, end)), end]
                _runs(text, [(a, b) for a, b in itertools.pairwise(cuts) if b > a], out, 1)
            else:
                for i in range(start, end, PASSAGE_CHARS):
                    _add(text, i, min(end, i + PASSAGE_CHARS), out)
            continue
        if run_start >= 0 and end - run_start > PASSAGE_CHARS:
            _add(text, run_start, run_end, out)
            run_start = -1
        if run_start < 0:
            run_start = start
        run_end = end
    if run_start >= 0:
        _add(text, run_start, run_end, out)


def _add(text: str, start: int, end: int, out: list[Passage]) -> None:
    piece = text[start:end]
    if piece.strip():
        out.append(Passage(start, piece))


def fold(text: str) -> str:
    """The text as the model reads it: lower case; a link, a mail address or a host name read as the word
    "link", "address" or "host" (what a note points at says nothing of whether it gives an order, and the
    training rows' example domains must not come to mean one); every digit a 0; white space runs one space; a
    space at each end so the first and last words have edges."""
    folded = _LINK.sub(" link ", text.casefold())
    folded = _HOST.sub(" host ", _ADDRESS.sub(" address ", folded))
    return " " + _SPACE.sub(" ", _DIGIT.sub("0", folded)).strip() + " "


def _char_buckets(folded: str) -> Index:
    points = np.frombuffer(folded.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    found: list[npt.NDArray[np.uint64]] = []
    for n in _CHAR_NS:
        if len(points) < n:
            continue
        h = points[: len(points) - n + 1].copy()
        for k in range(1, n):
            h = h * _MULT + points[k : len(points) - n + 1 + k]
        found.append((h ^ np.uint64(n)) * _MIX)
    if not found:
        return np.zeros(0, dtype=np.int64)
    return np.unique((np.concatenate(found) >> np.uint64(40)) % np.uint64(BUCKETS)).astype(np.int64)


def _word_buckets(folded: str) -> Index:
    words = [w.encode() for w in _WORD.findall(folded)]
    keys = {zlib.crc32(w, _WORD_SALT) % BUCKETS for w in words}
    keys.update(zlib.crc32(a + b" " + b, _PAIR_SALT) % BUCKETS for a, b in itertools.pairwise(words))
    return np.fromiter(sorted(keys), dtype=np.int64, count=len(keys))


def scale(n: int, floor: int) -> float:
    """The value of each of a passage's `n` features: one over the square root of `n`, or of `floor` when the
    passage has fewer, so a short passage is read as if the rest of it were neutral (a heading of four words
    must not weigh like a paragraph)."""
    return 1.0 / float(np.sqrt(max(n, floor)))


def features(text: str) -> tuple[Index, Index]:
    """The passage's character n-gram buckets and word (and word pair) buckets, each without repeats."""
    folded = fold(text)
    return _char_buckets(folded), _word_buckets(folded)


@dataclass(frozen=True, slots=True)
class Model:
    """Weights of the hashed n-grams, the bias, the probability from which a passage is refused, and the one
    under which every passage of a note must score for the model to overrule a phrase rule's refusal."""

    weights: npt.NDArray[np.float32]
    bias: float
    threshold: float
    veto: float

    def score(self, text: str) -> float:
        """The probability (0 to 1) that `text` reads as an order to an AI agent."""
        chars, words = features(text)
        z = self.bias
        for idx, floor in ((chars, CHAR_FLOOR), (words, WORD_FLOOR)):
            if len(idx):
                z += float(self.weights[idx].sum()) * scale(len(idx), floor)
        return float(1.0 / (1.0 + np.exp(-z)))


@functools.cache
def model() -> Model:
    """The shipped model, loaded once."""
    with resources.files("agentmd.rules.prefilter").joinpath("directive_model.npz").open("rb") as fh:
        data = np.load(fh)
        return Model(
            weights=data["weights"].astype(np.float32),
            bias=float(data["bias"]),
            threshold=float(data["threshold"]),
            veto=float(data["veto"]),
        )


def flagged(text: str) -> Iterator[tuple[Passage, float]]:
    """The readings of `text` the model refuses, with their scores, in text order; a passage that holds a refused
    line is left to that line, which says where the order is."""
    m = model()
    found = [(r, p) for r in readings(text) if (p := m.score(r.text)) >= m.threshold]
    for reading, p in found:
        end = reading.start + len(reading.text)
        if not any(o is not reading and reading.start <= o.start and o.start + len(o.text) <= end for o, _ in found):
            yield reading, p


def model_view(text: str) -> str:
    """The text the model reads: containers flattened, invisible characters dropped, NFKC, look-alike letters
    folded to Latin."""
    return scoring_view(flatten_containers(text))


def ordinary_at(text: str, line: int, *, short: bool = False) -> bool:
    """Line `line` (1-based) of `text` scores under the model's `veto` probability, read alone and in its
    passage (an order in a long block is not hidden by the block around it), and, unless `short`, is long enough
    for that score to say so: a line of fewer than half `CHAR_FLOOR` character n-grams (about five words) scores
    low for want of text, and a short known form ("BEGIN SYSTEM PROMPT") is the rules' to judge."""
    view = model_view(text)
    starts = [0, *(i + 1 for i, c in enumerate(view) if c == "\n")]
    if not 1 <= line <= len(starts):
        return False
    start = starts[line - 1]
    end = starts[line] - 1 if line < len(starts) else len(view)
    if not short and len(_char_buckets(fold(view[start:end]))) < CHAR_FLOOR // 2:
        return False
    texts = [view[start:end]] + [p.text for p in passages(view) if p.start <= start < p.start + len(p.text)]
    m = model()
    return all(m.score(t) < m.veto for t in texts if t.strip())


def ordinary_throughout(text: str) -> bool:
    """Every reading of `text` (its passages, and the lines of those of several lines) scores under the model's
    `veto` probability: a transcript whose turns the model reads as ordinary talk."""
    m = model()
    return all(m.score(r.text) < m.veto for r in readings(model_view(text)) if r.text.strip())

