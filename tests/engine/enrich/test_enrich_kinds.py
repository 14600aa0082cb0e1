"""Idea cards and project records, end to end: where the contract puts them, that the night reaches them beside
the review queue, what it may write to each (never a filing, a title, a type or a lifecycle), that a record
without frontmatter costs nothing, and that the dry run counts the three kinds apart."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from curate_helpers import note
from daemon_helpers import git, make_repo, origins
from enrich_helpers import Model, answer, body, config, fm, outcomes, run, text_run

from agentmd.engine.enrich.kinds import in_ideas_folder, is_idea_card, project_of_record
from agentmd.rules import load_contract

OLD = (dt.datetime.now(dt.UTC) - dt.timedelta(days=5)).isoformat(timespec="seconds")
OLDEST = (dt.datetime.now(dt.UTC) - dt.timedelta(days=30)).isoformat(timespec="seconds")
CHARTER = "projects/agentmd/charter.md"
DECISION = "projects/agentmd/decisions/tantivy.md"
BARE = "projects/agentmd/decisions/bare.md"
TRACKER = "projects/agentmd/tracker.md"
PLAN = "projects/agentmd/tasks/t1/plan.md"
IDEA = "memory/semantic/ledger-of-judgments.md"
FACT = "memory/semantic/tantivy-is-fast.md"
CARD = "memory/2026/11/otters.md"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    note(
        root,
        CHARTER,
        "agentmd keeps an Obsidian vault as the memory of coding agents.",
        title="agentmd charter",
        kind="charter",
        tags="[project]",
        captured=OLD,
    )
    note(
        root,
        DECISION,
        "We chose Tantivy for full-text search because it is fast.",
        title="Use Tantivy for search",
        type="decision",
        status="active",
        captured=OLD,
    )
    (root / BARE).write_text("A bare decision without frontmatter.\n", encoding="utf-8")
    note(root, TRACKER, "Open: the dense arm.", title="Tracker", captured=OLD)
    note(root, PLAN, "Step one: read the seed.", title="Plan", captured=OLD)
    note(
        root,
        IDEA,
        "Keep a ledger of judgments so nothing is paid for twice.",
        title="A ledger of judgments",
        type="idea",
        status="active",
        filing_confidence="high",
        area="engine",
        dismissed="false",
        captured=OLD,
    )
    note(root, FACT, "Tantivy is fast.", title="Tantivy is fast", type="fact", status="active", captured=OLD)
    note(root, CARD, "Otters hold hands while they sleep.", status="unfiled", captured=OLD)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a project, an idea, a card")
    return root


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Model:
    m = Model.installed(tmp_path, monkeypatch)
    m.rules(
        {
            "match": f"Note ({CHARTER})",
            "answer": answer(
                title="Another title",
                type="decision",
                summary="agentmd keeps an Obsidian vault as the memory of coding agents.",
                tags=["memory"],
                confidence=0.2,
            ),
        },
        {
            "match": f"Note ({DECISION})",
            "answer": answer(
                title="Tantivy",
                type="fact",
                summary="Tantivy was chosen for full-text search because it is fast.",
                tags=["search", "tantivy"],
                related=["memory/semantic/tantivy-is-fast"],
                confidence=0.95,
            ),
        },
        {
            "match": f"Note ({IDEA})",
            "answer": answer(
                title="Judgment ledger",
                type="fact",
                summary="A ledger of judgments keeps anything from being paid for twice.",
                tags=["ledger"],
                confidence=0.1,
            ),
        },
        {
            "match": f"Note ({CARD})",
            "answer": answer(title="Otters hold hands", summary="Otters hold hands while they sleep.", tags=[]),
        },
    )
    return m


def test_where_each_kind_lives_by_the_contract() -> None:
    contract = load_contract(Path("/nonexistent"), None).contract
    assert project_of_record(CHARTER, contract) == "agentmd"
    assert project_of_record("projects/agentmd/_index.md", contract) == "agentmd"
    assert project_of_record("projects/agentmd/research/dense/notes.md", contract) == "agentmd"
    for path in (TRACKER, PLAN, "projects/agentmd/blueprint.md", "projects/charter.md", "memory/decisions/x.md"):
        assert project_of_record(path, contract) is None, path
    assert project_of_record("projects/agentmd/.trash/decisions/x.md", contract) is None
    assert in_ideas_folder(IDEA, contract) and not in_ideas_folder("memory/semantic/sub/x.md", contract)
    assert is_idea_card(IDEA, "idea", "active", contract) and is_idea_card(IDEA, "idea", None, contract)
    assert not is_idea_card(IDEA, "fact", "active", contract)  # a fact filed beside the ideas
    assert not is_idea_card(IDEA, "idea", "unfiled", contract)  # nobody filed it yet: an ordinary card


def test_the_night_reaches_ideas_and_records_and_writes_only_what_it_may(cli, vault: Path, model, tmp_path) -> None:
    bodies = {p: body(vault, p) for p in (CHARTER, DECISION, IDEA, CARD)}
    bare = (vault / BARE).read_bytes()
    dry = run(cli, vault, config(tmp_path), "--dry-run")
    assert dry["estimate"]["owed_by_kind"] == {"cards": 1, "idea cards": 1, "project records": 2}
    assert dry["estimate"]["calls"] == 4 and model.calls() == []
    text = text_run(cli, vault, config(tmp_path), "--dry-run")
    assert "owed: 1 card(s), 1 idea card(s), 2 project record(s); by cause: never-judged 4" in text

    report = run(cli, vault, config(tmp_path))
    assert report["calls"] == dry["estimate"]["calls"] == len(model.calls())
    assert outcomes(report) == {CARD: "filed", IDEA: "idea", CHARTER: "record", DECISION: "record", BARE: "skipped"}
    assert [n["path"] for n in report["notes"] if n["path"] != BARE] == [CARD, IDEA, CHARTER, DECISION]
    assert "without frontmatter" in next(n["reason"] for n in report["notes"] if n["path"] == BARE)
    assert report["counts"]["idea"] == 1 and report["counts"]["record"] == 2 and report["counts"]["filed"] == 1
    assert {p: body(vault, p) for p in bodies} == bodies and (vault / BARE).read_bytes() == bare

    charter = fm(vault, CHARTER)
    assert charter["title"] == "agentmd charter" and charter["kind"] == "charter"
    assert charter["summary"] == "agentmd keeps an Obsidian vault as the memory of coding agents."
    assert charter["tags"] == ["project", "memory"]  # the record's own first
    for never in ("type", "status", "filing_confidence", "lifecycle", "lifecycle_since", "importance"):
        assert never not in charter, never
    assert charter["enriched"]["confidence"] == 0.2 and charter["importance_proposed"] == 3
    decision = fm(vault, DECISION)
    assert decision["title"] == "Use Tantivy for search" and decision["type"] == "decision"
    assert decision["status"] == "active" and "filing_confidence" not in decision
    assert decision["related"] == ["[[memory/semantic/tantivy-is-fast]]"]

    idea = fm(vault, IDEA)
    assert idea["title"] == "A ledger of judgments" and idea["type"] == "idea"  # stand over the answer
    assert idea["status"] == "active" and idea["filing_confidence"] == "high"  # no verdict: filed by being there
    assert idea["area"] == "engine" and idea["dismissed"] is False
    assert "lifecycle" not in idea and idea["tags"] == ["ledger"]
    assert fm(vault, CARD)["status"] == "active"

    assert origins(vault)[:4] == ["enrich"] * 4
    assert run(cli, vault, config(tmp_path))["calls"] == 0  # current on all four: the ledger answers

    note(
        vault,
        IDEA,
        "Keep a ledger of judgments so nothing is paid for twice, and so refusals stick.",
        title="A ledger of judgments",
        type="idea",
        status="active",
        filing_confidence="high",
        area="engine",
        enriched="{at: x}",
        captured=OLD,
    )
    git(vault, "commit", "-qam", "the owner thinks the idea further")
    again = run(cli, vault, config(tmp_path))  # judged low again: an idea never sinks
    assert outcomes(again)[IDEA] == "idea" and "lifecycle" not in fm(vault, IDEA)


def test_a_name_another_note_already_carries_is_not_given_twice(cli, vault: Path, model, tmp_path: Path) -> None:
    search = "memory/2026/11/search.md"
    note(vault, search, "Tantivy is fast for search; we wrote it down as Use Tantivy for search.", status="unfiled",
         captured=OLDEST)  # fmt: skip
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "an untitled note about search")
    model.rules(
        {
            "match": f"Note ({search})",
            "answer": answer(
                title="Tantivy is fast",  # the fact's title
                summary="Tantivy is fast for search.",
                tags=["tantivy"],
                aliases=["Use Tantivy for search"],  # the decision's title
            ),
        },
        {"match": "", "fail": "only the search note is asked here"},
    )
    report = run(cli, vault, config(tmp_path), "--max-calls", "1")
    by = {n["path"]: n for n in report["notes"]}
    assert by[search]["outcome"] == "filed"
    assert "another note already carries the name: Tantivy is fast, Use Tantivy for search" in by[search]["reason"]
    written = fm(vault, search)
    assert "title" not in written and "aliases" not in written and written["summary"] == "Tantivy is fast for search."


def test_a_project_s_own_records_lead_the_neighbours_of_its_cards(cli, vault: Path, model, tmp_path: Path) -> None:
    card = "memory/2026/11/search-notes.md"
    note(vault, card, "Tantivy is fast for search.", status="unfiled", project="agentmd", captured=OLDEST)
    close = "memory/semantic/tantivy-search-speed.md"
    note(vault, close, "Tantivy is fast for search. Search with Tantivy is fast.", title="Tantivy is fast for search",
         type="fact", status="active", captured=OLD)  # fmt: skip
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "a card of the agentmd project")
    model.rules({"match": "", "fail": "not answered here"})
    run(cli, vault, config(tmp_path), "--max-calls", "1")
    prompt = model.calls()[0]["prompt"]
    assert f"Note ({card})" in prompt
    offered = [line.split("id: ", 1)[1] for line in prompt.splitlines() if line.startswith("- id: ")]
    assert offered[0] == DECISION[:-3] and close[:-3] in offered  # the closer match comes after the record
