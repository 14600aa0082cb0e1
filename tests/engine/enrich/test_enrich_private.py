"""What the enrichment model may see: a note in a private space or a recall-exempt area never reaches the model
CLI, neither to be judged (it is counted as `private-skipped` and left as it is) nor as a neighbour of another
note. Checked on what the scripted stand-in (tests/bin/fake_model_cli.py) records of every prompt it receives."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from curate_helpers import note
from daemon_helpers import git, make_repo
from enrich_helpers import Model, answer, config, outcomes, run, text_run

from agentmd.engine.jobs.morning import Changes, render

OLD = (dt.datetime.now(dt.UTC) - dt.timedelta(days=5)).isoformat(timespec="seconds")
SECRET = "zanzibar"  # a word only the notes that stay on this machine hold

CONTRACT = """# Storage rules

```yaml
recall_exempt_areas: [journal]
```
"""
CARD = "memory/2026/11/deploy-pipeline.md"
CLOSE = "memory/decisions/ci-choice.md"
PRIVATE_QUEUED = "private/deploy-keys.md"  # the default contract's `private` space (authority `private`)
PRIVATE_FILED = "private/deploys.md"
EXEMPT_QUEUED = "journal/2026-11-30.md"  # recall-exempt by this vault's contract, in no private space


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "standards/storage-rules.md": CONTRACT})
    deploy = "Deploys go through GitHub Actions pipeline on every push."
    note(root, CARD, deploy, title="Deploy pipeline", status="unfiled", captured=OLD, source="claude-code")
    note(root, CLOSE, "We chose GitHub Actions for the deploy pipeline.", title="GitHub Actions for deploys",
         status="active", type="decision", captured=OLD)  # fmt: skip
    note(root, PRIVATE_FILED, f"{deploy} The {SECRET} key signs GitHub Actions deploys.", title=f"Deploys {SECRET}",
         status="active", type="fact", captured=OLD)  # fmt: skip
    note(root, PRIVATE_QUEUED, f"The {SECRET} deploy key for GitHub Actions.", title=f"Key {SECRET}",
         status="unfiled", captured=OLD)  # fmt: skip
    note(root, EXEMPT_QUEUED, f"Felt {SECRET} about the GitHub Actions deploy pipeline today.", status="unfiled",
         captured=OLD)  # fmt: skip
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    return root


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Model:
    return Model.installed(tmp_path, monkeypatch)


def test_no_note_that_stays_local_reaches_the_model(cli, vault: Path, model: Model, tmp_path: Path) -> None:
    found = cli("search", "GitHub Actions deploy pipeline", "--vault", str(vault), "--index",
                str(vault.parent / "idx"), "--json").json()  # fmt: skip
    assert PRIVATE_FILED in [r["note"] for r in found["results"]]  # search finds it: a neighbour it could have been
    model.rules({"match": f"Note ({CARD})", "answer": answer(related=[CLOSE[:-3]])}, {"match": "", "answer": answer()})
    before = {rel: (vault / rel).read_bytes() for rel in (PRIVATE_QUEUED, EXEMPT_QUEUED)}

    report = run(cli, vault, config(tmp_path))
    assert outcomes(report) == {CARD: "filed", PRIVATE_QUEUED: "private-skipped", EXEMPT_QUEUED: "private-skipped"}
    assert report["counts"]["private-skipped"] == 2 and report["calls"] == 1
    prompts = [c["prompt"] for c in model.calls()]
    assert len(prompts) == 1 and f"Note ({CARD})" in prompts[0]
    assert f"id: {CLOSE[:-3]}" in prompts[0]  # the neighbour that may be shown is offered
    for prompt in prompts:
        assert SECRET not in prompt and "private/" not in prompt and "journal/" not in prompt
    assert {rel: (vault / rel).read_bytes() for rel in before} == before

    again = text_run(cli, vault, config(tmp_path), "--dry-run")
    assert "2 kept local (private or recall-exempt, never sent)" in again and len(model.calls()) == 1


def test_the_morning_note_counts_the_notes_kept_local() -> None:
    changed = {"filed": 1, "private_skipped": 2, "calls": 1, "tokens_added": 170}
    record = {"job": "enrich", "outcome": "ok", "start": "2026-12-06T02:10:00+00:00", "changed": changed}
    _headline, body = render(dt.date(2026, 12, 6), {"color": "green"}, [record], Changes())
    assert "1 filed" in body and "2 kept local (private or recall-exempt, never sent)" in body
