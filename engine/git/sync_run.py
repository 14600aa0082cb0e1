"""A sync round as the daemon and the commands run it: what is pending committed first (engine/git/sync.py's
`Round` works on commits only), the round with the committer held, and its outcome or failure recorded in
`<state>/sync-state.json` for `status`, with the backoff of a remote that cannot be reached."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentmd.engine.git.branches import SYNC_HELD, RemoteUnreachable, SyncError, SyncHeld, SyncWaits
from agentmd.engine.git.busy import git_operation
from agentmd.engine.git.conflicts import STATE_FILE, read_state, record_conflicts, state_lock
from agentmd.engine.git.health import awaits_first_sync
from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.settle import COMMIT_SETTLE as SETTLE_WAIT
from agentmd.engine.git.sync import DEFAULT_REMOTE, HELD_HOW, Round, SyncResult
from agentmd.engine.times import parse_utc

# While the remote cannot be reached, the daemon's rounds (the `sync` job and the round after commits) wait
# 1, 2, 4, 8, 16 and then 30 minutes after each failed round before the next; a round that reaches the remote
# ends the wait. `agentmd sync` run by a person always tries at once.
BACKOFF_FIRST = dt.timedelta(minutes=1)
BACKOFF_MOST = dt.timedelta(minutes=30)

Clock = Callable[[], dt.datetime]


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def backoff_delay(failures: int) -> dt.timedelta:
    """How long the daemon waits after `failures` rounds in a row could not reach the remote."""
    if failures <= 0:
        return dt.timedelta(0)
    return min(BACKOFF_MOST, BACKOFF_FIRST * 2 ** min(failures - 1, 16))


def backing_off(state_dir: Path, now: dt.datetime) -> dt.datetime | None:
    """When the daemon's next round may run, if that is after `now` (the remote was unreachable), else None."""
    due = parse_utc(read_state(state_dir).get("next_attempt_at"))
    return due if due is not None and due > now else None


def sync_vault(
    committer: Any,
    state_dir: Path | None,
    *,
    remote: str = DEFAULT_REMOTE,
    clock: Clock | None = None,
    accept_rewrite: bool = False,
) -> SyncResult:
    """Commit what is pending, then run one round with the committer held; the outcome (or the failure) is
    recorded in `<state>/sync-state.json` for `status`, the conflicts of a merge before its work tree moves.
    A round that cannot reach the remote also records how many have failed in a row and when the daemon's
    next round may run (`backoff_delay`). While this machine's commits are held back (a mass deletion), the round
    commits and pushes nothing: it raises `SyncHeld`, recorded for `status` as held, not as a good sync. Rounds
    asked for together (the daemon's job and `agentmd sync`) run one after the other (`Committer.sync_round`)."""
    with committer.sync_round():
        return _one_round(committer, state_dir, remote=remote, clock=clock, accept_rewrite=accept_rewrite)


def _one_round(
    committer: Any,
    state_dir: Path | None,
    *,
    remote: str,
    clock: Clock | None,
    accept_rewrite: bool,
) -> SyncResult:
    from agentmd.engine.fsutil import write_json

    moment = (clock or _utc_now)()
    now = moment.astimezone(dt.UTC).isoformat(timespec="seconds")
    vault = committer.vault

    def record(conflicts: list[dict[str, str]]) -> None:
        if state_dir is not None:
            record_conflicts(state_dir, conflicts, vault)

    writing: list[str] = []

    def commit_first(first_sync: bool) -> None:
        cycle = committer.commit_cycle()
        if cycle.deferred and cycle.retry_in is not None and cycle.retry_in <= SETTLE_WAIT:
            time.sleep(cycle.retry_in)  # a file saved a moment ago settles within the second: this round takes it
            cycle = committer.commit_cycle()
        writing[:] = list(cycle.deferred)
        if cycle.error:
            raise SyncError(f"what is pending could not be committed first ({cycle.error})")
        if cycle.skipped and not (first_sync and awaits_first_sync(GitCli(vault))):
            unfinished = git_operation(GitCli(vault).gitdir)
            if unfinished:
                raise SyncError(f"nothing was synced: {unfinished}; the next round syncs")
            raise SyncWaits(f"what is pending could not be committed first ({cycle.skipped}); the next round tries")

    def stop_if_held(committed: bool) -> None:
        # what keeps this machine's commits back keeps the round from committing and pushing too: the daemon's
        # hold after a reconcile refused a mass deletion (before anything is committed), and the committer's own
        # refusal, which the cycle just run has brought up to date; both read before the round, so that a
        # deletion the round would bring in from another machine never counts
        refused, own = committer.state.commits_held, committer.state.mass_deletion if committed else None
        if refused or own:
            why = f"a mass deletion is held back ({own})"
            if refused:
                checkout = refused.startswith("the vault is checked out")  # not a deletion: a checkout elsewhere
                why = refused if checkout else f"the last reconcile refused a mass deletion: {refused}"
            how = "" if "agentmd reindex" in why or "git checkout" in why else f"; {HELD_HOW}"
            raise SyncHeld(f"{SYNC_HELD} nothing is committed or pushed while {why}{how}")

    try:
        stop_if_held(committed=False)
        commit_first(first_sync=True)
        stop_if_held(committed=True)
        with committer.paused():
            round_ = Round(
                vault,
                remote=remote,
                identity=committer.identity_env(),
                on_conflicts=record,
                accept_rewrite=accept_rewrite,
            )
            result = round_.run()
            for kept in result.saves_kept:  # a save found while the tree moved, set aside by the round: its commit
                if "sibling" in kept:  # (once the committer resumes) is the sync's, not the person's edit
                    committer.note_origin(kept["sibling"], "sync")
        if round_.adopted is not None:  # a clone's first sync: the notes already here are committed on that branch
            commit_first(first_sync=False)
            with committer.paused():
                result = Round(vault, remote=remote, identity=committer.identity_env(), on_conflicts=record).run()
            result.adopted = round_.adopted
        result.writing = writing
    except SyncError as exc:
        if state_dir is not None:
            with state_lock(state_dir):  # read now, not before the round: it may have recorded conflicts meanwhile
                state = read_state(state_dir)
                state.update(
                    {"last_error": str(exc), "last_error_at": now, "failing_since": state.get("failing_since") or now}
                )
                state["lasting"] = not isinstance(exc, (RemoteUnreachable, SyncWaits))  # no waiting ends it
                state["held"] = isinstance(exc, SyncHeld)  # not a failure of the round: status says it is held
                if isinstance(exc, RemoteUnreachable):
                    failures = int(state.get("failures") or 0) + 1
                    retry = (moment + backoff_delay(failures)).astimezone(dt.UTC)
                    state.update({"failures": failures, "next_attempt_at": retry.isoformat(timespec="seconds")})
                write_json(state_dir / STATE_FILE, state)
        raise
    if state_dir is not None:
        with state_lock(state_dir):
            state = read_state(state_dir)
            state.update({
                "last_ok_at": now, "last_outcome": result.outcome, "head": result.head, "remote": remote,
                "last_error": None, "last_error_at": None, "failing_since": None, "failures": 0, "lasting": False,
                "next_attempt_at": None, "held": False, "renamed": [*state.get("renamed", []), *result.renamed][-50:],
            })  # fmt: skip
            write_json(state_dir / STATE_FILE, state)
    return result
