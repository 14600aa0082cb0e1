"""`agentmd status` and `agentmd gate corpus-write` from the command line, computed from disk."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Vault
from daemon_helpers import git, make_repo, vault_settings


@pytest.fixture
def repo_vault(tmp_path: Path) -> Vault:
    make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/a.md": "alpha\n"})
    return Vault(tmp_path / "vault")


def _args(vault: Vault, tmp_path: Path) -> tuple[str, ...]:
    return ("--vault", str(vault.root), "--index", str(tmp_path / "idx"))


def test_healthy_vault_is_not_red(cli, repo_vault: Vault, tmp_path: Path) -> None:
    assert cli("reindex", *_args(repo_vault, tmp_path)).code == 0
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    assert r.code == 0, r.out
    status = r.json()
    assert status["red"] == [] and status["color"] == "yellow"  # yellow: no daemon is running
    assert status["index"]["documents"] == 2
    assert status["git"]["state"] == "ok" and status["git"]["commit_failures"] == 0
    assert status["contract"]["halted"] is False
    text = cli("status", *_args(repo_vault, tmp_path)).out
    assert "index     2 notes" in text and "daemon    not running" in text


def test_a_vault_folder_that_is_gone_is_red_not_a_usage_error(cli, repo_vault: Vault, tmp_path: Path) -> None:
    assert cli("reindex", *_args(repo_vault, tmp_path)).code == 0
    repo_vault.root.rename(tmp_path / "unmounted")
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    assert r.code == 3, (r.out, r.err)
    (red,) = r.json()["red"]
    assert red.startswith("vault-missing:") and str(repo_vault.root) in red and "mounted" in red


def test_notes_not_read_whole_are_named_by_reindex_and_turn_status_yellow_until_fixed(
    cli, repo_vault: Vault, tmp_path: Path
) -> None:
    repo_vault.write("notes/typo.md", "---\ntitle: [Deploy steps\nstatus: archived\n---\nDeploy with make ship.\n")
    (repo_vault.root / "notes/latin.md").write_bytes(b"caf\xe9 au lait, a Latin-1 note\n")
    done = cli("reindex", *_args(repo_vault, tmp_path), "--no-dense")
    assert done.code == 0, done.err  # both are indexed: a note is never hidden for what cannot be read
    assert "not read whole: notes/latin.md: the file is not valid UTF-8" in done.out
    assert "not read whole: notes/typo.md: frontmatter is not valid YAML at line" in done.out
    listed = cli("reindex", *_args(repo_vault, tmp_path), "--no-dense", "--json").json()["not_read_whole"]
    assert [u["path"] for u in listed] == ["notes/latin.md", "notes/typo.md"]
    found = cli("search", "make ship", *_args(repo_vault, tmp_path), "--json").json()
    assert found["results"][0]["note"] == "notes/typo.md"

    status = cli("status", *_args(repo_vault, tmp_path), "--json").json()
    line = next(y for y in status["yellow"] if y.startswith("notes-unreadable: 2 notes not read whole"))
    assert "notes/typo.md: frontmatter is not valid YAML" in line and "save it as UTF-8" in line
    assert status["red"] == [] and status["index"]["not_read_whole"] == listed

    repo_vault.write("notes/typo.md", "---\ntitle: '[Deploy steps'\nstatus: archived\n---\nDeploy with make ship.\n")
    (repo_vault.root / "notes/latin.md").write_text("café au lait, now UTF-8\n", encoding="utf-8")
    again = cli("reindex", *_args(repo_vault, tmp_path), "--no-dense", "--json").json()
    assert again["not_read_whole"] == [] and again["updated"] == 2
    status = cli("status", *_args(repo_vault, tmp_path), "--json").json()
    assert not any(y.startswith("notes-unreadable") for y in status["yellow"])
    assert status["index"]["not_read_whole"] == []


def test_more_unreadable_notes_than_are_named_are_counted(cli, repo_vault: Vault, tmp_path: Path) -> None:
    for n in range(7):
        repo_vault.write(f"notes/broken-{n}.md", "---\n- a list, not a mapping\n---\nbody\n")
    done = cli("reindex", *_args(repo_vault, tmp_path), "--no-dense")
    assert "not read whole: notes/broken-4.md: frontmatter is a YAML list" in done.out
    assert "broken-5" not in done.out and "and 2 more notes not read whole (`--json` lists them all)" in done.out
    status = cli("status", *_args(repo_vault, tmp_path), "--json").json()
    line = next(y for y in status["yellow"] if y.startswith("notes-unreadable: 7 notes"))
    assert "notes/broken-4.md" in line and "notes/broken-5.md" not in line and "; and 2 more;" in line
    assert len(status["index"]["not_read_whole"]) == 7


def test_a_file_the_pass_cannot_read_turns_status_yellow_with_its_error_until_it_is_read(
    cli, repo_vault: Vault, tmp_path: Path
) -> None:
    from agentmd.engine.index.notes import MAX_NOTE_BYTES

    huge = repo_vault.root / "notes/export.md"
    with huge.open("wb") as f:
        f.truncate(MAX_NOTE_BYTES + 1)  # sparse: larger than a note may be, without writing 64 MiB
    done = cli("reindex", *_args(repo_vault, tmp_path), "--no-dense")
    assert done.code == 1 and "error: notes/export.md: could not read:" in done.out
    status = cli("status", *_args(repo_vault, tmp_path), "--json").json()
    line = next(y for y in status["yellow"] if y.startswith("read-errors: the last pass could not read 1 file"))
    assert f"notes/export.md: could not read: {MAX_NOTE_BYTES + 1} bytes, over the limit" in line
    assert status["red"] == []

    huge.write_text("# Export\n\nNow a note of a normal size.\n", encoding="utf-8")
    assert cli("reindex", *_args(repo_vault, tmp_path), "--no-dense").code == 0
    status = cli("status", *_args(repo_vault, tmp_path), "--json").json()
    assert not any(y.startswith("read-errors") for y in status["yellow"])


def test_templates_with_placeholders_in_the_folders_obsidian_names_are_not_reported(
    cli, repo_vault: Vault, tmp_path: Path
) -> None:
    template = "---\ntitle: {{title}}\ncreated: {{date}}\n---\n# {{title}}\n"
    repo_vault.write("Templates/Meeting.md", template)  # the core Templates plugin's folder
    repo_vault.write("meta/tpl/Daily.md", template)  # Templater's
    repo_vault.write("notes/copied.md", template)  # a template copied as it is, outside both: reported
    repo_vault.write(".obsidian/templates.json", '{"folder": "Templates"}')
    repo_vault.write(".obsidian/plugins/templater-obsidian/data.json", '{"templates_folder": "meta/tpl/"}')
    cli("reindex", *_args(repo_vault, tmp_path), "--no-dense")
    status = cli("status", *_args(repo_vault, tmp_path), "--json").json()
    assert [u["path"] for u in status["index"]["not_read_whole"]] == ["notes/copied.md"]
    assert any(y.startswith("notes-unreadable: 1 note not read whole: notes/copied.md:") for y in status["yellow"])


def test_never_indexed_is_red(cli, repo_vault: Vault, tmp_path: Path) -> None:
    r = cli("status", *_args(repo_vault, tmp_path))
    assert r.code == 3 and "index-never-built" in r.out


def test_halted_contract_is_red(cli, repo_vault: Vault, tmp_path: Path) -> None:
    repo_vault.write("standards/storage-rules.md", "# Rules\n\n```yaml\nclass_weights:\n  unfiled: 7\n```\n")
    cli("reindex", *_args(repo_vault, tmp_path))
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    assert r.code == 3
    assert any(x.startswith("contract-halted") and "class_weights" in x for x in r.json()["red"])


def test_commit_stall_is_red_after_30_minutes(cli, repo_vault: Vault, tmp_path: Path, monkeypatch) -> None:
    state_home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state_home))
    cli("reindex", *_args(repo_vault, tmp_path))
    from agentmd.engine.settings import resolve

    state_dir = resolve(vault=str(repo_vault.root)).state_dir
    state_dir.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    stall = {"commit_failures": 4, "last_commit_error": "fatal: cannot lock ref 'HEAD'"}
    (state_dir / "commit-state.json").write_text(
        json.dumps(stall | {"first_commit_failure": (now - dt.timedelta(minutes=29)).isoformat()})
    )
    assert cli("status", *_args(repo_vault, tmp_path)).code == 0
    (state_dir / "commit-state.json").write_text(
        json.dumps(stall | {"first_commit_failure": (now - dt.timedelta(minutes=31)).isoformat()})
    )
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    assert r.code == 3
    assert any(x.startswith("commit-stalled") and "cannot lock ref" in x for x in r.json()["red"])


def test_refused_mass_delete_is_red(cli, repo_vault: Vault, tmp_path: Path) -> None:
    for i in range(30):
        repo_vault.note(f"bulk/n{i}.md", f"note {i}\n")
    cli("reindex", *_args(repo_vault, tmp_path))
    for i in range(30):
        repo_vault.remove(f"bulk/n{i}.md")
    assert cli("reindex", *_args(repo_vault, tmp_path)).code == 1
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    assert r.code == 3 and any(x.startswith("reconcile-refused") for x in r.json()["red"])


def test_a_vault_checked_out_at_an_old_commit_is_red_with_the_way_back_not_a_restore(
    cli, repo_vault: Vault, tmp_path: Path
) -> None:
    old = git(repo_vault.root, "rev-parse", "HEAD").strip()
    for i in range(30):
        repo_vault.note(f"bulk/n{i}.md", f"note {i}\n")
    git(repo_vault.root, "add", "-A")
    git(repo_vault.root, "commit", "-q", "-m", "bulk")
    cli("reindex", *_args(repo_vault, tmp_path))
    git(repo_vault.root, "checkout", "-q", old)
    assert cli("reindex", *_args(repo_vault, tmp_path)).code == 1
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    (refused,) = [x for x in r.json()["red"] if x.startswith("reconcile-refused")]
    assert "checked out at commit" in refused and "`git checkout main`" in refused
    assert "restore the vault's files" not in refused and "unmounted" not in refused


def test_queue_baseline_then_age_and_size(cli, repo_vault: Vault, tmp_path: Path) -> None:
    today = dt.datetime.now(dt.UTC)
    old = (today - dt.timedelta(days=10)).date().isoformat()
    repo_vault.note("memory/inherited.md", "waiting since long ago\n", status="unfiled", captured=old)
    cli("reindex", *_args(repo_vault, tmp_path))
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    assert r.code == 0, "the backlog present at the first run is inherited, not red"
    queue = r.json()["queue"]
    assert queue | {"total": 1, "count": 0, "inherited": 1, "baseline_source": "recorded", "baseline_count": 1} == queue
    assert 9.9 <= queue["inherited_oldest_age_days"] <= 11.1

    # captured after the recorded line: measured (a second past it, as the line is kept to the second)
    after = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)).isoformat(timespec="seconds")
    repo_vault.note("memory/fresh.md", "new and waiting\n", status="unfiled", captured=after)
    cli("reindex", *_args(repo_vault, tmp_path))
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    assert r.code == 0 and r.json()["queue"] | {"total": 2, "count": 1, "inherited": 1} == r.json()["queue"]

    # the line moved by hand six days back: a note captured four days ago, after it, pages
    config = tmp_path / "config.toml"
    config.write_text(f'queue_baseline = "{(today - dt.timedelta(days=6)).date().isoformat()}"\n', encoding="utf-8")
    stale = (today - dt.timedelta(days=4)).date().isoformat()
    repo_vault.note("memory/stale.md", "waiting four days\n", status="unfiled", captured=stale)
    cli("reindex", *_args(repo_vault, tmp_path))
    r = cli("status", *_args(repo_vault, tmp_path), "--config", str(config), "--json")
    assert r.code == 3 and any(x.startswith("queue-age") for x in r.json()["red"])
    assert (
        r.json()["queue"] | {"total": 3, "count": 2, "inherited": 1, "baseline_source": "config"} == r.json()["queue"]
    )
    assert cli("status", *_args(repo_vault, tmp_path), "--json").code == 0, "without the key: the recorded line"

    repo_vault.remove("memory/stale.md")
    for i in range(1000):
        repo_vault.note(f"memory/q/n{i}.md", f"queued {i}\n", status="unfiled", captured=after)
    cli("reindex", *_args(repo_vault, tmp_path))
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    assert r.code == 3 and any(x.startswith("queue-size: 1001 notes captured since") for x in r.json()["red"])


def test_worktree_inside_vault_is_named(cli, repo_vault: Vault, tmp_path: Path) -> None:
    git(repo_vault.root, "worktree", "add", "-q", str(repo_vault.root / "wt"), "-b", "side")
    cli("reindex", *_args(repo_vault, tmp_path))
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    assert any(w.endswith("wt") for w in r.json()["git"]["worktrees_inside_vault"])
    assert "worktrees inside the vault" in cli("status", *_args(repo_vault, tmp_path)).out


def test_not_a_repository_is_degraded_not_red(cli, vault: Vault, tmp_path: Path) -> None:
    vault.note("a.md", "x\n")
    cli("reindex", *_args(vault, tmp_path))
    r = cli("status", *_args(vault, tmp_path), "--json")
    assert r.json()["git"]["state"] == "degraded" and r.json()["git"]["reason"] == "not-a-repository"
    assert any(y.startswith("git-degraded") for y in r.json()["yellow"])


def test_gate_corpus_write(cli, repo_vault: Vault, vault: Vault, tmp_path: Path) -> None:
    r = cli("gate", "corpus-write", "--vault", str(repo_vault.root))
    assert r.code == 0 and "pass" in r.out
    repo_vault.write("notes/a.md", "changed\n")
    r = cli("gate", "corpus-write", "--vault", str(repo_vault.root), "--json")
    assert r.code == 1 and r.json()["reason"] == "uncommitted-changes"
    r = cli("gate", "corpus-write", "--vault", str(tmp_path / "home"))
    assert r.code == 1 and "git-degraded" in r.out
    assert cli("gate", "corpus-write", "--force", "--vault", str(repo_vault.root)).code == 2, "no override exists"


def test_init_git(cli, vault: Vault) -> None:
    vault.note("a.md", "x\n")
    r = cli("init-git", "--vault", str(vault.root))
    assert r.code == 0, r.err
    assert (vault.root / ".gitignore").exists()
    assert git(vault.root, "status", "--porcelain") == ""
    assert cli("gate", "corpus-write", "--vault", str(vault.root)).code == 0
    r = cli("init-git", "--vault", str(vault.root))
    assert r.code != 0 and "already" in r.err


def test_init_git_makes_a_new_vaults_folder_and_status_says_how(cli, tmp_path: Path) -> None:
    fresh = tmp_path / "new-vault"
    r = cli("status", "--vault", str(fresh), "--json")
    (red,) = r.json()["red"]
    assert red.startswith("vault-missing:") and "`agentmd init-git` makes it" in red
    r = cli("init-git", "--vault", str(fresh))
    assert r.code == 0, r.err
    assert "made the folder" in r.out and (fresh / ".git").is_dir()
    r = cli("init-git", "--vault", str(tmp_path / "no" / "such" / "place"))
    assert r.code == 2 and "does not exist either" in r.err and not (tmp_path / "no").exists()


def test_no_empty_queue_baseline_before_the_first_index(cli, repo_vault: Vault, tmp_path: Path) -> None:
    old = (dt.date.today() - dt.timedelta(days=40)).isoformat()
    repo_vault.note("memory/waiting.md", "waiting since long ago\n", status="unfiled", captured=old)
    assert cli("status", *_args(repo_vault, tmp_path)).code == 3  # never indexed
    cli("reindex", *_args(repo_vault, tmp_path))
    r = cli("status", *_args(repo_vault, tmp_path), "--json")
    assert r.code == 0, r.json()["red"]
    assert r.json()["queue"]["inherited"] == 1 and r.json()["queue"]["count"] == 0


def test_after_a_commit_cycle_only_the_git_section_is_computed_again(tmp_path: Path) -> None:
    from agentmd.engine.daemon.status import git_section, with_git
    from agentmd.engine.git.health import CommitState

    vault = make_repo(tmp_path / "vault", {"README.md": "# v\n"})
    now = dt.datetime.now(dt.UTC)
    failing = CommitState(commit_failures=3, first_commit_failure="2020-01-01T00:00:00Z", last_commit_error="boom")
    stalled = git_section(vault, failing, now)
    assert stalled["red"] and stalled["red"][0].startswith("commit-stalled")
    queue_red = "queue-size: 1000 unfiled notes (red at 1000)"
    status = {"git": stalled, "queue": {"red": [queue_red]}, "red": [*stalled["red"], queue_red], "yellow": []}
    status["color"] = "red"

    healed = with_git(status, vault, CommitState(), now)
    assert healed["red"] == [queue_red]  # the commit's red is gone, the other part's stays as it was
    assert healed["color"] == "red" and healed["git"]["commit_failures"] == 0
    assert status["red"] == [*stalled["red"], queue_red]  # the cached status itself is left as it was

    calm = with_git({**status, "queue": {"red": []}, "red": list(stalled["red"])}, vault, CommitState(), now)
    assert calm["red"] == [] and calm["color"] == "green"
    again = with_git(calm, vault, failing, now)
    assert again["red"] == stalled["red"] and again["color"] == "red"  # red again on the next cycle that fails


def test_after_a_commit_cycle_a_probe_run_by_another_process_shows(tmp_path: Path) -> None:
    """`agentmd probe` and `agentmd jobs run` write their results from their own processes; the status after
    the next commit cycle carries them without waiting for the health pass."""
    import json

    from agentmd.engine.daemon.status import git_section, probe_section, with_git
    from agentmd.engine.git.health import CommitState

    vault = make_repo(tmp_path / "vault", {"README.md": "# v\n"})
    state = tmp_path / "state"
    state.mkdir()
    now = dt.datetime.now(dt.UTC)
    git = git_section(vault, CommitState(), now)
    status = {"git": git, "probe": probe_section(state, now), "red": [], "yellow": [], "color": "green"}
    (state / "probe.json").write_text(json.dumps({"ok": False, "error": "search-miss", "at": now.isoformat()}))
    after = with_git(status, vault, CommitState(), now, state_dir=state)
    assert after["color"] == "red" and after["red"][0].startswith("probe-failed: search-miss")
    assert with_git(status, vault, CommitState(), now)["color"] == "green"  # without it, as it was


def test_the_health_pass_keeps_the_full_status_to_a_small_share_of_the_time() -> None:
    from agentmd.engine.daemon.upkeep import STATUS_SHARE, status_due

    assert status_due(100.0, None, 0.0)  # no status yet
    assert status_due(100.0, 99.0, 0.01)  # a cheap status: every health pass
    assert not status_due(100.0, 95.0, 0.2)  # 0.2 s of work (10,000 notes): not again for 10 s
    assert not status_due(100.0, 50.0, 1.8)  # 1.8 s of work (100,000 notes): not again for 90 s
    assert status_due(100.0, 100.0 - 1.8 / STATUS_SHARE, 1.8)


def test_the_indexer_computes_the_full_status_again_only_when_it_is_old_and_its_share_allows() -> None:
    from agentmd.engine.daemon.state import STATUS_MAX_AGE, status_old
    from agentmd.engine.daemon.upkeep import STATUS_SHARE

    assert not status_old(100.0, 100.0 - STATUS_MAX_AGE / 2, 0.01)  # fresh
    assert status_old(100.0, 100.0 - STATUS_MAX_AGE - 1, 0.01)  # old, and cheap to compute again
    # old, but a status that took 0.4 s (thousands of captures since the last) waits for its share: 20 s
    assert not status_old(100.0, 100.0 - STATUS_MAX_AGE - 1, 0.4)
    assert status_old(100.0, 100.0 - 0.4 / STATUS_SHARE - 0.1, 0.4)
    assert status_old(1000.0, 0.0, 0.0)  # none computed yet


def test_a_daemon_before_its_first_pass_renders_as_text(tmp_path: Path, env: dict[str, str]) -> None:
    """`agentmd status` while the daemon opens its index or runs its start-up pass: the answer holds only the
    parts known then, and the text says what is known (it once failed on the missing git section)."""
    from agentmd.engine.daemon.service import Daemon
    from agentmd.engine.daemon.status import render

    settings = vault_settings(tmp_path / "vault", {"README.md": "# v\n", "notes/a.md": "alpha\n"})
    d = Daemon(settings, port=0, health_interval=0, probe_interval=0)
    early = d.status()
    assert "git" not in early and early["color"] == "yellow"
    text = render(early)
    assert text.startswith("agentmd status: YELLOW") and "index-building" in text
    assert "git" not in text.split("yellow")[0]  # no section it does not have yet


def test_commit_cycles_failing_in_a_row_are_yellow_at_once_and_red_after_the_stall_time(tmp_path: Path) -> None:
    from agentmd.engine.daemon.status import STALL_RED, git_section
    from agentmd.engine.git.health import CommitState

    vault = make_repo(tmp_path / "vault", {"README.md": "# v\n"})
    now = dt.datetime(2026, 12, 6, 12, 0, tzinfo=dt.UTC)

    def failing(count: int, since: dt.timedelta) -> dict[str, list[str]]:
        first = (now - since).isoformat(timespec="seconds")
        state = CommitState(commit_failures=count, first_commit_failure=first, last_commit_error="git write-tree: boom")
        section = git_section(vault, state, now)
        return {"red": section["red"], "yellow": section["yellow"]}

    assert failing(1, dt.timedelta(seconds=5)) == {"red": [], "yellow": []}  # one may be a passing race
    two = failing(2, dt.timedelta(seconds=10))
    assert two["red"] == [] and two["yellow"][0].startswith("commits-failing: 2 failed commit cycles")
    assert "boom" in two["yellow"][0] and "resume on their own" in two["yellow"][0]
    late = failing(40, STALL_RED)
    assert late["red"][0].startswith("commit-stalled") and late["yellow"] == []


def test_names_that_one_file_system_takes_for_one_file_are_yellow(tmp_path: Path) -> None:
    """Two machines wrote one name in two Unicode forms (macOS writes NFD) or two cases: on Linux they are two
    files, on macOS and Windows one; status names each set."""
    import unicodedata

    from agentmd.engine.daemon.status import git_section

    nfc, nfd = unicodedata.normalize("NFC", "Café notes.md"), unicodedata.normalize("NFD", "Café notes.md")
    vault = make_repo(tmp_path / "vault", {nfc: "a\n", nfd: "b\n", "Note.md": "c\n", "note.md": "d\n", "x.md": "e\n"})
    yellow = git_section(vault, None, dt.datetime.now(dt.UTC))["yellow"]
    (line,) = [y for y in yellow if y.startswith("names-collide")]
    assert "2 set(s)" in line and "'Note.md' and 'note.md'" in line and "x.md" not in line
    assert nfd in line or "Caf" in line


def test_a_config_file_saying_what_agentmd_does_not_read_is_yellow(cli, repo_vault: Vault, tmp_path: Path) -> None:
    """A misspelt key or table is ignored by everything that reads the config: status says so, with the name
    likely meant, instead of staying green while, say, alerts are off."""
    config = tmp_path / "config.toml"
    config.write_text('vualt = "x"\nnotify = "notify-send"\n[notfiy]\ncommand = ["x"]\n', encoding="utf-8")
    assert cli("reindex", *_args(repo_vault, tmp_path)).code == 0
    r = cli("status", *_args(repo_vault, tmp_path), "--config", str(config), "--json")
    (line,) = [y for y in r.json()["yellow"] if y.startswith("config-unread")]
    assert "`vualt` is not a setting (did you mean `vault`?)" in line
    assert "`notfiy` is not a setting (did you mean `notify`?)" in line and "`notify` is not a table" in line
    assert r.json()["color"] in ("yellow", "red")
    # a typo inside a table is ignored the same way: `comand` turns alerts off, `max_call` lifts no budget
    config.write_text('[notify]\ncomand = ["x"]\n[enrich]\nmax_call = 3\nfuse = 2\n', encoding="utf-8")
    r = cli("status", *_args(repo_vault, tmp_path), "--config", str(config), "--json")
    (line,) = [y for y in r.json()["yellow"] if y.startswith("config-unread")]
    assert "`comand` in `[notify]` is not a setting of that table (did you mean `command`?)" in line
    assert "`max_call` in `[enrich]`" in line and "fuse" not in line
    config.write_text(
        '[notify]\ncommand = ["true"]\ndesktop = true\n[morning]\nspace = "daily"\n[jobs]\n'
        'daily_token_ceiling = 5\n[groom]\nrestated = true\n[enrich]\nmax_calls = 1\nmodel = "opus"\n'
        '[[ingest]]\npath = "/tmp"\n',
        encoding="utf-8",
    )
    r = cli("status", *_args(repo_vault, tmp_path), "--config", str(config), "--json")
    assert not [y for y in r.json()["yellow"] if y.startswith("config-unread")]


def test_paths_someone_else_staged_are_named_until_they_commit(tmp_path: Path) -> None:
    """After a `git stash pop` the person resolved with `git add`, their change waits for their commit: said."""
    from agentmd.engine.daemon.status import git_section
    from agentmd.engine.git.committer import Committer
    from agentmd.engine.git.health import CommitState

    vault = make_repo(tmp_path / "vault", {"notes/alpha.md": "# A\n"})
    (vault / "notes/alpha.md").write_text("# A\n\nresolved by hand\n", encoding="utf-8")
    subprocess.run(["git", "add", "notes/alpha.md"], cwd=vault, check=True)
    committer = Committer(vault, phone_paths=tuple, state_dir=tmp_path / "state")
    committer.commit_cycle()
    assert committer.state.staged_by_others == ["notes/alpha.md"]
    (line,) = [y for y in git_section(vault, committer.state, dt.datetime.now(dt.UTC))["yellow"] if "staged" in y]
    assert line.startswith("staged-by-someone-else: 1 path(s)") and "notes/alpha.md" in line
    subprocess.run(["git", "commit", "-qm", "resolved", "--no-verify"], cwd=vault, check=True, env=_git_env())
    committer.commit_cycle()
    assert committer.state.staged_by_others == []
    assert CommitState.from_mapping(committer.state.to_dict()).staged_by_others == []


def _git_env() -> dict[str, str]:
    import os

    return {**os.environ, "GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@x", "GIT_COMMITTER_NAME": "P",
            "GIT_COMMITTER_EMAIL": "p@x"}  # fmt: skip


def test_a_note_fixed_since_the_last_full_pass_is_no_longer_named_as_holding_markers(tmp_path: Path) -> None:
    from agentmd.engine.daemon.status import held_lines

    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    marked = "# A\n\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> 1234567\n"
    for name in ("a.md", "b.md"):
        (vault / "notes" / name).write_text(marked, encoding="utf-8")
    info: Any = {
        "conflict_markers": 2,
        "conflict_markers_named": [{"path": "notes/a.md", "reason": "x"}, {"path": "notes/b.md", "reason": "x"}],
    }
    assert held_lines(info, vault)[0].startswith("merge-conflicts: 2 notes")
    (vault / "notes" / "a.md").write_text("# A\n\nmine and theirs\n", encoding="utf-8")
    (line,) = held_lines(info, vault)
    assert line.startswith("merge-conflicts: 1 note holds") and "notes/b.md" in line and "notes/a.md" not in line
    (vault / "notes" / "b.md").unlink()
    assert held_lines(info, vault) == []


def test_a_note_in_conflict_during_a_persons_merge_is_one_name_not_three(tmp_path: Path) -> None:
    """A plain `git pull` stopped on a conflict lists the note once per stage of the merge: one name all the same."""
    from agentmd.engine.daemon.status import git_section

    vault = make_repo(tmp_path / "vault", {"notes/t2.md": "# T2\n\nbase\n"})
    run = lambda *a: subprocess.run(["git", "-C", str(vault), *a], check=False, capture_output=True)  # noqa: E731
    run("checkout", "-q", "-b", "other")
    (vault / "notes/t2.md").write_text("# T2\n\nother\n", encoding="utf-8")
    run("commit", "-qam", "other")
    run("checkout", "-q", "-")
    (vault / "notes/t2.md").write_text("# T2\n\nmine\n", encoding="utf-8")
    run("commit", "-qam", "mine")
    assert run("merge", "-q", "other").returncode != 0  # stopped on the conflict
    yellow = git_section(vault, None, dt.datetime.now(dt.UTC))["yellow"]
    assert not [y for y in yellow if y.startswith("names-collide")], yellow


def test_new_files_in_dot_folders_are_named_until_someone_commits_them(tmp_path: Path) -> None:
    """A new Obsidian setting (`.obsidian/hotkeys.json`) is never committed by agentmd on its own, so it reaches
    no other machine: status names it, and stops once it is committed (from then on agentmd keeps it)."""
    from agentmd.engine.daemon.status import git_section
    from agentmd.engine.git.committer import Committer

    vault = make_repo(tmp_path / "vault", {"notes/a.md": "# A\n"})
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian/hotkeys.json").write_text('{"editor:toggle-bold": []}\n', encoding="utf-8")
    committer = Committer(vault, phone_paths=tuple)
    committer.commit_cycle()
    now = dt.datetime.now(dt.UTC)
    (said,) = [y for y in git_section(vault, committer.state, now)["yellow"] if y.startswith("dot-files-untracked")]
    assert ".obsidian/hotkeys.json" in said and "agentmd git add" in said
    subprocess.run(["git", "-C", str(vault), "add", ".obsidian/hotkeys.json"], check=True)
    subprocess.run(["git", "-C", str(vault), "commit", "-qm", "hotkeys"], check=True, capture_output=True)
    committer.commit_cycle()
    assert not [y for y in git_section(vault, committer.state, now)["yellow"] if y.startswith("dot-files-untracked")]


def test_paths_in_the_config_file_are_text_read_from_its_folder(tmp_path: Path) -> None:
    from agentmd.engine.errors import ConfigError
    from agentmd.engine.settings import resolve

    folder = tmp_path / "conf"
    (folder / "my-vault").mkdir(parents=True)
    config = folder / "config.toml"
    config.write_text('vault = "my-vault"\nindex = "../idx"\n', encoding="utf-8")
    settings = resolve(config=str(config), env={"HOME": str(tmp_path)})
    assert settings.vault == (folder / "my-vault").resolve() and settings.cache_dir == (tmp_path / "idx").resolve()
    config.write_text("vault = 5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"`vault = 5` in .* is not a path: write it as text"):
        resolve(config=str(config), env={"HOME": str(tmp_path)})


def test_status_of_a_vault_path_that_is_a_file_says_so(cli, tmp_path: Path) -> None:
    afile = tmp_path / "notes.txt"
    afile.write_text("x\n", encoding="utf-8")
    r = cli("status", "--vault", str(afile), "--json")
    (line,) = [x for x in r.json()["red"] if x.startswith("vault-missing")]
    assert "is a file, not a folder" in line and "init-git" not in line
