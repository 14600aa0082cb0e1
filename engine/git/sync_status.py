"""`status`'s view of sync: the remote, the last good round, how far ahead and behind, a round that keeps
failing (yellow, then red), the daemon's backoff, and the conflict siblings not yet resolved."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import NotRequired, TypedDict

from agentmd.engine.git.branches import DEFAULT_REMOTE, SYNC_HELD, remote_url, shown_url
from agentmd.engine.git.conflicts import open_conflicts, read_state
from agentmd.engine.git.rewrite import holds, last_synced
from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.sync_merge import (
    kept_ours,
    kept_ours_line,
    names_apart,
    names_apart_line,
    set_aside_here,
    set_aside_line,
)
from agentmd.engine.times import parse_utc


class SyncSection(TypedDict):
    """`status`'s view of sync; only `remote` (None), `red` and `yellow` without a remote."""

    remote: str | None
    last_ok_at: NotRequired[str | None]
    next_attempt_at: NotRequired[str | None]  # while the daemon backs off an unreachable remote
    failing_since: NotRequired[str]  # the first of the rounds in a row that could not reach the remote
    last_error: NotRequired[str | None]  # what the last of them met
    held: NotRequired[bool]  # the last round was held: this machine's commits are held back (a mass deletion)
    red: list[str]
    yellow: list[str]
    ahead: NotRequired[int]  # commits not yet on the remote (after a rewrite there: those made here since)
    rewritten: NotRequired[bool]  # the remote's branch no longer holds the commit this machine last synced with
    behind: NotRequired[int]
    conflicts: NotRequired[list[str]]  # conflict siblings not yet resolved
    kept_ours: NotRequired[list[dict[str, str]]]  # recent files that are not notes where ours was kept
    set_aside_here: NotRequired[list[dict[str, str]]]  # recent changes made here that another machine's merge set aside
    capture_names: NotRequired[str]  # how new captures are named here: `<title>.md` or `<title>-<tag>.md`


SYNC_YELLOW = dt.timedelta(hours=1)  # failing this long: yellow
SYNC_RED = dt.timedelta(days=1)  # failing this long: red


def sync_section(
    vault: Path,
    state_dir: Path,
    now: dt.datetime,
    *,
    yellow_after: dt.timedelta = SYNC_YELLOW,
    red_after: dt.timedelta = SYNC_RED,
) -> SyncSection:
    """`status`'s view of sync: the remote, the last good round, how far ahead and behind, what is failing
    and since when (yellow after `yellow_after`, an hour unless the config file's `sync_yellow_after` says
    otherwise, at once for a failure no retry ends; red after `red_after`, a day), when the daemon tries again
    while it backs off, and the conflict siblings not yet resolved."""
    git = GitCli(vault)
    url = remote_url(git) if (vault / ".git").exists() else None
    if url is None:
        return {"remote": None, "red": [], "yellow": []}
    state = read_state(state_dir)
    out: SyncSection = {
        "remote": shown_url(url),
        "last_ok_at": state.get("last_ok_at"),
        "next_attempt_at": None,
        "red": [],
        "yellow": [],
    }
    branch = git.run("symbolic-ref", "--quiet", "--short", "HEAD").text
    counts = git.run("rev-list", "--left-right", "--count", f"HEAD...refs/remotes/{DEFAULT_REMOTE}/{branch}")
    if counts.code == 0 and len(counts.text.split()) == 2:
        ahead, behind = counts.text.split()
        out["ahead"], out["behind"] = int(ahead), int(behind)
        theirs = f"refs/remotes/{DEFAULT_REMOTE}/{branch}"
        synced = last_synced(git, branch) if out["ahead"] else None
        if synced and not holds(git, theirs, synced) and holds(git, "HEAD", synced):
            # The old history is on the remote in its rewritten form: only what was made here since is not.
            made = git.run("rev-list", "--count", f"{synced}..HEAD")
            out["rewritten"] = True
            out["ahead"] = int(made.text) if made.code == 0 and made.text.isdigit() else out["ahead"]
    since = state.get("failing_since")
    if since:
        try:
            failing = now - dt.datetime.fromisoformat(since)
        except ValueError:
            failing = red_after
        retry = parse_utc(state.get("next_attempt_at"))
        if retry is not None and retry > now:  # backing off while the remote is unreachable
            out["next_attempt_at"] = retry.isoformat(timespec="seconds")
            again = (
                f"the daemon tries again from {out['next_attempt_at']} (it waits longer after each failed round, "
                "up to 30 min; `agentmd sync` tries now)"
            )
        else:
            again = "the daemon tries again every few minutes"
        out["failing_since"], out["last_error"] = since, state.get("last_error")
        line = f"since {since}: {state.get('last_error')}; {again}"
        if state.get("held"):  # this machine's commits are held back: no round syncs until that is cleared
            out["held"] = True
            why = str(state.get("last_error")).removeprefix(SYNC_HELD).strip()
            out["red"].append(f"sync-held since {since}: {why}")
        elif failing >= red_after or state.get("lasting"):  # a failure no retry ends is red at once: it needs a fix
            out["red"].append(f"sync-failing {line}")
        elif failing >= yellow_after:
            out["yellow"].append(f"sync-failing {line}")
    siblings = open_conflicts(vault, state_dir)
    out["conflicts"] = siblings
    if siblings:
        more = f" and {len(siblings) - 5} more" if len(siblings) > 5 else ""
        shown = ", ".join(siblings[:5]) + more
        out["yellow"].append(
            f"conflicts-to-resolve: {len(siblings)} note(s) kept side by side after a sync: {shown}: compare "
            "each with its note and end it with `agentmd resolve PATH --keep mine|theirs|both`"
        )
    kept = kept_ours(git, state.get("conflicts", []), now)
    if kept:
        out["kept_ours"] = kept
        out["yellow"].append(kept_ours_line(kept))
    apart = names_apart(state.get("conflicts", []), now, vault)
    if len(apart) > 1:
        out["yellow"].append(names_apart_line(apart))
    aside = set_aside_here(git, state.get("conflicts", []), now)
    if aside:
        out["set_aside_here"] = aside
        out["yellow"].append(set_aside_line(aside))
    return out
