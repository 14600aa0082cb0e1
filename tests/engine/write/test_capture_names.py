"""The names of captured notes (the contract's `capture_names`): the title's slug on a vault with no remote,
the slug and this machine's tag once the vault's git has one, so two machines capturing one title before
they sync make two files that a plain `git pull` merges without a conflict."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import CliResult
from contract_helpers import write_vault_contract, yaml_block
from daemon_helpers import git, make_repo

from agentmd.engine.git.remotes import RemoteConfig, config_file
from agentmd.engine.index.store import Store
from agentmd.engine.lease import machine_tag
from agentmd.engine.write.capture import Capturer, CaptureRequest
from agentmd.engine.write.names import CaptureNames
from agentmd.rules import ContractCache, load_contract

NOW = dt.datetime(2026, 12, 6, 9, 30, tzinfo=dt.UTC)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "vault").resolve()


@pytest.fixture
def make_capturer(tmp_path: Path, repo: Path) -> Iterator[Callable[[], Capturer]]:
    stores: list[Store] = []

    def make() -> Capturer:
        store = Store(tmp_path / f"cache{len(stores)}")
        stores.append(store)
        return Capturer(repo, tmp_path / "state", ContractCache(repo), store, now=lambda: NOW)

    yield make
    for s in stores:
        s.close()


def capture(capturer: Capturer, title: str, body: str = "Ruff replaces flake8 and isort here.") -> str:
    return capturer.capture(CaptureRequest(title=title, body=body, type="lesson", why="one linter")).path


def test_the_machine_tag_is_stable_and_differs_between_machines() -> None:
    tag = machine_tag({})
    assert tag == machine_tag({}) and len(tag) == 4 and tag.isalnum() and tag == tag.lower()
    laptop, desk = machine_tag({"AGENTMD_HOST": "laptop"}), machine_tag({"AGENTMD_HOST": "desk"})
    assert laptop != desk and tag not in (laptop, desk)


def test_without_a_remote_a_capture_is_named_by_its_title(make_capturer: Callable[[], Capturer], repo: Path) -> None:
    assert capture(make_capturer(), "Use ruff for lint").endswith("/use-ruff-for-lint.md")


def test_once_the_vault_has_a_remote_captures_carry_the_machine_tag(
    make_capturer: Callable[[], Capturer], repo: Path, tmp_path: Path
) -> None:
    capturer = make_capturer()
    before = capture(capturer, "Use ruff for lint")
    git(tmp_path, "init", "-q", "--bare", "remote.git")
    git(repo, "remote", "add", "origin", str(tmp_path / "remote.git"))  # read again: the config file changed
    after = capture(capturer, "Pin the Python version")
    assert before.endswith("/use-ruff-for-lint.md")
    assert after.endswith(f"/pin-the-python-version-{capturer.names.tag}.md")
    assert (repo / before).exists() and (repo / after).exists()
    # a retry of the first capture finds the note named before the remote came, and writes no twin
    again = capturer.capture(
        CaptureRequest(title="Use ruff for lint", body="Ruff replaces flake8 and isort here.", type="lesson")
    )
    assert again.reinforced and again.path == before
    # the same title captured again on this machine gets the tagged name's suffix, not a second tag
    retry = capture(capturer, "Pin the Python version")
    other = capture(capturer, "Pin the Python version", body="A different body: 3.11 everywhere.")
    assert retry == after
    assert other.endswith(f"/pin-the-python-version-{capturer.names.tag}-2.md")


@pytest.mark.parametrize(("mode", "remote", "tagged"), [("title", True, False), ("machine", False, True)])
def test_the_contract_chooses_the_names(
    make_capturer: Callable[[], Capturer], repo: Path, tmp_path: Path, mode: str, remote: bool, tagged: bool
) -> None:
    write_vault_contract(repo, "# Storage rules\n\n" + yaml_block(f"capture_names: {mode}"))
    if remote:
        git(repo, "remote", "add", "origin", str(tmp_path / "anywhere.git"))
    capturer = make_capturer()
    path = capture(capturer, "Use ruff for lint")
    assert path.endswith(f"use-ruff-for-lint-{capturer.names.tag}.md" if tagged else "/use-ruff-for-lint.md")


def test_a_value_the_contract_does_not_know_halts_it_and_says_how_to_fix_it(repo: Path) -> None:
    write_vault_contract(repo, "# Storage rules\n\n" + yaml_block("capture_names: sometimes"))
    state = load_contract(repo)
    assert state.halted
    problem = next(e for e in state.errors if "capture_names" in e)
    assert "sometimes" in problem and "`auto`" in problem and "`title`" in problem


def test_the_remote_is_read_from_a_linked_worktree_and_from_a_vault_inside_a_repository(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "remote", "add", "origin", "ssh://nas/vault.git")
    inner = repo / "notes" / "vault"
    inner.mkdir(parents=True)
    assert config_file(inner) == repo / ".git" / "config" and RemoteConfig(inner).has_remote()
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "linked")
    assert RemoteConfig(tmp_path / "linked").has_remote()
    assert not RemoteConfig(tmp_path).has_remote()  # no repository at all
    names = CaptureNames(repo, tag="k3f9")
    assert names.stem("Use ruff for lint", "auto") == "use-ruff-for-lint-k3f9"
    assert names.stem("Use ruff for lint", "title") == "use-ruff-for-lint"


def machine(cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, name: str, clone: Path, body: str) -> str:
    """A capture from the command line on the machine `name` (its own state folders), committed there."""
    monkeypatch.setenv("AGENTMD_HOST", name)
    for var, folder in (("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache"), ("XDG_CONFIG_HOME", "config")):
        monkeypatch.setenv(var, str(clone.parent / f"{name}-{folder}"))
    title = "Deploys need a green CI"
    run = cli("capture", "--title", title, "--type", "lesson", "--body", body, "--vault", str(clone), "--json")
    assert run.code == 0, run.err
    if git(clone, "status", "--porcelain").strip():  # what the capture's commit cycle left, if anything
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "-m", f"capture on {name}")
    assert not git(clone, "status", "--porcelain").strip()
    return str(json.loads(run.out)["path"])


def test_two_machines_capturing_one_title_merge_with_a_plain_git_pull(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, repo: Path, tmp_path: Path
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(remote))
    clones = {}
    for name in ("laptop", "desk"):
        clones[name] = tmp_path / name / "vault"
        clones[name].parent.mkdir()
        git(tmp_path, "clone", "-q", str(remote), str(clones[name]))
        for key, value in (("user.name", name), ("user.email", f"{name}@example.com"), ("pull.rebase", "false")):
            git(clones[name], "config", key, value)
    laptop = machine(cli, monkeypatch, "laptop", clones["laptop"], "Seen on the laptop.")
    desk = machine(cli, monkeypatch, "desk", clones["desk"], "Seen on the desk.")
    assert laptop != desk and laptop.rsplit("/", 1)[0] == desk.rsplit("/", 1)[0]
    git(clones["laptop"], "push", "-q", "origin", "main")
    pulled = subprocess.run(["git", "pull", "-q", "--no-edit"], cwd=clones["desk"], capture_output=True, text=True)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    for path, seen in ((laptop, "laptop"), (desk, "desk")):
        text = (clones["desk"] / path).read_text(encoding="utf-8")
        assert f"Seen on the {seen}." in text and "<<<<<<<" not in text and "title: Deploys need a green CI" in text


def test_status_says_how_new_captures_are_named(cli: Callable[..., CliResult], repo: Path, tmp_path: Path) -> None:
    plain = cli("status", "--vault", str(repo), "--json").json()
    assert plain["sync"]["capture_names"] == "<title>.md"
    git(repo, "remote", "add", "origin", str(tmp_path / "remote.git"))
    shown = cli("status", "--vault", str(repo))
    tag = machine_tag()
    assert f"new captures named <title>-{tag}.md" in shown.out
    assert cli("status", "--vault", str(repo), "--json").json()["sync"]["capture_names"] == f"<title>-{tag}.md"


def test_a_related_title_links_to_the_file_that_holds_it(
    make_capturer: Callable[[], Capturer], repo: Path, tmp_path: Path
) -> None:
    from agentmd.vault_schema import parse_note

    git(repo, "remote", "add", "origin", str(tmp_path / "remote.git"))
    capturer = make_capturer()
    lesson = capture(capturer, "Use ruff for lint")
    stem = lesson.rsplit("/", 1)[-1].removesuffix(".md")
    (repo / "Karma.md").write_text("# Karma\n", encoding="utf-8")  # a note whose file name is its title
    answer = capturer.capture(
        CaptureRequest(
            title="CI setup",
            body="CI runs ruff.",
            type="decision",
            why="one place",
            related=("Use ruff for lint", "Karma", "A note to write later"),
        )
    )
    decision = answer.path
    (said,) = [w for w in answer.warnings if w.startswith("related ")]  # a name no note answers to, said
    assert "'A note to write later' names no note" in said and "Karma" not in said and "ruff" not in said
    note = parse_note(decision, (repo / decision).read_bytes(), 0)
    assert note.frontmatter["related"] == [f"[[{stem}|Use ruff for lint]]", "[[Karma]]", "[[A note to write later]]"]
    assert stem in [link.target for link in note.links]


def test_captures_that_take_one_name_in_turn_each_commit_their_own_bytes(tmp_path: Path, repo: Path) -> None:
    # "Delta note" and "delta-note?" both name delta-note.md: the second is written beside it as delta-note-2.md,
    # and each registers its origin under the name its note has, so one capture commit holds both notes as
    # they were written (never the second's text under the first's name, nor the first's as a local-edit)
    from agentmd.engine.git.committer import Committer

    committer = Committer(repo, phone_paths=tuple, state_dir=tmp_path / "state")
    capturer = Capturer(
        repo,
        tmp_path / "state",
        ContractCache(repo),
        None,
        before_write=committer.note_origin,
        withdraw=committer.withdraw_origin,
        now=lambda: NOW,
    )
    bodies = {"Delta note": "The first delta.", "delta-note?": "The second delta.", "delta note!": "The third."}
    paths = {title: capturer.capture(CaptureRequest(title=title, body=body)).path for title, body in bodies.items()}
    names = sorted(p.rsplit("/", 1)[1] for p in paths.values())
    assert names == ["delta-note-2.md", "delta-note-3.md", "delta-note.md"]

    cycle = committer.commit_cycle()

    assert cycle.error is None and [(c.origin, len(c.paths)) for c in cycle.commits] == [("capture", 3)]
    for title, path in paths.items():
        assert bodies[title] in git(repo, "show", f"HEAD:{path}")
    assert git(repo, "status", "--porcelain") == ""
