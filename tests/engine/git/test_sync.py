"""Sync rounds between machines through a git remote: a bare repository and clones of it, each clone with
its own committer, as two machines sharing one memory would be. Real git throughout."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from git_helpers import FakeClock, FakeWall, git, make_repo, tree, write

from agentmd.cli.sync import describe
from agentmd.engine.git.branches import SyncError, add_remote
from agentmd.engine.git.committer import Committer
from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.sync_run import sync_vault
from agentmd.engine.settings import COMMIT_SETTLE

NOTES = {
    "notes/alpha.md": "---\ntitle: Alpha\ntags: [one]\nsource: web\n---\n# Alpha\n\nline one\nline two\nline three\n",
    "notes/beta.md": "# Beta\n\nbeta text\n",
    "notes/gamma.md": "# Gamma\n\ngamma text\n",
}


class Machine:
    def __init__(self, vault: Path, state: Path) -> None:
        self.vault = vault
        self.state = state
        self.committer = Committer(vault, phone_paths=tuple, state_dir=state)

    def sync(self) -> dict:
        return sync_vault(self.committer, self.state).to_dict()

    def read(self, rel: str) -> str:
        return (self.vault / rel).read_text(encoding="utf-8")


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    return bare


@pytest.fixture
def machines(tmp_path: Path, remote: Path) -> tuple[Machine, Machine]:
    first = make_repo(tmp_path / "laptop", NOTES)
    print(add_remote(GitCli(first), str(remote)))
    a = Machine(first, tmp_path / "state-a")
    assert a.sync()["outcome"] == "pushed"  # an empty remote gets the branch
    git(tmp_path, "clone", "-q", str(remote), str(tmp_path / "desktop"))
    git(tmp_path / "desktop", "config", "user.name", "Desk Owner")
    git(tmp_path / "desktop", "config", "user.email", "desk@example.com")
    b = Machine(tmp_path / "desktop", tmp_path / "state-b")
    assert b.sync()["outcome"] == "up-to-date"
    return a, b


def no_markers(*machines: Machine) -> None:
    for m in machines:
        for path in m.vault.rglob("*.md"):
            text = path.read_text(encoding="utf-8")
            assert "<<<<<<<" not in text and ">>>>>>>" not in text, path


def converged(a: Machine, b: Machine, remote: Path) -> None:
    head = git(remote, "rev-parse", "main").stdout.strip()
    assert git(a.vault, "rev-parse", "HEAD").stdout.strip() == head
    assert git(b.vault, "rev-parse", "HEAD").stdout.strip() == head
    assert git(a.vault, "status", "--porcelain").stdout == "" and git(b.vault, "status", "--porcelain").stdout == ""


def test_edits_of_different_notes_merge_and_every_machine_converges(machines, remote: Path) -> None:
    a, b = machines
    write(a.vault, "notes/beta.md", "# Beta\n\nbeta text, edited on the laptop\n")
    write(b.vault, "notes/gamma.md", "# Gamma\n\ngamma text, edited on the desktop\n")
    write(b.vault, "notes/new.md", "# New\n\nwritten on the desktop\n")
    assert a.sync()["outcome"] == "pushed"
    merged = b.sync()
    assert merged["outcome"] == "merged" and merged["conflicts"] == []
    assert "notes/beta.md" in merged["changed"]
    assert a.sync()["outcome"] == "fast-forward"
    converged(a, b, remote)
    assert "edited on the laptop" in b.read("notes/beta.md") and "edited on the desktop" in a.read("notes/gamma.md")
    assert a.read("notes/new.md") == "# New\n\nwritten on the desktop\n"
    log = git(a.vault, "log", "-1", "--format=%B").stdout
    assert "origin: sync" in log and "host: " in log


def test_different_lines_of_one_note_and_different_frontmatter_keys_merge(machines, remote: Path) -> None:
    a, b = machines
    write(a.vault, "notes/alpha.md", NOTES["notes/alpha.md"].replace("tags: [one]", "tags: [one, two]"))
    write(b.vault, "notes/alpha.md", NOTES["notes/alpha.md"].replace("line three", "line three, desk"))
    a.sync()
    assert b.sync()["conflicts"] == []
    a.sync()
    converged(a, b, remote)
    text = a.read("notes/alpha.md")
    assert "tags: [one, two]" in text and "line three, desk" in text


def test_the_same_line_changed_on_both_keeps_both_side_by_side_and_no_markers(machines, remote: Path) -> None:
    a, b = machines
    write(a.vault, "notes/beta.md", "# Beta\n\nthe laptop's version\n")
    write(b.vault, "notes/beta.md", "# Beta\n\nthe desktop's version\n")
    a.sync()
    merged = b.sync()
    (conflict,) = merged["conflicts"]
    assert conflict["path"] == "notes/beta.md" and conflict["sibling"].startswith("notes/beta.conflict-")
    assert b.read("notes/beta.md") == "# Beta\n\nthe desktop's version\n"  # ours stays at the path
    sibling = b.read(conflict["sibling"])
    assert "status: conflict" in sibling and 'conflict_of: "[[beta]]"' in sibling and "the laptop's version" in sibling
    a.sync()
    converged(a, b, remote)
    assert a.read(conflict["sibling"]) == sibling
    no_markers(a, b)


def test_deleted_on_one_machine_and_edited_on_the_other_keeps_the_edit(machines, remote: Path) -> None:
    a, b = machines
    (a.vault / "notes/gamma.md").unlink()
    write(b.vault, "notes/gamma.md", "# Gamma\n\nstill needed: edited on the desktop\n")
    a.sync()
    b.sync()
    a.sync()
    converged(a, b, remote)
    assert "still needed" in a.read("notes/gamma.md")


def test_a_deletion_made_here_that_a_merge_here_undoes_is_said_here(machines, remote: Path) -> None:
    # the desktop's edit went first; the laptop deleted the note and merges it: the edit comes back on the laptop,
    # and the laptop's round and status say that its deletion was undone
    from agentmd.cli.sync import describe
    from agentmd.engine.git.sync_status import sync_section

    a, b = machines
    write(b.vault, "notes/gamma.md", "# Gamma\n\nstill needed: edited on the desktop\n")
    b.sync()
    (a.vault / "notes/gamma.md").unlink()
    merged = a.sync()
    assert "still needed" in a.read("notes/gamma.md")
    assert "notes/gamma.md: deleted here, edited on the other machine; the edit was kept" in describe(merged)
    yellow = sync_section(a.vault, a.state, dt.datetime.now(dt.UTC))["yellow"]
    (said,) = [y for y in yellow if y.startswith("set-aside-here")]
    assert "notes/gamma.md (deleted here, edited on the other machine" in said


def test_both_adding_a_note_of_the_same_name_keeps_both(machines, remote: Path) -> None:
    a, b = machines
    write(a.vault, "memory/pin-the-toolchain.md", "# Pin the toolchain\n\nuv, from the laptop\n")
    write(b.vault, "memory/pin-the-toolchain.md", "# Pin the toolchain\n\nuv, from the desktop\n")
    a.sync()
    (conflict,) = b.sync()["conflicts"]
    a.sync()
    converged(a, b, remote)
    assert "from the desktop" in a.read("memory/pin-the-toolchain.md")
    assert "from the laptop" in a.read(conflict["sibling"])
    no_markers(a, b)


def test_a_push_is_never_forced_and_the_remote_keeps_every_commit(machines, remote: Path) -> None:
    a, b = machines
    write(a.vault, "notes/beta.md", "# Beta\n\nlaptop\n")
    a.sync()
    laptop_head = git(a.vault, "rev-parse", "HEAD").stdout.strip()
    write(b.vault, "notes/gamma.md", "# Gamma\n\ndesk\n")
    b.sync()
    # the laptop's commit is an ancestor of the remote's branch: nothing was overwritten
    assert git(remote, "merge-base", "--is-ancestor", laptop_head, "main", check=False).returncode == 0


def test_a_vault_without_a_remote_is_told_how_to_add_one(tmp_path: Path) -> None:
    vault = make_repo(tmp_path / "v", NOTES)
    with pytest.raises(SyncError, match="agentmd remote add URL"):
        Machine(vault, tmp_path / "s").sync()
    assert set(tree(vault)) == set(NOTES)


def test_a_note_renamed_on_both_machines_each_its_own_way_keeps_both_names_and_no_marker(machines, remote) -> None:
    """Git pairs the two renames and gives both new names the content merged with conflict markers."""
    a, b = machines
    base = (a.vault / "notes/alpha.md").read_text(encoding="utf-8")
    (a.vault / "notes/alpha.md").rename(a.vault / "notes/alpha-here.md")
    write(a.vault, "notes/alpha-here.md", base + "A line\n")
    (b.vault / "notes/alpha.md").rename(b.vault / "notes/alpha-there.md")
    write(b.vault, "notes/alpha-there.md", base + "B line\n")
    a.sync()
    merged = b.sync()
    assert {c["path"]: c.get("kept") for c in merged["conflicts"]} == {
        "notes/alpha-here.md": "this name",
        "notes/alpha-there.md": "this name",
    }
    a.sync()
    no_markers(a, b)
    for m in (a, b):
        assert m.read("notes/alpha-here.md") == base + "A line\n"
        assert m.read("notes/alpha-there.md") == base + "B line\n"
        assert not (m.vault / "notes/alpha.md").exists()
    converged(a, b, remote)
    # status says the one note is now two, each with one machine's edits, until the person merges them
    from agentmd.engine.git.sync_status import sync_section

    now = dt.datetime.now(dt.UTC)
    (said,) = [y for y in sync_section(b.vault, b.state, now)["yellow"] if y.startswith("renamed-apart")]
    assert "notes/alpha-here.md" in said and "notes/alpha-there.md" in said
    assert "merge those two into one note" in said and "delete" not in said  # no advice that could lose a note
    (b.vault / "notes/alpha-there.md").unlink()  # merged into the other by hand
    assert not [y for y in sync_section(b.vault, b.state, now)["yellow"] if y.startswith("renamed-apart")]


def test_a_file_still_being_written_is_named_and_left_for_the_next_round(machines, remote: Path) -> None:
    # the daemon's committer waits for a file to settle; a round that finds one still being written syncs the
    # rest and says which file waits, and the next round takes it
    a, _ = machines
    clock, wall = FakeClock(), FakeWall()
    a.committer = Committer(
        a.vault, phone_paths=tuple, state_dir=a.state, settle=COMMIT_SETTLE, clock=clock, wall=wall, sleep=clock.sleep
    )
    log = write(a.vault, "notes/log.md", "the first lines of a long export\n")
    stamp = wall.now.timestamp()
    os.utime(log, (stamp, stamp))  # written just now, by the committer's wall clock
    write(a.vault, "notes/beta.md", "# Beta\n\nbeta text, edited\n")
    os.utime(a.vault / "notes/beta.md", (stamp - 60, stamp - 60))

    first = a.sync()

    assert first["outcome"] == "pushed" and first["writing"] == ["notes/log.md"]
    assert "notes/log.md" not in tree(remote) and "edited" in git(remote, "show", "main:notes/beta.md").stdout
    assert "still being written, so left for the next round: notes/log.md" in describe(first)
    clock.now += COMMIT_SETTLE
    wall.now += dt.timedelta(seconds=COMMIT_SETTLE)
    second = a.sync()
    assert second["outcome"] == "pushed" and second["writing"] == [] and "notes/log.md" in tree(remote)


def test_a_round_never_moves_a_path_the_person_has_staged_a_change_of(machines, remote: Path) -> None:
    # A staged a deletion (`git rm`) and a rename (`git mv`) of its own; B's commits change both notes: the round
    # brings in nothing, keeps A's staging and says why; once A commits, the next round merges as usual
    a, b = machines
    git(a.vault, "rm", "-q", "notes/beta.md")
    git(a.vault, "mv", "notes/gamma.md", "notes/gamma-renamed.md")
    write(b.vault, "notes/beta.md", "# Beta\n\nbeta text, edited on B\n")
    write(b.vault, "notes/gamma.md", "# Gamma\n\ngamma text, edited on B\n")
    assert b.sync()["outcome"] == "pushed"
    head = git(a.vault, "rev-parse", "HEAD").stdout

    with pytest.raises(SyncError, match=r"you staged changes to notes/beta.md, notes/gamma.md") as waits:
        a.sync()

    assert "git restore --staged" in str(waits.value)
    assert git(a.vault, "rev-parse", "HEAD").stdout == head
    assert sorted(git(a.vault, "diff", "--cached", "--no-renames", "--name-status").stdout.splitlines()) == [
        "A\tnotes/gamma-renamed.md",
        "D\tnotes/beta.md",
        "D\tnotes/gamma.md",
    ]
    assert not (a.vault / "notes/beta.md").exists()
    git(a.vault, "commit", "-q", "-m", "tidy up by hand")
    assert a.sync()["outcome"] == "merged"
    assert "edited on B" in a.read("notes/beta.md")  # the edit survives the deletion, as it does unstaged
    no_markers(a)


def test_a_round_keeps_the_persons_staging_of_paths_the_incoming_commits_leave_alone(machines, remote: Path) -> None:
    # the person staged a deletion and part of an edit; the other machine changed another note: the round brings
    # that in and leaves the person's index as they made it, for their own commit
    a, b = machines
    git(a.vault, "rm", "-q", "notes/gamma.md")
    write(a.vault, "notes/alpha.md", NOTES["notes/alpha.md"] + "staged line\n")
    git(a.vault, "add", "notes/alpha.md")
    write(a.vault, "notes/alpha.md", NOTES["notes/alpha.md"] + "staged line\nunstaged line\n")
    write(b.vault, "notes/beta.md", "# Beta\n\nbeta text, edited on B\n")
    assert b.sync()["outcome"] == "pushed"

    assert a.sync()["outcome"] == "fast-forward"

    assert "edited on B" in a.read("notes/beta.md")
    staged = sorted(git(a.vault, "diff", "--cached", "--name-status").stdout.splitlines())
    assert staged == ["D\tnotes/gamma.md", "M\tnotes/alpha.md"] or staged == ["M\tnotes/alpha.md", "D\tnotes/gamma.md"]
    assert "unstaged line" not in git(a.vault, "diff", "--cached").stdout


def test_a_conflict_with_this_machines_own_commit_from_another_branch_names_the_remotes_version(
    machines: tuple[Machine, Machine], remote: Path
) -> None:
    # an edit made on a branch of its own and pushed by a round, then the branch left for main and the same
    # line edited there: the version set aside is this machine's own, which came back from the remote
    a, b = machines
    git(a.vault, "checkout", "-q", "-b", "try-idea")
    write(a.vault, "notes/beta.md", "# Beta\n\nbeta text, as tried on the branch\n")
    assert a.sync()["outcome"] == "pushed"
    assert b.sync()["outcome"] == "fast-forward"
    write(b.vault, "notes/gamma.md", "# Gamma\n\ngamma text, edited on the desktop\n")
    assert b.sync()["outcome"] == "pushed"
    git(a.vault, "checkout", "-q", "main")
    write(a.vault, "notes/beta.md", "# Beta\n\nbeta text, as written on main\n")
    merged = a.sync()
    (conflict,) = merged["conflicts"]
    said = describe(merged)
    assert f"conflict: notes/beta.md kept; the version from origin/main is {conflict['sibling']}" in said
    assert "other machine" not in said
    assert "as tried on the branch" in a.read(conflict["sibling"])


def test_an_edit_kept_over_a_deletion_is_said_without_a_version_to_show() -> None:
    from agentmd.cli.sync import describe

    said = describe(
        {"outcome": "merged", "remote": "origin", "branch": "main", "head": "abc",
         "conflicts": [{"path": "notes/tz.md", "kept": "the edit", "theirs": "3d8e50843de0aa"}]}  # type: ignore[typeddict-item]
    )  # fmt: skip
    assert "notes/tz.md: deleted on the other machine, edited here; the edit was kept" in said
    assert "git show" not in said  # the other side has no such file to show


def test_a_file_where_the_other_machine_made_a_folder_gets_a_readable_name_and_is_said(
    machines: tuple[Machine, Machine],
) -> None:
    # git's merge names such a file `<path>~<commit>`: the round gives it a name a person reads, keeps the folder
    # at the path on both machines, and `agentmd sync` says what moved where
    from agentmd.cli.sync import describe

    a, b = machines
    write(a.vault, "notes/design", "a plain file of design notes\n")
    a.committer.commit_cycle()
    assert a.sync()["outcome"] == "pushed"
    write(b.vault, "notes/design/inner.md", "# Inner\n")
    b.committer.commit_cycle()
    merged = b.sync()
    (clash,) = [c for c in merged["conflicts"] if c.get("moved")]
    assert clash["path"] == "notes/design" and clash["moved"].startswith("notes/design.conflict-")
    assert "~" not in clash["moved"] and not any("~" in p for p in tree(b.vault))
    assert (b.vault / "notes/design/inner.md").is_file()
    assert (b.vault / clash["moved"]).read_text() == "a plain file of design notes\n"
    assert "is a file on one machine and a folder on the other" in describe(merged)
    a.sync()
    assert (a.vault / clash["moved"]).is_file() and (a.vault / "notes/design/inner.md").is_file()
