"""Usage counters: injections and recalls per note, kept in the catalog beside the note's other rows."""

from __future__ import annotations

import argparse
import io
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import Vault

from agentmd.engine.index import usage
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.settings import Settings, resolve


@pytest.fixture
def settings(vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for k, v in {
        "HOME": tmp_path / "home",
        "XDG_CACHE_HOME": tmp_path / "xdg-cache",
        "XDG_STATE_HOME": tmp_path / "xdg-state",
        "XDG_CONFIG_HOME": tmp_path / "xdg-config",
    }.items():
        monkeypatch.setenv(k, str(v))
    monkeypatch.delenv("AGENTMD_VAULT", raising=False)
    vault.note("memory/old.md", "an old note nobody reads\n", captured="2025-01-10")
    vault.note("memory/used.md", "a note agents keep finding\n", captured="2025-01-11")
    vault.note("memory/recalled.md", "a note found on demand\n", captured="2025-01-12")
    vault.note("memory/new.md", "a fresh note\n", captured="2026-11-01")
    vault.note("memory/gone.md", "an archived note\n", captured="2025-01-13", status="archived")
    vault.note("private/diary.md", "a private note\n", captured="2025-01-14")
    s = resolve(vault=str(vault.root))
    with Store(s.cache_dir) as store:
        reconcile(s.vault, store)
    return s


def rows(s: Settings) -> dict[str, tuple[int, int, str | None, str | None]]:
    db = sqlite3.connect(s.catalog_path)
    try:
        q = "SELECT path, injections, recalls, last_injected, last_recalled FROM usage"
        return {p: (i, r, li, lr) for p, i, r, li, lr in db.execute(q)}
    finally:
        db.close()


def test_record_counts_each_note_once_per_call(settings: Settings) -> None:
    when = 1_790_000_000.0
    n = usage.record(settings.catalog_path, ["memory/used.md", "memory/used.md#Heading", ""], "injection", when=when)
    assert n == 1
    usage.record(settings.catalog_path, ["memory/used.md"], "injection")
    usage.record(settings.catalog_path, ["memory/used.md", "memory/recalled.md"], "recall", when=when)
    got = rows(settings)
    assert got["memory/used.md"][:2] == (2, 1)
    assert got["memory/used.md"][3] == usage.now_stamp(when) == "2026-09-21T14:13:20Z"
    assert got["memory/recalled.md"] == (0, 1, None, "2026-09-21T14:13:20Z")
    assert usage.counts(settings.catalog_path, ["memory/used.md", "memory/old.md"]) == {
        "memory/used.md": (2, 1),
        "memory/old.md": (0, 0),
    }
    assert usage.since(settings.catalog_path) == "2026-09-21T14:13:20Z"


def test_bad_kind_and_missing_catalog(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        usage.record(settings.catalog_path, ["memory/used.md"], "peek")
    assert usage.record_quietly(tmp_path / "nope.sqlite3", ["a.md"], "recall") == 0
    assert not (tmp_path / "nope.sqlite3").exists()  # never creates a catalog
    assert usage.record(settings.catalog_path, [], "recall") == 0


def test_a_locked_catalog_drops_counts_quickly(settings: Settings) -> None:
    holder = sqlite3.connect(settings.catalog_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert usage.record_quietly(settings.catalog_path, ["memory/used.md"], "injection", timeout=0.05) == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert rows(settings) == {}


def test_background_writer(settings: Settings) -> None:
    for _ in range(3):
        usage.record_later(settings.catalog_path, ["memory/recalled.md"], "recall")
    assert usage.flush()
    assert rows(settings)["memory/recalled.md"][:2] == (0, 3)


def test_counts_survive_edits_and_rebuilds_and_go_with_the_note(settings: Settings, vault: Vault) -> None:
    usage.record(settings.catalog_path, ["memory/used.md", "memory/old.md"], "injection")
    vault.note("memory/used.md", "a note agents keep finding, edited\n", captured="2025-01-11")
    vault.remove("memory/old.md")
    with Store(settings.cache_dir) as store:
        reconcile(settings.vault, store)
    assert set(rows(settings)) == {"memory/used.md"}  # edit kept the count; delete took it away
    with Store(settings.cache_dir, from_scratch=True) as store:  # `reindex --from-scratch`
        reconcile(settings.vault, store)
    assert rows(settings)["memory/used.md"][0] == 1


def test_orphan_sweep_drops_counts_of_unknown_paths(settings: Settings) -> None:
    usage.record(settings.catalog_path, ["memory/never-existed.md", "memory/used.md"], "recall")
    with Store(settings.cache_dir) as store:
        reconcile(settings.vault, store)
    assert set(rows(settings)) == {"memory/used.md"}


def test_report_lists_old_never_used_notes(settings: Settings) -> None:
    usage.record(settings.catalog_path, ["memory/used.md"], "injection")
    usage.record(settings.catalog_path, ["memory/recalled.md"], "recall")
    exempt = lambda p: p.startswith("private/")  # noqa: E731
    unused, summary = usage.report(settings.catalog_path, unused_days=90, today="2026-11-30", exclude=exempt)
    assert [n.path for n in unused] == ["memory/old.md"]  # not new.md (too young), gone.md (archived), private
    assert summary["captured_before"] == "2026-09-01"
    assert summary["used"] == 2 and summary["never_used"] == 2 and summary["listed"] == 1
    unused, _ = usage.report(settings.catalog_path, unused_days=0, today="2026-11-30")
    assert [n.path for n in unused] == ["memory/old.md", "private/diary.md", "memory/new.md"]
    with pytest.raises(ValueError):
        usage.report(settings.catalog_path, unused_days=-1)


def test_usage_command(settings: Settings) -> None:
    from agentmd.cli.base import common_options as _common
    from agentmd.cli.recall import add_recall_parsers

    p = argparse.ArgumentParser(prog="agentmd")
    add_recall_parsers(p.add_subparsers(dest="command"), _common())
    usage.record(settings.catalog_path, ["memory/used.md"], "injection")

    def run(*argv: str) -> str:
        args = p.parse_args(["usage", "--vault", str(settings.vault), *argv])
        out = io.StringIO()
        assert args.func(args, out, io.StringIO()) == 0
        return out.getvalue()

    text = run("--unused-days", "30")
    assert "memory/old.md" in text and "memory/used.md" not in text and "private/diary.md" not in text
    assert "review only" in text and "counting started" in text
    data = json.loads(run("--json"))
    assert [n["path"] for n in data["unused"]] == ["memory/old.md", "memory/recalled.md"]
    assert data["unused"][0]["injections"] == 0 and data["used"] == 1


def test_usage_command_upgrades_an_old_catalog(settings: Settings) -> None:
    db = sqlite3.connect(settings.catalog_path)
    db.execute("DROP TABLE usage")
    db.commit()
    db.close()
    assert usage.record_quietly(settings.catalog_path, ["memory/used.md"], "injection") == 0
    Catalog(settings.catalog_path).close()
    assert usage.record_quietly(settings.catalog_path, ["memory/used.md"], "injection") == 1


def test_background_writer_counts_every_batch_of_a_burst(settings: Settings) -> None:
    for i in range(60):
        usage.record_later(settings.catalog_path, ["memory/recalled.md", f"memory/used.md#Part {i % 2}"], "recall")
        usage.record_later(settings.catalog_path, ["memory/used.md"], "injection")
    assert usage.flush()
    got = rows(settings)
    assert got["memory/recalled.md"][:2] == (0, 60)
    assert got["memory/used.md"][:2] == (60, 60)  # each batch counts its note once, every batch counts
    assert usage.since(settings.catalog_path) is not None


def test_background_writer_follows_a_replaced_catalog(settings: Settings) -> None:
    usage.record_later(settings.catalog_path, ["memory/used.md"], "recall")
    assert usage.flush()
    assert rows(settings)["memory/used.md"][:2] == (0, 1)
    for suffix in ("", "-wal", "-shm"):  # what a catalog found unreadable goes through: a new file
        Path(str(settings.catalog_path) + suffix).unlink(missing_ok=True)
    usage.record_later(settings.catalog_path, ["memory/used.md"], "recall")
    assert usage.flush()
    assert not settings.catalog_path.exists()  # the writer never creates a catalog
    Catalog(settings.catalog_path).close()
    usage.record_later(settings.catalog_path, ["memory/used.md"], "recall")
    assert usage.flush()
    assert rows(settings) == {"memory/used.md": (0, 1, None, rows(settings)["memory/used.md"][3])}


def test_background_writer_recovers_after_a_failed_write(settings: Settings) -> None:
    usage.record_later(settings.catalog_path, ["memory/used.md"], "recall")
    assert usage.flush()
    db = sqlite3.connect(settings.catalog_path)
    db.execute("DROP TABLE usage")
    db.commit()
    db.close()
    usage.record_later(settings.catalog_path, ["memory/used.md"], "recall")
    assert usage.flush()  # dropped and logged, the writer goes on
    Catalog(settings.catalog_path).close()  # the schema check puts the table back
    usage.record_later(settings.catalog_path, ["memory/old.md"], "recall")
    assert usage.flush()
    assert set(rows(settings)) == {"memory/old.md"}
