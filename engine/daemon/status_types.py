"""The shape of `agentmd status`: the JSON that `/status` answers and `status --json` prints, section by section.

Each section is built by the room that knows it (the jobs' in engine/jobs/report.py, sync's in
engine/git/sync.py, the dense arm's in engine/daemon/embedding.py, the contract's in rules/) and assembled in
engine/daemon/status.py. Every section may carry `red` and `yellow` lines (what someone should look at, each
naming its fix); the status's own `red` and `yellow` gather them, and its `color` follows.

A status read back from a daemon, or from an older version's daemon, is taken as it came: the sections are
declared `total=False` where a partial one is ever sent (the daemon's answer before its first pass, the
session-start hook's status read without the index).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, Required, TypedDict

if TYPE_CHECKING:
    from agentmd.engine.daemon.embedding import DenseSection
    from agentmd.engine.daemon.health import Rebuild
    from agentmd.engine.git.sync_status import SyncSection
    from agentmd.engine.index.reconcile import PassRecord
    from agentmd.engine.jobs.report import JobsSection
    from agentmd.engine.write.probe import ProbeRecord


class Unreadable(TypedDict):
    path: str
    problem: str


class IndexSection(TypedDict, total=False):
    documents: int | None  # None where the search index is not opened (the session-start hook)
    last_pass_at: str | None
    last_pass_age_s: float | None
    last_pass: PassRecord | None
    index_stale: bool  # the first pass (or a rebuild) has not finished
    start_pass: str  # the daemon's start-up pass: "running" (searches answer from the index as opened) or "done"
    flags: dict[str, int]  # notes by what kept them from being read whole
    not_read_whole: list[Unreadable]
    rebuild: Rebuild  # the daemon's rebuilds of a damaged index
    unreadable: str  # the catalog could not be read (the session-start hook)
    red: list[str]
    yellow: list[str]


class QueueSection(TypedDict, total=False):
    total: int  # every note awaiting review
    count: int  # those captured since the queue baseline: what the thresholds read
    oldest_age_days: float | None  # the oldest of those
    inherited: int  # those captured before the baseline: the backlog the vault came with, never red
    inherited_oldest_age_days: float | None
    baseline_at: str  # the line in effect (engine/curate/baseline.py)
    baseline_source: str  # recorded | config | pending (not recorded: the vault was never indexed)
    baseline_recorded_at: str | None  # the state file's moment
    baseline_count: int | None  # notes waiting when it was recorded
    red: list[str]


class GitSection(TypedDict):
    state: str  # ok or degraded
    reason: str | None
    detail: str
    commit_failures: int
    first_commit_failure: str | None
    last_commit_error: str | None
    last_commit_at: str | None
    worktrees_inside_vault: list[str]
    large_files_held: dict[str, int]  # new files the committer holds back, by size in bytes
    red: list[str]
    yellow: list[str]


class ContractSection(TypedDict):
    """The contract's entry (rules/contract/model.py `ContractStatus`) with its red line and refusals."""

    source: str
    halted: bool
    errors: list[str]
    color: str
    remedy: NotRequired[str]
    red: list[str]
    halted_refusals: NotRequired[int]  # typed captures refused while halted


class ProbeSection(TypedDict):
    last: ProbeRecord | None
    age_s: NotRequired[float | None]
    red: list[str]
    yellow: NotRequired[list[str]]


class HooksSection(TypedDict):
    gave_up_last_hour: dict[str, int]  # by hook
    red: list[str]
    yellow: list[str]


class MemoryInfo(TypedDict):
    resident_bytes: int | None
    trims: int
    given_back_bytes: int


class DaemonInfo(TypedDict, total=False):
    """The daemon's part of status; without a daemon only `running` (false), `lease_problem` and, for a
    daemon too busy to answer, `slow`."""

    running: Required[bool]
    pid: int
    port: int
    started_at: str
    passes: int
    commits: int
    commit_cycles: int
    watcher: dict[str, object]  # the file watcher's counters (engine/daemon/watcher.py `stats`)
    vault_problem: str | None  # the folder at the vault's path is not the vault
    lease_problem: str | None  # another daemon serves this vault too
    memory: MemoryInfo
    slow: str  # the yellow line for a daemon that did not answer in time


class CapturesToday(TypedDict):
    count: int
    daily_card_budget: int


class RecallSection(TypedDict):
    paused: bool
    pauses: list[dict[str, object]]
    line: str | None


class Sections(TypedDict, total=False):
    index: IndexSection
    queue: QueueSection
    git: GitSection
    contract: ContractSection
    probe: ProbeSection
    jobs: JobsSection
    sync: SyncSection
    hooks: HooksSection


class Status(Sections, total=False):
    vault: Required[str]
    color: Required[str]  # green, yellow or red
    red: Required[list[str]]
    yellow: Required[list[str]]
    daemon: DaemonInfo
    captures_today: CapturesToday
    dense: DenseSection
    recall: RecallSection
    live: dict[str, object]  # the daemon's last health pass: when, and its checks
