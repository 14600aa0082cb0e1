"""Undo as a person uses it: `agentmd undo`, `revert`, `revert --origin --since` and `restore` on real git vaults,
with and without a real daemon. Each undo gives back the vault's bytes as they were before the change, history
only grows, and a later edit of the same lines ends up beside the note (never as conflict markers)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from curate_helpers import dirty, head, note, snapshot
from daemon_helpers import GIT_ENV, client_of, git, make_repo, origins, running_daemon, wait_until
from enrich_helpers import Model, answer, config

from agentmd.engine.client import DaemonHTTPError
from agentmd.engine.git.committer import committer_for
from agentmd.engine.settings import resolve
from agentmd.engine.write.capture import Capturer, CaptureRequest
from agentmd.rules import ContractCache

pytestmark = pytest.mark.slow

NOTE = "---\ntitle: Deploys\nstatus: active\n---\n\nline one\nline two\nline three\n"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/deploys.md": NOTE})


def args(vault: Path) -> list[str]:
    return ["--vault", str(vault), "--index", str(vault.parent / "idx")]


def commit_edits(vault: Path) -> str:
    """Commit what is dirty as the daemon's committer does (origin local-edit for a hand edit); the new HEAD."""
    settings = resolve(vault=str(vault))
    result = committer_for(settings, ContractCache(settings.vault, settings.contract_path)).commit_cycle()
    assert result.error is None and result.commits, result
    return head(vault)


def trailer(vault: Path, key: str, rev: str = "HEAD") -> list[str]:
    return git(vault, "log", "-1", f"--format=%(trailers:key={key},valueonly)", rev).split()


def grew_from(vault: Path, old: str, commits: int = 1) -> bool:
    """History only grew: `old` is an ancestor of HEAD, `commits` commits behind it."""
    ancestor = git(vault, "merge-base", "--is-ancestor", old, "HEAD") == ""
    return ancestor and git(vault, "rev-list", "--count", f"{old}..HEAD").strip() == str(commits)


def no_markers(vault: Path) -> bool:
    return not any(b"<<<<<<<" in data or b">>>>>>>" in data for data in snapshot(vault).values())


def test_a_capture_and_a_hand_edit_are_undone_one_command_each(cli, vault: Path) -> None:
    before_capture = snapshot(vault)
    r = cli("capture", *args(vault), "--title", "Use Postgres", "--body", "We use Postgres.", "--json")
    assert r.code == 0, r.err
    captured = r.json()["path"]
    before_edit = snapshot(vault)
    (vault / "notes/deploys.md").write_text(NOTE.replace("line two", "line two, edited by hand"))
    edit = commit_edits(vault)
    assert origins(vault)[:2] == ["local-edit", "capture"]

    plan = cli("undo", *args(vault))  # the plan: what it takes back and the lines it changes; nothing written
    assert plan.code == 0, plan.err
    assert f"{edit[:10]}" in plan.out and "M notes/deploys.md (+1 -1)" in plan.out and "dry run" in plan.out
    assert head(vault) == edit and dirty(vault) == ""

    done = cli("undo", *args(vault), "--yes", "--json")
    assert done.code == 0, done.err
    assert done.json()["applied_by"] == "local" and done.json()["commit"] == head(vault)
    assert snapshot(vault) == before_edit and grew_from(vault, edit)
    assert trailer(vault, "origin") == ["revert"] and trailer(vault, "reverts") == [edit]
    assert git(vault, "log", "-1", "--format=%s").startswith(f"revert: {edit[:10]} (local-edit: 1 file")

    undo_of_edit = head(vault)
    second = cli("undo", *args(vault), "--yes")  # the change before, never the undo just made
    assert second.code == 0, second.err
    assert snapshot(vault) == before_capture and not (vault / captured).exists()
    assert grew_from(vault, edit, 2) and dirty(vault) == ""
    nothing = cli("undo", *args(vault), "--yes")
    assert nothing.code == 1 and "nothing to undo" in nothing.err and grew_from(vault, edit, 2)

    log = cli("log", *args(vault)).out
    assert f"undone by {undo_of_edit[:10]}" in log and f"undo: agentmd revert {head(vault)[:10]}" in log
    changes = {c["sha"]: c for cs in cli("log", *args(vault), "--json").json()["origins"].values() for c in cs}
    assert changes[edit]["undone_by"] == undo_of_edit
    assert changes[head(vault)]["undo"] == f"agentmd revert {head(vault)[:10]}"

    redo = cli("revert", *args(vault), undo_of_edit, "--yes")  # an undo is taken back by reverting its commit
    assert redo.code == 0, redo.err
    assert (vault / "notes/deploys.md").read_text() == NOTE.replace("line two", "line two, edited by hand")


def test_undo_passes_over_the_daemons_self_probe(cli, vault: Path) -> None:
    """The daemon's self-probe commits a note of its own on this machine: it is not the person's last change."""
    from agentmd.engine.settings import host_name

    (vault / "notes/deploys.md").write_text(NOTE.replace("line two", "line two, edited by hand"))
    edit = commit_edits(vault)
    (vault / "probe.md").write_text("---\nprobe: self-probe\n---\nSynthetic.\n")
    git(vault, "add", "probe.md")
    git(vault, "commit", "-q", "-m", f"self-probe: 1 file\n\norigin: self-probe\nhost: {host_name()}\n")
    plan = cli("undo", *args(vault))
    assert plan.code == 0, plan.err
    assert edit[:10] in plan.out and "notes/deploys.md" in plan.out and "probe.md" not in plan.out


def test_an_undo_of_several_files_says_how_to_take_back_each_one(cli, vault: Path) -> None:
    """Edits saved together commit together, so the last change may hold several notes: the plan names each
    with the command that takes it back alone, and that command does."""
    (vault / "notes/deploys.md").write_text(NOTE.replace("line two", "line two, edited"))
    (vault / "notes/n0.md").write_text("# N0\n")
    edit = commit_edits(vault)
    plan = cli("undo", *args(vault))
    assert plan.code == 0, plan.err
    lines = plan.out.splitlines()
    at = lines.index("that change holds 2 files, committed together; to take back one of them alone:")
    assert lines[at + 1 : at + 3] == [
        f"  `agentmd restore notes/deploys.md --to {edit[:10]}~1`",
        "  `agentmd retire notes/n0.md` (a note it added)",
    ]
    done = cli(*lines[at + 1].split("`")[1].split()[1:], *args(vault), "--yes")
    assert done.code == 0, done.err
    assert (vault / "notes/deploys.md").read_text() == NOTE and (vault / "notes/n0.md").exists()


def test_an_undo_of_captures_committed_together_says_so_and_names_each(cli, vault: Path) -> None:
    """Two captures a moment apart commit together: the plan says the change holds two captures and names
    both, the newer as well as the older, each with the command that takes it back alone."""
    settings = resolve(vault=str(vault), index=str(vault.parent / "idx"))
    contracts = ContractCache(settings.vault, settings.contract_path)
    committer = committer_for(settings, contracts)
    capturer = Capturer(settings.vault, settings.state_dir, contracts, None, before_write=committer.note_origin)
    first = capturer.capture(CaptureRequest(title="Agent one fact", body="A fact from agent one.")).path
    second = capturer.capture(CaptureRequest(title="Agent two fact", body="A fact from agent two.")).path
    cycle = committer.commit_cycle()
    assert cycle.error is None and [(c.origin, len(c.paths)) for c in cycle.commits] == [("capture", 2)]
    plan = cli("undo", *args(vault))
    assert plan.code == 0, plan.err
    lines = plan.out.splitlines()
    at = lines.index("that change holds 2 captures, committed together; to take back one of them alone:")
    assert sorted(lines[at + 1 : at + 3]) == sorted(f"  `agentmd retire {p}`" for p in (first, second))
    done = cli("retire", second, *args(vault), "--yes")  # the newer one alone
    assert done.code == 0, done.err
    sha = cycle.commits[0].sha
    assert (vault / first).read_text() == git(vault, "show", f"{sha}:{first}")
    assert not (vault / second).exists() or (vault / second).read_text() != git(vault, "show", f"{sha}:{second}")


def test_undo_n_takes_back_the_last_changes_in_one_commit(cli, vault: Path) -> None:
    start = snapshot(vault)
    for i in range(3):
        (vault / f"notes/n{i}.md").write_text(f"# N{i}\n")
        commit_edits(vault)
    before = head(vault)
    r = cli("undo", *args(vault), "-n", "3", "--yes", "--json")
    assert r.code == 0, r.err
    assert len(r.json()["targets"]) == 3 and len(trailer(vault, "reverts")) == 3
    assert snapshot(vault) == start and grew_from(vault, before)


def test_a_nights_enrichment_is_reverted_by_origin_since_a_time(cli, tmp_path: Path, monkeypatch) -> None:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    body = "Deploys go through GitHub Actions.\nCI runs on every push."
    note(root, "memory/deploy.md", body, title="Deploy pipeline", status="unfiled", captured="2026-01-02T10:00:00Z")
    note(root, "memory/older.md", "An older enrichment.", status="unfiled", captured="2026-01-01T10:00:00Z")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    # an enrichment of three days ago, which `--since 1d` leaves alone
    note(root, "memory/older.md", "An older enrichment.", status="active", captured="2026-01-01T10:00:00Z")
    old_env = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
    import subprocess

    subprocess.run(["git", "-C", str(root), "commit", "-qam", "enrich: 1 file\n\norigin: enrich\nhost: night\n"],
                   check=True, env=old_env)  # fmt: skip
    Model.installed(tmp_path, monkeypatch).rules({"match": "", "answer": answer()})
    before_night = snapshot(root)
    before = head(root)
    r = cli("enrich", *args(root), "--config", str(config(tmp_path)), "--json")
    assert r.code == 0, r.err
    night = git(root, "rev-list", f"{before}..HEAD").split()
    assert night and origins(root)[: len(night)] == ["enrich"] * len(night)
    assert snapshot(root) != before_night
    tip = head(root)

    plan = cli("revert", *args(root), "--origin", "enrich", "--since", "1d", "--json").json()
    assert [t["sha"] for t in plan["targets"]] == night and plan["commit"] is None and head(root) == tip
    r = cli("revert", *args(root), "--origin", "enrich", "--since", "1d", "--yes")
    assert r.code == 0, r.err
    assert snapshot(root) == before_night and grew_from(root, tip)
    assert trailer(root, "origin") == ["revert"] and trailer(root, "reverts") == night
    again = cli("revert", *args(root), "--origin", "enrich", "--since", "1d")
    assert again.code == 1 and "no commit of origin enrich" in again.err


def test_a_groom_apply_is_undone_byte_for_byte(cli, tmp_path: Path) -> None:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    old = "2025-01-02T10:00:00+00:00"
    note(root, "memory/a.md", "The deploy runs from CI on every tag, after staging.", captured=old)
    note(root, "memory/b.md", "The deploy runs from CI on every tag,   after staging.", captured="2025-02-01")
    note(root, "memory/todo.md", "- [ ] write the doc\n- [x] fix the build\n- [ ] ship", captured=old)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    plan = tmp_path / "plan.json"
    assert cli("groom", *args(root), "--propose", "--out", str(plan)).code == 0
    before = snapshot(root)
    assert cli("groom", *args(root), "--apply", str(plan), "--yes").code == 0
    assert origins(root)[0] == "groom" and snapshot(root) != before
    tip = head(root)
    r = cli("undo", *args(root), "--yes")
    assert r.code == 0, r.err
    assert snapshot(root) == before and grew_from(root, tip) and dirty(root) == ""


def dated_commit(vault: Path, message: str, when: str) -> str:
    import subprocess

    env = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    subprocess.run(["git", "-C", str(vault), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(vault), "commit", "-qm", message], check=True, env=env)
    return head(vault)


def test_restore_brings_back_an_older_version_and_a_deleted_note(cli, vault: Path) -> None:
    path = vault / "notes/deploys.md"
    path.write_text(NOTE + "version one\n")
    first = dated_commit(vault, "one", "2025-01-01T12:00:00Z")
    one = path.read_bytes()
    path.write_text(NOTE + "version two\n")
    dated_commit(vault, "two", "2025-02-01T12:00:00Z")

    plan = cli("restore", *args(vault), "notes/deploys.md", "--to", "2025-01-15")
    assert plan.code == 0 and f"as it was at {first[:10]}" in plan.out and "dry run" in plan.out
    assert path.read_text().endswith("version two\n")
    tip = head(vault)
    r = cli("restore", *args(vault), "notes/deploys.md", "--to", "2025-01-15", "--yes")
    assert r.code == 0, r.err
    assert path.read_bytes() == one and grew_from(vault, tip)
    assert trailer(vault, "origin") == ["revert"] and trailer(vault, "restores") == [first]

    path.unlink()
    gone = commit_edits(vault)
    r = cli("restore", *args(vault), str(path), "--to", first[:8], "--yes")  # a path inside the vault works too
    assert r.code == 0, r.err
    assert path.read_bytes() == one and grew_from(vault, gone) and dirty(vault) == ""
    same = cli("restore", *args(vault), "notes/deploys.md", "--to", first, "--yes", "--json")
    assert (
        same.code == 0
        and same.json()["commit"] is None
        and "already holds" in cli("restore", *args(vault), "notes/deploys.md", "--to", first).out
    )
    missing = cli("restore", *args(vault), "notes/never.md", "--to", first)
    assert missing.code == 1 and "was not a file" in missing.err
    spaced = cli("restore", *args(vault), "notes/never seen.md", "--to", first)
    assert "`agentmd log 'notes/never seen.md'`" in spaced.err  # a hint that pastes back into a shell


def test_restore_follows_the_notes_renames_as_log_does(cli, vault: Path) -> None:
    path = vault / "notes/deploys.md"
    path.write_text(NOTE + "version one\n")
    first = dated_commit(vault, "one", "2025-01-01T12:00:00Z")
    one = path.read_bytes()
    (vault / "notes/learned").mkdir()
    git(vault, "mv", "notes/deploys.md", "notes/learned/Deploy checklist.md")
    dated_commit(vault, "moved", "2025-02-01T12:00:00Z")
    moved = vault / "notes/learned/Deploy checklist.md"
    moved.write_text(NOTE + "version two\n")
    dated_commit(vault, "two", "2025-03-01T12:00:00Z")
    r = cli("restore", *args(vault), "notes/learned/Deploy checklist.md", "--to", first[:10], "--yes")
    assert r.code == 0, r.err
    assert moved.read_bytes() == one and not path.exists()
    assert trailer(vault, "restores") == [first]


def test_a_later_edit_of_the_same_lines_becomes_a_sibling_in_the_queue(cli, vault: Path) -> None:
    path = vault / "notes/deploys.md"
    path.write_text(NOTE.replace("line two", "line two, first edit"))
    first = commit_edits(vault)
    later = NOTE.replace("line two", "line two, a later edit")
    path.write_text(later)
    second = commit_edits(vault)

    r = cli("revert", *args(vault), first, "--yes", "--json")
    assert r.code == 0, r.err
    (conflict,) = r.json()["conflicts"]
    sibling = conflict["sibling"]
    assert conflict["path"] == "notes/deploys.md" and sibling.startswith("notes/deploys.conflict-undo-")
    assert path.read_text() == later  # the note keeps its text
    kept = (vault / sibling).read_text()
    assert "status: conflict" in kept and 'conflict_of: "[[deploys]]"' in kept and "line two\n" in kept
    assert no_markers(vault) and grew_from(vault, second) and dirty(vault) == ""
    assert cli("conflicts", *args(vault)).out.strip() == sibling
    queue = cli("queue", *args(vault), "--json").json()["items"]
    assert [(i["reason"], i["origin"]) for i in queue if i["path"] == sibling] == [("conflict", "revert")]

    resolved = cli("resolve", *args(vault), sibling, "--keep", "theirs")  # the undone version wins
    assert resolved.code == 0, resolved.err
    assert "now holds the version the undo would have written" in resolved.out
    assert path.read_text().endswith("line one\nline two\nline three\n") and not (vault / sibling).exists()
    assert cli("conflicts", *args(vault)).out.strip() == "no conflicts left by a sync"


def test_a_later_edit_of_another_key_is_kept_and_the_undo_still_applies(cli, vault: Path) -> None:
    path = vault / "notes/deploys.md"
    path.write_text(NOTE.replace("status: active", "status: retired"))
    retire = commit_edits(vault)
    path.write_text(NOTE.replace("status: active", "status: retired\nimportance: 3"))
    commit_edits(vault)
    r = cli("revert", *args(vault), retire, "--yes", "--json")
    assert r.code == 0 and r.json()["conflicts"] == []
    assert path.read_text() == NOTE.replace("status: active", "status: active\nimportance: 3")


def test_refusals_write_nothing(cli, vault: Path) -> None:
    path = vault / "notes/deploys.md"
    path.write_text(NOTE + "committed\n")
    edit = commit_edits(vault)
    path.write_text(NOTE + "committed\nand not yet committed\n")
    r = cli("undo", *args(vault), "--yes")
    assert r.code == 1 and "uncommitted edits (notes/deploys.md)" in r.err
    assert head(vault) == edit and path.read_text().endswith("and not yet committed\n")
    assert trailer(vault, "origin") == ["local-edit"]

    commit_edits(vault)
    (vault / "notes/elsewhere.md").write_text("an edit the undo does not touch\n")  # no reason to refuse
    assert cli("revert", *args(vault), edit, "--yes").code == 0
    assert (vault / "notes/elsewhere.md").exists() and git(vault, "status", "--porcelain") == "?? notes/elsewhere.md\n"

    root = git(vault, "rev-list", "--max-parents=0", "HEAD").strip()
    for bad, why in ((root, "the vault's first commit"), ("deadbeef", "is no commit")):
        r = cli("revert", *args(vault), bad, "--yes")
        assert r.code == 1 and why in r.err and "Traceback" not in r.err
    git(vault, "checkout", "-q", "-b", "side", "HEAD~1")
    git(vault, "commit", "-q", "--allow-empty", "-m", "side")
    git(vault, "checkout", "-q", "main")
    git(vault, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    r = cli("revert", *args(vault), "HEAD", "--yes")
    assert r.code == 1 and "a merge" in r.err
    assert cli("revert", *args(vault), "--since", "1d").code == 2  # --since goes with --origin


def test_with_a_daemon_running_the_daemon_writes_the_undo(cli, tmp_path: Path, env: dict[str, str]) -> None:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/deploys.md": NOTE})
    settings = resolve(vault=str(root))
    with running_daemon(settings) as d:
        before = snapshot(root)
        made = d.capture(CaptureRequest(title="Otters hold hands", body="Otters hold hands while they sleep."))
        wait_until(lambda: dirty(root) == "" and origins(root)[0] == "capture", 20, "the capture committed")
        tip = head(root)
        plan = cli("undo", "--vault", str(root))
        assert plan.code == 0 and "dry run" in plan.out and head(root) == tip
        r = cli("undo", "--vault", str(root), "--yes", "--json")
        assert r.code == 0, r.err
        assert r.json()["applied_by"] == "daemon" and r.json()["commit"] == head(root)
        assert trailer(root, "origin") == ["revert"] and trailer(root, "reverts") == [tip]
        assert snapshot(root) == before and not (root / made["path"]).exists() and grew_from(root, tip)
        wait_until(lambda: dirty(root) == "", 10, "nothing left to commit")
        assert grew_from(root, tip)  # the daemon's committer found nothing more to commit
        with pytest.raises(DaemonHTTPError) as bad:
            client_of(d).post("/v1/revert", {"kind": "sideways"})
        assert bad.value.status == 400 and "kind" in bad.value.message
        with pytest.raises(DaemonHTTPError) as bad:  # a time handed to git is ISO, never an option of git's
            client_of(d).post("/v1/revert", {"kind": "origin", "origin": "capture", "since": "--output=/tmp/x"})
        assert bad.value.status == 400 and "ISO date" in bad.value.message and "--output" not in bad.value.message
        with pytest.raises(DaemonHTTPError) as old:  # a date as `to`: the last commit at or before it, if any
            client_of(d).post("/v1/revert", {"kind": "restore", "path": made["path"], "to": "1970-01-01"})
        assert "no commit at or before 1970-01-01" in old.value.message
        assert json.loads(json.dumps(r.json()))["conflicts"] == []


def test_a_capture_edited_since_is_kept_and_a_moved_note_goes_back_with_its_edit(cli, vault: Path) -> None:
    (vault / "notes/cap.md").write_text("captured\n")
    capture = commit_edits(vault)
    (vault / "notes/cap.md").write_text("captured\nand edited since\n")
    tip = commit_edits(vault)
    r = cli("revert", *args(vault), capture, "--yes")
    assert r.code == 0, r.err
    assert "kept: notes/cap.md: edited since" in r.out and "nothing to change" in r.out
    assert head(vault) == tip and (vault / "notes/cap.md").read_text() == "captured\nand edited since\n"

    git(vault, "mv", "notes/deploys.md", "notes/moved.md")
    git(vault, "commit", "-q", "-m", "move it")
    move = head(vault)
    (vault / "notes/moved.md").write_text(NOTE + "edited after the move\n")
    tip = commit_edits(vault)
    r = cli("revert", *args(vault), move, "--yes")
    assert r.code == 0, r.err
    assert (vault / "notes/deploys.md").read_text() == NOTE + "edited after the move\n"
    assert not (vault / "notes/moved.md").exists() and grew_from(vault, tip) and no_markers(vault)


def test_a_person_saving_over_a_capture_before_its_commit_gets_a_commit_of_their_own(cli, vault: Path) -> None:
    # the capture's bytes land under its origin, the person's save on top as local-edit: undoing the capture
    # keeps the note the person has edited, and undoing the person's save gives back the capture
    settings = resolve(vault=str(vault), index=str(vault.parent / "idx"))
    contracts = ContractCache(settings.vault, settings.contract_path)
    committer = committer_for(settings, contracts)
    capturer = Capturer(settings.vault, settings.state_dir, contracts, None, before_write=committer.note_origin)
    result = capturer.capture(CaptureRequest(title="Use Postgres", body="We use Postgres for the ledger."))
    captured = (vault / result.path).read_text()
    (vault / result.path).write_text(captured + "\nAnd its replicas, added by hand.\n")  # before any commit

    cycle = committer.commit_cycle()

    assert cycle.error is None and [c.origin for c in cycle.commits] == ["capture", "local-edit"]
    assert origins(vault)[:2] == ["local-edit", "capture"]
    assert git(vault, "show", f"HEAD~1:{result.path}") == captured
    r = cli("revert", *args(vault), "HEAD~1", "--yes")
    assert r.code == 0, r.err
    assert f"kept: {result.path}: edited since" in r.out
    assert "added by hand" in (vault / result.path).read_text()
    assert cli("undo", *args(vault), "--yes").code == 0
    assert (vault / result.path).read_text() == captured


def test_undoing_a_deletion_a_merge_has_undone_already_changes_nothing(cli, vault: Path) -> None:
    # the note deleted here and edited on another machine: the sync's merge kept the edit, so the note is back;
    # taking back the deletion has nothing to take back, and writes no conflict sibling
    base = head(vault)
    (vault / "notes/deploys.md").unlink()
    deletion = commit_edits(vault)
    git(vault, "checkout", "-q", "-b", "elsewhere", base)
    (vault / "notes/deploys.md").write_text(NOTE + "edited on the other machine\n")
    git(vault, "commit", "-q", "-am", "an edit made elsewhere")
    git(vault, "checkout", "-q", "main")
    with pytest.raises(subprocess.CalledProcessError):  # modify/delete: the merge stops, and the edit is kept
        git(vault, "merge", "-q", "elsewhere", "-m", "merge")
    git(vault, "add", "notes/deploys.md")
    git(vault, "commit", "-q", "--no-edit")
    tip = head(vault)

    r = cli("revert", *args(vault), deletion, "--yes")

    assert r.code == 0, r.err
    assert "back since the undone deletion" in r.out and "nothing to change" in r.out
    assert head(vault) == tip and not list(vault.glob("notes/*.conflict-*"))
    assert (vault / "notes/deploys.md").read_text() == NOTE + "edited on the other machine\n"


def test_a_change_kept_whole_is_not_marked_as_undone(cli, vault: Path) -> None:
    """Two changes reverted together, one of them kept whole since its note was edited after it: the undo's
    commit names only the change it took back, so the log does not show the kept one as undone."""
    (vault / "notes/cap.md").write_text("captured\n")
    capture = commit_edits(vault)
    (vault / "notes/cap.md").write_text("captured\nand edited since\n")
    commit_edits(vault)
    (vault / "notes/other.md").write_text("another note\n")
    other = commit_edits(vault)
    r = cli("revert", *args(vault), other, capture, "--yes")
    assert r.code == 0, r.err
    assert "kept: notes/cap.md: edited since" in r.out
    assert not (vault / "notes/other.md").exists() and (vault / "notes/cap.md").is_file()
    assert trailer(vault, "reverts") == [other]
    assert f"kept whole, edited since: {capture[:10]}" in git(vault, "log", "-1", "--format=%B")
    log = cli("log", "--vault", str(vault), "--json")
    assert log.code == 0, log.err
    undone = {e["sha"]: e["undone_by"] for entries in log.json()["origins"].values() for e in entries}
    assert undone.get(other) and not undone.get(capture), undone
