"""What leaves the machine: with an external embeddings endpoint configured, notes in a private space or a
recall-exempt area are never sent to it (a local stand-in endpoint records every text it receives), are still
found by their words, are never offered to the enrichment model as neighbours, and status names the endpoint
and what it may see."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult
from daemon_helpers import client_of, make_repo, wait_until
from search_helpers import lexical_search as search
from test_endpoint_embedder import Toy

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.daemon.status import render
from agentmd.engine.enrich.neighbours import neighbours_of
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import Settings, resolve
from agentmd.rules import load_contract

SECRET = "zanzibar"  # a word only the private notes hold
EXEMPT = "quokka"  # a word only the recall-exempt area's note holds
CONTRACT = """# Storage rules

```yaml
recall_exempt_areas: [private, journal]
```
"""
NOTES = {
    "README.md": "# Vault\n",
    "standards/storage-rules.md": CONTRACT,
    "cooking/bread.md": "# Sourdough bread\n\nBake the loaf in a hot oven for forty minutes.\n",
    "garden/tomatoes.md": "# Growing tomatoes\n\nTomato plants need sun, deep watering and stakes to climb.\n",
    "private/health.md": f"# Health notes\n\nThe {SECRET} clinic results about tomato allergies stay here.\n",
    "private/deep/money.md": f"---\ntitle: Money {SECRET}\n---\nSavings plan for {SECRET} and tomato seeds.\n",
    "journal/2026-03-01.md": f"# A day\n\nSaw a {EXEMPT} eating tomato leaves in the garden.\n",
}


@pytest.fixture
def toy() -> Iterator[Toy]:
    import threading

    server = Toy()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def sent(toy: Toy) -> list[str]:
    return [text for r in toy.requests for text in r["input"]]


def endpoint_settings(tmp_path: Path, toy: Toy) -> Settings:
    vault = make_repo(tmp_path / "vault", NOTES)
    env = {"HOME": str(tmp_path / "home"), "AGENTMD_EMBED_URL": toy.base, "AGENTMD_EMBED_MODEL": "toy"}
    return resolve(vault=str(vault), env=env)


def test_the_daemon_sends_no_private_or_exempt_note_to_the_endpoint(
    tmp_path: Path, env: dict[str, str], toy: Toy
) -> None:
    settings = endpoint_settings(tmp_path, toy)
    d = Daemon(settings, port=0, commit_debounce=0.2, watch=False, probe_interval=0)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], what="first pass")
        dense = wait_until(
            lambda: (s := d.status()["dense"]).get("chunks_total") and s["chunks_done"] == s["chunks_total"] and s,
            30,
            "coverage",
        )
        texts = sent(toy)
        assert any("Tomato plants need sun" in t for t in texts)  # the endpoint did embed the vault
        assert [t for t in texts if SECRET in t.lower() or EXEMPT in t] == []  # 0 texts of the private notes
        assert dense["notes_total"] == 7  # every note is listed; the kept ones simply have no chunk to send
        endpoint = dense["endpoint"]
        assert endpoint["url"] == toy.base and endpoint["model"] == "toy"
        assert endpoint["withheld"] == ["journal", "private"]
        text = render(d.status())
        assert f"  endpoint  {toy.base} sees every note but those under journal/, private/" in text

        client = client_of(d)
        found = client.post("/v1/search", {"query": f"{SECRET} clinic results", "limit": 3}, timeout=10)
        assert found["results"][0]["note"] == "private/health.md"  # still found, by its words
        assert [t for t in sent(toy) if SECRET in t.lower()] == [SECRET + " clinic results"]  # the query alone
    finally:
        d.stop()


def test_reindex_with_the_endpoint_keeps_private_notes_local(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toy: Toy
) -> None:
    vault = make_repo(tmp_path / "vault", NOTES)
    monkeypatch.setenv("AGENTMD_EMBED_URL", toy.base)
    monkeypatch.setenv("AGENTMD_EMBED_MODEL", "toy")
    run = cli("reindex", "--vault", str(vault), "--json")
    assert run.code == 0, run.err
    assert run.json()["dense"]["state"] == "complete"
    texts = sent(toy)
    assert texts and [t for t in texts if SECRET in t.lower() or EXEMPT in t] == []
    status = cli("status", "--vault", str(vault))
    assert f"endpoint  {toy.base} sees every note but those under journal/, private/" in status.out


def test_private_notes_are_never_offered_as_neighbours(tmp_path: Path, env: dict[str, str]) -> None:
    extra = {
        "inbox/tomato-seeds.md": "# Tomato seeds\n\nBuy tomato seeds.\n",
        "garden/seed-list.md": "# Seed list\n\nTomato seeds to buy: cherry and plum.\n",
    }
    vault = make_repo(tmp_path / "vault", NOTES | extra)
    settings = resolve(vault=str(vault))
    contract = load_contract(settings.vault, settings.contract_path).contract
    assert contract.kept_local("private/deep/money.md") and contract.kept_local("journal/2026-03-01.md")
    assert not contract.kept_local("garden/tomatoes.md")
    with Store(settings.cache_dir) as store:
        reconcile(settings.vault, store)
        fm: dict[str, Any] = {"title": "Tomato seeds"}
        found = search(store.index, contract, SearchRequest(query="Tomato seeds Buy tomato seeds.", limit=40))
        assert "private/deep/money.md" in [r["note"] for r in found["results"]]  # the words match a private note
        offered = neighbours_of(store, contract, settings.vault, "inbox/tomato-seeds.md", fm, "Buy tomato seeds.")
    ids = [n.id for n in offered]
    assert "garden/seed-list" in ids
    assert not [i for i in ids if i.startswith(("private/", "journal/"))]
