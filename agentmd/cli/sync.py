"""`agentmd remote [add URL | show]` and `agentmd sync`: the same memory on every machine through a git remote.

`sync` runs one round now (engine/git/sync.py): through the running daemon, which holds its committer while
the round moves the work tree, or in this process when no daemon runs. `conflicts` lists the notes a sync
kept side by side (or an undo did, engine/git/conflicts.py).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from agentmd.cli.base import EXIT_FAILURE, EXIT_OK, daemon_of, settings_of, subcommands
from agentmd.cli.output import emit
from agentmd.engine.errors import AgentmdError

if TYPE_CHECKING:
    from pathlib import Path

    from agentmd.engine.git.sync import SyncJson
    from agentmd.engine.settings import Settings

DEFAULT_REMOTE = "origin"  # engine/git/sync.py's, written out so that building the parser loads no engine module


def add_sync_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    remote = sub.add_parser("remote", parents=[common], help="the vault's git remote, which `sync` syncs with")
    actions = subcommands(remote, "action", "ACTION")
    remote.set_defaults(func=cmd_remote_show)  # a bare `agentmd remote` shows it, as `git remote` does
    add = actions.add_parser("add", parents=[common], help="point the vault's remote at URL (any git remote)")
    add.add_argument("url", help="a bare repository over ssh, a path, GitHub or Gitea; git's own credentials")
    add.add_argument("--name", default=DEFAULT_REMOTE, help=f"the remote's name ({DEFAULT_REMOTE})")
    add.set_defaults(func=cmd_remote_add)
    show = actions.add_parser("show", parents=[common], help="the remote and the last sync")
    show.set_defaults(func=cmd_remote_show)

    sync = sub.add_parser("sync", parents=[common], help="one sync round with the remote now: fetch, merge, push")
    sync.add_argument("--remote", default=DEFAULT_REMOTE, help=f"the remote's name ({DEFAULT_REMOTE})")
    sync.add_argument(
        "--accept-rewrite",
        action="store_true",
        help="take the remote's branch when its history was rewritten (a forced push); this machine's changes "
        "since the last sync are replayed on it",
    )
    sync.set_defaults(func=cmd_sync)

    conflicts = sub.add_parser("conflicts", parents=[common], help="notes a sync or an undo kept side by side")
    conflicts.set_defaults(func=cmd_conflicts)

    resolve = sub.add_parser("resolve", parents=[common], help="end one conflict a sync or an undo left, in a commit")
    resolve.add_argument("path", help="the conflict sibling (or its note, when it has one sibling)")
    resolve.add_argument(
        "--keep",
        required=True,
        choices=("mine", "theirs", "both"),
        help="mine: drop the sibling; theirs: the sibling's text replaces the note; both: keep both",
    )
    resolve.set_defaults(func=cmd_resolve)

    run = sub.add_parser(
        "git", parents=[common], help="run a git command in the vault with agentmd's commits held until it ends"
    )
    run.add_argument("args", nargs=argparse.REMAINDER, help="the git command's arguments (`status`, `pull`, ...)")
    run.set_defaults(func=cmd_git)


def cmd_remote_add(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.git.branches import SyncError, add_remote, shown_url
    from agentmd.engine.git.runner import GitCli

    settings = settings_of(args)
    if not (settings.vault / ".git").is_dir():
        raise AgentmdError("the vault is not a git repository yet; run `agentmd init-git` first")
    try:
        text = add_remote(GitCli(settings.vault), args.url, args.name)
    except SyncError as exc:
        raise AgentmdError(str(exc)) from None
    if args.name == DEFAULT_REMOTE:
        when = "; `agentmd sync` syncs now, the daemon every 5 min"
    else:  # the daemon's rounds and a bare `agentmd sync` use the default remote
        when = (
            f"; `agentmd sync --remote {args.name}` syncs with it; the daemon syncs with {DEFAULT_REMOTE} only "
            f"(add this URL as {DEFAULT_REMOTE} for that)"
        )
    emit(out, args, {"remote": args.name, "url": shown_url(args.url)}, text + when)
    return EXIT_OK


def cmd_remote_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import datetime as dt

    from agentmd.engine.git.sync_status import sync_section

    settings = settings_of(args)
    section = sync_section(
        settings.vault,
        settings.state_dir,
        dt.datetime.now(dt.UTC),
        yellow_after=settings.sync_yellow_after,
        red_after=settings.sync_red_after,
    )
    if section["remote"] is None:
        emit(out, args, section, "no remote: `agentmd remote add URL` adds one")
        return EXIT_OK
    lines = [f"remote {section['remote']}; last good sync {section.get('last_ok_at') or 'never'}"]
    if "ahead" in section:
        lines.append(f"{section['ahead']} commit(s) to push, {section['behind']} to bring in (as of the last fetch)")
    if section.get("next_attempt_at"):
        lines.append(f"the remote was unreachable: the daemon's next round runs from {section['next_attempt_at']}")
    lines += section["red"] + section["yellow"]
    emit(out, args, section, "\n".join(lines))
    return EXIT_OK


def cmd_sync(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = settings_of(args)
    daemon = daemon_of(settings)
    result: SyncJson
    if daemon is not None:
        result = daemon.ask(
            "/v1/sync",
            {"remote": args.remote, "accept_rewrite": args.accept_rewrite},
            what="sync",
            again="Run `agentmd sync` again once the daemon is back: a round picks up from where the vault is now",
        )
    else:
        result = _sync_here(settings, args.remote, args.accept_rewrite)
    emit(out, args, result, describe(result))
    return EXIT_OK if result.get("outcome") else EXIT_FAILURE


def _sync_here(settings: Any, remote: str, accept_rewrite: bool) -> SyncJson:
    from agentmd.engine.git.committer import committer_for
    from agentmd.engine.git.sync import SyncError
    from agentmd.engine.git.sync_run import sync_vault
    from agentmd.rules import ContractCache

    contracts = ContractCache(settings.vault, settings.contract_path)
    committer = committer_for(settings, contracts)
    try:
        return sync_vault(committer, settings.state_dir, remote=remote, accept_rewrite=accept_rewrite).to_dict()
    except SyncError as exc:
        raise AgentmdError(str(exc)) from None


def describe(result: SyncJson) -> str:
    """A round as `agentmd sync` prints it."""
    outcome = result.get("outcome")
    head = (result.get("head") or "")[:10]
    words = {
        "up-to-date": "already in step with",
        "pushed": "pushed to",
        "fast-forward": "brought in the changes of",
        "merged": "merged with",
        "rewrite-taken": "took the rewritten history of",
    }.get(str(outcome), str(outcome))
    line = f"sync: {words} {result.get('remote')}/{result.get('branch')} (now at {head})"
    if result.get("adopted"):
        line = f"sync: this clone had no commit yet; checked out {result.get('remote')}/{result['adopted']}\n{line}"
    if result.get("changed"):
        line += f"; {len(result['changed'])} file(s) changed here"
    for paths, what in (
        (result.get("removed") or [], "no longer here"),
        (result.get("rewritten") or [], "changed by the rewrite"),
    ):
        if paths:
            shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
            line += f"\n{what} ({len(paths)}): {shown}"
    if result.get("rescue") and outcome == "rewrite-taken":
        ref = result["rescue"]
        line += (
            f"\nthe history before it is kept as {ref}: `git show {ref}:PATH` shows a note as it was, "
            f"`agentmd restore PATH --to {ref}` brings one back"
        )
    there = f"{result.get('remote')}/{result.get('branch')}"  # theirs may be this machine's own, from another branch
    for c in result.get("conflicts") or []:
        if c.get("sibling"):
            line += f"\nconflict: {c['path']} kept; the version from {there} is {c['sibling']} (status: conflict)"
        elif c.get("kept") == "the edit" and c.get("theirs"):  # theirs deleted it: there is no version to show
            line += f"\nconflict: {c['path']}: deleted on the other machine, edited here; the edit was kept"
        elif c.get("moved"):
            line += (f"\nconflict: {c['path']} is a file on one machine and a folder on the other; the folder "
                     f"keeps the name, the file is now {c['moved']}")  # fmt: skip
        elif c.get("here") == "deleted":
            line += (f"\nconflict: {c['path']}: deleted here, edited on the other machine; the edit was kept "
                     "(delete it again if it should go)")  # fmt: skip
        elif c.get("theirs"):
            line += f"\nconflict: {c['path']}: ours kept; theirs: `git show {c['theirs'][:12]}:{c['path']}`"
        else:
            line += f"\nconflict: {c['path']}: {c.get('kept')} kept"
    for c in result.get("renamed") or []:
        line += f"\ncaptured on both machines: {c['path']} kept; the other machine's capture is {c['renamed']}"
    writing = result.get("writing") or []
    if writing:
        shown = ", ".join(writing[:5]) + (f" and {len(writing) - 5} more" if len(writing) > 5 else "")
        line += f"\nstill being written, so left for the next round: {shown}"
    return line


def _whose(vault: Any, sibling: str) -> str:
    """Whose version a conflict sibling holds, as its name says (`<note>.conflict-<who>-<date>.md`)."""
    from agentmd.engine.git.conflicts import holds_own_version, sibling_machine

    who = sibling_machine(sibling)
    if who == "undo":
        return "the version the undo would have written"
    if holds_own_version(vault, sibling):
        return "this machine's own version (another machine's merge had set it aside)"
    return f"the version from {who}" if who else "the sibling's version"


def _named_sibling(settings: Any, path: str) -> str | None:
    """The conflict sibling `path` names, or the one sibling of the note it names; None otherwise."""
    from agentmd.engine.git.conflicts import conflict_pairs

    found = [sibling for note, sibling in conflict_pairs(settings.vault, settings.state_dir) if path in (note, sibling)]
    return found[0] if len(found) == 1 else None


def cmd_resolve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.git.resolve import resolve_conflict
    from agentmd.engine.git.sync import SyncError

    settings = settings_of(args)
    try:
        named = _named_sibling(settings, args.path)
        whose = _whose(settings.vault, named) if named else None  # before the resolve commit touches it
        note, sibling, changed = resolve_conflict(settings.vault, settings.state_dir, args.path, args.keep)
    except SyncError as exc:
        raise AgentmdError(str(exc)) from None
    committed = "the daemon commits it (origin: resolve)"
    if daemon_of(settings) is None:
        from agentmd.engine.git.committer import committer_for
        from agentmd.rules import ContractCache

        cycle = committer_for(settings, ContractCache(settings.vault, settings.contract_path)).commit_cycle()
        problem = cycle.error or cycle.skipped
        committed = f"not committed yet ({problem})" if problem else "committed (origin: resolve)"
    whose = whose if named == sibling and whose else _whose(settings.vault, sibling)
    merged = "what only the other side changed is kept as well"  # the resolve merges from where the two parted
    done = {"mine": f"kept {note}, removed {sibling}",
            "theirs": f"{note} now holds {whose} where the two conflicted ({merged}), {sibling} removed",
            "both": f"kept both: {sibling} is a note of its own now"}[args.keep]  # fmt: skip
    if args.keep == "mine" and note in changed and sibling in changed and whose.startswith("this machine's"):
        done = f"{note} now holds {whose} where the two conflicted ({merged}), {sibling} removed"
    elif args.keep == "mine" and note in changed:  # kept where they conflicted, the other side's other lines in
        done = f"kept {note} where the two conflicted ({merged}), {sibling} removed"
    elif args.keep == "theirs" and whose.startswith("this machine's"):  # the sibling held this machine's text
        done = (f"{note} keeps the other machine's version where the two conflicted ({merged}); removed {sibling}, "
                f"which held {whose}")  # fmt: skip
    elif args.keep == "theirs" and note not in changed:  # the other machine's text was the note's already
        done = f"kept {note}, the other machine's version; removed {sibling}, which held {whose}"
    emit(out, args, {"note": note, "sibling": sibling, "keep": args.keep, "changed": changed}, f"{done}; {committed}")
    return EXIT_OK


def cmd_git(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`git ARGS` in the vault, as the person would run it, while the committer waits (engine/git/busy.py)."""
    import subprocess

    from agentmd.engine.git.busy import paused_for_person
    from agentmd.engine.git.runner import absolute_path

    settings = settings_of(args)
    vault = absolute_path(settings.vault)
    if not (vault / ".git").is_dir():
        raise AgentmdError("the vault is not a git repository; run `agentmd init-git` first")
    words = [a for a in args.args if a != "--"] if args.args[:1] == ["--"] else list(args.args)
    if not words:
        raise AgentmdError("give the git command to run, e.g. `agentmd git status` or `agentmd git pull`")
    from agentmd.engine.git.runner import GitCli

    if words[0] == "pull":
        from agentmd.engine.git.branches import plain_pull_merges

        plain_pull_merges(GitCli(vault))  # diverged branches merge, as the sync does, unless git is told otherwise
    out.flush()
    with paused_for_person(vault / ".git", " ".join(words)):
        unmerged = (vault / ".git" / "MERGE_HEAD").exists() and bool(GitCli(vault).run("ls-files", "-u").text)
        if words[:2] == ["merge", "--continue"] and unmerged:  # git would only refuse: end it by the sync rules
            return _settle(settings, vault, 1, out)
        try:
            code = subprocess.run(["git", *words], cwd=vault, check=False).returncode
        except FileNotFoundError:
            raise AgentmdError("git is not installed or not on PATH") from None
        if code == 0 or words[0] not in ("pull", "merge"):
            return code
        return _settle(settings, vault, code, out)


def _settle(settings: Settings, vault: Path, code: int, out: TextIO) -> int:
    """After a pull or merge that stopped on conflicts: end them by the sync rules (`settle_person_merge`)."""
    from agentmd.engine.git.person_merge import settle_person_merge
    from agentmd.engine.git.sync import SyncError

    try:
        decided, merge = settle_person_merge(vault, settings.state_dir)
    except SyncError as exc:
        out.write(f"agentmd: the conflicts were left for you to end ({exc})\n")
        return code
    if not decided and merge is None:
        return code
    for d in decided:
        if "sibling" in d:
            line = f"conflict: {d['path']} kept; the other side's version is {d['sibling']} (status: conflict)"
        elif "renamed" in d:
            line = f"captured on both sides: {d['path']} kept; the other side's capture is now {d['renamed']}"
        else:
            line = f"{d['path']}: kept {d['kept']}"
        out.write(f"agentmd: {line}\n")
    if merge is None:
        out.write("agentmd: some conflicts remain for you to end (`git status` lists them)\n")
        return code
    out.write(f"agentmd: the merge is committed ({merge[:10]}); no conflict marker was left in any note\n")
    return EXIT_OK


def cmd_conflicts(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.git.conflicts import open_conflicts

    settings = settings_of(args)
    siblings = open_conflicts(settings.vault, settings.state_dir)  # a sync's and an undo's, with a remote or not
    copies = _sync_tool_copies(settings)
    lines = siblings + [f"{c['copy']}  ({c['tool']} copy of {c['original']})" for c in copies]
    text = "\n".join(lines) if lines else "no conflicts left by a sync"
    if copies:
        text += "\nend each with `agentmd resolve PATH --keep mine|theirs|both`"
    emit(out, args, {"conflicts": siblings, "sync_tool_copies": copies}, text)
    return EXIT_OK


def _sync_tool_copies(settings: Settings) -> list[dict[str, str]]:
    """The conflict copies a file-sync tool left that the last full pass held out of the index (read from the
    pass record beside the catalog), those still there beside their originals."""
    import json
    import sqlite3

    from agentmd.engine.index.catalog import Catalog
    from agentmd.engine.synctools import conflict_copy

    try:
        catalog = Catalog.reader(settings.catalog_path)
    except sqlite3.OperationalError:  # no index yet
        return []
    try:
        record = json.loads(catalog.pass_record() or "{}")
    except ValueError:
        record = {}
    finally:
        catalog.close()
    out = []
    for entry in record.get("sync_conflicts_named") or []:
        path = str(entry.get("path", ""))
        found = conflict_copy(path, lambda rel: (settings.vault / rel).is_file())
        if found is not None and (settings.vault / path).is_file():
            out.append({"copy": path, "original": found.original, "tool": found.tool})
    return out
