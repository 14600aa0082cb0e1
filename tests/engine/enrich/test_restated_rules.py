"""A rule stated twice becomes one note: similar rule notes are shortlisted by the dense arm's vectors (the real
model), the scripted stand-in for the model CLI (tests/bin/fake_model_cli.py) judges each pair, a pair judged the
same is a merge proposal in the groom plan, and `groom --apply` merges it in one commit that `undo` takes back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from curate_helpers import dirty, head, note, snapshot
from daemon_helpers import git, make_repo, origins
from enrich_helpers import Model, config, fm

from agentmd.vault_schema import split_frontmatter

SECRET = "zanzibar"  # a word only the private rule holds
OLDER = "memory/rules/commit-subjects.md"
NEWER = "memory/rules/commit-style.md"
PIN = "memory/rules/pin-deps.md"
UPGRADE = "memory/rules/upgrade-deps.md"
PRIVATE = "private/commit-subjects.md"  # the default contract's `private` space
SAME = {"same": True, "reason": "both ask for imperative commit subjects under fifty characters"}
DISTINCT = {"same": False, "reason": "pinning versions and the upgrade rhythm are two rules"}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    note(root, "memory/git-workflow.md", "How the team uses git: branches, reviews and merges.", title="Git workflow",
         type="fact", captured="2025-01-01")  # fmt: skip
    note(root, OLDER, "Write commit messages in the imperative mood and keep the subject line under 50 characters. "
         "See [[memory/git-workflow]].", title="Commit messages", type="convention", captured="2025-03-01",
         aliases="[subject rule]", tags="[git]")  # fmt: skip
    note(root, NEWER, 'Commit subjects use the imperative mood ("Add", not "Added") and stay below fifty characters.',
         title="Commit message style", type="convention", captured="2025-09-01", tags="[style]")  # fmt: skip
    note(root, PIN, "Pin every Python dependency to an exact version in requirements files.",
         title="Pinned dependencies", type="rule", captured="2025-02-01")  # fmt: skip
    note(root, UPGRADE, "Upgrade Python dependencies once a month, in one pull request of their own.",
         title="Dependency upgrades", type="preference", captured="2025-04-01")  # fmt: skip
    note(root, PRIVATE, f"Commit subjects are imperative and under fifty characters; the {SECRET} repo too.",
         title="Commit subjects", type="convention", captured="2025-05-01")  # fmt: skip
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    return root


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Model:
    m = Model.installed(tmp_path, monkeypatch)
    m.rules({"match": f"({OLDER})", "answer": SAME}, {"match": "", "answer": DISTINCT})
    return m


def args(vault: Path) -> list[str]:
    return ["--vault", str(vault), "--index", str(vault.parent / "idx")]


def propose(cli, vault: Path, tmp_path: Path, *extra: str) -> dict:  # type: ignore[no-untyped-def]
    plan = tmp_path / "plan.json"
    r = cli("groom", *args(vault), "--config", str(config(tmp_path)), "--propose", "--restated", "--out", str(plan),
            "--json", *extra)  # fmt: skip
    assert r.code == 0, r.err + r.out
    return json.loads(plan.read_text(encoding="utf-8"))


def pairs(plan: dict) -> dict[tuple[str, str], dict]:
    return {(p["older"], p["newer"]): p for p in plan["restated"]["pairs"]}


def test_a_restated_rule_is_one_proposal_and_neighbouring_rules_stay_apart(cli, vault, model, tmp_path) -> None:  # type: ignore[no-untyped-def]
    before, tree = head(vault), snapshot(vault)
    plan = propose(cli, vault, tmp_path)
    merges = [p for p in plan["proposals"] if p["detector"] == "restated"]
    assert merges == [
        {
            "detector": "restated",
            "path": OLDER,
            "reason": f"states the same rule as {NEWER}, which is newer and kept: {SAME['reason']}",
            "action": "merge",
            "keep": NEWER,
            "similarity": merges[0]["similarity"],
        }
    ]
    found = pairs(plan)
    assert set(found) == {(OLDER, NEWER), (PIN, UPGRADE)}  # measured: 0.76 and 0.57 with the bundled model
    assert found[(OLDER, NEWER)]["outcome"] == "same" and found[(OLDER, NEWER)]["asked"]
    neighbours = found[(PIN, UPGRADE)]  # close enough to be asked, and judged two rules
    assert neighbours["outcome"] == "distinct" and neighbours["asked"]
    assert neighbours["similarity"] < found[(OLDER, NEWER)]["similarity"]
    assert plan["restated"]["kept_local"] == 1 and plan["restated"]["calls"] == len(model.calls())
    assert plan["stats"]["restated"] == 1

    prompts = [c["prompt"] for c in model.calls()]
    assert any(f"({OLDER})" in p and f"({NEWER})" in p for p in prompts)
    for prompt in prompts:  # the private rule restates the same one, but is never shortlisted nor shown
        assert SECRET not in prompt and "private/" not in prompt
        assert "memory/git-workflow" not in prompt.split("<<<RULE")[0]  # only rules are compared
    assert head(vault) == before and snapshot(vault) == tree and dirty(vault) == ""  # nothing merged yet


def test_a_pair_is_asked_once_and_the_store_vectors_are_used(cli, vault, model, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    first = propose(cli, vault, tmp_path)
    asked = len(model.calls())
    assert asked == first["restated"]["calls"] >= 2
    r = cli("reindex", *args(vault))  # embeds every note: the second pass reads the vector store
    assert r.code == 0, r.err

    monkeypatch.setenv("AGENTMD_MODEL_FILE", str(tmp_path / "no-model.onnx"))  # the model cannot load now
    again = propose(cli, vault, tmp_path)
    assert again["restated"]["without_vectors"] is None  # every rule's vectors came from the store
    assert len(model.calls()) == asked and again["restated"]["calls"] == 0  # the ledger answered
    assert [p for p in again["proposals"] if p["detector"] == "restated"] == [
        p for p in first["proposals"] if p["detector"] == "restated"
    ]
    assert {k: v["outcome"] for k, v in pairs(again).items()} == {k: v["outcome"] for k, v in pairs(first).items()}
    for key, pair in pairs(again).items():
        assert not pair["asked"] and pair["similarity"] == pytest.approx(pairs(first)[key]["similarity"], abs=0.02)

    # an edited rule is a new pair: asked again (embedded on the spot, the store holding its older version)
    monkeypatch.delenv("AGENTMD_MODEL_FILE")
    path = vault / UPGRADE
    path.write_text(path.read_text(encoding="utf-8").replace("once a month", "every other month"), encoding="utf-8")
    third = propose(cli, vault, tmp_path)
    assert third["restated"]["calls"] >= 1 and len(model.calls()) == asked + third["restated"]["calls"]
    assert all(UPGRADE in (o, n) for (o, n), p in pairs(third).items() if p["asked"])


def test_the_budget_stops_the_asking_and_the_rest_wait(cli, vault, model, tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = propose(cli, vault, tmp_path, "--max-calls", "1")
    found = plan["restated"]
    assert found["calls"] == 1 == len(model.calls()) and found["stopped_by"].startswith("max_calls")
    assert found["counts"]["owed"] == found["shortlisted"] - 1 >= 1
    assert pairs(plan)[(OLDER, NEWER)]["outcome"] == "same"  # the closest pair is asked first


def test_apply_merges_into_the_newer_wording_in_one_commit_that_undo_takes_back(cli, vault, model, tmp_path) -> None:  # type: ignore[no-untyped-def]
    propose(cli, vault, tmp_path)
    before, tree = head(vault), snapshot(vault)
    newer_body = split_frontmatter((vault / NEWER).read_text(encoding="utf-8")).body
    older_body = split_frontmatter((vault / OLDER).read_text(encoding="utf-8")).body

    dry = cli("groom", *args(vault), "--apply", str(tmp_path / "plan.json"))
    assert dry.code == 0 and f"merge {OLDER} into {NEWER}" in dry.out and head(vault) == before

    r = cli("groom", *args(vault), "--apply", str(tmp_path / "plan.json"), "--yes", "--json")
    assert r.code == 0, r.err + r.out
    assert git(vault, "rev-list", "--count", f"{before}..HEAD").strip() == "1" and origins(vault)[0] == "groom"
    assert dirty(vault) == ""
    kept = fm(vault, NEWER)
    assert split_frontmatter((vault / NEWER).read_text(encoding="utf-8")).body == newer_body  # the newer wording
    assert kept["title"] == "Commit message style" and kept["type"] == "convention"
    assert kept["aliases"] == ["Commit messages", "subject rule"]  # the older's title and aliases carried
    assert kept["tags"] == ["style", "git"] and kept["related"] == ["[[memory/git-workflow]]"]
    assert kept["merged_from"] == [OLDER]
    retired = fm(vault, OLDER)
    assert retired["lifecycle"] == "superseded" and retired["superseded_by"] == NEWER
    assert retired["retired_reason"] == f"groom:restated (merged into {NEWER})"
    assert split_frontmatter((vault / OLDER).read_text(encoding="utf-8")).body == older_body  # walled, not cut
    hits = cli("search", "imperative commit subjects", *args(vault), "--json").json()["results"]
    assert NEWER in [h["note"] for h in hits] and OLDER not in [h["note"] for h in hits]

    stale = cli("groom", *args(vault), "--apply", str(tmp_path / "plan.json"), "--yes")
    assert stale.code == 1 and "changed since the plan" in stale.out  # a plan applies once

    undo = cli("undo", *args(vault), "--yes")
    assert undo.code == 0, undo.err
    assert snapshot(vault) == tree
