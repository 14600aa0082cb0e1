"""Shared by the enrichment tests: the scripted stand-in for the model CLI (tests/bin/fake_model_cli.py), a
config that points the claude adapter at it, and readers of a run's report and of a note as it stands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentmd.vault_schema import parse_note, split_frontmatter

FAKE = Path(__file__).parent / "bin" / "fake_model_cli.py"


def answer(**over: object) -> dict:
    base = {
        "title": "Deploys run on GitHub Actions",
        "type": "fact",
        "summary": "Every deploy runs through the GitHub Actions pipeline.",
        "tags": ["deploy", "ci"],
        "aliases": [],
        "related": [],
        "importance": 3,
        "confidence": 0.9,
    }
    base.update(over)
    return base


class Model:
    """The stand-in's rules (the first whose `match` occurs in the prompt answers) and its call log."""

    def __init__(self, rules: Path, log: Path) -> None:
        self.rules_file, self.log = rules, log

    @classmethod
    def installed(cls, tmp_path: Path, monkeypatch: Any, *rules: dict) -> Model:
        """The stand-in the adapter will call in this test (its rules file and call log under `tmp_path`, named
        by the environment), with `rules` written when given."""
        monkeypatch.setenv("FAKE_MODEL_LOG", str(tmp_path / "calls.jsonl"))
        monkeypatch.setenv("FAKE_MODEL_SCRIPT", str(tmp_path / "rules.json"))
        model = cls(tmp_path / "rules.json", tmp_path / "calls.jsonl")
        if rules:
            model.rules(*rules)
        return model

    def rules(self, *items: dict) -> None:
        self.rules_file.write_text(json.dumps(list(items)), encoding="utf-8")

    def calls(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]


def config(tmp_path: Path, **lines: object) -> Path:
    path = tmp_path / "config.toml"
    values = {"program": str(FAKE), "call_timeout": 20, **lines}
    body = "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())
    path.write_text(f"[enrich]\n{body}", encoding="utf-8")
    return path


def run(cli: Any, vault: Path, cfg: Path, *extra: str) -> dict:
    r = cli(
        "enrich", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--config", str(cfg), "--json", *extra
    )
    assert r.code == 0, r.err + r.out
    return r.json()


def text_run(cli: Any, vault: Path, cfg: Path, *extra: str) -> str:
    r = cli("enrich", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--config", str(cfg), *extra)
    assert r.code == 0, r.err + r.out
    return r.out


def body(vault: Path, rel: str) -> bytes:
    text = (vault / rel).read_bytes().decode("utf-8")
    return split_frontmatter(text).body.encode("utf-8")


def fm(vault: Path, rel: str) -> dict:
    parsed = parse_note(rel, (vault / rel).read_bytes(), 0)
    assert parsed.frontmatter_error is None
    return dict(parsed.frontmatter)


def outcomes(report: dict) -> dict[str, str]:
    return {n["path"]: n["outcome"] for n in report["notes"]}


def ledger_file(vault: Path) -> Path:
    """The ledger of the vault's state folder, as the CLI resolves it for `--index vault/../idx`."""
    from agentmd.engine.settings import resolve

    return resolve(vault=str(vault), index=str(vault.parent / "idx")).state_dir / "enrich" / "ledger.json"
