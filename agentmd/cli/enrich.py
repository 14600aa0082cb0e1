"""`agentmd enrich`: the review queue judged by the owner's model CLI, under budgets only the owner raises.

`--dry-run` sizes the night (the notes owed by cause and by kind, the calls and tokens the budgets let it
spend) and calls nothing.
Otherwise the corpus-write gate is asked first, then each note is judged, and the accepted answers are filed
through the same path as `confirm`: the daemon applies them when it runs, one commit per note with
`origin: enrich`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from agentmd.cli.base import EXIT_FAILURE, EXIT_OK, fresh_store, settings_of
from agentmd.cli.output import emit
from agentmd.engine.errors import AgentmdError

if TYPE_CHECKING:
    from agentmd.engine.enrich.records import Estimate
    from agentmd.engine.enrich.run import NoteOutcome, Report


def add_enrich_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("enrich", parents=[common], help="judge the review queue with a model CLI, within budgets")
    p.add_argument("--dry-run", action="store_true", help="size the run (notes owed, calls, tokens); call nothing")
    p.add_argument("--max-calls", type=int, help="at most this many model calls (lowers [enrich] max_calls)")
    p.add_argument("--max-tokens", type=int, help="at most this many tokens added (lowers [enrich] max_tokens)")
    p.add_argument("--after", metavar="CURSOR", help="resume after this note (the cursor a stopped run printed)")
    p.set_defaults(func=cmd_enrich)


def _line(n: NoteOutcome) -> str:
    used = f" · {n.usage.added} tokens added" if n.usage is not None and n.usage.total else ""
    cost = f" · ${n.usage.cost_usd:.4f}" if n.usage is not None and n.usage.cost_usd is not None else ""
    why = f": {n.reason}" if n.reason else ""
    cause = f" ({n.cause})" if n.cause and n.outcome == "owed" else ""
    kind = f" [{n.kind}]" if n.kind != "card" else ""
    return f"  {n.outcome:<11} {n.path}{kind}{cause}{why}{used}{cost}"


def render(report: Report) -> str:
    data = report.to_dict()
    lines = [_line(n) for n in report.notes]
    if report.dry_run:
        est: Estimate = report.estimate or {
            "calls": 0,
            "tokens": 0,
            "tokens_per_call": 0,
            "calls_per_note": 0,
            "notes": 0,
            "later": 0,
            "owed_by_cause": {},
            "owed_by_kind": {},
        }
        causes = ", ".join(f"{k} {v}" for k, v in est["owed_by_cause"].items()) or "none"
        kinds = est["owed_by_kind"]
        named = [f"{kinds.get('cards', 0)} card(s)"] + [
            f"{kinds[k]} {k[:-1]}(s)" for k in ("idea cards", "project records") if kinds.get(k)
        ]
        later = f", {est['later']} past the budget for a later run" if est.get("later") else ""
        lines.append(
            f"dry run: {est.get('calls', 0)} call(s), about {est.get('tokens', 0)} tokens "
            f"({est.get('tokens_per_call', 0)} a call); owed: {', '.join(named)}{later}; by cause: {causes}; "
            f"{report.count('unchanged')} unchanged, {report.count('skipped')} skipped{_kept_local(report)}; "
            "nothing was called"
        )
    else:
        c = data["counts"]
        apart = "".join(
            f", {c[k]} {name}"
            for k, name in (("dormant", "dormant"), ("idea", "idea card(s)"), ("record", "record(s)"))
            if c[k]
        )
        lines.append(
            f"enrich: {c['filed']} filed, {c['below-floor']} below the floor{apart}, {c['refused']} refused, "
            f"{c['failed']} failed, {c['unchanged']} unchanged, {c['skipped']} skipped{_kept_local(report)}; "
            f"{report.calls} call(s), "
            f"{report.usage.added} tokens added of {report.budget.max_tokens}"
            + (f", ${report.usage.cost_usd:.4f}" if report.usage.cost_usd is not None else "")
        )
        if report.dormant:
            lines.append(f"dormant now (below the floor twice): {', '.join(report.dormant)}")
        if report.commits:
            lines.append(f"applied by the {report.applied_by} writer; {len(report.commits)} commit(s)")
    if report.stopped_by:
        resume = f"; resume with --after {report.cursor}" if report.cursor else ""
        lines.append(f"stopped by {report.stopped_by}{resume}")
    lines += [f"warning: {w}" for w in report.warnings]
    return "\n".join(lines)


def _kept_local(report: Report) -> str:
    """The notes left out because they stay on this machine (a private space, a recall-exempt area), when any."""
    from agentmd.engine.enrich.run import PRIVATE_SKIPPED

    n = report.count(PRIVATE_SKIPPED)
    return f", {n} kept local (private or recall-exempt, never sent)" if n else ""


def check_model_command(program: str, settings: Any) -> None:
    """Refuse a run whose model command cannot be started, naming it and the setting that chooses it."""
    import os
    import shutil

    if shutil.which(program) is not None or (os.sep in program and os.access(program, os.X_OK)):
        return
    where = settings.config_file or "$XDG_CONFIG_HOME/agentmd/config.toml"
    raise AgentmdError(
        f"enrich: the model command `{program}` is not installed or not on PATH; install it, or name the one to "
        f'use in the [enrich] table of {where} (`program = "/path/to/claude"`, or `command = ["llm", ...]` for '
        "another model CLI)"
    )


def cmd_enrich(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.curate.host import run_steps
    from agentmd.engine.enrich.run import caller_for, enrich, settings_from
    from agentmd.engine.git.gate import corpus_write_gate
    from agentmd.engine.jobs.report import read_config
    from agentmd.rules import load_contract

    settings = settings_of(args)
    budget, model = settings_from(read_config(settings), max_calls=args.max_calls, max_tokens=args.max_tokens)
    contract = load_contract(settings.vault, settings.contract_path).contract
    if not args.dry_run:
        check_model_command(model.command[0], settings)
        gate = corpus_write_gate(settings.vault)
        if not gate.ok:
            text = f"enrich: the corpus-write gate refused ({gate.reason}): {gate.detail}"
            emit(out, args, {"refused": text}, text)
            return EXIT_FAILURE
    applied_by: list[str] = []
    store = fresh_store(settings, contract)

    def apply(steps: Any) -> Any:
        store.index.close()  # lets go of the index writer: the local writer below opens its own
        results, by = run_steps(settings, steps)
        applied_by.append(by)
        return results

    def progress(n: NoteOutcome) -> None:
        if not args.json and err.isatty():
            err.write(_line(n) + "\n")

    with store:
        report = enrich(
            vault=settings.vault,
            store=store,
            contract=contract,
            state_dir=settings.state_dir,
            budget=budget,
            caller=caller_for(model),
            model=model,
            apply=None if args.dry_run else apply,
            after=args.after,
            progress=progress,
        )
    report.applied_by = applied_by[-1] if applied_by else None
    emit(out, args, report.to_dict(), render(report))
    return EXIT_OK


def add_lessons_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "lessons", parents=[common], help="propose lessons from notes that keep recording the same outcome"
    )
    p.add_argument("--dry-run", action="store_true", help="list the clusters that clear the bar; call nothing")
    p.add_argument("--max-calls", type=int, help="at most this many model calls (lowers [enrich] max_calls)")
    p.add_argument("--max-tokens", type=int, help="at most this many tokens added (lowers [enrich] max_tokens)")
    p.set_defaults(func=cmd_lessons)


def render_lessons(data: dict[str, Any]) -> str:
    lines = []
    for c in data["clusters"]:
        why = f": {c['reason']}" if c.get("reason") else ""
        lesson = f" -> {c['lesson']}" if c.get("lesson") else ""
        lines.append(f"  {c['outcome']:<10} {', '.join(c['subjects'][:3])} ({len(c['sources'])} notes){lesson}{why}")
    counts = data["counts"]
    kept = f", {data['kept_local']} kept local (never sent)" if data["kept_local"] else ""
    head = f"lessons: {data['sources']} outcome note(s){kept}, {len(data['clusters'])} cluster(s) clear the bar"
    if data["dry_run"]:
        lines.append(f"{head}; {counts['owed']} to ask; dry run: nothing was called")
    else:
        lines.append(
            f"{head}; {counts['proposed']} proposed, {counts['skipped']} skipped, {counts['near-miss']} near miss, "
            f"{counts['refused']} refused, {counts['unclear']} unclear, {counts['failed']} failed; "
            f"{data['calls']} call(s), {data['usage']['added']} tokens added"
        )
    if data["proposed"]:
        lines.append("in the review queue (`agentmd confirm PATH --yes` keeps one): " + ", ".join(data["proposed"]))
    if data["stopped_by"]:
        lines.append(f"stopped by {data['stopped_by']}; the rest are asked next run")
    lines += [f"warning: {w}" for w in data["warnings"]]
    return "\n".join(lines)


def cmd_lessons(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.curate.host import run_steps
    from agentmd.engine.enrich.lessons import find_lessons
    from agentmd.engine.enrich.run import caller_for, settings_from
    from agentmd.engine.jobs.report import read_config
    from agentmd.rules import load_contract

    settings = settings_of(args)
    budget, model = settings_from(read_config(settings), max_calls=args.max_calls, max_tokens=args.max_tokens)
    contract = load_contract(settings.vault, settings.contract_path).contract
    if not args.dry_run:
        check_model_command(model.command[0], settings)
    applied_by: list[str] = []

    def apply(steps: Any) -> Any:
        results, by = run_steps(settings, steps)
        applied_by.append(by)
        return results

    with fresh_store(settings, contract) as store:
        store.index.close()  # lets go of the index writer: the local writer opens its own
        found = find_lessons(
            vault=settings.vault,
            catalog=store.catalog,
            contract=contract,
            state_dir=settings.state_dir,
            budget=budget,
            caller=caller_for(model),
            model=model.name,
            apply=None if args.dry_run else apply,
        )
    found.applied_by = applied_by[-1] if applied_by else None
    data = found.to_dict()
    emit(out, args, data, render_lessons(data))
    return EXIT_OK
