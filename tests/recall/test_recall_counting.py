"""Who counts the notes the hook showed: the daemon that answered the search (`/v1/injected`), so the hook's
process opens no catalog; a daemon from an older install, which lacks the route (404), leaves the count to the
hook's process; a daemon that fails the count (or whose answer is lost) is not asked twice, and nothing is
counted twice. The daemon here is a real loopback HTTP server that answers every request with one status."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from agentmd.engine.client import Located
from agentmd.engine.recall.pipeline import Recall
from agentmd.engine.recall.render import Entry, render
from agentmd.engine.settings import Settings
from agentmd.hooks.recall.hook import count_injections
from tests.recall.helpers import usage_rows

NOTE = "memory/decisions/postgres-over-mysql.md"


@contextmanager
def answering(status: int, body: dict[str, object]) -> Iterator[tuple[int, list[dict[str, object]]]]:
    """A loopback server answering every POST with `status` and `body`; yields its port and the bodies it got."""
    got: list[dict[str, object]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], got
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def shown(settings: Settings, port: int) -> Recall:
    entry = Entry.from_candidate({"path": NOTE, "title": "PostgreSQL over MySQL", "summary": "We chose it."}, None)
    return Recall("postgres", None, "none", "daemon", render([entry]), [], Located(port, settings.state_dir))


def injections(settings: Settings) -> int:
    return usage_rows(settings).get(NOTE, (0, 0))[0]


def test_the_daemon_counts_what_the_hook_showed(indexed: Settings) -> None:
    with answering(200, {"counted": 1}) as (port, got):
        assert count_injections(shown(indexed, port), indexed.catalog_path, 1.0) == 1
    assert got == [{"paths": [NOTE]}]
    assert injections(indexed) == 0  # counted by the daemon, not here


def test_a_daemon_without_the_route_leaves_the_count_to_the_hook(indexed: Settings) -> None:
    with answering(404, {"error": "no such endpoint: /v1/injected"}) as (port, got):
        assert count_injections(shown(indexed, port), indexed.catalog_path, 1.0) == 1
    assert len(got) == 1
    assert injections(indexed) == 1


def test_a_daemon_that_fails_the_count_is_not_counted_for_twice(indexed: Settings) -> None:
    with answering(503, {"error": "the catalog is busy", "code": "failed"}) as (port, got):
        assert count_injections(shown(indexed, port), indexed.catalog_path, 1.0) == 0
    assert len(got) == 1
    assert injections(indexed) == 0
