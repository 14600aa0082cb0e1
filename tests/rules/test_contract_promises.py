"""What the storage-rules contract promises and capture keeps: known types only, nothing typed while the
contract is halted (refusals counted on status), the daily card budget's warning, the MCP type enum."""

from __future__ import annotations

from pathlib import Path

import pytest
from daemon_helpers import make_repo

from agentmd.engine.daemon.mcp_server import contract_types, tool_list
from agentmd.rules import default_contract

FENCE = "`" * 3


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})


def args(vault: Path) -> list[str]:
    return ["--vault", str(vault), "--index", str(vault.parent / "idx")]


def contract(vault: Path, yaml_text: str) -> None:
    path = vault / "standards" / "storage-rules.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Storage rules\n\n{FENCE}yaml\n{yaml_text}\n{FENCE}\n", encoding="utf-8")


def test_an_unknown_type_is_refused_with_the_known_ones(cli, vault: Path) -> None:
    r = cli("capture", *args(vault), "--title", "Fruit", "--body", "b", "--type", "banana", "--why", "w", "--json")
    assert r.code != 0
    answer = r.json()
    assert answer["code"] == "unknown-type" and "banana" in answer["error"]
    assert all(t in answer["error"] for t in default_contract().types)
    assert not list((vault / "memory").rglob("*.md")) if (vault / "memory").exists() else True


def test_a_halted_contract_refuses_typed_captures_counts_them_and_keeps_untyped_ones(cli, vault: Path) -> None:
    contract(vault, "no_such_key: 1")
    r = cli("capture", *args(vault), "--title", "Typed", "--body", "b", "--type", "decision", "--why", "w", "--json")
    assert r.code != 0 and r.json()["code"] == "contract-halted"
    assert "agentmd contract check" in r.json()["error"] and "no_such_key" in r.json()["error"]
    cli("capture", *args(vault), "--title", "Typed again", "--body", "b", "--type", "lesson")
    ok = cli("capture", *args(vault), "--title", "Untyped", "--body", "still works", "--json")
    assert ok.code == 0 and ok.json()["status"] == "unfiled"
    status = cli("status", *args(vault), "--json").json()
    assert status["contract"]["halted"] and status["contract"]["halted_refusals"] == 2
    assert "2 typed captures refused while halted" in cli("status", *args(vault)).out
    assert cli("search", *args(vault), "still works", "--json").code == 0


def test_the_daily_card_budget_warns_in_the_answer_and_on_status(cli, vault: Path) -> None:
    contract(vault, "thresholds: {daily_card_budget: 2}")
    answers = [
        cli("capture", *args(vault), "--title", f"Card {i}", "--body", f"card {i}", "--json").json() for i in range(3)
    ]
    assert not any("card budget" in w for a in answers[:2] for w in a["warnings"])
    assert any("daily card budget of 2" in w for w in answers[2]["warnings"])
    status = cli("status", *args(vault), "--json").json()
    assert status["captures_today"] == {"count": 3, "daily_card_budget": 2}
    assert any(y.startswith("card-budget") for y in status["yellow"])


class _Backend:
    def search(self, request):  # pragma: no cover - never called
        raise AssertionError

    def capture(self, request):  # pragma: no cover - never called
        raise AssertionError


def test_the_mcp_schema_publishes_the_type_enum() -> None:
    tools = tool_list(contract_types(_Backend()))
    schema = next(t for t in tools if t.name == "memory_capture").input_schema["properties"]["type"]
    assert schema["enum"] == sorted(default_contract().types)


def test_a_phone_clip_typed_while_halted_waits_and_is_filed_once_the_contract_is_fixed(tmp_path: Path) -> None:
    from agentmd.engine.git.committer import Committer
    from agentmd.engine.index.store import Store
    from agentmd.engine.write.capture import Capturer
    from agentmd.engine.write.phone import sweep_phone_notes
    from agentmd.rules import ContractCache

    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    contract(root, "no_such_key: 1")
    clip = root / "inbox" / "phone" / "clip.md"
    clip.parent.mkdir(parents=True)
    clip.write_text("---\ninstructions: file as decision; why it was agreed\n---\nWe use Postgres.\n")
    contracts = ContractCache(root)
    committer = Committer(root, phone_paths=lambda: contracts.get().contract.phone_paths)
    with Store(tmp_path / "cache") as store:
        capturer = Capturer(root, tmp_path / "state", contracts, store, before_write=committer.note_origin)

        def sweep() -> list:
            return sweep_phone_notes(root, contracts.get().contract, capturer, note_origin=committer.note_origin)

        assert [a.outcome for a in sweep()] == ["flagged"] and clip.exists()
        (root / "standards" / "storage-rules.md").unlink()
        assert [a.outcome for a in sweep()] == ["filed"] and not clip.exists()
