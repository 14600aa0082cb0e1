"""Search: the user's words in, ranked notes out, with the walls and penalties made visible.

User text is split on white space and each word quoted before it reaches the query parser, so no input
raises. Two lexical modes (a third, `hybrid`, fuses the default with the dense arm: engine/search/hybrid.py,
reached through engine/search/query.py):

- `and`: every word must match somewhere in the note (title, aliases/tags, body), BM25-ranked.
- `fusion` (the default): stop words are dropped; the full conjunction of the remaining words and the
  conjunctions of pairs of them (the rarest words first, capped) are each ranked, and the rankings are
  fused by reciprocal rank. A note that matches only one word of a long question is never returned, so
  a question the vault cannot answer still comes back empty; a note that satisfies many pairs rises even
  when it lacks one word. A query of one or two words is the same as `and`.

Notes behind a wall (archived, superseded, staged) are left out unless asked for, and the response counts
what each wall hid, zero included. Multipliers from the contract (all ≤ 1.0) are applied over an
over-fetch of 200 before cutting to the limit, so a demoted note that is still the best match comes back
first. Each result points at its best section (`path#Heading`) and a note takes one result slot unless
`per_note` asks for more.

Names first: a query that is a note's title, file name (a Dendron hierarchy's last segments included), alias
or heading puts that note first whatever the mode or length (`SearchIndex.name_hits`: exact names before
prefixes, same names by lexical score); its row says which (`name`) and points at the heading it names. A
query that names no note as a whole is read for names inside it ("what do I know about QuickAdd", "notes on
free will"; engine/search/named.py): the notes they name come first, their rows say by which words
(`name_within`), and the stop words inside such a name are words of the query again.
"""

from __future__ import annotations

import datetime as dt
import heapq
import itertools
import re
from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import Any

from agentmd.engine.errors import UsageError
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.fulltext import (
    FIELD_BOOSTS,
    QUESTION_FIELD_BOOSTS,
    Hit,
    HitList,
    NameHit,
    SearchIndex,
    name_key,
)
from agentmd.engine.search import sections, trust
from agentmd.engine.search.graph import entity_pages
from agentmd.engine.search.named import NamedRun, kept_stop_words, merged_hits, named_runs
from agentmd.rules import Contract
from agentmd.vault_schema import chunk_text, cjk, query_entity_uris, section_text
from agentmd.vocabulary import STOP_WORDS

OVERFETCH = 200
MODES = ("fusion", "and")
DEFAULT_MODE = "fusion"
MAX_LIMIT = 200
MAX_PER_NOTE = 10
# A question shown in `limit` rows is first ranked from the top max(HEAD, HEAD_TIMES * limit) matches, which
# usually decide it (SearchIndex.search, `head`); when they do not, from the whole over-fetch.
HEAD = 30
HEAD_TIMES = 3
PENALTY_MEMO_MAX = 50_000  # notes whose multipliers are remembered for one index state (about 10 MB)
PAIR_TERMS = 7  # the rarest words that form pairs in fusion mode (7 words -> 21 pairs)
FULL_WEIGHT = 2.0  # the full conjunction counts double in the fusion
LONG_QUESTION = 4  # words (after stop words) from which a query is read as a question
EVIDENCE_WEIGHT = 3.0  # the weight of the all-words BM25 ranking in the fusion of a three-word query
# A three-word query each of whose words is in more than half of the notes is ranked by that all-words BM25
# ranking alone (from this many notes; in a smaller vault a word is easily in half of them).
COMMON_FROM = 1_000
# Questions weigh the title and meta fields lightly: the body already carries the frontmatter (title, tags,
# aliases) once, and the keyword plan's 4x title weight summed per field drowns a long question's evidence in
# the body, but a little title and alias evidence helps (a question that is a note's name is put first by
# the name match, SearchIndex.name_hits, whatever the weights). Chosen on SciFact train (809 queries) and the
# dev fixtures (dev-*-2, 94 answerable questions over three vaults), lexical, nDCG@10 / hits at 5:
# title/meta 0/0 0.6889 / 60, 0.2/0.2 0.6915 / 61, 0.2/0 0.6901 / 61, 0.3/0 0.6884 / 60, 0.5/0 0.6819 / 62,
# 0.5/0.5 0.6776 / 64, 1/1 0.6474 / 65, 4/3 0.5472 / 61.
# A question admits the notes holding at least two of its words, and a note holding one of its rare words: a
# word held by at most RARE_SHARE of the notes is specific enough (a gene, an error code, a tool)
# to qualify without a second word. Chosen on SciFact train (809 queries), lexical nDCG@10 / recall@100, and
# the dev fixtures (138 answerable and 46 unanswerable questions, hybrid, default floor), hits at 5 / rejected:
#   rare words only in questions of 7+ words, share 0.002   0.6915 / 0.896   88 / 22
#   in every question, share 0.002                          0.7027 / 0.917   88 / 23
#   in every question, share 0.01                           0.7036 / 0.925   89 / 24
#   in every question, share 0.05 (0.03 on SciFact)         0.7035 / 0.926   89 / 22
#   any one word admits a note                              0.7035 / 0.930   91 / 23
# (bm25s on the same train split: 0.6964 / 0.928). Any word alone also admits the notes sharing one common
# word with a question, which a small vault's scaled floor then lets through as noise.
RARE_SHARE = 0.01
QUESTION_BOOSTS = QUESTION_FIELD_BOOSTS
QUESTION_BESIDE_NAME = 3  # words beside a name inside a query from which a note holding them all answers it

_NON_WORD = re.compile(r"[^\w]+")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    limit: int = 10
    mode: str = DEFAULT_MODE
    after: str | None = None  # captured on or after this date (YYYY-MM-DD, YYYY-MM or YYYY)
    before: str | None = None  # captured on or before this date
    project: str | None = None
    include_archived: bool = False
    per_note: int = 1
    explain: bool = False
    include_probe: bool = False  # self-probe notes are left out unless asked for (engine/search/trust.py)
    floor: float | None = None  # this search's confidence floor, 0..1, as given (None: the contract's search_floor)


def _day_bound(text: str | None, *, upper: bool, name: str) -> int | None:
    if text is None or not text.strip():
        return None
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


def note_penalties(
    facts: dict[str, Any], path: str, request: SearchRequest, contract: Contract
) -> list[tuple[str, float]]:
    """The multipliers below 1.0 that apply to a note for this request (name, multiplier)."""
    return _penalties(facts, path, request, contract)


def day_bound(text: str | None, *, upper: bool, name: str) -> int | None:
    """A date bound (YYYY-MM-DD, YYYY-MM or YYYY) as yyyymmdd, or None; raises UsageError on a bad date."""
    return _day_bound(text, upper=upper, name=name)


def _penalties(facts: dict[str, Any], path: str, request: SearchRequest, contract: Contract) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    wall = facts.get("wall")
    if wall:
        out.append((wall, contract.multiplier(wall)))
    status = (facts.get("status") or "").lower()
    if status == "unfiled":
        out.append(("unfiled", contract.multiplier("unfiled")))
    if trust.is_untrusted(facts):
        out.append(("untrusted", contract.multiplier("untrusted")))
    lifecycle = (facts.get("lifecycle") or "").lower()
    if "fragment" in ((facts.get("type") or "").lower(), status, lifecycle):
        out.append(("fragment", contract.multiplier("fragment")))
    if lifecycle == "dormant":
        out.append(("dormant", contract.multiplier("dormant")))
    project = facts.get("project")
    if request.project and project and project.lower() != request.project.lower():
        out.append(("project_mismatch", contract.multiplier("project_mismatch")))
    elif request.project and not project and not contract.for_every_project(path, facts.get("type")):
        out.append(("project_mismatch", contract.multiplier("project_mismatch")))  # a note of no project
    if _maybe_dampened(contract, path):
        space = contract.space_of(path)
        if space is not None:
            damp = contract.dampening(space)
            if damp < 1.0:
                out.append((f"space:{space}", damp))
    return [(name, m) for name, m in out if m < 1.0]


def _maybe_dampened(contract: Contract, path: str) -> bool:
    """Whether the note may lie in a dampened space: the path starts with the folder of a space whose
    dampening is below 1. A note elsewhere falls in no dampened space whatever its longest matching folder,
    so the (costlier) space lookup is left out for it. A path that is not plain (`./`, `//`, `..`) is looked
    up in full."""
    if path.startswith(("/", "./")) or "//" in path or "/./" in path or ".." in path:
        return True
    for name, damp in contract.dampened_spaces.items():
        folder = contract.spaces.get(name)
        if damp < 1.0 and folder is not None and path.startswith(folder):
            return True
    return False


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


def _sections(index: SearchIndex, found: HitList, hit: Hit, words: list[str], n: int) -> list[tuple[str | None, str]]:
    """The note's best `n` sections for the words (engine/search/sections.py)."""
    return sections.best(index, found, hit.path, found.text_of(hit), words, n)


FILL = "_fill"  # a deferred row's cutter of its section and snippet; removed by `fill`


class Cut:
    """A deferred row's cutter of its best section and snippet (called by `fill`), which keeps the hit its
    search found, so the note's terms are read from that hit (`terms`) rather than looked up again."""

    __slots__ = ("_cut", "_found", "_hit", "_index", "_words", "penalties")

    def __init__(
        self,
        index: SearchIndex,
        found: HitList,
        hit: Hit,
        cut: Callable[[], tuple[str | None, str]] | None = None,
        words: list[str] | None = None,
    ) -> None:
        """`cut` cuts the row's section and snippet; without it, the note's best section for `words` is cut
        (`_sections`), the note's terms read from the hit first, since the row's confidence asks for them next."""
        self._index, self._found, self._hit, self._cut, self._words = index, found, hit, cut, words
        self.penalties: list[tuple[str, float]] | None = None  # set for a short row (see `complete`)

    def __call__(self) -> tuple[str | None, str]:
        if self._cut is not None:
            return self._cut()
        self._index.note_terms(self._hit.path, (self._hit, self._found))
        return _sections(self._index, self._found, self._hit, self._words or [], 1)[0]

    def terms(self) -> tuple[Container[str], frozenset[str]]:
        """The note's terms and its title's (`SearchIndex.note_terms`), read from the hit."""
        return self._index.note_terms(self._hit.path, (self._hit, self._found))


def row_terms(index: SearchIndex, row: dict[str, Any]) -> tuple[Container[str], frozenset[str]]:
    """The terms of a result row's note and of its title: read from the hit the search found while the row
    is deferred (`Cut`), else looked up (remembered once read)."""
    cut = row.get(FILL)
    if isinstance(cut, Cut):
        return cut.terms()
    return index.note_terms(str(row["note"]))


def _filler(index: SearchIndex, found: HitList, hit: Hit, terms: list[str]) -> Cut:
    return Cut(index, found, hit, words=terms)


def complete(row: dict[str, Any]) -> dict[str, Any]:
    """Give a short row (a hybrid candidate: note, scores and penalty only) the rest of a result row's
    fields, read from the note's facts; its section and snippet are still left to `fill`. Any other row is
    left as it is."""
    cut = row.get(FILL)
    if isinstance(cut, Cut) and cut.penalties is not None:
        penalties, cut.penalties = cut.penalties, None
        facts = cut._hit.facts
        row.update(
            path=row["note"],
            section=None,
            title=facts.get("title"),
            penalties=[name for name, _m in penalties],
            captured=facts.get("captured"),
            captured_source=facts.get("captured_source"),
            wall=facts.get("wall"),
            **trust.labels(facts),
            snippet="",
        )
    return row


def fill(row: dict[str, Any]) -> dict[str, Any]:
    """Make a deferred row whole (`complete`) and cut its best section and snippet (a row that is not
    deferred is left as it is)."""
    complete(row)
    cut = row.pop(FILL, None)
    if cut is not None:
        heading, snippet = cut()
        row["path"] = row["note"] + (f"#{heading.split(' > ')[-1]}" if heading else "")
        row["section"] = heading
        row["snippet"] = snippet
    return row


def _entity_page(
    index: SearchIndex, catalog: Catalog | None, request: SearchRequest
) -> tuple[str, Hit, HitList] | None:
    """The note marked as the page of an entity the query names (repo, issue, release, commit), if any."""
    if catalog is None:
        return None
    uris = query_entity_uris(request.query)
    if not uris:
        return None
    pages = entity_pages(catalog, uris)
    for uri in uris:
        path = pages.get(uri)
        if path is None:
            continue
        found = index.hit_for(path)
        if found is None:
            continue
        hit, hits = found
        if (hit.facts.get("wall") and not request.include_archived) or (
            trust.is_probe(hit.facts) and not request.include_probe
        ):
            continue
        return uri, hit, hits
    return None


def search(
    index: SearchIndex,
    contract: Contract,
    request: SearchRequest,
    catalog: Catalog | None = None,
    *,
    deferred: bool = False,
    cut_later: bool = False,
) -> dict[str, Any]:
    """Run one lexical search and return the response mapping (SPEC §7). With the catalog, a note marked as
    the page of an entity the query names (e.g. `repo:owner/name`) comes first.

    `deferred` (for a caller that asks for many candidates and shows a few, as the hybrid does): each row is
    short (note, scores, penalty) and made whole when it is shown, by `complete`, its best section and snippet
    cut by `fill` (one row a note); with `explain`, rows are whole from the start, sections still deferred.
    `cut_later` (for a caller that drops rows after the search, as the confidence floor does): the same
    rows as without it, each row's best section and snippet left to `fill`; only with `per_note` 1. The
    rows of the notes the query names are cut at once, as without it."""
    if cut_later and request.per_note != 1:
        raise UsageError("cut_later needs per_note 1: each deferred row cuts one section")
    if request.mode not in MODES:
        raise UsageError(f"search mode {request.mode!r} is not known; use one of: {', '.join(MODES)}")
    if not 1 <= request.limit <= MAX_LIMIT:
        raise UsageError(f"limit {request.limit} is out of range; use 1 to {MAX_LIMIT}")
    if not 1 <= request.per_note <= MAX_PER_NOTE:
        raise UsageError(f"per_note {request.per_note} is out of range; use 1 to {MAX_PER_NOTE}")
    lo = _day_bound(request.after, upper=False, name="after")
    hi = _day_bound(request.before, upper=True, name="before")
    if lo is not None and hi is not None and lo > hi:
        raise UsageError(f"after ({request.after}) is later than before ({request.before}); swap them")
    words = request.query.split()
    named = index.name_hits(request.query, include_walled=request.include_archived, day_range=(lo, hi))
    runs = (
        [] if named else named_runs(index, request.query, include_walled=request.include_archived, day_range=(lo, hi))
    )
    if runs:
        named = merged_hits(runs)
    how = plan(index, request, kept_stop_words(runs))
    groups, boosts = how.groups, how.boosts

    def lexical_list(head: int | None) -> HitList:
        return index.search(
            words,
            limit=max(OVERFETCH, request.limit),
            include_walled=request.include_archived,
            day_range=(lo, hi),
            groups=groups,
            weights=how.weights,
            boosts=boosts,
            evidence_weight=how.evidence_weight,
            min_match=how.min_match,
            sufficient=how.sufficient,
            head=head,
        )

    # A caller that shows `limit` rows reads the top of the ranking only: the index may answer a question with
    # the beginning of its list (cheaper, see SearchIndex.search), asked for again in full when the rows
    # read run past it. The hybrid fuses every candidate: it asks for the whole list.
    found = lexical_list(None if deferred else max(HEAD, HEAD_TIMES * request.limit))
    if not request.include_probe:
        named = [n for n in named if not trust.is_probe(n.hit.facts)]
    named_paths = {n.hit.path for n in named[: request.limit]}
    ranked, read_all = _ranked(found, request, contract, named_paths)
    if not read_all:
        found = lexical_list(None)
        ranked, _whole = _ranked(found, request, contract, named_paths)
    ranked.sort(key=lambda r: (-r[0], r[3].path))
    terms = groups[0] if groups else words
    if runs and ranked and _answered_by_content(index, found, ranked[0][3], terms, named_paths, runs):
        named, runs = [], []  # a note holding every word answers the question; the names inside it wait
    results: list[dict[str, Any]] = []
    shown = [r for n, r in enumerate(ranked) if n < request.limit or r[3].path in named_paths]
    later = deferred or cut_later
    short = deferred and not request.explain
    for score, penalty, penalties, hit, i in shown:
        raw = round(hit.raw_score, 6)
        if short:  # a hybrid candidate: most are never shown, so the rest of the row waits for `complete`
            filler = _filler(index, found, hit, terms)
            filler.penalties = penalties
            results.append({
                "note": hit.path,
                "score": raw if penalty == 1.0 else round(score, 6),
                "raw_score": raw,
                "penalty": 1.0 if penalty == 1.0 else round(penalty, 6),
                FILL: filler,
            })  # fmt: skip
            continue
        if not deferred:
            index.note_terms(hit.path, (hit, found))  # read now from the hit; the row's confidence asks next
        cut = [(None, "")] if later else _sections(index, found, hit, terms, request.per_note)
        facts = hit.facts
        for heading, snippet in cut:
            row: dict[str, Any] = {
                "path": hit.path + (f"#{heading.split(' > ')[-1]}" if heading else ""),
                "note": hit.path,
                "section": heading,
                "title": facts.get("title"),
                # most notes carry no multiplier: their score is their raw score, rounded once
                "score": raw if penalty == 1.0 else round(score, 6),
                "raw_score": raw,
                "penalty": 1.0 if penalty == 1.0 else round(penalty, 6),
                "penalties": [name for name, _m in penalties] if penalties else [],
                "captured": facts.get("captured"),
                "captured_source": facts.get("captured_source"),
                "wall": facts.get("wall"),
                **trust.labels(facts),
                "snippet": snippet,
            }
            if later:
                row[FILL] = _filler(index, found, hit, terms)
            if request.explain:
                row["explain"] = {
                    "mode": request.mode,
                    "plan": "and"
                    if len(groups) == 1 and how.min_match is None
                    else ("question" if how.min_match else "fusion"),
                    "fields": index.field_scores(terms, hit.path, boosts),
                    "multipliers": {name: m for name, m in penalties},
                    "fusion_ranks": {
                        (" ".join(groups[g]) if g < len(groups) else "at least two words"): r
                        for g, r in found.ranks(i).items()
                    },
                }
            results.append(row)
    if named:
        lexical = {r["note"]: r for r in reversed(results)}  # each note's first (best) row
        first = named[: request.limit]  # the named notes shown first; the others keep their lexical rows
        for n in first:
            if n.hit.path in lexical:
                complete(lexical[n.hit.path])
        if cut_later:
            for n in first:  # a named note's row is cut as without `cut_later` (see `_name_row`)
                if n.hit.path in lexical:
                    fill(lexical[n.hit.path])
        top = results[0]["score"] if results else 0.0
        within = {h.hit.path: " ".join(run.words) for run in runs for h in run.hits}
        rows = [
            _name_row(index, found, n, lexical.get(n.hit.path), request, contract, top, within.get(n.hit.path))
            for n in first
        ]
        results = names_first(results, rows, request.limit * request.per_note, request.per_note)
    page = _entity_page(index, catalog, request)
    if page is not None:
        uri, hit, hits = page
        results = [r for r in results if r["note"] != hit.path]
        top = results[0]["score"] if results else 1.0
        results.insert(
            0,
            {
                "path": hit.path,
                "note": hit.path,
                "section": None,
                "title": hit.facts.get("title"),
                "score": round(top, 6),
                "raw_score": round(top, 6),
                "penalty": 1.0,
                "penalties": [],
                "captured": hit.facts.get("captured"),
                "captured_source": hit.facts.get("captured_source"),
                "wall": hit.facts.get("wall"),
                **trust.labels(hit.facts),
                "snippet": hits.snippet_of(hits.text_of(hit)),
                "entity": uri,
            },
        )
        results = results[: max(request.limit, 1) * request.per_note]
    hidden = found.hidden
    return {
        "query": request.query,
        "mode": request.mode,
        "results": results,
        "note": _note(request, words, found.matched, hidden),
        "matched": found.matched,
        "archived_hidden": hidden["archived"],
        "superseded_hidden": hidden["superseded"],
        "staged_hidden": hidden["staged"],
    }


Ranked = list[tuple[float, float, list[tuple[str, float]], Hit, int]]


def _answered_by_content(
    index: SearchIndex, found: HitList, first: Hit, terms: list[str], named: set[str], runs: list[NamedRun]
) -> bool:
    """Whether the query says more than a name (at least QUESTION_BESIDE_NAME words of its own beside the
    names inside it) and the best lexical match, a note the query does not name, holds every one of its
    words: then it is a question about what that note says ("does free will survive determinism in
    physics"), not a request for the note a name inside it names ("what did I note about free will", "what
    do I know about QuickAdd": a word or two of filler beside a name is found in some long note of any vault)."""
    if first.path in named:
        return False
    wanted = index.term_set(" ".join(terms))
    beside = wanted - index.term_set(" ".join(w for run in runs for w in run.words))
    if len(beside) < QUESTION_BESIDE_NAME:
        return False
    held = index.note_terms(first.path, (first, found))[0]
    return all(t in held for t in wanted)


def _ranked(found: HitList, request: SearchRequest, contract: Contract, named_paths: set[str]) -> tuple[Ranked, bool]:
    """The rows that may enter the top `limit` (final score, penalty, penalties, hit, index in `found`), and
    whether they are all of them: False when `found` is only the beginning of the ranking (`partial`) and
    the rows were read to its end."""
    missing = set(named_paths)  # named notes whose lexical row is still to be found
    # A note's multipliers depend on its facts, the request's project and the contract alone: remembered for
    # the index state (the hybrid reads 200 rows a search, and searches meet the same notes again and again).
    # The contract is kept beside its entry, so its id is not reused while the entry lives.
    memos = found.derived
    if len(memos) >= 64:  # one entry a contract and project
        memos.clear()
    memo: dict[tuple[int, int], tuple[list[tuple[str, float]], float]] = memos.setdefault(
        ("penalties", id(contract), request.project), (contract, {})
    )[1]
    ranked: Ranked = []
    best: list[float] = []  # min-heap of the top `limit` final scores so far
    for i in range(len(found)):
        tail = len(best) >= request.limit and found.scored[i][0] < best[0]
        if tail and not missing:
            return ranked, True  # multipliers never raise a score: nothing further down can enter the top
        hit = found.load(i)
        missing.discard(hit.path)
        if tail and hit.path not in named_paths:
            continue  # further down, only the named notes' own rows are wanted
        if trust.is_probe(hit.facts) and not request.include_probe:
            continue
        addr = found.scored[i][1]
        key = (addr.segment_ord, addr.doc)
        known = memo.get(key)
        if known is None:
            penalties = _penalties(hit.facts, hit.path, request, contract)
            penalty = 1.0
            for _name, m in penalties:
                penalty *= m
            if len(memo) >= PENALTY_MEMO_MAX:
                memo.clear()
            memo[key] = known = (penalties, penalty)
        penalties, penalty = known
        ranked.append((hit.raw_score * penalty, penalty, penalties, hit, i))
        if len(best) < request.limit:
            heapq.heappush(best, ranked[-1][0])
        elif ranked[-1][0] > best[0]:
            heapq.heapreplace(best, ranked[-1][0])
    return ranked, not found.partial


def names_first(
    results: list[dict[str, Any]], named: list[dict[str, Any]], cap: int, per_note: int = 1
) -> list[dict[str, Any]]:
    """The rows of the notes the query names first, in their order, each followed by up to `per_note` - 1 of
    that note's other sections, then the rest; cut to `cap`. The lexical search and the hybrid both order
    their results by it."""
    others: dict[str, list[dict[str, Any]]] = {r["note"]: [] for r in named}
    pinned = {r["path"] for r in named}
    rest = []
    for r in results:
        if r["note"] not in others:
            rest.append(r)
        elif r["path"] not in pinned and len(others[r["note"]]) < per_note - 1:
            others[r["note"]].append(r)
    out = [row for n in named for row in (n, *others[n["note"]])]
    return (out + rest)[:cap]


def _name_row(
    index: SearchIndex,
    found: HitList,
    named: NameHit,
    lexical: dict[str, Any] | None,
    request: SearchRequest,
    contract: Contract,
    top: float,
    within: str | None = None,
) -> dict[str, Any]:
    """The result row of a note the query names: its lexical row when it has one, else a row of its own,
    marked with the kind of name (`name`); a heading points at its section. Its `score` is at least the
    best lexical score, so the order of the list stays the order of the scores. `within`: the words of the
    query that name it, when they are not the whole query (`name_within` in the row)."""
    hit = named.hit
    text = found.text_of(hit)
    row = dict(lexical) if lexical is not None else None
    if row is None:
        penalties = _penalties(hit.facts, hit.path, request, contract)
        penalty = 1.0
        for _name, m in penalties:
            penalty *= m
        row = {
            "path": hit.path,
            "note": hit.path,
            "section": None,
            "title": hit.facts.get("title"),
            "score": 0.0,
            "raw_score": 0.0,  # the note is not in the lexical ranking
            "penalty": round(penalty, 6),
            "penalties": [name for name, _m in penalties],
            "captured": hit.facts.get("captured"),
            "captured_source": hit.facts.get("captured_source"),
            "wall": hit.facts.get("wall"),
            "snippet": found.snippet_of(text),
        }
        if request.explain:
            row["explain"] = {
                "mode": request.mode,
                "plan": "name",
                "fields": index.field_scores(request.query.split(), hit.path, FIELD_BOOSTS),
                "multipliers": {name: m for name, m in penalties},
                "fusion_ranks": {},
            }
    was_deferred = row.pop(FILL, None) is not None  # a name row is cut here, pointing at the note or heading
    chunk = None
    if named.kind == "heading":
        key = name_key(within or request.query)
        chunk = next((c for c in chunk_text(text) if c.heading_path and name_key(c.heading_path[-1]) == key), None)
    if chunk is not None:
        heading = chunk.heading_path[-1]
        row["path"] = f"{hit.path}#{heading}"
        row["section"] = " > ".join(chunk.heading_path)
        row["snippet"] = found.snippet_of(section_text(text, heading) or chunk.text)
    elif within is not None:  # a name inside a longer query: the note's best section for the query's words
        if was_deferred or row["section"] is None:
            best, snippet = _sections(index, found, hit, request.query.split(), 1)[0]
            row["path"] = hit.path + (f"#{best.split(' > ')[-1]}" if best else "")
            row["section"], row["snippet"] = best, snippet
    elif row["section"] is not None or was_deferred:  # the note itself is named: the result points at the note
        row["path"], row["section"] = hit.path, None
        row["snippet"] = found.snippet_of(text)
    row["score"] = round(max(top, float(row["score"])) or named.score * float(row["penalty"]), 6)
    row["name"] = named.kind
    if within is not None:
        row["name_within"] = within
    if request.explain:
        row["explain"] = dict(row.get("explain") or {})
        row["explain"]["name"] = {
            "kind": named.kind,
            "match": "exact" if named.exact else "prefix",
            "lexical_score": round(named.score, 6),
        }
    return row


def _note(request: SearchRequest, words: list[str], matched: int, hidden: dict[str, int]) -> str | None:
    walled = sum(hidden.values())
    if matched:
        if walled:
            return f"{walled} more note(s) matched behind the archived/superseded/staged walls; pass include_archived"
        return None
    if not any(ch.isalnum() for ch in request.query):
        return "the query has no searchable words; search for words that appear in the note"
    parts = []
    if walled:
        parts.append(f"nothing current matched, but {walled} archived/superseded/staged note(s) did (include_archived)")
    elif len(words) > 1:
        parts.append("no note contains every word; try fewer or different words")
    else:
        parts.append("no note contains this word; try a different word or spelling")
    if request.after or request.before:
        parts.append("or widen the date range")
    return "; ".join(parts)
