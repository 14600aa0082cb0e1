"""Ranking multipliers: the contract's multipliers (all at most 1.0) that apply to a note for a request, and
the lexical ranking with them applied (engine/search/searcher.py).

One multiplier is the query's own: a query that names a time ("last May", "in June 2023", "two weeks ago";
engine/search/when.py) lowers the notes dated outside it (`outside_time`, OUTSIDE_TIME), so the notes of that
time come first without the others being hidden (a question's time is often approximate: "the week before").
"""

from __future__ import annotations

import heapq
from typing import Any

from agentmd.engine.index.fulltext import Hit, HitList
from agentmd.engine.search import trust
from agentmd.engine.search.planning import SearchRequest, time_span
from agentmd.rules import Contract

# The multiplier of a note dated outside the time the query names. Chosen on LoCoMo's tuning conversations
# (bench/locomo.py --split train; bench/RESULTS.md).
OUTSIDE_TIME = 0.25
# A page agentmd generates from other notes (a map of content, the morning note: `generated: agentmd ...`) names
# the notes it lists and their words; the notes themselves answer, so the page ranks below them.
GENERATED_PAGE = 0.5
PENALTY_MEMO_MAX = 50_000  # notes whose multipliers are remembered for one index state (about 10 MB)


def note_penalties(
    facts: dict[str, object], path: str, request: SearchRequest, contract: Contract
) -> list[tuple[str, float]]:
    """The multipliers below 1.0 that apply to a note for this request (name, multiplier)."""
    return _penalties(facts, path, request, contract)


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
    if facts.get("generated"):
        out.append(("generated", GENERATED_PAGE))
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
    span = time_span(request)
    if span is not None:
        day = captured_day(facts.get("captured"))
        if day is not None and not span.holds(day):
            out.append(("outside_time", OUTSIDE_TIME))
    if _maybe_dampened(contract, path):
        space = contract.space_of(path)
        if space is not None:
            damp = contract.dampening(space)
            if damp < 1.0:
                out.append((f"space:{space}", damp))
    return [(name, m) for name, m in out if m < 1.0]


def captured_day(captured: object) -> int | None:
    """A note's `captured` value (an ISO date or date and time) as yyyymmdd, or None."""
    text = str(captured or "")[:10].replace("-", "")
    return int(text) if len(text) == 8 and text.isdigit() else None


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


Ranked = list[tuple[float, float, list[tuple[str, float]], Hit, int]]


def rank_hits(found: HitList, request: SearchRequest, contract: Contract, named_paths: set[str]) -> tuple[Ranked, bool]:
    """The rows that may enter the top `limit` (final score, penalty, penalties, hit, index in `found`), and
    whether they are all of them: False when `found` is only the beginning of the ranking (`partial`) and
    the rows were read to its end."""
    missing = set(named_paths)  # named notes whose lexical row is still to be found
    # A note's multipliers depend on its facts, the request's project and the contract alone: remembered for
    # the index state (the hybrid reads 200 rows a search, and searches meet the same notes again and again).
    # The contract is kept beside its entry, so its id is not reused while the entry lives.
    memos = found.derived
    if len(memos) >= 64:  # one entry a contract, project and time span
        memos.clear()
    memo: dict[tuple[int, int], tuple[list[tuple[str, float]], float]] = memos.setdefault(
        ("penalties", id(contract), request.project, time_span(request)), (contract, {})
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
