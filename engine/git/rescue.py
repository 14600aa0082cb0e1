"""Rescue refs: the tip of the branch kept under a name before a step that could leave a commit unreachable.

A sync round only ever moves HEAD forward (a fast-forward, or to a merge whose first parent is the old HEAD),
and it never forces a push, so no commit of ours can fall out of the history. The guard makes that a checked
rule rather than a belief: whenever HEAD is about to move to a commit that does not contain the old one, the
old tip is first kept as `refs/agentmd/rescue/<host>/<UTC time>` (`20261205T101500Z`), a ref git's garbage
collection honours. `agentmd resolve` keeps one too before it writes: the version a person chose to drop
stays in history anyway, but a named ref keeps it findable (and safe from a later reset or rebase by hand)
for as long as the rescue refs are kept.

Rescue refs live only in the vault's own repository (a round pushes its branch alone) and are pruned after
`RESCUE_DAYS` days, counted from the time in their name, each time a round runs or a rescue is kept.

To look at one: `git log refs/agentmd/rescue/<host>/<time>`; to take a file back:
`git show refs/agentmd/rescue/<host>/<time>:<path>`.
"""

from __future__ import annotations

import datetime as dt
import re

from agentmd.engine.errors import AgentmdError
from agentmd.engine.git.runner import GitCli

RESCUE_PREFIX = "refs/agentmd/rescue"
RESCUE_DAYS = 30  # a rescue ref is kept this long: a month to notice that something went missing
_STAMP = "%Y%m%dT%H%M%SZ"


class RescueError(AgentmdError):
    """A rescue ref could not be written; nothing was moved."""


def _host_part(host: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]+", "-", host).strip("-")[:40] or "host"


def keep_rescue(git: GitCli, commit: str, host: str, now: dt.datetime, why: str = "rescue") -> str:
    """Keep `commit` as `refs/agentmd/rescue/<host>/<time>` (with `-2`, `-3`… when the name is taken in the same
    second); the ref's name. Never moves an existing ref. Older rescue refs are pruned first."""
    prune_rescues(git, now)
    stamp = now.astimezone(dt.UTC).strftime(_STAMP)
    base = f"{RESCUE_PREFIX}/{_host_part(host)}/{stamp}"
    for n in range(1, 100):
        ref = base if n == 1 else f"{base}-{n}"
        run = git.run("update-ref", "-m", f"agentmd: {why}", "--create-reflog", ref, commit, "0" * len(commit))
        if run.code == 0:
            return ref
        if git.run("rev-parse", "--verify", "--quiet", ref).code != 0:
            raise RescueError(f"could not keep {commit[:10]} as {ref} ({run.why()}); nothing was moved")
    raise RescueError(f"could not keep {commit[:10]} under {base}: 99 rescue refs were made in that second")


def guard_move(git: GitCli, old: str, new: str, host: str, now: dt.datetime) -> str | None:
    """Before HEAD moves from `old` to `new`: when `new` does not contain `old` (moving would leave `old`
    unreachable), keep `old` as a rescue ref and return its name; None when `old` is an ancestor of `new`."""
    if old == new or git.run("merge-base", "--is-ancestor", old, new).code == 0:
        return None
    return keep_rescue(git, old, host, now, why=f"HEAD moved from {old[:10]} to {new[:10]}, not a descendant")


def rescues(git: GitCli) -> list[tuple[str, str]]:
    """Every rescue ref and the commit it keeps, oldest name first."""
    run = git.run("for-each-ref", "--format=%(refname) %(objectname)", RESCUE_PREFIX + "/")
    if run.code != 0:
        return []
    pairs = [tuple(line.split(" ", 1)) for line in run.text.splitlines() if " " in line]
    return sorted(((ref, oid) for ref, oid in pairs), key=lambda p: (p[0].rsplit("/", 1)[-1], p[0]))


def _made_at(ref: str) -> dt.datetime | None:
    stamp = ref.rsplit("/", 1)[-1].split("-", 1)[0]
    try:
        return dt.datetime.strptime(stamp, _STAMP).replace(tzinfo=dt.UTC)
    except ValueError:
        return None


def prune_rescues(git: GitCli, now: dt.datetime, days: int = RESCUE_DAYS) -> list[str]:
    """Delete the rescue refs older than `days` days (by the time in their name); the names deleted. A ref
    whose name holds no time is left alone."""
    limit = now - dt.timedelta(days=days)
    gone = []
    for ref, oid in rescues(git):
        made = _made_at(ref)
        if made is not None and made < limit and git.run("update-ref", "-d", ref, oid).code == 0:
            gone.append(ref)
    return gone
