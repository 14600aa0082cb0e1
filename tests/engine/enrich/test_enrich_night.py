"""The night's verdicts past the first one, end to end through the real CLI, a real git vault and index and the
scripted stand-in for the model CLI: a second verdict below the floor sinks a note to dormant (never a pinned
note, a rule, or one the owner revived) and no call is paid for it until its body changes or the owner acts;
the faithfulness judge refuses an answer asserting what the note does not, locally or by a second call under
the same budgets, and the refusal is recorded like any other; the night is taken, and sized, by cause."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from conftest import REPO
from curate_helpers import note
from daemon_helpers import git, make_repo, origins
from enrich_helpers import Model, answer, body, config, fm, ledger_file, outcomes, run, text_run

from agentmd.vault_schema import update_frontmatter

OLD = (dt.datetime.now(dt.UTC) - dt.timedelta(days=5)).isoformat(timespec="seconds")
OTTERS = "memory/2026/11/otters.md"
BADGERS = "memory/2026/11/badgers.md"
TABS = "memory/2026/11/tabs.md"
BACKUPS = "memory/2026/11/backups.md"
TODAY = dt.datetime.now(dt.UTC).date().isoformat()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    note(root, OTTERS, "Otters hold hands while they sleep.", status="unfiled", lifecycle="active", captured=OLD)
    note(root, BADGERS, "Badgers dig setts under hedges.", status="unfiled", lifecycle="active", captured=OLD)
    note(root, TABS, "Indent with four spaces, never tabs.", status="unfiled", type="preference", captured=OLD)
    note(root, BACKUPS, "Backups run nightly at 02:00.", status="unfiled", lifecycle="pinned", captured=OLD)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "four waiting")
    return root


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Model:
    return Model.installed(tmp_path, monkeypatch)


GROUNDED = {
    OTTERS: answer(title="Otters hold hands", summary="Otters hold hands while they sleep.", tags=["otters"]),
    BADGERS: answer(title="Badgers dig setts", summary="Badgers dig setts under hedges.", tags=["badgers"]),
    TABS: answer(title="Four spaces", type="preference", summary="Indent with four spaces, never tabs.", tags=[]),
    BACKUPS: answer(title="Nightly backups", summary="Backups run nightly at 02:00.", tags=["backups"]),
}


def grounded(confidence: float, **over: dict) -> list[dict]:
    rules = []
    for path, a in GROUNDED.items():
        rules.append({"match": f"Note ({path})", "answer": {**a, "confidence": confidence, **over.get(path, {})}})
    return rules


def rewrite_ledger(vault: Path, **changes: str) -> None:
    """Stands in for a change of the prompt or of the gates' question: every row's key or gates rewritten."""
    path = ledger_file(vault)
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = {}
    for key, row in data["rows"].items():
        body_hash, prompt, vocabulary = key.split(":")
        if "prompt" in changes:
            prompt = changes["prompt"]
        if "gates" in changes:
            row["gates"] = changes["gates"]
        rows[f"{body_hash}:{prompt}:{vocabulary}"] = row
    path.write_text(json.dumps({"rows": rows}), encoding="utf-8")


def called(model: Model) -> list[str]:
    paths = []
    for c in model.calls():
        prompt = c["prompt"]
        paths.append(next(p for p in GROUNDED if f"Note ({p})" in prompt or f"Source ({p})" in prompt))
    return paths


def test_a_second_verdict_below_the_floor_sinks_the_note_until_it_changes(cli, vault: Path, model, tmp_path) -> None:
    model.rules(*grounded(0.3))
    bodies = {p: body(vault, p) for p in GROUNDED}
    first = run(cli, vault, config(tmp_path))
    assert set(outcomes(first).values()) == {"below-floor"} and first["dormant"] == []
    assert fm(vault, OTTERS)["status"] == "unfiled" and fm(vault, OTTERS)["lifecycle"] == "active"

    note(
        vault, OTTERS, "Otters hold hands while they sleep. They float.", status="unfiled", captured=OLD,
        lifecycle="active", enriched="{at: x, prompt: enrich-1}",
    )  # fmt: skip
    git(vault, "commit", "-qam", "the owner adds a line to the otters")
    bodies[OTTERS] = body(vault, OTTERS)
    ledger_file(vault).unlink()  # the ledger is lost: the badgers' body is judged again, same fingerprint
    second = run(cli, vault, config(tmp_path))
    assert outcomes(second) == {OTTERS: "dormant", BADGERS: "dormant", TABS: "below-floor", BACKUPS: "below-floor"}
    assert sorted(second["dormant"]) == [BADGERS, OTTERS] and second["counts"]["dormant"] == 2
    for path in (OTTERS, BADGERS):
        sunk = fm(vault, path)
        assert sunk["lifecycle"] == "dormant" and str(sunk["lifecycle_since"]) == TODAY
        assert sunk["status"] == "unfiled" and sunk["filing_confidence"] == 0.3
    assert fm(vault, TABS).get("lifecycle") is None  # a rule never sinks: it stays listed
    assert fm(vault, BACKUPS)["lifecycle"] == "pinned"  # nor does a pinned note
    assert {p: body(vault, p) for p in GROUNDED} == bodies
    assert origins(vault)[:4] == ["enrich"] * 4

    calls = len(model.calls())
    assert run(cli, vault, config(tmp_path))["calls"] == 0  # nothing changed: nothing is paid for
    rewrite_ledger(vault, prompt="enrich-0")  # a new prompt owes every judgment again, but not a dormant note's
    third = run(cli, vault, config(tmp_path))
    assert third["calls"] == 2 and sorted(called(model)[calls:]) == [BACKUPS, TABS]
    dormant = {n["path"]: n for n in third["notes"] if n["path"] in (OTTERS, BADGERS)}
    assert all(n["outcome"] == "skipped" and "dormant since" in n["reason"] for n in dormant.values())

    text = (vault / BADGERS).read_text(encoding="utf-8")
    (vault / BADGERS).write_text(update_frontmatter(text, {"lifecycle": "active"}), encoding="utf-8")
    git(vault, "commit", "-qam", "the owner revives the badgers")
    rewrite_ledger(vault, prompt="enrich-0")
    fourth = run(cli, vault, config(tmp_path))  # the owner acted: asked again, and the revival stands
    assert outcomes(fourth)[BADGERS] == "below-floor" and outcomes(fourth)[OTTERS] == "skipped"
    assert fm(vault, BADGERS)["lifecycle"] == "active"


def test_the_text_report_names_the_notes_that_went_dormant(cli, vault: Path, model, tmp_path) -> None:
    model.rules(*grounded(0.3))
    run(cli, vault, config(tmp_path))
    ledger_file(vault).unlink()
    out = text_run(cli, vault, config(tmp_path))
    assert "enrich: 0 filed, 2 below the floor, 2 dormant, 0 refused" in out
    assert f"dormant now (below the floor twice): {BADGERS}, {OTTERS}" in out
    assert f"  dormant     {OTTERS}: confidence 0.30 < floor 0.5 a second time" in out


def test_an_answer_the_note_does_not_ground_is_refused_and_not_paid_for_again(cli, vault, model, tmp_path) -> None:
    model.rules(
        *grounded(
            0.9,
            **{
                OTTERS: {"summary": "Otters hold hands while they sleep in Monterey Bay."},
                BADGERS: {"summary": "Badgers dig 417 setts under hedges."},  # no date or time holds 417
                TABS: {"summary": "Editors should convert legacy whitespace automatically during formatting."},
            },
        )
    )
    before = {p: (vault / p).read_bytes() for p in (OTTERS, BADGERS, TABS)}
    report = run(cli, vault, config(tmp_path))
    by = {n["path"]: n for n in report["notes"]}
    assert {p: by[p]["outcome"] for p in GROUNDED} == {
        OTTERS: "refused",
        BADGERS: "refused",
        TABS: "refused",
        BACKUPS: "filed",
    }
    assert "faithfulness: the summary names 'Monterey'" in by[OTTERS]["reason"]
    assert "faithfulness: the summary states 417" in by[BADGERS]["reason"]
    assert "content words are the note's" in by[TABS]["reason"]
    assert {p: (vault / p).read_bytes() for p in before} == before  # nothing of a refused answer lands
    assert origins(vault)[:1] == ["enrich"] and report["calls"] == 4
    rows = json.loads(ledger_file(vault).read_text(encoding="utf-8"))["rows"].values()
    assert sum(1 for r in rows if r["verdict"] == "refused" and r["reason"].startswith("faithfulness")) == 3
    assert run(cli, vault, config(tmp_path))["calls"] == 0  # a refusal is recorded: not asked again


def test_the_judge_is_a_second_call_under_the_same_budgets(cli, vault: Path, model, tmp_path: Path) -> None:
    model.rules(
        {"match": f"Source ({OTTERS})", "answer": {"grounded": False, "claim": "Otters sleep in rafts."}},
        {"match": f"Source ({BADGERS})", "garbage": "I cannot judge this."},
        {"match": "is grounded in it", "answer": {"grounded": True, "claim": ""}},
        *grounded(0.9),
    )
    cfg = config(tmp_path, judge=True)
    dry = run(cli, vault, cfg, "--dry-run")
    assert dry["estimate"]["calls"] == 8 and dry["estimate"]["calls_per_note"] == 2 and model.calls() == []
    report = run(cli, vault, cfg)
    assert report["calls"] == dry["estimate"]["calls"] == len(model.calls())
    by = {n["path"]: n for n in report["notes"]}
    assert by[OTTERS]["outcome"] == "refused" and "Otters sleep in rafts." in by[OTTERS]["reason"]
    assert by[BADGERS]["outcome"] == "failed" and "judge" in by[BADGERS]["reason"]  # no verdict: no row
    assert by[TABS]["outcome"] == "filed" and by[BACKUPS]["outcome"] == "filed"
    judge = next(c for c in model.calls() if f"Source ({TABS})" in c["prompt"])
    assert "- summary: Indent with four spaces, never tabs." in judge["prompt"]
    assert "Indent with four spaces, never tabs." in judge["prompt"].split("<<<SOURCE", 1)[1]
    assert by[TABS]["usage"]["added"] == 2 * (100 + 20 + 50)  # both calls charged to the note

    again = run(cli, vault, cfg)  # the failed judgment is asked again; the refused one is not
    assert again["calls"] == 2 and outcomes(again)[OTTERS] == "unchanged"
    rewrite_ledger(vault, gates="gates-1")  # the judge's question changed: the refused note is retried
    dry = run(cli, vault, cfg, "--dry-run")
    assert dry["estimate"]["owed_by_cause"] == {"never-judged": 1, "retried": 1}  # the badgers' judge still fails


def test_with_the_judge_a_note_starts_only_when_both_its_calls_fit(cli, vault: Path, model, tmp_path) -> None:
    model.rules({"match": "is grounded in it", "answer": {"grounded": True, "claim": ""}}, *grounded(0.9))
    report = run(cli, vault, config(tmp_path, judge=True), "--max-calls", "3")
    assert report["calls"] == 2 and report["stopped_by"].startswith("max_calls")
    assert report["cursor"] == called(model)[0]


def test_the_night_is_taken_and_sized_by_cause(cli, vault: Path, model, tmp_path: Path) -> None:
    model.rules(*grounded(0.3))
    run(cli, vault, config(tmp_path))
    note(vault, OTTERS, "Otters hold hands while they sleep, often.", status="unfiled", captured=OLD)
    default = (REPO / "rules" / "storage-rules.default.md").read_text(encoding="utf-8")
    contract = default.replace("  person: memory/people\n", "  person: memory/people\n  howto: memory/howtos\n")
    assert contract != default
    (vault / "standards").mkdir()
    (vault / "standards" / "storage-rules.md").write_text(contract, encoding="utf-8")
    note(vault, "memory/2026/11/moles.md", "Moles dig tunnels.", status="unfiled", captured=OLD)
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "an edit, a new type, a new note")
    model.rules(
        {
            "match": "Note (memory/2026/11/moles.md)",
            "answer": answer(title="Moles dig tunnels", summary="Moles dig tunnels.", tags=[], confidence=0.3),
        },
        *grounded(0.3),
    )
    dry = run(cli, vault, config(tmp_path), "--dry-run")
    assert dry["estimate"]["owed_by_cause"] == {
        "never-judged": 1,
        "changed": 1,
        "owed-under-new-vocabulary": 3,
    }
    assert dry["estimate"]["calls"] == 5 and dry["estimate"]["owed_by_kind"] == {"cards": 5}
    owed = [n["path"] for n in dry["notes"] if n["outcome"] == "owed"]
    assert owed[:2] == ["memory/2026/11/moles.md", OTTERS]
    capped = run(cli, vault, config(tmp_path), "--dry-run", "--max-calls", "2")
    assert capped["estimate"]["calls"] == 2 and capped["estimate"]["later"] == 3
    first = len(model.calls())
    real = run(cli, vault, config(tmp_path), "--max-calls", "2")  # the budget takes the night's first causes
    assert real["calls"] == capped["estimate"]["calls"]
    assert "Note (memory/2026/11/moles.md)" in model.calls()[first]["prompt"]  # never judged: first
    assert called_after(model, first) == [OTTERS]
    rest = run(cli, vault, config(tmp_path), "--after", real["cursor"])
    assert rest["calls"] == 3 and real["calls"] + rest["calls"] == dry["estimate"]["calls"]


def called_after(model: Model, first: int) -> list[str]:
    return [p for c in model.calls()[first:] for p in GROUNDED if f"Note ({p})" in c["prompt"]]


def test_a_note_the_pass_sank_comes_back_when_it_is_filed(cli, vault: Path, model, tmp_path: Path) -> None:
    model.rules(*grounded(0.3))
    run(cli, vault, config(tmp_path))
    ledger_file(vault).unlink()
    assert outcomes(run(cli, vault, config(tmp_path)))[OTTERS] == "dormant"
    text = (vault / OTTERS).read_text(encoding="utf-8")
    (vault / OTTERS).write_text(text.replace("while they sleep.", "while they sleep, and float."), encoding="utf-8")
    git(vault, "commit", "-qam", "the owner adds to the otters")
    model.rules(*grounded(0.9, **{OTTERS: {"summary": "Otters hold hands while they sleep, and float."}}))
    again = run(cli, vault, config(tmp_path))
    assert outcomes(again)[OTTERS] == "filed"
    filed = fm(vault, OTTERS)
    assert filed["status"] == "active" and filed["lifecycle"] == "active" and str(filed["lifecycle_since"]) == TODAY
