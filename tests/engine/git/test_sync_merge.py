"""Notes changed on two machines merged as notes (frontmatter key by key, body by lines), captures of one title
on two machines kept as two notes, rescue refs, and files that are not notes named in status. Real git: a
bare remote and two clones, each with its own committer."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from git_helpers import git, make_repo, write
from test_sync import Machine, converged, no_markers
from test_sync_daemon import cli, environment

from agentmd.engine.git.branches import SyncError, add_remote
from agentmd.engine.git.rescue import RESCUE_DAYS, guard_move, keep_rescue, prune_rescues, rescues
from agentmd.engine.git.resolve import resolve_conflict
from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.sync_merge import merge_fields_text
from agentmd.engine.git.sync_status import sync_section
from agentmd.engine.write.capture import Capturer, CaptureRequest
from agentmd.rules import ContractCache

CARD = (
    "---\n"
    "title: 'Pin the toolchain'\n"
    "status: draft\n"
    "importance: 2\n"
    "# the owner's comment stays where it is\n"
    "tags: [tooling, python]\n"
    "source: web\n"
    "---\n"
    "# Pin the toolchain\n\n"
    "first paragraph\n\n"
    "middle paragraph\n\n"
    "last paragraph\n"
)
FILES = {"notes/card.md": CARD, ".obsidian/app.json": '{\n  "theme": "light"\n}\n', "notes/plain.md": "# P\n"}


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Machine, Machine, Path]:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    first = make_repo(tmp_path / "laptop", FILES)
    add_remote(GitCli(first), str(remote))
    a = Machine(first, tmp_path / "state-a")
    assert a.sync()["outcome"] == "pushed"
    git(tmp_path, "clone", "-q", str(remote), str(tmp_path / "desktop"))
    git(tmp_path / "desktop", "config", "user.name", "Desk Owner")
    git(tmp_path / "desktop", "config", "user.email", "desk@example.com")
    return a, Machine(tmp_path / "desktop", tmp_path / "state-b"), remote


def siblings(*machines: Machine) -> list[Path]:
    return [p for m in machines for p in m.vault.rglob("*.conflict-*.md")]


def round_trip(a: Machine, b: Machine, remote: Path) -> dict:
    """a pushes, b merges, a takes the merge: what b's merge round returned."""
    a.sync()
    merged = b.sync()
    a.sync()
    converged(a, b, remote)
    return merged


def test_different_keys_on_neighbouring_lines_merge_without_a_sibling_and_keep_the_formatting(pair) -> None:
    a, b, remote = pair
    write(a.vault, "notes/card.md", CARD.replace("status: draft", "status: active"))
    write(b.vault, "notes/card.md", CARD.replace("importance: 2", "importance: 4"))
    # git's own line merge conflicts on these neighbouring lines
    merged = round_trip(a, b, remote)
    assert merged["outcome"] == "merged" and merged["conflicts"] == []
    expected = CARD.replace("status: draft", "status: active").replace("importance: 2", "importance: 4")
    assert a.read("notes/card.md") == expected and b.read("notes/card.md") == expected
    assert siblings(a, b) == []


def test_the_same_key_changed_to_different_values_keeps_a_sibling(pair) -> None:
    a, b, remote = pair
    write(a.vault, "notes/card.md", CARD.replace("status: draft", "status: active"))
    write(b.vault, "notes/card.md", CARD.replace("status: draft", "status: retired"))
    merged = round_trip(a, b, remote)
    (conflict,) = merged["conflicts"]
    assert conflict["path"] == "notes/card.md" and conflict["sibling"].startswith("notes/card.conflict-")
    assert "status: retired" in a.read("notes/card.md")  # the merging machine's own stays at the path
    sibling = a.read(conflict["sibling"])
    assert "status: conflict" in sibling and "importance: 2" in sibling
    no_markers(a, b)


def test_body_lines_in_different_places_and_frontmatter_keys_merge_together(pair) -> None:
    a, b, remote = pair
    laptop = CARD.replace("status: draft", "status: active").replace("first paragraph", "first, from the laptop")
    desk = (
        CARD.replace("importance: 2", "importance: 5")
        .replace("source: web\n", "source: web\nproject: agentmd\n")
        .replace("last paragraph", "last, from the desk")
    )
    write(a.vault, "notes/card.md", laptop)
    write(b.vault, "notes/card.md", desk)
    assert round_trip(a, b, remote)["conflicts"] == []
    text = a.read("notes/card.md")
    for part in ("status: active", "importance: 5", "source: web\nproject: agentmd\n---", "first, from the laptop",
                 "last, from the desk", "# the owner's comment stays where it is\n"):  # fmt: skip
        assert part in text, part
    assert siblings(a, b) == [] and text == b.read("notes/card.md")


def test_tags_added_on_both_machines_are_united(pair) -> None:
    a, b, remote = pair
    write(a.vault, "notes/card.md", CARD.replace("tags: [tooling, python]", "tags: [tooling, python, uv]"))
    write(b.vault, "notes/card.md", CARD.replace("tags: [tooling, python]", "tags: [tooling, python, pinning, uv]"))
    assert round_trip(a, b, remote)["conflicts"] == []
    # the merging machine's items in its order, then what the other added; one `uv`
    assert "tags: [tooling, python, pinning, uv]\n" in a.read("notes/card.md")
    united = "tags: [tooling, python, pinning, uv]"
    write(a.vault, "notes/card.md", a.read("notes/card.md").replace(united, "tags: [tooling, pinning, uv]"))
    write(
        b.vault, "notes/card.md", b.read("notes/card.md").replace(united, "tags: [tooling, python, pinning, uv, zig]")
    )
    assert round_trip(a, b, remote)["conflicts"] == []
    assert "tags: [tooling, pinning, uv, zig]\n" in b.read("notes/card.md")  # a removal on one side stays removed


def capture_on(m: Machine, title: str, body: str) -> str:
    capturer = Capturer(m.vault, m.state, ContractCache(m.vault), None)
    return capturer.capture(CaptureRequest(title=title, body=body)).path


def test_one_title_captured_on_two_machines_gives_two_notes_and_no_conflict(pair) -> None:
    a, b, remote = pair
    path = capture_on(a, "Release checklist", "tag before the upload (laptop)")
    assert capture_on(b, "Release checklist", "run the tests first (desk)") == path
    merged = round_trip(a, b, remote)
    assert merged["conflicts"] == []
    (renamed,) = merged["renamed"]
    other = path[: -len(".md")] + "-2.md"
    assert renamed == {"path": path, "renamed": other}
    for m in (a, b):
        assert "run the tests first (desk)" in m.read(path)  # the merging machine's capture keeps the name
        assert "tag before the upload (laptop)" in m.read(other)
        assert "status: conflict" not in m.read(other)
    assert siblings(a, b) == []
    assert f"now {other}" in git(a.vault, "log", "-1", "--format=%B", "HEAD^{/sync: merge}").stdout


def test_one_note_a_person_made_on_two_machines_stays_a_conflict(pair) -> None:
    a, b, remote = pair
    write(a.vault, "daily/2026-12-05.md", "---\ndate: 2026-12-05\n---\n# Thursday\n\nlaptop plans\n")
    write(b.vault, "daily/2026-12-05.md", "---\ndate: 2026-12-05\n---\n# Thursday\n\ndesk plans\n")
    merged = round_trip(a, b, remote)
    (conflict,) = merged["conflicts"]
    assert merged["renamed"] == [] and conflict["sibling"].startswith("daily/2026-12-05.conflict-")
    assert "laptop plans" in b.read(conflict["sibling"])


def test_the_same_note_added_on_two_machines_with_the_same_text_is_no_conflict(pair) -> None:
    a, b, remote = pair
    for m in (a, b):
        write(m.vault, "notes/same.md", "# Same\n\nwritten alike on both\n")
        write(m.vault, "notes/" + ("laptop.md" if m is a else "desk.md"), "# own\n")
    merged = round_trip(a, b, remote)
    assert merged["outcome"] == "merged" and merged["conflicts"] == [] and merged["renamed"] == []
    assert siblings(a, b) == [] and a.read("notes/same.md") == "# Same\n\nwritten alike on both\n"


def test_a_file_that_is_not_a_note_keeps_ours_and_status_tells_how_to_get_theirs(pair) -> None:
    a, b, remote = pair
    write(a.vault, ".obsidian/app.json", '{\n  "theme": "dark"\n}\n')
    write(b.vault, ".obsidian/app.json", '{\n  "theme": "solarized"\n}\n')
    merged = round_trip(a, b, remote)
    (kept,) = merged["conflicts"]
    assert kept["path"] == ".obsidian/app.json" and kept["kept"] == "ours"
    assert "solarized" in a.read(".obsidian/app.json")
    now = dt.datetime.now(dt.UTC)
    section = sync_section(b.vault, b.state, now)
    (line,) = [y for y in section["yellow"] if y.startswith("kept-ours")]
    command = f"git show {kept['theirs'][:12]}:.obsidian/app.json"
    assert command in line
    assert '"dark"' in git(b.vault, *command.split()[1:]).stdout  # what the line tells gives theirs back
    assert not [y for y in sync_section(b.vault, b.state, now + dt.timedelta(days=8))["yellow"] if "kept-ours" in y]
    # the laptop, whose version the desktop's merge set aside, is told too, with the command that gives it back
    (here,) = [y for y in sync_section(a.vault, a.state, now)["yellow"] if y.startswith("set-aside-here")]
    mine = here.split("`git show ")[1].split("`")[0]
    assert "write the output of its `git show` over it" in here
    assert mine.endswith(":.obsidian/app.json") and '"dark"' in git(a.vault, "show", mine).stdout
    assert not [y for y in sync_section(a.vault, a.state, now)["yellow"] if y.startswith("kept-ours")]
    # each line ends once its person has acted: theirs written over the file, the set-aside version written back
    write(b.vault, ".obsidian/app.json", git(b.vault, *command.split()[1:]).stdout)
    assert not [y for y in sync_section(b.vault, b.state, now)["yellow"] if y.startswith("kept-ours")]
    write(a.vault, ".obsidian/app.json", git(a.vault, "show", mine).stdout)
    assert not [y for y in sync_section(a.vault, a.state, now)["yellow"] if y.startswith("set-aside-here")]


def test_a_deletion_undone_by_an_edit_elsewhere_is_told_where_it_was_made(pair) -> None:
    a, b, remote = pair
    b.sync()
    (a.vault / "notes/plain.md").unlink()
    a.sync()  # the deletion reaches the remote
    write(b.vault, "notes/plain.md", "# P\n\nedited on the desktop\n")
    merged = b.sync()  # the edit is kept over the deletion
    assert {"path": "notes/plain.md", "kept": "the edit"}.items() <= merged["conflicts"][0].items()
    a.sync()
    converged(a, b, remote)
    assert "edited on the desktop" in a.read("notes/plain.md")
    (here,) = [y for y in sync_section(a.vault, a.state, dt.datetime.now(dt.UTC))["yellow"] if "set-aside" in y]
    assert "notes/plain.md (deleted here, edited on the other machine: the edit was kept; delete it again)" in here
    assert "git show" not in here  # a deletion has no version to write back
    (a.vault / "notes/plain.md").write_text("# P\n\nedited on the desktop\nand read here\n")
    assert not [y for y in sync_section(a.vault, a.state, dt.datetime.now(dt.UTC))["yellow"] if "set-aside" in y]
    assert not [y for y in sync_section(b.vault, b.state, dt.datetime.now(dt.UTC))["yellow"] if "set-aside" in y]


def test_a_move_to_a_commit_that_does_not_contain_head_keeps_a_rescue_ref(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "vault", {"notes/a.md": "# A\n"})
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    write(repo, "notes/a.md", "# A, later\n")
    git(repo, "commit", "-qam", "later")
    later = git(repo, "rev-parse", "HEAD").stdout.strip()
    git(repo, "checkout", "-q", "--orphan", "elsewhere")
    git(repo, "commit", "-q", "-m", "unrelated")
    unrelated = git(repo, "rev-parse", "HEAD").stdout.strip()
    vault = GitCli(repo)
    now = dt.datetime(2026, 12, 5, 10, 15, tzinfo=dt.UTC)
    assert guard_move(vault, head, later, "laptop", now) is None  # a fast-forward: nothing to keep
    assert rescues(vault) == []
    ref = guard_move(vault, later, unrelated, "laptop", now)
    assert ref == "refs/agentmd/rescue/laptop/20261205T101500Z"
    assert git(repo, "rev-parse", ref).stdout.strip() == later
    again = guard_move(vault, later, unrelated, "laptop", now)  # the same second: a name of its own
    assert again == ref + "-2"
    old = keep_rescue(vault, head, "laptop", now - dt.timedelta(days=RESCUE_DAYS + 1))
    assert {r for r, _ in rescues(vault)} == {ref, again, old}
    assert prune_rescues(vault, now) == [old]
    assert {r for r, _ in rescues(vault)} == {ref, again}


def test_resolve_keeps_the_tip_before_the_choice_as_a_rescue_ref(pair) -> None:
    a, b, remote = pair
    write(a.vault, "notes/plain.md", "# P\n\nlaptop\n")
    write(b.vault, "notes/plain.md", "# P\n\ndesk\n")
    (conflict,) = round_trip(a, b, remote)["conflicts"]
    head = git(b.vault, "rev-parse", "HEAD").stdout.strip()
    assert rescues(GitCli(b.vault)) == []
    resolve_conflict(b.vault, b.state, conflict["sibling"], "mine")
    assert [oid for _ref, oid in rescues(GitCli(b.vault))] == [head]
    assert not (b.vault / conflict["sibling"]).exists()
    shown = git(b.vault, "show", f"{rescues(GitCli(b.vault))[0][0]}:{conflict['sibling']}").stdout
    assert "laptop" in shown


def test_keeping_one_version_of_a_conflict_keeps_what_only_the_other_changed(pair) -> None:
    # the same key set two ways is the conflict; the desk also added a line and the laptop reworded another.
    # The desk merged, so its version is at the path and the laptop's is the sibling (both machines have one
    # name here, so "theirs" names the sibling): taking the sibling's value keeps its rewording, and the desk's
    # added line too
    a, b, remote = pair
    laptop = CARD.replace("status: draft", "status: active").replace("first paragraph", "first, reworded on the laptop")
    write(a.vault, "notes/card.md", laptop)
    write(b.vault, "notes/card.md", CARD.replace("status: draft", "status: retired") + "\nadded on the desk\n")
    (conflict,) = round_trip(a, b, remote)["conflicts"]
    assert "status: retired" in a.read("notes/card.md")  # the desk merged: its version at the path

    note, _sibling, changed = resolve_conflict(a.vault, a.state, conflict["sibling"], "theirs")

    text = a.read(note)
    assert "status: active" in text and "status: retired" not in text and "status: conflict" not in text
    assert "first, reworded on the laptop" in text and "added on the desk" in text
    assert changed == [note, conflict["sibling"]] and not (a.vault / conflict["sibling"]).exists()
    no_markers(a)


def test_a_later_merge_that_brings_the_sibling_in_does_not_move_the_versions_base(pair) -> None:
    # the desk merged (the laptop's version set aside as the sibling); the laptop then committed something else
    # before taking that merge, so its own merge brings the sibling in from one parent: with `git log -m` that
    # merge "adds" the sibling too, but the versions parted before the first merge, and "theirs" must win
    a, b, _remote = pair
    write(a.vault, "notes/plain.md", "# P\n\nlaptop\n")
    write(b.vault, "notes/plain.md", "# P\n\ndesk\n")
    a.sync()
    (conflict,) = b.sync()["conflicts"]
    write(a.vault, "notes/card.md", CARD + "\nan unrelated line on the laptop\n")
    assert a.sync()["outcome"] == "merged"  # the laptop's merge: one parent without the sibling
    assert a.read("notes/plain.md") == "# P\n\ndesk\n"
    note, _sibling, _changed = resolve_conflict(a.vault, a.state, conflict["sibling"], "theirs")
    assert a.read(note) == "# P\n\nlaptop\n" and not (a.vault / conflict["sibling"]).exists()


def test_taking_the_siblings_text_into_a_note_renamed_since_is_refused(pair) -> None:
    a, b, remote = pair
    write(a.vault, "notes/plain.md", "# P\n\nlaptop\n")
    write(b.vault, "notes/plain.md", "# P\n\ndesk\n")
    (conflict,) = round_trip(a, b, remote)["conflicts"]
    (b.vault / "notes/plain.md").rename(b.vault / "notes/renamed.md")
    with pytest.raises(SyncError, match="no longer there"):
        resolve_conflict(b.vault, b.state, conflict["sibling"], "theirs")
    assert not (b.vault / "notes/plain.md").exists() and (b.vault / conflict["sibling"]).exists()


# -- the frontmatter rules on their own -------------------------------------------------------------------

BASE = "---\ntitle: Alpha\nstatus: draft\ntags:\n  - one\n# owner's note on sources\nsource: web\n---\nbody\n"


def test_theirs_added_deleted_and_rewritten_keys_are_copied_as_theirs_wrote_them() -> None:
    ours = BASE.replace("status: draft", "status: active")
    summary = "title: Alpha\nsummary: >-\n  folded\n  text\n"
    theirs = BASE.replace("title: Alpha\n", summary).replace("source: web\n", "")
    assert merge_fields_text(BASE, ours, theirs) == (
        "---\ntitle: Alpha\nsummary: >-\n  folded\n  text\nstatus: active\ntags:\n  - one\n"
        "# owner's note on sources\n---\nbody\n"
    )


def test_a_block_list_changed_on_both_sides_is_rewritten_and_nothing_else_is() -> None:
    ours = BASE.replace("  - one\n", "  - one\n  - two\n").replace("title: Alpha", "title: 'Alpha'")
    theirs = BASE.replace("  - one\n", "  - one\n  - three\n")
    assert merge_fields_text(BASE, ours, theirs) == ours.replace("  - two\n", "  - two\n  - three\n")


def test_crlf_notes_keep_ours_newlines_and_unmergeable_blocks_are_refused() -> None:
    base = BASE.replace("\n", "\r\n")
    ours = base.replace("status: draft", "status: active")
    theirs = BASE.replace("source: web", "source: book")  # theirs saved with LF
    assert merge_fields_text(base, ours, theirs) == ours.replace("source: web", "source: book")
    twice = BASE.replace("source: web\n", "source: web\nsource: book\n")
    assert merge_fields_text(BASE, twice, BASE.replace("status: draft", "status: x")) is None
    assert merge_fields_text(BASE, BASE.replace("draft", "a"), BASE.replace("draft", "b")) is None
    # `1` and `true` are different values to YAML readers, though equal in Python
    assert merge_fields_text("---\nk: 1\n---\n", "---\nk: true\n---\n", "---\nk: 2\n---\n") is None


def test_the_sync_command_and_status_name_the_renamed_capture_and_the_file_kept_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    laptop = make_repo(tmp_path / "laptop", FILES)
    git(laptop, "remote", "add", "origin", str(remote))
    git(laptop, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), str(tmp_path / "desktop"))
    desktop = tmp_path / "desktop"
    git(desktop, "config", "user.name", "Desk")
    git(desktop, "config", "user.email", "desk@example.com")
    a, b = environment(tmp_path / "a"), environment(tmp_path / "b")
    paths = []
    for env, vault, theme in ((a, laptop, "dark"), (b, desktop, "solarized")):
        code, out, err = cli(env, monkeypatch, "capture", "--vault", str(vault), "--title", "Deploy steps",
                             "--body", f"as done on the {theme} machine", "--json")  # fmt: skip
        assert code == 0, err
        paths.append(json.loads(out)["path"])
        write(vault, ".obsidian/app.json", f'{{\n  "theme": "{theme}"\n}}\n')
    assert paths[0] == paths[1]
    assert cli(a, monkeypatch, "sync", "--vault", str(laptop))[0] == 0
    code, out, err = cli(b, monkeypatch, "sync", "--vault", str(desktop))
    assert code == 0, err
    assert f"captured on both machines: {paths[0]} kept; the other machine's capture is {paths[0][:-3]}-2.md" in out
    assert "conflict: .obsidian/app.json: ours kept; theirs: `git show " in out
    code, out, _ = cli(b, monkeypatch, "status", "--vault", str(desktop), "--json")
    status = json.loads(out)
    (kept,) = status["sync"]["kept_ours"]
    assert kept["path"] == ".obsidian/app.json"
    assert any(y.startswith("kept-ours: 1 file(s)") and "git show" in y for y in status["yellow"])
