"""Names inside a query: "what do I know about QuickAdd", "who is Ada Lovelace", "notes on free will and
determinism". The whole query is matched as a name first (`SearchIndex.name_hits`); when it names no note,
its runs of consecutive words are, longest first, so a note's title, file name, alias or heading written
inside an ordinary question puts that note first whatever the words around it.

Runs name notes only in a query that says little beside them (at most MAX_BESIDE words that are not stop
words, filler or words that only ask): a longer query is about its words. A run qualifies when it holds a word
that is not a stop word and neither begins nor ends with the filler people put around a request
(`PROMPT_FILLER`: "please", "want", ...); stop words may sit inside or at the edge of a longer run, since a
name may hold them (`free will`, `The Matrix`). A run of one word must be a note's whole title, file name or
alias (a single word that is only some note's heading, "Overview", "Install", names a part of many notes, not
one), at least three characters long; longer runs may also be a heading, or begin a title, file name or alias
shared by at most a few notes (as for a whole query). A run that begins a longer name which the query then
writes whole is that name, however many words it has. A run that only begins names (or stands inside a
title) is weaker evidence: it names nothing when it begins or ends with a stop word ("associated with",
"risk of": a piece of a sentence), nor when the query holds two or more such runs (a claim whose words happen
to begin a few titles), and it allows one word fewer beside it than a whole name does. Runs overlapping a
longer run that named a note are not tried. The stop words inside a named run are words of the query again
(`free will` keeps `will`), and so is a stop word that follows a word of the query as a phrase the vault's
notes write (`phrase_stop_words`: "free will" where no title says it but the notes do)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from agentmd.engine.index.fulltext import NameHit, SearchIndex, name_key
from agentmd.vocabulary import PROMPT_FILLER, REQUEST_WORDS, STOP_WORDS

# A stop word right after a word of the query is a word of the query again when the two are a phrase of the
# vault: written together in at least PHRASE_NOTES notes, and in at least PHRASE_SHARE of the notes holding the
# first word ("free will" in a philosophy vault; not "parser will").
PHRASE_NOTES = 2
PHRASE_SHARE = 0.5
MAX_RUN = 4  # the longest run of words read as a name inside a query
MAX_WORDS = 24  # a longer query's words past this are not read for names (a pasted text is not a question)
WHOLE_KINDS = ("title", "file name", "alias")  # what a run of one word must be
# A query with more than this many words that say something beside its named runs is about those words, not a
# name: a claim such as "ALDH1 expression is associated with poorer prognosis for breast cancer" holds the
# beginning of a few titles ("breast cancer"), and naming them put them first (SciFact, bench/RESULTS.md). A run
# that only begins titles allows one word fewer.
MAX_BESIDE = 2


@dataclass(frozen=True, slots=True)
class NamedRun:
    words: tuple[str, ...]  # the run as written in the query
    hits: tuple[NameHit, ...]  # the notes it names, best first


def _key_words(query: str) -> list[str]:
    return [w for w in query.split() if name_key(w)]


def _filler(word: str) -> bool:
    return name_key(word) in PROMPT_FILLER or word.lower() in PROMPT_FILLER


def _stop(word: str) -> bool:
    return name_key(word) in STOP_WORDS


def named_runs(
    index: SearchIndex,
    query: str,
    *,
    include_walled: bool = False,
    day_range: tuple[int | None, int | None] = (None, None),
) -> list[NamedRun]:
    """The runs of the query's words that name notes, in the query's order (see the module docstring). The
    whole query is not among them: the caller matches it first."""
    words = _key_words(query)[:MAX_WORDS]
    if len(words) < 2:
        return []
    taken = [False] * len(words)
    found: list[tuple[int, NamedRun]] = []
    opens: dict[int, bool] = {}  # whether some name may begin with the two words from here (`may_name`)
    for size in range(min(MAX_RUN, len(words) - 1), 0, -1):
        for start in range(len(words) - size + 1):
            end = start + size
            if any(taken[start:end]):
                continue
            run = words[start:end]
            if _filler(run[0]) or _filler(run[-1]) or all(_stop(w) for w in run):
                continue
            key = name_key(" ".join(run))
            if size == 1 and (len(key) < 3 or not index.may_name(key, alone=True)):
                continue
            if size > 1:
                if start not in opens:
                    opens[start] = index.may_name(name_key(" ".join(words[start : start + 2])))
                if not opens[start]:
                    continue
            hits = index.name_hits(" ".join(run), include_walled=include_walled, day_range=day_range)
            if size == 1:
                hits = [h for h in hits if h.exact and h.kind in WHOLE_KINDS]
            if hits and not any(h.exact for h in hits) and size > 1:
                whole = _whole_name(index, words, start, end, taken)
                if whole > end:  # a longer name, written whole from here on
                    end, run = whole, words[start:whole]
                    longer = index.name_hits(" ".join(run), include_walled=include_walled, day_range=day_range)
                    hits = [h for h in longer if h.exact] or hits
            if not hits or (not any(h.exact for h in hits) and (_stop(run[0]) or _stop(run[-1]))):
                continue  # only the beginning of names, cut at a stop word: a piece of a sentence
            taken[start:end] = [True] * (end - start)
            found.append((start, NamedRun(tuple(run), tuple(hits))))
    partial = [(at, named) for at, named in found if not any(h.exact for h in named.hits)]
    if len(partial) > 1:  # several runs that only begin (or sit inside) titles: a sentence, not a name
        found = [f for f in found if f not in partial]
        for at, named in partial:
            taken[at : at + len(named.words)] = [False] * len(named.words)
    left = _key_words(query)[len(words) :] + [w for w, t in zip(words, taken, strict=True) if not t]
    beside = [w for w in left if _says(w)]
    if len(beside) > MAX_BESIDE - (1 if partial else 0):  # a query that says this much more is about that
        return []
    return [run for _start, run in sorted(found, key=lambda f: f[0])]


def _whole_name(index: SearchIndex, words: list[str], start: int, end: int, taken: list[bool]) -> int:
    """Where the longest title, file name or alias that `words[start:end]` begins, written whole in the
    query from `start` on, ends (`end` when none is): a name longer than MAX_RUN words."""
    names = index.names_beginning(name_key(" ".join(words[start:end])))
    best = end
    for stop in range(end + 1, len(words) + 1):
        if taken[stop - 1]:
            break
        if name_key(" ".join(words[start:stop])) in names:
            best = stop
    return best


def _says(word: str) -> bool:
    """Whether a word of the query says what it is about: not a stop word, filler, nor a word that only asks."""
    key = name_key(word)
    return bool(key) and not _stop(word) and not _filler(word) and key not in REQUEST_WORDS


def merged_hits(runs: list[NamedRun]) -> list[NameHit]:
    """The notes the runs name, one each: the longest run's first, then in the query's order."""
    ordered = sorted(runs, key=lambda r: -len(r.words))
    seen: set[str] = set()
    out: list[NameHit] = []
    for run in ordered:
        for hit in run.hits:
            if hit.hit.path not in seen:
                seen.add(hit.hit.path)
                out.append(hit)
    return out


def kept_stop_words(runs: list[NamedRun]) -> list[str]:
    """The stop words inside the named runs (`will` of `free will`), each once: words of the query again."""
    out: list[str] = []
    for run in runs:
        for word in run.words:
            low = word.lower()
            if low in STOP_WORDS and low not in out:
                out.append(low)
    return out


def phrase_stop_words(index: SearchIndex, query: str) -> list[str]:
    """The stop words of the query that follow one of its words as a phrase of the vault (PHRASE_NOTES,
    PHRASE_SHARE): "free will" keeps `will` where the vault's notes say "free will", as a title would."""
    words = _key_words(query)[:MAX_WORDS]
    out: list[str] = []
    for first, second in itertools.pairwise(words):
        low = name_key(second)
        if not _stop(second) or low in out or _stop(first) or _filler(first) or len(name_key(first)) < 3:
            continue
        together = index.doc_freq(f"{name_key(first)} {low}")
        if together >= PHRASE_NOTES and together >= PHRASE_SHARE * index.doc_freq(name_key(first)):
            out.append(low)
    return out
