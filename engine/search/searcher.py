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

A search that runs more than the lexical arm (the hybrid, engine/search/hybrid.py) reads its request once as a
`QueryPlan` and asks it what the lexical search would do: its answer, its candidates, whether a note passes the
request's walls and dates, and the note's multipliers.

The request and its plan are engine/search/planning.py's, the multipliers and the ranking they give
engine/search/multipliers.py's, and the result rows (deferred rows, name rows) engine/search/rows.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from agentmd.engine.errors import UsageError
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.fulltext import Hit, HitList, SearchIndex
from agentmd.engine.search import trust
from agentmd.engine.search.graph import entity_pages
from agentmd.engine.search.multipliers import captured_day, note_penalties, rank_hits
from agentmd.engine.search.named import NamedRun, kept_stop_words, merged_hits, named_runs, phrase_stop_words
from agentmd.engine.search.planning import DEFAULT_MODE as DEFAULT_MODE  # re-exported
from agentmd.engine.search.planning import MAX_LIMIT as MAX_LIMIT  # re-exported
from agentmd.engine.search.planning import (
    MAX_PROJECT_CHARS,
    MODES,
    Plan,
    SearchRequest,
    content_query,
    day_bound,
    plan,
    time_span,
)
from agentmd.engine.search.result import Cut, Result, SearchResponse
from agentmd.engine.search.rows import best_sections, complete, cut_for, facts_row, fill, name_row, names_first
from agentmd.rules import Contract
from agentmd.vault_schema import query_entity_uris

OVERFETCH = 200
MAX_PER_NOTE = 10
# A question shown in `limit` rows is first ranked from the top max(HEAD, HEAD_TIMES * limit) matches, which
# usually decide it (SearchIndex.search, `head`); when they do not, from the whole over-fetch.
HEAD = 30
HEAD_TIMES = 3
QUESTION_BESIDE_NAME = 3  # words beside a name inside a query from which a note holding them all answers it


def check(request: SearchRequest) -> None:
    """Refuse a request a lexical search cannot run (UsageError, saying what to change)."""
    if request.mode not in MODES:
        raise UsageError(f"search mode {request.mode!r} is not known; use one of: {', '.join(MODES)}")
    if not 1 <= request.limit <= MAX_LIMIT:
        raise UsageError(f"limit {request.limit} is out of range; use 1 to {MAX_LIMIT}")
    if not 1 <= request.per_note <= MAX_PER_NOTE:
        raise UsageError(f"per_note {request.per_note} is out of range; use 1 to {MAX_PER_NOTE}")
    lo = day_bound(request.after, upper=False, name="after", now=request.now)
    hi = day_bound(request.before, upper=True, name="before", now=request.now)
    if lo is not None and hi is not None and lo > hi:
        raise UsageError(f"after ({request.after}) is later than before ({request.before}); swap them")
    time_span(request)  # a `now` that is not a date is refused before any work
    if request.project is not None and len(request.project) > MAX_PROJECT_CHARS:
        raise UsageError(
            f"project is {len(request.project)} characters long; a project slug has at most {MAX_PROJECT_CHARS}"
        )


@dataclass(frozen=True)
class QueryPlan:
    """A request read once for a search that runs the lexical arm and another beside it (the hybrid): the
    request in the lexical mode, checked, its date bounds and the words a note is looked for by. The other
    arm goes through it for everything the lexical search decides."""

    request: SearchRequest  # in the lexical default mode
    days: tuple[int | None, int | None]  # captured on or after, on or before (yyyymmdd); None: open
    words: str  # the query without its time expression (planning.content_query)

    @classmethod
    def of(cls, request: SearchRequest) -> QueryPlan:
        """The plan of `request` (its mode set to the lexical default); UsageError for a request no search
        can run, as `search` would say it."""
        lexical = replace(request, mode=DEFAULT_MODE)
        check(lexical)
        days = (
            day_bound(lexical.after, upper=False, name="after", now=lexical.now),
            day_bound(lexical.before, upper=True, name="before", now=lexical.now),
        )
        return cls(lexical, days, content_query(lexical))

    @property
    def fetched(self) -> int:
        """How many candidates the lexical arm ranks (the other arm may take as many)."""
        return OVERFETCH

    def answer(self, index: SearchIndex, contract: Contract, catalog: Catalog | None) -> SearchResponse:
        """The lexical search's own answer to the request."""
        return search(index, contract, self.request, catalog)

    def candidates(self, index: SearchIndex, contract: Contract, catalog: Catalog | None) -> SearchResponse:
        """Every lexical candidate, one row a note, short rows made whole when shown (`search`'s `deferred`)."""
        return search(index, contract, replace(self.request, limit=OVERFETCH, per_note=1), catalog, deferred=True)

    def admits(self, facts: Mapping[str, object]) -> bool:
        """Whether a note the lexical arm did not find passes the request: not behind a wall (unless asked for),
        not a self-probe note (unless asked for), captured within the date bounds."""
        if facts.get("wall") and not self.request.include_archived:
            return False
        if trust.is_probe(facts) and not self.request.include_probe:
            return False
        day = captured_day(facts.get("captured"))
        lo, hi = self.days
        return day is None or not ((lo is not None and day < lo) or (hi is not None and day > hi))

    def penalties(self, facts: dict[str, object], path: str, contract: Contract) -> list[tuple[str, float]]:
        """The multipliers below 1.0 the request puts on a note (name, multiplier), as the lexical search does."""
        return note_penalties(facts, path, self.request, contract)


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
) -> SearchResponse:
    """Run one lexical search and return its answer (SPEC §7). With the catalog, a note marked as
    the page of an entity the query names (e.g. `repo:owner/name`) comes first.

    `deferred` (for a caller that asks for many candidates and shows a few, as the hybrid does): each row is
    short (note, scores, penalty) and made whole when it is shown, by `complete`, its best section and snippet
    cut by `fill` (one row a note); with `explain`, rows are whole from the start, sections still deferred.
    `cut_later` (for a caller that drops rows after the search, as the confidence floor does): the same
    rows as without it, each row's best section and snippet left to `fill`; only with `per_note` 1. The
    rows of the notes the query names are cut at once, as without it."""
    if cut_later and request.per_note != 1:
        raise UsageError("cut_later needs per_note 1: each deferred row cuts one section")
    check(request)
    lo = day_bound(request.after, upper=False, name="after", now=request.now)
    hi = day_bound(request.before, upper=True, name="before", now=request.now)
    words = (request.query if request.mode == "and" else content_query(request)).split()
    named = index.name_hits(request.query, include_walled=request.include_archived, day_range=(lo, hi))
    runs = (
        [] if named else named_runs(index, request.query, include_walled=request.include_archived, day_range=(lo, hi))
    )
    if runs:
        named = merged_hits(runs)
    how = plan(index, request, kept_stop_words(runs) + phrase_stop_words(index, request.query))
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
    span = time_span(request) if runs else None  # (a query that is a whole name, a date's title too, stays one)
    if span is not None:  # "office hours on 2021-11-24": a note named inside it but of another day is not first
        named = [n for n in named if (day := captured_day(n.hit.facts.get("captured"))) is None or span.holds(day)]
    named_paths = {n.hit.path for n in named[: request.limit]}
    ranked, read_all = rank_hits(found, request, contract, named_paths)
    if not read_all:
        found = lexical_list(None)
        ranked, _whole = rank_hits(found, request, contract, named_paths)
    ranked.sort(key=lambda r: (-r[0], r[3].path))
    terms = groups[0] if groups else words
    if runs and ranked and _answered_by_content(index, found, ranked[0][3], terms, named_paths, runs):
        named, runs = [], []  # a note holding every word answers the question; the names inside it wait
    results: list[Result] = []
    shown = [r for n, r in enumerate(ranked) if n < request.limit or r[3].path in named_paths]
    later = deferred or cut_later
    short = deferred and not request.explain
    for score, penalty, penalties, hit, i in shown:
        raw = round(hit.raw_score, 6)
        # most notes carry no multiplier: their score is their raw score, rounded once
        shown_score = raw if penalty == 1.0 else round(score, 6)
        shown_penalty = 1.0 if penalty == 1.0 else round(penalty, 6)
        if short:  # a hybrid candidate: most are never shown, so the rest of the row waits for `complete`
            filler = Cut(index, found, hit, words=terms, penalties=penalties)
            results.append(Result(hit.path, hit.path, shown_score, raw, shown_penalty, cut=filler))
            continue
        if not deferred:
            index.note_terms(hit.path, (hit, found))  # read now from the hit; the row's confidence asks next
        cut = [(None, "")] if later else best_sections(index, found, hit, terms, request.per_note)
        for heading, snippet in cut:
            row = facts_row(
                hit,
                score=shown_score,
                raw_score=raw,
                penalty=shown_penalty,
                penalties=penalties,
                path=hit.path + (f"#{heading.split(' > ')[-1]}" if heading else ""),
                section=heading,
                snippet=snippet,
                cut=cut_for(index, found, hit, terms) if later else None,
            )
            if request.explain:
                explain = {
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
                row = replace(row, explain=explain)
            results.append(row)
    if named:
        first = named[: request.limit]  # the named notes shown first; the others keep their lexical rows
        first_notes = {n.hit.path for n in first}
        seen: set[str] = set()
        for k, r in enumerate(results):  # each named note's first (best) row is made whole (cut, with `cut_later`)
            if r.note in first_notes and r.note not in seen:
                seen.add(r.note)
                results[k] = fill(r) if cut_later else complete(r)
        lexical: dict[str, Result] = {}
        for r in results:
            lexical.setdefault(r.note, r)
        top = results[0].score if results else 0.0
        within = {h.hit.path: " ".join(run.words) for run in runs for h in run.hits}
        rows = [
            name_row(index, found, n, lexical.get(n.hit.path), request, contract, top, within.get(n.hit.path))
            for n in first
        ]
        results = names_first(results, rows, request.limit * request.per_note, request.per_note)
    page = _entity_page(index, catalog, request)
    if page is not None:
        uri, hit, hits = page
        results = [r for r in results if r.note != hit.path]
        top = results[0].score if results else 1.0
        entity_row = facts_row(
            hit, score=round(top, 6), raw_score=round(top, 6), penalty=1.0, snippet=hits.snippet_of(hits.text_of(hit))
        )
        results.insert(0, replace(entity_row, entity=uri))
        results = results[: max(request.limit, 1) * request.per_note]
    hidden = found.hidden
    return SearchResponse(
        query=request.query,
        mode=request.mode,
        results=tuple(results),
        note=_note(request, words, found.matched, hidden, _undated(index, words, how, request, lo, hi, found.matched)),
        matched=found.matched,
        archived_hidden=hidden["archived"],
        superseded_hidden=hidden["superseded"],
        staged_hidden=hidden["staged"],
    )


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


def _undated(
    index: SearchIndex,
    words: list[str],
    how: Plan,
    request: SearchRequest,
    lo: int | None,
    hi: int | None,
    matched: int,
) -> int:
    """How many notes the words match outside the request's dates, when nothing matched within them (0 when
    there are no dates or something matched): tells an empty answer of the dates from one of the words."""
    if matched or (lo is None and hi is None) or not words:
        return 0
    return index.search(
        words,
        limit=1,
        include_walled=request.include_archived,
        day_range=(None, None),
        groups=how.groups,
        weights=how.weights,
        boosts=how.boosts,
        evidence_weight=how.evidence_weight,
        min_match=how.min_match,
        sufficient=how.sufficient,
    ).matched


def _note(
    request: SearchRequest, words: list[str], matched: int, hidden: dict[str, int], undated: int = 0
) -> str | None:
    walled = sum(hidden.values())
    if matched:
        if walled:
            return f"{walled} more note(s) matched behind the archived/superseded/staged walls; pass include_archived"
        return None
    if not any(ch.isalnum() for ch in request.query):
        return "the query has no searchable words; search for words that appear in the note"
    if undated:
        return (
            f"{undated} note(s) hold these words, none captured within the date range asked for; widen the date "
            "range or drop --after/--before"
        )
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
