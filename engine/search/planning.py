"""Query planning: what a search request is and how its words are run (engine/search/searcher.py runs it).

A request's words are read for those that carry meaning (`query_terms`: stop words and bare punctuation out,
CJK text cut into its words) and planned (`plan`) as one conjunction (`and`, or a query of one or two words),
a fusion of the full conjunction and its pairs (three words), or a question ranked by BM25 over the notes
holding two of its words or one rare word (four or more).
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Container
from dataclasses import dataclass, field

from agentmd.engine.errors import UsageError
from agentmd.engine.index.fulltext import FIELD_BOOSTS, QUESTION_FIELD_BOOSTS, SearchIndex
from agentmd.engine.request_fields import described
from agentmd.engine.search import when
from agentmd.vault_schema import cjk
from agentmd.vocabulary import MODAL_WORDS, PROMPT_FILLER, REQUEST_WORDS, STOP_WORDS, TIME_QUESTION_WORDS

MODES = ("fusion", "and")
DEFAULT_MODE = "fusion"
HYBRID = "hybrid"  # the lexical default fused with the dense arm (engine/search/query.py, hybrid.py)
REQUEST_MODES = (HYBRID, *MODES)
MAX_LIMIT = 200
MAX_QUERY_CHARS = 2000
MAX_BOUND_CHARS = 60  # an `after`/`before` bound: a date, an age or a few words
PAIR_TERMS = 7  # the rarest words that form pairs in fusion mode (7 words -> 21 pairs)
FULL_WEIGHT = 2.0  # the full conjunction counts double in the fusion
MAX_PROJECT_CHARS = 100  # a project slug's length a search may give
LONG_QUESTION = 4  # words (after stop words) from which a query is read as a question
EVIDENCE_WEIGHT = 3.0  # the weight of the all-words BM25 ranking in the fusion of a three-word query
# A three-word query each of whose words is in more than half of the notes is ranked by that all-words BM25
# ranking alone (from this many notes; in a smaller vault a word is easily in half of them).
COMMON_FROM = 1_000
# QUESTION_BOOSTS (questions weigh the title and meta fields lightly) and RARE_SHARE (a question admits the notes
# holding two of its words, or one word held by at most this share of the notes): SciFact train and the dev
# fixtures, bench/RESULTS.md "Constants of the search".
RARE_SHARE = 0.01
QUESTION_BOOSTS = QUESTION_FIELD_BOOSTS

_NON_WORD = re.compile(r"[^\w]+")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search, as the MCP tool, the `/v1/search` route and the CLI take it (engine/request_fields.py derives
    the tool's input schema and the route's field checks from these fields)."""

    query: str = field(
        metadata=described(
            'What to look for: a question, keywords, a note\'s title or alias, or a time alone ("yesterday", '
            '"notes since Monday") to list the notes of that time.',
            minLength=1,
            maxLength=MAX_QUERY_CHARS,
        )
    )
    limit: int = field(
        default=10,
        metadata=described(
            f"How many results to return at most (1 to {MAX_LIMIT}, default 10).",
            default=10,
            minimum=1,
            maximum=MAX_LIMIT,
        ),
    )
    # a request sent as JSON (the MCP tool, the `/v1` route) without a mode is hybrid; the lexical default here
    mode: str = field(
        default=DEFAULT_MODE,
        metadata=described(
            '"hybrid": words and meaning fused (default); "fusion": words only, notes matching most of them first; '
            '"and": words only, every word required.',
            default=HYBRID,
            enum=list(REQUEST_MODES),
        ),
    )
    after: str | None = field(  # captured on or after this date
        default=None,
        metadata=described(
            "Only notes captured on or after this day: a date (YYYY-MM-DD, YYYY-MM or YYYY), an age (3d, 2w) or "
            "words ('last week', 'yesterday', 'March 2026').",
            maxLength=MAX_BOUND_CHARS,
        ),
    )
    before: str | None = field(  # captured on or before this date
        default=None,
        metadata=described(
            "Only notes captured on or before this day: a date (YYYY-MM-DD, YYYY-MM or YYYY), an age (3d, 2w) "
            "or words ('last week', 'yesterday', 'March 2026').",
            maxLength=MAX_BOUND_CHARS,
        ),
    )
    project: str | None = field(
        default=None,
        metadata=described(
            "A project slug: notes of other projects rank lower (they are not hidden).", maxLength=MAX_PROJECT_CHARS
        ),
    )
    include_archived: bool = field(
        default=False,
        metadata=described("Also return archived, superseded and staged notes (hidden by default).", default=False),
    )
    per_note: int = 1
    explain: bool = False
    include_probe: bool = field(  # self-probe notes are left out unless asked for (engine/search/trust.py)
        default=False,
        metadata=described("Also return the daemon's own self-probe notes (hidden by default).", default=False),
    )
    floor: float | None = None  # this search's confidence floor, 0..1, as given (None: the contract's search_floor)
    # the search's clock, an ISO date or date and time: "last May", "yesterday" are read against it (None: today)
    now: str | None = None


def time_span(request: SearchRequest) -> when.Span | None:
    """The span of days the request's query names ("last May", "in June 2023"; engine/search/when.py), read
    against the request's clock; None when it names none. Raises UsageError on a `now` that is not a date."""
    try:
        return when.read(request.query, request.now)
    except ValueError:
        raise UsageError(f"now {request.now!r} is not a date; write it as YYYY-MM-DD or an ISO date and time") from None


def content_query(request: SearchRequest) -> str:
    """The query's words a search looks for: the query without its time expression ("when did we meet in
    June" -> "when did we meet"), unless that leaves no word that carries meaning."""
    span = time_span(request)
    if span is None:
        return request.query
    rest = span.rest(request.query)
    return rest if query_terms(rest) else request.query


def time_only(request: SearchRequest) -> when.Span | None:
    """The span of days of a request that asks for a time and nothing else: a query with no word beside its time
    expression but stop words, the words that only ask (`REQUEST_WORDS`, `PROMPT_FILLER`) and the verbs of a
    question about a time (`TIME_QUESTION_WORDS`): "what did I capture yesterday", "notes from last week",
    "2026-12-04"; never one with a modal verb ("what should I work on today", `MODAL_WORDS`); or a query of no
    such word at all with `after` or `before` (an open span, the bounds narrow it). None for any other request."""
    span = time_span(request)
    if span is None and request.after is None and request.before is None:
        return None
    asking = REQUEST_WORDS | PROMPT_FILLER | TIME_QUESTION_WORDS
    query = span.rest(request.query) if span is not None else request.query
    words = [w.strip(".,;:!?\"'()").lower() for w in query.split()]
    if MODAL_WORDS.intersection(words):  # "what should I work on today" asks what to do, not what was noted
        return None
    rest = [w for w in words if w not in asking]
    if query_terms(" ".join(rest)):
        return None
    return span if span is not None else when.Span(None, None)


def judged_query(request: SearchRequest) -> str:
    """The words a result's confidence is read against: the content query (`content_query`) without the words
    that only ask ("summarise what I wrote about karma theory" -> "karma theory"; `REQUEST_WORDS`, and the
    filler of a prompt, `PROMPT_FILLER`), unless
    nothing that carries meaning is left."""
    query = content_query(request)
    asking = REQUEST_WORDS | PROMPT_FILLER
    kept = " ".join(w for w in query.split() if w.strip(".,;:!?\"'()").lower() not in asking)
    return kept if query_terms(kept) else query


_BOUND_DATE = re.compile(r"[\d-]+")  # what is read as YYYY[-MM[-DD]] (and refused when it is no such date)


def _day_bound(text: str | None, *, upper: bool, name: str, now: str | None = None) -> int | None:
    if text is None or not text.strip():
        return None
    if not _BOUND_DATE.fullmatch(text.strip()):  # an age (`3d`) or words (`last week`), as every client may send
        day = when.bound_day(text, name, now)
        if day is None:
            raise UsageError(
                f"{name} {text!r} is not a date: give one (YYYY-MM-DD, YYYY-MM or YYYY), an age (3d, 2w) or a time "
                "in words ('last week', 'yesterday', 'March 2026')"
            )
        return day.year * 10000 + day.month * 100 + day.day
    parts = text.strip().split("-")
    try:
        nums = [int(p) for p in parts]
        if len(nums) == 1:
            y, m, d = nums[0], 12 if upper else 1, 31 if upper else 1
        elif len(nums) == 2:
            y, m = nums
            if upper:
                nxt = dt.date(y + (m == 12), m % 12 + 1, 1)
                d = (nxt - dt.timedelta(days=1)).day
            else:
                d = 1
        elif len(nums) == 3:
            y, m, d = nums
        else:
            raise ValueError
        dt.date(y, m, d)
    except ValueError:
        raise UsageError(f"{name} {text!r} is not a date; write it as YYYY-MM-DD, YYYY-MM or YYYY") from None
    return y * 10000 + m * 100 + d


def day_bound(text: str | None, *, upper: bool, name: str, now: str | None = None) -> int | None:
    """A date bound (YYYY-MM-DD, YYYY-MM or YYYY; or an age or words, read against `now`) as yyyymmdd, or None;
    raises UsageError on a bad date."""
    return _day_bound(text, upper=upper, name=name, now=now)


def split_words(terms: list[str]) -> list[str]:
    """Terms cut at punctuation (`IL-6` -> `IL`, `6`), stop words and repeats dropped: a question's words are
    scored one by one, as a plain BM25 would, rather than as phrases."""
    out: list[str] = []
    seen: set[str] = set()
    for term in terms:
        for part in _NON_WORD.split(term):
            low = part.lower()
            if part and low not in STOP_WORDS and low not in seen:
                seen.add(low)
                out.append(part)
    return out


def _spaced_words(query: str) -> list[str]:
    """The query split at white space, each word holding CJK characters split further into its words
    (engine/search/cjk.py): such text puts no spaces between words."""
    out: list[str] = []
    for word in query.split():
        if cjk.has_cjk(word):
            out.extend(cjk.words(word))
        else:
            out.append(word)
    return out


def query_terms(query: str, keep: Container[str] = ()) -> list[str]:
    """The words of a query that carry meaning: white-space split (CJK text into its character pairs), stop
    words (but those in `keep`: the ones inside a name the query holds) and bare punctuation out, duplicates
    (case-insensitive) out, order kept."""
    out: list[str] = []
    seen: set[str] = set()
    for word in _spaced_words(query):
        bare = "".join(ch for ch in word.lower() if ch.isalnum())
        if not bare or (bare in STOP_WORDS and bare not in keep) or word.lower() in seen:
            continue
        seen.add(word.lower())
        out.append(word)
    return out


@dataclass(frozen=True, slots=True)
class Plan:
    groups: list[list[str]]  # the conjunctive queries; the first holds every meaningful word
    weights: list[float]
    boosts: dict[str, float]
    evidence_weight: float = 0.0
    min_match: int | None = None  # a question: notes with at least this many of the words, BM25-ranked
    sufficient: tuple[str, ...] = ()  # a long question's rare words: a note holding one qualifies alone


def plan(index: SearchIndex, request: SearchRequest, keep: Container[str] = ()) -> Plan:
    """How a request is run.

    `and`: one conjunction of every word. `fusion`: stop words out; one or two words are a conjunction;
    three words fuse, by reciprocal rank, the full conjunction, each pair, and a BM25 ranking of all the
    words over the notes holding at least two of them (that ranking alone when every word is in more than
    half of a large vault's notes); four or more words are a question: the notes that
    hold at least two of its words (the union of the pair conjunctions) or one of its rare words, ranked by
    BM25 of all its words.
    On SciFact and on the dev fixtures the BM25 ranking of that union beats the reciprocal-rank fusion of
    the pair lists for questions (see the README's measurements).
    """
    words = request.query.split()
    if request.mode == "and":
        return Plan([words], [1.0], FIELD_BOOSTS)
    terms = query_terms(request.query, keep) or words
    asked = content_query(request)
    if asked != request.query and len(terms) < LONG_QUESTION:
        # A short query's words are required: its time words ("last May") are read as a time, not looked for.
        # A question requires none of its words, and its time words still count as words: a note that says
        # its date ("# Session 9, 17 July 2023") holds them.
        terms = query_terms(asked, keep) or asked.split()
    if len(terms) <= 2:
        return Plan([terms], [1.0], FIELD_BOOSTS)
    if len(terms) >= LONG_QUESTION:
        parts = split_words(terms) or terms
        ceiling = int(index.doc_count() * RARE_SHARE)  # 0 below 100 notes, where no word is rare by share
        sufficient = tuple(t for t in parts if 0 < index.doc_freq(t) <= ceiling)
        return Plan([parts], [1.0], QUESTION_BOOSTS, min_match=2, sufficient=sufficient)
    docs = index.doc_count()
    if len(terms) == 3 and docs >= COMMON_FROM and all(index.doc_freq(t) * 2 > docs for t in terms):
        # Every word is in most notes: the conjunction and each pair hold nearly every note, cost most of the
        # search and tell the notes apart no better than the evidence ranking does on its own.
        return Plan([terms], [1.0], FIELD_BOOSTS, min_match=2)
    rare = sorted(terms, key=lambda t: (index.doc_freq(t), terms.index(t)))[:PAIR_TERMS]
    rare = [t for t in terms if t in rare]  # back to query order
    groups = [terms] + [list(p) for p in itertools.combinations(rare, 2)]
    return Plan(groups, [FULL_WEIGHT] + [1.0] * (len(groups) - 1), FIELD_BOOSTS, evidence_weight=EVIDENCE_WEIGHT)
