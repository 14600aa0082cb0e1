"""A remote branch rewritten by a forced push (a secret purged, commits dropped), or a vault rewritten by hand,
since this machine last synced: a round refuses rather than merge the old history back unseen, and
`--accept-rewrite` takes the new history, this machine's own changes since the last sync replayed on it. Real git:
a bare remote, two machines with their committers, and a person's plain clone that rewrites."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from git_helpers import git, tree, write
from test_sync import Machine, machines, no_markers, remote  # noqa: F401 - the fixtures

from agentmd.engine.git.rewrite import HistoryRewritten
from agentmd.engine.git.sync_run import sync_vault
from agentmd.engine.git.sync_status import sync_section


def leak_and_purge(a: Machine, b: Machine, remote_repo: Path, tmp_path: Path) -> str:
    """A secret synced to both machines, then purged from the remote by a person's forced push."""
    write(a.vault, "notes/secret.md", "# Secret\n\npassword hunter2\n")
    a.committer.commit_cycle()
    assert a.sync()["outcome"] == "pushed" and b.sync()["outcome"] == "fast-forward"
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", str(remote_repo), str(person))
    git(person, "reset", "-q", "--hard", "HEAD~1")
    git(person, "push", "-q", "--force", "origin", "main")
    return git(remote_repo, "rev-parse", "main").stdout.strip()


def test_a_forced_push_is_not_merged_back_and_is_taken_when_accepted(
    machines: tuple[Machine, Machine],  # noqa: F811
    remote: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    a, b = machines
    purged = leak_and_purge(a, b, remote, tmp_path)
    synced_b = git(b.vault, "rev-parse", "HEAD").stdout.strip()
    with pytest.raises(HistoryRewritten, match=r"was rewritten .*--accept-rewrite"):
        a.sync()
    assert git(remote, "rev-parse", "main").stdout.strip() == purged  # nothing merged back or pushed
    assert "notes/secret.md" in tree(a.vault)

    old = git(a.vault, "rev-parse", "HEAD").stdout.strip()
    taken = sync_vault(a.committer, a.state, accept_rewrite=True).to_dict()
    assert taken["outcome"] == "rewrite-taken" and taken["head"] == purged
    assert not (a.vault / "notes/secret.md").exists() and "notes/secret.md" not in tree(a.vault)
    rescues = git(a.vault, "for-each-ref", "--format=%(objectname)", "refs/agentmd/rescue").stdout.split()
    assert old in rescues  # the old tip kept
    # the answer names what left and where the old history is kept, and `agentmd sync` prints it
    assert taken["removed"] == ["notes/secret.md"] and taken["rewritten"] == []
    assert taken["rescue"] and git(a.vault, "rev-parse", taken["rescue"]).stdout.strip() == old
    from agentmd.cli.sync import describe

    said = describe(taken)
    assert "no longer here (1): notes/secret.md" in said and f"kept as {taken['rescue']}" in said
    assert a.sync()["outcome"] == "up-to-date"  # in step with the new history from now on

    # the other machine wrote a note since its last sync: kept, replayed on the new history, and pushed
    write(b.vault, "notes/desk.md", "# Desk\n\nwritten at the desk before the purge reached it\n")
    write(b.vault, "notes/beta.md", "# Beta\n\nbeta text, edited at the desk\n")
    write(b.vault, "notes/secret.md", "# Secret\n\npassword hunter2\nand a line added at the desk\n")
    b.committer.commit_cycle()
    with pytest.raises(HistoryRewritten):
        b.sync()
    made_here = int(git(b.vault, "rev-list", "--count", f"{synced_b}..HEAD").stdout)
    seen = sync_section(b.vault, b.state, dt.datetime.now(dt.UTC))
    assert seen.get("rewritten") is True and seen.get("ahead") == made_here >= 1  # not the purged history too
    replayed = sync_vault(b.committer, b.state, accept_rewrite=True).to_dict()
    assert replayed["outcome"] == "rewrite-taken" and replayed["head"] != purged
    # the purge stands over the edit made here (kept in the rescue ref), and says so
    assert {"path": "notes/secret.md", "kept": "the rewrite's deletion"}.items() <= replayed["conflicts"][0].items()
    assert git(remote, "rev-parse", "main").stdout.strip() == replayed["head"]
    parents = git(b.vault, "rev-list", "--parents", "-1", "HEAD").stdout.split()
    assert parents[1:] == [purged]  # one commit on the new history, the old one not among its parents
    assert "notes/secret.md" not in tree(b.vault) and not (b.vault / "notes/secret.md").exists()
    assert "before the purge" in (b.vault / "notes/desk.md").read_text(encoding="utf-8")
    assert a.sync()["outcome"] == "fast-forward"
    assert "edited at the desk" in a.read("notes/beta.md") and a.read("notes/desk.md") == b.read("notes/desk.md")
    no_markers(a, b)


def test_a_history_rewritten_here_is_never_force_pushed_nor_merged_over(
    machines: tuple[Machine, Machine],  # noqa: F811
    remote: Path,  # noqa: F811
) -> None:
    a, _b = machines
    write(a.vault, "notes/secret.md", "# Secret\n\npassword hunter2\n")
    a.committer.commit_cycle()
    assert a.sync()["outcome"] == "pushed"
    pushed = git(remote, "rev-parse", "main").stdout.strip()
    git(a.vault, "reset", "-q", "--hard", "HEAD~1")  # the person purges it here, before pushing
    with pytest.raises(HistoryRewritten, match=r"rewritten since it last synced .*force-with-lease"):
        a.sync()
    assert git(remote, "rev-parse", "main").stdout.strip() == pushed
    assert not (a.vault / "notes/secret.md").exists()  # the old history is not merged back over it


def test_a_rewrite_pushed_from_here_and_built_on_elsewhere_is_only_behind(
    machines: tuple[Machine, Machine],  # noqa: F811
    remote: Path,  # noqa: F811
) -> None:
    """This machine rewrote and force-pushed its own history, as the refusal told it to; another machine took it
    and pushed on top before this one's next round: this one is behind its own history, not facing a rewrite."""
    a, b = machines
    write(a.vault, "notes/secret.md", "# Secret\n\npassword hunter2\n")
    a.committer.commit_cycle()
    assert a.sync()["outcome"] == "pushed" and b.sync()["outcome"] == "fast-forward"
    git(a.vault, "reset", "-q", "--hard", "HEAD~1")  # the person purges it here
    with pytest.raises(HistoryRewritten):
        a.sync()
    git(a.vault, "push", "-q", "--force", "origin", "HEAD:main")
    assert sync_vault(b.committer, b.state, accept_rewrite=True).to_dict()["outcome"] == "rewrite-taken"
    write(b.vault, "notes/after.md", "# After\n\nwritten after the purge\n")
    b.committer.commit_cycle()
    assert b.sync()["outcome"] == "pushed"
    assert a.sync()["outcome"] == "fast-forward"
    assert not (a.vault / "notes/secret.md").exists() and (a.vault / "notes/after.md").exists()


def test_switching_back_to_a_branch_the_round_pushed_past_is_only_behind(
    machines: tuple[Machine, Machine],  # noqa: F811
    remote: Path,  # noqa: F811
) -> None:
    """The person tries an idea on a branch of their own, a round pushes its commit to the remote's one branch,
    and they switch back: their branch never held that commit, so the next round moves it forward (no refusal, no
    advice to force a push that would take the commit off the remote)."""
    a, b = machines
    git(a.vault, "checkout", "-q", "-b", "try-idea")
    write(a.vault, "notes/idea.md", "# Idea\n\ntried on a branch\n")
    a.committer.commit_cycle()
    assert a.sync()["outcome"] == "pushed"
    pushed = git(remote, "rev-parse", "main").stdout.strip()
    assert b.sync()["outcome"] == "fast-forward"
    git(a.vault, "checkout", "-q", "main")
    assert not (a.vault / "notes/idea.md").exists()
    assert a.sync()["outcome"] == "fast-forward"
    assert git(a.vault, "rev-parse", "HEAD").stdout.strip() == pushed
    assert (a.vault / "notes/idea.md").read_text() == "# Idea\n\ntried on a branch\n"
    assert git(remote, "rev-parse", "main").stdout.strip() == pushed


def test_a_branch_switched_back_to_and_committed_on_merges_what_the_round_pushed(
    machines: tuple[Machine, Machine],  # noqa: F811
    remote: Path,  # noqa: F811
) -> None:
    """As above, with a note committed on the branch switched back to before the next round: the branch never held
    the pushed commit, so the round merges it in rather than calling the history rewritten."""
    a, _b = machines
    git(a.vault, "checkout", "-q", "-b", "try-idea")
    write(a.vault, "notes/idea.md", "# Idea\n\ntried on a branch\n")
    a.committer.commit_cycle()
    assert a.sync()["outcome"] == "pushed"
    git(a.vault, "checkout", "-q", "main")
    write(a.vault, "notes/later.md", "# Later\n\nwritten back on main\n")
    a.committer.commit_cycle()
    assert a.sync()["outcome"] == "merged"
    assert (a.vault / "notes/idea.md").exists() and (a.vault / "notes/later.md").exists()
    assert git(remote, "rev-parse", "main").stdout.strip() == git(a.vault, "rev-parse", "HEAD").stdout.strip()
