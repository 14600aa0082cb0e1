"""Enrichment with the daemon running: `agentmd enrich` hands its plan to the daemon (the vault's one writer),
and the shipped `enrich` job (off by default, in the night window) runs the same pass inside the daemon, its
calls and tokens charged to the job's run record."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from conftest import TESTS
from curate_helpers import note
from daemon_helpers import git, is_clean, make_repo, origins, wait_until

from agentmd.engine.daemon.jobs_host import DaemonJobs
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.jobs.manifest import load_jobs
from agentmd.engine.jobs.morning import Changes, render
from agentmd.engine.jobs.report import BUILT_IN_ACTIONS
from agentmd.engine.settings import resolve

pytestmark = pytest.mark.slow

FAKE = TESTS / "bin" / "fake_model_cli.py"
OLD = (dt.datetime.now(dt.UTC) - dt.timedelta(days=3)).isoformat(timespec="seconds")
ANSWER = {
    "title": "Otters hold hands",
    "type": "fact",
    "summary": "Otters hold hands while they sleep.",
    "tags": ["otters"],
    "aliases": [],
    "related": [],
    "importance": 2,
    "confidence": 0.8,
}


@pytest.fixture
def setup(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch):
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    note(root, "memory/2026/11/otters.md", "Otters hold hands while they sleep.", status="unfiled", captured=OLD)
    note(root, "memory/2026/11/badgers.md", "Badgers dig setts.", status="unfiled", captured=OLD)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "two waiting")
    cfg = Path(env["XDG_CONFIG_HOME"]) / "agentmd" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(f'[enrich]\nprogram = "{FAKE}"\ncall_timeout = 20\n', encoding="utf-8")
    rules = tmp_path / "rules.json"
    badgers = {**ANSWER, "title": "Badgers dig setts", "summary": "Badgers dig setts.", "tags": ["badgers"]}
    script = [{"match": "Note (memory/2026/11/badgers.md)", "answer": badgers}, {"match": "", "answer": ANSWER}]
    rules.write_text(json.dumps(script), encoding="utf-8")
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_MODEL_LOG", str(log))
    monkeypatch.setenv("FAKE_MODEL_SCRIPT", str(rules))
    daemon = Daemon(resolve(vault=str(root)), port=0, commit_debounce=0.2, probe_interval=0)
    daemon.start()
    try:
        wait_until(lambda: not daemon.health()["index_stale"], what="first pass")
        yield root, daemon, log
    finally:
        daemon.stop()


def calls(log: Path) -> int:
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def test_the_job_ships_off_in_the_night_window() -> None:
    spec = load_jobs(None, set(BUILT_IN_ACTIONS)).jobs["enrich"]
    assert spec.enabled is False and spec.action == "enrich" and spec.schedule.describe() == "window 02:00-06:00"
    assert spec.budget.paid and spec.budget.calls and spec.budget.tokens


def test_the_command_hands_its_plan_to_the_running_daemon(cli, setup) -> None:
    root, _daemon, log = setup
    r = cli("enrich", "--vault", str(root), "--json", "--max-calls", "1")
    assert r.code == 0, r.err + r.out
    report = r.json()
    assert report["applied_by"] == "daemon" and report["commits"] and report["calls"] == 1
    wait_until(lambda: is_clean(root), what="clean tree")
    assert origins(root)[0] == "enrich" and calls(log) == 1


def test_the_job_runs_the_same_pass_inside_the_daemon(setup) -> None:
    root, daemon, log = setup
    jobs = DaemonJobs(daemon)
    record = jobs.scheduler.run_named("enrich")  # runs whatever its switch says, as `agentmd jobs run enrich`
    assert record["outcome"] == "ok", record
    assert record["changed"]["filed"] == 2 and record["changed"]["calls"] == 2
    assert record["budget_used"]["calls"] == 2 and record["budget_used"]["tokens"] == 2 * (100 + 20 + 50)
    wait_until(lambda: is_clean(root), what="clean tree")
    assert origins(root)[:2] == ["enrich", "enrich"] and calls(log) == 2
    _headline, body = render(dt.date.today(), {"color": "green"}, [record], Changes())
    assert (
        "  - enrichment: 2 filed, 0 below floor, 0 refused, 0 failed, 0 unchanged; 2 call(s), 340 tokens added" in body
    )
    assert "the queue is done" in body
    again = jobs.scheduler.run_named("enrich")  # nothing changed: the ledger answers, no call is paid for
    assert again["changed"]["calls"] == 0 and calls(log) == 2


def test_the_morning_note_names_the_notes_the_night_sank_to_dormant(setup, tmp_path: Path) -> None:
    root, daemon, log = setup
    low = [
        {"match": "Note (memory/2026/11/badgers.md)", "answer": {**ANSWER, "title": "Badgers dig setts",
                                                                 "summary": "Badgers dig setts.", "confidence": 0.2}},
        {"match": "", "answer": {**ANSWER, "confidence": 0.2}},
    ]  # fmt: skip
    (tmp_path / "rules.json").write_text(json.dumps(low), encoding="utf-8")
    jobs = DaemonJobs(daemon)
    first = jobs.scheduler.run_named("enrich")
    assert first["changed"]["below_floor"] == 2 and first["changed"]["dormant_notes"] == []
    wait_until(lambda: is_clean(root), what="the first night's commits")
    path = root / "memory/2026/11/otters.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("while they sleep.", "while they sleep, and they float."), encoding="utf-8")
    wait_until(lambda: is_clean(root) and not daemon.health()["index_stale"], what="the edit committed and indexed")
    second = jobs.scheduler.run_named("enrich")  # the otters changed and judged low again: dormant
    assert second["outcome"] == "ok", second
    assert second["changed"]["dormant"] == 1 and second["changed"]["dormant_notes"] == ["memory/2026/11/otters.md"]
    assert second["changed"]["calls"] == 1 and calls(log) == 3  # the unchanged badgers cost nothing
    wait_until(lambda: is_clean(root), what="the second night's commit")
    assert "lifecycle: dormant" in path.read_text(encoding="utf-8")
    _headline, body = render(dt.date.today(), {"color": "green"}, [second], Changes())
    assert "0 filed, 0 below floor, 0 refused, 0 failed, 1 unchanged, 1 dormant; 1 call(s)" in body
    assert "; judged by cause: changed 1; dormant now, below the floor twice: memory/2026/11/otters.md" in body
