"""`agentmd undo`, `agentmd revert` and `agentmd restore`: the vault's history as an undo (engine/git/undo.py).

Each prints its plan (the changes it takes back, the files it changes with their lines added and removed, the
conflicts it would leave side by side) and writes only with `--yes`: one new commit, `origin: revert`, naming
what it undid. When `agentmd serve` runs, the daemon writes it with its own committer (`POST /v1/revert`), so
the vault keeps one writer; otherwise the command writes it, then brings the index up to date for the files it
changed. Times are a date (2026-11-30, midnight UTC), a date-time (2026-11-30T14:00, UTC unless it names its
zone) or an age (90m, 12h, 3d, 2w).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from agentmd.cli.base import EXIT_OK, daemon_of, settings_of
from agentmd.cli.output import emit
from agentmd.engine.errors import AgentmdError, UsageError

if TYPE_CHECKING:
    import datetime as dt
    from typing import NotRequired

    from agentmd.engine.git.undo_types import FileChangeJson, ResultJson, Selection, TargetJson
    from agentmd.engine.settings import Settings

    class Written(ResultJson):
        """An undo written, by the daemon or here, and what indexing it said."""

        applied_by: str  # daemon | local
        warnings: NotRequired[list[str]]

    class UndoAnswer(ResultJson):
        """What `agentmd undo`, `revert` and `restore` print (`--json`): the plan, and the write with --yes."""

        dry_run: bool
        applied_by: NotRequired[str]
        warnings: NotRequired[list[str]]


MAX_COUNT = 50  # engine/git/undo.py's, written out so that building the parser loads no engine module


def _yes(p: argparse.ArgumentParser) -> None:
    p.add_argument("--yes", action="store_true", help="write it (without it: print the plan, write nothing)")


def add_undo_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("undo", parents=[common], help="take back the last change made on this machine (or the last N)")
    p.add_argument("-n", "--count", type=int, default=1, help=f"how many of the last changes (1 to {MAX_COUNT})")
    _yes(p)
    p.set_defaults(func=cmd_undo, kind="undo")

    p = sub.add_parser("revert", parents=[common], help="take back commits, or all an origin wrote since a time")
    p.add_argument("commits", nargs="*", help="the commits to take back (hashes, as `agentmd log` prints them)")
    p.add_argument("--origin", help="every commit of this origin (enrich, capture, groom, …) instead")
    p.add_argument("--since", help="with --origin: since this date, date-time or age (3d)")
    _yes(p)
    p.set_defaults(func=cmd_undo, kind="revert")

    p = sub.add_parser("restore", parents=[common], help="bring a note back as it was at a date or commit")
    p.add_argument("path", help="the note (vault-relative, or a path inside the vault)")
    p.add_argument("--to", required=True, help="a commit, or a date, date-time or age: the last commit at or before it")
    _yes(p)
    p.set_defaults(func=cmd_undo, kind="restore")


def moment(text: str, now: dt.datetime, flag: str) -> dt.datetime:
    """An age, a date or a date-time as a UTC time (see the module docstring)."""
    import datetime as dt

    from agentmd.engine.curate.queue import parse_age

    try:
        return now - parse_age(text)
    except ValueError:
        pass
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"{flag} {text!r}: give a date (2026-11-30), a date-time or an age (3d, 12h)") from None
    return (when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)


def _selection(args: argparse.Namespace, settings: Settings, now: dt.datetime) -> Selection:
    from agentmd.cli.curate import _relative
    from agentmd.engine.git.undo_types import Selection

    def iso(when: dt.datetime) -> str:
        return when.isoformat(timespec="seconds")

    if args.kind == "undo":
        if not 1 <= args.count <= MAX_COUNT:
            raise UsageError(f"-n takes 1 to {MAX_COUNT} changes")
        return Selection("undo", count=args.count)
    if args.kind == "restore":
        path = _relative(settings.vault, args.path)
        try:
            at = iso(moment(args.to, now, "--to"))
        except UsageError:
            at = None  # not a time: a commit, or nothing the undo knows (it says so)
        return Selection("restore", path=path, to=args.to, at=at)
    if args.since and not args.origin:
        raise UsageError("--since goes with --origin (every commit of that origin since then)")
    if bool(args.commits) == bool(args.origin):
        raise UsageError("name what to revert one way: commit hashes, or --origin O [--since D]")
    if args.origin:
        since = iso(moment(args.since, now, "--since")) if args.since else None
        return Selection("origin", origin=args.origin, since=since)
    return Selection("revert", commits=tuple(args.commits))


def cmd_undo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import datetime as dt

    from agentmd.engine.git.undo import make_plan
    from agentmd.engine.git.undo_types import UndoRefused

    settings = settings_of(args)
    if not (settings.vault / ".git").exists():
        raise AgentmdError("the vault is not a git repository, so it has no history to undo; run `agentmd init-git`")
    now = dt.datetime.now(dt.UTC)
    selection = _selection(args, settings, now)
    try:
        if not args.yes:
            committer = _committer(settings)
            _wait_for_pending(settings, committer, selection)
            plan = make_plan(settings.vault, selection, committer.identity_env(), now).to_dict()
            payload: UndoAnswer = {"dry_run": True, **plan, "commit": None}
        else:
            payload = {"dry_run": False, **_write(settings, selection, now)}
    except UndoRefused as exc:
        raise AgentmdError(str(exc)) from None
    emit(out, args, payload, "\n".join(_lines(args.kind, payload)))
    return EXIT_OK


def _wait_for_pending(settings: Settings, committer: Any, selection: Selection) -> None:
    """Before showing the plan of an undo of "the last" change: let the running daemon commit the writes still
    pending (a capture made a moment ago), so the plan takes back that capture, as the undo written with --yes
    does (engine/git/undo.py commits what is pending first)."""
    from agentmd.engine.git.undo import PENDING_FIRST, PENDING_WAIT

    if selection.kind in PENDING_FIRST and daemon_of(settings) is not None:
        committer.origins.drained(PENDING_WAIT)


def _committer(settings: Settings) -> Any:
    from agentmd.engine.git.committer import committer_for
    from agentmd.rules import ContractCache

    return committer_for(settings, ContractCache(settings.vault, settings.contract_path))


def _write(settings: Settings, selection: Selection, now: dt.datetime) -> Written:
    """Write the undo: by the daemon when one runs, else here (then index the files it changed)."""
    daemon = daemon_of(settings)
    if daemon is not None:
        from agentmd.engine.daemon.operator import OPERATOR_HEADER, ensure_token

        # the owner's command: it speaks for the operator, so the undo may change any file of the vault
        operator = {OPERATOR_HEADER: ensure_token(settings.state_dir)}
        again = (
            "Look at `agentmd log` before you run it again once the daemon is back: if the undo was committed, "
            "a second `agentmd undo` would take back the change before it"
        )
        answer: ResultJson = daemon.ask("/v1/revert", selection.to_dict(), what="undo", again=again, headers=operator)
        return {**answer, "applied_by": "daemon"}
    from agentmd.engine.git.undo import apply_undo

    committer = _committer(settings)
    committer.prepare()
    result: Written = {**apply_undo(committer, selection, settings.state_dir, now).to_dict(), "applied_by": "local"}
    if result["commit"]:
        result["warnings"] = _index(settings, [c["path"] for c in result["changes"]])
    return result


def _index(settings: Settings, paths: list[str]) -> list[str]:
    """Bring the index up to date for the files the undo changed; what went wrong, if anything (the daemon's
    next pass catches up)."""
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.engine.index.store import Store
    from agentmd.rules import load_contract

    try:
        contract = load_contract(settings.vault, settings.contract_path).contract
        with Store(settings.cache_dir) as store:
            reconcile(
                settings.vault,
                store,
                only=set(paths),
                link_convention=contract.link_convention,
                allow_mass_delete=True,
                sync_patterns=contract.sync_tool_patterns,
            )
    except (AgentmdError, OSError) as exc:
        return [f"the index was not updated ({exc}); the next reindex or daemon start catches up"]
    return []


def _count(n: int | None, sign: str) -> str:
    return f"{sign}{n}" if n else ""


ONE_ALONE_SHOWN = 10  # files of a change named each with the command that takes it back alone


def _one_alone(target: TargetJson, changes: list[FileChangeJson]) -> list[str]:
    """How to take back one file of a change that covers several (what was saved or captured together commits
    together): the command for each, a note the change added retired, another restored to the commit before."""
    added = all(c["status"] == "D" for c in changes)  # the undo deletes what the change added
    held = f"{len(changes)} captures" if added and target["origin"] == "capture" else f"{len(changes)} files"
    lines = [f"that change holds {held}, committed together; to take back one of them alone:"]
    for c in changes[:ONE_ALONE_SHOWN]:
        if c["status"] == "D":
            lines.append(f"  `agentmd retire {c['path']}`" + ("" if added else " (a note it added)"))
        else:
            lines.append(f"  `agentmd restore {c['path']} --to {target['sha'][:10]}~1`")
    if len(changes) > ONE_ALONE_SHOWN:
        lines.append(f"  and {len(changes) - ONE_ALONE_SHOWN} more (`agentmd undo --json` lists them all)")
    return lines


def _lines(kind: str, payload: UndoAnswer) -> list[str]:
    targets, changes, conflicts = payload["targets"], payload["changes"], payload["conflicts"]
    if kind == "restore":
        t = targets[0]
        lines = [f"restore {payload['selection']['path']} as it was at {t['sha'][:10]} ({t['at']}, {t['subject']})"]
    else:
        lines = [f"{kind}: takes back {len(targets)} change(s), newest first"]
        lines += [f"  {t['sha'][:10]}  {t['at']}  {t['origin']:<10} {t['subject']}" for t in targets]
    if changes:
        lines.append(f"changes {len(changes)} file(s):")
    for c in changes:
        counts = " ".join(x for x in (_count(c["added"], "+"), _count(c["removed"], "-")) if x)
        lines.append(f"  {c['status']} {c['path']}" + (f" ({counts})" if counts else ""))
    for conflict in conflicts:
        if conflict.get("sibling"):
            lines.append(
                f"conflict: {conflict['path']} was edited since on the same lines; it keeps its text and the undone "
                f"version goes beside it as {conflict['sibling']} (status: conflict; `agentmd resolve` ends it)"
            )
        else:
            lines.append(f"kept: {conflict['path']}: {conflict.get('how', 'kept as it is now')}")
    if not changes:
        lines.append("nothing to change: the vault already holds that version" if not conflicts else
                     "nothing to change: every file it would change was edited since (above)")  # fmt: skip
        return lines
    if payload["dry_run"]:
        if kind == "undo" and len(changes) > 1 and len(targets) == 1:  # captures made together commit together
            lines += _one_alone(targets[0], changes)
        lines.append("dry run: nothing was written; run again with --yes to apply")
        return lines
    commit = (payload["commit"] or "")[:10]
    lines.append(f"written as commit {commit} (origin: revert) by the {payload.get('applied_by')} writer")
    lines.append(f"to take this back: agentmd revert {commit}")
    lines += [f"warning: {w}" for w in payload.get("warnings", [])]
    return lines
