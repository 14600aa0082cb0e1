"""`agentmd capture`: save a note through the governed write path (the daemon's when it runs)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from agentmd.cli.base import EXIT_OK, daemon_of, raised_from, settings_of
from agentmd.cli.output import emit
from agentmd.engine.errors import AgentmdError, UsageError

if TYPE_CHECKING:
    from agentmd.engine.write.request import CaptureAnswer


def add_capture(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("capture", parents=[common], help="save a note through the governed write path")
    p.add_argument("--title", required=True, help="one line saying what the note is about")
    body = p.add_mutually_exclusive_group()
    body.add_argument("--body", help="the note's Markdown body (default: read standard input when piped)")
    body.add_argument("--body-file", help="read the body from this file")
    p.add_argument("--type", help="memory type (see the contract's types), e.g. decision")
    p.add_argument("--summary", help="one-sentence summary")
    p.add_argument("--why", help="why this is worth keeping (with --type, files the note as active)")
    p.add_argument("--importance", help="1 (record) to 5 (vital), or low/medium/high/critical")
    p.add_argument("--related", help="comma-separated note names to link")
    p.add_argument("--project", help="project slug")
    p.add_argument("--task", help="the task this came from")
    p.add_argument("--tags", help="comma-separated tags")
    p.add_argument("--aliases", help="comma-separated aliases")
    p.add_argument("--source", help="where this came from (a source tag from the contract)")
    p.add_argument("--source-url", help="the URL it came from (always untrusted)")
    p.add_argument("--space", help="a contract space other than memory, e.g. projects")
    p.add_argument(
        "--supersedes", help="the path or exact title of an earlier note this one corrects (it is marked superseded)"
    )
    p.add_argument("--instructions", help="your own filing instructions, kept on the note")
    p.add_argument("--operator", action="store_true", help="write as the vault's owner (alignment-level folders)")
    p.set_defaults(func=cmd_capture)


def _body(args: argparse.Namespace) -> str:
    from pathlib import Path

    if args.body is not None:
        return str(args.body)
    if args.body_file:
        try:
            return Path(args.body_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise UsageError(f"could not read --body-file {args.body_file}: {why}") from None
    if not sys.stdin.isatty():
        return sys.stdin.read()
    return ""


def _check_utf8(text: str, what: str, args: argparse.Namespace) -> None:
    """Refuse text that was not UTF-8 where it came from (an argument or standard input: Python keeps the bytes
    it could not decode as lone surrogates), naming the first such byte."""
    for at, ch in enumerate(text):
        if "\udc80" <= ch <= "\udcff":
            where = "standard input" if what == "the body" and args.body is None and not args.body_file else what
            raise UsageError(
                f"{where} is not UTF-8 text (byte 0x{ord(ch) - 0xDC00:02x} at character {at}); "
                "save or convert it as UTF-8 (e.g. `iconv -t UTF-8`) and capture again; nothing was written"
            )


# The capture request's fields (engine/write/request.py `CaptureRequest`) that are options of this command;
# written out so that a capture the daemon takes loads nothing of the write path here. tests/cli/test_cli_imports.py
# checks them against the request's fields.
OPTION_FIELDS = (
    "type",
    "summary",
    "why",
    "importance",
    "related",
    "project",
    "task",
    "tags",
    "aliases",
    "source",
    "source_url",
    "space",
    "supersedes",
    "instructions",
)


def cmd_capture(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not args.title.strip():
        raise UsageError(
            "agentmd capture: --title must not be empty: give one line saying what the note is about "
            "(see `agentmd capture --help`)"
        )
    settings = settings_of(args)
    body = _body(args)
    fields = {name: getattr(args, name) for name in OPTION_FIELDS}
    values = {k: v for k, v in {"title": args.title, "body": body, **fields}.items() if v is not None}
    for name, value in values.items():
        if isinstance(value, str):
            _check_utf8(value, "the body" if name == "body" else f"--{name.replace('_', '-')}", args)
    actor = "operator" if args.operator else "agent"
    daemon = daemon_of(settings)
    try:
        if daemon is not None:
            from agentmd.engine.backends import RemoteBackend
            from agentmd.engine.client import DaemonNotReached

            token = None
            if args.operator:  # operator writes carry the vault's operator token (engine/daemon/operator.py)
                from agentmd.engine.daemon.operator import ensure_token

                token = ensure_token(settings.state_dir)
            # the daemon reads the fields as `request_from_cli` does here (comma-separated lists included)
            try:
                result = RemoteBackend(daemon, actor, token).capture(values)
            except DaemonNotReached:  # it stopped since it was found, before anything was sent: written here
                result = _capture_here(settings, values, actor)
        else:
            result = _capture_here(settings, values, actor)
    except AgentmdError as exc:
        if args.json and raised_from(exc, "agentmd.engine.write.capture", "CaptureRefused"):
            emit(out, args, {"refused": True, "code": getattr(exc, "code", None), "error": str(exc)}, "")
        raise
    verb = "reinforced" if result.get("reinforced") else "captured"
    text = f"{verb} {result['path']} (status {result['status']}, indexed {str(result['indexed']).lower()})"
    for w in result.get("warnings", []):
        text += f"\n  warning: {w}"
    if result.get("note"):
        text += f"\n  note: {result['note']}"
    emit(out, args, result, text)
    return EXIT_OK


def _capture_here(settings: Any, values: dict[str, object], actor: str) -> CaptureAnswer:
    """No daemon runs: capture and commit in this process."""
    from agentmd.engine.backends import LocalBackend
    from agentmd.engine.write.request import request_from_cli

    request = request_from_cli(values)
    backend = LocalBackend(settings, actor=actor)
    try:
        return backend.capture(request)
    finally:
        backend.close()
