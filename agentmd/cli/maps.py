"""`agentmd maps`: the maps of content rebuilt from the notes' facets (engine/curate/maps.py). A dry run unless
`--yes`; with `--yes` the changed pages are one commit with `origin: maps`, applied by the daemon when it runs."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from agentmd.cli.base import EXIT_FAILURE, EXIT_OK, fresh_store, settings_of
from agentmd.cli.output import emit


def add_maps_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("maps", parents=[common], help="rebuild the maps of content (pages by facet) under maps/")
    p.add_argument("--yes", action="store_true", help="write the pages (without it: show what would change)")
    p.set_defaults(func=cmd_maps)


def cmd_maps(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.curate.host import run_steps
    from agentmd.engine.curate.maps import plan
    from agentmd.engine.git.gate import corpus_write_gate
    from agentmd.rules import load_contract

    settings = settings_of(args)
    contract = load_contract(settings.vault, settings.contract_path).contract
    with fresh_store(settings, contract) as store:
        step, maps = plan(settings.vault, store.catalog, contract)
    payload: dict[str, object] = {
        "dry_run": not args.yes,
        "notes": maps.notes,
        "facets": maps.values,
        "pages": len(maps.pages),
        "written": [e.path for e in step.edits],
        "archived": maps.archived,
    }
    facets = ", ".join(f"{f} {n} value(s)" for f, n in maps.values.items()) or "no facet has a value yet"
    lines = [f"maps: {maps.notes} notes; {facets}; {len(maps.pages)} page(s), {len(step.edits)} to write"]
    lines += [f"  {'archive' if e.path in maps.archived else 'write'} {e.path}" for e in step.edits]
    if not args.yes or not step.edits:
        if step.edits:
            lines.append("dry run: nothing was written; run again with --yes to write the pages")
        emit(out, args, payload, "\n".join(lines))
        return EXIT_OK
    if len(step.edits) > 1:
        gate = corpus_write_gate(settings.vault)
        if not gate.ok:
            text = f"the corpus-write gate refused ({gate.reason}): {gate.detail}"
            payload["refused"] = text
            emit(out, args, payload, "\n".join([*lines, text]))
            return EXIT_FAILURE
    results, by = run_steps(settings, [step])
    commits = [c for r in results for c in r.commits]
    payload["applied_by"], payload["commits"] = by, commits
    lines.append(f"written by the {by} writer; {len(commits)} commit(s)")
    emit(out, args, payload, "\n".join(lines))
    return EXIT_OK
