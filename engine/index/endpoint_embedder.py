"""An OpenAI-compatible embeddings endpoint as the dense arm's embedder (a local server with a GPU, say).

On 2 CPU cores the bundled model embeds about 20 chunks a second, so a 100,000-note vault (some 350,000
chunks) takes hours to cover; a server that answers `POST {base}/embeddings` the way OpenAI's API does
takes that work off the machine. It is chosen in the settings (`embed_url` and `embed_model`, with an
optional API key from the environment, see engine/settings.py); without them the bundled model is used.

Each request sends `{"model": ..., "input": [texts]}` and reads `data[i].embedding` (ordered by `index`
when the answer gives one). The dimension is whatever the first answer has (one probe at load), and every
vector is normalised to unit length, since the vector store scores by dot product. The vectors are stored
under the model id `endpoint:<model>`, so switching the model (or between the endpoint and the bundled
model) re-embeds everything.

Every failure (unreachable, a timeout, an HTTP error, an answer that is not the expected JSON) raises
`EmbedderUnavailable` with a sentence saying what went wrong and where; the daemon then searches lexical-only,
shows the reason in its status and tries again later. A single text (a search's query) waits at most
QUERY_TIMEOUT, and for COOLDOWN seconds after a request timed out every call fails at once with the same
reason, so searches answer lexically without stalling while the endpoint hangs. The API key is sent as a
bearer token and never appears in an error or a log line.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentmd.engine.index.embedder import EmbedderUnavailable

MODEL_PREFIX = "endpoint:"
TIMEOUT = 30.0  # seconds per request of a batch
QUERY_TIMEOUT = 5.0  # seconds for one text (a search's query waits on it)
COOLDOWN = 10.0  # seconds after a timeout during which a call fails at once instead of waiting again
BATCH = 64  # texts per request
PROBE = "dimension probe"
LOOPBACK = {"127.0.0.1", "::1", "localhost"}


class _Slow(EmbedderUnavailable):
    """The endpoint did not answer in time (what the cooldown is for)."""


def endpoint_model_id(model: str) -> str:
    """The model id the vector store keys an endpoint model's vectors by."""
    return f"{MODEL_PREFIX}{model}"


class EndpointEmbedder:
    """Embeds through an OpenAI-compatible `/embeddings` route. Thread-safe (one request per call)."""

    def __init__(
        self, base_url: str, model: str, api_key: str | None = None, *, timeout: float = TIMEOUT, batch: int = BATCH
    ) -> None:
        """Check the address and ask the endpoint once, which gives the dimension; raises
        `EmbedderUnavailable` when the endpoint cannot answer."""
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise EmbedderUnavailable(f"the embeddings endpoint {base_url!r} is not an http(s) URL")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.model_id = endpoint_model_id(model)
        self.latin_only = False  # the owner chose the model; an endpoint's models are most often multilingual
        self.timeout = timeout
        self.batch = max(1, batch)
        self._key = api_key
        self._failed: tuple[float, str] | None = None  # (when, why) of the last failure
        # a server on this machine is asked directly, whatever proxy the environment names
        handlers = [urllib.request.ProxyHandler({})] if parsed.hostname in LOOPBACK else []
        self._opener = urllib.request.build_opener(*handlers)
        self.dim = 0
        self.dim = int(self._post([PROBE]).shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, float32, shape (len(texts), dim), in the order of `texts`."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = [self._post(texts[i : i + self.batch]) for i in range(0, len(texts), self.batch)]
        return np.concatenate(out)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def _post(self, texts: Sequence[str]) -> np.ndarray:
        failed = self._failed
        if failed is not None and time.monotonic() - failed[0] < COOLDOWN:
            raise EmbedderUnavailable(failed[1])
        try:
            vectors = self._ask(texts)
        except _Slow as exc:
            self._failed = (time.monotonic(), str(exc))
            raise
        self._failed = None
        return vectors

    def _ask(self, texts: Sequence[str]) -> np.ndarray:
        timeout = min(self.timeout, QUERY_TIMEOUT) if len(texts) == 1 and self.dim else self.timeout
        body = json.dumps({"model": self.model, "input": [t if t.strip() else "." for t in texts]}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        where = f"the embeddings endpoint {self.url}"
        try:
            with self._opener.open(request, timeout=timeout) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode("utf-8", "replace").strip()
            hint = " (check the API key)" if exc.code in (401, 403) else ""
            raise EmbedderUnavailable(f"{where} answered HTTP {exc.code}{hint}: {detail or exc.reason}") from None
        except TimeoutError:
            raise _Slow(f"{where} did not answer within {timeout:g} s") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise _Slow(f"{where} did not answer within {timeout:g} s") from None
            raise EmbedderUnavailable(f"{where} could not be reached: {exc.reason}") from None
        except OSError as exc:
            raise EmbedderUnavailable(f"{where} could not be reached: {exc}") from None
        except ValueError:
            raise EmbedderUnavailable(f"{where} answered with something that is not JSON") from None
        return self._vectors(payload, len(texts), where)

    def _vectors(self, payload: Any, count: int, where: str) -> np.ndarray:
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or len(data) != count:
            got = len(data) if isinstance(data, list) else "no"
            raise EmbedderUnavailable(
                f"{where} answered {got} embeddings for {count} texts (expected `data[i].embedding`)"
            )
        if all(isinstance(d, dict) and isinstance(d.get("index"), int) for d in data):
            data = sorted(data, key=lambda d: d["index"])
        try:
            rows = np.array([d["embedding"] for d in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError):
            raise EmbedderUnavailable(f"{where} answered embeddings that are not lists of numbers") from None
        if rows.ndim != 2 or rows.shape[1] == 0 or not np.all(np.isfinite(rows)):
            raise EmbedderUnavailable(f"{where} answered embeddings that are not lists of numbers")
        if self.dim and rows.shape[1] != self.dim:
            raise EmbedderUnavailable(
                f"{where} answered {rows.shape[1]}-dimensional vectors after {self.dim}-dimensional ones"
            )
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.clip(norms, 1e-12, None)
