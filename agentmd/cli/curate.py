"""The curation commands: `queue`, `confirm`, `retire`, `promote`, `ingest` and `log` (alias `changelog`).

Every command that changes notes is a dry run printing its plan unless `--yes` is given. A change to more than
one note asks the corpus-write gate first (a healthy repository with a clean worktree is its undo point).
Each applied command is one commit whose `origin:` trailer names it; when `agentmd serve` runs, the daemon
applies the plan with its own committer, so the vault keeps one writer.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any, TextIO

from agentmd.cli.base import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, fresh_store, settings_of
from agentmd.cli.output import ProgressBar, emit
from agentmd.engine.errors import UsageError

if TYPE_CHECKING:
    import datetime as dt
    from pathlib import Path
    from typing import TypedDict

    from agentmd.engine.curate.groom import GroomPlan
    from agentmd.engine.curate.steps import Step, StepResultJson
    from agentmd.engine.settings import Settings

    class Applied(TypedDict):
        """A step applied: by which writer (daemon or local) and each result."""

        applied_by: str
        results: list[StepResultJson]


def _yes(p: argparse.ArgumentParser) -> None:
    p.add_argument("--yes", action="store_true", help="apply the plan (without it: print the plan, write nothing)")


def add_curation_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("queue", parents=[common], help="list the notes awaiting judgment, oldest first")
    p.add_argument("--origin", help="only these origins, comma-separated: capture, phone, ingest")
    p.add_argument("--older-than", help="only notes waiting longer than this (90m, 12h, 3d, 2w)")
    p.set_defaults(func=cmd_queue)

    p = sub.add_parser("confirm", parents=[common], help="file notes as active (a dry run unless --yes)")
    p.add_argument("paths", nargs="*", help="notes to confirm (vault-relative or absolute paths)")
    p.add_argument("--source-prefix", help="every note whose `source` starts with this")
    p.add_argument("--type", help="the type to file them as (one the contract lists)")
    p.add_argument("--why", help="why they are worth keeping")
    _yes(p)
    p.set_defaults(func=cmd_edit, action="confirm")

    p = sub.add_parser("retire", parents=[common], help="archive notes, never deleting them (a dry run unless --yes)")
    p.add_argument("paths", nargs="*", help="notes to retire")
    p.add_argument("--source-prefix", help="every note whose `source` starts with this")
    p.add_argument("--origin", help="every note commits of this origin wrote (with --since)")
    p.add_argument("--since", help="with --origin: since this date (YYYY-MM-DD) or age (3d)")
    p.add_argument("--reason", help="why they are retired (kept as retired_reason)")
    _yes(p)
    p.set_defaults(func=cmd_edit, action="retire")

    p = sub.add_parser("promote", parents=[common], help="make project notes shared (a dry run unless --yes)")
    p.add_argument("paths", nargs="+", help="notes to promote")
    p.add_argument("--to-shared", action="store_true", required=True, help="out of their project, into every one")
    _yes(p)
    p.set_defaults(func=cmd_edit, action="promote")

    p = sub.add_parser("ingest", parents=[common], help="bring existing Markdown in as notes awaiting review")
    p.add_argument("sources", nargs="+", help="files or folders to ingest, or `sweep` for the config's sources")
    p.add_argument("--project", help="the project slug the notes belong to")
    p.add_argument("--dry-run", action="store_true", help="report the plan, write nothing")
    p.add_argument("--yes", action="store_true", help="accepted for symmetry; ingest writes unless --dry-run")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("groom", parents=[common], help="propose clean-ups, review the plan, apply it in one commit")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--propose", action="store_true", help="run the detectors and write a reviewable plan")
    what.add_argument("--apply", metavar="PLAN", help="carry out a plan (a dry run unless --yes)")
    what.add_argument("--split-revert", action="store_true", help="restore every split note (a dry run unless --yes)")
    p.add_argument("--out", help="with --propose: where to write the plan (default: print it)")
    p.add_argument("--stale-days", type=int, default=14, help="status notes older than this are stale (default 14)")
    p.add_argument(
        "--restated",
        action="store_true",
        help="with --propose: also ask the model CLI which similar rule notes state one rule twice (merge proposals)",
    )
    p.add_argument("--max-calls", type=int, help="with --restated: at most this many model calls (lowers [enrich])")
    p.add_argument("--max-tokens", type=int, help="with --restated: at most this many tokens added (lowers [enrich])")
    _yes(p)
    p.set_defaults(func=cmd_groom)

    p = sub.add_parser(
        "log", aliases=["changelog"], parents=[common], help="what changed, when and by which origin (from git)"
    )
    p.add_argument("path", nargs="?", help="one note: its biography, oldest first, following renames")
    p.add_argument("--since", help="since this date (YYYY-MM-DD) or age (7d)")
    p.add_argument("--origin", help="only these origins, comma-separated")
    p.set_defaults(func=cmd_log)

    p = sub.add_parser("clusters", parents=[common], help="communities of related notes, labelled by their words")
    p.add_argument("--rename", nargs=2, metavar=("ID", "NAME"), help="give a cluster your own name (kept by id)")
    p.set_defaults(func=cmd_clusters)


# ------------------------------------------------------------------------------------------------ helpers


def _when(text: str | None, now: dt.datetime) -> dt.datetime | None:
    import datetime as dt

    from agentmd.engine.curate.queue import parse_age

    if not text:
        return None
    try:
        return now - parse_age(text)
    except ValueError:
        pass
    except OverflowError:  # an age older than any date (`99999999d`): since the beginning
        return dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        from agentmd.engine.search import when  # `yesterday`, `last week`, `March 2026`, as search's --after reads

        found = when.bound_day(text, "after", now.date())
        if found is None:
            raise UsageError(
                f"--since {text!r}: give a date (2026-11-30), an age (3d, 12h) or a time in words ('yesterday', "
                "'last week')"
            ) from None
        day = found
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def _origins(text: str | None) -> list[str]:
    """The origins named (comma-separated); one that no commit can carry is a usage error naming those that can."""
    from agentmd.engine.curate.changelog import MANUAL
    from agentmd.engine.git.origins import ORIGINS

    known = (*ORIGINS, MANUAL)  # `manual`: the owner's own commits, which carry no origin
    named = [o.strip() for o in (text or "").split(",") if o.strip()]
    unknown = [o for o in named if o not in known]
    if unknown:
        raise UsageError(f"--origin {', '.join(unknown)}: not an origin; one of {', '.join(known)}")
    return named


def _relative(vault: Path, raw: str) -> str:
    from pathlib import Path

    path = Path(raw)
    if path.is_absolute() or (os.path.exists(raw) and not (vault / raw).exists()):
        try:
            return Path(os.path.abspath(raw)).resolve().relative_to(vault).as_posix()
        except ValueError:
            raise UsageError(f"{raw} is not inside the vault {vault}") from None
    return Path(raw).as_posix()


def _apply(settings: Settings, step: Step, *, bulk: bool) -> Applied:
    """Apply one step (asking the gate first when it is bulk); the JSON-ready outcome."""
    from agentmd.engine.curate.host import run_steps
    from agentmd.engine.git.gate import corpus_write_gate

    if bulk:
        gate = corpus_write_gate(settings.vault)
        if not gate.ok:
            raise GateRefused(f"the corpus-write gate refused ({gate.reason}): {gate.detail}")
    results, by = run_steps(settings, [step])
    return {"applied_by": by, "results": [r.to_dict() for r in results]}


class GateRefused(UsageError):
    """A bulk change the corpus-write gate did not let through."""


# ----------------------------------------------------------------------------------------------- commands


def cmd_queue(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import datetime as dt

    from agentmd.engine.curate.queue import ORIGINS, parse_age, review_queue
    from agentmd.engine.times import parse_utc
    from agentmd.rules import load_contract

    settings = settings_of(args)
    origins = _origins(args.origin)
    unknown = sorted(set(origins) - set(ORIGINS))
    if unknown:
        raise UsageError(f"unknown origin(s) {', '.join(unknown)}; the queue knows {', '.join(ORIGINS)}")
    try:
        older = parse_age(args.older_than) if args.older_than else None
    except ValueError as exc:
        raise UsageError(f"--older-than: {exc}") from None
    now = dt.datetime.now(dt.UTC)
    contract = load_contract(settings.vault, settings.contract_path).contract
    with fresh_store(settings) as store:
        items = review_queue(
            settings.vault, store.catalog, contract, state_dir=settings.state_dir, origins=origins, older_than=older
        )
    lines = [f"{len(items)} note(s) await judgment" + (" (oldest first):" if items else "")]
    for item in items:
        at = parse_utc(item.captured)
        age = f"{(now - at).days}d" if at else "?"
        lines.append(f"  {age:>5}  {item.path}\n         {item.why}")
    emit(out, args, {"count": len(items), "items": [i.to_dict() for i in items]}, "\n".join(lines))
    return EXIT_OK


def _select(args: argparse.Namespace, settings: Settings, now: dt.datetime) -> tuple[list[str], bool]:
    """The notes a confirm/retire/promote names, and whether the selection is a bulk one."""
    from agentmd.engine.curate.actions import by_source_prefix
    from agentmd.engine.curate.changelog import written_by

    paths = [_relative(settings.vault, p) for p in args.paths]
    prefix = getattr(args, "source_prefix", None)
    origin = getattr(args, "origin", None)
    if getattr(args, "since", None) and not origin:
        raise UsageError("--since goes with --origin (retire every note that origin wrote since then)")
    if origin and not getattr(args, "since", None):
        raise UsageError(
            f"--origin goes with --since (the notes {origin} wrote since a time: `--since 1d`, `--since 2026-12-01`); "
            "without it every note that origin ever wrote would be taken"
        )
    chosen = [bool(paths), bool(prefix), bool(origin)]
    if sum(chosen) != 1:
        raise UsageError("name the notes one way: paths, --source-prefix P, or --origin O --since D")
    if paths:
        return paths, len(paths) > 1
    if prefix:
        with fresh_store(settings) as store:
            candidates = [p for p, *_ in store.catalog.review_rows()]
        return by_source_prefix(settings.vault, candidates, prefix), True
    return written_by(settings.vault, str(origin), _when(args.since, now)), True


def cmd_edit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import datetime as dt

    from agentmd.engine.curate.actions import check_type, plan_edits
    from agentmd.rules import load_contract

    settings = settings_of(args)
    now = dt.datetime.now(dt.UTC)
    options = {k: getattr(args, k, None) for k in ("type", "why", "reason")}
    contract = load_contract(settings.vault, settings.contract_path).contract
    if args.action == "confirm":
        check_type(contract, options["type"])
    paths, bulk = _select(args, settings, now)
    plan = plan_edits(settings.vault, args.action, paths, options=options, now=now, inbox=contract.is_phone_path)
    payload: dict[str, object] = {"dry_run": not args.yes, **plan.to_dict()}
    lines = [f"{args.action}: {len(plan.changed)} note(s) to change, {len(plan.items) - len(plan.changed)} skipped"]
    for item in plan.items:
        if item.skipped:
            lines.append(f"  skip {item.path}: {item.skipped}")
        else:
            what = ", ".join(f"{k}" for k in item.changes) + "".join(f", -{k}" for k in item.removed)
            lines.append(f"  {args.action} {item.path} ({what})")
    missing = [item.path for item in plan.items if item.skipped == "no such note"]
    done = EXIT_FAILURE if missing else EXIT_OK  # a path named that is no note: said, and the exit says it too
    if missing:
        lines.append(f"no note at {', '.join(missing)}: give paths relative to the vault ({settings.vault})")
    if not args.yes:
        if plan.changed:
            lines.append("dry run: nothing was written; run again with --yes to apply")
        emit(out, args, payload, "\n".join(lines))
        return done
    if not plan.changed:
        emit(out, args, payload, "\n".join(lines))
        return done
    try:
        applied = _apply(settings, plan.step, bulk=bulk or len(plan.changed) > 1)
    except GateRefused as exc:
        payload.update({"refused": str(exc)})
        emit(out, args, payload, "\n".join([*lines, str(exc)]))
        return EXIT_FAILURE
    payload.update(applied)
    lines.append(_applied_line(applied))
    emit(out, args, payload, "\n".join(lines))
    return done


def _applied_line(applied: Applied) -> str:
    commits = [c for r in applied["results"] for c in r["commits"]]
    warnings = [w for r in applied["results"] for w in r["warnings"]]
    shas = ", ".join(c[:10] for c in commits) or "pending"
    text = f"applied by the {applied['applied_by']} writer; commit {shas}"
    return text + "".join(f"\n  warning: {w}" for w in warnings)


def _sweep_sources(settings: Settings) -> list[Path]:
    import tomllib

    from agentmd.engine.curate.ingest import sources_of

    if settings.config_file is None:
        return []
    try:
        data = tomllib.loads(settings.config_file.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read {settings.config_file}: {exc}") from None
    entries = data.get("ingest", [])
    return sources_of(entries if isinstance(entries, list) else [])


def cmd_ingest(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from pathlib import Path

    from agentmd.engine.curate.ingest import plan_ingest
    from agentmd.rules import load_contract

    settings = settings_of(args)
    if args.sources == ["sweep"]:
        sources = _sweep_sources(settings)
        if not sources:
            emit(out, args, {"sources": [], "note": "no [[ingest]] sources in the config"}, "no ingest sources")
            return EXIT_OK
    else:
        sources = [Path(s) for s in args.sources]
    missing = [str(s) for s in sources if not s.exists()]
    if missing:
        raise UsageError(f"nothing to ingest at {', '.join(missing)}")
    from agentmd.engine.curate.ingest import not_markdown

    other = not_markdown(sources)
    if other and args.sources != ["sweep"]:
        raise UsageError(
            f"{', '.join(other)} {'is' if len(other) == 1 else 'are'} not Markdown: ingest brings Markdown notes in "
            "(`.md` files, or a folder of them); nothing was written"
        )
    state = load_contract(settings.vault, settings.contract_path)
    if args.project is not None and not args.project.replace("-", "").isalnum():
        raise UsageError(f"--project {args.project!r} must be the project's kebab-case slug")
    progress = ProgressBar(err) if err.isatty() and not args.json else None
    report, step = plan_ingest(settings.vault, sources, state.contract, project=args.project, progress=progress)
    payload: dict[str, object] = {"dry_run": bool(args.dry_run), **report.to_dict()}
    rejected = ", ".join(f"{k} {v}" for k, v in sorted(report.rejected.items())) or "none"
    lines = [
        f"ingest: {report.files} file(s); {len(report.created)} new note(s), {len(report.updated)} updated, "
        f"{report.unchanged} unchanged, {report.deduped} duplicate(s), {len(report.skipped_retired)} retired "
        f"(kept retired), {len(report.skipped_index)} link index(es) skipped; rejected: {rejected}"
    ]
    lines += [f"  error {e['path']}: {e['error']}" for e in report.errors]
    lines += [f"  refused {r['path']}: {r['reason']}" for r in report.refused]
    lines += [f"  rejected {r['source']} ({r['heading']!r}): {r['reason']}" for r in report.rejected_parts]
    if args.dry_run or not step.edits:
        if args.dry_run and step.edits:
            lines.append("dry run: nothing was written")
        emit(out, args, payload, "\n".join(lines))
        return EXIT_OK
    try:
        applied = _apply(settings, step, bulk=len(step.edits) > 1)
    except GateRefused as exc:
        payload["refused_by_gate"] = str(exc)
        emit(out, args, payload, "\n".join([*lines, str(exc)]))
        return EXIT_FAILURE
    payload.update(applied)
    lines.append(_applied_line(applied))
    emit(out, args, payload, "\n".join(lines))
    return EXIT_OK


def cmd_log(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import datetime as dt

    from agentmd.engine.curate.changelog import grouped, history

    settings = settings_of(args)
    now = dt.datetime.now(dt.UTC)
    since = _when(args.since, now)
    path = _relative(settings.vault, args.path) if args.path else None
    changes = history(settings.vault, since=since, origins=_origins(args.origin), path=path)
    if path is not None:
        if not changes and not (settings.vault / path).exists():
            raise UsageError(f"{path}: no such note in the vault, now or in its history (`agentmd log` lists changes)")
        lines = [f"{path}: {len(changes)} change(s), oldest first"]
        for c in changes:
            where = f" [{c.host}]" if c.host else ""
            lines.append(f"  {c.at}  {c.origin:<10} {c.sha[:10]}  {c.summary}{where}")
            lines += _undo_line(c, "    ")
        emit(out, args, {"path": path, "changes": [c.to_dict() for c in changes]}, "\n".join(lines))
        return EXIT_OK if changes else EXIT_USAGE
    groups = grouped(changes)
    lines = [f"{len(changes)} commit(s)" + (f" since {since.date().isoformat()}" if since else "")]
    for origin, items in groups.items():
        files = {p for c in items for _s, p in c.files}
        lines.append(f"{origin}: {len(items)} commit(s), {len(files)} file(s)")
        for c in items[:20]:
            lines.append(f"  {c.at}  {c.sha[:10]}  {c.summary}" + (f" [{c.host}]" if c.host else ""))
            lines += _undo_line(c, "      ")
        if len(items) > 20:
            lines.append(f"  … and {len(items) - 20} more")
    payload = {
        "since": since.isoformat() if since else None,
        "commits": len(changes),
        "origins": {o: [c.to_dict() for c in items] for o, items in groups.items()},
    }
    emit(out, args, payload, "\n".join(lines))
    return EXIT_OK


def _undo_line(change: Any, indent: str) -> list[str]:
    """The line under a change naming the command that takes it back, or the undo that already did."""
    if change.undone_by:
        return [f"{indent}undone by {change.undone_by[:10]} (to bring it back: agentmd revert {change.undone_by[:10]})"]
    return [f"{indent}undo: {change.undo}"] if change.undo else []


def cmd_groom(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import datetime as dt
    import json
    from pathlib import Path

    from agentmd.engine.curate.groom import StalePlan, apply_plan, plan_split_revert, propose
    from agentmd.rules import load_contract

    if args.restated and not args.propose:
        raise UsageError("--restated goes with --propose: it adds merge proposals to a new plan")
    settings = settings_of(args)
    contract = load_contract(settings.vault, settings.contract_path).contract
    if args.propose:
        if args.restated:
            restated = _restated_judge(settings, args)
        elif args.max_calls is not None or args.max_tokens is not None:
            raise UsageError("--max-calls and --max-tokens go with --restated")
        with fresh_store(settings) as store:
            plan = propose(
                settings.vault, store.catalog, contract, stale_age=dt.timedelta(days=max(0, args.stale_days))
            )
            if args.restated:
                _add_restated(plan, settings, store.catalog, contract, *restated)
        stats = ", ".join(f"{k} {v}" for k, v in plan["stats"].items() if v) or "nothing to propose"
        text = f"groom: read {plan['notes_read']} notes; proposals: {stats}"
        if args.restated:
            text += "\n" + _restated_line(plan["restated"])
        if plan.get("held_back"):
            text += (
                f"\n{len(plan['proposals'])} are in this plan, oldest notes first; {plan['held_back']} more are "
                "proposed again once these are applied"
            )
        if args.out:
            Path(args.out).write_text(json.dumps(plan, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            text += f"\nplan written to {args.out}; review it, then `agentmd groom --apply {args.out} --yes`"
        else:
            text += "".join(f"\n  {p['detector']:<15} {p['path']}: {p['reason']}" for p in plan["proposals"])
        emit(out, args, plan, text)
        return EXIT_OK
    with fresh_store(settings) as store:
        if args.split_revert:
            step, report = plan_split_revert(settings.vault, store.catalog)
        else:
            try:
                plan = json.loads(Path(args.apply).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise UsageError(f"cannot read the plan {args.apply}: {exc}") from None
            try:
                step, report = apply_plan(settings.vault, store.catalog, contract, plan)
            except StalePlan as exc:
                emit(out, args, {"refused": "stale-plan", "error": str(exc)}, f"groom: refused: {exc}")
                return EXIT_FAILURE
    payload: dict[str, object] = {"dry_run": not args.yes, "changes": report, "notes": len(step.edits)}
    lines = [f"groom: {len(report)} change(s) over {len(step.edits)} note(s)"]
    lines += [
        f"  {r.get('action', 'revert')} {r['path']}"
        + (f" into {r['into']}" if r.get("into") else "")
        + (f": {r['skipped']}" if r.get("skipped") else "")
        for r in report
    ]
    if not args.yes or not step.edits:
        if step.edits:
            lines.append("dry run: nothing was written; run again with --yes to apply")
        emit(out, args, payload, "\n".join(lines))
        return EXIT_OK
    try:
        applied = _apply(settings, step, bulk=True)
    except GateRefused as exc:
        payload["refused"] = str(exc)
        emit(out, args, payload, "\n".join([*lines, str(exc)]))
        return EXIT_FAILURE
    payload.update(applied)
    lines.append(_applied_line(applied))
    emit(out, args, payload, "\n".join(lines))
    return EXIT_OK


def _restated_judge(settings: Settings, args: argparse.Namespace) -> tuple[Any, Any]:
    """The budget and the model call of `groom --propose --restated`: the `[enrich]` lines, lowered by flags."""
    from agentmd.cli.enrich import check_model_command
    from agentmd.engine.enrich.run import caller_for, settings_from
    from agentmd.engine.jobs.report import read_config

    budget, model = settings_from(read_config(settings), max_calls=args.max_calls, max_tokens=args.max_tokens)
    check_model_command(model.command[0], settings)
    return budget, caller_for(model)


def _add_restated(plan: GroomPlan, settings: Settings, catalog: Any, contract: Any, budget: Any, caller: Any) -> None:
    import datetime as dt

    from agentmd.engine.curate.actions import stamp
    from agentmd.engine.enrich.restated import add_to_plan

    add_to_plan(
        plan,
        settings=settings,
        catalog=catalog,
        contract=contract,
        budget=budget,
        caller=caller,
        now=lambda: stamp(dt.datetime.now(dt.UTC)),
    )


def _restated_line(found: dict[str, Any]) -> str:
    counts = found["counts"]
    line = (
        f"restated rules: {found['rules']} rule notes, {found['shortlisted']} similar pair(s) shortlisted, "
        f"{counts['same']} judged the same rule, {counts['distinct']} distinct; {found['calls']} model call(s), "
        f"{found['usage']['added']} tokens added"
    )
    if found["kept_local"]:
        line += f"; {found['kept_local']} kept local (private or recall-exempt, never sent)"
    for key, what in (("owed", "not asked yet"), ("failed", "whose call failed"), ("unclear", "answered unclearly")):
        if counts[key]:
            line += f"; {counts[key]} {what}"
    if found["stopped_by"]:
        line += f"\nstopped by {found['stopped_by']}; the rest are asked next time"
    if found["without_vectors"]:
        line += f"\n{found['without_vectors']}"
    return line


def cmd_clusters(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.curate.clusters import cluster_ids, clusters, rename, render

    settings = settings_of(args)
    with fresh_store(settings) as store:
        result = clusters(settings.vault, store, settings.state_dir)
        if args.rename:
            cid, name = args.rename
            if cid not in cluster_ids(result):
                raise UsageError(
                    f"no cluster has the id {cid!r} now (ids follow each cluster's medoid, so they change as the "
                    "notes do): run `agentmd clusters` for the current ids"
                )
            if not name.strip():
                raise UsageError("give the cluster a name: a few words")
            rename(settings.state_dir, cid, name.strip())
            result = clusters(settings.vault, store, settings.state_dir)
    emit(out, args, result, render(result))
    return EXIT_OK
