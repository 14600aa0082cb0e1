"""`agentmd serve`, `status`, `mcp` and `probe`: the daemon, its health, its MCP tools over stdio and its
self-probe. The web server and the MCP stack load only inside the commands that use them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO, cast

from agentmd.cli.base import EXIT_OK, EXIT_RED, daemon_of, number, port, settings_of
from agentmd.cli.output import emit
from agentmd.engine.errors import AgentmdError

# The daemon's defaults (engine/settings.py), written out so that building the parser loads no engine module
# beyond the errors. tests/cli/test_cli_imports.py checks they agree.
DEFAULT_PORT = 7821
RECONCILE_INTERVAL = 300.0
COMMIT_DEBOUNCE = 1.0
COMMIT_MAX_WAIT = 10.0
LISTEN_BACKLOG = 2048  # uvicorn's own

if TYPE_CHECKING:
    import socket

    from agentmd.engine.daemon.status_types import DaemonInfo, Status
    from agentmd.engine.settings import Settings


def add_serve(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("serve", parents=[common], help="run the daemon: watch, index, commit, serve on loopback")
    p.add_argument("--port", type=port, default=DEFAULT_PORT, help=f"loopback port (default {DEFAULT_PORT})")
    p.add_argument(
        "--reconcile-interval", type=number, default=RECONCILE_INTERVAL, help="seconds between full passes (300)"
    )
    p.add_argument("--commit-debounce", type=number, default=COMMIT_DEBOUNCE, help="seconds of quiet before a commit")
    p.add_argument(
        "--commit-max-wait",
        type=number,
        default=COMMIT_MAX_WAIT,
        help=f"seconds at most from a change to its commit under continuous activity ({COMMIT_MAX_WAIT:g})",
    )
    p.add_argument("--health-interval", type=number, default=5.0, help="seconds between health passes (5)")
    p.add_argument(
        "--min-free-mb", type=number, default=64.0, help="status turns red when a disk has less free space (64)"
    )
    p.add_argument(
        "--no-restart",
        action="store_true",
        help="run the daemon in this process, not in a child started again after a crash (Linux only)",
    )
    p.set_defaults(func=cmd_serve)


def add_status(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("status", parents=[common], help="health of the index, git, queue and contract")
    p.add_argument("--port", type=port, help="the daemon's port (default: read from its state file)")
    p.add_argument(
        "--wait", type=number, default=STATUS_WAIT, metavar="SECONDS",
        help=f"how long a busy daemon is waited for before the status is read from disk (default {STATUS_WAIT:g})",
    )  # fmt: skip
    p.set_defaults(func=cmd_status)


def add_mcp(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("mcp", parents=[common], help="serve the two MCP tools over stdio")
    p.set_defaults(func=cmd_mcp)


def add_probe(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("probe", parents=[common], help="run the daemon's self-probe now")
    p.add_argument("--budget", type=number, default=5.0, help="seconds the round trip may take (default 5)")
    p.set_defaults(func=cmd_probe)


def _check_can_serve(settings: Settings, port: int) -> socket.socket:
    """Refuse, in one line and before anything starts (or logs), a vault that already has its daemon or a port
    another process listens on; the socket, bound and listening, for the daemon. A daemon whose `agentmd
    serve` was killed is going down with it: it is waited for (a few seconds at most), so a start right after
    a `kill -9` is not refused."""
    import time

    from agentmd.engine import lease
    from agentmd.engine.daemon.instance import STOPPING_WAIT, running_daemon, wait_for_orphan, wait_for_stopping
    from agentmd.engine.daemon.server import PortInUse, listen_socket

    waited = wait_for_orphan(settings.state_dir, vault=settings.vault)
    stopping = running_daemon(settings.state_dir, settings.vault)
    if stopping is not None and stopping.get("stopping"):
        wait_for_stopping(settings.state_dir, vault=settings.vault)
        waited = True
    info = running_daemon(settings.state_dir, settings.vault)
    if info is not None and info.get("stopping"):
        raise AgentmdError(
            f"agentmd serve for this vault ({lease.describe(info)}) is still stopping after "
            f"{STOPPING_WAIT:.0f} s; this one did not start: look at the agentmd log, then start it again"
        )
    if info is not None:
        raise AgentmdError(
            f"agentmd serve is already running for this vault ({lease.describe(info)}, state folder "
            f"{info.get('state_dir', settings.state_dir)}); this one did not start, and that one keeps running"
        )
    foreign = lease.foreign_holder(settings.vault)
    if foreign is not None:
        raise AgentmdError(f"{lease.foreign_message(settings.vault, foreign)}; this one did not start")
    deadline = time.monotonic() + (5.0 if waited else 0.0)
    while True:
        try:
            sock = listen_socket("127.0.0.1", port)  # raises PortInUse, naming the port, when it is taken
            # listening from now on: a client that connects before the daemon (or a restarted one) serves
            # waits in the queue instead of being refused
            sock.listen(LISTEN_BACKLOG)
            return sock
        except PortInUse:
            if time.monotonic() >= deadline:  # the daemon that went down may close its socket a moment late
                raced = None
                for _ in range(40):  # another start for this vault may hold the port before its lock: 2 s
                    raced = running_daemon(settings.state_dir, settings.vault)
                    if raced is not None:
                        break
                    time.sleep(0.05)
                if raced is not None:  # another start for this vault took the port a moment before this one
                    raise AgentmdError(
                        f"agentmd serve is already running for this vault ({lease.describe(raced)}); this one did "
                        "not start, and that one keeps running"
                    ) from None
                raise
            time.sleep(0.05)


def cmd_serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.daemon import supervisor

    settings = settings_of(args)
    listener = _check_can_serve(settings, args.port)

    def run() -> int:
        try:
            return _run_daemon(args, settings, listener)
        except (Exception, KeyboardInterrupt) as exc:
            from agentmd.cli import failure

            return failure.report(exc, err)

    try:
        if args.no_restart or not supervisor.supported():
            return _run_daemon(args, settings, listener)
        # the parent keeps the listening socket across restarts: a client's connection waits in its queue
        # while a new daemon starts, and the port never changes
        return supervisor.supervise(run, err)
    finally:
        listener.close()


def _run_daemon(args: argparse.Namespace, settings: Settings, listener: socket.socket) -> int:
    import faulthandler
    import logging
    import sys

    from agentmd.engine.daemon.service import Daemon

    # a crash in native code (the index library) leaves every thread's stack in the log instead of nothing
    faulthandler.enable(file=sys.stderr, all_threads=True)
    logging.getLogger("agentmd").setLevel(logging.INFO)
    daemon = Daemon(
        settings,
        port=args.port,
        reconcile_interval=args.reconcile_interval,
        commit_debounce=args.commit_debounce,
        commit_max_wait=args.commit_max_wait,
        health_interval=args.health_interval,
        min_free_bytes=int(args.min_free_mb * 2**20),
        listener=listener,
    )
    return daemon.run_forever()


STATUS_WAIT = 30.0  # seconds a busy daemon is waited for in all (`status --wait`)
FIRST_ASK = 5.0  # the first ask's share of it: a daemon that is up answers in milliseconds


def _daemon_status(settings: Settings, port: int | None, wait: float) -> tuple[Status | None, str | None]:
    """The running daemon's status, or (None, why it was not had). A daemon that holds the vault but does not
    answer within 5 s (a loaded machine) is asked once more, up to `wait` seconds in all, then named as slow,
    never as stopped."""
    from agentmd.engine.client import DaemonError, DaemonTimeout, Located

    found = Located(int(port), settings.state_dir) if port else daemon_of(settings)
    if found is None:
        return None, None
    slow = None
    first = min(wait, FIRST_ASK)
    for timeout in (first, wait - first) if wait > first else (first,):
        try:
            data = found.client(timeout=timeout).get("/status")
        except DaemonTimeout:
            slow = (
                f"daemon-slow: the daemon (port {found.port}) did not answer within {wait:g} s, so this status is "
                "read from disk; the machine may be busy: ask again (`--wait` waits longer), and if it never "
                "answers, restart `agentmd serve`"
            )
            continue
        except DaemonError:
            return None, None
        return (cast("Status", data) if isinstance(data, dict) else None), None
    return None, slow


def cmd_status(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.settings import resolve

    # a vault folder that is gone (an unmounted drive) is a red status, not a usage error: its daemon may say more
    settings = resolve(vault=args.vault, index=args.index, config=args.config, require_vault=False)
    status, slow = _daemon_status(settings, args.port, max(args.wait, 0.1))
    if status is None and not settings.vault.is_dir():
        missing = (
            f"vault-missing: {settings.vault} is a file, not a folder: give the vault's folder (--vault)"
            if settings.vault.exists()
            else f"vault-missing: the vault folder {settings.vault} does not exist: check the path (is the drive "
            "mounted?), or, for a new vault, `agentmd init-git` makes it"
        )
        status = {"vault": str(settings.vault), "color": "red", "red": [missing], "yellow": []}
    if status is None:
        status = _status_here(settings, slow)
    import os

    from agentmd.engine.daemon.status import render, with_recall

    status = with_recall(status, settings.state_dir, os.environ)  # this shell's AGENTMD_RECALL counts too
    emit(out, args, status, render(status))
    return EXIT_RED if status.get("red") else EXIT_OK


def _status_here(settings: Settings, slow: str | None = None) -> Status:
    """No daemon answers: the status computed from disk (`slow`: the daemon is there but too busy to answer)."""
    from agentmd.engine.daemon.status import compute_status, dense_from_disk, with_dense
    from agentmd.engine.fsutil import read_json
    from agentmd.engine.git.health import COMMIT_STATE, CommitState
    from agentmd.engine.index.store import Store
    from agentmd.rules import load_contract

    contract = load_contract(settings.vault, settings.contract_path)
    commit_state = CommitState.from_mapping(read_json(settings.state_dir / COMMIT_STATE))
    from agentmd.engine import lease

    foreign = lease.foreign_holder(settings.vault)
    daemon: DaemonInfo = {
        "running": False,
        "lease_problem": lease.foreign_message(settings.vault, foreign) if foreign else None,
    }
    if slow:
        daemon["running"], daemon["slow"] = True, slow
    with Store(settings.cache_dir) as store:
        status = compute_status(settings, store, contract, daemon=daemon, commit_state=commit_state)
    from agentmd.engine.client import port_taken, recorded_port, running

    last = recorded_port(settings.state_dir)  # the port daemon.json still names after a crash
    places = {DEFAULT_PORT: "where `agentmd serve` listens by default"}
    if last and last != DEFAULT_PORT:
        places = {last: "where this vault's daemon listened last", **places}
    unclaimed = foreign is None and running(settings.state_dir, settings.vault) is None
    taken = [] if slow else [
        t for port, where in places.items() if (t := port_taken(port, settings.vault, where, unclaimed=unclaimed))
    ]  # fmt: skip
    if taken:
        status["yellow"] = [*status.get("yellow", []), *taken]
        status["color"] = "red" if status.get("red") else "yellow"
    return with_dense(status, dense_from_disk(settings), switched_off=True)  # no daemon: nothing failed to load


def cmd_mcp(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.backends import FollowingBackend
    from agentmd.engine.daemon.mcp_server import run_stdio

    backend = FollowingBackend(settings_of(args))
    try:
        run_stdio(backend)
    finally:
        backend.close()
    return EXIT_OK


def cmd_probe(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = settings_of(args)
    daemon = daemon_of(settings)
    if daemon is None:
        raise AgentmdError("the self-probe checks the running daemon; start `agentmd serve` first")
    from agentmd.engine.backends import RemoteBackend

    result = RemoteBackend(daemon).probe(args.budget)
    if result.get("ok"):
        slow = f", over its {result.get('budget_s')} s budget: a busy machine" if result.get("slow") else ""
        took = f"round trip {result.get('round_trip_ms')} ms{slow}"
        emit(out, args, result, f"probe ok ({took}, note {result.get('path')})")
        return EXIT_OK
    emit(out, args, result, f"probe FAILED: {result.get('error')}")
    return EXIT_RED
