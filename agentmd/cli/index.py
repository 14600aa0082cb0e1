"""`agentmd reindex` and `agentmd search`: the index brought in line with the vault, and searched.

`reindex` also embeds the notes in the foreground (the dense arm), unless a daemon runs (it embeds in the
background) or the dense arm is off (`--no-dense`, `AGENTMD_DENSE=0`, `dense = false`). `search` asks the
running daemon, whose warm model makes it hybrid, else searches in this process (hybrid when vectors exist
on disk and the model loads, lexical otherwise; the `note` says which)."""

from __future__ import annotations

import argparse
import re
from typing import Any, TextIO

from agentmd.cli.base import EXIT_FAILURE, EXIT_OK, daemon_of, number, settings_of
from agentmd.cli.output import EmbedBar, ProgressBar, duration, emit, notices, one_line
from agentmd.engine.errors import AgentmdError, UsageError

# The search modes and the default one, as engine/search/query.py names them (MODES, DEFAULT_MODE); written
# out here so that building the parser loads no search module. tests/cli/test_cli_imports.py checks they agree.
MODES = ("hybrid", "fusion", "and")
DEFAULT_MODE = "hybrid"


def add_reindex(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("reindex", parents=[common], help="bring the index in line with the vault")
    p.add_argument("--from-scratch", action="store_true", help="drop the index and catalog and rebuild them")
    p.add_argument(
        "--allow-mass-delete", action="store_true", help="allow a pass that removes more than half the index"
    )
    p.add_argument("--no-dense", action="store_true", help="index lexically only; do not embed the notes")
    p.set_defaults(func=cmd_reindex)


def add_search(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("search", parents=[common], help="search the vault")
    p.add_argument("query", nargs="+", help="words to search for")
    p.add_argument("--limit", type=int, default=10, help="results to return (default 10)")
    p.add_argument(
        "--mode",
        default=DEFAULT_MODE,
        choices=MODES,
        help=f"hybrid: words and meaning fused; fusion, and: words only (default: {DEFAULT_MODE})",
    )
    p.add_argument("--per-note", type=int, default=1, help="sections of one note that may take result slots")
    p.add_argument("--explain", action="store_true", help="print each result's ranking trace (the arms' own scores)")
    p.add_argument("--after", help="captured on or after: a date (2026-11-30), an age (3d, 2w) or 'last week'")
    p.add_argument("--before", help="captured on or before: a date, an age (3d) or words ('yesterday')")
    p.add_argument("--project", help="the project the search is for (other projects' notes rank lower)")
    p.add_argument("--include-archived", action="store_true", help="also return archived/superseded/staged notes")
    p.add_argument(
        "--floor",
        type=number,
        metavar="X",
        help="the confidence floor for this search, 0 to 1 (default: the contract's search_floor; 0 returns the"
        " whole ranking, as a ranking evaluation wants it)",
    )
    p.set_defaults(func=cmd_search)


def _commit_allowed_deletion(settings: Any) -> str:
    """With no daemon to hand the allowance to, commit the deletion the breaker held back here: one commit cycle
    of this process's own committer, allowed once. What it says of it."""
    from agentmd.engine.git.committer import committer_for
    from agentmd.rules import ContractCache

    committer = committer_for(settings, ContractCache(settings.vault, settings.contract_path))
    committer.hold(None)  # a daemon's refusal recorded before it stopped: this pass allowed the deletion
    committer.allow_mass_deletion()
    cycle = committer.commit_cycle()
    if cycle.error or cycle.skipped:
        return f"\n  the deletion is not committed yet: {cycle.error or cycle.skipped}"
    paths = sum(len(c.paths) for c in cycle.commits)
    return f"\n  committed the deletion ({paths} file(s))" if paths else ""


def cmd_reindex(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.engine.index.store import Store
    from agentmd.engine.index.unreadable import SHOWN, unreadable_notes
    from agentmd.rules import load_contract

    settings = settings_of(args)
    if args.allow_mass_delete and not args.from_scratch:
        from agentmd.engine.daemon.instance import running_daemon

        if running_daemon(settings.state_dir):
            return _allow_through_daemon(settings, args, out)
    progress = ProgressBar(err) if err.isatty() and not args.json else None
    with Store(settings.cache_dir, from_scratch=args.from_scratch) as store:
        notices(err, store.notices)
        contract = load_contract(settings.vault, settings.contract_path).contract
        report = reconcile(
            settings.vault,
            store,
            allow_mass_delete=args.allow_mass_delete,
            progress=progress,
            link_convention=contract.link_convention,
            sync_patterns=contract.sync_tool_patterns,
        )
        docs = store.index.doc_count()
        unreadable = unreadable_notes(settings.vault, store.catalog)
        # every note's hash, for the embedding that follows; a lexical-only run has no use for it
        embedding = not (args.no_dense or not settings.dense or report.refused)
        current = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()} if embedding else {}
    payload = report.to_dict() | {"vault": str(settings.vault), "index": str(settings.cache_dir), "documents": docs}
    payload["not_read_whole"] = [{"path": path, "problem": why} for path, why in unreadable]
    dense_text = ""
    if not report.refused:
        payload["dense"], dense_text = _embed(settings, current, args, err)
    if report.refused:
        if args.json:
            emit(out, args, payload, "")
        raise AgentmdError(f"reindex refused: {report.refused}")
    text = (
        f"{report.added} added, {report.updated} updated, {report.deleted} deleted, {report.unchanged} unchanged, "
        f"{len(report.errors)} errors in {report.seconds:.2f}s ({docs} notes indexed)"
    )
    if args.allow_mass_delete and (settings.vault / ".git").exists():
        text += _commit_allowed_deletion(settings)
    for e in report.errors:
        text += f"\n  error: {e['path']}: {e['error']}"
    for s in report.skipped:
        text += f"\n  skipped: {s['path']}: {s['reason']}"
    for path, why in unreadable[:SHOWN]:  # indexed, but not read whole
        text += f"\n  not read whole: {path}: {why}"
    if len(unreadable) > SHOWN:
        text += f"\n  and {len(unreadable) - SHOWN} more notes not read whole (`--json` lists them all)"
    emit(out, args, payload, text + (f"\n{dense_text}" if dense_text else ""))
    return EXIT_FAILURE if report.errors else EXIT_OK


def _allow_through_daemon(settings: Any, args: argparse.Namespace, out: TextIO) -> int:
    """The daemon owns the index while it runs: it takes the allowance and runs the pass itself."""
    from agentmd.engine.daemon.allowance import request_from_daemon
    from agentmd.engine.daemon.instance import running_daemon

    try:
        answer = request_from_daemon(settings.state_dir, alive=lambda: running_daemon(settings.state_dir) is not None)
    except TimeoutError as exc:
        raise AgentmdError(f"reindex --allow-mass-delete: {exc}; is `agentmd serve` stuck? Check its log") from None
    report = answer.get("report")
    if answer.get("error") or not isinstance(report, dict):
        raise AgentmdError(f"reindex --allow-mass-delete: the daemon's pass failed: {answer.get('error')}")
    if report.get("refused"):
        raise AgentmdError(f"reindex refused: {report['refused']}")
    payload = report | {"vault": str(settings.vault), "through_daemon": True}
    text = (
        f"the running daemon ran the pass: {report.get('added', 0)} added, {report.get('updated', 0)} updated, "
        f"{report.get('deleted', 0)} deleted, {report.get('unchanged', 0)} unchanged; it commits the deletions next"
    )
    emit(out, args, payload, text)
    return EXIT_FAILURE if report.get("errors") else EXIT_OK


def _embed(
    settings: Any, current: dict[str, str], args: argparse.Namespace, err: TextIO
) -> tuple[dict[str, object], str]:
    """Embed the notes in the foreground; (the JSON `dense` part, the summary line). A lexical-only run imports
    nothing of the dense arm (numpy and the model's runtime take longer to load than a small vault to index)."""
    if args.no_dense:
        return {"state": "lexical-only", "reason": "--no-dense"}, "dense: lexical-only (--no-dense)"
    from agentmd.engine.daemon.instance import running_daemon
    from agentmd.engine.index.embedder import EmbedderUnavailable
    from agentmd.engine.search.arm import SWITCHED_OFF, embed_foreground, load_embedder

    if not settings.dense:
        return {"state": "lexical-only", "reason": SWITCHED_OFF}, f"dense: lexical-only ({SWITCHED_OFF})"
    info = running_daemon(settings.state_dir)
    if info and info.get("port"):
        text = "dense: the daemon embeds the notes in the background (`agentmd status` shows how far it got)"
        return {"state": "daemon", "reason": None}, text
    try:
        embedder = load_embedder(settings)
    except EmbedderUnavailable as exc:
        return {"state": "lexical-only", "reason": str(exc)}, f"dense: lexical-only: {exc}"
    bar = None if args.json else EmbedBar(err, tty=err.isatty())
    try:
        done = embed_foreground(settings, current, embedder, bar)
    except EmbedderUnavailable as exc:  # an embeddings endpoint that stopped answering; what it made is saved
        return {"state": "partial", "reason": str(exc)}, f"dense: stopped: {exc}"
    rate = f" ({done.rate:.1f} chunks/s)" if done.rate else ""
    text = (
        f"dense: embedded {done.embedded:,} chunks in {duration(done.seconds)}{rate}; "
        f"{done.chunks_done:,}/{done.chunks_total:,} chunks of {done.notes_total:,} notes have vectors"
    )
    part: dict[str, object] = {
        "state": "complete" if done.chunks_done >= done.chunks_total else "partial",
        "embedded": done.embedded,
        "seconds": round(done.seconds, 3),
        "chunks_done": done.chunks_done,
        "chunks_total": done.chunks_total,
        "notes_total": done.notes_total,
        "reason": None,
    }
    return part, text


def cmd_search(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = settings_of(args)
    fields = {
        "query": " ".join(args.query),
        "limit": args.limit,
        "mode": args.mode,
        "after": _day(args.after, "after"),
        "before": _day(args.before, "before"),
        "project": args.project,
        "include_archived": args.include_archived,
        "per_note": args.per_note,
        "explain": args.explain,
    }
    if args.floor is not None:
        fields["floor"] = args.floor  # sent only when given, so an older daemon still takes the request
    emit(out, args, (response := _search(settings, fields)), render_search(response))
    return EXIT_OK


_DATE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")


def _day(text: str | None, bound: str) -> str | None:
    """`--after`/`--before` as the search request takes it (YYYY[-MM[-DD]]): a date as given; an age (`3d`,
    `2w`) or words a query may hold (`last week`, `yesterday`, `since March`) as the day they name
    (engine/search/when.py's `bound_day`, which the daemon also applies to what other clients send)."""
    if text is None or _DATE.fullmatch(text.strip()):
        return text
    from agentmd.engine.search import when  # the standard library only: a search through the daemon stays light

    day = when.bound_day(text, bound)
    if day is None:
        raise UsageError(
            f"--{bound} {text!r} is not a date: give one (2026-11-30), an age (3d, 2w) or a time in words "
            "('last week', 'yesterday', 'March 2026')"
        )
    return day.isoformat()


def _search(settings: Any, fields: dict[str, Any]) -> dict[str, object]:
    """The running daemon's answer (not counted as a recall), else one from this process. Asking the daemon
    loads only its light client: the request goes as the JSON object of the search request's fields."""
    daemon = daemon_of(settings)
    if daemon is not None:
        from agentmd.engine.backends import RemoteBackend
        from agentmd.engine.client import DaemonNotReached

        try:
            return RemoteBackend(daemon).search(fields, count_usage=False)
        except DaemonNotReached:
            pass  # it stopped since it was found, before the request was sent: searched here
    from agentmd.engine.index.reconcile import last_pass, reconcile
    from agentmd.engine.index.store import Store
    from agentmd.engine.search.query import search
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import load_contract

    request = SearchRequest(**fields)
    contract = load_contract(settings.vault, settings.contract_path).contract
    arm, reason = None, None
    if request.mode == "hybrid":
        from agentmd.engine.search.arm import arm_from_disk

        arm, reason = arm_from_disk(settings)
    with Store(settings.cache_dir) as store:
        if last_pass(store) is None:  # never read whole (a capture indexes its own note alone): read it now
            reconcile(
                settings.vault,
                store,
                link_convention=contract.link_convention,
                sync_patterns=contract.sync_tool_patterns,
            )
        return search(store.index, contract, request, store.catalog, arm, reason).to_json()


def render_search(response: dict[str, Any]) -> str:
    """A search response as text: one numbered line per result, its snippet, and the explain trace if asked."""
    lines = []
    for n, r in enumerate(response["results"], 1):
        flag = f"  [{', '.join(r['penalties'])}]" if r["penalties"] else ""
        arms = f"  arms {'+'.join(r['arms'])}" if r.get("arms") else ""
        captured = (r.get("captured") or "")[:10] or "?"
        lines.append(f"{n:>2}. {r['path']}  score {r['score']:.3f}  captured {captured}{arms}{flag}")
        if r["snippet"]:
            lines.append(f"    {one_line(r['snippet'])}")
        if "explain" in r:
            ex = r["explain"]
            dense = ex.get("dense")
            if isinstance(dense, dict) and dense.get("used"):
                lexical = f"{dense['lexical_score']:.3f} (#{dense['lexical_rank']})" if dense["lexical_rank"] else "-"
                cosine = "-" if dense["cosine"] is None else f"{dense['cosine']:.3f}"
                cosine += f" (#{dense['dense_rank']})" if dense["dense_rank"] else ""
                share = (
                    f" (cosine's share {dense['share']:.2f}, passages alike {dense['sameness']:.2f})"
                    if "share" in dense
                    else ""
                )
                lines.append(
                    f"    explain: {dense['rule']}{share}: lexical {lexical}, cosine {cosine}, "
                    f"word share {dense['word_share']:.2f} -> {ex['raw_score']:.4f} x penalty {r['penalty']:.3f}"
                )
            elif isinstance(dense, dict):
                lines.append(f"    explain: dense arm unused: {dense.get('reason')}")
            if "fields" not in ex:
                continue
            fields = ", ".join(f"{k} {v:.3f}" for k, v in ex["fields"].items())
            if isinstance(dense, dict) and dense.get("used"):
                lines.append(f"    lexical BM25 by field: {fields}")
            else:
                trace = f"raw {ex['raw_score']:.4f} x penalty {r['penalty']:.3f} = rank {ex['rank_score']:.4f}"
                lines.append(f"    explain: {trace}; BM25 by field: {fields}")
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
        # the engine names the request field; on the command line it is the flag
        lines.append(f"note: {response['note']}".replace("include_archived", "--include-archived"))
    dropped = response.get("below_floor") or 0
    if response.get("closest_miss"):
        lines.append("the whole ranking, whatever the confidence: add `--floor 0`")
    elif dropped and response["results"]:
        notes = "note" if dropped == 1 else "notes"
        floor = f"{response['floor']:.2f}"
        lines.append(f"{dropped} more {notes} below the confidence floor ({floor}): `--floor 0` shows them")
    if not lines:
        lines.append("no results")
    return "\n".join(lines)
