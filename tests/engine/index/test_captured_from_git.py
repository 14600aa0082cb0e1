"""A note without a frontmatter date is dated by the commit that added it (following renames), with
`captured_source: git`; mtime stays the fallback; a frontmatter date always wins. Real git repositories, a real
clone (whose files all carry the clone's mtime), a real index and catalog."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from daemon_helpers import GIT_ENV

from agentmd.engine.index.git_dates import added_dates
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store


def git(repo: Path, *args: str, when: str | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    if when:
        env |= {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


def write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def history(tmp_path: Path) -> Path:
    """A vault with a history: notes added in 2020 and 2021, one renamed and one edited in 2022."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    write(origin, "old.md", "# Old\nwritten long ago\n")
    write(origin, "moved.md", "# Moved\nlater renamed\n")
    write(origin, "dated.md", "---\ncaptured: 2019-05-05\n---\n# Dated\nits own date\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "first", when="2020-03-01T10:00:00Z")
    write(origin, "later.md", "# Later\nadded the next year\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "second", when="2021-07-15T12:00:00Z")
    (origin / "archive").mkdir()
    git(origin, "mv", "moved.md", "archive/moved-note.md")
    write(origin, "old.md", "# Old\nwritten long ago, edited since\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "rename and edit", when="2022-01-20T08:00:00Z")
    return origin


def test_added_dates_follow_renames_in_one_pass(tmp_path: Path) -> None:
    origin = history(tmp_path)
    dates = added_dates(origin, ["old.md", "archive/moved-note.md", "later.md", "dated.md", "nowhere.md"])
    assert dates == {
        "old.md": "2020-03-01T10:00:00Z",
        "archive/moved-note.md": "2020-03-01T10:00:00Z",
        "later.md": "2021-07-15T12:00:00Z",
        "dated.md": "2020-03-01T10:00:00Z",
    }
    assert added_dates(tmp_path / "not-a-repo-at-all", ["old.md"]) == {}


def test_a_cloned_vault_gets_its_dates_from_git_and_mtime_only_for_what_git_does_not_know(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(history(tmp_path)), str(clone)], check=True)
    write(clone, "untracked.md", "# Untracked\nnot committed\n")
    with Store(tmp_path / "cache") as store:
        reconcile(clone, store)
        rows = {p: store.catalog.get(p) for p in ("old.md", "archive/moved-note.md", "later.md", "dated.md")}
        untracked = store.catalog.get("untracked.md")
    got = {p: (r.captured[:10], r.captured_source) for p, r in rows.items() if r is not None}
    assert got == {
        "old.md": ("2020-03-01", "git"),
        "archive/moved-note.md": ("2020-03-01", "git"),
        "later.md": ("2021-07-15", "git"),
        "dated.md": ("2019-05-05", "captured"),
    }
    assert untracked is not None and untracked.captured_source == "mtime"


def test_a_git_date_stays_when_the_note_is_edited(tmp_path: Path) -> None:
    origin = history(tmp_path)
    with Store(tmp_path / "cache") as store:
        reconcile(origin, store)
        write(origin, "later.md", "# Later\nedited today\n")
        reconcile(origin, store)
        row = store.catalog.get("later.md")
    assert row is not None and (row.captured[:10], row.captured_source) == ("2021-07-15", "git")


def test_a_vault_that_is_no_git_repository_keeps_mtime(tmp_path: Path) -> None:
    vault = tmp_path / "plain"
    write(vault, "a.md", "# A\nno history\n")
    with Store(tmp_path / "cache") as store:
        reconcile(vault, store)
        row = store.catalog.get("a.md")
    assert row is not None and row.captured_source == "mtime"


def test_a_folder_of_old_notes_put_in_git_today_keeps_its_files_times(tmp_path: Path) -> None:
    """`agentmd init-git` on an existing folder commits every note today: each note's file time, earlier than
    that commit, dates it; a note written after its commit (a clone's files) takes the commit's date."""
    vault = tmp_path / "vault"
    write(vault, "shed.md", "Met Priya about the shed roof.\n")
    write(vault, "new.md", "# New\nwritten today\n")
    march = 1_678_795_200  # 2023-03-14T12:00:00Z
    os.utime(vault / "shed.md", (march, march))
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "first commit", when="2026-12-05T09:00:00Z")
    later = 1_800_000_000  # 2027-01-15, after that commit: as if written (or cloned) since
    os.utime(vault / "new.md", (later, later))
    with Store(tmp_path / "cache") as store:
        reconcile(vault, store)
        shed, new = store.catalog.get("shed.md"), store.catalog.get("new.md")
        assert shed is not None and new is not None
        assert (shed.captured, shed.captured_source) == ("2023-03-14T12:00:00Z", "mtime")
        assert (new.captured, new.captured_source) == ("2026-12-05T09:00:00Z", "git")


def test_init_git_keeps_old_notes_ages_in_the_history_a_clone_and_a_rebuild_read(tmp_path: Path) -> None:
    """`agentmd init-git` on a folder of old notes commits them a day at a time, dated as their files: a clone
    (whose files are all new) and an index rebuilt from nothing date them as the first machine did."""
    from agentmd.engine.git.repo_init import init_git

    vault = tmp_path / "vault"
    write(vault, "kafka.md", "# Kafka\nnotes from March\n")
    write(vault, "kafka-2.md", "# Kafka two\nmore from March\n")
    write(vault, "old.md", "# Old\nfrom 2021\n")
    write(vault, "today.md", "# Today\nwritten now\n")
    for rel, stamp in (("kafka.md", 1678881600), ("kafka-2.md", 1678885200), ("old.md", 1625227200)):
        os.utime(vault / rel, (stamp, stamp))  # 2023-03-15 12:00 and 13:00, 2021-07-02 12:00 (UTC)
    said = init_git(vault)
    assert "3 older notes first, in 2 commits" in said
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(vault), str(clone)], check=True, capture_output=True)
    for where, cache in ((clone, tmp_path / "clone-cache"), (vault, tmp_path / "rebuilt")):
        with Store(cache) as store:
            reconcile(where, store)
            dated = {
                p: (store.catalog.get(p).captured, store.catalog.get(p).captured_source) for p in ("kafka.md", "old.md")
            }
        assert dated["kafka.md"][0].startswith("2023-03-15") and dated["old.md"][0].startswith("2021-07-02"), dated


def test_a_daily_note_put_in_git_today_is_dated_by_the_day_its_name_gives(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "daily/2021-03-04.md", "# Thursday\nshipped the importer\n")
    write(vault, "daily/notes.md", "# Notes\nundated\n")
    git(vault, "init", "-q")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "today")
    with Store(tmp_path / "cache") as store:
        reconcile(vault, store)
        daily, plain = store.catalog.get("daily/2021-03-04.md"), store.catalog.get("daily/notes.md")
    assert daily is not None and (daily.captured[:10], daily.captured_source) == ("2021-03-04", "title")
    assert plain is not None and plain.captured_source in ("git", "mtime") and plain.captured[:4] != "2021"
