"""Who may take what back through the daemon's `/v1/revert`: the access token alone (any MCP client's config holds
it, and the page) only changes files the door lets an agent write, all or nothing; the owner's command line sends
the operator token and may take back any change. A plan's head pins what it takes back: applied twice, the
second is refused. A real daemon on loopback, real git, the default contract."""

from __future__ import annotations

from pathlib import Path

import pytest
from curate_helpers import dirty, head
from daemon_helpers import client_of, make_repo, running_daemon, wait_until

from agentmd.engine.client import DaemonHTTPError
from agentmd.engine.daemon.operator import OPERATOR_HEADER, ensure_token
from agentmd.engine.settings import resolve

DIARY = "---\ntitle: Diary\n---\nv1\n"
RULES = "---\ntitle: Coding standards\n---\nv1\n"


def owner_edit(root: Path) -> str:
    """The owner's own edit of a private note and an alignment note, committed by the daemon (`local-edit`)."""
    tip = head(root)
    for rel in ("private/diary.md", "standards/coding.md"):
        with (root / rel).open("a", encoding="utf-8") as f:
            f.write("v2\n")
    wait_until(lambda: head(root) != tip and dirty(root) == "", 20, "the owner's edit committed")
    return head(root)


def test_the_access_token_alone_cannot_take_back_private_or_alignment_changes(cli, tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "vault",
        {"README.md": "# Vault\n", "private/diary.md": DIARY, "standards/coding.md": RULES},
    )
    settings = resolve(vault=str(root))
    with running_daemon(settings) as d:
        edit = owner_edit(root)
        client = client_of(d)
        for body in (
            {"kind": "revert", "commits": [edit]},
            {"kind": "restore", "path": "private/diary.md", "to": edit[:10] + "~1"},
        ):
            with pytest.raises(DaemonHTTPError) as refused:
                client.post("/v1/revert", body)
            assert refused.value.status == 409, body
            assert "agents may not write" in refused.value.message and "private/diary.md" in refused.value.message
            assert head(root) == edit and "v2" in (root / "private/diary.md").read_text(encoding="utf-8")
        forged = {OPERATOR_HEADER: "0" * 64}
        with pytest.raises(DaemonHTTPError) as wrong:
            client.post("/v1/revert", {"kind": "revert", "commits": [edit]}, headers=forged)
        assert wrong.value.status == 409 and head(root) == edit

        r = cli("revert", "--vault", str(root), edit, "--yes", "--json")  # the owner, at the command line
        assert r.code == 0, r.err
        assert r.json()["applied_by"] == "daemon" and r.json()["commit"] == head(root)
        assert (root / "private/diary.md").read_text(encoding="utf-8") == DIARY
        assert (root / "standards/coding.md").read_text(encoding="utf-8") == RULES
        assert ensure_token(settings.state_dir)  # the token the command line sent


def test_a_plan_applied_twice_takes_back_one_change(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "memory/a.md": "# A\n"})
    settings = resolve(vault=str(root))
    with running_daemon(settings) as d:
        for name in ("b", "c"):  # two edits, each committed by the daemon (as made on this machine)
            tip = head(root)
            (root / "memory" / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
            wait_until(lambda t=tip: head(root) != t and dirty(root) == "", 20, f"{name}.md committed")
        shown = head(root)
        client = client_of(d)
        first = client.post("/v1/revert", {"kind": "undo", "head": shown})
        assert first["commit"] == head(root) and not (root / "memory/c.md").exists()
        with pytest.raises(DaemonHTTPError) as again:
            client.post("/v1/revert", {"kind": "undo", "head": shown})
        assert again.value.status == 409 and "changed since the plan was shown" in again.value.message
        assert (root / "memory/b.md").exists() and head(root) == first["commit"]
        wait_until(lambda: dirty(root) == "", 10, "nothing left to commit")


def test_an_undo_killed_after_its_files_moved_is_finished_by_the_next_cycle(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """`kill -9` between the undo's files (and index) and HEAD: the first commit cycle after it finishes that very
    undo, its `origin: revert` and `reverts` kept, instead of finding the files staged by no one it knows."""
    import os
    import subprocess
    import sys

    from conftest import REPO
    from daemon_helpers import git

    from agentmd.engine.git.committer import committer_for
    from agentmd.engine.git.tree_move import JOURNAL
    from agentmd.rules import ContractCache

    root = make_repo(
        tmp_path / "vault", {"README.md": "# Vault\n", **{f"memory/n{i}.md": f"# N{i}\n" for i in range(20)}}
    )
    settings = resolve(vault=str(root))
    committer = committer_for(settings, ContractCache(settings.vault, settings.contract_path))
    for i in range(20):
        (root / f"memory/n{i}.md").write_text(f"# N{i}\n\nedited by hand\n", encoding="utf-8")
    edit = committer.commit_cycle().commits[0].sha
    argv = [sys.executable, "-m", "agentmd", "undo", "--yes", "--vault", str(root)]
    killed = subprocess.run(
        argv, cwd=REPO, env={**os.environ, "AGENTMD_FAILPOINTS": "sync-tree-written=kill"}, capture_output=True
    )
    assert killed.returncode == -9, killed.stderr
    assert head(root) == edit and (root / ".git" / JOURNAL).exists()
    assert (root / "memory/n3.md").read_text(encoding="utf-8") == "# N3\n"  # the files are undone, HEAD is not

    lock = root / ".git" / "index.lock"  # as a git process killed with it (its whole process group) leaves it
    lock.write_bytes(b"")
    held = committer_for(settings, ContractCache(settings.vault, settings.contract_path)).commit_cycle()
    assert held.commits == [] and head(root) == edit and (root / ".git" / JOURNAL).exists()  # kept for later
    lock.unlink()
    cycle = committer_for(settings, ContractCache(settings.vault, settings.contract_path)).commit_cycle()
    assert cycle.error is None and cycle.commits == []  # nothing of its own to commit: the undo was finished
    assert head(root) != edit and dirty(root) == "" and not (root / ".git" / JOURNAL).exists()
    said = git(root, "log", "-1", "--format=%(trailers:key=origin,valueonly)%(trailers:key=reverts,valueonly)")
    assert said.split() == ["revert", edit]


def test_an_undo_right_after_a_capture_takes_back_that_capture(cli, tmp_path: Path) -> None:
    # the capture is still waiting for its commit (the daemon commits a moment later) when the person asks to
    # undo "the last change": the undo waits for that commit and takes back the capture, not the change before
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/mine.md": "# Mine\n"})
    settings = resolve(vault=str(root))
    with running_daemon(settings, commit_debounce=2.0) as d:
        (root / "notes/mine.md").write_text("# Mine\n\nA line of the person's.\n")
        d.request_commit(0.0)
        wait_until(lambda: not dirty(root), 15, "the person's edit committed")
        captured = client_of(d).post("/v1/capture", {"title": "Agent note", "body": "Written by the agent."})
        assert dirty(root)  # its commit is still to come
        plan = cli("undo", "--vault", str(root), "--json")
        assert plan.code == 0, plan.err
        assert [c["path"] for c in plan.json()["changes"]] == [captured["path"]]
        done = cli("undo", "--vault", str(root), "--yes", "--json")
        assert done.code == 0, done.err
        assert not (root / captured["path"]).exists()
        assert "A line of the person's." in (root / "notes/mine.md").read_text(encoding="utf-8")
