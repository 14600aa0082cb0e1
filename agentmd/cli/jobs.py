"""`agentmd jobs list | run NAME | history`: the daemon's scheduled jobs, one run now, and the run log."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO, cast

from agentmd.cli.base import EXIT_FAILURE, EXIT_OK, number, settings_of, subcommands
from agentmd.cli.output import emit
from agentmd.engine.errors import AgentmdError, UsageError

if TYPE_CHECKING:
    from agentmd.engine.jobs.manifest import JobJson
    from agentmd.engine.jobs.runner import JobRecord

    class ListedJob(JobJson):
        last: JobRecord | None  # its last run, from the run log


def add_jobs_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("jobs", help="the daemon's scheduled jobs: list them, run one now, read the run log")
    group = subcommands(p, "jobs_command", "ACTION")
    q = group.add_parser("list", parents=[common], help="every job, its schedule, switch, budget and last run")
    q.set_defaults(func=cmd_list)
    q = group.add_parser("run", parents=[common], help="run one job now in the daemon, whatever its schedule")
    q.add_argument("name", help="the job's name (see `agentmd jobs list`)")
    q.add_argument("--timeout", type=number, default=3600.0, help="seconds to wait for the run (3600)")
    q.set_defaults(func=cmd_run)
    q = group.add_parser("history", parents=[common], help="the run log, newest last")
    q.add_argument("--job", help="only this job's runs")
    q.add_argument("--limit", type=int, default=20, help="how many records (20; 0 for all)")
    q.set_defaults(func=cmd_history)
    p.set_defaults(func=lambda args, out, err: (p.print_help(out), 2)[1])


def _record_line(rec: JobRecord) -> str:
    from agentmd.vocabulary import in_words  # here, not at the parser's build: the command line starts light

    used = rec.get("budget_used") or {}
    spend = f"{used.get('wall_s', 0)} s"
    if used.get("tokens") or used.get("calls"):
        spend += f", {used.get('tokens')} tokens, {used.get('calls')} calls"
    changed = rec.get("changed") or {}
    what = ", ".join(f"{k}={in_words(v)}" for k, v in changed.items() if v not in (None, "", 0))
    return (
        f"{str(rec.get('start'))[:19]}  {rec.get('job')!s:<14} {rec.get('outcome')!s:<8} {rec.get('stop_reason')}"
        f"  [{spend}]" + (f"  {what}" if what else "")
    )


def cmd_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.jobs.manifest import jobs_dir, load_jobs
    from agentmd.engine.jobs.report import BUILT_IN_ACTIONS
    from agentmd.engine.jobs.runner import RunLog

    settings = settings_of(args)
    loaded = load_jobs(jobs_dir(settings), set(BUILT_IN_ACTIONS))
    last = {name: entry.get("last") for name, entry in RunLog(settings.state_dir).summary().items()}
    jobs: list[ListedJob] = [{**job, "last": last.get(job["name"])} for job in loaded.to_dict()["jobs"]]
    payload = {"jobs": jobs, "refused": loaded.refused}
    lines = []
    for job in jobs:
        b = job["budget"]
        budget = f"wall {b['wall_s']:g} s" + (f", {b['tokens']} tokens" if b["tokens"] is not None else "")
        budget += f", {b['calls']} calls" if b["calls"] is not None else ""
        rec = job["last"]
        when = "never run" if rec is None else f"last {rec.get('outcome')} {str(rec.get('start'))[:16]}"
        state = "on " if job["enabled"] else "off"
        lines.append(f"{job['name']:<14} {state} {job['schedule']:<20} {budget:<24} {when}")
    for r in loaded.refused:
        lines.append(f"REFUSED {r['path']}: {r['reason']}")
    where = jobs_dir(settings)
    lines.append(f"(manifests: shipped defaults, overridden by {where}/*.toml)" if where else "(shipped defaults)")
    emit(out, args, payload, "\n".join(lines))
    return EXIT_OK


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.client import DaemonHTTPError, DaemonUnreachable, running

    settings = settings_of(args)
    # only a daemon that holds the vault lease or the instance lock is sent the tokens: the port daemon.json
    # names after a crash may be anyone's now, and the operator token carries the owner's authority
    daemon = running(settings.state_dir, settings.vault)
    if daemon is None:
        raise AgentmdError(
            "jobs run in the daemon, and none is serving this vault: start `agentmd serve` (or `agentmd service "
            "install`), or, if one is starting, wait until `agentmd status` answers, and run this again"
        )
    try:
        client = daemon.client(timeout=args.timeout)
        from agentmd.engine.daemon.operator import OPERATOR_HEADER, ensure_token

        operator = {OPERATOR_HEADER: ensure_token(settings.state_dir)}  # the owner's command: only it starts jobs
        rec = cast("JobRecord", client.post("/v1/jobs_run", {"name": args.name}, headers=operator))  # its record
        if not isinstance(rec, dict):
            raise AgentmdError(f"the daemon's answer is not a job's record ({str(rec)[:80]!r}); `agentmd jobs history`")
    except DaemonHTTPError as exc:
        raise UsageError(exc.message) from None
    except DaemonUnreachable as exc:
        raise AgentmdError(f"{exc}; is the daemon still starting? `agentmd status` says") from None
    emit(out, args, rec, _record_line(rec))
    return EXIT_OK if rec.get("outcome") == "ok" else EXIT_FAILURE


def cmd_history(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.jobs.runner import RunLog

    settings = settings_of(args)
    records = RunLog(settings.state_dir).records(job=args.job)
    if args.job and not records:
        from agentmd.engine.jobs.manifest import jobs_dir, load_jobs
        from agentmd.engine.jobs.report import BUILT_IN_ACTIONS

        names = sorted(j["name"] for j in load_jobs(jobs_dir(settings), set(BUILT_IN_ACTIONS)).to_dict()["jobs"])
        if args.job not in names:
            raise UsageError(f"no job is named {args.job!r}; the jobs are: {', '.join(names)} (`agentmd jobs list`)")
    if args.limit > 0:
        records = records[-args.limit :]
    what = f"job {args.job} has not run yet" if args.job else "no job has run yet"
    text = "\n".join(_record_line(r) for r in records) or what
    emit(out, args, {"records": records}, text)
    return EXIT_OK
