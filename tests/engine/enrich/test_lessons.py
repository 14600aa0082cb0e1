"""Lessons drawn from outcomes: notes that record how things turned out and keep naming the same thing over time
are clustered by arithmetic, the scripted stand-in for the model CLI (tests/bin/fake_model_cli.py) is asked once
per cluster under the enrichment budgets and the lessons ledger, and a lesson it draws is written unfiled, linked
to its notes, for the owner to confirm; the notes it rests on are never edited."""

from __future__ import annotations

from pathlib import Path

import pytest
from curate_helpers import dirty, head, note, snapshot
from daemon_helpers import git, is_clean, make_repo, origins, wait_until
from enrich_helpers import FAKE, Model, config, fm, ledger_file

from agentmd.engine.daemon.jobs_host import DaemonJobs
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import resolve

SECRET = "quokka"  # a word only the private outcome holds
DB = [
    "memory/episodic/2025-03-02-ci-red.md",
    "memory/episodic/2025-03-20-ci-red-again.md",
    "memory/decisions/db-fixtures.md",
]
LATE = "memory/episodic/2025-04-02-one-more.md"
PRIVATE = "private/2025-03-10-db-outage.md"
PAIR = ["memory/episodic/2025-05-01-docs.md", "memory/episodic/2025-05-20-docs.md"]  # two notes: under the bar
LESSON = {
    "title": "Shared test databases make CI flaky",
    "lesson": "Tests that share one database fail at random under parallel CI; give each test its own schema.",
    "why": "Three notes between March and April 2025 trace red CI runs to the shared test database.",
    "rests_on": DB,
    "tags": ["testing", "ci"],
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    note(root, DB[0], "CI went red on `test_orders`: two workers wrote to the shared test database at once.",
         title="CI red on orders", type="episode", captured="2025-03-02", tags="[flaky-db]")  # fmt: skip
    note(root, DB[1], "CI red again, `test_refunds` this time; the shared database again held another test's rows.",
         title="CI red again", type="episode", captured="2025-03-20", tags="[flaky-db]")  # fmt: skip
    note(root, DB[2], "# Test fixtures\n\nEach test gets its own schema.\n\n## Outcome\n\nThe flaky runs stopped.",
         title="One schema per test", type="fact", captured="2025-03-25", tags="[flaky-db]")  # fmt: skip
    note(root, PRIVATE, f"The {SECRET} cluster lost its database; same flaky tests.", title="DB outage",
         type="episode", captured="2025-03-10", tags="[flaky-db]")  # fmt: skip
    note(root, PAIR[0], "The docs build broke on a bad link.", title="Docs broke", type="episode",
         captured="2025-05-01", tags="[docs-build]")  # fmt: skip
    note(root, PAIR[1], "The docs build broke on a bad link again.", title="Docs broke again", type="episode",
         captured="2025-05-20", tags="[docs-build]")  # fmt: skip
    note(
        root,
        "memory/semantic/orders.md",
        "The orders service owns `test_orders`.",
        title="Orders",
        type="fact",
        captured="2025-01-01",
        tags="[flaky-db]",
    )  # fmt: skip  (records no outcome: never a source)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    return root


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Model:
    m = Model.installed(tmp_path, monkeypatch)
    m.rules({"match": "#flaky-db", "answer": LESSON}, {"match": "", "answer": {"skip": "nothing recurs"}})
    return m


def lessons(cli, vault: Path, tmp_path: Path, *extra: str) -> dict:  # type: ignore[no-untyped-def]
    r = cli("lessons", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--config", str(config(tmp_path)),
            "--json", *extra)  # fmt: skip
    assert r.code == 0, r.err + r.out
    return r.json()


def test_recurring_outcomes_become_one_lesson_for_review(cli, vault, model, tmp_path) -> None:  # type: ignore[no-untyped-def]
    dry = lessons(cli, vault, tmp_path, "--dry-run")
    assert dry["dry_run"] and not model.calls() and dirty(vault) == ""
    assert [(c["subjects"], sorted(c["sources"]), c["outcome"]) for c in dry["clusters"]] == [
        (["#flaky-db"], sorted(DB), "owed")
    ]
    assert dry["sources"] == 5 and dry["kept_local"] == 1  # the private outcome is never read

    before, tree = head(vault), snapshot(vault)
    report = lessons(cli, vault, tmp_path)
    assert report["calls"] == len(model.calls()) == 1 and report["counts"]["proposed"] == 1
    assert not any(SECRET in c["prompt"] for c in model.calls())
    [path] = report["proposed"]
    assert path == "memory/lessons/shared-test-databases-make-ci-flaky.md"
    meta = fm(vault, path)
    assert meta["type"] == "lesson" and meta["status"] == "unfiled" and meta["source"] == "lessons"
    assert meta["consolidated_from"] == [f"[[{p[:-3]}]]" for p in DB]
    text = (vault / path).read_text(encoding="utf-8")
    assert LESSON["lesson"] in text and "**Why it is a lesson:**" in text
    assert all(f"[[{p[:-3]}]]" in text.split("## What taught it", 1)[1] for p in DB)
    assert {p: b for p, b in snapshot(vault).items() if p != path} == tree  # its notes are never edited
    assert git(vault, "rev-list", "--count", f"{before}..HEAD").strip() == "1" and origins(vault)[0] == "lessons"

    queue = cli("queue", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--json").json()
    assert [(i["path"], i["reason"]) for i in queue["items"] if i["path"] == path] == [(path, "lesson")]
    enrich = cli("enrich", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--config",
                 str(config(tmp_path)), "--dry-run", "--json").json()  # fmt: skip
    assert path not in [n["path"] for n in enrich["notes"]]  # the owner's to judge, not another call's

    again = lessons(cli, vault, tmp_path)  # its notes taught their lesson: nothing to ask
    assert again["calls"] == 0 and again["clusters"] == [] and len(model.calls()) == 1 and dirty(vault) == ""


def test_a_cluster_is_asked_once_and_again_when_a_note_joins(cli, vault, model, tmp_path) -> None:  # type: ignore[no-untyped-def]
    model.rules({"match": "", "answer": {"skip": "three notes sharing a tag are not a lesson"}})
    first = lessons(cli, vault, tmp_path)
    assert first["counts"]["skipped"] == 1 and first["calls"] == 1 and first["proposed"] == []
    assert lessons(cli, vault, tmp_path)["calls"] == 0  # the ledger answers
    note(vault, LATE, "Red CI once more: the shared database.", title="One more", type="episode",
         captured="2025-04-02", tags="[flaky-db]")  # fmt: skip
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "one more")
    joined = lessons(cli, vault, tmp_path)
    assert joined["calls"] == 1 and sorted(joined["clusters"][0]["sources"]) == sorted([*DB, LATE])


def test_a_lesson_under_the_bar_or_unreadable_is_not_written(cli, vault, model, tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = snapshot(vault)
    model.rules({"match": "", "answer": {**LESSON, "rests_on": DB[:2]}})
    near = lessons(cli, vault, tmp_path)
    assert near["counts"]["near-miss"] == 1 and "2 distinct note(s)" in near["clusters"][0]["reason"]
    assert snapshot(vault) == tree

    (tmp_path / "calls.jsonl").unlink()
    ledger_file(vault).with_name("lessons.json").unlink()  # the near miss is known: forget it, to ask again
    model.rules({"match": "", "text": "not json"})
    unclear = lessons(cli, vault, tmp_path)
    assert unclear["counts"]["unclear"] == 1 and snapshot(vault) == tree


def test_the_budget_is_read_before_each_call(cli, vault, model, tmp_path) -> None:  # type: ignore[no-untyped-def]
    report = lessons(cli, vault, tmp_path, "--max-calls", "0")
    assert report["calls"] == 0 and report["stopped_by"].startswith("max_calls") and not model.calls()
    assert report["counts"]["owed"] == 1


def test_the_lesson_is_taken_back_by_undo(cli, vault, model, tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = snapshot(vault)
    [path] = lessons(cli, vault, tmp_path)["proposed"]
    r = cli("undo", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--yes")
    assert r.code == 0, r.err + r.out
    assert snapshot(vault) == tree and not (vault / path).exists()


def test_the_night_job_proposes_through_the_daemon_and_charges_its_run(vault, model, tmp_path, env) -> None:  # type: ignore[no-untyped-def]
    cfg = Path(env["XDG_CONFIG_HOME"]) / "agentmd" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(f'[enrich]\nprogram = "{FAKE}"\ncall_timeout = 20\n', encoding="utf-8")
    daemon = Daemon(resolve(vault=str(vault)), port=0, commit_debounce=0.2, probe_interval=0)
    daemon.start()
    try:
        wait_until(lambda: not daemon.health()["index_stale"], what="first pass")
        jobs = DaemonJobs(daemon)
        assert jobs.scheduler.reload().jobs["lessons"].enabled is False  # it spends tokens: the owner turns it on
        ran = jobs.scheduler.run_named("lessons")
        assert ran["outcome"] == "ok", ran
        assert ran["changed"]["proposed"] == ["memory/lessons/shared-test-databases-make-ci-flaky.md"]
        assert ran["budget_used"]["calls"] == 1 and ran["budget_used"]["tokens"] == ran["changed"]["usage"]["added"]
        wait_until(lambda: is_clean(vault) and origins(vault)[0] == "lessons", 10, "the lesson's commit")
        again = jobs.scheduler.run_named("lessons")
        assert again["changed"]["calls"] == 0 and len(model.calls()) == 1
    finally:
        daemon.stop()
