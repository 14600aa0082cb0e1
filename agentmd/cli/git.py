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
    from agentmd.engine.git.repo_init import init_git

    settings = settings_of(args)
    summary = init_git(settings.vault)
    emit(out, args, {"vault": str(settings.vault), "summary": summary}, summary)
    return EXIT_OK
