"""Three machines and one bare remote, edited and synced in a random order (seeded), with the remote out of
reach for stretches: every clone converges, no note holds a conflict marker, and no saved edit is lost (each
save writes a unique token; every token is in the remote's history at the end)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from git_helpers import git, make_repo
from test_sync import NOTES, Machine

from agentmd.engine.git.branches import SyncError, add_remote
from agentmd.engine.git.runner import GitCli

pytestmark = pytest.mark.slow


def save(m: Machine, rng: random.Random, token: str) -> bool:
    """One edit as a person makes it: a line added to a note, a line rewritten, a new note, or a deletion;
    whether it wrote the token (a deletion writes none)."""
    notes = sorted(p.relative_to(m.vault).as_posix() for p in (m.vault / "notes").glob("*.md"))
    kind = rng.choice(["append", "rewrite", "new", "new", "delete"] if len(notes) > 3 else ["new"])
    if kind == "new":
        rel = f"notes/n-{token}.md"
        (m.vault / rel).write_text(f"# {token}\n\n{token}\n", encoding="utf-8")
        return True
    rel = rng.choice(notes)
    path = m.vault / rel
    if kind == "delete":
        path.unlink()
        return False
    lines = path.read_text(encoding="utf-8").splitlines()
    if kind == "append" or len(lines) < 3:
        lines.append(token)
    else:
        lines[rng.randrange(2, len(lines))] = token  # the same line may be rewritten on another machine
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return True


@pytest.mark.parametrize("seed", [3, 11])
def test_three_machines_converge_and_lose_no_edit(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    first = make_repo(tmp_path / "m0", NOTES)
    add_remote(GitCli(first), str(bare))
    machines = [Machine(first, tmp_path / "s0")]
    machines[0].sync()
    for i in (1, 2):
        git(tmp_path, "clone", "-q", str(bare), str(tmp_path / f"m{i}"))
        git(tmp_path / f"m{i}", "config", "user.name", f"Owner {i}")
        git(tmp_path / f"m{i}", "config", "user.email", f"owner{i}@example.com")
        machines.append(Machine(tmp_path / f"m{i}", tmp_path / f"s{i}"))
    tokens: list[str] = []
    away = tmp_path / "away.git"
    for step in range(60):
        if rng.random() < 0.08:  # the remote goes out of reach, or comes back
            (bare if bare.exists() else away).rename(away if bare.exists() else bare)
        m = rng.choice(machines)
        token = f"tok{seed}x{step}"
        if save(m, rng, token):
            tokens.append(token)
        m.committer.commit_cycle()  # as the daemon does a second after a save: the save is in local history
        if rng.random() < 0.6:
            try:
                m.sync()
            except SyncError as exc:
                assert not bare.exists() and "reachable" in str(exc)
    if away.exists():
        away.rename(bare)
    for _ in range(2):  # every machine syncs twice once the remote is back
        for m in machines:
            m.sync()
    head = git(bare, "rev-parse", "main").stdout.strip()
    for m in machines:
        assert git(m.vault, "rev-parse", "HEAD").stdout.strip() == head
        assert git(m.vault, "status", "--porcelain").stdout == ""
        for path in m.vault.rglob("*.md"):
            text = path.read_text(encoding="utf-8")
            assert "<<<<<<<" not in text and ">>>>>>>" not in text, path
    history = subprocess.run(
        ["git", "log", "-p", "--format=", "main"], cwd=bare, capture_output=True, text=True, check=True
    ).stdout
    assert [t for t in tokens if t not in history] == []
    # no forced update: the remote's branch only ever moved forward (its reflog is off in a bare repo, so each
    # machine's own commits are checked to be in the remote's history)
    for m in machines:
        own = git(m.vault, "rev-list", "HEAD").stdout.split()
        remote_commits = set(git(bare, "rev-list", "main").stdout.split())
        assert set(own) <= remote_commits
