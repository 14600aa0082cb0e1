"""The dense arm as the product: the daemon embeds in the background, search is hybrid by default,
status shows coverage, reindex embeds in the foreground. Real model, real daemon, real git vault."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult
from daemon_helpers import client_of, http_get, make_repo, wait_until

from agentmd.engine.daemon.embedding import DenseWorker
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.daemon.status import dense_line, render, with_dense
from agentmd.engine.errors import ConfigError
from agentmd.engine.index.embedder import shared_embedder
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.index.vectors import VectorStore
from agentmd.engine.settings import Settings, resolve

pytestmark = pytest.mark.slow

NOTES = {
    "README.md": "# Vault\n",
    "cooking/bread.md": "# Sourdough bread\n\n## Starter\nFeed the starter flour and water every day.\n\n"
    "## Baking\nBake the loaf in a hot oven for forty minutes.\n",
    "garden/tomatoes.md": "# Growing tomatoes\n\nTomato plants need sun, deep watering and stakes to climb.\n",
    "dev/ports.md": "# Daemon port\n\nThe server listens on 127.0.0.1 port 8765 by default.\n",
}
QUESTION = "how long should a loaf stay in the oven"
DEADLINE = 30.0


@pytest.fixture(scope="module", autouse=True)
def warm_model() -> Any:
    """Load the model once for the module; the daemons in this process share it."""
    return shared_embedder()


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    return resolve(vault=str(make_repo(tmp_path / "vault", NOTES)))


def _start(settings: Settings) -> Daemon:
    d = Daemon(settings, port=0, commit_debounce=0.2, watch=False, probe_interval=0)
    d.start()
    wait_until(lambda: not d.health()["index_stale"], what="first pass")
    return d


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    d = _start(settings)
    yield d
    d.stop()


def _complete(d: Daemon) -> dict[str, Any] | None:
    """The dense section once the daemon reports the vectors complete: every chunk embedded and saved."""
    dense = d.status()["dense"]
    done = dense["state"] == "complete" and dense.get("chunks_total") and dense["chunks_done"] == dense["chunks_total"]
    return dense if done else None


def _stored_hash(d: Daemon, path: str) -> str | None:
    return d.dense.arm.store.note_hashes().get(path)


def test_background_embedding_covers_every_note_and_search_is_hybrid(daemon: Daemon) -> None:
    dense = wait_until(lambda: _complete(daemon), DEADLINE, "full dense coverage")
    assert dense["state"] == "complete" and dense["notes_total"] == 4 and dense["reason"] is None
    assert dense["notes_done"] == 4 and dense["model"].startswith("all-MiniLM-L6-v2-int8@")
    code, status = http_get(daemon.port, "/status")
    assert code == 200 and status["dense"]["chunks_done"] == dense["chunks_total"]
    assert "chunks (complete)" in render(status)
    assert (daemon.settings.cache_dir / "vectors.npz").is_file()  # saved when the queue drained

    # the search route defaults to hybrid; each result names its arms
    data = client_of(daemon).post("/v1/search", {"query": QUESTION, "limit": 3, "explain": True}, timeout=10)
    assert data["mode"] == "hybrid" and data["dense"]["used"] is True and data["note"] is None
    top = data["results"][0]
    assert top["note"] == "cooking/bread.md" and "dense" in top["arms"]
    assert top["explain"]["dense"]["cosine"] > 0.3
    # the daemon's own vector store says how alike its passages are: four notes on four subjects keep the usual share
    assert 0.0 <= top["explain"]["dense"]["sameness"] < 0.3 and top["explain"]["dense"]["share"] == 0.6
    keyword = client_of(daemon).post("/v1/search", {"query": "port 8765", "limit": 3}, timeout=10)
    assert keyword["results"][0]["note"] == "dev/ports.md"
    assert keyword["results"][0]["arms"] == ["lexical", "dense"]
    # the lexical mode is unchanged: no arms, no dense part
    lexical = client_of(daemon).post("/v1/search", {"query": "port 8765", "mode": "fusion"}, timeout=10)
    assert lexical["mode"] == "fusion" and "dense" not in lexical and "arms" not in lexical["results"][0]


def test_an_edit_re_embeds_only_its_changed_chunk_and_a_deletion_drops_the_vectors(daemon: Daemon) -> None:
    wait_until(lambda: _complete(daemon), DEADLINE, "full dense coverage")
    before = daemon.dense.embedded
    old = _stored_hash(daemon, "cooking/bread.md")
    bread = daemon.settings.vault / "cooking/bread.md"
    bread.write_text(bread.read_text(encoding="utf-8").replace("forty", "fifty"), encoding="utf-8")
    (daemon.settings.vault / "garden/tomatoes.md").unlink()
    daemon.request_pass()
    wait_until(lambda: _stored_hash(daemon, "cooking/bread.md") not in (None, old), DEADLINE, "the edit seen")
    dense = wait_until(lambda: _complete(daemon), DEADLINE, "the edit embedded")
    assert daemon.dense.embedded - before == 1  # only the Baking section changed
    assert _stored_hash(daemon, "garden/tomatoes.md") is None and dense["notes_total"] == 3


def test_a_model_that_cannot_load_leaves_the_daemon_lexical_with_the_reason(settings: Settings) -> None:
    missing = settings.vault.parent / "no-such-model.onnx"
    d = _start(settings._replace(model_file=missing))
    try:
        wait_until(lambda: d.dense.state == "lexical-only", DEADLINE, "the model load to fail")
        code, status = http_get(d.port, "/status")
        assert code == 200 and status["dense"]["state"] == "lexical-only"
        assert str(missing) in status["dense"]["reason"]
        assert any(y.startswith("dense-unavailable:") for y in status["yellow"]) and status["color"] != "green"
        assert f"dense     lexical-only: the embedding model file {missing}" in render(status)
        data = client_of(d).post("/v1/search", {"query": "oven"}, timeout=10)
        assert data["mode"] == "hybrid" and data["dense"]["used"] is False
        assert data["note"].startswith("lexical results only: the embedding model file")
        assert data["results"][0]["note"] == "cooking/bread.md" and data["results"][0]["arms"] == ["lexical"]
    finally:
        d.stop()


def test_vectors_that_cannot_be_saved_stay_in_memory_turn_status_yellow_and_are_saved_once_they_can(
    settings: Settings,
) -> None:
    """A save that fails (here the save's temp file is a folder, as a full disk fails a write) keeps the embedding
    going: searches use the vectors, status says why they are not on disk, and a later try saves them."""
    settings.cache_dir.mkdir(parents=True, exist_ok=True)
    blocked = settings.cache_dir / f".vectors.npz.agentmd-{os.getpid()}.tmp"
    (blocked / "in-the-way").mkdir(parents=True)
    with Store(settings.cache_dir) as store:
        reconcile(settings.vault, store)
    worker = DenseWorker(settings, slice_size=2, retry=0.05)
    worker.start()
    worker.wake()  # as the daemon does after each pass
    try:
        dense = wait_until(lambda: (s := worker.status()).get("save_error") and s, DEADLINE, "the failed save")
        why = dense["save_error"]
        assert str(settings.cache_dir / "vectors.npz") in why and "free disk space" in why
        assert not (settings.cache_dir / "vectors.npz").exists() and worker.state == "embedding"
        wait_until(lambda: worker.status()["chunks_done"] == worker.status()["chunks_total"], DEADLINE, "all embedded")
        assert worker.arm.store.search(worker.arm.embedder.embed([QUESTION])[0], 1)  # the vectors answer searches
        status = with_dense({"color": "green", "yellow": []}, worker.status())
        assert status["color"] == "yellow" and status["yellow"][0].startswith("dense-unsaved: the vectors could not")

        shutil.rmtree(blocked)
        wait_until(lambda: worker.status()["state"] == "complete", DEADLINE, "the vectors saved")
        assert worker.status()["save_error"] is None and (settings.cache_dir / "vectors.npz").is_file()
        assert with_dense({"color": "green", "yellow": []}, worker.status())["color"] == "green"
    finally:
        worker.stop()
    again = VectorStore(settings.cache_dir, worker.arm.embedder.model_id, dim=None)
    assert again.coverage().notes_done == 4  # what was saved is every note's vectors


def test_status_is_yellow_while_embedding_waits_or_has_stopped() -> None:
    waiting = {"state": "waiting", "chunks_done": 3, "chunks_total": 9, "reason": "HTTP 503: overloaded"}
    status = with_dense({"color": "green", "yellow": []}, waiting)
    assert status["color"] == "yellow" and status["yellow"] == [
        "dense-waiting: new notes are found by their words until the endpoint answers: HTTP 503: overloaded"
    ]
    stopped = {"state": "stopped", "chunks_done": 3, "chunks_total": 9, "reason": "background embedding stopped"}
    status = with_dense({"color": "red", "red": ["x"], "yellow": []}, stopped)
    assert status["color"] == "red" and status["yellow"] == ["dense-stopped: background embedding stopped"]
    assert dense_line(stopped) == "3 / 9 chunks, embedding stopped (see the yellow line)"
    assert dense_line(waiting) == "3 / 9 chunks, waiting for the embeddings endpoint"
    assert dense_line({"state": "embedding", "chunks_done": 9, "chunks_total": 9}) == "9 / 9 chunks (saving)"


def test_a_switched_off_dense_arm_is_lexical_without_turning_status_yellow(settings: Settings) -> None:
    d = _start(settings._replace(dense=False))
    try:
        wait_until(lambda: d.dense.state == "lexical-only", DEADLINE, "lexical-only")
        status = d.status()
        assert "switched off" in status["dense"]["reason"]
        assert not any(y.startswith("dense-unavailable") for y in status["yellow"])
    finally:
        d.stop()


def test_reindex_embeds_with_progress_then_search_is_hybrid_from_disk(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_repo(tmp_path / "vault", NOTES)
    first = cli("reindex", "--vault", str(vault))
    assert first.code == 0, first.err
    assert "embedding 0/4 notes" in first.err  # plain lines when stderr is not a terminal
    last = first.err.strip().splitlines()[-1]
    assert last.startswith("embedding 4/4 notes") and "chunks/s" in last
    summary = first.out.strip().splitlines()[-1]
    assert summary.startswith("dense: embedded ") and summary.endswith("chunks of 4 notes have vectors")
    again = cli("reindex", "--vault", str(vault), "--json")
    assert again.json()["dense"]["embedded"] == 0 and again.json()["dense"]["state"] == "complete"

    found = cli("search", QUESTION, "--vault", str(vault), "--limit", "2", "--explain")
    assert found.code == 0, found.err
    lines = found.out.splitlines()
    assert lines[0].startswith(" 1. cooking/bread.md") and "arms " in lines[0] and "dense" in lines[0]
    assert any("cosine 0." in line and "lexical" in line for line in lines)
    status = cli("status", "--vault", str(vault))
    assert "dense     " in status.out and "chunks (complete)" in status.out

    lexical = cli("search", "oven", "--vault", str(vault), "--json", "--mode", "fusion")
    assert lexical.json()["mode"] == "fusion" and "dense" not in lexical.json()
    monkeypatch.setenv("AGENTMD_DENSE", "0")
    off = cli("search", "oven", "--vault", str(vault), "--json")
    assert off.json()["dense"]["used"] is False and "switched off" in off.json()["note"]
    no_dense = cli("reindex", "--vault", str(vault))
    assert "dense: lexical-only" in no_dense.out and "embedding" not in no_dense.err


def test_reindex_no_dense_and_a_fresh_vault_search_fall_back_with_a_note(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    vault = make_repo(tmp_path / "vault", NOTES)
    done = cli("reindex", "--vault", str(vault), "--no-dense")
    assert done.code == 0 and "dense: lexical-only (--no-dense)" in done.out and "embedding" not in done.err
    found = cli("search", "oven", "--vault", str(vault), "--json")
    assert found.json()["mode"] == "hybrid" and found.json()["dense"]["used"] is False
    assert "no vectors on disk yet" in found.json()["note"]
    assert found.json()["results"][0]["arms"] == ["lexical"]


def test_the_dense_switch_reads_env_and_config(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    assert resolve(vault=str(vault), env={"HOME": str(tmp_path)}).dense is True
    assert resolve(vault=str(vault), env={"HOME": str(tmp_path), "AGENTMD_DENSE": "off"}).dense is False
    config = tmp_path / "config.toml"
    config.write_text('dense = false\nmodel_file = "/models/m.onnx"\n', encoding="utf-8")
    got = resolve(vault=str(vault), config=str(config), env={"HOME": str(tmp_path)})
    assert got.dense is False and got.model_file == Path("/models/m.onnx")
    with pytest.raises(ConfigError, match="AGENTMD_DENSE"):
        resolve(vault=str(vault), env={"HOME": str(tmp_path), "AGENTMD_DENSE": "maybe"})


def test_eval_prompts_hybrid_runs_the_search_a_daemon_answers_the_hook_with(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """`eval prompts --hybrid` measures the hook as it runs with a daemon up: hybrid search, cosines and all;
    without vectors it says why instead of measuring the lexical search under that name."""
    import json

    vault = make_repo(tmp_path / "vault", NOTES)
    prompts = tmp_path / "prompts.jsonl"
    rows = [
        {"id": "h1", "prompt": "how long should the sourdough loaf bake in the oven", "expected": "cooking/bread.md"},
        {"id": "u1", "prompt": "rename this variable and fix the lint warnings", "expected": None},
    ]
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    early = cli("eval", "prompts", str(prompts), "--vault", str(vault), "--hybrid")
    assert early.code != 0 and "--hybrid needs the dense arm" in early.err
    assert cli("reindex", "--vault", str(vault)).code == 0
    done = cli("eval", "prompts", str(prompts), "--vault", str(vault), "--hybrid", "--json")
    assert done.code == 0, done.err
    report = done.json()
    assert report["search"] == "hybrid"
    assert report["summary"]["kept"] == 1 and report["summary"]["silent"] == 1
    lexical = cli("eval", "prompts", str(prompts), "--vault", str(vault), "--json").json()
    assert lexical["search"] == "lexical"


def test_a_conversation_log_served_by_the_daemon_weighs_its_words_more(tmp_path: Path, env: dict[str, str]) -> None:
    """The CLI's route (`POST /v1/search`) on a vault of conversation sessions, every turn under the same
    headings: the daemon's store reads its passages as alike and the fusion gives the cosine the smaller share."""
    said = [
        "I went hiking with the kids last weekend.", "We painted a sunrise over the lake together.",
        "The adoption agency called me back today.", "My pottery class made bowls this week.",
        "We camped near the river and roasted marshmallows.", "I gave a talk at the school about acceptance.",
    ]  # fmt: skip
    notes = {"README.md": "# Vault\n"}
    for n in range(6):
        turns = "\n\n".join(
            f"## D{n + 1}:{t + 1} {'Caroline' if t % 2 == 0 else 'Melanie'}\n\n{said[(n + t) % len(said)]}"
            for t in range(6)
        )
        notes[f"sessions/session-{n + 1}.md"] = f"# Session {n + 1}, 8 May, 2023\n\n{turns}\n"
    d = _start(resolve(vault=str(make_repo(tmp_path / "vault", notes))))
    try:
        wait_until(lambda: _complete(d), DEADLINE, "full dense coverage")
        data = client_of(d).post(
            "/v1/search", {"query": "when did Melanie paint a sunrise", "explain": True}, timeout=10
        )
        assert data["mode"] == "hybrid" and data["dense"]["used"] is True
        dense = data["results"][0]["explain"]["dense"]
        assert dense["sameness"] >= 0.5 and dense["share"] == 0.3
    finally:
        d.stop()
