"""How sure a search result is: a `confidence` in [0, 1] on every result, and the floor below which a
result is not returned (search) or not injected into a prompt (the recall hook).

The signal is how much of the query the note holds. A query's content words (stop words out, split at
punctuation, as the searcher reads them) are looked up in the note's title, aliases, tags and text after the index's
own analysis (folding, stemming), and weighed by IDF, so a rare word the note lacks costs more than a
common one:

- `word_share`: Σ idf(found) / Σ idf(all), the IDF-weighted share of the query's words in the note;
- `coverage`: the plain share of the words found;
- `words`: how many content words the query has (a one-word query fully matched says less than six);
- `title_share`: the IDF-weighted share of the words in the note's title.

On the shared vaults the IDF-weighted word share separated answerable from unanswerable questions
better (AUC 0.80) than the dense arm's best-chunk cosine (0.65), so the model uses the word features
alone, for lexical and hybrid results alike. The four features go through a logistic curve whose coefficients
were fitted on the train part of bench/fixtures/prompts-vaultofknowledge.jsonl (coding prompts the
vault cannot help with against prompts that name their note; see `agentmd eval prompts`), so the output
reads as a probability that the note is what the prompt is about. The word-share coefficient is
positive: confidence never falls as the share rises, the other features fixed.

A last step weighs the most specific word that none of the best results holds. A question the vault cannot
answer although it is on the vault's topics usually names something the vault does not hold (an app, a
product, a file format): its nearest notes share the topic, so their cosine and word share look like a real
answer's, but none of them holds the question's rarest word. Over the dev questions of three shared vaults
that word's IDF (over the IDF of a word in no note) told answerable questions from unanswerable ones better
than any other feature tried, the cosine included; it is read over the top five notes together, not per
note, so a prompt of two questions, each answered by a different note, keeps both. Only a word that is not an
everyday English word counts: one the embedding model's tokenizer does not hold whole (`todoist`, `intellij`,
`kubernetes`). A question worded without its note's words also has words no top note holds, but everyday ones
(`diary`, `erase`, `laptop`), and counting those rejected its answer as if the vault lacked the thing. The
confidence is then recalibrated: `logit(c') = a + b·logit(c) − k·missing`, with `c` the confidence described
above. A word in no note that one of those notes holds one edit away reads as a misspelling and is not
counted.

What a result's score reads is gathered in one `Signals` value (`signals`), and `score` turns it into the number
every result shows as its `score` (and, for one release, as `confidence`): the stacked curves above (`stacked`). One
logistic model over the same signals, fitted across the shared vaults with each left out in turn
(bench/confidence_fit.py), was measured against them and not taken: at the thresholds that kept as many answers
it rejected fewer unanswerable questions and left fewer coding prompts silent (bench/RESULTS.md, "One score").

`apply_floor` drops results below a floor and, when nothing is left, says so in `note`, naming the
closest miss. The floors come from the contract's `thresholds` (`search_floor`, `recall_floor`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.search.planning import query_terms, split_words
from agentmd.engine.search.result import Miss, Result, SearchResponse
from agentmd.vault_schema import cjk

# The word model: a logistic curve fitted by bench/confidence_fit.py on the prompts file's train part
# (bench/RESULTS.md "Constants of the search", INTERCEPT ... RARITY_WEIGHT).
INTERCEPT = -9.817
WORD_SHARE_WEIGHT = 5.457
COVERAGE_WEIGHT = 2.674
WORDS_WEIGHT = 1.044  # per ln(number of content words)
TITLE_SHARE_WEIGHT = 5.728
RARITY_WEIGHT = 2.809
# A hybrid row's confidence is the higher of the word model's and a cosine curve (bench/RESULTS.md
# "Constants of the search", COSINE_MIDPOINT).
COSINE_MIDPOINT = 0.50
COSINE_SLOPE = 12.0
# Below COSINE_VETO a row's confidence is the cosine curve's alone, whatever its words (bench/RESULTS.md
# "Constants of the search", COSINE_VETO).
COSINE_VETO = 0.30
# ... unless words the embedding model does not know (`unknown`: names, identifiers) that the note holds make up
# at least this share of the query's weight (bench/RESULTS.md "Constants of the search", UNKNOWN_SHARE).
UNKNOWN_SHARE = 0.5
# The recalibration by the rarest word no top-five note holds, and that word's weight (bench/RESULTS.md
# "Constants of the search", RECAL_INTERCEPT ... MISSING_WEIGHT).
RECAL_INTERCEPT = 0.025
RECAL_SLOPE = 0.811
MISSING_WEIGHT = 2.0
MISSING_EVERYDAY = True  # `missing` skips everyday words (False: every word counts, as first fitted)
# A CJK word keeps the weight first fitted (bench/RESULTS.md "Constants of the search", CJK_MISSING_WEIGHT).
CJK_MISSING_WEIGHT = 0.888
# The missing word's weight is scaled by the share of the query's specific words that no top note holds
# (`QueryWords.missing`; bench/RESULTS.md "Constants of the search", MISSING_SHARE).
MISSING_SHARE = True
# Past MISSING_LONG_FROM content words the missing-word step weighs that many over the words of itself
# (bench/RESULTS.md "Constants of the search", MISSING_LONG_FROM).
MISSING_LONG_FROM = 7
MISSING_DEPTH = 5  # the notes, in rank order, whose words count as held
# A query word in no note that a top note holds one edit away is a misspelling, not a thing the vault lacks
# (`priorty`), read so from MISSPELT_FROM characters (bench/RESULTS.md "Constants of the search", MISSPELT_FROM).
MISSPELT_FROM = 6
# A word missing from a vault of a few dozen notes says little, so the weight (and the search floor,
# `search_floor`) grows with the vault, in full from MISSING_FULL_AT notes (bench/RESULTS.md "Constants of the
# search", MISSING_FULL_AT).
MISSING_FULL_AT = 100
NAME_CONFIDENCE = 0.9  # the least confidence of a note the query names (its title, alias or file name)
ENTITY_CONFIDENCE = 1.0  # a note marked as the page of an entity the query names outright


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a note holds of a query's content words."""

    word_share: float  # IDF-weighted share of the words found, 0..1
    coverage: float  # plain share of the words found, 0..1
    words: int  # content words in the query
    title_share: float = 0.0  # IDF-weighted share of the words found in the title, 0..1
    rarity: float = 0.0  # the rarest found word's IDF over the IDF of a word in no note, 0..1


def idf(doc_freq: int, docs: int) -> float:
    """BM25-style IDF, ln(1 + (N - df + 0.5) / (df + 0.5)): a word in no note weighs most."""
    return math.log(1 + (docs - doc_freq + 0.5) / (doc_freq + 0.5))


def confidence(evidence: Evidence) -> float:
    """The calibrated confidence of one result, in [0, 1]."""
    if evidence.words == 0:
        return 0.0
    z = (
        INTERCEPT
        + WORD_SHARE_WEIGHT * evidence.word_share
        + COVERAGE_WEIGHT * evidence.coverage
        + WORDS_WEIGHT * math.log(evidence.words)
        + TITLE_SHARE_WEIGHT * evidence.title_share
        + RARITY_WEIGHT * evidence.rarity
    )
    return 1.0 / (1.0 + math.exp(-z))


def recalibrate(sure: float, missing: float) -> float:
    """The confidence `sure` (the word model's, or the higher of it and the cosine curve) weighed by
    `missing` (`QueryWords.missing`: how much the query words that none of the best results holds count). It
    keeps the order of `sure` for equal `missing`."""
    p = min(max(sure, 1e-6), 1.0 - 1e-6)
    z = RECAL_INTERCEPT + RECAL_SLOPE * math.log(p / (1.0 - p)) - missing
    return 1.0 / (1.0 + math.exp(-z))


# The word list of the embedding model's tokenizer (WordPiece, uncased): a word it holds whole is common in
# general English text; one it must cut into pieces is rare there (a product, a format, a name, jargon).
VOCABULARY_FILE = Path(__file__).resolve().parents[1] / "index" / "minilm" / "tokenizer.json"


class Vocabulary:
    """The tokenizer's whole words, read when first asked. A process that asks about a few words (a hook, one
    search) searches the file's text for each, about 0.4 ms a word; one that goes on asking (the daemon)
    builds a set once (about 20 ms) and then looks words up for nothing."""

    SET_AFTER = 64  # lookups by text search before the set is built

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text: str | None = None
        self.words: frozenset[str] | None = None
        self.asked = 0

    def _read(self) -> str:
        if self.text is None:
            try:
                text = self.path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""  # every missing word then counts
            start = text.find('"vocab":{')
            self.text = text[start + len('"vocab":') :] if start >= 0 else ""
        return self.text

    def holds(self, word: str) -> bool:
        words = self.words
        if words is not None:
            return word in words
        self.asked += 1
        if self.asked > self.SET_AFTER:
            self.words = frozenset(_KEY.findall(self._read()))
            return word in self.words
        return f'"{word}":' in self._read()


_KEY = re.compile(r'"([^"\\]+)":')
VOCABULARY = Vocabulary(VOCABULARY_FILE)


def everyday(word: str) -> bool:
    """Whether `word` is an everyday English word: one the embedding model's tokenizer holds whole (letters only,
    not CJK, which the tokenizer always cuts into characters)."""
    low = word.lower()
    return low.isalpha() and not cjk.has_cjk(low) and VOCABULARY.holds(low)


def unknown(word: str) -> bool:
    """Whether the embedding model does not know `word`: it holds a letter, is not CJK and is not an everyday
    English word (`everyday`): a name or an identifier (`ConsenSys`, `useEffect`, `E1234`), which the model
    reads as word pieces, so a passage's cosine says little of whether the passage is about it."""
    return any(ch.isalpha() for ch in word) and not cjk.has_cjk(word) and not everyday(word)


EDGE_PUNCTUATION = "\"'`([{<>}]).,;:!?*_~"  # stripped from a query word before it is judged `unknown`


class QueryWords:
    """A query's content words, each as the index analyses it, with its IDF over the index."""

    def __init__(self, index: SearchIndex, query: str) -> None:
        self.index = index
        docs = max(index.doc_count(), 1)
        self.top_idf = idf(0, docs)
        self.docs = docs
        self.words: list[tuple[tuple[str, ...], float]] = []
        self.plain: list[str] = []  # each of `words` as the query wrote it
        seams = cjk.bridges(query, index.doc_freq) if cjk.has_cjk(query) else set()
        spaced = query_terms(query)
        self.spaced = spaced  # the query's words as written, for `unknown_words`
        self._unknown: list[tuple[tuple[str, ...], float]] | None = None
        for word in split_words(spaced):
            if word in seams:
                continue  # no word of the query: where two of its CJK words meet
            terms = tuple(index.analyze(word))
            if len(terms) > 1 and (joined := cjk.pairs(terms)) and len(joined) == len(terms) - 1:
                terms = tuple(joined)  # a CJK word is held where its characters stand together
            if terms:
                self.words.append((terms, idf(index.doc_freq(word), docs)))
                self.plain.append(word)

    def share(self, note_terms: Container[str]) -> tuple[float, float, float]:
        """(IDF-weighted share, plain share, rarity) of the query's words found among `note_terms`."""
        total = sum(w for _t, w in self.words)
        found = [w for terms, w in self.words if all(t in note_terms for t in terms)]
        weighted = sum(found) / total if total > 0 else 0.0
        rarity = max(found, default=0.0) / self.top_idf if self.top_idf > 0 else 0.0
        return weighted, (len(found) / len(self.words) if self.words else 0.0), rarity

    def unknown_words(self) -> list[tuple[tuple[str, ...], float]]:
        """Each query word as written (`user-data-dir`) that the embedding model does not know (`unknown`): its
        terms and weight. Read once, when a row first asks (only a row the cosine would veto does)."""
        if self._unknown is None:
            self._unknown = []
            for token in self.spaced:
                bare = token.strip(EDGE_PUNCTUATION)
                parts = split_words([bare]) if unknown(bare) else []
                terms = tuple(t for w in parts for t in self.index.analyze(w))
                if terms:
                    self._unknown.append((terms, sum(idf(self.index.doc_freq(w), self.docs) for w in parts)))
        return self._unknown

    def unknown_share(self, note_terms: Container[str]) -> float:
        """The IDF-weighted share of the query that the words the embedding model does not know (`unknown`)
        and `note_terms` hold make up."""
        total = sum(w for _t, w in self.words)
        found = self.unknown_words() if total > 0 else []
        held = sum(w for terms, w in found if all(t in note_terms for t in terms))
        return min(1.0, held / total) if found else 0.0

    def held(self, note_terms: Container[str]) -> list[bool]:
        """For each of the query's words, whether `note_terms` holds it."""
        return [all(t in note_terms for t in terms) for terms, _w in self.words]

    def missing(self, held: Sequence[Sequence[bool]], paths: Sequence[str] = ()) -> float:
        """How much the query's words that none of the notes described by `held` holds count against them:
        the most, over those words, of a word's IDF over `top_idf` times its weight (MISSING_WEIGHT, none for an
        everyday English word, CJK_MISSING_WEIGHT for a CJK one), times the share those lost words have of the
        weights of all the query's words (MISSING_SHARE), less in a query of more than MISSING_LONG_FROM words
        and in a vault of fewer than MISSING_FULL_AT notes; 0.0 when every word is held by one of them. The
        share keeps a short question whose one specific word no note holds weighed in full, and weighs less a
        long one whose top notes hold its other specific words (a claim naming a drug and a disease, its
        abstract naming the disease only). `paths`: the notes `held` describes; a word in no note of the vault
        that one of them holds one edit away (`misspelt`) is not lost."""
        if self.top_idf <= 0:
            return 0.0
        weighed = [w * self._weight(self.plain[i]) for i, (_t, w) in enumerate(self.words)]
        lost = [
            v
            for i, v in enumerate(weighed)
            if not any(h[i] for h in held) and not (v > 0 and paths and self.misspelt(i, paths))
        ]
        worst = max(lost, default=0.0) / self.top_idf * min(1.0, self.docs / MISSING_FULL_AT)
        if MISSING_SHARE and worst > 0:
            worst *= sum(lost) / sum(weighed)
        if len(self.words) > MISSING_LONG_FROM:
            worst *= MISSING_LONG_FROM / len(self.words)
        return worst

    def misspelt(self, i: int, paths: Sequence[str]) -> bool:
        """Whether the query's word `i` reads as a misspelling of a word one of the notes at `paths` holds: it is
        in no note of the vault, is one term of at least MISSPELT_FROM characters, and one of them holds a
        term one edit from it (`priorty` and `priority`)."""
        terms, weight = self.words[i]
        if weight < self.top_idf or len(terms) != 1 or len(terms[0]) < MISSPELT_FROM or cjk.has_cjk(terms[0]):
            return False
        return self.index.near_spelling(terms[0], paths)

    @staticmethod
    def _weight(word: str) -> float:
        if cjk.has_cjk(word):
            return CJK_MISSING_WEIGHT  # the tokenizer cuts every CJK word into characters: it says nothing here
        return 0.0 if MISSING_EVERYDAY and everyday(word) else MISSING_WEIGHT

    def evidence(self, note_terms: Container[str], title_terms: Container[str] = frozenset()) -> Evidence:
        """How much of the query a note holds, given the note's analysed terms (title included) and its
        title's terms."""
        share, coverage, rarity = self.share(note_terms)
        title_share, _plain, _rarity = self.share(title_terms)
        return Evidence(round(share, 6), round(coverage, 6), len(self.words), round(title_share, 6), round(rarity, 6))


@dataclass(frozen=True, slots=True)
class Signals:
    """What the score of one result reads: the note's evidence, the query's missing words, the best chunk's
    cosine (a hybrid row whose note has vectors) and whether the query names the note."""

    evidence: Evidence
    missing: float = 0.0  # `QueryWords.missing` over the first MISSING_DEPTH notes: the same for every row
    cosine: float | None = None
    named: bool = False  # the whole query is the note's title, alias, file name or heading
    named_within: bool = False  # a run of a longer query's words names the note
    unknown_share: float = 0.0  # the share of the query the note holds in words the model does not know
    entity: bool = False  # the note is the page of an entity the query names outright


def signals(index: SearchIndex, query: str, results: Sequence[Result]) -> list[Signals]:
    """The signals of each result, in order. The note's words are read once per note, however many sections
    it returns."""
    if not results:
        return []
    words = QueryWords(index, query)
    seen: dict[str, Evidence] = {}
    unknown_in: dict[str, float] = {}
    held: dict[str, list[bool]] = {}  # the first MISSING_DEPTH notes, in rank order
    for row in results:
        if row.note not in seen:
            terms = index.note_terms(row.note)
            seen[row.note] = words.evidence(*terms)
            # read only where it can matter: a row whose best chunk the veto would otherwise judge alone
            vetoable = isinstance(row.cosine, int | float) and row.cosine < COSINE_VETO
            unknown_in[row.note] = words.unknown_share(terms[0]) if vetoable else 0.0
            if len(held) < MISSING_DEPTH:
                held[row.note] = words.held(terms[0])
    missing = words.missing(list(held.values()), list(held))
    out: list[Signals] = []
    for row in results:
        cosine = row.cosine
        out.append(
            Signals(
                seen[row.note],
                missing,
                float(cosine) if isinstance(cosine, int | float) else None,
                bool(row.name and not row.name_within),
                bool(row.name and row.name_within),
                unknown_in[row.note],
                bool(row.entity),
            )
        )
    return out


def stacked(sig: Signals) -> float:
    """The score as the stacked curves give it: the word model, the cosine curve's max and veto, the
    recalibration by the missing word, the floor of a named note."""
    if sig.entity:
        return ENTITY_CONFIDENCE
    sure = confidence(sig.evidence)
    if sig.cosine is not None:
        curve = 1.0 / (1.0 + math.exp(-COSINE_SLOPE * (sig.cosine - COSINE_MIDPOINT)))
        # a note whose title holds every word of the query is what the query names, however far its passages
        # sit from a few words in meaning ("money" and "Money as integer cents")
        titled = sig.evidence.title_share >= 1.0
        vetoed = sig.cosine < COSINE_VETO and sig.unknown_share < UNKNOWN_SHARE and not titled
        sure = curve if vetoed else max(sure, curve)
    sure = recalibrate(sure, sig.missing)
    if sig.named:
        # a name inside a longer query ("what do I know about QuickAdd") orders the notes it names first
        # but keeps their own confidence: given 0.5, the dev sets' unanswerable questions that mention a
        # title were no longer rejected (lexical, 20 of 36 rejected -> 7; bench/RESULTS.md)
        sure = max(sure, NAME_CONFIDENCE)
    return sure


def score(sig: Signals) -> float:
    """The score of one result, in [0, 1]."""
    return stacked(sig)


def annotate(index: SearchIndex, query: str, response: SearchResponse) -> SearchResponse:
    """Give every result of a search response its `confidence` (and `word_share` when it has none)."""
    results = response.results
    if not results:
        return response
    out: list[Result] = []
    for row, sig in zip(results, signals(index, query, results), strict=True):
        sure = score(sig)
        shown = sure if sig.entity else round(sure, 4)
        if row.word_share is None and not row.entity:
            out.append(replace(row, word_share=sig.evidence.word_share, confidence=shown))
        else:
            out.append(replace(row, confidence=shown))
    return replace(response, results=tuple(out))


def search_floor(index: SearchIndex, floor: float) -> float:
    """The search floor in effect for this index: `floor` from MISSING_FULL_AT notes, less in a smaller vault,
    down to nothing for a vault of a note or two. Word rarity is what the confidence reads, and in a vault of a
    few dozen notes every word is rare or everywhere, so a floor fitted on large vaults would hide a note that
    holds every word of the query. The recall hook's floor is not scaled: a prompt's notes are pushed unasked."""
    return floor * min(1.0, max(index.doc_count(), 0) / MISSING_FULL_AT)


def closest(results: Iterable[Result]) -> Result | None:
    """The result with the highest confidence (the first of equals)."""
    best: Result | None = None
    for row in results:
        if best is None or (row.confidence or 0.0) > (best.confidence or 0.0):
            best = row
    return best


def describe_miss(row: Result) -> str:
    title = row.title or row.note.rsplit("/", 1)[-1]
    return f"{title} ({row.note}, confidence {row.confidence or 0.0:.2f})"


def clears(row: Result, floor: float) -> bool:
    """Whether a result is shown at this floor (one without a confidence always is)."""
    return row.confidence is None or row.confidence >= floor


def apply_floor(response: SearchResponse, floor: float) -> SearchResponse:
    """Drop the results whose confidence is below `floor` (results without one are kept). Records the
    floor and how many results it dropped; when it dropped them all, `note` says so and names the
    closest miss (title, path and confidence), also in `closest_miss`."""
    results = response.results
    kept = tuple(r for r in results if clears(r, floor))
    dropped = [r for r in results if not clears(r, floor)]
    response = replace(response, floor=floor, below_floor=len({r.note for r in dropped}))
    if not dropped:
        return response
    if kept:
        return replace(response, results=kept)
    miss = closest(dropped)
    assert miss is not None
    said = f"no result reached the confidence floor ({floor:.2f}); the closest miss: {describe_miss(miss)}"
    return replace(
        response,
        results=kept,
        closest_miss=Miss(miss.note, miss.title, miss.confidence),
        note="; ".join(x for x in (said, response.note) if x),
    )
