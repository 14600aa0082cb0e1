"""Shared by the git tests: the user's own git, real repositories and files, fake clocks, lock markers."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from agentmd.engine.git.committer import Committer

# The test's own git calls play "the user", but must not trip the hooks a test plants on purpose.
SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]


def git(repo: Path, *args: str, check: bool = True, plain: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    argv = ["git", *([] if plain else SAFE), *args]
    proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr}{proc.stdout}")
    return proc



def make_repo(root: Path, files: dict[str, str | bytes] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Vault Owner")
    git(root, "config", "user.email", "owner@example.com")
    for rel, content in (files or {"notes/a.md": "# A\n", "notes/b.md": "# B\n"}).items():
        write(root, rel, content)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root



def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path



def origins(repo: Path) -> list[str]:
    """Origin trailers, newest commit first, read the way the spec says they must be readable."""
    out = git(repo, "log", "--format=%(trailers:key=origin,valueonly)%x00").stdout
    return [chunk.strip() for chunk in out.split("\0") if chunk.strip()]



def tree(repo: Path, rev: str = "HEAD") -> set[str]:
    return set(git(repo, "ls-tree", "-r", "--name-only", rev).stdout.splitlines())



def show(repo: Path, spec: str) -> str:
    return git(repo, "show", spec).stdout



def blob(repo: Path, spec: str) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "cat-file", "blob", spec], cwd=repo, env=env, capture_output=True, check=True).stdout



def changed_in(repo: Path, rev: str = "HEAD") -> set[str]:
    out = git(repo, "show", "--format=", "--name-only", "--no-renames", rev).stdout
    return set(out.split())



def status(repo: Path) -> list[str]:
    return git(repo, "status", "--porcelain=v1", "--untracked-files=all").stdout.splitlines()



def stray_temp_files(repo: Path) -> list[str]:
    """Leftovers of a commit cycle in `.git`: private indexes, locks, and anything in agentmd's own folder there
    but the daemon's lease."""
    own = repo / ".git" / "agentmd"
    return sorted(
        [n for n in os.listdir(repo / ".git") if n != "agentmd" and ("agentmd" in n or n.startswith("next-index"))]
        + [n for n in os.listdir(repo / ".git") if n == "index.lock"]
        + [f"agentmd/{n}" for n in (os.listdir(own) if own.is_dir() else []) if n not in ("daemon.lock", "lease.json")]
    )



class FakeClock:
    """A monotonic clock that only moves when someone sleeps on it (or the test advances it)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds



class FakeWall:
    def __init__(self) -> None:
        self.now = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now



def committer(repo: Path, phone: tuple[str, ...] = (), **kw: object) -> Committer:
    return Committer(repo, phone_paths=lambda: phone, **kw)  # type: ignore[arg-type]



def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or "unknown"
    except OSError:
        return "unknown"



def marker(pid: int, host: str | None = None, boot: str | None = None) -> bytes:
    return f"held by agentmd (pid {pid}, host {host or socket.gethostname()}, boot {boot or boot_id()})\n".encode()



def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid



def plant(script: Path, marker_file: Path) -> None:
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"#!/bin/sh\necho ran >> '{marker_file}'\nexit 0\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)



def cat_file_batch(repo: Path, specs: str) -> list[str | None]:
    """The contents of many `<rev>:<path>` blobs in one git process (None for a missing one)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    out = subprocess.run(
        ["git", "cat-file", "--batch"], cwd=repo, env=env, input=specs.encode(), capture_output=True, check=True
    ).stdout
    blobs: list[str | None] = []
    pos = 0
    while pos < len(out):
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end]
        if header.endswith(b" missing"):
            blobs.append(None)
            pos = header_end + 1
            continue
        size = int(header.split()[2])
        blobs.append(out[header_end + 1 : header_end + 1 + size].decode())
        pos = header_end + 1 + size + 1
    return blobs

