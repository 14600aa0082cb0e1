"""How `agentmd status` reads to a person: the status (engine/daemon/status.py computes it) as lines of text,
red and yellow conditions first named, then one line a part."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentmd.engine.jobs.report import render_lines
from agentmd.engine.times import duration, parse_utc
from agentmd.vocabulary import VAULT_CONTRACT

if TYPE_CHECKING:
    from agentmd.engine.daemon.embedding import DenseSection
    from agentmd.engine.daemon.status_types import QueueSection, Status


def day(at: dt.datetime) -> str:
    """A baseline as a person reads it: the date, with the time when it is not midnight UTC."""
    at = at.astimezone(dt.UTC)
    return at.date().isoformat() if at.time() == dt.time(0) else at.strftime("%Y-%m-%d %H:%M UTC")


def dense_line(dense: DenseSection | None) -> str:
    """`12,031 / 16,711 chunks, 3 min left`, or `lexical-only: <reason>`."""
    if not dense:
        return "unknown"
    if "chunks_total" not in dense:
        if dense.get("state") == "loading":
            return "loading the embedding model"
        prefix = "lexical-only" if dense.get("state") == "lexical-only" else "no vectors"
        return f"{prefix}: {dense.get('reason')}"
    done, total = int(dense["chunks_done"]), int(dense["chunks_total"])
    text = f"{done:,} / {total:,} chunks"
    state = dense.get("state")
    if state == "stopped":
        return text + ", embedding stopped (see the yellow line)"
    if state == "waiting":
        return text + ", waiting for the embeddings endpoint"
    if done >= total:
        return text + (" (complete)" if state in ("complete", "partial") else " (saving)")
    eta = dense.get("eta_s")
    if eta is not None:
        return text + f", {duration(float(eta), least=1)} left"
    if dense.get("state") == "partial":
        return text + " on disk (the daemon or `agentmd reindex` embeds the rest)"
    return text + ", measuring the rate"


def queue_lines(queue: QueueSection) -> list[str]:
    """The queue's lines: the total, the part the thresholds read, and the inherited backlog with its line."""
    if "count" not in queue:  # the catalog could not be read
        return ["  queue     unknown (the catalog could not be read)"]
    count, inherited = queue["count"], queue.get("inherited", 0)
    total = queue.get("total", count + inherited)
    oldest = queue.get("oldest_age_days")
    lines = [
        f"  queue     {total} awaiting review (`agentmd queue`): {count} since the baseline"
        + (f", the oldest {oldest} days old" if oldest is not None else "")
    ]
    at = parse_utc(queue.get("baseline_at"))
    source = queue.get("baseline_source")
    if at is None or source == "pending":
        lines.append(f"            {inherited} inherited; the baseline is recorded once the vault is indexed")
        return lines
    how = "set by `queue_baseline` in the config file" if source == "config" else "recorded on the first run"
    backlog_age = queue.get("inherited_oldest_age_days")
    lines.append(
        f"            {inherited} inherited (captured before {day(at)}, {how}"
        + (f"; the oldest {backlog_age} days old" if backlog_age is not None else "")
        + "): shown, never red"
    )
    return lines


def render(status: Status) -> str:
    """Readable text for a terminal. A daemon still on its start-up pass answers with its index, daemon and
    colour lines only: the sections it has not computed yet are left out."""
    idx: Mapping[str, Any] = status.get("index") or {}
    daemon: Mapping[str, Any] = status.get("daemon") or {}
    git, queue, contract = status.get("git"), status.get("queue"), status.get("contract")
    lines = [f"agentmd status: {status['color'].upper()}  ({status['vault']})"]
    if daemon.get("slow"):
        lines.append("  daemon    running, too busy to answer (read from disk)")
    elif daemon.get("running"):
        lines.append(f"  daemon    running (pid {daemon.get('pid')}, port {daemon.get('port')})")
    else:
        lines.append("  daemon    not running")
    age = idx.get("last_pass_age_s")
    age_text = "never" if age is None else f"{int(age)}s ago"
    stale = " (index building)" if idx.get("index_stale") else ""
    documents = idx.get("documents")
    lines.append(f"  index     {'?' if documents is None else documents} notes, last pass {age_text}{stale}")
    # a live check can find git unusable while the repository itself reads as sound (git-unwritable)
    git_alarm = next((r.split(":")[0] for r in status.get("red") or [] if r.startswith("git-")), None)
    if git is None:
        pass
    elif git["state"] == "ok" and git_alarm:
        lines.append(f"  git       {git_alarm} (see RED below), {git['commit_failures']} failed commit cycles")
    elif git["state"] == "ok":
        lines.append(f"  git       ok, {git['commit_failures']} failed commit cycles")
    else:
        lines.append(f"  git       degraded: {git['reason']} ({git['detail']})")
    if git and git.get("worktrees_inside_vault"):
        lines.append("  worktrees inside the vault: " + ", ".join(git["worktrees_inside_vault"]))
    sync = status.get("sync")
    if sync is not None and (sync["remote"] or "-" in sync.get("capture_names", "")):
        last = f"last good sync {sync.get('last_ok_at') or 'never'}; " if sync["remote"] else ""
        named = f"new captures named {sync.get('capture_names')}"
        lines.append(f"  sync      {sync['remote'] or 'no remote'}; {last}{named}")
        if sync.get("held"):  # this machine's commits are held back: no round syncs (a red status line says why)
            lines.append(f"            held since {sync.get('failing_since')}: nothing is committed or pushed")
        elif sync.get("failing_since"):  # said from the first failed round; yellow and red come later (status lines)
            lines.append(f"            failing since {sync['failing_since']}: {sync.get('last_error')}")
        if sync.get("rewritten"):
            made = f"; {sync.get('ahead', 0)} commit(s) made here since the last sync" if sync.get("ahead") else ""
            lines.append(f"            the remote's history was rewritten{made}")
        elif sync.get("ahead"):
            lines.append(f"            {sync['ahead']} commit(s) here not yet on the remote")
    if queue is not None:
        lines += queue_lines(queue)
    if contract is not None:
        refusals = contract.get("halted_refusals") or 0
        refused = f", {refusals} typed captures refused while halted" if refusals else ""
        source = str(contract["source"])
        if source.endswith("storage-rules.default.md"):  # the packaged one: the vault has none of its own
            source = f"the packaged default, {source}; the vault's own would be {VAULT_CONTRACT}"
        lines.append(f"  contract  {'HALTED' if contract['halted'] else 'ok'} ({source}){refused}")
    if "dense" in status:
        lines.append(f"  dense     {dense_line(status['dense'])}")
    endpoint = (status.get("dense") or {}).get("endpoint")
    if isinstance(endpoint, dict):
        withheld = [f"{a}/" for a in endpoint.get("withheld") or []]
        but = f" but those under {', '.join(withheld)} (kept on this machine)" if withheld else ""
        lines.append(f"  endpoint  {endpoint.get('url')} sees every note{but} and the queries of hybrid searches")
    recall = status.get("recall")
    if isinstance(recall, dict):
        lines.append(f"  recall    {recall.get('line') or 'on'}")
    probe = status["probe"].get("last") if "probe" in status else None
    if "probe" not in status:
        pass
    elif probe is None:
        lines.append("  probe     never run")
    else:
        age = status["probe"].get("age_s")
        when = f"{int(age // 3600)}h ago" if age is not None and age >= 3600 else f"{int(age or 0)}s ago"
        if probe.get("ok"):
            lines.append(f"  probe     ok {when} (round trip {probe.get('round_trip_ms')} ms)")
        else:
            lines.append(f"  probe     FAILED {when}: {probe.get('error')}")
    lines += render_lines(status.get("jobs"))
    for r in status.get("red") or []:
        lines.append(f"RED    {r}")
    for y in status.get("yellow") or []:
        lines.append(f"yellow {y}")
    return "\n".join(lines)
