"""The command line, run in-process against real vaults: output shapes, exit codes, messages."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

from conftest import EXAMPLE_VAULT, Vault


def test_reindex_then_search_the_example_vault(cli, tmp_path: Path) -> None:
    vault = tmp_path / "example"
    shutil.copytree(EXAMPLE_VAULT, vault)
    idx = str(tmp_path / "idx")
    r = cli("reindex", "--vault", str(vault), "--index", idx, "--json")
    assert r.code == 0, r.err
    report = r.json()
    assert {"added", "updated", "deleted", "unchanged", "errors", "seconds"} <= set(report)
    assert report["added"] >= 30 and report["errors"] == []
    again = cli("reindex", "--vault", str(vault), "--index", idx, "--json").json()
    assert again["added"] == 0 and again["unchanged"] == report["added"]

    r = cli("search", "--vault", str(vault), "--index", idx, "--json", "sqlite", "wal", "queue")
    assert r.code == 0, r.err
    resp = r.json()
    assert resp["results"][0]["path"] == "memory/decisions/sqlite-wal-for-job-queue.md"
    assert resp["superseded_hidden"] == 1

    r = cli("search", "--vault", str(vault), "--index", idx, "restore", "backup")
    assert r.code == 0
    first = r.out.splitlines()[0]
    assert "projects/ledgerline/notes/runbook-restore-from-backup.md" in first and "score" in first


def test_reindex_summary_line(cli, vault: Vault, tmp_path: Path) -> None:
    vault.note("a.md", "hello\n")
    r = cli("reindex", "--vault", str(vault.root), "--index", str(tmp_path / "i"))
    assert r.code == 0
    assert r.out.startswith("1 added, 0 updated, 0 deleted, 0 unchanged, 0 errors in ")


def test_from_scratch_rebuilds(cli, vault: Vault, tmp_path: Path) -> None:
    vault.note("a.md", "hello\n")
    args = ("--vault", str(vault.root), "--index", str(tmp_path / "i"), "--json")
    cli("reindex", *args)
    assert cli("reindex", "--from-scratch", *args).json()["added"] == 1


def test_vault_from_environment_and_config(cli, vault: Vault, tmp_path: Path, monkeypatch) -> None:
    vault.note("a.md", "configured vault note\n")
    monkeypatch.setenv("AGENTMD_VAULT", str(vault.root))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    assert cli("reindex").code == 0
    assert list((tmp_path / "xdg-cache" / "agentmd").iterdir()), "default cache dir is under XDG_CACHE_HOME"
    monkeypatch.delenv("AGENTMD_VAULT")
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(f'vault = "{vault.root}"\n')
    r = cli("search", "--config", str(cfg), "--json", "configured")
    assert r.code == 0 and r.json()["results"][0]["path"] == "a.md"


def test_no_vault_is_a_usage_error(cli) -> None:
    r = cli("search", "anything")
    assert r.code == 2
    assert "--vault" in r.err and "Traceback" not in r.err


def test_missing_vault_folder(cli, tmp_path: Path) -> None:
    r = cli("reindex", "--vault", str(tmp_path / "nope"))
    assert r.code == 2 and "not a directory" in r.err


def test_index_inside_vault_is_refused(cli, vault: Vault) -> None:
    vault.note("a.md", "x\n")
    r = cli("reindex", "--vault", str(vault.root), "--index", str(vault.root / "idx"))
    assert r.code == 2 and "inside the vault" in r.err


def test_bad_arguments_exit_2(cli) -> None:
    r = cli("search")
    assert r.code == 2 and "agentmd search" in r.err
    assert cli("frobnicate").code == 2
    assert cli().code == 2


def test_bad_date_is_a_clear_usage_error(cli, vault: Vault, tmp_path: Path) -> None:
    vault.note("a.md", "x\n")
    r = cli("search", "--vault", str(vault.root), "--index", str(tmp_path / "i"), "--after", "soon", "x")
    assert r.code == 2 and "is not a date: give one (2026-11-30), an age (3d, 2w) or a time in words" in r.err


def test_search_dates_read_ages_and_words_as_queries_do(cli, vault: Vault, tmp_path: Path) -> None:
    """`--after 3d`, `--after 'last week'`, `--before yesterday`: the forms `log --since` and a query's own
    words take, sent as the day they name."""
    vault.note("recent.md", "the otter note\n", captured=dt.date.today().isoformat())
    vault.note("old.md", "the otter note from long ago\n", captured="2020-01-05")
    base = ("search", "--vault", str(vault.root), "--index", str(tmp_path / "i"), "--json", "--floor", "0", "otter")
    for after in ("3d", "last week", "this year", dt.date.today().isoformat()):
        notes = [r["note"] for r in cli(*base, "--after", after).json()["results"]]
        assert notes == ["recent.md"], (after, notes)
    assert [r["note"] for r in cli(*base, "--before", "yesterday").json()["results"]] == ["old.md"]


def test_help_documents_exit_codes(cli) -> None:
    r = cli("--help")
    assert r.code == 0
    for line in ("0  success", "1  failure", "2  usage error", "3  red"):
        assert line in r.out


def test_mass_delete_refusal_exits_1(cli, vault: Vault, tmp_path: Path) -> None:
    for i in range(40):
        vault.note(f"n{i}.md", f"note {i}\n")
    args = ("--vault", str(vault.root), "--index", str(tmp_path / "i"))
    assert cli("reindex", *args).code == 0
    for i in range(35):
        vault.remove(f"n{i}.md")
    r = cli("reindex", *args)
    assert r.code == 1 and "--allow-mass-delete" in r.err
    r = cli("reindex", "--allow-mass-delete", "--json", *args)
    assert r.code == 0 and r.json()["deleted"] == 35


def test_an_allowed_mass_deletion_without_a_daemon_is_committed(cli, vault: Vault, tmp_path: Path) -> None:
    for i in range(40):
        vault.note(f"n{i}.md", f"note {i}\n")
    for argv in (
        ["init", "-q"],
        ["config", "user.email", "owner@example.com"],
        ["config", "user.name", "Vault Owner"],
        ["add", "-A"],
        ["commit", "-qm", "forty notes"],
    ):
        subprocess.run(["git", "-C", str(vault.root), *argv], check=True)
    args = ("--vault", str(vault.root), "--index", str(tmp_path / "i"))
    assert cli("reindex", *args).code == 0
    for i in range(35):
        vault.remove(f"n{i}.md")
    (vault.root / "n39.md").write_text("note 39, edited meanwhile\n", encoding="utf-8")
    r = cli("reindex", "--allow-mass-delete", *args)
    assert r.code == 0 and "35 deleted" in r.out
    assert "committed the deletion (36 file(s))" in r.out, r.out
    git = ["git", "-C", str(vault.root)]
    assert subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True).stdout == ""
    log = subprocess.run([*git, "log", "-1", "--format=%B"], capture_output=True, text=True).stdout
    assert "origin: local-edit" in log
    assert sorted(subprocess.run([*git, "ls-files"], capture_output=True, text=True).stdout.split()) == [
        f"n{i}.md" for i in range(35, 40)
    ]


def test_contract_check(cli, tmp_path: Path, vault: Vault) -> None:
    good = tmp_path / "good.md"
    good.write_text("# Rules\n\n```yaml\nthresholds:\n  daily_write_cap: 50\n```\n")
    r = cli("contract", "check", str(good))
    assert r.code == 0 and "valid" in r.out
    bad = tmp_path / "bad.md"
    bad.write_text("# Rules\n\n```yaml\nclass_weights:\n  unfiled: 1.5\n```\n")
    r = cli("contract", "check", str(bad), "--json")
    assert r.code == 1
    assert any("class_weights" in e for e in r.json()["errors"])
    # without a file: the vault's contract, or the packaged default when the vault has none
    r = cli("contract", "check", "--vault", str(vault.root))
    assert r.code == 0


def test_dendron_link_convention_from_the_contract(cli, vault: Vault, tmp_path: Path) -> None:
    vault.note("dendron.topic.lookup.md", "How lookup works.\n")
    vault.note("start.md", "See [[Lookup|dendron.topic.lookup]] for details.\n")
    args = ("--vault", str(vault.root), "--index", str(tmp_path / "i"), "--json")
    cli("reindex", *args)
    out = cli("links", "start.md", *args).json()
    assert [d.get("target") for d in out["dangling"]] == ["Lookup"], out
    vault.write("standards/storage-rules.md", "# Rules\n\n```yaml\nlink_convention: dendron\n```\n")
    cli("reindex", "--from-scratch", *args)
    out = cli("links", "start.md", *args).json()
    assert out["dangling"] == [] and [o["resolved"] for o in out["out"]] == ["dendron.topic.lookup.md"], out


def test_a_search_after_a_capture_into_a_vault_never_indexed_reads_the_whole_vault(
    cli, vault: Vault, tmp_path: Path
) -> None:
    vault.note("notes/dendron.md", "# Dendron vaults\n\nA dendron workspace holds several vaults side by side.\n")
    args = ("--vault", str(vault.root), "--index", str(tmp_path / "i"))
    r = cli("capture", "--title", "Lint with ruff", "--body", "The project lints with ruff.", *args)
    assert r.code == 0, r.err
    r = cli("search", "dendron", "vaults", "--mode", "fusion", "--json", *args)
    assert r.code == 0, r.err
    assert [x["note"] for x in r.json()["results"]] == ["notes/dendron.md"]


def test_the_common_options_may_come_before_the_command(cli, vault: Vault, tmp_path: Path) -> None:
    vault.note("notes/otters.md", "# Otters\n\nOtters hold hands while they sleep.\n")
    index = str(tmp_path / "i")
    before = cli("--vault", str(vault.root), "--index", index, "--json", "search", "otters", "--mode", "fusion")
    after = cli("search", "otters", "--mode", "fusion", "--vault", str(vault.root), "--index", index, "--json")
    assert before.code == after.code == 0, before.err
    assert [r["note"] for r in before.json()["results"]] == [r["note"] for r in after.json()["results"]]
    assert before.json()["results"][0]["note"] == "notes/otters.md"
    shown = cli(f"--vault={vault.root}", "--index", index, "remote", "show")  # a command group's sub-command too
    assert shown.code == 0 and "no remote" in shown.out


def test_a_query_word_read_as_an_option_is_answered_with_where_it_goes(cli, vault: Vault, tmp_path: Path) -> None:
    args = ("--vault", str(vault.root), "--index", str(tmp_path / "i"))
    r = cli("search", "-x", *args)
    assert r.code != 0 and "go after `--`" in r.err and "Traceback" not in r.err
    assert cli("search", *args, "--", "-x").code == 0
    r = cli("capture", *args)  # a missing option is no dash-word mistake
    assert "--title" in r.err and "go after" not in r.err
