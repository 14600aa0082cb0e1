"""`agentmd token`, `agentmd mcp-config` and `agentmd open`: the vault's access token, the set-up an MCP client
needs, and the daemon's page opened in a browser.

Every request to the daemon but `/health` carries the access token (engine/client.py says where it lives).
The CLI, the hooks and the stdio MCP server read it themselves; a client that speaks to `/mcp` over HTTP is
given it in its configuration, which `mcp-config` prints. `token rotate` makes a new one at once: the daemon
takes it on the next request, and HTTP clients configured with the old one must be given the new one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentmd.cli.base import EXIT_OK, daemon_of, port, settings_of, subcommands
from agentmd.cli.output import emit

if TYPE_CHECKING:
    from agentmd.engine.settings import Settings

DEFAULT_PORT = 7821  # engine/settings.py's, written out so that building the parser loads no engine module
SERVER_NAME = "agentmd"
XDG_PLACES = ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")  # variables never written into a client's set-up
REDIRECT_KEPT_S = 600  # an opening's redirect file is removed at a later opening after this (its ticket lasts 120 s)


def add_access_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    token = sub.add_parser("token", parents=[common], help="the vault's access token: where it is, or a new one")
    actions = subcommands(token, "action", "ACTION")
    actions.required = True
    path = actions.add_parser("path", parents=[common], help="print where the access token is kept")
    path.set_defaults(func=cmd_token_path)
    rotate = actions.add_parser(
        "rotate", parents=[common], help="replace the access token (HTTP MCP clients need the new one)"
    )
    rotate.set_defaults(func=cmd_token_rotate)

    config = sub.add_parser(
        "mcp-config", parents=[common], help="print the MCP client set-up for this vault, with its access token"
    )
    config.add_argument("--port", type=port, help="the daemon's port (default: the running daemon's, else 7821)")
    config.add_argument("--name", default=SERVER_NAME, help=f"the server's name in the client ({SERVER_NAME})")
    config.set_defaults(func=cmd_mcp_config)

    page = sub.add_parser("open", parents=[common], help="open the daemon's page (status, review, search, undo)")
    page.add_argument("--print", action="store_true", help="print the one-time URL instead of starting the browser")
    page.set_defaults(func=cmd_open)


def _token_folder(settings: Settings) -> Path:
    """The state folder whose token the daemon serving this vault checks: the running daemon's own, else this
    environment's (where `agentmd serve` run from here will look)."""
    found = daemon_of(settings)
    return found.state_dir if found is not None else settings.state_dir


def cmd_token_path(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.client import access_token_path

    path = access_token_path(_token_folder(settings_of(args)))
    emit(out, args, {"path": str(path), "exists": path.exists()}, str(path))
    return EXIT_OK


def cmd_token_rotate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.client import ACCESS_WHAT, access_token_path
    from agentmd.engine.secret import replace_secret

    path = access_token_path(_token_folder(settings_of(args)))
    replace_secret(path, ACCESS_WHAT)
    text = (
        f"a new access token is in {path}; the daemon takes it on the next request. The CLI, the hooks and "
        "`agentmd mcp` read it themselves; give HTTP MCP clients the new one (`agentmd mcp-config` prints it)"
    )
    emit(out, args, {"path": str(path), "rotated": True}, text)
    return EXIT_OK


def cmd_mcp_config(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import json
    import shlex
    from pathlib import Path

    from agentmd.engine.client import ACCESS_WHAT, access_token_path, recorded_port
    from agentmd.engine.secret import ensure_secret

    settings = settings_of(args)
    found = daemon_of(settings)
    folder = found.state_dir if found is not None else settings.state_dir
    port = args.port or (found.port if found is not None else None) or recorded_port(folder) or DEFAULT_PORT
    token = ensure_secret(access_token_path(folder), ACCESS_WHAT)
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {"Authorization": f"Bearer {token}"}
    http_entry = {"type": "http", "url": url, "headers": headers}
    from agentmd.hooks.install import agentmd_argv

    # how the hooks run it too: this `agentmd` by its absolute path, the one on PATH, or `python -m agentmd`
    program, *stdio_args = agentmd_argv()
    stdio_args += ["mcp", "--vault", str(settings.vault)]
    if getattr(args, "config", None):
        stdio_args += ["--config", str(Path(args.config).resolve())]
    stdio_entry: dict[str, object] = {"command": program, "args": stdio_args}
    # MCP clients start a stdio server with a few variables of their own (HOME, PATH): the ones that place
    # agentmd's folders or set it up here go along, so `agentmd mcp` reads the same index, state and config
    passed = {
        name: value
        for name, value in sorted(os.environ.items())
        if (name in XDG_PLACES or name.startswith("AGENTMD_")) and not any(w in name for w in SECRET_WORDS)
    }
    if passed:
        stdio_entry["env"] = passed
    claude = (
        f"claude mcp add --transport http {shlex.quote(args.name)} {url} "
        f"--header {shlex.quote('Authorization: Bearer ' + token)}"
    )
    payload = {
        "url": url,
        "headers": headers,
        "running": found is not None,
        "claude": claude,
        "http": {"mcpServers": {args.name: http_entry}},
        "stdio": {"mcpServers": {args.name: stdio_entry}},
    }
    lines = [
        "# Claude Code, over HTTP to the daemon (`agentmd serve` must be running on this port):",
        claude,
        "",
        "# Any client that takes a JSON server entry, over HTTP:",
        json.dumps(payload["http"], indent=2),
        "",
        "# Or over stdio: the client starts `agentmd mcp`, which reads the token itself:",
        json.dumps(payload["stdio"], indent=2),
    ]
    if found is None:
        lines.append(f"\n(no daemon runs for {settings.vault} now: start `agentmd serve` before an HTTP client)")
        from agentmd.engine.client import port_taken

        squat = port_taken(port, settings.vault, "the port this configuration names", unclaimed=True)
        if squat:  # an HTTP client set up now would send the token to that process
            payload["warning"] = squat
            lines.insert(0, f"# WARNING: {squat}\n")
            err.write(f"agentmd mcp-config: {squat}\n")
    emit(out, args, payload, "\n".join(lines))
    return EXIT_OK


def cmd_open(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Ask the running daemon for a one-time ticket and open `/ui/enter#<ticket>`: the ticket rides in the URL's
    fragment (never sent to a server), serves once and for two minutes, and the page trades it for its session
    cookie (engine/web/session.py). The access token itself never reaches the browser."""
    import webbrowser

    from agentmd.engine.client import DaemonError
    from agentmd.engine.errors import AgentmdError

    settings = settings_of(args)
    found = daemon_of(settings)
    if found is None:
        raise AgentmdError(f"agentmd serve is not running for {settings.vault}; start it, then `agentmd open` again")
    try:
        from agentmd.engine.daemon.operator import OPERATOR_HEADER, ensure_token

        # the page may take back any change, so only the owner's operator token gets a ticket
        operator = {OPERATOR_HEADER: ensure_token(settings.state_dir)}
        answer = found.client(timeout=10).post("/v1/page-ticket", {}, headers=operator)
    except DaemonError as exc:
        raise AgentmdError(f"the daemon on port {found.port} gave no page ticket ({exc}); is it up to date?") from None
    page = f"http://127.0.0.1:{found.port}"  # each opening makes a page session of its own under /ui/s/
    url = f"http://127.0.0.1:{found.port}{answer['path']}#{answer['ticket']}"
    if args.print:
        emit(out, args, {"url": url, "page": page}, f"{url}\n(one use, within two minutes)")
        return EXIT_OK
    opened = webbrowser.open(_redirect_file(settings.state_dir, url).as_uri())
    text = f"opened {page} in your browser" if opened else f"no browser could be started; open this URL: {url}"
    if opened:
        text += " (a browser that cannot open the state folder's files: `agentmd open --print`, then paste the URL)"
    emit(out, args, {"page": page, "opened": opened, **({} if opened else {"url": url})}, text)
    return EXIT_OK


def _redirect_file(state_dir: Path, url: str) -> Path:
    """A page of the owner's alone (0600, in a 0700 folder of the state folder) that sends the browser on to
    `url`: the browser is started with this file's name, so the ticket never shows in its command line, which
    every local user can read (/proc/<pid>/cmdline). Files of earlier openings, whose tickets have expired, are
    removed."""
    import html
    import secrets
    import time

    folder = state_dir / "open"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder.chmod(0o700)
    for old in folder.glob("page-*.html"):
        with contextlib.suppress(OSError):
            if time.time() - old.stat().st_mtime > REDIRECT_KEPT_S:
                old.unlink()
    path = folder / f"page-{secrets.token_hex(8)}.html"
    shown = html.escape(url, quote=True)
    text = (
        f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={shown}">'
        f'<title>agentmd</title><p><a href="{shown}">Open the agentmd page</a></p>\n'
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return path
