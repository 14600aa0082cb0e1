"""Groom propose -> apply on real git vaults, the lossless split and its revert on every multi-story note of
the shared corpora, and clusters that are byte-identical across runs and after a rebuilt index."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import CORPORA, corpus
from curate_helpers import dirty, head, note, snapshot
from daemon_helpers import git, make_repo, origins

from agentmd.engine.curate.groom import slices, split_points
from agentmd.vault_schema import parse_note, split_frontmatter, update_frontmatter

STORY = "A paragraph of the story, long enough to stand on its own as a note of its own. " * 4
OLD = "2025-01-02T10:00:00+00:00"


def long_note(n: int) -> str:
    return "# Many stories\n\n" + "".join(f"## Story {i}\n\n" + f"{STORY}\n\n" * 5 for i in range(n))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    note(root, "memory/a.md", "The deploy runs from CI on every tag, after staging.", captured=OLD)
    note(root, "memory/b.md", "The deploy runs from CI on every tag,   after staging.", captured="2025-02-01")
    note(root, "memory/todo.md", "- [ ] write the doc\n- [x] fix the build\n- [ ] ship", captured=OLD)
    note(root, "memory/done.md", "- [x] write the doc\n- [x] fix the build\n- [-] ship on Friday", captured=OLD)
    note(
        root,
        "memory/status.md",
        "STATUS: migrating the store, last touched 2025-01-03.\n\nOn track.",
        title="Store status",
        captured=OLD,
    )
    note(
        root,
        "memory/log.md",
        "STATUS: shipped 2025-01-03\n- 2025-01-04 merged\n- 2025-01-05 deployed",
        type="changelog",
        captured=OLD,
    )
    note(root, "memory/stories.md", long_note(4), captured=OLD)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    return root


def args(vault: Path) -> list[str]:
    return ["--vault", str(vault), "--index", str(vault.parent / "idx")]


def test_propose_writes_a_plan_and_nothing_else(cli, vault: Path, tmp_path: Path) -> None:
    before, tree = head(vault), snapshot(vault)
    r = cli("groom", *args(vault), "--propose", "--out", str(tmp_path / "plan.json"))
    assert r.code == 0, r.err
    assert head(vault) == before and snapshot(vault) == tree
    plan = json.loads((tmp_path / "plan.json").read_text())
    found = {p["path"]: p["detector"] for p in plan["proposals"]}
    assert found == {
        "memory/b.md": "duplicate",
        "memory/done.md": "todo-list",
        "memory/status.md": "stale-status",
        "memory/stories.md": "split",
    }  # memory/log.md is a record kind (changelog): never touched; memory/todo.md still has open items
    assert len(plan["snapshot_hash"]) == 64 and plan["stats"]["duplicate"] == 1


def test_apply_is_a_dry_run_until_yes_then_one_groom_commit_and_a_stale_plan_is_refused(
    cli, vault: Path, tmp_path: Path
) -> None:
    out = tmp_path / "plan.json"
    cli("groom", *args(vault), "--propose", "--out", str(out))
    before, tree = head(vault), snapshot(vault)
    assert "dry run" in cli("groom", *args(vault), "--apply", str(out)).out
    assert head(vault) == before and snapshot(vault) == tree
    r = cli("groom", *args(vault), "--apply", str(out), "--yes", "--json")
    assert r.code == 0, r.out + r.err
    assert git(vault, "rev-list", "--count", f"{before}..HEAD").strip() == "1" and origins(vault)[0] == "groom"
    assert dirty(vault) == ""
    fm = parse_note("memory/b.md", (vault / "memory/b.md").read_bytes(), 0).frontmatter
    assert fm["lifecycle"] == "archived" and "groom:duplicate" in fm["retired_reason"]
    assert set(snapshot(vault)) >= set(tree)  # nothing deleted
    stale = cli("groom", *args(vault), "--apply", str(out), "--yes")
    assert stale.code == 1 and "changed since the plan" in stale.out
    again = cli("groom", *args(vault), "--propose", "--json").json()
    assert again["proposals"] == []


def test_a_plan_stands_while_no_note_it_touches_changes_and_names_the_one_that_did(
    cli, vault: Path, tmp_path: Path
) -> None:
    # the nightly plan meets the morning note, a self-probe and agents' captures before anyone applies it
    out = tmp_path / "plan.json"
    cli("groom", *args(vault), "--propose", "--out", str(out))
    note(vault, "daily/morning.md", "What happened overnight.", captured="2026-12-07")
    (vault / "README.md").write_text("# Vault\n\nEdited by hand.\n")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "the morning's own writes")
    assert cli("groom", *args(vault), "--apply", str(out), "--yes").code == 0
    out2 = tmp_path / "plan2.json"
    note(vault, "memory/c.md", "- [x] one\n- [x] two\n- [x] three things done", captured=OLD)
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "a finished list")
    cli("groom", *args(vault), "--propose", "--out", str(out2))
    (vault / "memory/c.md").write_text((vault / "memory/c.md").read_text() + "- [ ] and one more\n")
    stale = cli("groom", *args(vault), "--apply", str(out2), "--yes")
    assert stale.code == 1 and "memory/c.md changed since the plan was made" in stale.out


def test_of_two_copies_as_old_the_one_linked_to_is_kept(cli, tmp_path: Path) -> None:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    text = "Money is stored as integer cents, never as floats."
    note(root, "memory/money.md", text, captured=OLD)
    note(root, "memory/money-a-copy.md", text, captured=OLD)  # sorts first, made by `cp`
    note(root, "memory/blueprint.md", "Amounts: see [[money]] and ![[money]].", captured=OLD)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    plan = cli("groom", *args(root), "--propose", "--json").json()
    (dup,) = [p for p in plan["proposals"] if p["detector"] == "duplicate"]
    assert (dup["path"], dup["keep"]) == ("memory/money-a-copy.md", "memory/money.md")
    assert "as old and more linked to" in dup["reason"]


def test_split_then_revert_round_trips_byte_for_byte(cli, vault: Path, tmp_path: Path) -> None:
    original = (vault / "memory/stories.md").read_bytes()
    out = tmp_path / "plan.json"
    cli("groom", *args(vault), "--propose", "--out", str(out))
    assert cli("groom", *args(vault), "--apply", str(out), "--yes").code == 0
    parent = (vault / "memory/stories.md").read_text()
    children = parse_note("memory/stories.md", parent.encode(), 0).frontmatter["split_into"]
    assert len(children) == 4
    bodies = [split_frontmatter((vault / c).read_text()).body for c in children]
    assert "".join(bodies) == split_frontmatter(parent).body
    before = head(vault)
    assert cli("groom", *args(vault), "--split-revert", "--yes").code == 0
    assert (vault / "memory/stories.md").read_bytes() == original
    assert origins(vault)[0] == "groom" and git(vault, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    assert all("archived" in (vault / c).read_text() for c in children)
    after = head(vault)
    assert cli("groom", *args(vault), "--split-revert", "--yes").code == 0 and head(vault) == after


def _corpus_notes() -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(CORPORA):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        found += [Path(dirpath) / f for f in filenames if f.endswith(".md")]
    return sorted(found)


def test_every_multi_story_note_of_the_corpora_splits_losslessly_and_reverts() -> None:
    split = 0
    for path in _corpus_notes():
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        body = split_frontmatter(text).body
        points = split_points(body)
        if len(data) < 6000 or not points:
            continue
        split += 1
        assert "".join(slices(body, points)) == body, path
        try:
            marked = update_frontmatter(text, {"superseded_by": "x.part-1.md", "split_into": ["x.part-1.md"]})
        except Exception:
            continue  # hand-made frontmatter the writer will not edit: groom leaves such notes alone
        assert update_frontmatter(marked, {}, ["superseded_by", "split_into"]).encode("utf-8") == data, path
    assert split > 100


def test_clusters_are_byte_identical_across_runs_and_after_a_rebuild(cli, tmp_path: Path) -> None:
    src = tmp_path / "v"
    shutil.copytree(corpus("ailurus-zh"), src)
    a = cli("clusters", "--vault", str(src), "--index", str(tmp_path / "i"), "--json")
    assert a.code == 0, a.err
    b = cli("clusters", "--vault", str(src), "--index", str(tmp_path / "i"), "--json")
    assert cli("reindex", "--vault", str(src), "--index", str(tmp_path / "i"), "--from-scratch", "--no-dense").code == 0
    c = cli("clusters", "--vault", str(src), "--index", str(tmp_path / "i"), "--json")
    assert a.out == b.out == c.out
    result = a.json()
    assert result["clusters"] and all(1 <= len(x["terms"]) <= 3 for x in result["clusters"])
    first = result["clusters"][0]["id"]
    renamed = cli(
        "clusters", "--vault", str(src), "--index", str(tmp_path / "i"), "--rename", first, "Notes on X", "--json"
    ).json()
    assert renamed["clusters"][0]["label"] == "Notes on X" and renamed["clusters"][0]["renamed"]
    assert cli("clusters", "--vault", str(src), "--index", str(tmp_path / "i"), "--json").json() == renamed
    bogus = cli("clusters", "--vault", str(src), "--index", str(tmp_path / "i"), "--rename", "c-nothing", "X")
    assert bogus.code == 2 and "no cluster has the id 'c-nothing'" in bogus.err  # nothing kept under a wrong id
    assert cli("clusters", "--vault", str(src), "--index", str(tmp_path / "i"), "--json").json() == renamed


def test_stale_age_is_measured_from_the_newest_date_in_the_text(cli, vault: Path) -> None:
    today = dt.date.today().isoformat()
    note(
        vault,
        "memory/status.md",
        f"STATUS: migrating the store, last touched {today}.\n\nOn track.",
        title="Store status",
        captured=OLD,
    )
    git(vault, "commit", "-qam", "fresh status")
    found = {p["path"] for p in cli("groom", *args(vault), "--propose", "--json").json()["proposals"]}
    assert "memory/status.md" not in found


def test_on_a_corpus_copy_every_split_concatenates_back_and_the_revert_restores_every_byte(cli, tmp_path: Path) -> None:
    root = tmp_path / "zh"
    shutil.copytree(corpus("ailurus-zh"), root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "corpus")
    original = snapshot(root)
    out = tmp_path / "plan.json"
    assert cli("groom", *args(root), "--propose", "--out", str(out)).code == 0
    plan = json.loads(out.read_text())
    plan["proposals"] = [p for p in plan["proposals"] if p["action"] == "split"]
    assert len(plan["proposals"]) >= 10
    out.write_text(json.dumps(plan))
    assert cli("groom", *args(root), "--apply", str(out), "--yes").code == 0
    for p in plan["proposals"]:
        parent = (root / p["path"]).read_text()
        children = parse_note(p["path"], parent.encode(), 0).frontmatter["split_into"]
        assert (
            "".join(split_frontmatter((root / c).read_text()).body for c in children) == split_frontmatter(parent).body
        )
    assert cli("groom", *args(root), "--split-revert", "--yes").code == 0
    after = snapshot(root)
    assert {k: v for k, v in after.items() if k in original} == original
    assert dirty(root) == "" and origins(root)[:2] == ["groom", "groom"]


def test_decision_records_are_not_status_reports_and_a_plan_stays_readable(cli, vault: Path) -> None:
    """A decision record's `## Status` over one word is a field of the record, not a report that went stale;
    a status heading over a report still is one. A plan holds PLAN_MAX proposals and says how many wait."""
    from agentmd.engine.curate.groom import PLAN_MAX

    adr = "## Status\n\nAccepted\n\n## Context\n\nWe chose SQLite on 2024-05-01.\n\n## Decision\n\nUse it."
    note(vault, "decisions/0001-sqlite.md", adr, title="Use SQLite", captured=OLD)
    note(vault, "decisions/0002-queue.md", adr.replace("SQLite", "a queue"), title="A queue", type="decision",
         captured=OLD)  # fmt: skip
    report = "## Status\n\n- build green on 2025-01-04\n- deploy blocked on the certificate\n"
    note(vault, "memory/weekly.md", report, title="Weekly", captured=OLD)
    for i in range(PLAN_MAX + 7):
        note(vault, f"memory/todo-{i}.md", f"- [x] task {i} one\n- [-] task {i} two\n- [x] done {i}", captured=OLD)
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "records")
    r = cli("groom", *args(vault), "--propose", "--json")
    plan = r.json()
    found = {p["path"]: p["detector"] for p in plan["proposals"]}
    assert "decisions/0001-sqlite.md" not in found and "decisions/0002-queue.md" not in found
    assert len(plan["proposals"]) == PLAN_MAX and plan["held_back"] >= 7 + 4
    text = cli("groom", *args(vault), "--propose").out
    assert f"{PLAN_MAX} are in this plan" in text and "more are proposed again once these are applied" in text
    full = {p["path"] for p in plan["proposals"]}
    assert "memory/status.md" in full  # the oldest notes come first: the original fixture's are in the plan
    weekly = [p for p in plan["proposals"] if p["path"] == "memory/weekly.md"]
    assert weekly == [] or weekly[0]["detector"] == "stale-status"
