"""A sync round's move of the work tree never overwrites a save (engine/git/tree_move.py): each file is swapped
into place and what it replaced is checked, so a save made at any moment of the move is merged with the
incoming version or kept beside it. A round killed mid-move is finished before anything is committed. Real git,
real files, a real saving thread."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from git_helpers import git, make_repo, status, write
from test_sync import NOTES, Machine

from agentmd.engine.git.branches import add_remote
from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.tree_move import HOLD, JOURNAL, exchange_available, finish_unfinished, move_tree

NOW = dt.datetime(2026, 12, 6, 3, 0, tzinfo=dt.UTC)


def rev(repo: Path, spec: str = "HEAD") -> str:
    return git(repo, "rev-parse", spec).stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return rev(repo)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", NOTES)
    if not exchange_available(root):
        pytest.skip("this file system cannot swap two names in one step")
    return root


def moved_to(vault: Path, changes: dict[str, str | None]) -> tuple[str, str]:
    """Commit `changes` (None deletes) as the incoming commit, then put the work tree, index and HEAD back on
    the old commit, as a machine that has not synced yet; (old, new)."""
    old = rev(vault)
    for rel, text in changes.items():
        if text is None:
            (vault / rel).unlink()
        else:
            write(vault, rel, text)
    new = commit_all(vault, "the other machine's edits\n\norigin: capture\nhost: laptop")
    git(vault, "reset", "-q", "--hard", old)
    return old, new


def move(vault: Path, old: str, new: str) -> list[dict[str, str]]:
    result = move_tree(GitCli(vault), old, new, message="sync: origin", env={}, their_host=lambda _p: "laptop", now=NOW)
    assert result is not None
    assert rev(vault) == new and not (vault / ".git" / JOURNAL).exists()
    assert git(vault, "diff", "--cached", "--name-only").stdout == ""  # nothing reads as staged
    return result.kept


def test_a_move_without_saves_leaves_the_tree_as_git_would(vault: Path) -> None:
    write(vault, "deep/folder/gone.md", "# Gone\n")
    write(vault, "run.sh", "#!/bin/sh\necho hi\n")
    os.chmod(vault / "run.sh", 0o644)
    base = commit_all(vault, "base")
    git(vault, "reset", "-q", "--hard", base)
    os.chmod(vault / "run.sh", 0o755)
    os.symlink("notes/alpha.md", vault / "alpha-link.md")
    old, new = moved_to(vault, {"notes/beta.md": "# Beta\n\nnew text\n", "notes/new.md": "# New\n",
                                "deep/folder/gone.md": None, "sub/dir/made.md": "# Made\n"})  # fmt: skip
    kept = move(vault, old, new)
    assert kept == [] and status(vault) == []
    assert (vault / "notes/beta.md").read_text() == "# Beta\n\nnew text\n"
    assert (vault / "sub/dir/made.md").is_file() and not (vault / "deep").exists()  # emptied folders go
    assert os.access(vault / "run.sh", os.X_OK) and os.readlink(vault / "alpha-link.md") == "notes/alpha.md"
    assert not (vault / ".git" / HOLD).exists()  # no file of the move stays


def test_a_save_on_other_lines_is_merged_with_the_incoming_version(vault: Path) -> None:
    text = NOTES["notes/alpha.md"]
    old, new = moved_to(vault, {"notes/alpha.md": text.replace("line one", "line one, from the laptop")})
    write(vault, "notes/alpha.md", text.replace("line three", "line three, saved here"))
    assert move(vault, old, new) == [{"path": "notes/alpha.md", "kept": "merged"}]
    merged = (vault / "notes/alpha.md").read_text()
    assert "line one, from the laptop" in merged and "line three, saved here" in merged
    assert status(vault) == [" M notes/alpha.md"]  # the save is a local edit on top of the synced commit


def test_a_save_on_the_same_line_stays_and_the_incoming_version_becomes_a_sibling(vault: Path) -> None:
    old, new = moved_to(vault, {"notes/beta.md": "# Beta\n\nthe laptop's text\n"})
    write(vault, "notes/beta.md", "# Beta\n\nthe text saved here\n")
    (kept,) = move(vault, old, new)
    assert (vault / "notes/beta.md").read_text() == "# Beta\n\nthe text saved here\n"
    sibling = vault / kept["sibling"]
    assert kept["sibling"].startswith("notes/beta.conflict-laptop-20261206-")
    assert "status: conflict" in sibling.read_text() and "the laptop's text" in sibling.read_text()


def test_a_save_of_a_deleted_note_survives_and_a_settings_file_keeps_the_save(vault: Path) -> None:
    write(vault, ".obsidian/app.json", '{"a": 1}\n')
    commit_all(vault, "settings")
    old, new = moved_to(vault, {"notes/gamma.md": None, ".obsidian/app.json": '{"a": 2}\n'})
    write(vault, "notes/gamma.md", "# Gamma\n\nsaved while it was deleted\n")
    write(vault, ".obsidian/app.json", '{"a": 3}\n')
    kept = move(vault, old, new)
    assert sorted(kept, key=lambda k: k["path"]) == [
        {"path": ".obsidian/app.json", "kept": "ours"},
        {"path": "notes/gamma.md", "kept": "the edit"},
    ]
    assert "saved while it was deleted" in (vault / "notes/gamma.md").read_text()
    assert (vault / ".obsidian/app.json").read_text() == '{"a": 3}\n'


def test_a_save_written_through_a_file_held_open_across_the_swap_is_kept(vault: Path) -> None:
    """An editor that writes in place opened the note before the round swapped it out; its write lands in the
    file now at the temp name. The round reads what it set aside once more before dropping it: the save is
    merged with the incoming version, not lost with the temp file."""
    names = [f"notes/h{i:02d}.md" for i in range(40)]
    for rel in names:
        write(vault, rel, f"# {rel}\n\nfirst line\nsecond line\n")
    commit_all(vault, "notes")
    old, new = moved_to(vault, {rel: f"# {rel}\n\nfirst line\nsecond line\nincoming line\n" for rel in names})
    path = vault / names[0]
    held = open(path, "r+")  # noqa: SIM115 - held open across the move, as an editor holds it
    inode = os.fstat(held.fileno()).st_ino
    wrote = threading.Event()

    def editor() -> None:
        while os.stat(path).st_ino == inode:  # the round swapped the note out from under the open file
            pass
        held.truncate(0)
        held.write(f"# {names[0]}\n\nfirst line, saved in place\nsecond line\n")
        held.flush()
        wrote.set()

    writer = threading.Thread(target=editor)
    writer.start()
    try:
        kept = move(vault, old, new)
    finally:
        writer.join(timeout=30)
        held.close()
    assert wrote.is_set()
    assert {"path": names[0], "kept": "merged"} in kept
    text = path.read_text()
    assert "first line, saved in place" in text and "incoming line" in text
    assert all("incoming line" in (vault / rel).read_text() for rel in names)
    assert not (vault / ".git" / HOLD).exists()  # the files set aside are gone once read


def test_no_save_made_during_a_move_is_lost(vault: Path) -> None:
    """A person saves notes over and over (in place and by renaming a temp file over them) while a move
    rewrites every one of them: each note's last save is in the note or in its sibling afterwards."""
    names = [f"notes/n{i:03d}.md" for i in range(150)]
    for rel in names:
        write(vault, rel, f"# {rel}\n\nslot: start\nbody line\n")
    commit_all(vault, "many notes")
    old, new = moved_to(vault, {rel: f"# {rel}\n\nslot: start\nbody line\nincoming line\n" for rel in names})
    last: dict[str, str] = {}
    stop = threading.Event()

    def person() -> None:
        n = 0
        while not stop.is_set():
            rel = names[n % len(names)]
            path = vault / rel
            token = f"save-{n}"
            try:
                text = path.read_text()
            except FileNotFoundError:
                continue
            lines = text.split("\n")
            lines[2] = f"slot: {token}"
            if n % 2:
                with open(path, "r+") as fh:  # in place
                    fh.truncate(0)
                    fh.write("\n".join(lines))
            else:
                tmp = path.with_name(f".{path.name}.tmp")
                tmp.write_text("\n".join(lines))
                os.replace(tmp, path)
            last[rel] = token
            n += 1

    saver = threading.Thread(target=person)
    saver.start()
    try:
        kept = move(vault, old, new)
    finally:
        stop.set()
        saver.join()
    siblings: dict[str, list[Path]] = {}
    for k in kept:
        if "sibling" in k:
            siblings.setdefault(k["path"], []).append(vault / k["sibling"])

    def where(rel: str) -> str:  # the note and every sibling the round left beside it
        return (vault / rel).read_text() + "".join(p.read_text() for p in siblings.get(rel, []))

    for rel, token in last.items():
        assert f"slot: {token}" in where(rel), (rel, token)
    for rel in names:  # and the incoming change reached every note, merged or beside it
        assert "incoming line" in where(rel), rel


def test_a_round_killed_after_the_files_moved_is_finished_before_anything_is_committed(tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    laptop = Machine(make_repo(tmp_path / "laptop", NOTES), tmp_path / "state-laptop")
    if not exchange_available(laptop.vault):
        pytest.skip("this file system cannot swap two names in one step")
    add_remote(GitCli(laptop.vault), str(bare))
    laptop.sync()
    git(tmp_path, "clone", "-q", str(bare), str(tmp_path / "desktop"))
    desktop = Machine(tmp_path / "desktop", tmp_path / "state-desktop")
    write(laptop.vault, "notes/beta.md", "# Beta\n\nfrom the laptop\n")
    write(laptop.vault, "notes/delta.md", "# Delta\n")
    laptop.sync()
    before = rev(desktop.vault)

    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "AGENTMD_"))}
    env.update(HOME=str(tmp_path / "home"), XDG_STATE_HOME=str(tmp_path / "xdg-state"))
    argv = [sys.executable, "-m", "agentmd", "sync", "--vault", str(desktop.vault)]
    killed = subprocess.run(argv, env={**env, "AGENTMD_FAILPOINTS": "sync-tree-written=kill"}, capture_output=True)
    assert killed.returncode == -9, killed.stderr
    assert rev(desktop.vault) == before and (desktop.vault / ".git" / JOURNAL).exists()
    assert desktop.read("notes/beta.md") == "# Beta\n\nfrom the laptop\n"  # the files moved, HEAD did not

    cycle = desktop.committer.commit_cycle()  # the committer finishes the move rather than commit its files
    assert cycle.error is None and cycle.commits == []
    assert rev(desktop.vault) == rev(laptop.vault) and status(desktop.vault) == []
    assert not (desktop.vault / ".git" / JOURNAL).exists()
    done = subprocess.run([*argv, "--json"], env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["outcome"] == "up-to-date"


def test_a_save_found_by_a_round_killed_before_it_was_brought_in_is_brought_in_by_the_finish(vault: Path) -> None:
    # killed the moment the save came out of the path: it is in the move's folder only; the move is finished
    # with the save merged in, and no later sweep of temp files can take it
    text = NOTES["notes/alpha.md"]
    old, new = moved_to(vault, {"notes/alpha.md": text.replace("line one", "line one, from the laptop")})
    write(vault, "notes/alpha.md", text.replace("line three", "line three, saved here"))
    script = (
        "import datetime as dt, sys\n"
        "from pathlib import Path\n"
        "from agentmd.engine.git.runner import GitCli\n"
        "from agentmd.engine.git.tree_move import move_tree\n"
        f"move_tree(GitCli(Path({str(vault)!r})), {old!r}, {new!r}, message='sync: origin', env={{}},\n"
        "          their_host=lambda _p: 'laptop', now=dt.datetime.now(dt.UTC))\n"
        "sys.exit('the fault point did not fire')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "AGENTMD_"))}
    killed = subprocess.run(
        [sys.executable, "-c", script], env={**env, "AGENTMD_FAILPOINTS": "sync-save-found=kill"}, capture_output=True
    )
    assert killed.returncode == -9, killed.stderr
    assert rev(vault) == old and (vault / ".git" / JOURNAL).exists()
    assert "saved here" not in (vault / "notes/alpha.md").read_text()  # the path holds the incoming version ...
    held = [p.read_text() for p in (vault / ".git" / HOLD).iterdir()]
    assert any("saved here" in t for t in held)  # ... and the save waits in the move's folder

    finished = finish_unfinished(GitCli(vault))

    assert finished is not None and rev(vault) == new
    merged = (vault / "notes/alpha.md").read_text()
    assert "line one, from the laptop" in merged and "line three, saved here" in merged
    assert not (vault / ".git" / HOLD).exists() and not (vault / ".git" / JOURNAL).exists()


def test_lines_appended_all_through_a_move_are_every_one_kept(vault: Path) -> None:
    """A writer appends a line to notes over and over (a log kept by a script, `echo >> note`) while a move
    rewrites the top of every one of them: every line appended is in the note or beside it afterwards."""
    names = [f"logs/l{i:03d}.md" for i in range(30)]
    for rel in names:
        write(vault, rel, f"# {rel}\n\nstatus: start\n\nline 0\n")
    commit_all(vault, "many logs")
    old, new = moved_to(vault, {rel: f"# {rel}\n\nstatus: changed on the laptop\n\nline 0\n" for rel in names})
    written: dict[str, list[str]] = {rel: [] for rel in names}
    stop = threading.Event()

    def appender() -> None:
        n = 0
        while not stop.is_set():
            rel = names[n % len(names)]
            token = f"append {n}"
            with open(vault / rel, "a") as fh:  # O_APPEND, as a shell's >> writes
                fh.write(token + "\n")
            written[rel].append(token)
            n += 1
            if n % len(names) == 0:
                time.sleep(0.001)  # a writer that leaves the round some time to run

    writer = threading.Thread(target=appender)
    writer.start()
    try:
        move(vault, old, new)
    finally:
        stop.set()
        writer.join()
    lost = []
    for rel in names:
        folder, stem = (vault / rel).parent, (vault / rel).stem
        where = (vault / rel).read_text() + "".join(p.read_text() for p in folder.glob(f"{stem}.conflict-*.md"))
        lost += [(rel, t) for t in written[rel] if f"{t}\n" not in where]
        assert "changed on the laptop" in where, rel  # the incoming change is there too
    assert lost == [], lost[:5]
    assert sum(len(t) for t in written.values()) > len(names)  # the writer ran through the move
