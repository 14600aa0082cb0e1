"""The nightly groom job runs the restated check when the config asks for it: the rule pairs are judged by the
scripted stand-in for the model CLI under the enrichment budgets and the pair ledger, the merges join the plan
written for review, the calls and tokens are charged to the job's run record, and no note changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import TESTS
from curate_helpers import note
from daemon_helpers import git, is_clean, make_repo, wait_until

from agentmd.engine.daemon.jobs_host import DaemonJobs
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import resolve

pytestmark = pytest.mark.slow

FAKE = TESTS / "bin" / "fake_model_cli.py"
OLDER = "memory/rules/commit-subjects.md"
NEWER = "memory/rules/commit-style.md"
PIN = "memory/rules/pin-deps.md"
PRIVATE = "private/commit-subjects.md"
SAME = {"same": True, "reason": "both ask for imperative commit subjects under fifty characters"}
DISTINCT = {"same": False, "reason": "two rules"}


@pytest.fixture
def night(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch):
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    note(root, OLDER, "Write commit messages in the imperative mood and keep the subject line under 50 characters.",
         title="Commit messages", type="convention", captured="2025-03-01")  # fmt: skip
    note(root, NEWER, 'Commit subjects use the imperative mood ("Add", not "Added") and stay below fifty characters.',
         title="Commit message style", type="convention", captured="2025-09-01")  # fmt: skip
    note(root, PIN, "Pin every Python dependency to an exact version in requirements files.",
         title="Pinned dependencies", type="rule", captured="2025-02-01")  # fmt: skip
    note(root, PRIVATE, "Commit subjects are imperative and under fifty characters; the zanzibar repo too.",
         title="Commit subjects", type="convention", captured="2025-05-01")  # fmt: skip
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    cfg = Path(env["XDG_CONFIG_HOME"]) / "agentmd" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(f'[enrich]\nprogram = "{FAKE}"\ncall_timeout = 20\n', encoding="utf-8")
    script = [{"match": f"({OLDER})", "answer": SAME}, {"match": "", "answer": DISTINCT}]
    (tmp_path / "rules.json").write_text(json.dumps(script), encoding="utf-8")
    monkeypatch.setenv("FAKE_MODEL_LOG", str(tmp_path / "calls.jsonl"))
    monkeypatch.setenv("FAKE_MODEL_SCRIPT", str(tmp_path / "rules.json"))
    daemon = Daemon(resolve(vault=str(root)), port=0, commit_debounce=0.2, probe_interval=0)
    daemon.start()
    try:
        wait_until(lambda: not daemon.health()["index_stale"], what="first pass")
        yield root, daemon, cfg, tmp_path / "calls.jsonl"
    finally:
        daemon.stop()


def calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def test_the_nightly_plan_holds_restated_rules_only_when_asked_and_pays_once(night) -> None:  # type: ignore[no-untyped-def]
    root, daemon, cfg, log = night
    head = git(root, "rev-parse", "HEAD")
    jobs = DaemonJobs(daemon)
    plain = jobs.scheduler.run_named("groom-propose")
    assert plain["outcome"] == "ok" and "restated" not in plain["changed"] and not calls(log)

    cfg.write_text(f'[enrich]\nprogram = "{FAKE}"\ncall_timeout = 20\n\n[groom]\nrestated = true\n', encoding="utf-8")
    ran = jobs.scheduler.run_named("groom-propose")
    assert ran["outcome"] == "ok", ran
    found = ran["changed"]["restated"]
    asked = calls(log)
    assert found["counts"]["same"] == 1 and found["calls"] == len(asked) >= 1
    assert ran["budget_used"]["calls"] == len(asked) and ran["budget_used"]["tokens"] == found["usage"]["added"] > 0
    assert found["kept_local"] == 1 and not any("zanzibar" in c["prompt"] for c in asked)
    plan = json.loads(Path(ran["changed"]["plan"]).read_text(encoding="utf-8"))
    merges = [p for p in plan["proposals"] if p["detector"] == "restated"]
    assert [(p["path"], p["keep"], p["action"]) for p in merges] == [(OLDER, NEWER, "merge")]
    assert git(root, "rev-parse", "HEAD") == head and is_clean(root)  # proposed for review, nothing applied

    again = jobs.scheduler.run_named("groom-propose")  # the pair ledger answers: the merge is proposed for free
    assert again["changed"]["restated"]["calls"] == 0 and len(calls(log)) == len(asked)
    assert again["changed"]["restated"]["counts"]["same"] == 1


def test_the_nightly_check_stays_inside_the_budgets(night) -> None:  # type: ignore[no-untyped-def]
    root, daemon, cfg, log = night
    cfg.write_text(
        f'[enrich]\nprogram = "{FAKE}"\ncall_timeout = 20\nmax_calls = 0\n\n[groom]\nrestated = true\n',
        encoding="utf-8",
    )
    ran = DaemonJobs(daemon).scheduler.run_named("groom-propose")
    assert ran["outcome"] == "ok" and ran["changed"]["proposals"] == 0
    assert ran["changed"]["restated"]["stopped_by"].startswith("max_calls") and not calls(log)

    cfg.write_text('[enrich]\nprogram = "/nowhere/claude"\n\n[groom]\nrestated = true\n', encoding="utf-8")
    ran = DaemonJobs(daemon).scheduler.run_named("groom-propose")
    assert ran["outcome"] == "ok" and "/nowhere/claude" in ran["changed"]["restated"]["skipped"]
    wait_until(lambda: is_clean(root), 5, "a clean vault")
