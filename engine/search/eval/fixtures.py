"""The fixture harness: hand-written queries against a real vault, scored per search mode.

A fixture file is JSONL, one `{"id", "query", "expected", "alternates", "category"}` per line; `expected` is
a vault-relative path, or null for a question the vault cannot answer (other keys are kept as given). Each
missed query is investigated against the real index and classified (`metrics.classify_miss`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentmd.engine.errors import UsageError
from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.index.store import Store
from agentmd.engine.search import confidence
from agentmd.engine.search import searcher as search_module
from agentmd.engine.search.eval.metrics import (
    DEFAULT_KS,
    MISS_KINDS,
    FixtureCase,
    MissEvidence,
    QueryOutcome,
    classify_miss,
    hit_at,
    rank_of,
    summarize,
    summarize_by_category,
)
from agentmd.engine.search.eval.runs import fmt, max_limit, modes_with_dense, search_paths
from agentmd.rules import Contract


def parse_ks(text: str | Sequence[int]) -> tuple[int, ...]:
    """The recall cut-offs, sorted and each once: `"5,15"` or a sequence; each between 1 and the result limit."""
    if isinstance(text, str):
        parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
        try:
            ks = [int(p) for p in parts]
        except ValueError:
            raise UsageError(f"--k {text!r} must be comma-separated whole numbers, e.g. 5,15") from None
    else:
        ks = [int(k) for k in text]
    limit = max_limit()
    if not ks or any(not 1 <= k <= limit for k in ks):
        raise UsageError(f"--k values must be between 1 and {limit}")
    return tuple(sorted(set(ks)))


def load_fixtures(path: Path) -> tuple[list[FixtureCase], str]:
    """The cases of a JSONL fixture file and the SHA-256 of its bytes. Blank lines are skipped."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"could not read fixture file {path}: {exc.strerror or exc}") from None
    sha = hashlib.sha256(data).hexdigest()
    cases: list[FixtureCase] = []
    seen: set[str] = set()
    for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise UsageError(f"{where}: not JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise UsageError(f"{where}: each line must be a JSON object")
        cid = str(obj.get("id") or f"line-{n}")
        query = obj.get("query")
        expected = obj.get("expected")
        alternates = obj.get("alternates") or []
        category = obj.get("category") or "uncategorized"
        if not isinstance(query, str) or not query.strip():
            raise UsageError(f"{where}: `query` must be a non-empty string")
        if expected is not None and (not isinstance(expected, str) or not expected):
            raise UsageError(f"{where}: `expected` must be a vault-relative path or null")
        if not isinstance(alternates, list) or not all(isinstance(a, str) and a for a in alternates):
            raise UsageError(f"{where}: `alternates` must be a list of vault-relative paths")
        if expected is None and alternates:
            raise UsageError(f"{where}: a no-answer line (expected null) cannot have alternates")
        if not isinstance(category, str):
            raise UsageError(f"{where}: `category` must be a string")
        if cid in seen:
            raise UsageError(f"{where}: id {cid!r} is used twice")
        seen.add(cid)
        extra = {k: v for k, v in obj.items() if k not in ("id", "query", "expected", "alternates", "category")}
        cases.append(FixtureCase(cid, query, expected, tuple(alternates), category, extra))
    if not cases:
        raise UsageError(f"fixture file {path} has no queries")
    return cases, sha


def corpus_fingerprint(store: Store) -> dict[str, object]:
    """Document count and newest modification time of the indexed notes."""
    stats = store.catalog.stat_keys()
    newest = max((s[0] for s in stats.values()), default=0)
    return {
        "documents": store.index.doc_count(),
        "catalogued": len(stats),
        "newest_mtime": dt.datetime.fromtimestamp(newest / 1e9, dt.UTC).isoformat(timespec="seconds")
        if newest
        else None,
        "newest_mtime_ns": newest,
    }


def content_words(query: str) -> list[str]:
    """The query words that carry meaning, as the engine judges them (stop words out when it has a list);
    a query of stop words only keeps all its words."""
    terms = getattr(search_module, "query_terms", None)
    words = list(terms(query)) if terms is not None else []
    return words or list(dict.fromkeys(query.split()))


def reaching_words(index: SearchIndex, words: Sequence[str], targets: Collection[str]) -> tuple[str, ...]:
    """The query words that, each searched alone and restricted to the note (walls ignored), match one of
    `targets`."""
    out = []
    for word in dict.fromkeys(words):
        if any(_word_reaches(index, word, t) for t in targets):
            out.append(word)
    return tuple(out)


def _word_reaches(index: SearchIndex, word: str, path: str) -> bool:
    field_scores = getattr(index, "field_scores", None)
    if field_scores is not None:  # a query restricted to the one note: cheap at any vault size
        return any(score > 0 for score in field_scores([word], path).values())
    found = index.search([word], limit=max(index.doc_count(), 1), include_walled=True)
    return any(found.load(i).path == path for i in range(len(found)))


def _investigate(
    index: SearchIndex,
    contract: Contract,
    case: FixtureCase,
    mode: str,
    depth: int,
    rank: int | None,
    indexed_paths: set[str],
    dense: Any = None,
    floor: float | None = None,
    effective: float = 0.0,
    k: int = DEFAULT_KS[0],
) -> dict[str, object]:
    """Why `case` missed at `k`: `floor` is what the search ran with (None: the contract's), `effective` the
    floor that was in force (scaled in a small vault). A note the floor left out is `below_floor` when the
    whole ranking has it within `k`, and a `ranking_loss` at its rank there when not."""
    present = [t for t in case.targets if t in indexed_paths]
    words = tuple(dict.fromkeys(case.query.split()))
    content = tuple(content_words(case.query))
    if not present:
        evidence = MissEvidence(indexed=False, rank=None, words=words)
    elif rank is not None:
        evidence = MissEvidence(indexed=True, rank=rank, words=words)
    elif (below := _below_floor(index, contract, case.query, mode, depth, present, dense, effective)) is not None:
        frank, sure = below
        if frank > k:
            evidence = MissEvidence(indexed=True, rank=frank, words=words)
        else:
            evidence = MissEvidence(
                indexed=True, rank=None, unfloored_rank=frank, confidence=sure, floor=round(effective, 4), words=words
            )
    else:
        paths, results = search_paths(
            index, contract, case.query, mode, depth, include_archived=True, dense=dense, floor=floor
        )
        wrank = rank_of(paths, present)
        wall = results[wrank - 1].get("wall") if wrank else None
        if wrank is not None and wall:
            evidence = MissEvidence(indexed=True, rank=None, walled_rank=wrank, wall=wall, words=words)
        else:
            reach = reaching_words(index, words, present)
            evidence = MissEvidence(
                indexed=True, rank=None, reaching_words=reach, words=words, content_words=content, depth=depth
            )
    verdict = classify_miss(evidence)
    return {"id": case.id, "query": case.query, "expected": case.expected, "category": case.category} | verdict


def _below_floor(
    index: SearchIndex,
    contract: Contract,
    query: str,
    mode: str,
    depth: int,
    targets: Sequence[str],
    dense: Any,
    effective: float,
) -> tuple[int, float | None] | None:
    """(rank, confidence) of the first of `targets` in the mode's whole ranking (floor 0), when the floor in
    force (`effective`) left it out; None when there was no floor or the whole ranking lacks it too."""
    if effective <= 0:
        return None
    paths, results = search_paths(index, contract, query, mode, depth, dense=dense, floor=0.0)
    rank = rank_of(paths, targets)
    if rank is None:
        return None
    sure = results[rank - 1].get("confidence")
    return rank, None if sure is None else float(sure)


def run_fixtures(
    store: Store,
    contract: Contract,
    cases: Sequence[FixtureCase],
    *,
    modes: Sequence[str] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    depth: int | None = None,
    dense: Any = None,
    dense_reason: str | None = None,
    floor: float | None = None,
) -> dict[str, object]:
    """Run every case in every mode, each search as `agentmd search` answers it: through the contract's search
    floor (scaled in a small vault) or `floor` as given (0: the whole ranking), so that a no-answer question
    counts as rejected when nothing clears the floor. `hybrid` runs with `dense` (a `hybrid.DenseArm`); without
    one it is left out and `skipped` says why (`dense_reason`). The per-mode summaries, categories, misses and
    per-query ranks."""
    modes, skipped = modes_with_dense(modes, dense, dense_reason)
    ks = parse_ks(ks)
    depth = min(depth or max_limit(), max_limit())
    indexed_paths = store.index.paths()
    default = confidence.search_floor(store.index, contract.thresholds.search_floor)
    effective = default if floor is None else floor
    report: dict[str, object] = {}
    for mode in modes:
        outcomes: list[QueryOutcome] = []
        start = time.perf_counter()
        for case in cases:
            paths, _results = search_paths(
                store.index, contract, case.query, mode, depth, catalog=store.catalog, dense=dense, floor=floor
            )
            rank = rank_of(paths, case.targets) if case.answerable else None
            outcomes.append(QueryOutcome(case, rank, len(paths), tuple(paths[:3])))
        seconds = time.perf_counter() - start
        misses = []
        for o in outcomes:
            if o.case.answerable and not hit_at(o.rank, ks[0]):
                entry = _investigate(
                    store.index, contract, o.case, mode, depth, o.rank, indexed_paths, dense, floor, effective, ks[0]
                )
                entry["missed_at"] = [k for k in ks if not hit_at(o.rank, k)]
                misses.append(entry)
        report[mode] = {
            "overall": summarize(outcomes, ks),
            "categories": summarize_by_category(outcomes, ks),
            "misses": misses,
            "miss_kinds": {kind: sum(1 for m in misses if m["kind"] == kind) for kind in MISS_KINDS},
            "queries": [
                {
                    "id": o.case.id,
                    "category": o.case.category,
                    "expected": o.case.expected,
                    "rank": o.rank,
                    "results": o.result_count,
                    "top": list(o.top),
                }
                for o in outcomes
            ],
            "seconds": round(seconds, 4),
        }
    out = {"ks": list(ks), "depth": depth, "floor": round(effective, 4), "modes": report}
    return out | ({"skipped": skipped} if skipped else {})


def evaluate_fixtures(
    fixture: Path,
    store: Store,
    contract: Contract,
    *,
    modes: Sequence[str] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    dense: Any = None,
    dense_reason: str | None = None,
    floor: float | None = None,
) -> dict[str, object]:
    """The whole `eval fixtures` report for one fixture file against an open, reconciled store (see
    `run_fixtures` for `dense` and `floor`)."""
    cases, sha = load_fixtures(fixture)
    result = run_fixtures(
        store, contract, cases, modes=modes, ks=ks, dense=dense, dense_reason=dense_reason, floor=floor
    )
    corpora = sorted({str(c.extra["corpus"]) for c in cases if "corpus" in c.extra})
    return {
        "fixture": str(fixture),
        "fixture_sha256": sha,
        "fixture_corpus": corpora,
        "queries": len(cases),
        "corpus": corpus_fingerprint(store),
    } | result


def render_fixtures(report: Mapping[str, Any]) -> str:
    """The `eval fixtures` report as text: per mode the summary, a table by category and the misses."""
    ks = report["ks"]
    corpus = report["corpus"]
    lines = [
        f"fixture {report['fixture']} ({report['queries']} queries)",
        f"  sha256 {report['fixture_sha256']}",
        f"  corpus {corpus['documents']} notes indexed, newest modified {corpus['newest_mtime'] or '-'}",
        f"  through the confidence floor {report['floor']:g}, as `agentmd search` returns results"
        + (" (--floor 0: the whole ranking)" if report["floor"] else " (the whole ranking)"),
    ]
    for mode, why in (report.get("skipped") or {}).items():
        lines.append(f"  {mode}: not run ({why})")
    for mode, r in report["modes"].items():
        o = r["overall"]
        lines.append("")
        lines.append(f"mode {mode}: {o['answerable']} answerable, {o['no_answer']} no-answer, {r['seconds']:.2f}s")
        parts = [f"recall@{k} {fmt(o[f'recall@{k}'])}" for k in ks]
        parts.append(f"MRR {fmt(o['mrr'])}")
        parts.append(f"correct rejection {fmt(o['correct_rejection'])} ({o['rejected']}/{o['no_answer']})")
        lines.append("  " + "  ".join(parts))
        width = max([len("category")] + [len(c) for c in r["categories"]])
        head = f"  {'category':<{width}}  {'n':>3}" + "".join(f"  {'R@' + str(k):>6}" for k in ks)
        lines.append(head + f"  {'MRR':>6}  {'reject':>6}")
        for name, c in r["categories"].items():
            n = c["answerable"] + c["no_answer"]
            row = f"  {name:<{width}}  {n:>3}" + "".join(f"  {fmt(c[f'recall@{k}']):>6}" for k in ks)
            lines.append(row + f"  {fmt(c['mrr']):>6}  {fmt(c['correct_rejection']):>6}")
        if r["misses"]:
            lines.append(f"  misses at K={ks[0]}:")
            for m in r["misses"]:
                lines.append(f"    {m['id']}  {_miss_text(m)}  {m['expected']}  ({m['query']!r})")
        else:
            lines.append(f"  no misses at K={ks[0]}")
    return "\n".join(lines)


def _miss_text(m: Mapping[str, Any]) -> str:
    kind = m["kind"]
    if kind == "ranking_loss":
        return f"ranking_loss rank {m['rank']}" if m["rank"] else f"ranking_loss below rank {m.get('beyond')}"
    if kind == "below_floor":
        sure = "-" if m["confidence"] is None else f"{m['confidence']:.2f}"
        return f"below_floor rank {m['rank']} with confidence {sure} under the floor {m['floor']:g}"
    if kind == "walled":
        return f"walled ({m['wall']}) rank {m['rank']} with include_archived"
    if kind == "partial_match":
        return f"partial_match reached by {', '.join(m['reaching_words'])}"
    return str(kind)
