"""The prompt harness: what the recall hook would inject for each prompt of a set, run in this process.

A prompt file is JSONL, one `{"id", "prompt", "expected", "category"}` per line; `expected` is the
vault-relative path of the note the prompt should get, or null for a prompt the vault cannot help with
(an ordinary coding request). Each prompt goes the hook's way: the prompt made a query (the caller's
`query_of`, the hook's own sanitiser), the lexical default search with its confidence floor, the recall
gathering (walls, unconfirmed notes, the recall floor, one hop of links; engine/search/recall.py) and the
caller's `inject`, which renders the candidates as the hook would and names the notes that got in.

The bar: nothing injected for most unhelpful prompts (`silent`), and the helpful ones keep their note
(`kept`). The floors can be overridden, so the same run measures the behaviour without them (0, 0).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmd.engine.errors import UsageError
from agentmd.engine.index.store import Store
from agentmd.engine.search.query import HYBRID, search
from agentmd.engine.search.recall import MAX_DIRECT, Walls, gather
from agentmd.engine.search.searcher import DEFAULT_MODE, SearchRequest
from agentmd.rules import Contract

QueryOf = Callable[[str], str]
Inject = Callable[[Mapping[str, Any]], tuple[list[str], int]]  # gathered -> (injected paths, tokens)


@dataclass(frozen=True, slots=True)
class PromptCase:
    id: str
    prompt: str
    expected: str | None
    category: str = ""


def load_prompts(path: Path) -> list[PromptCase]:
    """The prompts of a JSONL file; a line that is not a prompt object is refused with its number."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read the prompt file {path}: {exc.strerror}") from None
    cases: list[PromptCase] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            raise UsageError(f"{path}:{n} is not JSON") from None
        if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
            raise UsageError(f"{path}:{n} needs a `prompt` string")
        expected = data.get("expected")
        if expected is not None and not isinstance(expected, str):
            raise UsageError(f"{path}:{n}: `expected` is a vault path or null")
        cases.append(PromptCase(str(data.get("id", n)), data["prompt"], expected, str(data.get("category", ""))))
    if not cases:
        raise UsageError(f"{path} holds no prompts")
    return cases


def run_prompt(
    store: Store,
    contract: Contract,
    walls: Walls,
    case: PromptCase,
    *,
    query_of: QueryOf,
    inject: Inject,
    search_floor: float | None,
    limit: int = MAX_DIRECT,
    dense: Any = None,
) -> dict[str, object]:
    """One prompt: its query, the notes the hook would inject, and the closest results with confidence. With
    `dense` (a hybrid.DenseArm) the search is the hybrid one a daemon answers the hook with; without, the
    lexical one the hook runs in its own process."""
    query = query_of(case.prompt)
    results: list[dict[str, object]] = []
    injected: list[str] = []
    tokens = 0
    if query:
        # the hook asks for hybrid; with no arm the search answers it lexically, as the hook's own process does
        request = SearchRequest(query=query, limit=limit, mode=HYBRID if dense is not None else DEFAULT_MODE)
        response = search(store.index, contract, request, store.catalog, dense, floor=search_floor)
        results = [r.to_json() for r in response.results]
        gathered = gather(store.catalog, store.index, walls, results, max_direct=limit)
        injected, tokens = inject(gathered)
    return {
        "id": case.id,
        "kind": "unhelpful" if case.expected is None else "helpful",
        "query": query,
        "expected": case.expected,
        "injected": len(injected),
        "paths": injected,
        "tokens": tokens,
        "kept": case.expected is not None and case.expected in injected,
        "top": [
            {k: r.get(k) for k in ("note", "title", "confidence", "cosine", "word_share")} for r in results[:3]
        ],
    }


def evaluate_prompts(
    path: Path,
    store: Store,
    contract: Contract,
    *,
    query_of: QueryOf,
    inject: Inject,
    search_floor: float | None = None,
    recall_floor: float | None = None,
    dense: Any = None,
) -> dict[str, object]:
    """Every prompt of a file through the hook's gathering; floors default to the contract's. `dense`: as in
    `run_prompt`."""
    cases = load_prompts(path)
    walls = Walls.from_contract(contract)
    if recall_floor is not None:
        walls = walls._replace(recall_floor=recall_floor)
    rows = [
        run_prompt(store, contract, walls, c, query_of=query_of, inject=inject, search_floor=search_floor, dense=dense)
        for c in cases
    ]
    return {
        "file": str(path),
        "search_floor": contract.thresholds.search_floor if search_floor is None else search_floor,
        "recall_floor": walls.recall_floor,
        "search": "hybrid" if dense is not None else "lexical",
        "summary": summarize(rows),
        "prompts": rows,
    }


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, object]:
    """Unhelpful prompts: how many injected nothing (`silent`), the mean notes and tokens injected.
    Helpful prompts: how many got their note (`kept`)."""
    unhelpful = [r for r in rows if r["kind"] == "unhelpful"]
    helpful = [r for r in rows if r["kind"] == "helpful"]
    silent = sum(1 for r in unhelpful if r["injected"] == 0)
    kept = sum(1 for r in helpful if r["kept"])
    n = len(unhelpful)
    return {
        "unhelpful": len(unhelpful),
        "silent": silent,
        "silent_share": round(silent / len(unhelpful), 3) if unhelpful else None,
        "unhelpful_mean_injected": round(sum(r["injected"] for r in unhelpful) / n, 2) if n else None,
        "unhelpful_mean_tokens": round(sum(r["tokens"] for r in unhelpful) / n, 1) if n else None,
        "helpful": len(helpful),
        "kept": kept,
        "kept_share": round(kept / len(helpful), 3) if helpful else None,
    }


def render_prompts(report: Mapping[str, Any]) -> str:
    """The report as text: one line per prompt that misses the bar, then the summary."""
    lines = [f"{report['file']}: search floor {report['search_floor']}, recall floor {report['recall_floor']}"]
    for r in report["prompts"]:
        bad = (r["kind"] == "unhelpful" and r["injected"]) or (r["kind"] == "helpful" and not r["kept"])
        if not bad:
            continue
        top = ", ".join(f"{t['title']} {t['confidence']}" for t in r["top"]) or "no result"
        lines.append(f"  {r['id']} [{r['kind']}] injected {r['injected']} for {r['query']!r}; top: {top}")
    s = report["summary"]
    lines.append(
        f"unhelpful: {s['silent']}/{s['unhelpful']} injected nothing ({s['silent_share']}), "
        f"mean {s['unhelpful_mean_injected']} notes, {s['unhelpful_mean_tokens']} tokens"
    )
    lines.append(f"helpful: {s['kept']}/{s['helpful']} got their note ({s['kept_share']})")
    return "\n".join(lines)
