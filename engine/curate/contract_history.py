"""The committed versions of the vault's storage-rules contract, newest first, each with its two hashes.

Read from git history (the file's own log, following renames). Each version is parsed as the contract loader
would parse it today (merged over the packaged default of this installation), so the hashes say what that
version would mean now: `rules_hash` over its settings, `judgment_hash` over what an enrichment judgment reads
(rules/contract/hashing.py). A version that does not parse carries its errors instead; a commit that deleted
the file carries the packaged default's hashes, which applied from then on. Comparing a version's
`judgment_hash` with today's says whether an edit re-owes the judgments made under it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmd.engine.curate.changelog import history
from agentmd.engine.errors import AgentmdError
from agentmd.engine.git.runner import GitCli, GitMissing
from agentmd.rules import default_contract
from agentmd.rules.contract import contract_from_text


@dataclass(frozen=True)
class ContractVersion:
    sha: str
    at: str  # the author date, ISO 8601
    origin: str  # the commit's `origin:` trailer, `manual` for a commit without one
    host: str
    path: str  # the file's path in that commit (it may have been renamed since)
    removed: bool  # the commit deleted the file: the packaged default applied from then on
    rules_hash: str | None  # None when the version did not parse
    judgment_hash: str | None
    errors: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "sha": self.sha,
            "at": self.at,
            "origin": self.origin,
            "host": self.host,
            "path": self.path,
            "removed": self.removed,
            "rules_hash": self.rules_hash,
            "judgment_hash": self.judgment_hash,
            "errors": list(self.errors),
        }


def _text_at(git: GitCli, sha: str, path: str) -> tuple[str | None, str | None]:
    """(the file's text in commit `sha`, None) or (None, why it could not be read)."""
    run = git.run("cat-file", "blob", f"{sha}:{path}", optional_locks=False)
    if run.code != 0:
        return None, f"{path} could not be read from commit {sha[:10]}: {run.why()}"
    try:
        return run.out.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return None, f"{path} at {sha[:10]} is not UTF-8 (bad byte at offset {exc.start})"


def contract_history(vault: Path, path: str) -> list[ContractVersion]:
    """Every committed version of the contract file at vault-relative `path`, newest first.

    Raises AgentmdError when the vault's git history cannot be read (no repository, no git)."""
    changes = history(vault, path=path)  # oldest first for one path
    git = GitCli(vault)
    default = default_contract()
    versions: list[ContractVersion] = []
    current = path
    for change in reversed(changes):
        status, at_path = change.files[0] if change.files else ("", current)
        current = at_path
        if status == "D":
            versions.append(
                ContractVersion(
                    change.sha,
                    change.at,
                    change.origin,
                    change.host,
                    at_path,
                    True,
                    default.rules_hash,
                    default.judgment_hash,
                )
            )
            continue
        try:
            text, problem = _text_at(git, change.sha, at_path)
        except GitMissing as exc:
            raise AgentmdError(f"git is not available ({exc}); the contract's history is read from git") from None
        errors: tuple[str, ...] = (problem,) if problem else ()
        rules = judgment = None
        if text is not None:
            state = contract_from_text(text, f"{at_path} at {change.sha[:10]}")
            errors = state.errors
            if not state.halted:
                rules, judgment = state.contract.rules_hash, state.contract.judgment_hash
        versions.append(
            ContractVersion(change.sha, change.at, change.origin, change.host, at_path, False, rules, judgment, errors)
        )
    return versions
