"""Maps of content: `agentmd maps` lists the notes by the contract's facets on generated pages under maps/,
rebuilt from the notes alone (a second run writes nothing), one `origin: maps` commit; private, walled and
self-probe notes are never listed, a page whose value is gone is archived, and the recall hook never injects a
map nor counts its links."""

from __future__ import annotations

from pathlib import Path

import pytest
from curate_helpers import dirty, head, note
from daemon_helpers import git, is_clean, make_repo, origins, wait_until
from enrich_helpers import fm

from agentmd.engine.curate.maps import INDEX
from agentmd.engine.daemon.jobs_host import DaemonJobs
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.store import Store
from agentmd.engine.search.recall import Walls, gather
from agentmd.engine.settings import resolve

ALPHA = ["memory/decisions/alpha-db.md", "memory/semantic/alpha-cache.md", "memory/semantic/alpha-queue.md"]
BETA = "memory/semantic/beta-api.md"
SECRET = "wombat"  # only the private note's title holds it


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    note(root, ALPHA[0], "Alpha keeps its data in Postgres.", title="Alpha database", type="decision",
         project="alpha", captured="2025-03-01", summary="Postgres for alpha.",
         topic="[storage, databases]")  # fmt: skip
    note(root, ALPHA[1], "Alpha caches in Redis.", title="Alpha cache", type="fact", project="alpha",
         captured="2025-04-01", topic="storage")  # fmt: skip
    note(root, ALPHA[2], "Alpha queues jobs.", title="Alpha queue", type="fact", project="alpha",
         captured="2025-05-01", person='"[[Ada]]"')  # fmt: skip
    note(root, BETA, "Beta serves JSON.", title="Beta API", type="fact", project="beta", captured="2025-02-01")
    note(root, "private/alpha-salaries.md", "Salaries.", title=f"Alpha {SECRET}", project="alpha", type="fact")
    note(root, "memory/semantic/alpha-old.md", "Old.", title="Alpha old", project="alpha", lifecycle="archived")
    note(root, "memory/probe.md", "Probe.", title="Probe", project="alpha", probe="self-probe")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    return root


def maps(cli, vault: Path, *extra: str) -> dict:  # type: ignore[no-untyped-def]
    r = cli("maps", "--vault", str(vault), "--index", str(vault.parent / "idx"), "--json", *extra)
    assert r.code == 0, r.err + r.out
    return r.json()


def test_maps_list_the_notes_by_facet_and_a_second_run_writes_nothing(cli, vault) -> None:  # type: ignore[no-untyped-def]
    before = head(vault)
    dry = maps(cli, vault)
    assert dry["dry_run"] and dry["written"] and dirty(vault) == "" and head(vault) == before
    done = maps(cli, vault, "--yes")
    assert sorted(done["written"]) == sorted(
        ["maps/index.md", "maps/project.md", "maps/project/alpha.md", "maps/topic.md", "maps/topic/storage.md",
         "maps/person.md"]
    )  # fmt: skip
    assert origins(vault)[0] == "maps" and git(vault, "rev-list", "--count", f"{before}..HEAD").strip() == "1"

    page = (vault / "maps/project/alpha.md").read_text(encoding="utf-8")
    meta = fm(vault, "maps/project/alpha.md")
    assert meta["kind"] == "moc" and meta["generated"] == "agentmd maps" and meta["lifecycle"] == "pinned"
    assert (meta["facet"], meta["value"]) == ("project", "alpha")
    decisions, facts = page.split("## decision")[1].split("## fact")
    assert "[[memory/decisions/alpha-db|Alpha database]] · 2025-03-01 · Postgres for alpha." in decisions
    assert facts.index("alpha-queue") < facts.index("alpha-cache")  # newest first
    assert SECRET not in page and "alpha-old" not in page and "probe" not in page.split("---")[2]
    listing = (vault / "maps/project.md").read_text(encoding="utf-8")
    assert (
        "[[maps/project/alpha|alpha]] (3 notes)" in listing
        and "- beta: [[memory/semantic/beta-api|Beta API]]" in listing
    )
    assert "- Ada: [[memory/semantic/alpha-queue|Alpha queue]]" in (vault / "maps/person.md").read_text(
        encoding="utf-8"
    )
    assert "[[maps/project|project]]" in (vault / "maps/index.md").read_text(encoding="utf-8")

    again = maps(cli, vault, "--yes")
    assert again["written"] == [] and dirty(vault) == "" and origins(vault)[0] == "maps"
    assert git(vault, "rev-list", "--count", f"{before}..HEAD").strip() == "1"


def test_a_value_no_note_carries_any_more_is_archived_not_deleted(cli, vault) -> None:  # type: ignore[no-untyped-def]
    maps(cli, vault, "--yes")
    for rel in ALPHA[1:]:
        text = (vault / rel).read_text(encoding="utf-8").replace("topic: storage\n", "")
        (vault / rel).write_text(text, encoding="utf-8")
    text = (vault / ALPHA[0]).read_text(encoding="utf-8").replace("topic: [storage, databases]\n", "")
    (vault / ALPHA[0]).write_text(text, encoding="utf-8")
    git(vault, "commit", "-qam", "no topics")
    done = maps(cli, vault, "--yes")
    assert sorted(done["archived"]) == ["maps/topic.md", "maps/topic/storage.md"]  # and the empty facet
    assert fm(vault, "maps/topic/storage.md")["lifecycle"] == "archived"
    assert "No note carries this value any more." in (vault / "maps/topic/storage.md").read_text(encoding="utf-8")
    assert maps(cli, vault, "--yes")["written"] == []


def test_the_recall_hook_never_injects_a_map(cli, vault) -> None:  # type: ignore[no-untyped-def]
    maps(cli, vault, "--yes")
    with Store(vault.parent / "idx") as store:
        store.index.close()
        assert "generated" in store.catalog.get("maps/project/alpha.md").flags  # type: ignore[union-attr]
        got = gather(store.catalog, None, Walls(), [{"path": "maps/project/alpha.md"}, {"path": ALPHA[0]}])
    assert [c["path"] for c in got["direct"]] == [ALPHA[0]]
    assert any(o.startswith("maps/project/alpha.md: a generated page") for o in got["left_out"])
    assert all(c["path"].startswith("memory/") for c in got["linked"])


def test_the_maps_job_writes_through_the_daemon_and_again_writes_nothing(vault, env) -> None:  # type: ignore[no-untyped-def]
    daemon = Daemon(resolve(vault=str(vault)), port=0, commit_debounce=0.2, probe_interval=0)
    daemon.start()
    try:
        wait_until(lambda: not daemon.health()["index_stale"], what="first pass")
        jobs = DaemonJobs(daemon)
        assert jobs.scheduler.reload().jobs["maps"].enabled is False  # it writes into the vault: the owner turns it on
        ran = jobs.scheduler.run_named("maps")
        assert ran["outcome"] == "ok" and ran["changed"]["written"] == 6 and ran["changed"]["commits"], ran
        wait_until(lambda: is_clean(vault) and origins(vault)[0] == "maps", 10, "the maps' commit")
        wait_until(lambda: daemon.store is not None and daemon.store.catalog.get(INDEX) is not None, 10, "indexed")
        again = jobs.scheduler.run_named("maps")
        assert again["outcome"] == "ok" and again["changed"]["written"] == 0 and "commits" not in again["changed"]
    finally:
        daemon.stop()
