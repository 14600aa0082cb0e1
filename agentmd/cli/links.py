"""`agentmd links PATH | --dangling | --orphans`: a note's links and backlinks, every dangling link, or the
notes linked to nothing. Links are resolved when asked (`agentmd.engine.search.graph`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from agentmd.cli.base import EXIT_OK, settings_of
from agentmd.cli.output import emit, notices
from agentmd.engine.errors import UsageError

if TYPE_CHECKING:
    from agentmd.engine.search.graph import LinkJson, LinksJson


def add_links_parser(sub: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register `agentmd links PATH | --dangling | --orphans [--json]` on the CLI's subparsers."""
    p: argparse.ArgumentParser = sub.add_parser(
        "links",
        parents=[common],
        help="a note's links and backlinks, or every dangling link, or the orphan notes",
        description="Links are resolved now, against the notes that exist now: a link whose target appears "
        "later resolves without reindexing the note that wrote it.",
    )
    p.add_argument("path", nargs="?", help="a note: its vault-relative path, or a name as a [[link]] would write it")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--dangling", action="store_true", help="every link whose target matches no note")
    which.add_argument("--orphans", action="store_true", help="notes with no link to or from another note")
    p.set_defaults(func=cmd_links)
    return p


def _line(entry: LinkJson) -> str:
    return f"{entry['line']:>5}  {entry['written']}"


def cmd_links(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.engine.index.store import Store
    from agentmd.engine.search.graph import Graph, find_note
    from agentmd.rules import load_contract

    chosen = sum(bool(x) for x in (args.path, args.dangling, args.orphans))
    if chosen != 1:
        raise UsageError("agentmd links: give a note PATH, or --dangling, or --orphans (see `agentmd links --help`)")
    settings = settings_of(args)
    with Store(settings.cache_dir) as store:
        notices(err, store.notices)
        if store.catalog.count() == 0:
            contract = load_contract(settings.vault, settings.contract_path).contract
            reconcile(
                settings.vault,
                store,
                link_convention=contract.link_convention,
                sync_patterns=contract.sync_tool_patterns,
            )
        graph = Graph(store.catalog)
        payload: dict[str, object]
        if args.dangling:
            rows = graph.dangling()
            targets = sorted({r["target"].lower() for r in rows})
            payload = {"dangling": rows, "count": len(rows), "targets": len(targets)}
            lines = [f"{len(rows)} dangling links to {len(targets)} missing notes"]
            last = None
            for r in rows:
                if r["target"].lower() != last:
                    last = r["target"].lower()
                    lines.append(f"  {r['target']}")
                lines.append(f"      <- {r['path']}:{r['line']}  {r['written']}")
        elif args.orphans:
            paths = graph.orphans()
            payload = {"orphans": paths, "count": len(paths)}
            lines = [f"{len(paths)} notes with no link to or from another note", *(f"  {p}" for p in paths)]
        else:
            path = find_note(graph, settings.vault, args.path)
            result = graph.links_of(path)
            payload = {"path": path, **result}
            lines = _links_of_text(path, result)
    emit(out, args, payload, "\n".join(lines))
    return EXIT_OK


def _links_of_text(path: str, result: LinksJson) -> list[str]:
    local = [e for e in result["out"] if not e["target"]]  # [[#heading]]: listed in --json only
    lines = [path, f"links out ({len(result['out'])}):"]
    lines += [f"{_line(e)}  ->  {e['resolved'] or '(dangling)'}" for e in result["out"] if e["target"]]
    if local:
        lines.append(f"    ({len(local)} to headings of this note)")
    lines.append(f"backlinks ({len(result['back'])}):")
    lines += [f"  {e['path']}:{e['line']}  {e['written']}" for e in result["back"]]
    lines.append(f"dangling ({len(result['dangling'])}):")
    lines += [_line(e) for e in result["dangling"]]
    if result["attachments"]:
        lines.append(f"attachments ({len(result['attachments'])}):")
        lines += [_line(e) for e in result["attachments"]]
    return lines
