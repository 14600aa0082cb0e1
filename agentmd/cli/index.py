"""`agentmd reindex` and `agentmd search`: the index brought in line with the vault, and searched."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from agentmd.cli.base import EXIT_FAILURE, EXIT_OK, settings_of
from agentmd.cli.output import ProgressBar, emit, notices
from agentmd.engine.errors import AgentmdError
from agentmd.engine.search.searcher import DEFAULT_MODE, MODES


def add_reindex(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("reindex", parents=[common], help="bring the index in line with the vault")
    p.add_argument("--from-scratch", action="store_true", help="drop the index and catalog and rebuild them")
    p.add_argument(
        "--allow-mass-delete", action="store_true", help="allow a pass that removes more than half the index"
    )
    p.set_defaults(func=cmd_reindex)


def add_search(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("search", parents=[common], help="search the vault")
    p.add_argument("query", nargs="+", help="words to search for")
    p.add_argument("--limit", type=int, default=10, help="results to return (default 10)")
    p.add_argument("--mode", default=DEFAULT_MODE, choices=MODES, help=f"how words combine (default: {DEFAULT_MODE})")
    p.add_argument("--per-note", type=int, default=1, help="sections of one note that may take result slots")
    p.add_argument("--explain", action="store_true", help="print each result's score trace")
    p.add_argument("--after", help="captured on or after this date (YYYY-MM-DD)")
    p.add_argument("--before", help="captured on or before this date (YYYY-MM-DD)")
    p.add_argument("--project", help="the project the search is for (other projects' notes rank lower)")
    p.add_argument("--include-archived", action="store_true", help="also return archived/superseded/staged notes")
    p.set_defaults(func=cmd_search)


def cmd_reindex(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.engine.index.store import Store
    from agentmd.rules import load_contract

    settings = settings_of(args)
    progress = ProgressBar(err) if err.isatty() and not args.json else None
    with Store(settings.cache_dir, from_scratch=args.from_scratch) as store:
        notices(err, store.notices)
        convention = load_contract(settings.vault, settings.contract_path).contract.link_convention
        report = reconcile(
            settings.vault,
            store,
            allow_mass_delete=args.allow_mass_delete,
            progress=progress,
            link_convention=convention,
        )
        docs = store.index.doc_count()
    payload = report.to_dict() | {"vault": str(settings.vault), "index": str(settings.cache_dir), "documents": docs}
    if report.refused:
        if args.json:
            emit(out, args, payload, "")
        raise AgentmdError(f"reindex refused: {report.refused}")
    text = (
        f"{report.added} added, {report.updated} updated, {report.deleted} deleted, {report.unchanged} unchanged, "
        f"{len(report.errors)} errors in {report.seconds:.2f}s ({docs} notes indexed)"
    )
    for e in report.errors:
        text += f"\n  error: {e['path']}: {e['error']}"
    for s in report.skipped:
        text += f"\n  skipped: {s['path']}: {s['reason']}"
    emit(out, args, payload, text)
    return EXIT_FAILURE if report.errors else EXIT_OK


def cmd_search(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.engine.index.store import Store
    from agentmd.engine.search.query import search
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import load_contract

    settings = settings_of(args)
    contract = load_contract(settings.vault, settings.contract_path).contract
    request = SearchRequest(
        query=" ".join(args.query),
        limit=args.limit,
        mode=args.mode,
        after=args.after,
        before=args.before,
        project=args.project,
        include_archived=args.include_archived,
        per_note=args.per_note,
        explain=args.explain,
    )
    with Store(settings.cache_dir) as store:
        if store.catalog.count() == 0:
            reconcile(settings.vault, store, link_convention=contract.link_convention)
        response = search(store.index, contract, request, store.catalog)
    emit(out, args, response, render_search(response))
    return EXIT_OK


def render_search(response: dict[str, Any]) -> str:
    """A search response as text: one numbered line per result, its snippet, and the explain trace if asked."""
    lines = []
    for n, r in enumerate(response["results"], 1):
        flag = f"  [{', '.join(r['penalties'])}]" if r["penalties"] else ""
        lines.append(f"{n:>2}. {r['path']}  score {r['score']:.3f}  captured {r['captured'][:10]}{flag}")
        if r["snippet"]:
            lines.append(f"    {r['snippet']}")
        if "explain" in r:
            ex = r["explain"]
            fields = ", ".join(f"{k} {v:.3f}" for k, v in ex["fields"].items())
            lines.append(f"    explain: raw {r['raw_score']:.4f} x penalty {r['penalty']:.3f}; BM25 by field: {fields}")
            if "name" in ex:
                lines.append(f"    name: the query is this note's {ex['name']['kind']} ({ex['name']['match']} match)")
            if ex["multipliers"]:
                lines.append("    multipliers: " + ", ".join(f"{k} {v}" for k, v in ex["multipliers"].items()))
            if ex["fusion_ranks"]:
                lines.append(
                    "    fusion ranks: " + "; ".join(f"[{q}] #{rank}" for q, rank in ex["fusion_ranks"].items())
                )
    hidden = {k: response[k] for k in ("archived_hidden", "superseded_hidden", "staged_hidden") if response[k]}
    if hidden:
        lines.append("hidden: " + ", ".join(f"{v} {k.replace('_hidden', '')}" for k, v in hidden.items()))
    if response["note"]:
        lines.append(f"note: {response['note']}")
    if not lines:
        lines.append("no results")
    return "\n".join(lines)
