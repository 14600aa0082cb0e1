"""`agentmd status`: one view of the vault's health, each part green, yellow or red.

The daemon serves this from memory at `/status`; without a daemon it is computed from disk (the catalog,
the git repository, the contract and the daemon's last saved state). Red means someone should look:
the CLI exits 3 when any part is red and names each red condition.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentmd.engine.daemon.status_render import day
from agentmd.engine.daemon.status_render import dense_line as dense_line  # where callers look for them
from agentmd.engine.daemon.status_render import render as render
from agentmd.engine.jobs.report import jobs_status
from agentmd.engine.synctools import CONFLICT_COPY
from agentmd.engine.times import parse_utc, stamp

if TYPE_CHECKING:  # loaded where a status is computed: `render` alone stays light for `agentmd status`
    from agentmd.engine.daemon.embedding import DenseSection
    from agentmd.engine.daemon.health import HealthReport
    from agentmd.engine.daemon.status_types import (
        ContractSection,
        DaemonInfo,
        GitSection,
        HooksSection,
        IndexSection,
        ProbeSection,
        QueueSection,
        Sections,
        Status,
    )
    from agentmd.engine.git.health import CommitState
    from agentmd.engine.index.reconcile import PassRecord
    from agentmd.engine.index.store import Store
    from agentmd.engine.settings import Settings
    from agentmd.rules import ContractState

INDEX_RED_AGE = dt.timedelta(minutes=15)
QUEUE_RED_AGE = dt.timedelta(days=3)
QUEUE_RED_COUNT = 1000
STALL_RED = dt.timedelta(minutes=30)
LEASE_RED = "another-daemon: "  # how status names a vault lease held by another daemon


def _age_s(then: dt.datetime | None, now: dt.datetime) -> float | None:
    return None if then is None else round((now - then).total_seconds(), 1)


def queue_section(
    store: Store,
    state_dir: Path,
    now: dt.datetime,
    waiting: list[tuple[str, str]] | None = None,
    *,
    line: dt.datetime | None = None,
    may_record: bool = True,
) -> QueueSection:
    """Notes awaiting judgment: `waiting` (path, captured) as `agentmd queue` lists them, else the unfiled
    notes. Cut at the queue baseline (engine/curate/baseline.py; `line` is the config file's): notes captured
    before it are the inherited backlog, counted and never red; the thresholds read only the rest. Once the
    vault has been indexed, the first call records the baseline (unless `may_record` is False: a hook only
    reads)."""
    from agentmd.engine.curate.baseline import resolve_baseline, split
    from agentmd.engine.index.reconcile import last_pass

    unfiled = store.catalog.unfiled() if waiting is None else waiting
    indexed = last_pass(store) is not None  # before the first pass the count would be 0: nothing is recorded
    baseline = resolve_baseline(state_dir, now, len(unfiled), override=line, may_record=indexed and may_record)
    cut = split(unfiled, baseline)
    new = cut.measured
    times = [t for t in (parse_utc(c) for _p, c in new) if t is not None]
    oldest = min(times, default=None)
    oldest_age = now - oldest if oldest else None
    since = f"captured since the queue baseline {day(baseline.at)}"
    backlog = f"; {cut.inherited} more are inherited from before it and never red" if cut.inherited else ""
    reasons = []
    if len(new) >= QUEUE_RED_COUNT:
        reasons.append(
            f"queue-size: {len(new)} notes {since} await review (red at {QUEUE_RED_COUNT}){backlog}: file, merge "
            "or archive them (set each note's `status`)"
        )
    if oldest_age is not None and oldest_age > QUEUE_RED_AGE:
        reasons.append(
            f"queue-age: the oldest note {since} waits {oldest_age.days} days (red past 3){backlog}: file, merge "
            "or archive the waiting notes (set each note's `status`)"
        )
    backlog_age = now - cut.inherited_oldest if cut.inherited_oldest else None
    return {
        "total": cut.total,
        "count": len(new),
        "oldest_age_days": _days(oldest_age),
        "inherited": cut.inherited,
        "inherited_oldest_age_days": _days(backlog_age),
        "baseline_at": stamp(baseline.at),
        "baseline_source": baseline.source,
        "baseline_recorded_at": stamp(baseline.recorded_at) if baseline.recorded_at else None,
        "baseline_count": baseline.recorded_count,
        "red": reasons,
    }


def _days(age: dt.timedelta | None) -> float | None:
    return round(age.total_seconds() / 86400, 1) if age is not None else None


def index_section(store: Store, vault: Path, *, daemon_running: bool, stale: bool, now: dt.datetime) -> IndexSection:
    from agentmd.engine.index.reconcile import last_pass
    from agentmd.engine.index.unreadable import SHOWN, unreadable_notes

    info = last_pass(store)
    at = parse_utc(info.get("at")) if info else None
    reasons = []
    if info is None:
        reasons.append("index-never-built: run `agentmd reindex` or start `agentmd serve`")
    elif info.get("refused"):
        refusal = str(info["refused"])
        said = "agentmd reindex" in refusal or "git checkout" in refusal  # the refusal says what ends it
        fix = "" if said else ": restore the vault's files, then let the next pass run"
        reasons.append(f"reconcile-refused: {refusal}{fix}")
    elif daemon_running and at is not None and now - at > INDEX_RED_AGE:
        reasons.append(
            f"index-stale: last pass {int((now - at).total_seconds() // 60)} min ago (red past 15): look for the "
            "indexer's error in the agentmd log and restart `agentmd serve`"
        )
    flags = store.catalog.flag_counts()
    some = flags.get("frontmatter_error") or flags.get("decode_error")
    unreadable = unreadable_notes(vault, store.catalog) if some else []
    examples = unreadable[:SHOWN]
    yellow = []
    if unreadable:
        shown = "; ".join(f"{path}: {why}" for path, why in examples)
        more = f"; and {len(unreadable) - len(examples)} more" if len(unreadable) > len(examples) else ""
        yellow.append(
            f"notes-unreadable: {len(unreadable)} note{'s' if len(unreadable) != 1 else ''} not read whole: "
            f"{shown}{more}; the next pass after a fix reads them again"
        )
    failed = int(info.get("errors", 0) or 0) if info else 0
    if failed and info:
        named = "; ".join(f"{e.get('path')}: {e.get('error')}" for e in info.get("read_errors") or [])
        yellow.append(
            f"read-errors: the last pass could not read {failed} file{'s' if failed != 1 else ''}"
            f"{f' ({named})' if named else ''}; a note already indexed keeps the version last read; fix what "
            "the error names (the file's permissions, its size, the disk), and the next pass reads it"
        )
    yellow += held_lines(info, vault)
    return {
        "documents": store.index.doc_count(),
        "last_pass_at": info.get("at") if info else None,
        "last_pass_age_s": _age_s(at, now),
        "last_pass": info,
        "index_stale": stale,
        "flags": flags,
        "not_read_whole": [{"path": path, "problem": why} for path, why in unreadable],
        "red": reasons,
        "yellow": yellow,
    }


HELD_SHOWN = 5  # conflict copies or conflicted notes named on a status line


def held_lines(info: PassRecord | None, vault: Path | None = None) -> list[str]:
    """The yellow lines for what the last full pass held back from the index: conflict copies a file-sync tool
    left (with their originals) and notes holding a merge's unresolved conflict markers. With `vault`, a note
    named there and fixed since (its markers gone, read now) is left out, not shown until the next full pass."""
    if not info:
        return []
    if vault is not None and info.get("conflict_markers_named"):
        named = info.get("conflict_markers_named") or []
        fixed = [e for e in named if not _still_marked(vault / str(e.get("path")))]
        if fixed:
            left = [e for e in named if e not in fixed]
            info = {
                **info,
                "conflict_markers_named": left,
                "conflict_markers": int(info["conflict_markers"]) - len(fixed),
            }
    lines = []
    copies = int(info.get("sync_conflicts", 0) or 0)
    if copies:
        entries = (info.get("sync_conflicts_named") or [])[:HELD_SHOWN]
        shown = "; ".join(f"{e.get('path')} ({str(e.get('reason', '')).removeprefix(CONFLICT_COPY)})" for e in entries)
        more = f"; and {copies - len(entries)} more" if copies > len(entries) else ""
        lines.append(
            f"sync-conflicts: {copies} conflict cop{'ies' if copies != 1 else 'y'} left by a file-sync tool, not "
            f"indexed: {shown}{more}: compare each with its original, keep what you want, delete the copy"
        )
    marked = int(info.get("conflict_markers", 0) or 0)
    if marked:
        paths = [str(e.get("path")) for e in (info.get("conflict_markers_named") or [])[:HELD_SHOWN]]
        more = f", and {marked - len(paths)} more" if marked > len(paths) else ""
        lines.append(
            f"merge-conflicts: {marked} note{'s' if marked != 1 else ''} hold{'' if marked != 1 else 's'} unresolved "
            f"git conflict markers (<<<<<<< ... >>>>>>>) and {'are' if marked != 1 else 'is'} not indexed "
            f"as {'they stand' if marked != 1 else 'it stands'}: {', '.join(paths)}{more}; resolve the merge "
            "(keep the lines you want, delete the markers, commit), and the next pass indexes "
            f"{'them' if marked != 1 else 'it'}"
        )
    return lines


def _still_marked(path: Path) -> bool:
    from agentmd.vault_schema.markdown import has_conflict_markers

    try:
        return has_conflict_markers(path.read_bytes()[: 4 << 20].decode("utf-8", "replace"))
    except OSError:
        return False  # gone: nothing held any more


def git_section(vault: Path, commit_state: CommitState | None, now: dt.datetime) -> GitSection:
    """The repository's health and the committer's accounting (`CommitState`; None before any cycle)."""
    from agentmd.engine.git.conflicts import collisions_said
    from agentmd.engine.git.health import CommitState, git_health, worktrees_inside

    health = git_health(vault)
    state = commit_state or CommitState()
    failures = state.commit_failures
    first = parse_utc(state.first_commit_failure)
    reasons = []
    if failures and first is not None and now - first >= STALL_RED:
        reasons.append(
            f"commit-stalled: {failures} failed commit cycles since {state.first_commit_failure}: "
            f"{state.last_commit_error}: fix what that error names (a lock, permissions, a full disk); "
            "commits resume on their own"
        )
    if state.commits_held:
        reasons.append(f"commits-held since {state.commits_held_since}: {state.commits_held}")
    yellow = []
    if failures >= 2 and not reasons:  # one failed cycle may be a passing race; two in a row are said at once
        yellow.append(
            f"commits-failing: {failures} failed commit cycles since {state.first_commit_failure}: "
            f"{state.last_commit_error}: nothing changed since is committed (no undo for it yet); fix what that "
            f"error names, and commits resume on their own (red after {STALL_RED.seconds // 60} minutes)"
        )
    held = dict(state.large_files_held)
    if held:
        limit = state.large_file_limit or 0
        named = ", ".join(f"{p} ({size / 2**20:.0f} MiB)" for p, size in sorted(held.items())[:5])
        more = f" and {len(held) - 5} more" if len(held) > 5 else ""
        yellow.append(
            f"large-files-held: {len(held)} new file(s) over {limit / 2**20:.0f} MiB not committed: {named}{more}: "
            "git history keeps a file forever; keep it outside the vault, or add it to .gitignore, or commit it "
            "yourself (git add, git commit: a file git tracks is committed from then on), or raise "
            "`commit_max_mb` in the config file"
        )
    yellow += collisions_said(vault) if health.ok else []
    staged = state.staged_by_others
    if staged:
        yellow.append(
            f"staged-by-someone-else: {len(staged)} path(s) staged for a commit agentmd leaves to whoever staged "
            f"them: {', '.join(staged[:5])}{' …' if len(staged) > 5 else ''}; their changes wait for it: commit "
            "them (`agentmd git commit`), or unstage them (`git restore --staged PATH`) and agentmd commits them"
        )
    dotted = state.untracked_dot_files
    if dotted:  # an Obsidian setting made on this machine reaches no other, and the corpus-write gate waits on it
        yellow.append(
            f"dot-files-untracked: {len(dotted)} new file(s) in dot folders, which agentmd never commits on its "
            f"own: {', '.join(dotted[:5])}{' …' if len(dotted) > 5 else ''}; for them to reach your other "
            "machines, commit them once yourself (`agentmd git add PATH`, `agentmd git commit`: agentmd keeps a "
            "file git tracks committed from then on), or add them to .gitignore"
        )
    worktrees = worktrees_inside(vault) if health.ok else []
    return {
        "state": "ok" if health.ok else "degraded",
        "reason": health.reason,
        "detail": health.detail,
        "commit_failures": failures,
        "first_commit_failure": state.first_commit_failure,
        "last_commit_error": state.last_commit_error,
        "last_commit_at": state.last_commit_at,
        "worktrees_inside_vault": worktrees,
        "large_files_held": held,
        "red": reasons,
        "yellow": yellow,
    }


def contract_section(state: ContractState) -> ContractSection:
    fix = "fix the contract file and save it; the daemon rereads it"
    return {**state.to_status(), "red": [f"contract-halted: {e}: {fix}" for e in state.errors] if state.halted else []}


def probe_section(state_dir: Path, now: dt.datetime) -> ProbeSection:
    from agentmd.engine.write.probe import load_last

    last = load_last(state_dir)
    if last is None:
        return {"last": None, "red": []}
    at = parse_utc(last.get("at"))
    fix = "see the agentmd log for the failing step, then run `agentmd probe` again"
    red = [] if last.get("ok") else [f"probe-failed: {last.get('error')}: {fix}"]
    yellow = []
    if last.get("ok") and last.get("slow"):
        took = (last.get("round_trip_ms") or 0) / 1000
        yellow.append(
            f"probe-slow: the self-probe succeeded in {took:.1f} s, over its {last.get('budget_s')} s budget: the "
            "machine or the daemon is busy; nothing failed"
        )
    return {"last": last, "age_s": _age_s(at, now), "red": red, "yellow": yellow}


def _all(parts: Mapping[str, object], key: str) -> list[str]:
    """Every section's `key` lines (red or yellow), in the sections' order."""
    return [line for part in parts.values() if isinstance(part, dict) for line in part.get(key, [])]


def assemble(parts: Sections, vault: Path, daemon: DaemonInfo) -> Status:
    red = _all(parts, "red")
    if daemon.get("vault_problem"):  # the folder at the vault's path is not the vault: captures are refused
        red.append(f"vault-replaced: {daemon['vault_problem']}")
    lease_problem = daemon.get("lease_problem")
    if lease_problem:  # another daemon (another machine's) serves this vault too
        red.append(LEASE_RED + lease_problem)
    yellow = _git_yellow(parts.get("git")) + _all(parts, "yellow")
    watcher = daemon.get("watcher") or {}
    unwatched = watcher.get("unwatched_dirs")
    if isinstance(unwatched, int) and unwatched > 0:
        folders = watcher.get("unwatched_folders")
        names = [str(f) for f in folders] if isinstance(folders, list) else []
        where = f" (under {', '.join(names[:10])}{' …' if len(names) > 10 else ''})" if names else ""
        yellow.append(
            f"unwatched-folders: {unwatched} folders{where} exceed the inotify watch limit; their changes wait "
            "for the periodic reconcile (raise fs.inotify.max_user_watches)"
        )
    if daemon.get("slow"):
        yellow.append(daemon["slow"])
    elif not daemon.get("running"):
        yellow.append("daemon-not-running: start `agentmd serve` to keep the index and git current")
    color = "red" if red else ("yellow" if yellow else "green")
    return {"vault": str(vault), "color": color, "red": red, "yellow": yellow, "daemon": daemon, **parts}


def _git_yellow(git: GitSection | None) -> list[str]:
    return (
        []
        if git is None or git.get("state", "ok") == "ok"
        else [f"git-degraded: {git.get('reason')}: {git.get('detail')}"]
    )


def with_git(
    status: Status,
    vault: Path,
    commit_state: CommitState | None,
    now: dt.datetime | None = None,
    state_dir: Path | None = None,
    settings: Settings | None = None,
) -> Status:
    """The status with only its git section computed again (after a commit cycle or a sync round), and with
    `state_dir` and `settings` also the probe's, the jobs' and the sync's (other processes write those: `agentmd
    probe`, `agentmd jobs run`, `agentmd sync`), their red and yellow lines replaced by the new sections' and the
    color following; every other part is as the last full status left it. The health pass recomputes everything
    each time it runs."""
    if not status.get("git"):
        return status
    now = now or dt.datetime.now(dt.UTC)
    old = status["git"]
    git = git_section(vault, commit_state, now)
    out: Status = {**status, "git": git}
    fresh: Sections = {"git": git}
    if state_dir is not None and "probe" in status:
        fresh["probe"] = out["probe"] = probe_section(state_dir, now)
    if settings is not None and "jobs" in status:
        fresh["jobs"] = out["jobs"] = jobs_status(settings)
    if settings is not None and "sync" in status:
        from agentmd.engine.git.sync_status import sync_section

        section = sync_section(
            vault, settings.state_dir, now, yellow_after=settings.sync_yellow_after, red_after=settings.sync_red_after
        )
        section["capture_names"] = status["sync"].get("capture_names", "<title>.md")
        fresh["sync"] = out["sync"] = section
    stored: Mapping[str, object] = status
    before = {name: stored.get(name) for name in fresh}
    gone = set(_all(before, "red"))
    kept = [r for r in status.get("red", []) if r not in gone]
    out["red"] = kept + _all(fresh, "red")
    stale = set(_git_yellow(old)) | set(_all({k: v for k, v in before.items() if k != "git"}, "yellow"))
    others = {k: v for k, v in fresh.items() if k != "git"}
    out["yellow"] = [y for y in status.get("yellow", []) if y not in stale] + _git_yellow(git) + _all(others, "yellow")
    out["color"] = "red" if out["red"] else ("yellow" if out["yellow"] else "green")
    return out


def compute_status(
    settings: Settings,
    store: Store,
    contract: ContractState,
    *,
    daemon: DaemonInfo,
    commit_state: CommitState | None,
    stale: bool = False,
    now: dt.datetime | None = None,
) -> Status:
    from agentmd.engine.git.sync_status import sync_section
    from agentmd.engine.write.names import CaptureNames
    from agentmd.engine.write.tallies import budget_warning, halted_refusals

    now = now or dt.datetime.now(dt.UTC)
    parts: Sections = {
        "index": index_section(store, settings.vault, daemon_running=bool(daemon.get("running")), stale=stale, now=now),
        "queue": queue_section(
            store, settings.state_dir, now, _waiting(settings, store, contract, now), line=settings.queue_baseline
        ),
        "git": git_section(settings.vault, commit_state, now),
        "contract": contract_section(contract),
        "probe": probe_section(settings.state_dir, now),
        "jobs": jobs_status(settings),
        "sync": sync_section(
            settings.vault,
            settings.state_dir,
            now,
            yellow_after=settings.sync_yellow_after,
            red_after=settings.sync_red_after,
        ),
        "hooks": hooks_section(settings.state_dir, now),
    }
    parts["contract"]["halted_refusals"] = int(halted_refusals(settings.state_dir).get("count", 0) or 0)
    names = CaptureNames(settings.vault)
    tagged = names.tagged(contract.contract.capture_names)
    parts["sync"]["capture_names"] = f"<title>-{names.tag}.md" if tagged else "<title>.md"
    status = assemble(parts, settings.vault, daemon)
    budget = int(contract.contract.thresholds.daily_card_budget)
    today = captures_on(settings.state_dir, now.date())
    status["captures_today"] = {"count": today, "daily_card_budget": budget}
    if budget > 0 and today > budget:
        status["yellow"].append(f"card-budget: {budget_warning(today, budget, contract.source)}")
    if settings.config_unknown:
        status["yellow"].append(
            f"config-unread: the config file {settings.config_file} says what agentmd does not read, so it is "
            f"ignored: {'; '.join(settings.config_unknown)}; fix or remove it"
        )
    if status["yellow"] and status["color"] == "green":
        status["color"] = "yellow"
    return status


def hooks_section(state_dir: Path, now: dt.datetime) -> HooksSection:
    """How often each hook gave up (its time budget spent, nothing injected) in the last hour, from the hooks'
    log: yellow, since a busy machine is the usual cause, with what to do when it keeps happening."""
    from agentmd.engine.hooklog import HOOK_LOG, gave_up

    counts = gave_up(state_dir, now.timestamp())
    yellow = []
    if counts:
        said = ", ".join(f"{hook} {n} time{'s' if n != 1 else ''}" for hook, n in sorted(counts.items()))
        yellow.append(
            f"hooks-gave-up: in the last hour {said} ran out of time and gave the prompt or session nothing "
            f"(the lines are in {state_dir / HOOK_LOG}); on a busy machine raise the hook's budget "
            "(--time-budget for recall, --budget for session-start, in the hooks' commands)"
        )
    return {"gave_up_last_hour": counts, "red": [], "yellow": yellow}


def captures_on(state_dir: Path, day: dt.date) -> int:
    """Captures counted into the memory space on `day` (the daily volume gate's own count)."""
    from agentmd.engine.write.capture import VolumeGate

    return VolumeGate(state_dir, lambda: 0, lambda: "").count(day)


def _waiting(settings: Settings, store: Store, contract: ContractState, now: dt.datetime) -> list[tuple[str, str]]:
    """The review queue (engine/curate/queue.py) as (path, captured), so status counts what `queue` lists."""
    from agentmd.engine.curate.queue import review_queue

    items = review_queue(settings.vault, store.catalog, contract.contract, state_dir=settings.state_dir, now=now)
    return [(i.path, i.captured) for i in items]


def with_lease(status: Status, problem: str | None) -> Status:
    """The status with the vault lease as it is now: red while the lease names another daemon (another
    machine's record synced over this one's), whatever the last recorded status said."""
    red = [r for r in status.get("red", []) if not r.startswith(LEASE_RED)]
    if problem:
        red.append(LEASE_RED + problem)
    status["red"] = red
    status["color"] = "red" if red else ("yellow" if status.get("yellow") else "green")
    return status


def with_live(status: Status, live: HealthReport | None) -> Status:
    """The status with the daemon's last health pass (engine/daemon/health.py) merged in: its red and
    yellow lines join the others (once each) and the color follows; its checks show as `live`."""
    if not live:
        return status
    red = list(status.get("red", []))
    yellow = list(status.get("yellow", []))
    for line in live["red"]:
        detail = line.split(": ", 1)[-1]
        if not any(detail in r for r in red):  # e.g. a refusal the last recorded pass already reports
            red.append(line)
    yellow += [y for y in live["yellow"] if y not in yellow]
    status["red"], status["yellow"] = red, yellow
    status["color"] = "red" if red else ("yellow" if yellow else "green")
    status["live"] = {"at": live["at"], **live["checks"]}
    return status


def with_dense(status: Status, dense: DenseSection, *, switched_off: bool = False) -> Status:
    """The status with its `dense` section. Yellow when the dense arm is not doing its work: a model that
    should load but cannot (`dense-unavailable`; a dense arm switched off by the settings is not yellow), an
    embeddings endpoint that stopped answering (`dense-waiting`), a background embedding that stopped
    (`dense-stopped`), vectors that cannot be saved (`dense-unsaved`)."""
    status["dense"] = dense
    state, reason = dense.get("state"), dense.get("reason")
    lines = []
    if state == "lexical-only" and not switched_off:
        lines.append(f"dense-unavailable: searching lexical-only: {reason}")
    elif state == "waiting":
        lines.append(f"dense-waiting: new notes are found by their words until the endpoint answers: {reason}")
    elif state == "stopped":
        lines.append(f"dense-stopped: {reason}")
    if dense.get("save_error"):
        lines.append(f"dense-unsaved: {dense['save_error']}")
    if lines:
        status["yellow"] = [*status.get("yellow", []), *lines]
        if status.get("color") == "green":
            status["color"] = "yellow"
    return status


def dense_from_disk(settings: Settings) -> DenseSection:
    """The `dense` section without a daemon: the coverage of the vectors on disk."""
    from agentmd.engine.search.arm import NO_VECTORS, SWITCHED_OFF, vectors_path

    if not settings.dense:
        return {"state": "lexical-only", "reason": SWITCHED_OFF}
    if not vectors_path(settings.cache_dir).is_file():
        from agentmd.engine.daemon.embedding import endpoint_exposure

        return {"state": "none", "reason": NO_VECTORS, **endpoint_exposure(settings)}
    from agentmd.engine.daemon.embedding import endpoint_exposure
    from agentmd.engine.index.vectors import VectorStore
    from agentmd.engine.search.arm import model_id_for

    model = model_id_for(settings)
    cov = VectorStore(settings.cache_dir, model, dim=None).coverage()
    return {
        **endpoint_exposure(settings),
        "state": "complete" if cov.done >= cov.total else "partial",
        "model": model,
        "chunks_done": cov.done,
        "chunks_total": cov.total,
        "notes_done": cov.notes_done,
        "notes_total": cov.notes,
        "rate_per_s": None,
        "eta_s": None,
        "reason": None,
    }


def with_recall(status: Status, state_dir: Path, env: Mapping[str, str] | None = None) -> Status:
    """The status with its `recall` section: whether the prompt hook's recall is paused, and until when
    (engine/recall_pause.py). A pause is the owner's choice, so it is information, never yellow. `env` is the
    environment whose one-session pause counts (the daemon's own: none)."""
    from agentmd.engine import recall_pause

    pauses = recall_pause.in_effect(state_dir, env=env if env is not None else {})
    status["recall"] = {**recall_pause.summary(pauses), "line": recall_pause.line(pauses)}
    return status
