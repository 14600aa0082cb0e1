"""`agentmd enrich` end to end: a real git vault, the real CLI, the real index, and a scripted stand-in for the
model CLI (tests/bin/fake_model_cli.py) called through the claude adapter with every isolation flag.

Bodies stay byte for byte; an invented alias refuses the answer and an invented related id is dropped; below
the floor a note stays in the queue; budgets stop the run at the right note with the reason and the cursor; a
second run with nothing changed makes no call; a refused note is not asked again until its body changes; the
dry run's figures are what the real run then spends; every commit carries `origin: enrich`.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from curate_helpers import head, note
from daemon_helpers import git, make_repo, origins
from enrich_helpers import FAKE, Model, answer, body, config, fm, run

from agentmd.engine.enrich.model import claude_command

OLD = (dt.datetime.now(dt.UTC) - dt.timedelta(days=5)).isoformat(timespec="seconds")
OLDER = (dt.datetime.now(dt.UTC) - dt.timedelta(days=9)).isoformat(timespec="seconds")

UNTYPED = "memory/2026/11/deploy-pipeline.md"
CLIP = "inbox/phone/clip.md"
INGESTED = "memory/ingested/runbook.md"
NEIGHBOUR = "memory/decisions/ci-choice.md"
RECORD = "memory/2026/11/session.md"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    note(
        root,
        UNTYPED,
        "Deploys go through GitHub Actions.\nCI (continuous integration) runs on every push.",
        title="Deploy pipeline",
        status="unfiled",
        captured=OLD,
        filing_confidence="low",
        source="claude-code",
    )
    note(root, CLIP, "Clipped on the phone: GitHub Actions cache tips.", captured=OLDER, source="phone")
    note(
        root,
        INGESTED,
        "Deploy from CI with GitHub Actions, then tag the release.",
        status="unfiled",
        captured=OLD,
        source="ingest:runbook.md",
        trust="untrusted",
    )
    note(
        root,
        NEIGHBOUR,
        "We chose GitHub Actions for CI and deploys.",
        title="GitHub Actions for deploys",
        status="active",
        type="decision",
        captured=OLDER,
        summary="Why GitHub Actions runs CI.",
    )
    note(root, RECORD, "Session log of the deploy work.", status="unfiled", kind="session-log", captured=OLD)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    return root


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Model:
    """Write the stand-in's rules; returns a reader of its call log."""
    return Model.installed(tmp_path, monkeypatch)


def standard_rules(model) -> None:
    model.rules(
        {
            "match": f"Note ({UNTYPED})",
            "answer": answer(aliases=["CI"], related=["memory/decisions/ci-choice", "memory/invented/elsewhere"]),
        },
        {"match": f"Note ({CLIP})", "answer": answer(title="Actions cache tips", confidence=0.3)},
        {"match": f"Note ({INGESTED})", "answer": answer(title="Deploy runbook", aliases=["Blue Falcon"])},
    )


def test_a_run_files_grounded_answers_and_never_touches_a_body(cli, vault: Path, model, tmp_path: Path) -> None:
    standard_rules(model)
    bodies = {rel: body(vault, rel) for rel in (UNTYPED, CLIP, INGESTED, NEIGHBOUR, RECORD)}
    ingested_bytes = (vault / INGESTED).read_bytes()
    before = head(vault)
    report = run(cli, vault, config(tmp_path))

    outcomes = {n["path"]: n["outcome"] for n in report["notes"]}
    assert outcomes == {UNTYPED: "filed", INGESTED: "refused", CLIP: "below-floor", RECORD: "skipped"}
    judged = [n["path"] for n in report["notes"] if n["path"] != RECORD]
    assert judged == [UNTYPED, INGESTED, CLIP]  # unfiled first, then by cause
    assert report["calls"] == 3 and len(model.calls()) == 3
    assert {rel: body(vault, rel) for rel in bodies} == bodies  # every body byte for byte

    filed = fm(vault, UNTYPED)
    assert filed["status"] == "active" and filed["type"] == "fact" and filed["filing_confidence"] == 0.9
    assert filed["title"] == "Deploy pipeline"  # the note's own title is kept
    assert filed["aliases"] == ["CI"] and filed["tags"] == ["deploy", "ci"]
    assert filed["related"] == ["[[memory/decisions/ci-choice]]"]  # the invented id was dropped
    assert filed["importance_proposed"] == 3 and filed["enriched"]["prompt"] == "enrich-1"
    assert filed["source"] == "claude-code" and filed["captured"]  # carried untouched
    assert "why" not in filed
    assert "memory/invented/elsewhere" in next(n for n in report["notes"] if n["path"] == UNTYPED)["reason"]

    low = fm(vault, CLIP)
    assert low["status"] == "unfiled" and low["filing_confidence"] == 0.3
    assert (vault / INGESTED).read_bytes() == ingested_bytes  # refused: nothing written
    assert "Blue Falcon" in next(n for n in report["notes"] if n["path"] == INGESTED)["reason"]

    assert origins(vault)[:2] == ["enrich", "enrich"] and git(vault, "rev-list", f"{before}..HEAD").count("\n") == 2
    assert git(vault, "status", "--porcelain") == ""
    queue = cli("queue", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--json").json()
    assert UNTYPED not in [i["path"] for i in queue["items"]] and CLIP in [i["path"] for i in queue["items"]]

    # the prompt offered the neighbour and the contract's types; each call ran isolated
    first = next(c for c in model.calls() if f"Note ({UNTYPED})" in c["prompt"])
    assert "id: memory/decisions/ci-choice" in first["prompt"] and "decision, episode, fact" in first["prompt"]
    assert first["argv"] == list(claude_command(str(FAKE)))[1:]

    again = run(cli, vault, config(tmp_path))  # nothing changed: nothing is paid for
    assert again["calls"] == 0 and len(model.calls()) == 3
    assert {n["path"]: n["outcome"] for n in again["notes"]} == {
        INGESTED: "unchanged",
        CLIP: "unchanged",
        RECORD: "skipped",
    }

    note(
        vault,
        INGESTED,
        "Deploy from CI with GitHub Actions, then tag and announce the release.",
        status="unfiled",
        captured=OLD,
        source="ingest:runbook.md",
        trust="untrusted",
    )
    git(vault, "commit", "-qam", "edit the runbook")
    third = run(cli, vault, config(tmp_path))  # the refused note changed: it is asked again, alone
    assert third["calls"] == 1 and len(model.calls()) == 4
    assert {n["path"]: n["outcome"] for n in third["notes"]}[INGESTED] == "refused"


def test_budgets_stop_the_run_at_the_right_note_and_flags_only_lower_them(cli, vault: Path, model, tmp_path) -> None:
    standard_rules(model)
    report = run(cli, vault, config(tmp_path, max_calls=2), "--max-calls", "9")  # a flag cannot raise the line
    assert report["budget"]["max_calls"] == 2 and report["calls"] == 2
    assert report["stopped_by"].startswith("max_calls") and report["cursor"] == INGESTED
    resumed = run(cli, vault, config(tmp_path), "--after", report["cursor"], "--max-calls", "1")
    assert resumed["calls"] == 1 and [n["path"] for n in resumed["notes"]] == [CLIP]
    assert fm(vault, CLIP)["filing_confidence"] == 0.3


def test_the_token_budget_counts_what_a_call_adds(cli, vault: Path, model, tmp_path: Path) -> None:
    model.rules(
        {
            "match": "",
            "answer": answer(confidence=0.2),
            "usage": {"input": 60, "cache_read": 90000, "cache_write": 0, "output": 40},
        }
    )
    report = run(cli, vault, config(tmp_path, max_tokens=150))
    # 100 tokens added a call (the 90,000 cached tokens are not counted): two calls, then the line is reached
    assert report["calls"] == 2 and report["usage"]["added"] == 200 and report["usage"]["cache_read"] == 180000
    assert report["stopped_by"].startswith("max_tokens")


def test_the_fuse_stops_a_run_of_failing_calls(cli, vault: Path, model, tmp_path: Path) -> None:
    model.rules({"match": "", "fail": "Not logged in"})
    report = run(cli, vault, config(tmp_path, fuse=2))
    assert report["calls"] == 2 and report["stopped_by"].startswith("fuse")
    assert all("Not logged in" in n["reason"] for n in report["notes"] if n["outcome"] == "failed")
    assert origins(vault) == []  # nothing written; a failure leaves no ledger row either
    model.rules({"match": "", "answer": answer(confidence=0.2)})
    assert run(cli, vault, config(tmp_path))["calls"] == 3  # the failed notes are asked again


def test_garbage_and_timeouts_are_failures_not_answers(cli, vault: Path, model, tmp_path: Path) -> None:
    model.rules(
        {"match": f"Note ({UNTYPED})", "garbage": "I think this note is a fact."},
        {"match": f"Note ({INGESTED})", "hang": True},
        {"match": f"Note ({CLIP})", "text": "```json\n" + json.dumps(answer(type="gossip")) + "\n```"},
    )
    report = run(cli, vault, config(tmp_path, call_timeout=2))
    by = {n["path"]: n for n in report["notes"]}
    assert by[UNTYPED]["outcome"] == "failed" and "not a JSON envelope" in by[UNTYPED]["reason"]
    assert by[INGESTED]["outcome"] == "failed" and "no answer within" in by[INGESTED]["reason"]
    assert by[CLIP]["outcome"] == "refused" and "gossip" in by[CLIP]["reason"]  # a type the contract lacks
    assert origins(vault) == []


def test_the_dry_run_sizes_what_the_real_run_then_does(cli, vault: Path, model, tmp_path: Path) -> None:
    standard_rules(model)
    dry = run(cli, vault, config(tmp_path), "--dry-run")
    assert model.calls() == [] and origins(vault) == []
    assert dry["estimate"]["calls"] == 3 and dry["estimate"]["owed_by_cause"] == {"never-judged": 3}
    assert dry["estimate"]["tokens"] > 0
    real = run(cli, vault, config(tmp_path))
    assert real["calls"] == dry["estimate"]["calls"]
    capped = run(cli, vault, config(tmp_path), "--dry-run", "--max-calls", "0")
    assert capped["estimate"]["calls"] == 0
    text = cli(
        "enrich",
        "--vault",
        str(vault),
        "--index",
        str(vault.parent / "idx"),
        "--config",
        str(config(tmp_path)),
        "--dry-run",
    ).out
    assert "dry run: 0 call(s)" in text and "nothing was called" in text and "2 unchanged" in text


def test_a_dirty_worktree_is_refused_by_the_gate(cli, vault: Path, model, tmp_path: Path) -> None:
    standard_rules(model)
    (vault / "scratch.md").write_text("uncommitted\n", encoding="utf-8")
    r = cli("enrich", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--config", str(config(tmp_path)))
    assert r.code == 1 and "corpus-write gate refused" in r.out
    assert model.calls() == []


def test_a_moved_note_is_followed_and_not_asked_again(cli, vault: Path, model, tmp_path: Path) -> None:
    standard_rules(model)
    run(cli, vault, config(tmp_path))
    assert len(model.calls()) == 3
    git(vault, "mv", CLIP, "inbox/phone/renamed-clip.md")
    git(vault, "commit", "-qm", "rename the clip")
    again = run(cli, vault, config(tmp_path))
    assert again["calls"] == 0
    moved = next(n for n in again["notes"] if n["path"] == "inbox/phone/renamed-clip.md")
    assert moved["outcome"] == "unchanged" and "followed" in moved["reason"]


def test_the_time_budget_and_the_owner_s_hand_on_lifecycle(cli, vault: Path, model, tmp_path: Path) -> None:
    model.rules({"match": "", "answer": {**answer(), "why": "a why no pass may write"}})
    stopped = run(cli, vault, config(tmp_path, max_seconds=0))
    assert stopped["calls"] == 0 and stopped["stopped_by"].startswith("max_seconds")
    note(
        vault,
        UNTYPED,
        "Deploys go through GitHub Actions.",
        title="Deploy pipeline",
        status="unfiled",
        lifecycle="dormant",
        importance=5,
        captured=OLD,
    )
    git(vault, "commit", "-qam", "the owner set a lifecycle and an importance")
    run(cli, vault, config(tmp_path))
    filed = fm(vault, UNTYPED)
    assert filed["status"] == "active" and filed["lifecycle"] == "dormant"  # the owner's lifecycle stands
    assert filed["importance"] == 5 and filed["importance_proposed"] == 3  # the pass only proposes importance
    assert "why" not in filed  # offered by the answer, stripped before the strict read, never written


def test_the_text_report_names_the_stop_and_the_cursor(cli, vault: Path, model, tmp_path: Path) -> None:
    standard_rules(model)
    r = cli(
        "enrich",
        "--vault",
        str(vault),
        "--index",
        str(vault.parent / "idx"),
        "--config",
        str(config(tmp_path)),
        "--max-calls",
        "1",
    )
    assert r.code == 0, r.err
    assert f"  filed       {UNTYPED}: confidence 0.90 ≥ floor 0.5" in r.out
    assert "enrich: 1 filed, 0 below the floor, 0 refused, 0 failed, 0 unchanged, 1 skipped; 1 call(s)" in r.out
    assert f"stopped by max_calls: the call budget (1 calls) is spent; resume with --after {RECORD}" in r.out
    assert "applied by the local writer; 1 commit(s)" in r.out


def test_one_run_at_a_time(cli, vault: Path, model, tmp_path: Path) -> None:
    from agentmd.engine.enrich.run import run_lock
    from agentmd.engine.settings import resolve

    standard_rules(model)
    settings = resolve(vault=str(vault), index=str(vault.parent / "idx"), config=str(config(tmp_path)))
    with run_lock(settings.state_dir):  # the nightly job, say, is running
        r = cli(
            "enrich", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--config", str(config(tmp_path))
        )
        assert r.code == 2 and "another enrichment run is in progress" in r.err
        assert (
            cli(
                "enrich",
                "--vault",
                str(vault),
                "--index",
                str(vault.parent / "idx"),
                "--config",
                str(config(tmp_path)),
                "--dry-run",
            ).code
            == 0
        )  # sizing the night needs no lock
    assert model.calls() == []
    assert run(cli, vault, config(tmp_path))["calls"] == 3


def test_a_model_command_that_is_not_installed_is_a_failure_naming_it_and_its_setting(
    cli, vault: Path, model, tmp_path: Path
) -> None:
    cfg = config(tmp_path, program="no-such-model-cli-here")
    before = head(vault)
    r = cli("enrich", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--config", str(cfg))
    assert r.code == 1
    assert "`no-such-model-cli-here` is not installed or not on PATH" in r.err and "[enrich]" in r.err
    assert str(cfg) in r.err and model.calls() == [] and head(vault) == before
    dry = cli("enrich", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--config", str(cfg), "--dry-run")
    assert dry.code == 0  # sizing the night calls nothing
