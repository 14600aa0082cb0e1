"""`agentmd lifecycle [--yes]`: the lifecycle policy now (what the daily `lifecycle` job does; a plan unless
`--yes`, as every curation command), and
`agentmd lifecycle --journal`: every lifecycle change journaled, with its actor."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from agentmd.cli.base import EXIT_OK, settings_of
from agentmd.cli.output import emit
from agentmd.engine.errors import AgentmdError


def add_lifecycle_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "lifecycle",
        parents=[common],
        help="sink unused notes to dormant and raise used ones back, now (the daily `lifecycle` job)",
        description="Notes nothing recalled, searched, linked to or edited for the contract's dormant_after_days "
        "sink to `lifecycle: dormant`; dormant notes used again rise back. Rules, pinned notes and lifecycles you "
        "set by hand never move. Prints the plan and writes nothing unless --yes; then through the running daemon "
        "when there is one, one commit, `origin: lifecycle`.",
    )
    p.add_argument("--yes", action="store_true", help="apply the plan (without it nothing is written)")
    p.add_argument("--dry-run", action="store_true", help="show what would change; change nothing (the default)")
    p.add_argument("--journal", action="store_true", help="list the lifecycle journal (every change and its actor)")
    p.add_argument("--limit", type=int, default=50, help="with --journal: the newest N lines (50; 0 for all)")
    p.set_defaults(func=cmd_lifecycle)


def cmd_lifecycle(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.curate.lifecycle_history import read_journal

    settings = settings_of(args)
    if args.journal:
        lines = read_journal(settings.state_dir)
        shown = lines[-args.limit :] if args.limit > 0 else lines
        text = [
            f"{len(lines)} lifecycle change(s) journaled" + (f", the newest {len(shown)}" if shown != lines else "")
        ]
        for j in shown:
            text.append(
                f"  {str(j.get('ts'))[:19]}  {j.get('actor', '?'):<8} {j.get('path')}: {j.get('from') or '-'} -> "
                f"{j.get('to') or '-'} ({j.get('reason')})"
            )
        emit(out, args, {"journal": shown, "total": len(lines)}, "\n".join(text))
        return EXIT_OK
    args.dry_run = args.dry_run or not args.yes
    return _run(args, settings, out)


def _run(args: argparse.Namespace, settings: Any, out: TextIO) -> int:
    import datetime as dt

    from agentmd.engine.curate.host import run_steps
    from agentmd.engine.curate.lifecycle import run_pass
    from agentmd.engine.git.gate import corpus_write_gate
    from agentmd.engine.index.catalog import Catalog, CatalogError
    from agentmd.rules import load_contract

    if not settings.catalog_path.is_file():
        raise AgentmdError(f"no catalog at {settings.catalog_path}; run `agentmd reindex` first")
    contract = load_contract(settings.vault, settings.contract_path).contract
    applied_by = ["nobody (dry run)"]

    def apply(steps: Any) -> Any:
        results, who = run_steps(settings, steps)
        applied_by[0] = "the daemon" if who == "daemon" else "this command"
        return results

    try:
        catalog = Catalog.reader(settings.catalog_path, timeout=5.0)
    except CatalogError as exc:
        raise AgentmdError(f"the catalog {settings.catalog_path} cannot be read ({exc})") from None
    try:
        plan, results = run_pass(
            settings.vault,
            contract,
            catalog,
            settings.state_dir,
            settings.catalog_path,
            now=dt.datetime.now(dt.UTC),
            apply=None if args.dry_run else apply,
            gate=lambda: corpus_write_gate(settings.vault),
        )
    finally:
        catalog.close()
    payload = plan.to_dict() | {"commits": [sha for r in results for sha in r.commits], "dry_run": args.dry_run}
    if plan.off:
        emit(out, args, payload, plan.off)
        return EXIT_OK
    verb = "would sink" if args.dry_run else "sank"
    lines = [
        f"{verb} {len(plan.sink)}, {'would raise' if args.dry_run else 'raised'} {len(plan.rise)} "
        f"(dormant after {plan.days} days unused; watching since {str(payload['watching_since'])[:10]})"
    ]
    lines += [f"  sink  {c.path}  ({c.reason})" for c in plan.sink]
    lines += [f"  rise  {c.path}  ({c.reason})" for c in plan.rise]
    if plan.hand_set:
        lines.append(f"  {len(plan.hand_set)} lifecycle(s) set by hand, journaled as yours and never moved")
    if plan.left_alone:
        lines.append("  left alone: " + ", ".join(f"{n} {why}" for why, n in sorted(plan.left_alone.items())))
    if plan.deferred:
        lines.append(f"  {plan.deferred} more change(s) wait for the next pass")
    if results:
        shas = ", ".join(sha[:10] for r in results for sha in r.commits) or "not committed yet"
        lines.append(f"  applied by {applied_by[0]}: {shas} (`agentmd log --origin lifecycle`)")
    elif args.dry_run and (plan.sink or plan.rise):
        lines.append("dry run: nothing was written; run again with --yes to apply")
    emit(out, args, payload, "\n".join(lines))
    return EXIT_OK
