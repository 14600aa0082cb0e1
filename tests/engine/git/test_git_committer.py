"""The committer against real repositories: what gets committed with which origin, the user's staging,
the first commit of an empty repository, and a user's own git running alongside.

Every test builds a real repository in tmp_path and plays the user with the real git CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from git_helpers import (
    blob,
    cat_file_batch,
    changed_in,
    committer,
    git,
    make_repo,
    origins,
    show,
    status,
    stray_temp_files,
    tree,
    write,
)

from agentmd.engine.git.committer import ORIGINS, Committer
from agentmd.engine.git.gate import corpus_write_gate
from agentmd.engine.git.health import git_health
from agentmd.engine.settings import host_name
from agentmd.engine.write.vault_guard import VaultIdentity

# --------------------------------------------------------------------------------------------------
# What gets committed, and with which origin


def test_edits_new_deleted_renamed_and_binary_files_commit_as_local_edit(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "v", {"notes/a.md": "a\n", "notes/b.md": "b\n", "notes/c.md": "c\n", "img.png": b"\x89"}
    )
    write(repo, "notes/a.md", "a edited\n")
    write(repo, "notes/new.md", "new\n")
    (repo / "notes/b.md").unlink()
    (repo / "notes/c.md").rename(repo / "notes/c-renamed.md")
    write(repo, "img.png", b"\x89PNG\x00\x01")
    write(repo, "data/table.csv", "x,y\n1,2\n")

    result = committer(repo).commit_cycle()

    assert result.error is None and result.skipped is None
    assert [c.origin for c in result.commits] == ["local-edit"]
    commit = result.commits[0]
    assert set(commit.paths) == {
        "notes/a.md",
        "notes/new.md",
        "notes/b.md",
        "notes/c.md",
        "notes/c-renamed.md",
        "img.png",
        "data/table.csv",
    }
    assert commit.sha == git(repo, "rev-parse", "HEAD").stdout.strip()
    assert origins(repo) == ["local-edit"]  # the hand-made initial commit has no trailer
    assert tree(repo) == {"notes/a.md", "notes/new.md", "notes/c-renamed.md", "img.png", "data/table.csv"}
    assert blob(repo, "HEAD:img.png") == b"\x89PNG\x00\x01"
    assert status(repo) == []
    assert stray_temp_files(repo) == []


def test_message_has_summary_blank_line_and_parseable_trailer(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    for i in range(5):
        write(repo, f"n/{i}.md", f"{i}\n")
    committer(repo).commit_cycle()
    raw = git(repo, "log", "-1", "--format=%B").stdout
    subject, blank, trailer, host = raw.split("\n")[:4]
    assert subject == "local-edit: 5 files (n/0.md, n/1.md, n/2.md, and 2 more)"
    assert blank == "" and trailer == "origin: local-edit" and host == f"host: {host_name()}"
    parsed = subprocess.run(
        ["git", "interpret-trailers", "--parse"], input=raw, capture_output=True, text=True, check=True
    ).stdout
    assert parsed.strip() == f"origin: local-edit\nhost: {host_name()}"


def test_phone_file_and_hand_edit_become_two_commits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    write(repo, "inbox/phone/clip.md", "from the phone\n")
    write(repo, "notes/a.md", "edited by hand\n")
    write(repo, "inbox/phoney.md", "not under the phone folder\n")

    result = committer(repo, phone=("inbox/phone/",)).commit_cycle()

    assert [(c.origin, c.paths) for c in result.commits] == [
        ("phone", ("inbox/phone/clip.md",)),
        ("local-edit", ("inbox/phoney.md", "notes/a.md")),
    ]
    assert origins(repo) == ["local-edit", "phone"]
    assert changed_in(repo, "HEAD~1") == {"inbox/phone/clip.md"}
    assert changed_in(repo, "HEAD") == {"inbox/phoney.md", "notes/a.md"}


def test_note_origin_gives_a_capture_commit_and_is_consumed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    c = committer(repo)
    c.note_origin("memory/decision.md", "capture")
    write(repo, "memory/decision.md", "decided\n")
    c.note_origin("probe/self.md", "self-probe")
    write(repo, "probe/self.md", "probe\n")
    write(repo, "notes/b.md", "hand\n")

    result = c.commit_cycle()

    assert [c.origin for c in result.commits] == ["capture", "self-probe", "local-edit"]
    assert origins(repo) == ["local-edit", "self-probe", "capture"]
    write(repo, "memory/decision.md", "edited later by hand\n")
    assert [c.origin for c in c.commit_cycle().commits] == ["local-edit"]
    with pytest.raises(ValueError, match="unknown commit origin"):
        c.note_origin("x.md", "agent")
    # the curation commands and the morning note commit under their own names; a hand edit is still local-edit
    assert ORIGINS == (
        "capture",
        "phone",
        "self-probe",
        "morning",
        "ingest",
        "confirm",
        "retire",
        "promote",
        "groom",
        "enrich",
        "lessons",
        "maps",
        "sync",
        "resolve",
        "revert",
        "lifecycle",
        "local-edit",
    )


def test_a_save_over_a_registered_write_before_its_commit_is_committed_as_the_persons(tmp_path: Path) -> None:
    # a capture registers the bytes it writes; a person saving over them before the commit makes the file
    # theirs: the capture's own bytes are committed first under its origin, then the file as local-edit, so
    # taking back the capture never takes back their save, and history shows both writes apart
    repo = make_repo(tmp_path / "v", {"notes/old.md": "# Old\n"})
    c = committer(repo, state_dir=tmp_path / "state")
    written = "---\ntitle: Decided\n---\ndecided\n"
    c.note_origin("memory/decision.md", "capture", written.encode())
    write(repo, "memory/decision.md", written)
    c.note_origin("memory/kept.md", "capture", b"kept\n")
    write(repo, "memory/kept.md", "kept\n")
    write(repo, "memory/decision.md", written + "and a line the person added at once\n")

    result = c.commit_cycle()

    assert [(cm.origin, tuple(cm.paths)) for cm in result.commits] == [
        ("capture", ("memory/decision.md", "memory/kept.md")),
        ("local-edit", ("memory/decision.md",)),
    ]
    assert show(repo, "HEAD~1:memory/decision.md") == written  # the capture's commit: its own bytes
    assert "the person added" in show(repo, "HEAD:memory/decision.md")
    assert git(repo, "status", "--porcelain").stdout == ""  # the index holds the person's version
    assert c.origins.current() == {}  # both registrations ended with their commits


def test_a_saved_over_write_with_the_persons_own_staged_change_beside_it(tmp_path: Path) -> None:
    # the person has staged a change of their own: the writer's bytes and the person's save are committed,
    # and the staged change is still theirs alone to commit
    repo = make_repo(tmp_path / "v", {"notes/old.md": "# Old\n"})
    c = committer(repo, state_dir=tmp_path / "state")
    write(repo, "notes/old.md", "# Old, staged by hand\n")
    git(repo, "add", "notes/old.md")
    c.note_origin("memory/decision.md", "capture", b"decided\n")
    write(repo, "memory/decision.md", "decided\n")
    write(repo, "memory/decision.md", "decided, and then changed\n")

    result = c.commit_cycle()

    assert [(cm.origin, tuple(cm.paths)) for cm in result.commits] == [
        ("capture", ("memory/decision.md",)),
        ("local-edit", ("memory/decision.md",)),
    ]
    assert show(repo, "HEAD~1:memory/decision.md") == "decided\n"
    assert show(repo, "HEAD:notes/old.md") == "# Old\n"  # the staged change is not in our commits
    assert [line for line in status(repo) if line.strip()] == ["M  notes/old.md"]


def test_a_save_over_another_process_registered_write_is_committed_as_the_persons(tmp_path: Path) -> None:
    # a CLI capture registered the write and exited: its bytes are gone with it, so the file, saved over since,
    # is committed as local-edit alone (never under the capture's origin)
    repo = make_repo(tmp_path / "v", {"notes/old.md": "# Old\n"})
    written = "---\ntitle: Decided\n---\ndecided\n"
    cli = committer(repo, state_dir=tmp_path / "state")
    cli.note_origin("memory/decision.md", "capture", written.encode())
    write(repo, "memory/decision.md", written)
    write(repo, "memory/decision.md", written + "and a line the person added at once\n")

    daemon = committer(repo, state_dir=tmp_path / "state")
    result = daemon.commit_cycle()

    assert [(cm.origin, tuple(cm.paths)) for cm in result.commits] == [("local-edit", ("memory/decision.md",))]
    assert "the person added" in show(repo, "HEAD:memory/decision.md")
    assert daemon.origins.current() == {}


def test_untracked_dot_dirs_and_scratch_files_are_never_committed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {"notes/x.md": "x\n", ".obsidian/app.json": "{}\n"})
    write(repo, ".obsidian/app.json", '{"theme": "dark"}\n')  # tracked: committed
    write(repo, ".obsidian/new.json", "{}\n")  # untracked under a dot dir: left alone
    write(repo, "notes/.hidden/deep.md", "x\n")
    for scratch in ("notes/x.md.swp", "notes/x.md.swx", "notes/x.md~", "notes/.#x.md", "notes/4913"):
        write(repo, scratch, "scratch\n")
    write(repo, ".tmp.driveupload/y", "upload\n")
    write(repo, "notes/keep.md", "real note\n")

    result = committer(repo).commit_cycle()

    assert [set(c.paths) for c in result.commits] == [{".obsidian/app.json", "notes/keep.md"}]
    assert tree(repo) == {"notes/x.md", ".obsidian/app.json", "notes/keep.md"}
    assert '"dark"' in show(repo, "HEAD:.obsidian/app.json")
    left = {line[3:] for line in status(repo)}
    assert ".obsidian/new.json" in left and "notes/x.md.swp" in left and ".tmp.driveupload/y" in left


def test_large_file_is_committed_with_a_warning(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    write(repo, "attachments/scan.pdf", b"%PDF" + b"\0" * 4996)
    result = committer(repo, large_file_bytes=1000).commit_cycle()
    assert result.commits and "attachments/scan.pdf" in tree(repo)
    assert any("attachments/scan.pdf" in w and "5000 bytes" in w for w in result.warnings)


def test_nothing_dirty_is_a_success_that_commits_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    head = git(repo, "rev-parse", "HEAD").stdout
    result = committer(repo).commit_cycle()
    assert result == type(result)([], None, None, [])
    assert git(repo, "rev-parse", "HEAD").stdout == head
    assert stray_temp_files(repo) == []


# --------------------------------------------------------------------------------------------------
# The user's staging


def test_user_staging_is_preserved_and_left_for_the_user(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {"notes/a.md": "one\n", "notes/b.md": "b\n", "notes/gone.md": "g\n"})
    write(repo, "notes/a.md", "one\ntwo\n")
    git(repo, "add", "notes/a.md")  # the user stages part of their work ...
    write(repo, "notes/a.md", "one\ntwo\nthree\n")  # ... and keeps editing
    staged_blob = git(repo, "rev-parse", ":notes/a.md").stdout.strip()
    write(repo, "notes/new.md", "new\n")
    git(repo, "add", "notes/new.md")
    git(repo, "rm", "-q", "--cached", "notes/gone.md")  # untrack, keep the file
    write(repo, "notes/b.md", "edited by hand, not staged\n")

    c = committer(repo)
    result = c.commit_cycle()

    assert [c.paths for c in result.commits] == [("notes/b.md",)]
    assert changed_in(repo) == {"notes/b.md"}
    assert git(repo, "rev-parse", ":notes/a.md").stdout.strip() == staged_blob
    assert set(git(repo, "diff", "--cached", "--name-only").stdout.split()) == {
        "notes/a.md",
        "notes/new.md",
        "notes/gone.md",
    }
    assert any("notes/a.md" in w and "staged" in w for w in result.warnings)
    assert c.commit_cycle().warnings == []  # said once, not every cycle

    git(repo, "commit", "-q", "-m", "the user's own commit")
    assert show(repo, "HEAD:notes/a.md") == "one\ntwo\n"
    assert "notes/gone.md" not in tree(repo)
    # After the user's commit, the rest of a.md is an ordinary hand edit, and notes/gone.md is an ordinary
    # untracked, not ignored file: both are committed (to keep a file out of history, .gitignore it).
    result = c.commit_cycle()
    assert [c.paths for c in result.commits] == [("notes/a.md", "notes/gone.md")]
    assert show(repo, "HEAD:notes/a.md") == "one\ntwo\nthree\n"
    assert status(repo) == []


def test_missing_index_is_rebuilt_from_head_not_read_as_mass_deletion(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {f"n/{i}.md": f"{i}\n" for i in range(5)})
    (repo / ".git/index").unlink()
    write(repo, "n/0.md", "changed\n")
    result = committer(repo).commit_cycle()
    assert [c.paths for c in result.commits] == [("n/0.md",)]
    assert tree(repo) == {f"n/{i}.md" for i in range(5)}
    assert status(repo) == []


@pytest.mark.parametrize("damage", ["garbage", "torn", "missing"])
def test_a_damaged_or_missing_index_is_rebuilt_from_head_and_put_back(tmp_path: Path, damage: str) -> None:
    """A garbled or half-written `.git/index` stops every git command in the vault; the committer rebuilds it
    from HEAD (keeping the damaged file), commits what changed, and leaves an index git reads again, also when
    there was nothing to commit."""
    repo = make_repo(tmp_path / "v", {f"n/{i}.md": f"{i}\n" for i in range(5)})
    index = repo / ".git/index"
    whole = index.read_bytes()
    if damage == "missing":
        index.unlink()
    else:
        index.write_bytes(b"garbage" if damage == "garbage" else whole[: len(whole) // 2])
        assert git(repo, "status", check=False).stderr  # git cannot read it whole
    result = committer(repo).commit_cycle()
    assert result.error is None and result.commits == []
    assert status(repo) == [] and git(repo, "status", "--porcelain").stderr == ""
    if damage != "missing":
        assert any("damaged" in w for w in result.warnings), result.warnings
        assert (repo / ".git/index.damaged").read_bytes() != whole
    index.write_bytes(b"garbage")
    write(repo, "n/0.md", "changed\n")
    result = committer(repo).commit_cycle()
    assert [c.paths for c in result.commits] == [("n/0.md",)] and status(repo) == []


def test_a_mass_deletion_is_held_until_allowed_and_then_committed(tmp_path: Path) -> None:
    # the case a reconcile pass cannot cover: a cycle that runs before the pass that would refuse the deletion
    files: dict[str, str | bytes] = {f"n/{i}.md": f"{i}\n" for i in range(60)} | {"img.png": b"\x89"}
    repo = make_repo(tmp_path / "v", files)
    before = git(repo, "rev-parse", "HEAD").stdout
    for i in range(31):  # 31 of 60 notes: over half
        (repo / f"n/{i}.md").unlink()
    write(repo, "n/59.md", "edited in the same minute\n")
    c = committer(repo)

    held = c.commit_cycle()
    assert held.commits == [] and held.error is None and held.skipped is None
    assert c.state.mass_deletion == "31 of 60 committed notes deleted at once"
    assert any("--allow-mass-delete" in w for w in held.warnings)
    assert git(repo, "rev-parse", "HEAD").stdout == before
    again = c.commit_cycle()  # still held, and said once
    assert again.commits == [] and not any("--allow-mass-delete" in w for w in again.warnings)

    c.allow_mass_deletion()
    result = c.commit_cycle()
    assert [len(x.paths) for x in result.commits] == [32]
    assert tree(repo) == {f"n/{i}.md" for i in range(31, 60)} | {"img.png"}
    assert c.state.mass_deletion is None and status(repo) == []

    for i in range(31, 46):  # the allowance was spent: 15 of the 29 left is held again
        (repo / f"n/{i}.md").unlink()
    assert c.commit_cycle().commits == [] and c.state.mass_deletion == "15 of 29 committed notes deleted at once"
    assert len(tree(repo)) == 30


def test_deletions_under_the_breaker_are_committed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {f"n/{i}.md": f"{i}\n" for i in range(30)} | {".obsidian/a.md": "x\n"})
    for i in range(15):  # exactly half is not over half
        (repo / f"n/{i}.md").unlink()
    c = committer(repo)
    assert [len(x.paths) for x in c.commit_cycle().commits] == [15] and c.state.mass_deletion is None

    small = make_repo(tmp_path / "small", {f"n/{i}.md": f"{i}\n" for i in range(19)})
    for i in range(19):  # a vault of fewer than 20 notes may lose them all
        (small / f"n/{i}.md").unlink()
    assert [len(x.paths) for x in committer(small).commit_cycle().commits] == [19]

    files = {f"n/{i}.md": f"{i}\n" for i in range(20)} | {f"img/{i}.png": b"\x89" for i in range(40)}
    media = make_repo(tmp_path / "media", files)
    for i in range(40):  # deleted attachments are not notes
        (media / f"img/{i}.png").unlink()
    assert [len(x.paths) for x in committer(media).commit_cycle().commits] == [40]


def test_merge_in_progress_skips_the_cycle(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    sha = git(repo, "rev-parse", "HEAD").stdout
    (repo / ".git/MERGE_HEAD").write_text(sha)
    write(repo, "notes/a.md", "mid-merge edit\n")
    result = committer(repo).commit_cycle()
    assert result.skipped and "merge" in result.skipped and not result.commits
    assert stray_temp_files(repo) == []


def test_a_detached_head_holds_commits_until_the_branch_is_back_and_loses_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    git(repo, "checkout", "-q", "--detach")  # the person looks at a commit while agents keep capturing
    write(repo, "notes/captured.md", "# Captured\n\nwritten while HEAD was detached\n")
    c = committer(repo)
    held = c.commit_cycle()
    assert held.skipped and "detached" in held.skipped and "git switch" in held.skipped and not held.commits
    git(repo, "checkout", "-q", "main")
    done = c.commit_cycle()
    assert [p for commit in done.commits for p in commit.paths] == ["notes/captured.md"]
    assert "notes/captured.md" in tree(repo, "main") and status(repo) == []


# --------------------------------------------------------------------------------------------------
# First commits and identity


def test_daemon_makes_the_first_commit_of_an_empty_repository(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    git(vault, "init", "-q", "-b", "main")
    write(vault, "notes/first.md", "first\n")
    assert git_health(vault).reason == "no-commits"
    result = Committer(vault, phone_paths=tuple).commit_cycle()
    assert [x.paths for x in result.commits] == [("notes/first.md",)]
    assert git_health(vault).ok and corpus_write_gate(vault).ok
    assert origins(vault) == ["local-edit"]


def test_fixed_identity_when_the_repository_has_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git(vault, "init", "-q", "-b", "main")
    write(vault, "a.md", "a\n")
    assert Committer(vault, phone_paths=tuple).commit_cycle().commits
    assert git(vault, "log", "-1", "--format=%an <%ae>|%cn <%ce>").stdout.strip() == (
        "agentmd <agentmd@localhost>|agentmd <agentmd@localhost>"
    )


# --------------------------------------------------------------------------------------------------
# Concurrency with a user's own git


def test_user_git_loop_and_committer_cycles_lose_nothing(tmp_path: Path) -> None:
    """A user's add/commit loop against ~100+ daemon cycles: nothing lost, nothing reverted, staging intact.

    The user's files live in a dot folder, so the daemon never picks them up while they are untracked
    and each user commit must contain exactly what the user staged. After staging, the user appends a
    tail to the file: the daemon must never slip that unstaged tail into the user's commit, and commits
    it itself once the user's commit made the file tracked.
    """
    repo = make_repo(tmp_path / "v", {"daemon/seed.md": "seed\n", ".user/seed.md": "seed\n"})
    user_files = [f".user/u{i:03d}.md" for i in range(200)]
    errors: list[str] = []
    retryable = ("index.lock", "cannot lock ref")

    def user_loop() -> None:
        def retrying(*args: str) -> None:
            for _ in range(3000):
                proc = git(repo, *args, check=False)
                if proc.returncode == 0:
                    return
                if not any(text in proc.stderr for text in retryable):
                    errors.append(f"{args}: {proc.stderr}{proc.stdout}")
                    return
                time.sleep(0.002)
            errors.append(f"{args}: gave up retrying")

        for i, rel in enumerate(user_files):
            write(repo, rel, f"user note {i}\n")
            retrying("add", "--", rel)
            write(repo, rel, f"user note {i}\nunstaged tail\n")  # staged and worktree now differ
            retrying("commit", "-q", "-m", f"user commit {i}")

    c = committer(repo)
    daemon_commits = 0
    thread = threading.Thread(target=user_loop)
    started = time.monotonic()
    thread.start()
    cycles = 0
    while (cycles < 100 or thread.is_alive()) and cycles < 3000:
        write(repo, f"daemon/d{cycles % 10}.md", f"daemon edit {cycles}\n")
        result = c.commit_cycle()
        # "HEAD changed" is benign: nothing was changed; user commits moved HEAD during all five attempts.
        assert result.error is None or result.error.startswith("HEAD changed"), result.error
        daemon_commits += len(result.commits)
        cycles += 1
    thread.join(timeout=60)
    for _ in range(3):
        daemon_commits += len(c.commit_cycle().commits)
    assert time.monotonic() - started < 120  # a livelock spins to the cycle cap; a loaded machine takes ~30 s

    assert errors == []
    assert status(repo) == []
    assert stray_temp_files(repo) == []
    fsck = git(repo, "fsck", "--full", "--no-progress", check=False)
    assert fsck.returncode == 0, fsck.stderr
    assert int(git(repo, "rev-list", "--count", "HEAD").stdout) == 1 + len(user_files) + daemon_commits

    # Every user commit exists once and holds exactly the staged version of its file.
    user_log = [ln.split(" ") for ln in git(repo, "log", "--format=%H %s", "--grep=^user commit ").stdout.splitlines()]
    assert sorted(int(parts[-1]) for parts in user_log) == list(range(len(user_files)))
    specs = "".join(f"{parts[0]}:.user/u{int(parts[-1]):03d}.md\n" for parts in user_log)
    staged_versions: list[str | None] = cat_file_batch(repo, specs)
    assert staged_versions == [f"user note {int(parts[-1])}\n" for parts in user_log]
    # The unstaged tails were committed by the daemon afterwards.
    for i, rel in enumerate(user_files):
        assert show(repo, f"HEAD:{rel}") == f"user note {i}\nunstaged tail\n"

    # No agentmd commit ever takes a daemon file back to an older edit. A *user's* plain `git commit` can:
    # it reads the index before taking index.lock, so when it reads during a cycle and writes after it,
    # it puts back a stale index (git's own read-before-lock race, the same between two git processes).
    # That costs history noise, never content: the file keeps its newest edit and the next cycle
    # commits it again, which the HEAD check above proves.
    log = git(repo, "log", "--format=%x00%H%x01%(trailers:key=origin,valueonly)%x01", "--name-only", "--", "daemon")
    changes = []
    for chunk in log.stdout.split("\0")[1:]:
        sha, origin, names = chunk.split("\x01")
        changes += [(sha, origin.strip(), name) for name in names.split() if name != "daemon/seed.md"]
    specs = "".join(f"{sha}:{name}\n{sha}^:{name}\n" for sha, _, name in changes)
    blobs = cat_file_batch(repo, specs)
    user_reverts = 0
    for n, (sha, origin, name) in enumerate(changes):
        new, old = blobs[2 * n], blobs[2 * n + 1]
        went_back = new is not None and old is not None and int(new.split()[-1]) < int(old.split()[-1])
        if origin:
            assert not went_back, f"agentmd commit {sha} took {name} back from {old!r} to {new!r}"
        user_reverts += went_back
    assert user_reverts <= len(user_files)
    print(f"user commits that undid a daemon change in history (git's race, content kept): {user_reverts}")


def test_origins_registered_together_are_all_durable(tmp_path: Path) -> None:
    from agentmd.engine.git.origins import JOURNAL_NAME, OriginBook

    journal = tmp_path / "state" / JOURNAL_NAME
    book = OriginBook(journal)
    paths = [f"inbox/note-{i:03d}.md" for i in range(120)]
    start = threading.Barrier(12)

    def register(chunk: list[str]) -> None:
        start.wait()
        for p in chunk:
            book.note(p, "capture")

    threads = [threading.Thread(target=register, args=(paths[i::12],)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert book.problem is None
    again = OriginBook(journal)  # what a daemon started after a crash reads back
    assert again.current() == {p: "capture" for p in paths}
    lines = journal.read_text().splitlines()
    assert len(lines) == len(paths) and all(json.loads(line)["origin"] == "capture" for line in lines)
    assert {json.loads(line)["pid"] for line in lines} == {os.getpid()}  # each line names its writer


def test_an_origin_journal_that_cannot_be_written_is_reported_to_every_writer(tmp_path: Path) -> None:
    from agentmd.engine.git.origins import OriginBook

    blocker = tmp_path / "state"
    blocker.write_text("a file where the state folder should be\n")
    book = OriginBook(blocker / "pending-origins.jsonl")
    book.note("inbox/a.md", "capture")
    assert book.problem is not None and "inbox/a.md" in book.problem and "local-edit" in book.problem
    assert book.current() == {"inbox/a.md": "capture"}  # kept in memory, the write goes on


def _files_in(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_vault_swapped_for_an_empty_folder_gets_no_git_files(tmp_path: Path) -> None:
    """An unmounted drive leaves an empty folder at the vault's path: no cycle writes `.git` into it."""
    repo = make_repo(tmp_path / "v", {"a.md": "a\n"})
    identity = VaultIdentity(repo)
    c = committer(repo, vault_check=identity.problem)
    write(repo, "b.md", "b\n")
    repo.rename(tmp_path / "unmounted")
    repo.mkdir()
    result = c.commit_cycle()
    assert result.error and "no longer the vault" in result.error
    assert _files_in(repo) == []
    assert git(tmp_path / "unmounted", "log", "-1", "--format=%s").stdout.strip() == "initial"


def test_a_vault_swapped_during_a_cycle_is_not_committed_into(tmp_path: Path) -> None:
    """The swap lands after the cycle's first look, once its commits are made and before it locks HEAD (a
    scripted race): the cycle stops there, and the real vault keeps its HEAD."""
    repo = make_repo(tmp_path / "v", {"a.md": "a\n"})
    head = git(repo, "rev-parse", "HEAD").stdout
    identity = VaultIdentity(repo)
    looks: list[str | None] = []

    def check_then_swap() -> str | None:
        if looks:  # the first look passed; the drive goes away just before the second
            repo.rename(tmp_path / "unmounted")
            repo.mkdir()
        looks.append(identity.problem())
        return looks[-1]

    c = committer(repo, vault_check=check_then_swap)
    write(repo, "b.md", "b\n")
    result = c.commit_cycle()
    assert looks[0] is None and looks[-1] and "no longer the vault" in looks[-1]
    assert result.error and "nothing was committed" in result.error
    assert _files_in(repo) == []
    moved = tmp_path / "unmounted"
    assert git(moved, "rev-parse", "HEAD").stdout == head
    assert not (moved / ".git" / "index.lock").exists() and not list((moved / ".git").glob("*.lock"))


def _dead_pid() -> int:
    child = subprocess.run(["python3", "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


def test_a_pending_origin_never_expires_by_the_clock(tmp_path: Path) -> None:
    from agentmd.engine.git.origins import JOURNAL_NAME, OriginBook

    now = [1_000.0]
    book = OriginBook(tmp_path / JOURNAL_NAME, wall=lambda: now[0])
    book.note("memory/held.md", "capture")
    now[0] += 7 * 24 * 3600  # a week: a commit editor left open, a merge left unresolved, a suspend
    assert book.current(pending={"memory/held.md"}) == {"memory/held.md": "capture"}
    assert book.current(pending=set()) == {"memory/held.md": "capture"}  # its writer runs: not spent


def test_every_writer_shares_one_journal(tmp_path: Path) -> None:
    from agentmd.engine.git.origins import JOURNAL_NAME, OriginBook

    journal = tmp_path / JOURNAL_NAME
    daemon, cli = OriginBook(journal), OriginBook(journal)  # two processes' views of one state folder
    daemon.note("memory/a.md", "capture")
    cli.note("inbox/phone/b.md", "phone")
    assert cli.current() == daemon.current() == {"memory/a.md": "capture", "inbox/phone/b.md": "phone"}
    cli.consume(["memory/a.md"])  # the CLI's cycle committed the daemon's capture
    assert daemon.current() == {"inbox/phone/b.md": "phone"}


def test_a_registration_is_spent_only_when_its_writer_is_gone_and_nothing_is_pending(tmp_path: Path) -> None:
    from agentmd.engine.git.origins import JOURNAL_NAME, OriginBook

    journal = tmp_path / JOURNAL_NAME
    dead = _dead_pid()
    lines = [
        {"path": "memory/written.md", "origin": "capture", "at": 1.0, "pid": dead},  # written, not committed
        {"path": "memory/never.md", "origin": "capture", "at": 1.0, "pid": dead},  # its writer died first
        {"path": "memory/about-to.md", "origin": "capture", "at": 1.0, "pid": os.getpid()},  # a live writer
        {"path": "memory/old.md", "origin": "capture", "at": 1.0},  # a line without a pid: its writer is gone
    ]
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines))
    book = OriginBook(journal)
    assert book.current(pending={"memory/written.md"}) == {
        "memory/written.md": "capture",
        "memory/about-to.md": "capture",
    }
    assert {json.loads(x)["path"] for x in journal.read_text().splitlines()} == {
        "memory/written.md",
        "memory/about-to.md",
    }


def test_a_new_file_over_the_size_limit_is_held_and_named_until_it_is_allowed(tmp_path: Path) -> None:
    from agentmd.engine.daemon.status import git_section

    repo = make_repo(tmp_path / "v", {"notes/x.md": "x\n"})
    big = b"\0" * (3 * 2**20)
    (repo / "attachments").mkdir()
    (repo / "attachments/scan.pdf").write_bytes(big)
    write(repo, "notes/keep.md", "a note beside it\n")
    c = committer(repo, max_file_bytes=2 * 2**20)
    result = c.commit_cycle()
    assert [set(x.paths) for x in result.commits] == [{"notes/keep.md"}]
    assert c.state.large_files_held == {"attachments/scan.pdf": len(big)}
    section = git_section(repo, c.state, datetime.now(UTC))
    (line,) = section["yellow"]
    assert line.startswith("large-files-held: 1 new file(s) over 2 MiB not committed: attachments/scan.pdf (3 MiB)")
    assert "commit_max_mb" in line and ".gitignore" in line and section["red"] == []
    # the owner commits it by hand: from then on it is a tracked file and its changes are committed
    git(repo, "add", "attachments/scan.pdf")
    git(repo, "commit", "-q", "-m", "the owner keeps the scan")
    (repo / "attachments/scan.pdf").write_bytes(big + b"more")
    assert [set(x.paths) for x in c.commit_cycle().commits] == [{"attachments/scan.pdf"}]
    assert c.state.large_files_held == {}
    # a limit raised in the config file lets new large files through
    (repo / "attachments/other.pdf").write_bytes(big)
    assert [set(x.paths) for x in committer(repo, max_file_bytes=4 * 2**20).commit_cycle().commits] == [
        {"attachments/other.pdf"}
    ]


def test_the_size_limit_comes_from_the_config_file(tmp_path: Path) -> None:
    from agentmd.engine.errors import ConfigError
    from agentmd.engine.settings import resolve

    vault = make_repo(tmp_path / "v", {"a.md": "a\n"})
    config = tmp_path / "config.toml"
    assert resolve(vault=str(vault), env={"HOME": str(tmp_path)}).commit_max_bytes == 50 * 2**20  # the default
    config.write_text("commit_max_mb = 200\n")
    assert resolve(vault=str(vault), config=str(config)).commit_max_bytes == 200 * 2**20
    config.write_text('commit_max_mb = "lots"\n')
    with pytest.raises(ConfigError, match="commit_max_mb"):
        resolve(vault=str(vault), config=str(config))
