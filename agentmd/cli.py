"""The `agentmd` command line. Settings are resolved here, once, and passed down."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from agentmd import __version__
from agentmd.engine.client import DaemonClient, DaemonError
from agentmd.engine.daemon.instance import running_daemon
from agentmd.engine.errors import AgentmdError, UsageError
from agentmd.engine.fsutil import read_json
from agentmd.engine.git.gate import corpus_write_gate
from agentmd.engine.git.repo_init import init_git
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.evaluate import add_eval_parser
from agentmd.engine.search.graph import add_links_parser
from agentmd.engine.search.searcher import DEFAULT_MODE, MODES, SearchRequest, search
from agentmd.engine.settings import COMMIT_DEBOUNCE, DEFAULT_PORT, RECONCILE_INTERVAL, Settings, resolve
from agentmd.engine.write.capture import CaptureRefused, request_from_cli
from agentmd.engine.write.capture import field_names as capture_field_names
from agentmd.hooks.install import add_hook_parsers, add_hooks_install_parsers
from agentmd.hooks.recall.commands import add_recall_parsers
from agentmd.rules import check_file, decide, explain, load_contract

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_RED = 0, 1, 2, 3

EPILOG = """\
exit codes:
  0  success
  1  failure (the message says what went wrong and how to fix it)
  2  usage error (bad arguments, no vault configured)
  3  red: a check found a problem that needs attention

the vault comes from --vault, else $AGENTMD_VAULT, else `vault = "..."` in the config file
($XDG_CONFIG_HOME/agentmd/config.toml, or --config). The index and catalog live in --index, else
$XDG_CACHE_HOME/agentmd/<vault-id>/; deleting that folder costs one rebuild, never data.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def _common() -> _Parser:
    p = _Parser(add_help=False)
    p.add_argument("--vault", help="the vault folder")
    p.add_argument("--index", help="the cache folder holding the index and catalog")
    p.add_argument("--config", help="a config file to read instead of the default")
    p.add_argument("--json", action="store_true", help="print one JSON object for machines")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    return p


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = _Parser(
        prog="agentmd",
        description="Keep an Obsidian vault as searchable, git-backed memory for coding agents and their owner.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"agentmd {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("reindex", parents=[common], help="bring the index in line with the vault")
    p.add_argument("--from-scratch", action="store_true", help="drop the index and catalog and rebuild them")
    p.add_argument(
        "--allow-mass-delete", action="store_true", help="allow a pass that removes more than half the index"
    )
    p.set_defaults(func=cmd_reindex)

    p = sub.add_parser("search", parents=[common], help="search the vault")
    p.add_argument("query", nargs="+", help="words to search for")
    p.add_argument("--limit", type=int, default=10, help="results to return (default 10)")
    p.add_argument("--mode", default=DEFAULT_MODE, choices=MODES, help=f"how words combine (default: {DEFAULT_MODE})")
    p.add_argument("--per-note", type=int, default=1, help="sections of one note that may take result slots")
    p.add_argument("--explain", action="store_true", help="print each result's score trace")
    p.add_argument("--after", help="captured on or after this date (YYYY-MM-DD)")
    p.add_argument("--before", help="captured on or before this date (YYYY-MM-DD)")
    p.add_argument("--project", help="the project the search is for (other projects' notes rank lower)")
    p.add_argument("--include-archived", action="store_true", help="also return archived/superseded/staged notes")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("serve", parents=[common], help="run the daemon: watch, index, commit, serve on loopback")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"loopback port (default {DEFAULT_PORT})")
    p.add_argument(
        "--reconcile-interval", type=float, default=RECONCILE_INTERVAL, help="seconds between full passes (300)"
    )
    p.add_argument("--commit-debounce", type=float, default=COMMIT_DEBOUNCE, help="seconds of quiet before a commit")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("status", parents=[common], help="health of the index, git, queue and contract")
    p.add_argument("--port", type=int, help="the daemon's port (default: read from its state file)")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("gate", help="checks that bulk writes must pass")
    gsub = p.add_subparsers(dest="gate_command", metavar="GATE", parser_class=_Parser)
    g = gsub.add_parser("corpus-write", parents=[common], help="pass only when git is healthy and the tree clean")
    g.set_defaults(func=cmd_gate_corpus_write)

    p = sub.add_parser("init-git", parents=[common], help="make the vault a git repository with a first commit")
    p.set_defaults(func=cmd_init_git)

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
    p.add_argument("--instructions", help="your own filing instructions, kept on the note")
    p.add_argument("--operator", action="store_true", help="write as the vault's owner (alignment-level folders)")
    p.set_defaults(func=cmd_capture)

    p = sub.add_parser("door", help="who may write where")
    dsub = p.add_subparsers(dest="door_command", metavar="ACTION", parser_class=_Parser)
    d = dsub.add_parser("check", parents=[common], help="the door's verdict for a path, and the rule that decided")
    d.add_argument("path", help="vault-relative path of the note to write")
    d.add_argument("--actor", default="agent", choices=["agent", "operator", "phone"], help="who writes")
    d.add_argument("--existing", action="store_true", help="judge an edit of an existing file, not a creation")
    d.set_defaults(func=cmd_door_check)

    p = sub.add_parser("mcp", parents=[common], help="serve the two MCP tools over stdio")
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("probe", parents=[common], help="run the daemon's self-probe now")
    p.add_argument("--budget", type=float, default=5.0, help="seconds the round trip may take (default 5)")
    p.set_defaults(func=cmd_probe)

    add_eval_parser(sub, common)
    add_links_parser(sub, common)

    p = sub.add_parser("hook", help="agent hooks (Claude Code's hook protocol on stdin/stdout)")
    hook_sub = p.add_subparsers(dest="hook_command", metavar="HOOK", parser_class=_Parser)
    add_hook_parsers(hook_sub, common)
    add_recall_parsers(sub, common)
    add_hooks_install_parsers(sub, common)

    p = sub.add_parser("contract", help="the storage-rules contract")
    csub = p.add_subparsers(dest="contract_command", metavar="ACTION", parser_class=_Parser)
    c = csub.add_parser("check", parents=[common], help="validate a contract file (default: the vault's)")
    c.add_argument("file", nargs="?", help="the contract file to check")
    c.set_defaults(func=cmd_contract_check)
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    return resolve(vault=args.vault, index=args.index, config=args.config)


def _emit(out: TextIO, args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    if args.json:
        out.write(json.dumps(payload, ensure_ascii=False, indent=None) + "\n")
    else:
        out.write(text + ("\n" if text and not text.endswith("\n") else ""))


class _ProgressBar:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        if total == 0:
            return
        pct = done * 100 // total
        if pct == self.last and done != total:
            return
        self.last = pct
        filled = pct * 30 // 100
        self.stream.write(f"\rindexing [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}")
        if done == total:
            self.stream.write("\r" + " " * 60 + "\r")
        self.stream.flush()


def cmd_reindex(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = _settings(args)
    progress = _ProgressBar(err) if err.isatty() and not args.json else None
    with Store(settings.cache_dir, from_scratch=args.from_scratch) as store:
        for notice in store.notices:
            err.write(f"agentmd: {notice}\n")
        convention = load_contract(settings.vault, settings.contract_path).contract.link_convention
        report = reconcile(
            settings.vault,
            store,
            allow_mass_delete=args.allow_mass_delete,
            progress=progress,
            link_convention=convention,
        )
        docs = store.index.doc_count()
    payload = report.to_dict() | {"vault": str(settings.vault), "index": str(settings.cache_dir), "documents": docs}
    if report.refused:
        if args.json:
            _emit(out, args, payload, "")
        raise AgentmdError(f"reindex refused: {report.refused}")
    text = (
        f"{report.added} added, {report.updated} updated, {report.deleted} deleted, {report.unchanged} unchanged, "
        f"{len(report.errors)} errors in {report.seconds:.2f}s ({docs} notes indexed)"
    )
    for e in report.errors:
        text += f"\n  error: {e['path']}: {e['error']}"
    for s in report.skipped:
        text += f"\n  skipped: {s['path']}: {s['reason']}"
    _emit(out, args, payload, text)
    return EXIT_FAILURE if report.errors else EXIT_OK


def cmd_search(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = _settings(args)
    contract = load_contract(settings.vault, settings.contract_path).contract
    request = SearchRequest(
        query=" ".join(args.query),
        limit=args.limit,
        mode=args.mode,
        after=args.after,
        before=args.before,
        project=args.project,
        include_archived=args.include_archived,
        per_note=args.per_note,
        explain=args.explain,
    )
    with Store(settings.cache_dir) as store:
        if store.catalog.count() == 0:
            reconcile(settings.vault, store, link_convention=contract.link_convention)
        response = search(store.index, contract, request, store.catalog)
    lines = []
    for n, r in enumerate(response["results"], 1):
        flag = f"  [{', '.join(r['penalties'])}]" if r["penalties"] else ""
        lines.append(f"{n:>2}. {r['path']}  score {r['score']:.3f}  captured {r['captured'][:10]}{flag}")
        if r["snippet"]:
            lines.append(f"    {r['snippet']}")
        if "explain" in r:
            ex = r["explain"]
            fields = ", ".join(f"{k} {v:.3f}" for k, v in ex["fields"].items())
            lines.append(f"    explain: raw {r['raw_score']:.4f} x penalty {r['penalty']:.3f}; BM25 by field: {fields}")
            if ex["multipliers"]:
                lines.append("    multipliers: " + ", ".join(f"{k} {v}" for k, v in ex["multipliers"].items()))
            if ex["fusion_ranks"]:
                lines.append(
                    "    fusion ranks: " + "; ".join(f"[{q}] #{rank}" for q, rank in ex["fusion_ranks"].items())
                )
    hidden = {k: response[k] for k in ("archived_hidden", "superseded_hidden", "staged_hidden") if response[k]}
    if hidden:
        lines.append("hidden: " + ", ".join(f"{v} {k.replace('_hidden', '')}" for k, v in hidden.items()))
    if response["note"]:
        lines.append(f"note: {response['note']}")
    if not lines:
        lines.append("no results")
    _emit(out, args, response, "\n".join(lines))
    return EXIT_OK


def cmd_serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.daemon.service import (
        Daemon,  # the web server and MCP stack load only for the commands that use them
    )

    settings = _settings(args)
    logging.getLogger("agentmd").setLevel(logging.INFO)
    daemon = Daemon(
        settings,
        port=args.port,
        reconcile_interval=args.reconcile_interval,
        commit_debounce=args.commit_debounce,
    )
    return daemon.run_forever()


def _daemon_status(settings: Settings, port: int | None) -> dict[str, Any] | None:
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
    from agentmd.engine.daemon.status import compute_status, render

    settings = _settings(args)
    status = _daemon_status(settings, args.port)
    if status is None:
        contract = load_contract(settings.vault, settings.contract_path)
        commit_state = read_json(settings.state_dir / "commit-state.json")
        with Store(settings.cache_dir) as store:
            status = compute_status(settings, store, contract, daemon={"running": False}, commit_state=commit_state)
    _emit(out, args, status, render(status))
    return EXIT_RED if status.get("red") else EXIT_OK


def cmd_gate_corpus_write(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = _settings(args)
    result = corpus_write_gate(settings.vault)
    payload = {"gate": "corpus-write", "ok": result.ok, "reason": result.reason, "detail": result.detail}
    if result.ok:
        _emit(out, args, payload, "corpus-write gate: pass")
        return EXIT_OK
    _emit(out, args, payload, f"corpus-write gate: refused ({result.reason})\n{result.detail}")
    return EXIT_FAILURE


def cmd_init_git(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = _settings(args)
    summary = init_git(settings.vault)
    _emit(out, args, {"vault": str(settings.vault), "summary": summary}, summary)
    return EXIT_OK


def cmd_capture(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.backends import LocalBackend, backend_for

    settings = _settings(args)
    if args.body is not None:
        body = args.body
    elif args.body_file:
        try:
            body = Path(args.body_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"could not read --body-file {args.body_file}: {exc}") from None
    elif not sys.stdin.isatty():
        body = sys.stdin.read()
    else:
        body = ""
    fields = {name: getattr(args, name) for name in capture_field_names() if name not in ("title", "body")}
    request = request_from_cli({"title": args.title, "body": body, **fields})
    backend = backend_for(settings, actor="operator" if args.operator else "agent")
    try:
        result = backend.capture(request)
    except CaptureRefused as exc:
        if args.json:
            _emit(out, args, {"refused": True, "code": exc.code, "error": str(exc)}, "")
        raise
    finally:
        if isinstance(backend, LocalBackend):
            backend.close()
    verb = "reinforced" if result.get("reinforced") else "captured"
    text = f"{verb} {result['path']} (status {result['status']}, indexed {str(result['indexed']).lower()})"
    for w in result.get("warnings", []):
        text += f"\n  warning: {w}"
    if result.get("note"):
        text += f"\n  note: {result['note']}"
    _emit(out, args, result, text)
    return EXIT_OK


def cmd_door_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    settings = _settings(args)
    contract = load_contract(settings.vault, settings.contract_path).contract
    decision = decide(settings.vault, args.path, contract, actor=args.actor, creating=not args.existing)
    payload = {
        "path": decision.path,
        "allowed": decision.allowed,
        "level": decision.level,
        "rule": decision.rule,
        "reason": decision.reason,
    }
    _emit(out, args, payload, explain(decision))
    return EXIT_OK if decision.allowed else EXIT_FAILURE


def cmd_mcp(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.backends import LocalBackend, backend_for
    from agentmd.engine.daemon.mcp_server import build_mcp

    settings = _settings(args)
    backend = backend_for(settings)
    try:
        build_mcp(backend).run("stdio")
    finally:
        if isinstance(backend, LocalBackend):
            backend.close()
    return EXIT_OK


def cmd_probe(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.backends import RemoteBackend

    settings = _settings(args)
    info = running_daemon(settings.state_dir)
    if not info or not info.get("port"):
        raise AgentmdError("the self-probe checks the running daemon; start `agentmd serve` first")
    result = RemoteBackend(int(info["port"])).probe(args.budget)
    if result.get("ok"):
        _emit(out, args, result, f"probe ok (round trip {result.get('round_trip_ms')} ms, note {result.get('path')})")
        return EXIT_OK
    _emit(out, args, result, f"probe FAILED: {result.get('error')}")
    return EXIT_RED


def cmd_contract_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.file:
        path = Path(args.file)
        errors = check_file(path)
        source = str(path)
    else:
        settings = _settings(args)
        state = load_contract(settings.vault, settings.contract_path)
        errors, source = list(state.errors), state.source
    payload = {"source": source, "valid": not errors, "errors": errors}
    if errors:
        _emit(out, args, payload, f"{source}: invalid\n" + "\n".join(f"  - {e}" for e in errors))
        return EXIT_FAILURE
    _emit(out, args, payload, f"{source}: valid")
    return EXIT_OK


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    argv_list = list(sys.argv[1:] if argv is None else argv)
    try:
        with contextlib.redirect_stdout(out):
            args = parser.parse_args(argv)
        logging.basicConfig(
            level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
            format="agentmd %(levelname)s %(name)s: %(message)s",
            stream=err,
        )
        if not getattr(args, "func", None):
            parser.print_help(out)
            return EXIT_USAGE
        return int(args.func(args, out, err))
    except AgentmdError as exc:
        err.write(f"agentmd: {exc}\n")
        if argv_list[:1] == ["hook"]:
            return EXIT_OK  # a hook must never block or fail the agent's session, even when misconfigured
        return exc.exit_code
    except KeyboardInterrupt:
        err.write("agentmd: interrupted\n")
        return 130
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0)


if __name__ == "__main__":
    sys.exit(main())
