"""The queue baseline on real vaults, with the clock given: the first status once the vault is indexed records
it, notes captured before it are the inherited backlog (counted, never red), notes captured after it are held
to the thresholds, the config file's `queue_baseline` moves it, and deleting its file records it again."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from curate_helpers import note
from daemon_helpers import make_repo

from agentmd.engine.curate.baseline import BASELINE_FILE, Baseline, split
from agentmd.engine.daemon.status import compute_status, render
from agentmd.engine.errors import ConfigError
from agentmd.engine.index.store import Store
from agentmd.engine.jobs.morning import queue_lines
from agentmd.engine.settings import Settings, resolve
from agentmd.engine.web.views import queue_summary
from agentmd.rules import load_contract

NOW = dt.datetime(2026, 11, 20, 9, 30, tzinfo=dt.UTC)
BACKLOG = 40  # unfiled notes the vault already holds when it is adopted


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    for i in range(BACKLOG):
        day = (NOW - dt.timedelta(days=30 + i)).isoformat(timespec="seconds")
        note(root, f"inbox/old-{i:02d}.md", f"an old unfiled note {i}", status="unfiled", captured=day)
    note(root, "notes/filed.md", "a filed note", status="active", type="fact", captured="2025-01-01")
    return root


def settings_for(vault: Path, tmp_path: Path, config: str = "") -> Settings:
    path = tmp_path / "config.toml"
    path.write_text(config, encoding="utf-8")
    return resolve(vault=str(vault), index=str(tmp_path / "idx"), config=str(path), env={"HOME": str(tmp_path)})


def status_at(settings: Settings, now: dt.datetime) -> dict:
    with Store(settings.cache_dir) as store:
        status = compute_status(
            settings,
            store,
            load_contract(settings.vault, settings.contract_path),
            daemon={"running": True},
            commit_state=None,
            now=now,
        )
    return dict(status)


def index(cli, settings: Settings) -> None:
    assert cli("reindex", "--vault", str(settings.vault), "--index", str(settings.cache_dir), "--no-dense").code == 0


def queue_red(status: dict) -> list[str]:
    return [r for r in status["red"] if r.startswith("queue-")]


def test_the_first_status_records_the_line_and_the_backlog_never_pages(cli, vault: Path, tmp_path: Path) -> None:
    settings = settings_for(vault, tmp_path)
    index(cli, settings)
    status = status_at(settings, NOW)
    queue = status["queue"]
    assert queue_red(status) == []
    assert queue | {"total": BACKLOG, "count": 0, "inherited": BACKLOG, "oldest_age_days": None} == queue
    assert queue["inherited_oldest_age_days"] == 30 + BACKLOG - 1
    assert queue | {"baseline_at": "2026-11-20T09:30:00Z", "baseline_source": "recorded"} == queue
    assert queue["baseline_count"] == BACKLOG
    recorded = json.loads((settings.state_dir / BASELINE_FILE).read_text(encoding="utf-8"))
    assert recorded == {"recorded_at": "2026-11-20T09:30:00Z", "count": BACKLOG}

    text = render(status)
    assert "queue     40 awaiting review (`agentmd queue`): 0 since the baseline" in text
    assert "40 inherited (captured before 2026-11-20 09:30 UTC, recorded on the first run; the oldest 69.0" in text

    # a week later the line has not moved, and the backlog alone still pages nobody
    later = NOW + dt.timedelta(days=7)
    assert status_at(settings, later)["queue"]["baseline_at"] == "2026-11-20T09:30:00Z"
    assert queue_red(status_at(settings, later)) == []


def test_a_note_captured_after_the_line_pages_however_deep_the_backlog(cli, vault: Path, tmp_path: Path) -> None:
    settings = settings_for(vault, tmp_path)
    index(cli, settings)
    status_at(settings, NOW)  # records the line
    after = (NOW + dt.timedelta(hours=2)).isoformat(timespec="seconds")
    note(vault, "inbox/new.md", "captured after adoption", status="unfiled", captured=after)
    index(cli, settings)

    two_days = status_at(settings, NOW + dt.timedelta(days=2))
    assert queue_red(two_days) == [] and two_days["queue"]["count"] == 1 and two_days["queue"]["total"] == 41

    four_days = status_at(settings, NOW + dt.timedelta(days=4, hours=3))
    queue = four_days["queue"]
    assert queue | {"total": BACKLOG + 1, "count": 1, "inherited": BACKLOG, "oldest_age_days": 4.0} == queue
    [red] = queue_red(four_days)
    assert red.startswith("queue-age: the oldest note captured since the queue baseline 2026-11-20 09:30 UTC waits 4")
    assert "40 more are inherited from before it and never red" in red
    assert four_days["color"] == "red"

    # the morning note and the page say the same
    [line] = queue_lines(queue)
    assert line.startswith("- queue: 41 awaiting review, 1 since the baseline (the oldest 4.0 days old); 40 inherited")
    assert "from before 2026-11-20 (the oldest 73.1 days old), reported, never paged about" in line
    html = queue_summary(queue)
    assert "41 note(s) await review" in html and "40 inherited from before 2026-11-20" in html


def test_the_config_key_moves_the_line_by_hand(cli, vault: Path, tmp_path: Path) -> None:
    index(cli, settings_for(vault, tmp_path))
    status_at(settings_for(vault, tmp_path), NOW)  # the recorded line stays in its file
    moved = settings_for(vault, tmp_path, "queue_baseline = 2026-10-01\n")  # a TOML date: its midnight UTC
    assert moved.queue_baseline == dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
    status = status_at(moved, NOW)
    queue = status["queue"]
    # the notes captured from 2026-10-01 on are measured now, the older ones stay inherited
    measured = sum(1 for i in range(BACKLOG) if NOW - dt.timedelta(days=30 + i) >= moved.queue_baseline)
    assert queue | {"count": measured, "inherited": BACKLOG - measured, "baseline_source": "config"} == queue
    assert 0 < measured < BACKLOG and queue["baseline_at"] == "2026-10-01T00:00:00Z"
    assert queue["baseline_recorded_at"] == "2026-11-20T09:30:00Z"
    assert [r.split(":", 1)[0] for r in queue_red(status)] == ["queue-age"]
    assert "set by `queue_baseline` in the config file" in render(status)

    timed = settings_for(vault, tmp_path, 'queue_baseline = "2026-11-01T08:00:00+01:00"\n')
    assert timed.queue_baseline == dt.datetime(2026, 11, 1, 7, tzinfo=dt.UTC)
    with pytest.raises(ConfigError, match="queue_baseline = 'last week'"):
        settings_for(vault, tmp_path, 'queue_baseline = "last week"\n')


def test_deleting_the_file_records_the_line_again(cli, vault: Path, tmp_path: Path) -> None:
    settings = settings_for(vault, tmp_path)
    index(cli, settings)
    status_at(settings, NOW)
    (settings.state_dir / BASELINE_FILE).unlink()
    note(vault, "inbox/new.md", "captured after adoption", status="unfiled", captured="2026-11-21T10:00:00Z")
    index(cli, settings)
    again = NOW + dt.timedelta(days=10)
    queue = status_at(settings, again)["queue"]
    assert queue | {"baseline_at": "2026-11-30T09:30:00Z", "baseline_count": 41, "count": 0, "inherited": 41} == queue


def test_no_line_is_recorded_before_the_vault_is_indexed(cli, vault: Path, tmp_path: Path) -> None:
    settings = settings_for(vault, tmp_path)
    with Store(settings.cache_dir):
        pass  # an empty catalog: no pass has run
    queue = status_at(settings, NOW)["queue"]
    assert queue["baseline_source"] == "pending" and queue["count"] == 0
    assert not (settings.state_dir / BASELINE_FILE).exists()
    index(cli, settings)
    assert status_at(settings, NOW)["queue"]["baseline_count"] == BACKLOG


def test_a_file_written_before_counts_were_kept_or_a_torn_one(cli, vault: Path, tmp_path: Path) -> None:
    settings = settings_for(vault, tmp_path)
    index(cli, settings)
    path = settings.state_dir / BASELINE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"recorded_at": "2026-11-01T00:00:00+00:00", "paths": ["a.md", "b.md"]}), "utf-8")
    queue = status_at(settings, NOW)["queue"]
    assert queue | {"baseline_at": "2026-11-01T00:00:00Z", "baseline_count": 2, "inherited": BACKLOG} == queue
    path.write_text('{"recorded_at": "2026-10-', encoding="utf-8")  # torn: read as absent, recorded again
    assert status_at(settings, NOW)["queue"]["baseline_at"] == "2026-11-20T09:30:00Z"


def test_a_note_with_no_readable_date_is_measured_not_hidden_in_the_backlog() -> None:
    line = Baseline(NOW, "recorded", NOW, 3)
    cut = split([("a.md", "2026-01-01"), ("b.md", "not a date"), ("c.md", "2026-11-21T00:00:00Z")], line)
    assert cut.inherited == 1 and [p for p, _c in cut.measured] == ["b.md", "c.md"] and cut.total == 3
