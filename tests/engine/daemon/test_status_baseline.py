"""The queue baseline through the real daemon, its wall clock given: its first run on a vault records the line,
the inherited backlog is shown on `/status`, `agentmd status`, the page and the morning note without paging,
and a note captured after the line pages once it waits past the age threshold."""

from __future__ import annotations

import datetime as dt
import io
import json
import urllib.request
from pathlib import Path

import pytest
from daemon_helpers import http_get, make_repo, wait_until

from agentmd.cli import main
from agentmd.engine.curate.baseline import BASELINE_FILE
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.jobs.morning import Changes
from agentmd.engine.jobs.morning import render as morning
from agentmd.engine.settings import Settings, resolve
from agentmd.engine.times import stamp
from agentmd.engine.web.session import COOKIE, new_session, session_base, session_value

pytestmark = pytest.mark.slow

BACKLOG = 25


class WallClock:
    """The daemon's wall clock, moved by the test."""

    def __init__(self, now: dt.datetime) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    notes = {"README.md": "# Vault\n"}
    for i in range(BACKLOG):
        notes[f"inbox/old-{i:02d}.md"] = f"---\nstatus: unfiled\ncaptured: 2024-0{1 + i % 9}-1{i % 10}\n---\nold {i}\n"
    return resolve(vault=str(make_repo(tmp_path / "vault", notes)))


def started(settings: Settings, clock: WallClock) -> Daemon:
    d = Daemon(settings, port=0, commit_debounce=0.2, health_interval=0, probe_interval=0, wall_clock=clock)
    d.start()
    wait_until(lambda: not d.health()["index_stale"], 30, "first pass")
    return d


def queue_of(d: Daemon) -> dict:
    code, body = http_get(d.port, "/status")
    assert code == 200
    return body | {"queue_red": [r for r in body["red"] if r.startswith("queue-")]}


def page(d: Daemon) -> str:
    session = new_session()
    cookie = f"{COOKIE}={session_value(d.page_key() or '', session)}"  # made as a ticket's session is
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(f"http://127.0.0.1:{d.port}{session_base(session)}", headers={"Cookie": cookie})
    with opener.open(request, timeout=10) as answer:
        return answer.read().decode("utf-8")


def test_the_daemon_records_the_line_and_pages_only_on_what_came_after(settings: Settings) -> None:
    start = dt.datetime.now(dt.UTC).replace(microsecond=0)
    clock = WallClock(start)
    d = started(settings, clock)
    try:
        recorded = json.loads((settings.state_dir / BASELINE_FILE).read_text(encoding="utf-8"))
        assert recorded == {"recorded_at": stamp(start), "count": BACKLOG}
        status = queue_of(d)
        queue = status["queue"]
        assert status["queue_red"] == [] and queue["baseline_source"] == "recorded"
        assert queue | {"total": BACKLOG, "count": 0, "inherited": BACKLOG, "baseline_at": stamp(start)} == queue
        assert queue["inherited_oldest_age_days"] > 300

        # captured an hour after the line, and four days later still waiting
        after = stamp(start + dt.timedelta(hours=1))
        clock.now = start + dt.timedelta(days=4, hours=2)  # first: a pass the write wakes is dated after it
        (settings.vault / "inbox" / "new.md").write_text(f"---\nstatus: unfiled\ncaptured: {after}\n---\nnew\n")
        d.request_pass()
        status = wait_until(lambda: (s := queue_of(d))["queue"]["count"] == 1 and s, 20, "the new note counted")
        queue = status["queue"]
        assert queue | {"total": BACKLOG + 1, "inherited": BACKLOG, "baseline_at": stamp(start)} == queue
        [red] = status["queue_red"]
        assert red.startswith("queue-age: the oldest note captured since the queue baseline") and "waits 4 days" in red
        assert f"{BACKLOG} more are inherited from before it and never red" in red

        # `agentmd status` asks this daemon and prints both parts
        out, err = io.StringIO(), io.StringIO()
        assert main(["status", "--vault", str(settings.vault)], out=out, err=err) == 3
        text = out.getvalue()
        assert (
            f"queue     {BACKLOG + 1} awaiting review (`agentmd queue`): 1 since the baseline, the oldest 4.0" in text
        )
        assert f"{BACKLOG} inherited (captured before {start.strftime('%Y-%m-%d %H:%M')} UTC, recorded" in text

        # the page's Today view and the morning note read the same status
        html = page(d)
        assert f"{BACKLOG + 1} note(s) await review" in html
        assert f"{BACKLOG} inherited from before {start.date().isoformat()}" in html
        _head, body = morning(clock.now.date(), d.status(), [], Changes())
        assert f"- queue: {BACKLOG + 1} awaiting review, 1 since the baseline (the oldest 4.0 days old)" in body
        assert f"{BACKLOG} inherited from before {start.date().isoformat()}" in body
    finally:
        d.stop()

    # a restart keeps the recorded line; deleting its file records it again at the next status
    clock.now = start + dt.timedelta(days=5)
    d = started(settings, clock)
    try:
        assert queue_of(d)["queue"]["baseline_at"] == stamp(start)
        (settings.state_dir / BASELINE_FILE).unlink()
        d.request_pass()
        wait_until(lambda: queue_of(d)["queue"]["baseline_at"] == stamp(clock.now), 20, "the line recorded again")
        status = queue_of(d)
        assert (
            status["queue"] | {"count": 0, "inherited": BACKLOG + 1, "baseline_count": BACKLOG + 1} == status["queue"]
        )
        assert status["queue_red"] == []
    finally:
        d.stop()
