"""Search: the user's words in, ranked notes out, with the walls and penalties made visible.

User text is split on white space and each word quoted before it reaches the query parser, so no input
raises. Notes behind a wall (archived, superseded, staged) are left out unless asked for, and the
response counts what each wall hid, zero included. Multipliers from the contract (all ≤ 1.0) are applied
over an over-fetch of 200 before cutting to the limit, so a demoted note that is still the best match
comes back first.
"""

from __future__ import annotations

import datetime as dt
import heapq
from dataclasses import dataclass
from typing import Any

from rules import Contract

from .errors import UsageError
from .index import Hit, SearchIndex

OVERFETCH = 200
MODES = ("and",)
MAX_LIMIT = 200


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    limit: int = 10
    mode: str = "and"
    after: str | None = None  # captured on or after this date (YYYY-MM-DD, YYYY-MM or YYYY)
    before: str | None = None  # captured on or before this date
    project: str | None = None
    include_archived: bool = False


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


def _penalties(facts: dict[str, Any], path: str, request: SearchRequest, contract: Contract) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    wall = facts.get("wall")
    if wall:
        out.append((wall, contract.multiplier(wall)))
    if (facts.get("status") or "").lower() == "unfiled":
        out.append(("unfiled", contract.multiplier("unfiled")))
    project = facts.get("project")
    if request.project and project and project.lower() != request.project.lower():
        out.append(("project_mismatch", contract.multiplier("project_mismatch")))
    space = contract.space_of(path)
    if space is not None:
        damp = contract.dampening(space)
        if damp < 1.0:
            out.append((f"space:{space}", damp))
    return [(name, m) for name, m in out if m < 1.0]


def search(index: SearchIndex, contract: Contract, request: SearchRequest) -> dict[str, Any]:
    """Run one search and return the response mapping (SPEC §7)."""
    if request.mode not in MODES:
        raise UsageError(f"search mode {request.mode!r} is not known; use one of: {', '.join(MODES)}")
    if not 1 <= request.limit <= MAX_LIMIT:
        raise UsageError(f"limit {request.limit} is out of range; use 1 to {MAX_LIMIT}")
    lo = _day_bound(request.after, upper=False, name="after")
    hi = _day_bound(request.before, upper=True, name="before")
    if lo is not None and hi is not None and lo > hi:
        raise UsageError(f"after ({request.after}) is later than before ({request.before}); swap them")
    words = request.query.split()
    found = index.search(
        words,
        limit=max(OVERFETCH, request.limit),
        include_walled=request.include_archived,
        day_range=(lo, hi),
    )
    ranked: list[tuple[float, float, list[str], Hit]] = []
    best: list[float] = []  # min-heap of the top `limit` final scores so far
    for i in range(len(found)):
        if len(best) >= request.limit and found.scored[i][0] < best[0]:
            break  # multipliers never raise a score: nothing further down can enter the top
        hit = found.load(i)
        penalties = _penalties(hit.facts, hit.path, request, contract)
        penalty = 1.0
        for _name, m in penalties:
            penalty *= m
        ranked.append((hit.raw_score * penalty, penalty, [name for name, _m in penalties], hit))
        if len(best) < request.limit:
            heapq.heappush(best, ranked[-1][0])
        elif ranked[-1][0] > best[0]:
            heapq.heapreplace(best, ranked[-1][0])
    ranked.sort(key=lambda r: (-r[0], r[3].path))
    results = [
        {
            "path": hit.path,
            "title": hit.facts.get("title"),
            "score": round(score, 6),
            "raw_score": round(hit.raw_score, 6),
            "penalty": round(penalty, 6),
            "penalties": names,
            "captured": hit.facts.get("captured"),
            "captured_source": hit.facts.get("captured_source"),
            "wall": hit.facts.get("wall"),
            "snippet": found.snippet(hit),
        }
        for score, penalty, names, hit in ranked[: request.limit]
    ]
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
