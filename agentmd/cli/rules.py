"""`agentmd door check` and `agentmd contract check`: who may write where, and whether a storage-rules
contract is valid."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from agentmd.cli.base import EXIT_FAILURE, EXIT_OK, settings_of, subcommands
from agentmd.cli.output import emit


def add_door(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("door", help="who may write where")
    dsub = subcommands(p, "door_command", "ACTION")
    d = dsub.add_parser("check", parents=[common], help="the door's verdict for a path, and the rule that decided")
    d.add_argument("path", help="vault-relative path of the note to write")
    d.add_argument("--actor", default="agent", choices=["agent", "operator", "phone"], help="who writes")
    d.add_argument("--existing", action="store_true", help="judge an edit of an existing file, not a creation")
    d.set_defaults(func=cmd_door_check)


def add_contract(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("contract", help="the storage-rules contract")
    csub = subcommands(p, "contract_command", "ACTION")
    c = csub.add_parser("check", parents=[common], help="validate a contract file (default: the vault's)")
    c.add_argument("file", nargs="?", help="the contract file to check")
    c.set_defaults(func=cmd_contract_check)


def cmd_door_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.rules import decide, explain, load_contract

    settings = settings_of(args)
    contract = load_contract(settings.vault, settings.contract_path).contract
    decision = decide(settings.vault, args.path, contract, actor=args.actor, creating=not args.existing)
    payload = {
        "path": decision.path,
        "allowed": decision.allowed,
        "level": decision.level,
        "rule": decision.rule,
        "reason": decision.reason,
    }
    emit(out, args, payload, explain(decision))
    return EXIT_OK if decision.allowed else EXIT_FAILURE


def cmd_contract_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.rules import check_file, load_contract

    if args.file:
        path = Path(args.file)
        errors = check_file(path)
        source = str(path)
    else:
        settings = settings_of(args)
        state = load_contract(settings.vault, settings.contract_path)
        errors, source = list(state.errors), state.source
    payload = {"source": source, "valid": not errors, "errors": errors}
    if errors:
        emit(out, args, payload, f"{source}: invalid\n" + "\n".join(f"  - {e}" for e in errors))
        return EXIT_FAILURE
    emit(out, args, payload, f"{source}: valid")
    return EXIT_OK
