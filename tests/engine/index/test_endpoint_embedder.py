"""An OpenAI-compatible embeddings endpoint as the embedder: a real local HTTP server answering deterministic
vectors, through the embedder itself, the settings, `agentmd reindex` and search, the background worker and
the daemon."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import CliResult
from daemon_helpers import client_of, http_get, make_repo, wait_until

from agentmd.engine.daemon.embedding import DenseWorker
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.errors import ConfigError
from agentmd.engine.index.embedder import EmbedderUnavailable
from agentmd.engine.index.endpoint_embedder import EndpointEmbedder
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.index.vectors import VectorStore
from agentmd.engine.settings import resolve

pytestmark = pytest.mark.slow

DIM = 16
NOTES = {
    "README.md": "# Vault\n",
    "cooking/bread.md": "# Sourdough bread\n\n## Baking\nBake the loaf in a hot oven for forty minutes.\n",
    "garden/tomatoes.md": "# Growing tomatoes\n\nTomato plants need sun, deep watering and stakes to climb.\n",
    "dev/ports.md": "# Daemon port\n\nThe server listens on 127.0.0.1 port 8765 by default.\n",
}


def toy_vector(text: str) -> list[float]:
    """Words hashed into DIM buckets: texts sharing words point the same way."""
    v = [0.0] * DIM
    for word in text.lower().split():
        v[hashlib.blake2b(word.strip(".,?").encode(), digest_size=2).digest()[0] % DIM] += 1.0
    return v


class Toy(ThreadingHTTPServer):
    """`POST /v1/embeddings` as OpenAI answers it (entries in reverse order, each with its index)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[dict[str, Any]] = []
        self.fail: tuple[int, str] | None = None  # (status, body) to answer instead
        self.short = False  # answer one embedding too few
        self.hold: threading.Event | None = None  # when set, requests wait for it before answering
        self.fail_after: int | None = None  # answer `fail` once this many requests were answered

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up on a held answer (the timeout case) breaks the pipe; nothing to report

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: Toy

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if self.server.hold is not None:
            self.server.hold.wait(10)
        late = self.server.fail_after is not None and len(self.server.requests) > self.server.fail_after
        if self.server.fail is not None and (self.server.fail_after is None or late):
            status, text = self.server.fail
            self._answer(status, text.encode())
            return
        texts = body["input"][:-1] if self.server.short else body["input"]
        data = [{"object": "embedding", "index": i, "embedding": toy_vector(t)} for i, t in enumerate(texts)]
        self._answer(200, json.dumps({"object": "list", "data": data[::-1], "model": body["model"]}).encode())

    def _answer(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def toy() -> Iterator[Toy]:
    server = Toy()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    if server.hold is not None:
        server.hold.set()
    server.shutdown()
    server.server_close()


def test_the_endpoint_embeds_in_batches_with_the_key_and_the_first_answers_dimension(toy: Toy) -> None:
    embedder = EndpointEmbedder(toy.base + "/", "toy-model", "sekrit", batch=2)
    assert embedder.dim == DIM and embedder.model_id == "endpoint:toy-model"
    texts = ["bake the loaf", "the loaf bakes", "tomato stakes", "", "port 8765"]
    v = embedder.embed(texts)
    assert v.shape == (5, DIM) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]  # the answer's reversed entries were put back in order
    assert [r["input"] for r in toy.requests] == [["dimension probe"], texts[:2], [texts[2], "."], texts[4:]]
    assert {r["path"] for r in toy.requests} == {"/v1/embeddings"}
    assert {r["model"] for r in toy.requests} == {"toy-model"}
    assert {r["auth"] for r in toy.requests} == {"Bearer sekrit"}
    assert embedder.embed([]).shape == (0, DIM)


def test_endpoint_failures_are_clear_errors_that_never_show_the_key(toy: Toy) -> None:
    toy.fail = (401, '{"error": {"message": "invalid api key"}}')
    with pytest.raises(EmbedderUnavailable, match=r"HTTP 401 \(check the API key\).*invalid api key") as info:
        EndpointEmbedder(toy.base, "toy", "sekrit")
    assert "sekrit" not in str(info.value)
    toy.fail = (200, "<html>a proxy page</html>")
    with pytest.raises(EmbedderUnavailable, match="not JSON"):
        EndpointEmbedder(toy.base, "toy")
    toy.fail = None
    embedder = EndpointEmbedder(toy.base, "toy")
    toy.short = True
    with pytest.raises(EmbedderUnavailable, match="answered 1 embeddings for 2 texts"):
        embedder.embed(["a", "b"])
    toy.short = False
    assert embedder.embed(["a"]).shape == (1, DIM)  # a quick failure is not remembered

    slow = EndpointEmbedder(toy.base, "toy", timeout=0.2)
    toy.hold = threading.Event()  # an endpoint that does not answer in time
    with pytest.raises(EmbedderUnavailable, match=r"did not answer within 0\.2 s"):
        slow.embed(["a", "b"])
    toy.hold.set()
    # for a while after a timeout a call fails at once with the same reason, without asking again
    asked = len(toy.requests)
    with pytest.raises(EmbedderUnavailable, match=r"did not answer within 0\.2 s"):
        slow.embed(["a"])
    assert len(toy.requests) == asked
    closed = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = closed.server_address[1]
    closed.server_close()
    with pytest.raises(EmbedderUnavailable, match=f"127.0.0.1:{port}/v1/embeddings could not be reached"):
        EndpointEmbedder(f"http://127.0.0.1:{port}/v1", "toy")
    with pytest.raises(EmbedderUnavailable, match="not an http"):
        EndpointEmbedder("ftp://example.org", "toy")


def test_the_endpoint_settings_read_env_and_config(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    home = {"HOME": str(tmp_path)}
    assert resolve(vault=str(vault), env=home).embed_url is None
    got = resolve(
        vault=str(vault),
        env=home
        | {"AGENTMD_EMBED_URL": "http://127.0.0.1:9/v1", "AGENTMD_EMBED_MODEL": "m", "AGENTMD_EMBED_API_KEY": "sekrit"},
    )
    assert (got.embed_url, got.embed_model, got.embed_api_key) == ("http://127.0.0.1:9/v1", "m", "sekrit")
    assert "sekrit" not in repr(got)
    config = tmp_path / "config.toml"
    config.write_text(
        'embed_url = "https://gpu.lan/v1"\nembed_model = "bge"\nembed_api_key_env = "GPU_KEY"\n', encoding="utf-8"
    )
    got = resolve(vault=str(vault), config=str(config), env=home | {"GPU_KEY": "k2"})
    assert (got.embed_url, got.embed_model, got.embed_api_key) == ("https://gpu.lan/v1", "bge", "k2")
    with pytest.raises(ConfigError, match="no model name"):
        resolve(vault=str(vault), env=home | {"AGENTMD_EMBED_URL": "http://127.0.0.1:9/v1"})
    with pytest.raises(ConfigError, match="not an http"):
        resolve(vault=str(vault), env=home | {"AGENTMD_EMBED_URL": "gpu.lan", "AGENTMD_EMBED_MODEL": "m"})


def test_reindex_and_search_use_the_endpoint_and_a_model_change_re_embeds_everything(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toy: Toy
) -> None:
    vault = make_repo(tmp_path / "vault", NOTES)
    monkeypatch.setenv("AGENTMD_EMBED_URL", toy.base)
    monkeypatch.setenv("AGENTMD_EMBED_MODEL", "toy")
    first = cli("reindex", "--vault", str(vault), "--json")
    assert first.code == 0, first.err
    dense = first.json()["dense"]
    assert dense["state"] == "complete" and dense["embedded"] == dense["chunks_total"] > 0
    settings = resolve(vault=str(vault))
    stored = VectorStore(settings.cache_dir, "endpoint:toy", dim=None)
    assert stored.dim == DIM and stored.coverage().share == 1.0

    found = cli("search", "bake the loaf in the oven", "--vault", str(vault), "--json", "--limit", "2")
    assert found.json()["dense"]["used"] is True and found.json()["results"][0]["note"] == "cooking/bread.md"
    assert "dense" in found.json()["results"][0]["arms"]
    status = cli("status", "--vault", str(vault), "--json")
    assert status.json()["dense"]["model"] == "endpoint:toy"

    monkeypatch.setenv("AGENTMD_EMBED_MODEL", "toy-2")
    again = cli("reindex", "--vault", str(vault), "--json").json()["dense"]
    assert again["embedded"] == again["chunks_total"] == dense["chunks_total"]
    assert {r["model"] for r in toy.requests[-2:]} == {"toy-2"}

    toy.fail = (503, "overloaded")  # a failing endpoint: reindex says why, search answers lexically
    down = cli("reindex", "--vault", str(vault), "--json")
    assert down.code == 0 and down.json()["dense"]["state"] == "lexical-only"
    assert "HTTP 503" in down.json()["dense"]["reason"]
    lexical = cli("search", "bake the loaf", "--vault", str(vault), "--json").json()
    assert lexical["dense"]["used"] is False and "HTTP 503" in lexical["note"]
    assert lexical["results"][0]["note"] == "cooking/bread.md"

    toy.fail_after = len(toy.requests) + 1  # it answers the probe, then fails in the middle of the work
    monkeypatch.setenv("AGENTMD_EMBED_MODEL", "toy-3")
    cut = cli("reindex", "--vault", str(vault), "--json")
    assert cut.code == 0 and cut.json()["dense"]["state"] == "partial" and "HTTP 503" in cut.json()["dense"]["reason"]


def _settings(tmp_path: Path, toy: Toy) -> Any:
    vault = make_repo(tmp_path / "vault", NOTES)
    return resolve(
        vault=str(vault),
        env={"HOME": str(tmp_path / "home"), "AGENTMD_EMBED_URL": toy.base, "AGENTMD_EMBED_MODEL": "toy"},
    )


def test_the_worker_waits_for_an_endpoint_that_is_down_and_resumes_when_it_answers(tmp_path: Path, toy: Toy) -> None:
    settings = _settings(tmp_path, toy)
    with Store(settings.cache_dir) as store:
        reconcile(settings.vault, store)
    toy.fail = (502, "bad gateway")
    worker = DenseWorker(settings, slice_size=2, retry=0.05)
    worker.start()
    try:
        wait_until(lambda: worker.status()["state"] == "lexical-only", what="the load failure seen")
        assert "HTTP 502" in worker.status()["reason"] and worker.arm is None
        toy.fail = None
        worker.wake()
        done = wait_until(
            lambda: (s := worker.status()).get("chunks_done") == s.get("chunks_total", -1) and s,
            what="full coverage through the endpoint",
        )
        assert done["model"] == "endpoint:toy" and done["reason"] is None
        # the endpoint fails while there is work: embedding waits with the reason, then goes on
        toy.fail = (500, "cuda out of memory")
        bread = settings.vault / "cooking/bread.md"
        bread.write_text(bread.read_text(encoding="utf-8") + "\n## Cooling\nLet it cool on a rack.\n", encoding="utf-8")
        with Store(settings.cache_dir) as store:
            reconcile(settings.vault, store)
        worker.wake()
        waiting = wait_until(lambda: (s := worker.status())["state"] == "waiting" and s, what="the pause")
        assert "HTTP 500" in waiting["reason"] and "cuda out of memory" in waiting["reason"]
        toy.fail = None
        wait_until(lambda: worker.status()["state"] == "complete", what="embedding resumed")
        assert worker.status()["reason"] is None
    finally:
        worker.stop()


def test_the_daemon_embeds_through_the_endpoint_and_searches_lexically_when_it_fails(
    tmp_path: Path, env: dict[str, str], toy: Toy
) -> None:
    settings = _settings(tmp_path, toy)
    d = Daemon(settings, port=0, commit_debounce=0.2, watch=False, probe_interval=0)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], what="first pass")
        dense = wait_until(
            lambda: (s := d.status()["dense"]).get("chunks_total") and s["chunks_done"] == s["chunks_total"] and s,
            30,
            "coverage",
        )
        assert dense["model"] == "endpoint:toy" and dense["notes_total"] == 4
        client = client_of(d)
        hybrid = client.post("/v1/search", {"query": "growing tomato plants", "limit": 2}, timeout=10)
        assert hybrid["dense"]["used"] is True and hybrid["results"][0]["note"] == "garden/tomatoes.md"
        toy.fail = (503, "overloaded")
        down = client.post("/v1/search", {"query": "growing tomato plants in sun", "limit": 2}, timeout=10)
        assert down["dense"]["used"] is False and "HTTP 503" in down["note"]
        assert down["results"][0]["note"] == "garden/tomatoes.md"
        code, health = http_get(d.port, "/health")
        assert code == 200 and health["ok"] is True
    finally:
        d.stop()
