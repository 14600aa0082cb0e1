"""How agentmd launches git: the only place a git process is started.

It runs the git CLI with `subprocess`, never a library's own index code: the CLI honours `.git/index.lock`
the way every other git tool does.

Every git process started here is hardened against a hostile or sync-damaged repository:
hooks are pointed at `/dev/null`, `core.fsmonitor` is off, signing is off, and the git directory,
work tree, index, object directory and pathspec mode are set explicitly so that nothing inherited
from the environment can redirect a command. Pathspecs are literal (a note called `[draft].md` is a
file name, not a glob).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentmd.engine.errors import AgentmdError

GIT_TIMEOUT_SECONDS = 600.0

HEX_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
"""A full object id (SHA-1 or SHA-256)."""

_SAFE_CONFIG = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
)


class GitMissing(AgentmdError):
    """The git executable is not available."""


class CycleFailure(AgentmdError):
    """A git step of a commit cycle (or of reading the worktree) failed; the message is what goes into
    `last_commit_error`."""


# --------------------------------------------------------------------------------------------------
# Running git


@dataclass(frozen=True)
class GitRun:
    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return os.fsdecode(self.out).strip()

    def why(self) -> str:
        """The last lines git printed, for an error message."""
        msg = (self.err or os.fsdecode(self.out)).strip()
        lines = [ln.strip() for ln in msg.splitlines() if ln.strip()]
        loud = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
        tail = " / ".join((loud or lines)[-3:]) if lines else f"exit status {self.code}, no message"
        return tail[:500]


class GitCli:
    """The git CLI for one vault, with the hardening described in the module docstring."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.gitdir = vault / ".git"
        self.index = self.gitdir / "index"

    def command(
        self,
        args: Sequence[str],
        *,
        index: Path | None = None,
        env: Mapping[str, str] | None = None,
        optional_locks: bool = True,
        repo_options: bool = True,
    ) -> tuple[list[str], dict[str, str]]:
        """The hardened argv and the whole environment for one git command."""
        argv = ["git", f"--git-dir={self.gitdir}", f"--work-tree={self.vault}", *_SAFE_CONFIG, *args]
        full_env = {
            "GIT_INDEX_FILE": str(index or self.index),
            "GIT_OBJECT_DIRECTORY": str(self.gitdir / "objects"),
            "GIT_COMMON_DIR": str(self.gitdir),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": "",
            "GIT_CONFIG_PARAMETERS": "",
            "GIT_CONFIG_COUNT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_GLOB_PATHSPECS": "0",
            "GIT_NOGLOB_PATHSPECS": "0",
            "GIT_ICASE_PATHSPECS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "GIT_EDITOR": "true",
            "GIT_OPTIONAL_LOCKS": "1" if optional_locks else "0",
        }
        if not repo_options:  # `git init`: the repository does not exist yet
            for key in ("GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR"):
                full_env.pop(key)
        full_env.update(env or {})
        return argv, {**os.environ, **full_env}

    def run(
        self,
        *args: str,
        index: Path | None = None,
        env: Mapping[str, str] | None = None,
        optional_locks: bool = True,
        timeout: float = GIT_TIMEOUT_SECONDS,
        repo_options: bool = True,
        stdin: bytes | None = None,
    ) -> GitRun:
        argv, full_env = self.command(
            args, index=index, env=env, optional_locks=optional_locks, repo_options=repo_options
        )
        try:
            done = subprocess.run(
                argv,
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                env=full_env,
                cwd=self.vault if self.vault.is_dir() else None,
                timeout=timeout,
                check=False,
            )
        except FileNotFoundError as exc:
            raise GitMissing(f"the git executable could not be started ({exc})") from exc
        except subprocess.TimeoutExpired:  # subprocess.run has killed and reaped it
            return GitRun(
                -9, b"", f"error: git {' '.join(args[:2])} did not finish within {timeout:.0f} s and was killed"
            )
        return GitRun(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"))

    def popen(self, *args: str) -> subprocess.Popen[bytes]:
        """A git process with pipes on stdin/stdout/stderr, for a conversation (`update-ref --stdin`)."""
        argv, full_env = self.command(args)
        try:
            return subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=full_env,
                cwd=self.vault,
            )
        except FileNotFoundError as exc:
            raise GitMissing(f"the git executable could not be started ({exc})") from exc


# --------------------------------------------------------------------------------------------------
# Paths and wording shared by every message


@functools.lru_cache(maxsize=1)
def _walks_past_old_commits() -> bool:
    """Whether this git has `--since-as-filter` (2.37 and later)."""
    try:
        said = subprocess.run(["git", "version"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    found = re.search(r"(\d+)\.(\d+)", said)
    return found is not None and (int(found.group(1)), int(found.group(2))) >= (2, 37)


def since(when: str) -> str:
    """`git log`'s option for commits made since `when`. Git's `--since` stops walking at the first run of older
    commits, so one commit from a machine whose clock was behind (a merge dated two days back) hid every commit
    after it from the history; `--since-as-filter` walks the whole history and keeps each newer commit (the
    older `--since` with a git before 2.37)."""
    return f"--since-as-filter={when}" if _walks_past_old_commits() else f"--since={when}"


def absolute_path(vault: Path) -> Path:
    return Path(os.path.abspath(os.fspath(vault)))


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def listing(paths: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(printable(p) for p in paths[:limit])
    return shown + (f", and {len(paths) - limit} more" if len(paths) > limit else "")


def printable(path: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in path)
