"""Every conflict sibling a sync writes stays listed (`agentmd conflicts`, status) until it is resolved: when the
push after the merge fails, when the remote moved again and a second attempt of the round did the pushing, and
however many conflicts are open; and a round killed once its work tree moved leaves nothing the committer
would leave alone. Found by the sync soak (bench/sync_soak.py). Real git throughout."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from git_helpers import git, make_repo, write
from test_sync import NOTES, Machine

from agentmd.engine.git.branches import SyncError, add_remote
from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.sync import KEPT_CONFLICTS, Round
from agentmd.engine.git.sync_status import sync_section


@pytest.fixture
def three(tmp_path: Path) -> tuple[Path, Machine, Machine, Machine]:
    """A bare remote and three clones of one vault (laptop, desktop, phone), each with its own state folder."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    first = make_repo(tmp_path / "laptop", NOTES)
    add_remote(GitCli(first), str(bare))
    machines = [Machine(first, tmp_path / "state-laptop")]
    machines[0].sync()
    for name in ("desktop", "phone"):
        git(tmp_path, "clone", "-q", str(bare), str(tmp_path / name))
        git(tmp_path / name, "config", "user.name", f"Owner {name}")
        git(tmp_path / name, "config", "user.email", f"{name}@example.com")
        machines.append(Machine(tmp_path / name, tmp_path / f"state-{name}"))
    laptop, desktop, phone = machines
    return bare, laptop, desktop, phone


def listed(m: Machine) -> list[str]:
    return list(sync_section(m.vault, m.state, dt.datetime.now(dt.UTC))["conflicts"])


def test_a_merge_whose_push_fails_still_lists_its_conflict(three: tuple[Path, Machine, Machine, Machine]) -> None:
    bare, laptop, desktop, _ = three
    write(laptop.vault, "notes/beta.md", "# Beta\n\nthe laptop's version\n")
    laptop.sync()
    write(desktop.vault, "notes/beta.md", "# Beta\n\nthe desktop's version\n")
    git(desktop.vault, "remote", "set-url", "--push", "origin", str(bare.parent / "gone.git"))  # fetch works, push not
    with pytest.raises(SyncError, match="reachable"):
        desktop.sync()
    (sibling,) = [p.relative_to(desktop.vault).as_posix() for p in desktop.vault.glob("notes/beta.conflict-*.md")]
    assert "the laptop's version" in (desktop.vault / sibling).read_text()
    assert listed(desktop) == [sibling]
    git(desktop.vault, "remote", "set-url", "--push", "origin", str(bare))
    assert desktop.sync()["outcome"] == "pushed"
    assert listed(desktop) == [sibling]


def test_the_conflicts_of_an_attempt_whose_push_was_refused_stay_in_the_result(
    three: tuple[Path, Machine, Machine, Machine],
) -> None:
    _bare, laptop, desktop, phone = three
    write(laptop.vault, "notes/beta.md", "# Beta\n\nthe laptop's version\n")
    laptop.sync()
    write(desktop.vault, "notes/beta.md", "# Beta\n\nthe desktop's version\n")
    desktop.committer.commit_cycle()
    write(phone.vault, "notes/gamma.md", "# Gamma\n\nthe phone's version\n")
    phone.committer.commit_cycle()
    heard: list[list[dict[str, str]]] = []

    def phone_pushes_meanwhile(conflicts: list[dict[str, str]]) -> None:
        heard.append(conflicts)
        if len(heard) == 1:  # between the desktop's merge and its push, the phone's round lands on the remote
            phone.sync()

    with desktop.committer.paused():
        result = Round(desktop.vault, on_conflicts=phone_pushes_meanwhile).run()
    assert result.attempts == 2 and result.outcome == "merged"
    (conflict,) = result.conflicts
    assert heard == [[conflict]] and conflict["sibling"].startswith("notes/beta.conflict-")
    assert {conflict["sibling"], "notes/gamma.md"} <= set(result.changed)  # both attempts' changes, for the index
    assert (desktop.vault / conflict["sibling"]).is_file()
    assert "the phone's version" in (desktop.vault / "notes/gamma.md").read_text()


def test_open_conflicts_are_never_trimmed_from_the_list(three: tuple[Path, Machine, Machine, Machine]) -> None:
    _bare, laptop, desktop, _ = three
    count = KEPT_CONFLICTS + 5
    for i in range(count):
        write(laptop.vault, f"notes/n{i:02d}.md", f"# N{i}\n\nstart\n")
    laptop.sync()
    desktop.sync()
    for i in range(count):
        write(laptop.vault, f"notes/n{i:02d}.md", f"# N{i}\n\nthe laptop's line\n")
        write(desktop.vault, f"notes/n{i:02d}.md", f"# N{i}\n\nthe desktop's line\n")
    laptop.sync()
    first = desktop.sync()["conflicts"]
    assert len(first) == count
    write(laptop.vault, "notes/beta.md", "# Beta\n\nthe laptop's version\n")
    write(desktop.vault, "notes/beta.md", "# Beta\n\nthe desktop's version\n")
    laptop.sync()
    (last,) = desktop.sync()["conflicts"]
    assert sorted(listed(desktop)) == sorted([c["sibling"] for c in first] + [last["sibling"]])


def test_a_sibling_never_overwrites_one_already_there(three: tuple[Path, Machine, Machine, Machine]) -> None:
    _bare, laptop, desktop, _ = three
    instant = dt.datetime(2026, 3, 1, 9, 30, tzinfo=dt.UTC)  # two merges within one second name the same sibling

    def desktop_round() -> list[dict[str, str]]:
        desktop.committer.commit_cycle()
        with desktop.committer.paused():
            round_ = Round(desktop.vault)
            round_.now = instant
            return round_.run().conflicts

    write(laptop.vault, "notes/beta.md", "# Beta\n\nthe laptop's first version\n")
    laptop.sync()
    write(desktop.vault, "notes/beta.md", "# Beta\n\nthe desktop's first version\n")
    (one,) = desktop_round()
    assert laptop.sync()["outcome"] == "fast-forward"
    write(laptop.vault, "notes/beta.md", "# Beta\n\nthe laptop's second version\n")
    laptop.sync()
    write(desktop.vault, "notes/beta.md", "# Beta\n\nthe desktop's second version\n")
    (two,) = desktop_round()
    assert two["sibling"] == one["sibling"].replace(".md", "-2.md")
    assert "the laptop's first version" in (desktop.vault / one["sibling"]).read_text()
    assert "the laptop's second version" in (desktop.vault / two["sibling"]).read_text()


def test_agentmd_host_names_the_machine_in_trailers_and_siblings(
    three: tuple[Path, Machine, Machine, Machine], monkeypatch: pytest.MonkeyPatch
) -> None:
    _bare, laptop, desktop, _ = three
    monkeypatch.setenv("AGENTMD_HOST", "the laptop")
    write(laptop.vault, "notes/beta.md", "# Beta\n\nthe laptop's version\n")
    laptop.sync()
    assert git(laptop.vault, "log", "-1", "--format=%(trailers:key=host,valueonly)").stdout.strip() == "the-laptop"
    monkeypatch.setenv("AGENTMD_HOST", "desk")
    write(desktop.vault, "notes/beta.md", "# Beta\n\nthe desktop's version\n")
    (conflict,) = desktop.sync()["conflicts"]
    assert conflict["sibling"].startswith("notes/beta.conflict-the-laptop-")
    assert git(desktop.vault, "log", "-1", "--format=%(trailers:key=host,valueonly)").stdout.strip() == "desk"


def test_a_round_killed_once_the_tree_moved_leaves_nothing_staged(
    tmp_path: Path, three: tuple[Path, Machine, Machine, Machine]
) -> None:
    """SIGKILL right after the work tree moved to a merge: the index is not left ahead of HEAD (which the
    committer would take for the person's own staging and never commit), the conflict is listed, and the next
    round pushes the merge."""
    import os
    import subprocess
    import sys

    bare, laptop, desktop, _ = three
    write(laptop.vault, "notes/beta.md", "# Beta\n\nthe laptop's version\n")
    write(laptop.vault, "notes/new.md", "# New\n\nfrom the laptop\n")
    laptop.sync()
    write(desktop.vault, "notes/beta.md", "# Beta\n\nthe desktop's version\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "AGENTMD_"))}
    env.update(HOME=str(tmp_path / "home"), XDG_STATE_HOME=str(tmp_path / "xdg-state"))
    argv = [sys.executable, "-m", "agentmd", "sync", "--vault", str(desktop.vault)]
    killed = subprocess.run(argv, env={**env, "AGENTMD_FAILPOINTS": "sync-tree-moved=kill"}, capture_output=True)
    assert killed.returncode == -9, killed.stderr
    head = git(desktop.vault, "rev-parse", "HEAD").stdout.strip()
    assert git(desktop.vault, "rev-list", "--parents", "-1", head).stdout.count(" ") == 2  # the merge is HEAD
    assert git(desktop.vault, "diff", "--cached", "--name-only").stdout == ""
    assert (desktop.vault / "notes/new.md").is_file() and git(desktop.vault, "status", "--porcelain").stdout == ""
    done = subprocess.run([*argv, "--json"], env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["outcome"] == "pushed"
    assert git(bare, "rev-parse", "main").stdout.strip() == head
    conflicts = subprocess.run([*argv[:3], "conflicts", "--vault", str(desktop.vault)], env=env, capture_output=True,
                               text=True, check=True).stdout.split()  # fmt: skip
    assert len(conflicts) == 1 and conflicts[0].startswith("notes/beta.conflict-")


def test_every_machine_lists_a_conflict_and_the_other_machine_resolves_it(
    three: tuple[Path, Machine, Machine, Machine],
) -> None:
    """The desktop's merge moves the laptop's version aside into a sibling; once the sibling syncs, the laptop
    (whose edit it holds) and the phone list it too, and the laptop may end it by naming the sibling."""
    from agentmd.engine.git.conflicts import conflict_pairs
    from agentmd.engine.git.resolve import resolve_conflict

    _bare, laptop, desktop, phone = three
    write(laptop.vault, "notes/beta.md", "# Beta\n\nthe laptop's version\n")
    laptop.sync()
    write(desktop.vault, "notes/beta.md", "# Beta\n\nthe desktop's version\n")
    desktop.sync()
    (sibling,) = [p.relative_to(desktop.vault).as_posix() for p in desktop.vault.glob("notes/beta.conflict-*.md")]
    laptop.sync()
    phone.sync()
    for m in (laptop, desktop, phone):
        assert listed(m) == [sibling], m.vault.name
    assert conflict_pairs(laptop.vault, laptop.state) == [("notes/beta.md", sibling)]

    note, kept, changed = resolve_conflict(laptop.vault, laptop.state, sibling, "theirs")
    assert (note, kept) == ("notes/beta.md", sibling) and set(changed) == {note, sibling}
    assert "the laptop's version" in (laptop.vault / note).read_text()
    assert not (laptop.vault / sibling).exists()
    assert listed(laptop) == []
