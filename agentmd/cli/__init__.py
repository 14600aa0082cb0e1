"""The `agentmd` command line: the composition root. Settings are resolved here, once, and passed down.

`COMMANDS` is the one registry of every subcommand, in the order `agentmd --help` lists them. Each entry
adds one top-level command (or group) to the parser; its argparse definition and its handler live in the
module of this package named for the command group. A handler takes the parsed arguments, standard output
and standard error, and returns the exit code; engine modules load inside the handlers, so `agentmd --help`
and a mistyped command stay fast, and the web server and MCP stack load only for `serve` and `mcp`. Building
the parser loads no engine module beyond the errors (the defaults it shows are written out in the command
modules). A command a running daemon answers (`search`, `capture`, `status`, `recall`, `probe`) asks it
through the light client (engine/client.py) and loads nothing else of the engine; without a daemon it loads
what its work needs. tests/cli/test_cli_imports.py checks both; bench/cli_bench.py measures the start.

`main` is the one place a command ends: every package's error becomes one line on stderr and an exit code
(see `failure`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from agentmd import __version__
from agentmd.cli import (
    access,
    capture,
    curate,
    daemon,
    enrich,
    evaluation,
    failure,
    git,
    hooks,
    index,
    jobs,
    lifecycle,
    links,
    maps,
    recall,
    rules,
    service,
    sync,
    undo,
)
from agentmd.cli.base import EXIT_OK, EXIT_USAGE, Parser, common_options, subcommands
from agentmd.engine.errors import UsageError

Register = Callable[[Any, argparse.ArgumentParser], Any]
"""Adds a command to the top-level sub-parsers, given the parent parser of the common options."""

COMMANDS: tuple[Register, ...] = (
    index.add_reindex,
    index.add_search,
    daemon.add_serve,
    daemon.add_status,
    git.add_gate,
    git.add_init_git,
    capture.add_capture,
    curate.add_curation_parsers,  # `queue`, `confirm`, `retire`, `promote`, `ingest`, `log`
    enrich.add_enrich_parser,
    enrich.add_lessons_parser,
    maps.add_maps_parser,
    rules.add_door,
    daemon.add_mcp,
    access.add_access_parsers,  # `token path | rotate`, `mcp-config`
    daemon.add_probe,
    evaluation.add_eval_parser,
    links.add_links_parser,
    hooks.add_hook_group,  # `hook session-start`, `hook worktree-guard`
    recall.add_recall_parsers,  # `hook recall` (into the group above), `recall`, `usage`
    hooks.add_hooks_install_parsers,
    rules.add_contract,
    rules.add_rules,  # `rules [--history]`
    service.add_service_parser,  # `service install | uninstall | status`
    jobs.add_jobs_parser,  # `jobs list | run | history`
    sync.add_sync_parsers,  # `remote add | show`, `sync`, `conflicts`
    undo.add_undo_parsers,  # `undo`, `revert`, `restore`
    lifecycle.add_lifecycle_parser,  # `lifecycle [--dry-run | --journal]`
)

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


EVERY = "*"  # `build_parser(only=EVERY)`: every command's own parser, whole


def build_parser(commands: Sequence[Register] = COMMANDS, only: str | None = EVERY) -> argparse.ArgumentParser:
    """The whole command line: every command of `commands`, each with the common options. With `only` a command
    name (or None), the other commands are listed by name and help alone, their arguments never declared: one
    run parses one command, and declaring some 220 arguments for it costs a start about 15 ms."""
    with untranslated():
        return _build(commands, only)


class _Skipped:
    """What a command's registration gets back for a parser this run will not use: every call is taken and
    does nothing (its arguments, groups, defaults, sub-commands)."""

    _actions: tuple[object, ...] = ()

    def __getattr__(self, _name: str) -> Any:
        return self._nothing

    def _nothing(self, *_args: object, **_kwargs: object) -> _Skipped:
        return self


class _OnlyOne:
    """The top-level table of sub-commands as a registration sees it, when only one command will be parsed:
    that command's parser is made whole; the others are listed by name and help only when the name given is
    none of them (`--help`, no command, a mistyped one), so that the listing or the error can name them."""

    def __init__(self, sub: Any, only: str | None) -> None:
        self._sub, self._only = sub, only
        self.choices = sub.choices
        self.listed: list[tuple[str, dict[str, Any]]] = []

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name == self._only or self._only in kwargs.get("aliases", ()):
            return self._sub.add_parser(name, **kwargs)
        self.listed.append((name, {k: v for k, v in kwargs.items() if k in ("help", "aliases")}))
        return _Skipped()

    def list_the_others(self) -> None:
        """Add the commands only listed, in their order, unless the one asked for was found."""
        if self._only is None or self._only not in self.choices:
            for name, kwargs in self.listed:
                if name not in self.choices:  # a group two registrations share (`hook`) is listed once
                    self._sub.add_parser(name, add_help=False, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sub, name)


@contextlib.contextmanager
def untranslated() -> Iterator[None]:
    """argparse passes its own strings through gettext, which searches the disk for a message catalog on every
    call and finds none (Python ships none for argparse): about 200 calls while the command line's parsers are
    built, 30 ms of a start under a UTF-8 locale (bench/RESULTS.md). `LANGUAGE=C` while they are built tells
    gettext there is nothing to look for; the environment is put back before any command runs."""
    import os

    before = os.environ.get("LANGUAGE")
    os.environ["LANGUAGE"] = "C"
    try:
        yield
    finally:
        if before is None:
            del os.environ["LANGUAGE"]
        else:
            os.environ["LANGUAGE"] = before


# the common options (engine/cli/base.py `common_options`) a person may also give before the command's name:
# (flag, its value's name, or "" for a flag that takes none)
GLOBAL_OPTIONS = (("--vault", "vault"), ("--index", "index"), ("--config", "config"), ("--json", ""), ("--verbose", ""))
SUPPRESSED = argparse.SUPPRESS  # listed in each command's own help, where they are documented


def command_named(argv: Sequence[str]) -> str | None:
    """The command's name in `argv`: its first word after any common options given before it."""
    takes_value = {flag for flag, value in GLOBAL_OPTIONS if value}
    flags = {flag for flag, value in GLOBAL_OPTIONS if not value} | {"-v"}
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in takes_value:
            i += 2
        elif word in flags or word.split("=", 1)[0] in takes_value:
            i += 1
        else:
            return None if word.startswith("-") else word
    return None


def _global_options(args: argparse.Namespace) -> None:
    """The common options given before the command, where the command's own are not given."""
    for flag, _value in GLOBAL_OPTIONS:
        name = flag.lstrip("-")
        given = getattr(args, "global_" + name, None)
        if given is not None and not getattr(args, name, None):
            setattr(args, name, given)


def _build(commands: Sequence[Register], only: str | None) -> argparse.ArgumentParser:
    common = common_options()
    parser = Parser(
        prog="agentmd",
        description="Keep an Obsidian vault as searchable, git-backed memory for coding agents and their owner.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"agentmd {__version__}")
    for flag, value in GLOBAL_OPTIONS:  # given before the command, as after it (`agentmd --vault V status`)
        names = ("-v", flag) if flag == "--verbose" else (flag,)
        dest = "global_" + flag.lstrip("-")
        if value:
            parser.add_argument(*names, dest=dest, default=argparse.SUPPRESS, metavar=value.upper(), help=SUPPRESSED)
        else:
            parser.add_argument(*names, dest=dest, action="store_true", default=argparse.SUPPRESS, help=SUPPRESSED)
    sub = subcommands(parser, "command", "COMMAND")
    table = sub if only == EVERY else _OnlyOne(sub, only)
    for register in commands:
        register(table, common)
    if isinstance(table, _OnlyOne):
        table.list_the_others()
    return parser


def main(
    argv: Sequence[str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    commands: Sequence[Register] = COMMANDS,
) -> int:
    """Run one command; its exit code. Nothing it raises gets past here as a traceback."""
    out = out or sys.stdout
    err = err or sys.stderr
    argv_list = list(sys.argv[1:] if argv is None else argv)
    is_hook = argv_list[:1] == ["hook"]
    verbose = "-v" in argv_list or "--verbose" in argv_list
    try:
        named = command_named(argv_list)
        parser = build_parser(commands, only=named)
        with contextlib.redirect_stdout(out):
            args, extra = parser.parse_known_args(argv_list)
        _global_options(args)
        if extra:  # named with the command they were given to, and its help
            command = f"agentmd {named}" if named and getattr(args, "func", None) else "agentmd"
            raise UsageError(f"{command}: unrecognized arguments: {' '.join(extra)} (see `{command} --help`)")
        import logging  # after parsing: `--help` and argument errors end before anything logs

        logging.basicConfig(
            level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
            format="agentmd %(levelname)s %(name)s: %(message)s",
            stream=err,
        )
        if not getattr(args, "func", None):
            parser.print_help(out)
            return EXIT_USAGE
        code = int(args.func(args, out, err))
        out.flush()  # a reader that went away shows up here, not in the interpreter's last flush
        return code
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0)
    except (Exception, KeyboardInterrupt) as exc:
        if isinstance(exc, BrokenPipeError) and out is sys.stdout:
            failure.silence_stdout()
        code = failure.report(exc, err, verbose=verbose)
        if is_hook:
            return EXIT_OK  # a hook must never block or fail the agent's session, even when misconfigured
        return code


if __name__ == "__main__":
    sys.exit(main())
