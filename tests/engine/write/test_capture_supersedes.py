"""A capture that corrects an earlier note (`supersedes`): the earlier note is walled, searched past, committed
with the capture, or the capture is refused with nothing written."""

from __future__ import annotations

import datetime as dt
import io
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from daemon_helpers import git, is_clean, make_repo, running_daemon, vault_settings, wait_until
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from agentmd.engine.client import access_token
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.request_fields import input_schema
from agentmd.engine.search.query import search
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import Settings
from agentmd.engine.write import supersede
from agentmd.engine.write.capture import Capturer, CaptureRefused, CaptureRequest
from agentmd.rules import ContractCache
from agentmd.vault_schema import parse_note

NOW = dt.datetime(2026, 3, 5, 10, 20, 30, tzinfo=dt.UTC)
OLD = "memory/lessons/deploys-go-through-jenkins.md"
OLD_TEXT = (
    "---\ntitle: Deploys go through Jenkins\ntype: lesson\nstatus: active\n---\n"
    "Production deploys are started from the Jenkins job `deploy-prod`.\n"
)


OLD_LINK = "[[memory/lessons/deploys-go-through-jenkins]]"


def fm(vault: Path, rel: str) -> dict[str, Any]:
    return dict(parse_note(rel, (vault / rel).read_bytes(), 0).frontmatter)


def notes(vault: Path) -> set[str]:
    return {p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if ".git" not in p.parts}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    files = {
        OLD: OLD_TEXT,
        "memory/facts/twin-a.md": "---\ntitle: Staging host\n---\nstaging is on box a\n",
        "memory/facts/twin-b.md": "---\ntitle: Staging host\n---\nstaging is on box b\n",
        "private/diary.md": "---\ntitle: Diary\n---\nmine alone\n",
        "memory/facts/bars.md": "---\ntitle: Pipes a|b\n---\na note whose title holds a bar\n",
        "memory/facts/broken.md": "---\ntitle: Broken\ntags: [a, b\n---\nits frontmatter never closes a list\n",
        "memory/facts/unclosed.md": "---\ntitle: Unclosed\nno fence ever closes this block\n",
        "memory/facts/probe.md": "---\ntitle: Probe\nprobe: self-probe\n---\nprobe\n",
        "memory/facts/map.md": "---\ntitle: Map\ngenerated: agentmd maps\n---\n- [[x]]\n",
        "memory/facts/copy.md": "---\ntitle: Copy\nstatus: conflict\n---\none machine's version\n",
        "memory/facts/archived.md": "---\ntitle: Gone\nlifecycle: archived\n---\nold\n",
        "memory/facts/pinned.md": "---\ntitle: Kept\nlifecycle: pinned\n---\nthe owner keeps this\n",
    }
    return make_repo(tmp_path / "vault", files).resolve()


@pytest.fixture
def capturer(tmp_path: Path, vault: Path) -> Iterator[Capturer]:
    store = Store(tmp_path / "cache")
    reconcile(vault, store)
    yield Capturer(vault, tmp_path / "state", ContractCache(vault), store, now=lambda: NOW)
    store.close()


def correction(supersedes: str, title: str = "Deploys go through GitHub Actions") -> CaptureRequest:
    return CaptureRequest(
        title=title,
        body="Jenkins is gone: production deploys run from the `deploy` workflow in GitHub Actions.",
        type="lesson",
        why="the old lesson sends people to a job that no longer exists",
        supersedes=supersedes,
    )


@pytest.mark.parametrize("name", [OLD, "Deploys go through Jenkins", "[[Deploys go through Jenkins]]"])
def test_the_earlier_note_is_walled_and_named_by_the_correction(capturer: Capturer, vault: Path, name: str) -> None:
    result = capturer.capture(correction(name))
    assert result.indexed and not result.warnings, result.warnings
    assert fm(vault, result.path)["supersedes"] == OLD_LINK  # a link Obsidian follows
    old = fm(vault, OLD)
    assert old["lifecycle"] == "superseded" and old["superseded_by"] == f"[[{result.path.removesuffix('.md')}]]"
    assert old["retired_at"] == NOW.isoformat(timespec="seconds") and old["title"] == "Deploys go through Jenkins"
    assert "Jenkins job `deploy-prod`" in (vault / OLD).read_text()  # the body is kept, never deleted
    store = capturer.store
    assert store is not None
    found = search(store.index, ContractCache(vault).get().contract, SearchRequest(query="production deploys"))
    assert [r.note for r in found.results] == [result.path] and found.superseded_hidden == 1


@pytest.mark.parametrize(
    ("name", "code", "said"),
    [
        ("memory/lessons/no-such-note.md", "supersedes-unknown", "names no note of the vault"),
        ("Deploys go through Travis", "supersedes-unknown", "give the path, the exact title or the file name"),
        ("Staging host", "supersedes-ambiguous", "2 notes go by 'Staging host'"),
        ("../outside.md", "supersedes-unknown", "names no note"),
        ("memory/" + "b" * 300 + ".md", "supersedes-unknown", "names no note"),  # longer than a file name may be
        ("private/diary.md", "level:private", "the door refused marking private/diary.md superseded"),
        ("memory/facts/broken.md", "supersedes-unreadable", "frontmatter cannot be read"),
        ("memory/facts/unclosed.md", "supersedes-unreadable", "its block is never closed"),
        ("memory/facts/probe.md", "supersedes-refused", "is a self-probe note"),
        ("memory/facts/map.md", "supersedes-refused", "is a page agentmd generates"),
        ("memory/facts/copy.md", "supersedes-refused", "is a conflict copy"),
        ("memory/facts/archived.md", "supersedes-refused", "is archived"),
        ("memory/facts/pinned.md", "supersedes-refused", "is pinned by its owner"),
        ("projects/other/deploys-go-through-jenkins.md", "supersedes-unknown", "names no note"),  # another folder
        ("/etc/deploys-go-through-jenkins.md", "supersedes-unknown", "names no note"),  # outside the vault
        ("garbage words\ndeploys-go-through-jenkins", "supersedes-unknown", "names no note"),
        ("x" * 900, "invalid-field", "supersedes is 900 characters long"),
    ],
)
def test_a_name_that_is_no_one_current_note_the_agent_may_edit_refuses_with_nothing_written(
    capturer: Capturer, vault: Path, name: str, code: str, said: str
) -> None:
    before = {p: (vault / p).read_bytes() for p in notes(vault)}
    with pytest.raises(CaptureRefused) as refused:
        capturer.capture(correction(name))
    assert refused.value.code == code and said in str(refused.value), str(refused.value)
    assert "nothing was written" in str(refused.value)
    assert {p: (vault / p).read_bytes() for p in notes(vault)} == before


@pytest.mark.parametrize(
    "name",
    [
        "deploys-go-through-jenkins",  # the file name, as a link says it
        "[[deploys-go-through-jenkins]]",
        "[[deploys-go-through-jenkins|the old rule]]",
        "memory/lessons/deploys-go-through-jenkins",  # a path without `.md`
        "./memory/lessons/deploys-go-through-jenkins.md",
    ],
)
def test_the_earlier_note_may_be_named_as_a_link_or_a_file_name(capturer: Capturer, vault: Path, name: str) -> None:
    capturer.capture(correction(name))
    assert fm(vault, OLD)["lifecycle"] == "superseded"


def test_an_absolute_path_inside_the_vault_and_a_title_holding_a_bar_name_their_notes(
    capturer: Capturer, vault: Path
) -> None:
    capturer.capture(correction(str(vault / OLD)))
    assert fm(vault, OLD)["lifecycle"] == "superseded"
    capturer.capture(correction("Pipes a|b", title="Pipes are fine in titles"))
    assert fm(vault, "memory/facts/bars.md")["lifecycle"] == "superseded"


def test_a_note_with_a_change_git_has_not_committed_is_not_superseded(capturer: Capturer, vault: Path) -> None:
    with (vault / OLD).open("a") as fh:
        fh.write("A line someone is adding right now.\n")
    before = {p: (vault / p).read_bytes() for p in notes(vault)}
    with pytest.raises(CaptureRefused) as refused:
        capturer.capture(correction(OLD))
    assert refused.value.code == "supersedes-busy" and "capture again" in str(refused.value)
    assert {p: (vault / p).read_bytes() for p in notes(vault)} == before


def test_an_already_superseded_note_names_its_successor_and_a_retry_is_no_new_change(
    capturer: Capturer, vault: Path
) -> None:
    first = capturer.capture(correction(OLD))
    commit_all(vault)
    marked = (vault / OLD).read_bytes()
    again = capturer.capture(correction(OLD))  # the same capture retried: its twin, and the mark it made stands
    assert again.reinforced and again.path == first.path and (vault / OLD).read_bytes() == marked
    with pytest.raises(CaptureRefused) as refused:
        capturer.capture(correction(OLD, title="Deploys go through Buildkite"))
    assert refused.value.code == "supersedes-refused"
    assert f"is already superseded by [[{first.path.removesuffix('.md')}]]" in str(refused.value)
    assert (vault / OLD).read_bytes() == marked


@pytest.mark.parametrize("when", ["link", "replace"])
def test_a_save_racing_the_mark_is_never_lost(
    capturer: Capturer, vault: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    # a person's save lands after the mark read the note and before its rename: the version the rename
    # replaced is read again, so the save is put back whole and the note left unmarked, with the reason
    contract = ContractCache(vault).get().contract
    rel = "memory/facts/race.md"
    (vault / rel).write_text("---\ntitle: Race\n---\nbody\n")
    commit_all(vault)
    with capturer.identity.open_root() as root_fd:
        replaced = supersede.resolve(root_fd, vault, None, rel, contract, "agent", ("Race fixed", "x"))
    real = getattr(os, when)
    saved: list[bool] = []

    def save_then(*args: Any, **kwargs: Any) -> Any:
        if not saved:  # the person's save, exactly in the window
            saved.append(True)
            with (vault / rel).open("a") as fh:
                fh.write("saved by the person\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(os, when, save_then)
    with capturer.identity.open_root() as root_fd:
        said, wrote = supersede.mark(root_fd, replaced, supersede.marked(replaced, "memory/facts/fixed.md", NOW))
    monkeypatch.undo()
    text = (vault / rel).read_text()
    assert saved and "saved by the person" in text and "lifecycle: superseded" not in text
    assert wrote is None and said is not None and "was saved while this note was written" in said
    assert sorted(p.name for p in (vault / "memory/facts").iterdir() if p.name.startswith(".")) == []  # no temp left


def test_a_retried_correction_reinforces_its_note_and_still_walls_the_earlier_one(
    capturer: Capturer, vault: Path
) -> None:
    first = capturer.capture(correction(OLD))
    (vault / OLD).write_text(OLD_TEXT)  # someone put the earlier note back as it was
    commit_all(vault)
    again = capturer.capture(correction(OLD))
    assert again.reinforced and again.path == first.path
    assert fm(vault, OLD)["superseded_by"] == f"[[{first.path.removesuffix('.md')}]]"


def test_a_note_cannot_supersede_itself(capturer: Capturer, vault: Path) -> None:
    first = capturer.capture(correction(OLD))
    commit_all(vault)
    again = capturer.capture(correction(first.path))  # the same text: its own twin
    assert again.reinforced and any("cannot supersede itself" in w for w in again.warnings), again.warnings
    assert "superseded_by" not in fm(vault, first.path)


def commit_all(vault: Path) -> None:
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "saved")


# ---------------------------------------------------------------------------------------------- the daemon


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    return vault_settings(tmp_path / "vault", {"README.md": "# Vault\n", OLD: OLD_TEXT})


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    with running_daemon(settings, commit_debounce=0.1) as d:
        yield d


@pytest.mark.slow
def test_an_agent_corrects_a_note_over_mcp_and_the_pair_is_committed_as_its_capture(
    daemon: Daemon, settings: Settings
) -> None:
    vault = settings.vault
    headers = {"Authorization": f"Bearer {access_token(settings.state_dir)}"}
    url = f"http://127.0.0.1:{daemon.port}/mcp"

    async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        async with Client(streamable_http_client(url, http_client=create_mcp_http_client(headers))) as client:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, result.content
            assert result.structured_content is not None
            return dict(result.structured_content)

    asked = {"title": "Deploys go through GitHub Actions", "body": "Production deploys run from the deploy workflow."}
    answer = anyio.run(call, "memory_capture", {**asked, "supersedes": "Deploys go through Jenkins"})
    new = answer["path"]
    assert (
        fm(vault, OLD)["superseded_by"] == f"[[{new.removesuffix('.md')}]]" and fm(vault, new)["supersedes"] == OLD_LINK
    )
    found = anyio.run(call, "memory_search", {"query": "production deploys"})
    shown = [r["note"] for r in found["results"]]
    assert shown[0] == new and OLD not in shown and found["superseded_hidden"] == 1

    wait_until(lambda: is_clean(vault), what="the capture and the walled note committed")
    for rel in (OLD, new):  # each committed with the capture's origin
        last = git(vault, "log", "-n", "1", "--format=%(trailers:key=origin,valueonly)", "--", rel).strip()
        assert last == "capture", (rel, last)


def test_the_tool_and_the_command_line_offer_supersedes(capsys: pytest.CaptureFixture[str]) -> None:
    from agentmd.cli import main

    assert "supersedes" in input_schema(CaptureRequest)["properties"]  # so the MCP tool and /v1/capture take it
    out, err = io.StringIO(), io.StringIO()
    main(["capture", "--help"], out=out, err=err)
    assert "--supersedes" in out.getvalue() + err.getvalue() + capsys.readouterr().out


def test_a_capture_on_the_subject_of_an_earlier_note_names_it_and_how_to_supersede_it(
    capturer: Capturer, vault: Path
) -> None:
    restated = capturer.capture(CaptureRequest(title="Production deploys go through the Jenkins job", body="Still so."))
    (said,) = [w for w in restated.warnings if "same subject" in w]
    assert said.startswith(f"{OLD} is on the same subject") and "`supersedes`" in said
    other = capturer.capture(CaptureRequest(title="Staging database credentials rotate monthly", body="Ask ops."))
    assert not [w for w in other.warnings if "same subject" in w], other.warnings
    assert "superseded_by" not in fm(vault, OLD)  # a hint only: nothing is marked without `supersedes`
    probe = capturer.capture(CaptureRequest(title="Deploys go through Jenkins now", body="x"), origin="self-probe")
    assert not [w for w in probe.warnings if "same subject" in w]  # the daemon's own notes are not told


def test_an_agent_may_correct_the_note_it_captured_a_moment_ago(capturer: Capturer, vault: Path) -> None:
    first = capturer.capture(CaptureRequest(title="Cache TTL is five minutes", body="Set in config.", type="fact"))
    fixed = capturer.capture(  # the first note is not committed yet: its text is this capturer's own
        CaptureRequest(title="Cache TTL is ten minutes", body="Raised in March.", type="fact", supersedes=first.path)
    )
    assert fm(vault, first.path)["superseded_by"] == f"[[{fixed.path.removesuffix('.md')}]]"


def test_a_second_correction_with_other_text_is_refused_naming_the_first(capturer: Capturer, vault: Path) -> None:
    first = capturer.capture(correction(OLD))
    commit_all(vault)
    before = {p: (vault / p).read_bytes() for p in notes(vault)}
    other = CaptureRequest(title="Deploys go through GitHub Actions", body="Another wording.", supersedes=OLD)
    with pytest.raises(CaptureRefused) as refused:
        capturer.capture(other)
    assert f"already superseded by [[{first.path.removesuffix('.md')}]]" in str(refused.value)
    assert {p: (vault / p).read_bytes() for p in notes(vault)} == before


def test_captures_superseding_one_note_at_once_leave_one_successor_and_refuse_the_rest(
    capturer: Capturer, vault: Path
) -> None:
    results: list[object] = []

    def one(n: int) -> None:
        try:
            results.append(capturer.capture(correction(OLD, title=f"Deploys go through pipeline {n}")))
        except CaptureRefused as exc:
            results.append(exc)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    written = [r for r in results if not isinstance(r, CaptureRefused)]
    assert len(written) == 1 and all(r.code == "supersedes-refused" for r in results if isinstance(r, CaptureRefused))
    (winner,) = written
    assert fm(vault, OLD)["superseded_by"] == f"[[{winner.path.removesuffix('.md')}]]"  # type: ignore[attr-defined]
    claimants = [p for p in notes(vault) if fm(vault, p).get("supersedes") == OLD_LINK]
    assert claimants == [winner.path]  # type: ignore[attr-defined]
