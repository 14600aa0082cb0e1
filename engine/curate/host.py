"""Who applies a curation step: the daemon when it runs for the vault, else the command itself.

The daemon is the vault's one writer while it runs: it owns the committer (and so the origins it registers)
and the index. A curation command computes its plan by reading the vault and hands the steps to the daemon
(`POST /v1/curate`), which checks and applies them with its own committer: no second writer races it, and its
commit cycle commits the notes with the step's origin. Without a daemon the command applies the steps itself,
with a committer and an index of its own, under the same lock protocol.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

from agentmd.engine.client import Located, locate
from agentmd.engine.curate.steps import Step, StepRefused, StepResult, StepResultJson, Writer, apply_steps
from agentmd.engine.errors import UsageError
from agentmd.engine.git.committer import committer_for
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.settings import Settings
from agentmd.rules import ContractCache

PLAN_FOLDER = "curate"


def local_writer(settings: Settings, contracts: ContractCache, store: Store) -> Writer:
    committer = committer_for(settings, contracts)
    committer.prepare()

    def commit() -> tuple[list[str], str | None]:
        cycle = committer.commit_cycle()
        return [c.sha for c in cycle.commits], cycle.error or cycle.skipped

    def index(paths: Sequence[str]) -> None:
        contract = contracts.get().contract
        reconcile(
            settings.vault,
            store,
            only=set(paths),
            link_convention=contract.link_convention,
            sync_patterns=contract.sync_tool_patterns,
        )

    return Writer(
        settings.vault, lambda: contracts.get().contract, committer.note_origin, commit, index, committer.paused
    )


def run_steps(settings: Settings, steps: Sequence[Step]) -> tuple[list[StepResult], str]:
    """Apply `steps`, by the daemon when one runs; the results and who applied them (`daemon` or `local`)."""
    steps = [s for s in steps if s.edits]
    if not steps:
        return [], "local"
    daemon = locate(settings.state_dir, settings.vault)
    if daemon is not None:
        return _forward(daemon, steps), "daemon"
    contracts = ContractCache(settings.vault, settings.contract_path)
    store = Store(settings.cache_dir)
    try:
        return apply_steps(local_writer(settings, contracts, store), steps), "local"
    finally:
        store.close()


def plan_folder(settings: Settings) -> Path:
    return settings.state_dir / PLAN_FOLDER


def _forward(daemon: Located, steps: Sequence[Step]) -> list[StepResult]:
    """Hand the steps to the daemon. A plan can be far larger than an HTTP body may be, so it travels as a
    file in the daemon's state folder (it reads plans from there and nowhere else) and the request names it."""
    folder = daemon.state_dir / PLAN_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    plan = folder / f"plan-{uuid.uuid4().hex}.json"
    tmp = plan.with_suffix(".tmp")
    tmp.write_text(json.dumps({"steps": [s.to_dict() for s in steps]}), encoding="utf-8")
    os.replace(tmp, plan)
    try:
        answer = daemon.ask(
            "/v1/curate",
            {"plan": plan.name},
            what="the daemon could not apply the curation",
            again="Run the command again once the daemon is back: the notes already done are skipped",
        )
    finally:
        plan.unlink(missing_ok=True)
    results = [_result(r) for r in answer.get("results", [])]
    if answer.get("refused"):
        raise StepRefused(str(answer["refused"]), results)
    return results


def serve_plan(settings: Settings, writer: Writer, data: dict[str, object]) -> dict[str, object]:
    """The daemon's side of `POST /v1/curate`: read the named plan from the state folder and apply it."""
    name = str(data.get("plan", ""))
    if not name.startswith("plan-") or "/" in name or not name.endswith(".json"):
        raise UsageError("name a plan file the curation command wrote (plan-<id>.json)")
    try:
        raw = json.loads((plan_folder(settings) / name).read_text(encoding="utf-8"))
        steps = [Step.from_dict(s) for s in raw["steps"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"the plan {name} cannot be read ({exc})") from None
    done: list[StepResult] = []
    try:
        apply_steps(writer, steps, done)
    except StepRefused as exc:
        return {"results": [r.to_dict() for r in done], "refused": str(exc)}
    return {"results": [r.to_dict() for r in done]}


def _result(data: StepResultJson) -> StepResult:
    """One result of the daemon's answer (its keys read forgivingly: an older daemon may leave one out)."""
    return StepResult(
        str(data.get("origin", "")),
        [str(p) for p in data.get("paths", [])],
        [str(c) for c in data.get("commits", [])],
        [str(w) for w in data.get("warnings", [])],
    )
