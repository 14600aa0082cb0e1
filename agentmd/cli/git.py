"""`agentmd init-git` and `agentmd gate corpus-write`: the vault as a git repository, and the check that bulk
writes must pass."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from agentmd.cli.base import EXIT_FAILURE, EXIT_OK, settings_of, subcommands
from agentmd.cli.output import emit


def add_gate(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("gate", help="checks that bulk writes must pass")
    gsub = subcommands(p, "gate_command", "GATE")
    g = gsub.add_parser("corpus-write", parents=[common], help="pass only when git is healthy and the tree clean")
    g.set_defaults(func=cmd_gate_corpus_write)


def add_init_git(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("init-git", parents=[common], help="make the vault a git repository with a first commit")
    p.set_defaults(func=cmd_init_git)


def cmd_gate_corpus_write(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.git.gate import corpus_write_gate

    settings = settings_of(args)
    result = corpus_write_gate(settings.vault)
    payload = {"gate": "corpus-write", "ok": result.ok, "reason": result.reason, "detail": result.detail}
    if result.ok:
        emit(out, args, payload, "corpus-write gate: pass")
        return EXIT_OK
    emit(out, args, payload, f"corpus-write gate: refused ({result.reason})\n{result.detail}")
    return EXIT_FAILURE


def cmd_init_git(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.engine.errors import UsageError
    from agentmd.engine.git.repo_init import init_git
    from agentmd.engine.settings import resolve

    # a new vault's folder is made here (its parent must exist): the set-up's first step needs no mkdir of its own
    settings = resolve(vault=args.vault, index=args.index, config=args.config, require_vault=False)
    made = False
    if not settings.vault.exists():
        if not settings.vault.parent.is_dir():
            raise UsageError(
                f"vault {settings.vault}: its folder {settings.vault.parent} does not exist either; check the path"
            )
        settings.vault.mkdir()
        made = True
    elif not settings.vault.is_dir():
        raise UsageError(f"vault {settings.vault} is a file, not a folder; check the path")
    summary = init_git(settings.vault)
    if made:
        summary = f"made the folder {settings.vault}; {summary}"
    emit(out, args, {"vault": str(settings.vault), "made_folder": made, "summary": summary}, summary)
    return EXIT_OK
