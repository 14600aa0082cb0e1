"""The lifecycle policy on a real vault in git, aged by a clock the test holds: unused notes sink to dormant,
a recalled, edited or linked-to note rises (or stays), rules, pinned notes and hand-set lifecycles never move.
Changes go through the governed curation path (one commit, `origin: lifecycle`), are journaled with their
actor, shown by `agentmd log`, demoted in search, never injected by recall, and listed in the morning note."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import GIT_ENV, make_repo, origins
from search_helpers import search

from agentmd.engine.curate.host import local_writer
from agentmd.engine.curate.lifecycle import LifecyclePlan, run_pass
from agentmd.engine.curate.lifecycle_history import read_journal
from agentmd.engine.curate.steps import apply_steps
from agentmd.engine.git.gate import corpus_write_gate
from agentmd.engine.index import usage
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.jobs.morning import Changes, render
from agentmd.engine.search.recall import Walls, gather
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import Settings, resolve
from agentmd.rules import ContractCache, load_contract

NOTES = {
    "memory/unused-gizmo.md": "---\ntitle: Gizmo calibration\n---\nThe gizmo calibration needs a warm bench.\n",
    "memory/recalled-sprocket.md": "---\ntitle: Sprocket torque\n---\nSprocket torque is twelve newton metres.\n",
    "memory/conventions/naming.md": "---\ntitle: Branch naming\ntype: convention\n---\nBranches are kebab-case.\n",
    "memory/pinned-oncall.md": "---\ntitle: Oncall phone\npinned: true\n---\nThe oncall phone is in the drawer.\n",
    "memory/hand-set.md": "---\ntitle: Hand set\nlifecycle: active\n---\nThe owner wrote this lifecycle.\n",
    "memory/target-widget.md": "---\ntitle: Widget spec\n---\nWidgets weigh three grams.\n",
    "memory/linker.md": "---\ntitle: Linker\n---\nSee [[target-widget]] for the widget.\n",
    "private/diary.md": "---\ntitle: Diary\n---\nA private entry nobody uses.\n",
}
CAPTURED = "memory/captured-flange.md"
CAPTURED_TEXT = "---\ntitle: Flange gasket\nlifecycle: active\n---\nFlange gaskets are replaced yearly.\n"


def git(vault: Path, *args: str, when: dt.datetime | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    return subprocess.run(["git", "-C", str(vault), *args], check=True, capture_output=True, text=True, env=env).stdout


def commit(vault: Path, rel: str, text: str, message: str, when: dt.datetime | None = None) -> None:
    (vault / rel).write_text(text, encoding="utf-8")
    git(vault, "add", rel)
    git(vault, "commit", "-q", "-m", message, when=when)


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for k in ("HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(k, str(tmp_path / k.lower()))
    monkeypatch.delenv("AGENTMD_VAULT", raising=False)
    vault = make_repo(tmp_path / "vault", NOTES)
    # a capture stamps `lifecycle: active`: a writer's stamp, not the owner's choice
    commit(vault, CAPTURED, CAPTURED_TEXT, "capture: 1 file\n\norigin: capture\nhost: test\n")
    return resolve(vault=str(vault))


class Policy:
    """The policy run the way the daemon's job runs it, at a time the test chooses."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.contracts = ContractCache(settings.vault, settings.contract_path)
        self.store = Store(settings.cache_dir)
        reconcile(settings.vault, self.store)
        self.start = dt.datetime.now(dt.UTC).replace(microsecond=0)

    def day(self, n: float) -> dt.datetime:
        return self.start + dt.timedelta(days=n)

    def run(self, day: float, *, dry: bool = False) -> LifecyclePlan:
        reconcile(self.settings.vault, self.store)  # what a hand commit changed, as the watcher would index it
        writer = local_writer(self.settings, self.contracts, self.store)
        catalog = Catalog.reader(self.settings.catalog_path)
        try:
            plan, _results = run_pass(
                self.settings.vault,
                self.contracts.get().contract,
                catalog,
                self.settings.state_dir,
                self.settings.catalog_path,
                now=self.day(day),
                apply=None if dry else (lambda steps: apply_steps(writer, steps)),
                gate=lambda: corpus_write_gate(self.settings.vault),
            )
        finally:
            catalog.close()
        return plan

    def lifecycle(self, rel: str) -> str | None:
        row = self.store.catalog.get(rel)
        assert row is not None
        return row.lifecycle


@pytest.fixture
def policy(settings: Settings) -> Iterator[Policy]:
    p = Policy(settings)
    yield p
    p.store.close()


def text(settings: Settings, rel: str) -> str:
    return (settings.vault / rel).read_text(encoding="utf-8")


def test_unused_notes_sink_a_used_one_rises_hand_set_never_moves(
    policy: Policy, settings: Settings, cli: Callable[..., Any]
) -> None:
    first = policy.run(0)
    assert first.sink == [] and first.rise == []  # the watch starts now: nothing has been watched for 180 days
    assert [p for p, _v, _c in first.hand_set] == ["memory/hand-set.md"]  # journaled as the owner's, once
    early = policy.run(150)
    assert early.sink == []

    # the owner edits the linking note on day 100: the note it links to counts as linked to then
    commit(settings.vault, "memory/linker.md", NOTES["memory/linker.md"] + "Also heavy.\n", "edit", policy.day(100))
    plan = policy.run(200)
    sank = sorted(c.path for c in plan.sink)
    assert sank == [CAPTURED, "memory/recalled-sprocket.md", "memory/unused-gizmo.md"]
    assert plan.left_alone["rule"] == 1 and plan.left_alone["pinned"] == 1
    assert plan.left_alone["lifecycle set by hand"] == 1 and plan.left_alone["the door refuses (private space)"] == 1
    assert plan.hand_set == []

    gizmo = text(settings, "memory/unused-gizmo.md")
    assert "lifecycle: dormant\n" in gizmo and "lifecycle_since: " in gizmo and "lifecycle_before" not in gizmo
    flange = text(settings, CAPTURED)
    assert "lifecycle: dormant\n" in flange and "lifecycle_before: active\n" in flange
    for rel in (
        "memory/conventions/naming.md",
        "memory/pinned-oncall.md",
        "memory/hand-set.md",
        "memory/target-widget.md",
        "private/diary.md",
    ):
        assert text(settings, rel) == NOTES[rel], rel
    assert "lifecycle" not in text(settings, "memory/linker.md")  # edited on day 100: used
    assert origins(settings.vault)[0] == "lifecycle"
    assert policy.lifecycle("memory/unused-gizmo.md") == "dormant"

    journal = read_journal(settings.state_dir)
    assert {(j["path"], j["actor"], j["to"]) for j in journal} == {
        ("memory/hand-set.md", "operator", "active"),
        ("memory/unused-gizmo.md", "policy", "dormant"),
        ("memory/recalled-sprocket.md", "policy", "dormant"),
        (CAPTURED, "policy", "dormant"),
    }
    assert all(j["commit"] for j in journal)
    log = cli("log", "--origin", "lifecycle", "--vault", str(settings.vault))
    assert log.code == 0 and "lifecycle: 1 commit(s), 3 file(s)" in log.out

    # a second pass the same day changes nothing and journals the hand-set lifecycle only once
    again = policy.run(200)
    assert again.sink == [] and again.rise == [] and again.hand_set == []

    # used again: a search returned the sprocket note on day 201; the owner edited the gizmo note on day 202
    usage.record(settings.catalog_path, ["memory/recalled-sprocket.md"], "recall", when=policy.day(201).timestamp())
    edited = gizmo.replace("warm bench", "warm bench and a level floor")
    commit(settings.vault, "memory/unused-gizmo.md", edited, "edit by hand", policy.day(202))
    plan = policy.run(203)
    assert sorted(c.path for c in plan.rise) == ["memory/recalled-sprocket.md", "memory/unused-gizmo.md"]
    assert plan.sink == []
    assert text(settings, "memory/recalled-sprocket.md") == NOTES["memory/recalled-sprocket.md"]  # exactly as it was
    assert "lifecycle" not in text(settings, "memory/unused-gizmo.md")
    assert policy.lifecycle("memory/recalled-sprocket.md") is None

    # the owner sets the flange note back to active by hand: never moved again, however long it rests
    commit(settings.vault, CAPTURED, CAPTURED_TEXT, "back to active")
    later = policy.run(900)
    assert CAPTURED not in [c.path for c in later.sink]
    assert text(settings, CAPTURED) == CAPTURED_TEXT
    assert "memory/hand-set.md" not in [c.path for c in later.sink]
    assert text(settings, "memory/hand-set.md") == NOTES["memory/hand-set.md"]
    assert {c.path for c in later.sink} >= {"memory/unused-gizmo.md", "memory/recalled-sprocket.md"}
    assert (CAPTURED, "operator") in {(j["path"], j["actor"]) for j in read_journal(settings.state_dir)}


def test_dormant_notes_are_demoted_in_search_and_never_recalled(policy: Policy, settings: Settings) -> None:
    policy.run(0)
    policy.run(200)
    contract = load_contract(settings.vault, settings.contract_path).contract
    response = search(policy.store.index, contract, SearchRequest(query="sprocket torque"), policy.store.catalog)
    top = response["results"][0]
    assert top["note"] == "memory/recalled-sprocket.md"  # still found: demoted, not hidden
    assert top["penalty"] == pytest.approx(contract.multiplier("dormant")) and contract.multiplier("dormant") < 1
    gathered = gather(policy.store.catalog, policy.store.index, Walls(), response["results"])
    assert gathered["direct"] == []
    assert any("memory/recalled-sprocket.md: dormant" in why for why in gathered["left_out"])


def test_dry_run_changes_nothing_and_the_morning_note_lists_what_sank(policy: Policy, settings: Settings) -> None:
    policy.run(0)
    head, journal = git(settings.vault, "rev-parse", "HEAD"), read_journal(settings.state_dir)
    dry = policy.run(200, dry=True)
    assert len(dry.sink) == 5  # the linker and its target too: nothing edited the linker since day 0
    assert git(settings.vault, "rev-parse", "HEAD") == head and read_journal(settings.state_dir) == journal
    record = {
        "job": "lifecycle",
        "outcome": "ok",
        "start": policy.day(200).isoformat(),
        "stop_reason": "done",
        "changed": dry.to_dict(),
    }
    _headline, body = render(policy.day(200).date(), {"color": "green"}, [record], Changes())
    assert "- 5 notes sank to dormant, unused for 180 days or more: " in body
    assert "memory/unused-gizmo.md" in body and "no note changed" not in body


def test_contract_turns_the_policy_off_and_validates_the_age(policy: Policy, settings: Settings) -> None:
    rules = settings.vault / "standards" / "storage-rules.md"
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text("# Rules\n\n```yaml\nthresholds:\n  dormant_after_days: 0\n```\n", encoding="utf-8")
    git(settings.vault, "add", "-A")
    git(settings.vault, "commit", "-q", "-m", "rules")
    policy.run(0)
    plan = policy.run(400)
    assert plan.sink == [] and plan.off is not None and "dormant_after_days is 0" in plan.off

    rules.write_text("# Rules\n\n```yaml\nthresholds:\n  dormant_after_days: soon\n```\n", encoding="utf-8")
    state = load_contract(settings.vault, None)
    assert state.halted
    assert any("thresholds.dormant_after_days" in e and "180 (0 turns it off)" in e for e in state.errors)
    assert load_contract(settings.vault.parent / "nowhere", None).contract.thresholds.dormant_after_days == 180


def test_a_generated_map_linking_a_note_is_no_use_of_it(policy: Policy, settings: Settings) -> None:
    """A map of content links every note it lists (engine/curate/maps.py): rebuilt on day 100, it must not keep
    an unused note from sinking, as a note someone edited that day would."""
    policy.run(0)
    page = "---\ntitle: Maps\nkind: moc\ngenerated: agentmd maps\nlifecycle: pinned\n---\n- [[unused-gizmo]]\n"
    (settings.vault / "maps").mkdir()
    commit(settings.vault, "maps/index.md", page, "maps: 1 page\n\norigin: maps\n", policy.day(100))
    sank = [c.path for c in policy.run(200).sink]
    assert "memory/unused-gizmo.md" in sank and "maps/index.md" not in sank


def test_the_command_prints_its_plan_and_writes_only_with_yes(
    policy: Policy, settings: Settings, cli: Callable[..., Any]
) -> None:
    """`agentmd lifecycle` is curation like `confirm` or `retire`: its plan, and nothing written unless --yes."""
    head = git(settings.vault, "rev-parse", "HEAD")
    where = ("--vault", str(settings.vault), "--index", str(settings.cache_dir))
    plan = cli("lifecycle", *where, "--json")
    assert plan.code == 0, plan.err
    assert plan.json()["dry_run"] is True and plan.json()["commits"] == []
    assert git(settings.vault, "rev-parse", "HEAD") == head
    done = cli("lifecycle", *where, "--yes", "--json")
    assert done.code == 0, done.err
    assert done.json()["dry_run"] is False
