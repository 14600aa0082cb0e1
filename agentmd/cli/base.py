"""What every command of the command line shares: the parser class, the common options, the exit codes and
the settings resolved once from them."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from agentmd.engine.errors import UsageError

if TYPE_CHECKING:
    from agentmd.engine.client import Located
    from agentmd.engine.index.store import Store
    from agentmd.engine.settings import Settings
    from agentmd.rules import Contract

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_RED = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped with Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a command whose reader went away


class Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are `UsageError`s (one line and exit 2), never argparse's own exit."""

    _given: tuple[str, ...] = ()  # the words this parser was given (a sub-command's parser, the rest of the line)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._given = tuple(str(a) for a in (sys.argv[1:] if args is None else args))
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> None:  # type: ignore[override]
        _, _, missing = message.partition("the following arguments are required: ")
        words_missing = any(not name.startswith("-") for name in missing.split(", ")) if missing else False
        # only when the command line holds such a word that is not one of this command's options
        dashed = any(
            a.startswith("-") and a != "--" and a.split("=", 1)[0] not in self._option_string_actions
            for a in self._given
        )
        if (words_missing and dashed) or "expected one argument" in message:
            # a word that starts with a dash (a pasted `-x`, `--no-verify`) was read as an option
            message += "; words that start with `-` go after `--` (e.g. `agentmd search -- --no-verify`)"
        wrong = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if wrong:
            import difflib

            choices = re.findall(r"'([^']*)'", wrong.group(2))
            close = difflib.get_close_matches(wrong.group(1), choices, n=1, cutoff=0.6)
            message = f"{message}; did you mean `{close[0]}`?" if close else message
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every argument added; its default width comes from
        # shutil.get_terminal_size, and importing shutil (with the compression modules it loads) is a good part
        # of a light command's start. The same width, found the way shutil finds it.
        formatter: Any = self.formatter_class
        return formatter(prog=self.prog, width=help_width())


def number(text: str) -> float:
    """A command-line number: finite (`nan`, `inf` and `1e400` are refused, as no option means them)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def positive(text: str) -> int:
    """A command-line count that must be at least 1 (a budget, a number of entries)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a count; use 1 or more")
    return value


def port(text: str) -> int:
    """A TCP port on the command line: 1 to 65535, or 0 for `serve` to take any free one."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port: use 1 to 65535 (0: any free port)")
    return value


def help_width() -> int:
    """The terminal's columns less two, as argparse takes them from shutil.get_terminal_size: $COLUMNS when it
    is a positive number, else the terminal on standard output, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns - 2


class Handler(Protocol):
    """A command: its parsed arguments, standard output and standard error in; the exit code out."""

    def __call__(self, args: argparse.Namespace, out: TextIO, err: TextIO) -> int: ...


def common_options() -> Parser:
    """The options every command that reads a vault takes (a parent parser for its sub-parsers)."""
    p = Parser(add_help=False)
    p.add_argument("--vault", help="the vault folder")
    p.add_argument("--index", help="the cache folder holding the index and catalog")
    p.add_argument("--config", help="a config file to read instead of the default")
    p.add_argument("--json", action="store_true", help="print one JSON object for machines")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    return p


def subcommands(parser: argparse.ArgumentParser, dest: str, metavar: str) -> Any:
    """A command group's table of sub-commands, whose parsers are of the group's own parser class."""
    return parser.add_subparsers(dest=dest, metavar=metavar, parser_class=type(parser))


def raised_from(exc: BaseException, module: str, name: str) -> bool:
    """Whether `exc` is an instance of the class `name` of `module`, without importing that module: an
    exception of a class whose module this process never loaded cannot have been raised."""
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(cls, type) and isinstance(exc, cls)


def daemon_of(settings: Settings) -> Located | None:
    """The daemon running for this vault (through the vault lease, whatever its state folder, else this state
    folder's record); None when none runs (or one starting names no port yet). Asked through the light client
    alone, so a command the daemon answers loads nothing of the engine."""
    from agentmd.engine.client import running

    return running(settings.state_dir, settings.vault)


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings of this run, resolved once from --vault, --index and --config (then env, then config)."""
    from agentmd.engine.settings import resolve

    return resolve(vault=args.vault, index=args.index, config=args.config)


def fresh_store(settings: Settings, contract: Contract | None = None) -> Store:
    """The store, brought up to date when no daemon runs (a running daemon's indexer keeps it current; one
    found through the vault lease keeps its own). `contract`: the one the caller read, else read here."""
    from agentmd.engine.client import running_port
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.engine.index.store import Store
    from agentmd.rules import load_contract

    store = Store(settings.cache_dir)
    try:
        if not running_port(settings.state_dir):
            contract = contract or load_contract(settings.vault, settings.contract_path).contract
            reconcile(
                settings.vault,
                store,
                link_convention=contract.link_convention,
                sync_patterns=contract.sync_tool_patterns,
            )
    except BaseException:
        store.close()
        raise
    return store
