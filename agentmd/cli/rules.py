"""`agentmd door check`, `agentmd contract check` and `agentmd rules`: who may write where, whether a
storage-rules contract is valid, and the contract in effect with its hashes and its committed history."""

from __future__ import annotations

import argparse
import os
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


def add_rules(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "rules",
        parents=[common],
        help="the storage-rules contract in effect: its types, deprecations and two hashes",
        description=(
            "The contract in effect and its two hashes: the rules hash (over its settings; rewording the prose "
            "leaves it as it is) and the judgment hash (over the type names and deprecations, which enrichment's "
            "judgments are keyed to). --history lists every committed version of the vault's contract file, "
            "newest first, with both hashes of each."
        ),
    )
    p.add_argument("--history", action="store_true", help="every committed version of the contract file")
    p.set_defaults(func=cmd_rules)


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
    from pathlib import Path

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


def cmd_rules(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from agentmd.rules import load_contract

    settings = settings_of(args)
    if args.history:
        return _history(args, out, settings)
    state = load_contract(settings.vault, settings.contract_path)
    contract = state.contract
    payload = {
        "source": state.source,
        "halted": state.halted,
        "errors": list(state.errors),
        "rules_hash": contract.rules_hash,
        "judgment_hash": contract.judgment_hash,
        "types": dict(contract.types),
        "deprecations": dict(contract.deprecations),
    }
    lines = [f"{state.source}: " + ("halted" if state.halted else "in effect")]
    if state.halted:
        lines += [f"  - {e}" for e in state.errors]
        lines.append("  the packaged default's values apply until it is fixed; the hashes below are theirs")
    lines += [
        f"rules hash     {contract.rules_hash}",
        f"judgment hash  {contract.judgment_hash}",
        f"types          {', '.join(sorted(contract.types))}",
    ]
    if contract.deprecations:
        retired = ", ".join(f"{old} -> {new}" for old, new in sorted(contract.deprecations.items()))
        lines.append(f"retired        {retired}")
    emit(out, args, payload, "\n".join(lines))
    return EXIT_FAILURE if state.halted else EXIT_OK


def _history(args: argparse.Namespace, out: TextIO, settings: Any) -> int:
    from pathlib import Path

    from agentmd.engine.curate.contract_history import contract_history
    from agentmd.engine.errors import UsageError
    from agentmd.rules.contract import contract_path

    target = contract_path(settings.vault, settings.contract_path)
    assert target is not None  # a vault is always set
    vault = settings.vault.resolve()
    try:
        rel = Path(os.path.abspath(target)).resolve().relative_to(vault).as_posix()
    except ValueError:
        raise UsageError(
            f"the contract file {target} is outside the vault {vault}, so its history is not in the vault's git"
        ) from None
    versions = contract_history(vault, rel)
    payload = {"path": rel, "versions": [v.to_dict() for v in versions]}
    if not versions:
        emit(out, args, payload, f"{rel}: no committed version (the packaged default applies until one is committed)")
        return EXIT_OK
    lines = [f"{rel}: {len(versions)} committed version(s), newest first"]
    for v in versions:
        head = f"  {v.sha[:10]}  {v.at}  origin: {v.origin}"
        if v.path != rel:
            head += f"  (as {v.path})"
        lines.append(head)
        if v.removed:
            lines.append(f"    removed; the packaged default applied: rules {v.rules_hash}  judgment {v.judgment_hash}")
        elif v.rules_hash is None:
            lines += [f"    does not parse: {e}" for e in v.errors]
        else:
            lines.append(f"    rules {v.rules_hash}  judgment {v.judgment_hash}")
    emit(out, args, payload, "\n".join(lines))
    return EXIT_OK
