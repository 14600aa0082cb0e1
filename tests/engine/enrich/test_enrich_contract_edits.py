"""Enrichment's judgments are keyed to the contract's judgment hash (type names and deprecations): an edit to any
other part of the contract (a threshold, a type's folder, ranking, the prose) re-owes nothing, a new type or a
new deprecation re-owes every judgment once, and a note typed with a retired type is retyped to its replacement.
End to end through the real CLI, a real git vault and index, and the scripted stand-in for the model CLI."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from conftest import REPO
from curate_helpers import note
from daemon_helpers import git, make_repo
from enrich_helpers import Model, answer, config, fm, outcomes, run

OLD = (dt.datetime.now(dt.UTC) - dt.timedelta(days=5)).isoformat(timespec="seconds")
OTTERS = "memory/2026/11/otters.md"
MEMO = "memory/2026/11/memo.md"
CONTRACT = "standards/storage-rules.md"
DEFAULT = (REPO / "storage-rules.default.md").read_text(encoding="utf-8")
RETIRING = DEFAULT.replace("deprecations: {}", "deprecations:\n  note: lesson")


def commit_contract(vault: Path, text: str, message: str) -> None:
    path = vault / CONTRACT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", message)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    note(root, OTTERS, "Otters hold hands while they sleep.", status="unfiled", captured=OLD)
    note(root, MEMO, "Never deploy on a Friday afternoon.", status="unfiled", type="note", captured=OLD)
    assert RETIRING != DEFAULT
    commit_contract(root, RETIRING, "two notes waiting; the contract retires `note`")
    return root


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Model:
    model = Model.installed(tmp_path, monkeypatch)
    model.rules(
        {
            "match": f"Note ({OTTERS})",
            "answer": answer(title="Otters", summary="Otters hold hands while they sleep.", tags=[], confidence=0.3),
        },
        {
            "match": f"Note ({MEMO})",
            "answer": answer(title="No Friday deploys", summary="Never deploy on a Friday afternoon.", tags=[]),
        },
    )
    return model


def test_only_an_edit_to_what_a_judgment_reads_re_owes_judgments(cli, vault: Path, model: Model, tmp_path) -> None:
    first = run(cli, vault, config(tmp_path))
    assert first["calls"] == 2
    assert outcomes(first)[OTTERS] == "below-floor"  # stays in the queue, so a later run looks at it again
    assert fm(vault, MEMO)["type"] == "lesson"  # retired `note` reads as `lesson`, whatever the model chose

    edited = (
        RETIRING.replace("daily_card_budget: 30", "daily_card_budget: 12")
        .replace("procedure: memory/procedures", "procedure: memory/how-tos")
        .replace("  daily: 0.9\n", "  daily: 0.6\n")
        .replace("tells agentmd where new memories go", "says where new memories go")
    )
    assert edited.count("\n") == RETIRING.count("\n") and edited != RETIRING
    commit_contract(vault, edited, "a budget, a folder, a weight and the prose")
    dry = run(cli, vault, config(tmp_path), "--dry-run")
    assert dry["estimate"]["calls"] == 0, dry["estimate"]
    assert run(cli, vault, config(tmp_path))["calls"] == 0
    assert outcomes(run(cli, vault, config(tmp_path)))[OTTERS] == "unchanged"

    commit_contract(vault, edited.replace("  person: memory/people\n", "  person: memory/people\n  howto: x\n"), "+1")
    dry = run(cli, vault, config(tmp_path), "--dry-run")
    assert dry["estimate"]["owed_by_cause"] == {"owed-under-new-vocabulary": 1}, dry["estimate"]


def test_a_new_deprecation_re_owes_judgments(cli, vault: Path, model: Model, tmp_path) -> None:
    run(cli, vault, config(tmp_path))
    commit_contract(vault, RETIRING.replace("  note: lesson", "  note: lesson\n  memo: fact"), "retire memo too")
    dry = run(cli, vault, config(tmp_path), "--dry-run")
    assert dry["estimate"]["owed_by_cause"] == {"owed-under-new-vocabulary": 1}, dry["estimate"]
