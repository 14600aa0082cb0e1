"""The remote's branch a vault syncs with when its names differ from the vault's: a remote made with another
default branch name (`main`) than the first machine's git (`master`), a clone whose remote's default branch
names none of its branches (no commit yet), a remote of several other branches, and a remote that holds another
repository. A bare repository and clones of it, real git."""

from __future__ import annotations

from pathlib import Path

import pytest
from git_helpers import git, make_repo, tree, write

from agentmd.engine.git.branches import SyncError, SyncHeld, add_remote
from agentmd.engine.git.committer import Committer
from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.sync_run import sync_vault


class Machine:
    def __init__(self, vault: Path, state: Path) -> None:
        self.vault, self.state = vault, state
        self.committer = Committer(vault, phone_paths=tuple, state_dir=state)

    def sync(self) -> dict:
        return dict(sync_vault(self.committer, self.state).to_dict())

    def branch(self) -> str:
        return git(self.vault, "symbolic-ref", "--short", "HEAD").stdout.strip()


@pytest.fixture
def two(tmp_path: Path) -> tuple[Machine, Path]:
    """A first machine on `master` whose remote was made with `main` as its default branch, synced once."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    first = make_repo(tmp_path / "laptop", {"notes/a.md": "# A\n\nfrom the laptop\n"})
    git(first, "branch", "-m", "master")
    add_remote(GitCli(first), str(remote))
    a = Machine(first, tmp_path / "state-a")
    assert a.sync()["outcome"] == "pushed"
    return a, remote


def another_history(tmp_path: Path, remote: Path) -> Machine:
    """A vault started on its own (its own first commit, on `master`) whose remote is `remote`."""
    other = make_repo(tmp_path / "other", {"x.md": "# X\n"})
    git(other, "branch", "-m", "master")
    add_remote(GitCli(other), str(remote))
    return Machine(other, tmp_path / "state-other")


def clone(tmp_path: Path, remote: Path, name: str) -> Machine:
    git(tmp_path, "clone", "-q", str(remote), str(tmp_path / name))  # warns: the remote's HEAD names no branch
    git(tmp_path / name, "config", "user.name", "Desk Owner")
    git(tmp_path / name, "config", "user.email", "desk@example.com")
    return Machine(tmp_path / name, tmp_path / f"state-{name}")


def test_a_clone_with_no_commit_checks_out_the_remotes_branch_and_keeps_its_notes(
    two: tuple[Machine, Path], tmp_path: Path
) -> None:
    a, remote = two
    b = clone(tmp_path, remote, "desktop")
    assert not (b.vault / "notes/a.md").exists()  # the clone checked nothing out
    write(b.vault, "notes/b.md", "# B\n\nwritten on the desktop before its first sync\n")
    cycle = b.committer.commit_cycle()  # a first commit here would start a history no sync could join
    assert cycle.commits == [] and cycle.skipped and "first sync" in cycle.skipped
    done = b.sync()
    assert done["adopted"] == "master" and b.branch() == "master"
    assert done["outcome"] == "pushed"
    assert (b.vault / "notes/a.md").read_text(encoding="utf-8") == "# A\n\nfrom the laptop\n"
    assert a.sync()["outcome"] == "fast-forward"
    assert tree(a.vault) == tree(b.vault) == {"notes/a.md", "notes/b.md"}
    for m in (a, b):  # the person's own `git pull` knows where the vault syncs to
        assert git(m.vault, "rev-parse", "--abbrev-ref", "@{upstream}").stdout.strip() == "origin/master"
    write(b.vault, "notes/c.md", "# C\n")
    b.sync()
    git(a.vault, "pull", "-q")
    assert (a.vault / "notes/c.md").exists()
    assert git(remote, "for-each-ref", "--format=%(refname)", "refs/heads").stdout.split() == ["refs/heads/master"]


def test_a_vault_whose_branch_the_remote_lacks_syncs_with_the_remotes_one_branch(
    two: tuple[Machine, Path], tmp_path: Path
) -> None:
    a, remote = two
    b = clone(tmp_path, remote, "desktop")
    b.sync()
    git(b.vault, "branch", "-m", "main")  # its git names the branch otherwise: still the same history
    write(b.vault, "notes/c.md", "# C\n\nfrom the desktop\n")
    assert b.sync()["branch"] == "master"
    assert a.sync()["outcome"] == "fast-forward" and (a.vault / "notes/c.md").exists()
    assert git(remote, "for-each-ref", "--format=%(refname)", "refs/heads").stdout.split() == ["refs/heads/master"]


def test_a_remote_of_another_history_or_of_several_other_branches_is_refused_with_what_to_do(
    two: tuple[Machine, Path], tmp_path: Path
) -> None:
    _a, remote = two
    b = another_history(tmp_path, remote)
    other = b.vault
    before = git(remote, "rev-parse", "master").stdout
    with pytest.raises(SyncError) as caught:
        b.sync()
    assert "shares no history" in str(caught.value) and "agentmd remote show" in str(caught.value)
    assert git(remote, "rev-parse", "master").stdout == before and tree(other) == {"x.md"}
    git(remote, "branch", "extra", "master")
    git(other, "branch", "-m", "mine")
    with pytest.raises(SyncError) as caught:
        b.sync()
    assert "no branch 'mine'" in str(caught.value) and "extra, master" in str(caught.value)


def test_a_sync_while_a_mass_deletion_is_held_back_commits_and_pushes_nothing(two: tuple[Machine, Path]) -> None:
    a, remote = two
    for i in range(30):
        write(a.vault, f"notes/n{i}.md", f"# N{i}\n")
    assert a.sync()["outcome"] == "pushed"
    for i in range(25):
        (a.vault / f"notes/n{i}.md").unlink()
    write(a.vault, "notes/a.md", "# A\n\nedited while the deletion waits\n")
    head, there = git(a.vault, "rev-parse", "HEAD").stdout, git(remote, "rev-parse", "master").stdout
    with pytest.raises(SyncHeld) as caught:
        a.sync()
    said = str(caught.value)
    assert said.startswith("sync held:") and "--allow-mass-delete" in said and "25 of" in said
    assert git(a.vault, "rev-parse", "HEAD").stdout == head and git(remote, "rev-parse", "master").stdout == there
    a.committer.allow_mass_deletion()
    assert a.sync()["outcome"] == "pushed" and len(tree(a.vault)) == 6


def test_a_round_held_by_the_daemons_refusal_commits_nothing_and_is_no_good_sync(
    two: tuple[Machine, Path], tmp_path: Path
) -> None:
    """The daemon holds every commit back after a reconcile refused a mass deletion that the committer's own
    check does not see (notes deleted a few at a time): a round then neither commits nor pushes, and status
    says the sync is held and how to end it, without counting the round as a good sync."""
    import datetime as dt

    from agentmd.engine.git.sync_status import sync_section

    a, remote = two
    good = a.sync()
    before = sync_section(a.vault, a.state, dt.datetime.now(dt.UTC))
    git(tmp_path, "clone", "-q", "-b", "master", str(remote), str(tmp_path / "desk"))
    write(tmp_path / "desk", "notes/d.md", "# D\n\nfrom the desk\n")
    git(tmp_path / "desk", "add", "-A")
    git(tmp_path / "desk", "commit", "-q", "-m", "desk")
    git(tmp_path / "desk", "push", "-q", "origin", "master")  # the remote moved too: a round would merge
    write(a.vault, "notes/a.md", "# A\n\nedited while the hold stands\n")
    refusal = (
        "this pass would leave 9 notes of the 30 the index held within the last 1 hour, deleted a few at a time, "
        "which looks like an unmounted or emptied vault; nothing was changed. If the deletion is deliberate, run "
        "`agentmd reindex --allow-mass-delete`"
    )
    a.committer.hold(refusal)
    head, there = git(a.vault, "rev-parse", "HEAD").stdout, git(remote, "rev-parse", "master").stdout
    with pytest.raises(SyncHeld) as caught:
        a.sync()
    assert "the last reconcile refused a mass deletion" in str(caught.value) and refusal in str(caught.value)
    assert git(a.vault, "rev-parse", "HEAD").stdout == head  # no commit here, no merge
    assert git(remote, "rev-parse", "master").stdout == there  # nothing pushed
    assert "edited while the hold stands" in (a.vault / "notes/a.md").read_text(encoding="utf-8")
    section = sync_section(a.vault, a.state, dt.datetime.now(dt.UTC))
    assert section["last_ok_at"] == before["last_ok_at"] and good["outcome"] == "up-to-date"
    (held,) = section["red"]
    assert held.startswith("sync-held since ") and "--allow-mass-delete" in held and "sync held:" not in held
    a.committer.hold(None)  # a pass saw the notes back
    assert a.sync()["outcome"] == "merged"
    after = sync_section(a.vault, a.state, dt.datetime.now(dt.UTC))
    assert after["red"] == [] and not after.get("held")


def test_a_mass_deletion_another_machine_made_is_synced_not_said_to_be_held(
    two: tuple[Machine, Path], tmp_path: Path
) -> None:
    a, remote = two
    for i in range(30):
        write(a.vault, f"notes/n{i}.md", f"# N{i}\n")
    assert a.sync()["outcome"] == "pushed"
    git(tmp_path, "clone", "-q", "-b", "master", str(remote), str(tmp_path / "desk"))
    b = Machine(tmp_path / "desk", tmp_path / "state-b")
    for i in range(25):
        (b.vault / f"notes/n{i}.md").unlink()
    b.committer.allow_mass_deletion()  # the desk's owner meant it
    assert b.sync()["outcome"] == "pushed"
    done = a.sync()  # the laptop takes the deletion: it synced, and nothing of its own waits
    assert done["outcome"] == "fast-forward" and done.get("held") is None, done
    assert len(tree(a.vault)) == 6


def test_a_failure_no_retry_ends_is_red_at_once_and_an_unreachable_remote_only_later(
    two: tuple[Machine, Path], tmp_path: Path
) -> None:
    import datetime as dt

    from agentmd.engine.git.sync_status import sync_section

    _a, remote = two
    b = another_history(tmp_path, remote)
    other = b.vault
    with pytest.raises(SyncError):
        b.sync()
    now = dt.datetime.now(dt.UTC)
    section = sync_section(other, b.state, now=now)
    assert any(line.startswith("sync-failing") and "shares no history" in line for line in section["red"])
    git(other, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    with pytest.raises(SyncError):
        b.sync()
    later = sync_section(other, b.state, now=now)
    assert not any(line.startswith("sync-failing") for line in later["yellow"] + later["red"])


def test_a_clones_first_sync_keeps_a_note_the_remote_also_names_beside_it(
    two: tuple[Machine, Path], tmp_path: Path
) -> None:
    from agentmd.engine.git.conflicts import conflict_pairs

    _a, remote = two
    b = clone(tmp_path, remote, "desktop")
    write(b.vault, "notes/a.md", "# A\n\nwritten on the desktop before its first sync\n")  # the remote has a.md
    done = b.sync()
    assert done["adopted"] == "master"
    assert (b.vault / "notes/a.md").read_text(encoding="utf-8") == "# A\n\nfrom the laptop\n"
    ((note, sibling),) = conflict_pairs(b.vault, b.state)
    assert note == "notes/a.md" and ".conflict-" in sibling
    assert "written on the desktop" in (b.vault / sibling).read_text(encoding="utf-8")
    c = clone(tmp_path, remote, "third")
    write(c.vault, "notes/a.md", "# A\n\nfrom the laptop\n")  # the same bytes: nothing to keep beside it
    assert c.sync()["adopted"] == "master"
    assert conflict_pairs(c.vault, c.state) == [(note, sibling)]  # the desktop's, arrived; none of its own


@pytest.mark.slow
def test_a_daemon_on_a_clone_with_no_commit_syncs_at_once_and_commits_the_notes_written_before(
    two: tuple[Machine, Path], tmp_path: Path, env: dict[str, str]
) -> None:
    from daemon_helpers import running_daemon, wait_until

    from agentmd.engine.settings import resolve

    _a, remote = two
    b = clone(tmp_path, remote, "desktop")
    write(b.vault, "notes/b.md", "# B\n\nwritten on the desktop before its daemon started\n")
    with running_daemon(resolve(vault=str(b.vault))):

        def joined() -> bool:
            return git(b.vault, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode == 0 and (
                "notes/b.md" in tree(b.vault)
            )

        wait_until(joined, 60, "the first sync's checkout and the commit of the note written before it")
    assert b.branch() == "master" and (b.vault / "notes/a.md").exists()


def test_a_remote_that_asks_for_credentials_this_machine_lacks_is_red_at_once(tmp_path: Path) -> None:
    """A remote answering 401 is no network outage: waiting never ends it, so it is red at once with what to set
    up, and the rounds do not back off as from an unreachable remote."""
    import datetime as dt
    import http.server
    import threading

    from agentmd.engine.git.branches import RemoteRefused
    from agentmd.engine.git.sync_status import sync_section

    class Refusing(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="vault"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        vault = make_repo(tmp_path / "vault", {"README.md": "# v\n"})
        said = add_remote(GitCli(vault), f"http://me:hunter2@127.0.0.1:{server.server_address[1]}/vault.git")
        assert "hunter2" not in said and "http://me:***@127.0.0.1" in said
        m = Machine(vault, tmp_path / "state")
        with pytest.raises(RemoteRefused, match="no working credentials"):
            m.sync()
    finally:
        server.shutdown()
    section = sync_section(vault, m.state, now=dt.datetime.now(dt.UTC))
    assert any("credential helper" in line for line in section["red"]), section
    assert section.get("next_attempt_at") is None  # no backing off
    assert "hunter2" not in str(section) and section["remote"].startswith("http://me:***@")  # never shown


def test_a_push_the_remote_declines_is_red_at_once_with_its_reason(two: tuple[Machine, Path]) -> None:
    """A server hook turning the push down answered: the remote is reachable and no retry changes its answer, so
    it is red at once, quoting the remote, and the rounds do not back off as from an outage."""
    import datetime as dt

    from agentmd.engine.git.branches import RemoteRefused
    from agentmd.engine.git.sync_status import sync_section

    a, remote = two
    hook = remote / "hooks" / "pre-receive"
    hook.write_text('#!/bin/sh\necho "policy: pushes are frozen" >&2\nexit 1\n', encoding="utf-8")
    hook.chmod(0o755)
    write(a.vault, "notes/frozen.md", "# Frozen\n\nwaits here\n")
    a.committer.commit_cycle()
    with pytest.raises(RemoteRefused, match=r"declined by the remote .*policy: pushes are frozen"):
        a.sync()
    section = sync_section(a.vault, a.state, now=dt.datetime.now(dt.UTC))
    assert any("pushes are frozen" in line and "no retry" in line for line in section["red"]), section
    assert section.get("next_attempt_at") is None
    assert not any("unreachable" in line for line in section["red"] + section["yellow"])


def test_a_push_that_met_another_at_the_same_moment_is_retried_not_taken_for_an_unreachable_remote(
    two: tuple[Machine, Path],
) -> None:
    """The remote's git could not lock its branch (another push held it): the round fetches, merges and pushes
    again, as for a rejected push, and never says the remote is out of reach (which the daemon waits out)."""
    from agentmd.engine.git.branches import RemoteUnreachable

    a, remote = two
    write(a.vault, "notes/race.md", "# Race\n\nmet another push\n")
    a.committer.commit_cycle()
    locks = [ref.with_name(ref.name + ".lock") for ref in (remote / "refs" / "heads").iterdir()]
    for lock in locks:
        lock.write_text("held by another push\n", encoding="utf-8")
    try:
        with pytest.raises(SyncError) as kept_moving:
            a.sync()
        assert not isinstance(kept_moving.value, RemoteUnreachable) and "kept moving" in str(kept_moving.value)
    finally:
        for lock in locks:
            lock.unlink()
    assert a.sync()["outcome"] == "pushed"
