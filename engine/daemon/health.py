"""The daemon's health pass: live checks of what can break under a running daemon, each one a status line
that names its fix.

The pass runs every few seconds on its own thread (engine/daemon/service.py) and looks at things the
other threads would only notice when they fail, or never:
- the vault folder: still there, and still the folder the daemon started on (device and inode of the
  root, recorded at start; an unmounted drive or a folder swapped for another changes them);
- the state and cache folders: writable (a file is created and removed) and with free space left;
- the vault's own disk: writable (not a read-only mount, not the owner's permission taken away) and with
  free space left, since every capture and every commit writes there; and `.git/objects`, where a commit
  writes first (checked without writing a file into the vault, which the watcher and git would see);
- the index: the cache folder, the catalog and every index file intact (engine/index/integrity.py);
  damage asks the indexer to rebuild, and the line says so while it runs;
- the watcher: alive, or why it could not start (inotify limits), and how much of the vault is unwatched;
- git: a refused mass deletion, commit cycles skipped and why.
`HealthPass.run` returns `{"red": [...], "yellow": [...], "checks": {...}}`; status.py merges it in.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Required, TypedDict

if TYPE_CHECKING:
    from agentmd.engine.git.health import CommitState

MIN_FREE_BYTES = 64 * 2**20


def writable(folder: Path) -> str | None:
    """None when a file can be created, written and removed in `folder`, else why not."""
    probe = folder / f".agentmd-write-probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, b"ok")
        finally:
            os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(probe)
        return errno.errorcode.get(exc.errno or 0, "error") + f" ({exc.strerror or exc})"
    return None


def free_bytes(folder: Path) -> int | None:
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _mb(n: int) -> str:
    return f"{n / 2**20:.0f} MB"


def index_damaged_line(damage: str) -> str:
    """Status's red line for an index found damaged or gone, which the daemon is about to rebuild."""
    return (
        f"index-damaged: {damage}: the daemon rebuilds the index from the vault in the background "
        "(searches answer from the rebuilt part meanwhile); if it keeps coming back, check the disk"
    )


def index_rebuilding_line(reason: object) -> str:
    """Status's red line while the daemon rebuilds a damaged index."""
    return f"index-rebuilding: after {reason}: rebuilding from the vault; wait for it to finish"


class Rebuild(TypedDict, total=False):
    """The daemon's rebuild of a damaged index: whether one runs, how many ran, and the last one's times."""

    running: Required[bool]
    count: Required[int]
    reason: str  # the damage found
    started_at: str  # ISO times
    finished_at: str
    seconds: float


class HealthReport(TypedDict):
    """One health pass: when it ran, its red and yellow lines, and what each check measured."""

    at: str  # ISO time
    red: list[str]
    yellow: list[str]
    checks: dict[str, object]


@dataclass
class HealthPass:
    vault: Path
    state_dir: Path
    cache_dir: Path
    min_free_bytes: int = MIN_FREE_BYTES
    vault_id: tuple[int, int] | None = None
    passes: int = 0
    last: HealthReport | None = None

    def record_vault(self) -> None:
        """Remember which folder the vault is (call once at start)."""
        try:
            st = os.stat(self.vault)
            self.vault_id = (st.st_dev, st.st_ino)
        except OSError:
            self.vault_id = None

    def vault_problem(self) -> str | None:
        try:
            st = os.stat(self.vault)
        except OSError:
            return (
                f"vault-missing: the vault folder {self.vault} is gone (an unmounted drive, a move?): mount or "
                "restore it; the daemon indexes and commits nothing from it meanwhile"
            )
        if self.vault_id is not None and (st.st_dev, st.st_ino) != self.vault_id:
            return (
                f"vault-swapped: {self.vault} is no longer the folder the daemon started on (another device or "
                "inode): put the original folder back, or restart `agentmd serve` to adopt this one"
            )
        return None

    def vault_disk_problems(self) -> tuple[list[str], dict[str, object]]:
        """The vault's own disk: writable, with free space, and git's object store writable."""
        red: list[str] = []
        if not self.vault.is_dir():
            return red, {}
        free = free_bytes(self.vault)
        can_write = os.access(self.vault, os.W_OK)
        checks: dict[str, object] = {"folder": str(self.vault), "writable": can_write, "free_bytes": free}
        if not can_write:
            red.append(
                f"vault-unwritable: the vault folder {self.vault} cannot be written (a read-only mount, or its "
                "permissions): captures are refused and edits cannot be committed; make it writable again"
            )
        elif free is not None and free < self.min_free_bytes:
            red.append(
                f"disk-full: only {_mb(free)} free on the vault's disk ({self.vault}; red under "
                f"{_mb(self.min_free_bytes)}): captures and commits will fail once it is full; free some space"
            )
        objects = self.vault / ".git" / "objects"
        if objects.is_dir():
            checks["git_objects_writable"] = os.access(objects, os.W_OK)
            if not checks["git_objects_writable"]:
                red.append(
                    f"git-unwritable: git cannot write in {objects} (a read-only mount, or its permissions): "
                    "changes wait uncommitted and are committed once it can; make it writable again"
                )
        return red, checks

    def disk_problems(self) -> tuple[list[str], dict[str, object]]:
        red: list[str] = []
        checks: dict[str, object] = {}
        for name, folder in (("state", self.state_dir), ("cache", self.cache_dir)):
            if not folder.is_dir():
                if name == "cache":
                    continue  # a deleted cache is the index check's line (it is rebuilt)
                red.append(
                    f"state-missing: the state folder {folder} was deleted: restart `agentmd serve` to recreate it"
                )
                continue
            problem = writable(folder)
            free = free_bytes(folder)
            checks[name] = {"folder": str(folder), "writable": problem is None, "free_bytes": free}
            if problem is not None:
                full = "ENOSPC" in problem or "EDQUOT" in problem or "No space" in problem
                fix = ("free some space on its disk" if full else
                       "make it writable (permissions, a read-only mount)")  # fmt: skip
                red.append(f"{name}-unwritable: cannot write in {folder}: {problem}: {fix}, or point agentmd elsewhere")
            elif free is not None and free < self.min_free_bytes:
                red.append(
                    f"disk-full: only {_mb(free)} free where the {name} folder {folder} lives (red under "
                    f"{_mb(self.min_free_bytes)}): free some space"
                )
        return red, checks

    def run(
        self,
        *,
        index_damage: str | None,
        rebuild: Rebuild | None,
        watcher: dict[str, object] | None,
        watch_error: str | None,
        refused: str | None,
        commit_state: CommitState | None,
        last_cycle_skipped: bool = False,
        dead_threads: tuple[str, ...] = (),
        now: dt.datetime | None = None,
    ) -> HealthReport:
        """One pass over every check; see the module docstring."""
        now = now or dt.datetime.now(dt.UTC)
        red: list[str] = []
        yellow: list[str] = []
        vault = self.vault_problem()
        if vault:
            red.append(vault)
        disk_red, checks = self.disk_problems()
        red += disk_red
        if not vault:
            vault_red, checks["vault"] = self.vault_disk_problems()
            red += vault_red
        if index_damage:
            red.append(index_damaged_line(index_damage))
        elif rebuild and rebuild.get("running"):
            red.append(index_rebuilding_line(rebuild.get("reason")))
        if watch_error:
            red.append(
                f"watcher-unavailable: {watch_error}: the whole vault is reconciled every "
                f"{(watcher or {}).get('fallback_interval_s', '?')} s instead; raise the inotify limits "
                "(fs.inotify.max_user_watches / max_user_instances) and restart `agentmd serve`"
            )
        elif watcher is not None and not watcher.get("running") and not vault:
            red.append(
                "watcher-stopped: the file watcher is not running, so edits wait for the periodic reconcile: "
                "restart `agentmd serve`"
            )
        for name in dead_threads:
            red.append(
                f"thread-stopped: the daemon's {name} thread has stopped (see the agentmd log): restart `agentmd serve`"
            )
        if refused and not vault:
            red.append(f"mass-deletion-refused: {refused}")
        from agentmd.engine.git.health import CommitState

        git = commit_state or CommitState()
        if git.mass_deletion:  # the committer's own record of a deletion it would not commit
            red.append(
                f"mass-deletion-held: git did not commit a mass deletion ({git.mass_deletion}): restore the files, "
                "or run `agentmd reindex --allow-mass-delete` if it was deliberate"
            )
        skipped = git.skipped_cycles
        checks["commit_cycles_skipped"] = skipped
        if last_cycle_skipped and skipped:
            yellow.append(
                f"commit-skipped: {skipped} commit cycles skipped so far, the last because "
                f"{git.last_skip_reason}: finish or remove what holds the repository (a merge, a lock); "
                "it turns red as commit-stalled after 30 min"
            )
        self.passes += 1
        checks.update({"vault_id": list(self.vault_id) if self.vault_id else None, "passes": self.passes})
        self.last = {"at": now.isoformat(timespec="seconds"), "red": red, "yellow": yellow, "checks": checks}
        return self.last
