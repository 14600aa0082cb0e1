"""Building a cycle's commit objects (engine/git/staging.py) against real repositories: a file that changed
between the cycle's look at it and `git add` is left out of the commit, its index entry put back as it was,
and it waits for the next cycle (engine/git/settle.py)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from git_helpers import FakeClock, git, make_repo, write

from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.settle import Settling
from agentmd.engine.git.staging import Group, Indexes, make_commits


def settling() -> Settling:
    # every file's mtime lies an hour before this wall clock: only a change after the look can defer it
    return Settling(1.0, clock=FakeClock(), wall=lambda: datetime.now(UTC) + timedelta(hours=1))


def indexes(repo: Path) -> Indexes:
    tmp = repo / ".git" / "test-index"
    if (repo / ".git" / "index").exists():
        shutil.copy2(repo / ".git" / "index", tmp)
    return Indexes(tmp, repo / ".git" / "test-tree-index", user_staged=False)


def entries(cli: GitCli, index: Path) -> dict[str, str]:
    """path -> blob in `index`"""
    out = cli.run("ls-files", "--stage", index=index).text
    return {line.split("\t")[1]: line.split()[1] for line in out.splitlines()}


def test_a_file_changed_after_the_look_is_put_back_and_waits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {"notes/a.md": "a\n"})
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    committed_a = git(repo, "rev-parse", "HEAD:notes/a.md").stdout.strip()
    write(repo, "notes/a.md", "a, first half\n")
    write(repo, "notes/new.md", "new, first half\n")
    write(repo, "notes/done.md", "whole\n")
    s = settling()
    paths = s.sort(repo, ["notes/a.md", "notes/done.md", "notes/new.md"], exempt=(), final=False, warnings=[])
    assert paths == ["notes/a.md", "notes/done.md", "notes/new.md"] and s.deferred == []
    for rel in ("notes/a.md", "notes/new.md"):  # the writer goes on between the look and `git add`
        with (repo / rel).open("a") as f:
            f.write("second half\n")
    cli = GitCli(repo)
    idx = indexes(repo)

    commits = make_commits(cli, [Group("local-edit", paths)], head, idx, settling=s, identity={}, initial=False)

    assert [c.paths for c in commits] == [("notes/done.md",)]
    assert s.deferred == ["notes/a.md", "notes/new.md"] and s.retry_in == 1.0
    staged = entries(cli, idx.tmp)
    assert staged["notes/a.md"] == committed_a  # the entry it had before `git add`
    assert "notes/new.md" not in staged
    tree = git(repo, "ls-tree", "-r", "--name-only", commits[0].sha).stdout.split()
    assert tree == ["notes/a.md", "notes/done.md"]
    assert git(repo, "show", f"{commits[0].sha}:notes/a.md").stdout == "a\n"

    # the next cycle's look sees the file as it is now; unchanged through `git add`, it is committed
    later = s.sort(repo, ["notes/a.md", "notes/new.md"], exempt=(), final=False, warnings=[])
    commits = make_commits(
        cli, [Group("local-edit", later)], commits[0].sha, idx, settling=s, identity={}, initial=False
    )
    assert [c.paths for c in commits] == [("notes/a.md", "notes/new.md")]
    assert git(repo, "show", f"{commits[0].sha}:notes/new.md").stdout == "new, first half\nsecond half\n"


def test_in_a_repository_with_no_commit_yet_the_changed_file_leaves_the_index(tmp_path: Path) -> None:
    repo = tmp_path / "v"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "a.md", "a\n")
    write(repo, "b.md", "b, first half\n")
    s = settling()
    paths = s.sort(repo, ["a.md", "b.md"], exempt=(), final=False, warnings=[])
    with (repo / "b.md").open("a") as f:
        f.write("second half\n")
    cli = GitCli(repo)
    idx = indexes(repo)

    commits = make_commits(cli, [Group("local-edit", paths)], None, idx, settling=s, identity={}, initial=True)

    assert [c.paths for c in commits] == [("a.md",)]
    assert s.deferred == ["b.md"]
    assert set(entries(cli, idx.tmp)) == {"a.md"}


def test_a_file_deleted_at_the_look_and_written_again_before_git_add_waits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {"notes/a.md": "a\n"})
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    committed_a = git(repo, "rev-parse", "HEAD:notes/a.md").stdout.strip()
    (repo / "notes/a.md").unlink()
    s = settling()
    paths = s.sort(repo, ["notes/a.md"], exempt=(), final=False, warnings=[])
    assert paths == ["notes/a.md"]  # a deletion has nothing to tear
    write(repo, "notes/a.md", "an editor's save, first half\n")  # delete-and-write save, caught halfway
    cli = GitCli(repo)
    idx = indexes(repo)

    commits = make_commits(cli, [Group("local-edit", paths)], head, idx, settling=s, identity={}, initial=False)

    assert commits == [] and s.deferred == ["notes/a.md"]
    assert entries(cli, idx.tmp)["notes/a.md"] == committed_a
