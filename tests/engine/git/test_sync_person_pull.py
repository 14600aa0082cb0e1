"""A person's own `git pull` run through `agentmd git` ends its conflicts by the rules a sync round follows: one
title captured on two machines stays two notes, the same lines changed on both become a conflict sibling, an
edit survives a deletion; the merge is committed and no marker reaches a note. Real git and the real CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from git_helpers import git, make_repo, status, write
from test_sync import no_markers
from test_sync_daemon import cli, environment
from test_sync_merge import capture_on, pair  # noqa: F401 - the fixture

from agentmd.engine.git.conflicts import open_conflicts
from agentmd.engine.settings import resolve


def test_a_person_pull_through_agentmd_git_ends_its_conflicts_as_a_sync_would(
    pair,  # noqa: F811 - the fixture
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, b, _remote = pair
    path = capture_on(a, "Release checklist", "tag before the upload (laptop)")
    assert capture_on(b, "Release checklist", "run the tests first (desk)") == path
    write(a.vault, "notes/plain.md", "# P\n\nthe laptop's line\n")
    write(b.vault, "notes/plain.md", "# P\n\nthe desk's line\n")
    a.committer.commit_cycle()
    a.sync()
    b.committer.commit_cycle()

    env = environment(tmp_path / "xdg")
    code, out, err = cli(
        env, monkeypatch, "git", "--vault", str(b.vault), "--", "pull", "-q", "--no-rebase", "--no-edit"
    )
    assert code == 0, (out, err)
    no_markers(a, b)
    assert status(b.vault) == [] and not (b.vault / ".git" / "MERGE_HEAD").exists()
    parents = git(b.vault, "rev-list", "--parents", "-1", "HEAD").stdout.split()
    assert len(parents) == 3  # the person's merge, committed
    other = path[: -len(".md")] + "-2.md"
    assert "run the tests first (desk)" in b.read(path) and "tag before the upload (laptop)" in b.read(other)
    assert f"the other side's capture is now {other}" in out
    (sibling,) = [p.relative_to(b.vault).as_posix() for p in b.vault.glob("notes/plain.conflict-*.md")]
    assert b.read("notes/plain.md") == "# P\n\nthe desk's line\n" and "the laptop's line" in b.read(sibling)
    assert "status: conflict" in b.read(sibling) and sibling in out
    assert sibling in open_conflicts(b.vault, resolve(vault=str(b.vault)).state_dir)  # the CLI's own state
    assert "origin: sync" in git(b.vault, "log", "-1", "--format=%B").stdout


def test_a_plain_pull_merges_diverged_branches(
    pair,  # noqa: F811 - the fixture
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """git 2.27 and later refuse a plain `git pull` on diverged branches unless told how to reconcile them:
    `agentmd git pull` (and `agentmd remote add`, `agentmd init-git`) tell the vault's repository to merge,
    unless the person's git config already says how."""
    a, b, _remote = pair
    write(a.vault, "notes/from-laptop.md", "# L\n\nwritten on the laptop\n")
    a.committer.commit_cycle()
    a.sync()
    write(b.vault, "notes/from-desk.md", "# D\n\nwritten at the desk\n")
    b.committer.commit_cycle()
    git(b.vault, "config", "--unset", "pull.rebase", check=False)

    env = environment(tmp_path / "xdg")
    code, out, err = cli(env, monkeypatch, "git", "--vault", str(b.vault), "--", "pull", "-q", "--no-edit")
    assert code == 0, (out, err)
    assert (b.vault / "notes/from-laptop.md").is_file() and (b.vault / "notes/from-desk.md").is_file()
    assert len(git(b.vault, "rev-list", "--parents", "-1", "HEAD").stdout.split()) == 3
    assert git(b.vault, "config", "--local", "--get", "pull.rebase").stdout.strip() == "false"


def test_a_persons_own_pull_setting_is_kept(tmp_path: Path) -> None:
    from agentmd.engine.git.branches import add_remote, plain_pull_merges
    from agentmd.engine.git.runner import GitCli

    vault = tmp_path / "vault"
    vault.mkdir()
    git(vault, "init", "-q")
    assert plain_pull_merges(GitCli(vault)) is True
    assert git(vault, "config", "--get", "pull.rebase").stdout.strip() == "false"
    git(vault, "config", "--local", "pull.rebase", "true")  # the person prefers to rebase
    add_remote(GitCli(vault), str(tmp_path / "remote.git"))
    assert git(vault, "config", "--get", "pull.rebase").stdout.strip() == "true"


def pull_stopped_on_one_line(a: Any, b: Any) -> str:
    """Both machines change the same line of a note; the desk's own plain `git pull` stops on it. The desk's HEAD
    before the pull."""
    write(a.vault, "notes/plain.md", "# P\n\nline1\nthe laptop's line\nline3\n")
    a.committer.commit_cycle()
    a.sync()
    write(b.vault, "notes/plain.md", "# P\n\nline1\nthe desk's line\nline3\n")
    b.committer.commit_cycle()
    head = git(b.vault, "rev-parse", "HEAD").stdout
    assert git(b.vault, "pull", "-q", "--no-rebase", "--no-edit", check=False).returncode != 0  # stopped
    return head


def test_a_plain_pull_stopped_on_conflicts_holds_the_rounds_until_agentmd_git_ends_it(
    pair,  # noqa: F811 - the fixture
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A person's own `git pull` (not through agentmd) stops with markers in a note: a round merging the remote on
    top of it would leave MERGE_HEAD and the markers behind to be committed later, so rounds refuse, saying how to
    end it; `agentmd git merge --continue` ends it by the sync rules, and the next round syncs."""
    from agentmd.engine.git.branches import SyncError

    a, b, _remote = pair
    head = pull_stopped_on_one_line(a, b)
    with pytest.raises(SyncError, match=r"a merge is in progress .*agentmd git merge --continue"):
        b.sync()
    assert git(b.vault, "rev-parse", "HEAD").stdout == head and (b.vault / ".git" / "MERGE_HEAD").exists()

    env = environment(tmp_path / "xdg")
    code, out, err = cli(env, monkeypatch, "git", "--vault", str(b.vault), "--", "merge", "--continue")
    assert code == 0, (out, err)
    assert "no conflict marker was left" in out and not (b.vault / ".git" / "MERGE_HEAD").exists()
    assert b.sync()["outcome"] == "pushed"
    assert a.sync()["outcome"] == "fast-forward"
    no_markers(a, b)
    assert "the desk's line" in b.read("notes/plain.md") == a.read("notes/plain.md")


def test_a_conflict_resolved_by_hand_but_not_staged_is_the_answer(
    pair,  # noqa: F811 - the fixture
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The person took the markers out of the note and wrote what it should say, without `git add`:
    `agentmd git merge --continue` keeps that text, never the sides it was made from; git's own refusal of
    `merge --continue` is not printed before the merge is committed."""
    a, b, _remote = pair
    pull_stopped_on_one_line(a, b)
    write(b.vault, "notes/plain.md", "# P\n\nline1\nboth lines, joined by hand\nline3\n")
    env = environment(tmp_path / "xdg")
    code, out, err = cli(env, monkeypatch, "git", "--vault", str(b.vault), "--", "merge", "--continue")
    assert code == 0, (out, err)
    assert b.read("notes/plain.md") == "# P\n\nline1\nboth lines, joined by hand\nline3\n"
    assert not list(b.vault.glob("notes/plain.conflict-*.md")) and not (b.vault / ".git" / "MERGE_HEAD").exists()
    assert len(git(b.vault, "rev-list", "--parents", "-1", "HEAD").stdout.split()) == 3
    assert "fatal" not in out + err


def test_markers_a_person_committed_are_never_pushed(pair) -> None:  # noqa: F811 - the fixture
    """A person ended a merge by committing the note with git's markers still in it: the round refuses to push
    them to every machine, names the note, and pushes once it is fixed."""
    from agentmd.engine.git.branches import SyncError

    a, b, remote = pair
    marked = "# P\n\n<<<<<<< HEAD\nthe desk's line\n=======\nthe laptop's line\n>>>>>>> 2cb0772\n"
    write(b.vault, "notes/plain.md", marked)
    git(b.vault, "add", "-A")
    git(b.vault, "commit", "-q", "-m", "merge")
    before = git(remote, "rev-parse", "main").stdout
    with pytest.raises(SyncError, match=r"nothing was pushed: notes/plain.md holds git's conflict markers"):
        b.sync()
    assert git(remote, "rev-parse", "main").stdout == before
    write(b.vault, "notes/plain.md", "# P\n\nthe desk's line, and the laptop's\n")
    b.committer.commit_cycle()
    assert b.sync()["outcome"] == "pushed"
    assert a.sync()["outcome"] == "fast-forward"
    no_markers(a, b)


def test_a_clone_that_has_synced_takes_a_plain_git_pull_of_diverged_branches(pair) -> None:  # noqa: F811
    # the README's second machine: `git clone`, then agentmd syncs it; the person's own plain `git pull` later,
    # with both sides moved on, merges as a round would (git clone sets no pull.rebase)
    a, b, _remote = pair
    git(b.vault, "config", "--unset", "pull.rebase", check=False)
    b.sync()
    assert git(b.vault, "config", "--local", "--get", "pull.rebase").stdout.strip() == "false"
    write(a.vault, "notes/from-laptop.md", "# L\n\nwritten on the laptop\n")
    a.committer.commit_cycle()
    a.sync()
    write(b.vault, "notes/from-desk.md", "# D\n\nwritten at the desk\n")
    b.committer.commit_cycle()
    pulled = git(b.vault, "pull", "-q", "--no-edit", check=False)
    assert pulled.returncode == 0, pulled.stderr
    assert (b.vault / "notes/from-laptop.md").is_file() and (b.vault / "notes/from-desk.md").is_file()


def test_agentmd_git_without_a_command_suggests_a_plain_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The vault's repository merges on a pull (pull.rebase=false, as a sync round does): the example given is
    a plain command, never a rebasing pull."""
    vault = make_repo(tmp_path / "vault", {"notes/a.md": "# A\n"})
    code, _out, err = cli(environment(tmp_path / "xdg"), monkeypatch, "git", "--vault", str(vault))
    assert code != 0 and "`agentmd git status` or `agentmd git pull`" in err and "--rebase" not in err
