"""`agentmd serve`, `status`, `mcp` and `probe`: the daemon, its health, its MCP tools over stdio and its
self-probe. The web server and the MCP stack load only inside the commands that use them."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING, Any, TextIO

from agentmd.cli.base import EXIT_OK, EXIT_RED, settings_of
from agentmd.cli.output import emit
from agentmd.engine.errors import AgentmdError
from agentmd.engine.settings import COMMIT_DEBOUNCE, DEFAULT_PORT, RECONCILE_INTERVAL

if TYPE_CHECKING:
    from agentmd.engine.settings import Settings


def add_serve(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("serve", parents=[common], help="run the daemon: watch, index, commit, serve on loopback")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"loopback port (default {DEFAULT_PORT})")
    p.add_argument(
        "--reconcile-interval", type=float, default=RECONCILE_INTERVAL, help="seconds between full passes (300)"
    )
    p.add_argument("--commit-debounce", type=float, default=COMMIT_DEBOUNCE, help="seconds of quiet before a commit")
    p.add_argument("--health-interval", type=float, default=5.0, help="seconds between health passes (5)")
    p.add_argument(
        "--min-free-mb", type=float, default=64.0, help="status turns red when a disk has less free space (64)"
    )
    p.set_defaults(func=cmd_serve)


def add_status(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("status", parents=[common], help="health of the index, git, queue and contract")
    p.add_argument("--port", type=int, help="the daemon's port (default: read from its state file)")
    p.set_defaults(func=cmd_status)


def add_mcp(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("mcp", parents=[common], help="serve the two MCP tools over stdio")
    p.set_defaults(func=cmd_mcp)


def add_probe(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("probe", parents=[common], help="run the daemon's self-probe now")
    p.add_argument("--budget", type=float, default=5.0, help="seconds the round trip may take (default 5)")
    p.set_defaults(func=cmd_probe)


def cmd_serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.daemon.service import Daemon

    settings = settings_of(args)
    logging.getLogger("agentmd").setLevel(logging.INFO)
    daemon = Daemon(
        settings,
        port=args.port,
        reconcile_interval=args.reconcile_interval,
        commit_debounce=args.commit_debounce,
        health_interval=args.health_interval,
        min_free_bytes=int(args.min_free_mb * 2**20),
    )
    return daemon.run_forever()


def _daemon_status(settings: Settings, port: int | None) -> dict[str, Any] | None:
    from agentmd.engine.client import DaemonClient, DaemonError
    from agentmd.engine.daemon.instance import running_daemon

    info = running_daemon(settings.state_dir)
    if info is None and port is None:
        return None
    port = port or (info or {}).get("port")
    if not port:
        return None
    try:
        data = DaemonClient(int(port)).get("/status", timeout=5)
    except DaemonError:
        return None
    return data if isinstance(data, dict) else None


def cmd_status(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.daemon.status import compute_status, dense_from_disk, render, with_dense
    from agentmd.engine.fsutil import read_json
    from agentmd.engine.index.store import Store
    from agentmd.rules import load_contract

    settings = settings_of(args)
    status = _daemon_status(settings, args.port)
    if status is None:
        contract = load_contract(settings.vault, settings.contract_path)
        commit_state = read_json(settings.state_dir / "commit-state.json")
        with Store(settings.cache_dir) as store:
            status = compute_status(settings, store, contract, daemon={"running": False}, commit_state=commit_state)
        with_dense(status, dense_from_disk(settings), switched_off=True)  # no daemon: nothing failed to load
    emit(out, args, status, render(status))
    return EXIT_RED if status.get("red") else EXIT_OK


def cmd_mcp(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.backends import LocalBackend, backend_for
    from agentmd.engine.daemon.mcp_server import build_mcp

    settings = settings_of(args)
    backend = backend_for(settings)
    try:
        build_mcp(backend).run("stdio")
    finally:
        if isinstance(backend, LocalBackend):
            backend.close()
    return EXIT_OK


def cmd_probe(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.backends import RemoteBackend
    from agentmd.engine.daemon.instance import running_daemon

    settings = settings_of(args)
    info = running_daemon(settings.state_dir)
    if not info or not info.get("port"):
        raise AgentmdError("the self-probe checks the running daemon; start `agentmd serve` first")
    result = RemoteBackend(int(info["port"])).probe(args.budget)
    if result.get("ok"):
        emit(out, args, result, f"probe ok (round trip {result.get('round_trip_ms')} ms, note {result.get('path')})")
        return EXIT_OK
    emit(out, args, result, f"probe FAILED: {result.get('error')}")
    return EXIT_RED
