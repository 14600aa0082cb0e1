"""Only confirmed notes reach a prompt, and only above the recall floor; search labels what it returns,
hides self-probe notes unless asked, and says when nothing reached its floor. Real vaults, real indexes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import CliResult, Vault
from search_helpers import search

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.recall.query import sanitize_query
from agentmd.engine.search import confidence as conf
from agentmd.engine.search.query import search as typed_search
from agentmd.engine.search.recall import RECALL_COSINE, RELATIVE_FLOOR, Walls, gather
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract, validate

BODY = "Set {word} in the gateway config before the canary rollout; the load balancer reads it at start."


def _vault(vault: Vault) -> None:
    vault.note("notes/filed.md", BODY.format(word="retention_window"), title="Gateway retention window")
    vault.note(
        "notes/unfiled.md",
        BODY.format(word="retention_window"),
        title="Gateway retention window draft",
        status="unfiled",
    )
    vault.note(
        "notes/clip.md", BODY.format(word="retention_window"), title="Gateway retention window clip", trust="untrusted"
    )
    vault.note(
        "notes/probe.md",
        BODY.format(word="retention_window"),
        title="Gateway retention window probe",
        probe="self-probe",
    )
    vault.note("notes/other.md", "Sourdough wants a long cold proof and a very hot oven.", title="Sourdough")
    vault.note("notes/more.md", "Fold the dough every half hour in the first two hours.", title="Dough folds")


@pytest.fixture
def store(vault: Vault, cache_dir: Path) -> Store:
    _vault(vault)
    s = Store(cache_dir)
    reconcile(vault.root, s)
    return s


def _search(store: Store, query: str, **kw: object) -> dict[str, object]:
    request = SearchRequest(query=query, limit=10, **kw)  # type: ignore[arg-type]
    return search(store.index, default_contract(), request, store.catalog)


def test_unconfirmed_notes_are_searchable_labelled_and_demoted(store: Store) -> None:
    with store:
        res = _search(store, "gateway retention window")
    rows = {r["note"]: r for r in res["results"]}  # type: ignore[attr-defined]
    assert {"notes/filed.md", "notes/unfiled.md", "notes/clip.md"} <= set(rows)
    assert rows["notes/unfiled.md"]["status"] == "unfiled" and "unfiled" in rows["notes/unfiled.md"]["penalties"]
    assert rows["notes/clip.md"]["trust"] == "untrusted" and "untrusted" in rows["notes/clip.md"]["penalties"]
    assert rows["notes/filed.md"]["trust"] is None and rows["notes/filed.md"]["penalty"] == 1.0
    assert res["results"][0]["note"] == "notes/filed.md"  # type: ignore[index]
    assert all(0.0 <= r["confidence"] <= 1.0 for r in rows.values())


def test_probe_notes_are_hidden_from_search_unless_asked(store: Store) -> None:
    with store:
        hidden = _search(store, "gateway retention window")
        asked = _search(store, "gateway retention window", include_probe=True)
    assert "notes/probe.md" not in {r["note"] for r in hidden["results"]}  # type: ignore[attr-defined]
    assert "notes/probe.md" in {r["note"] for r in asked["results"]}  # type: ignore[attr-defined]


def test_a_generated_page_ranks_below_the_notes_it_lists_and_is_never_recalled(vault: Vault, cache_dir: Path) -> None:
    listing = "\n".join(
        f"- [[{t}]]: {b}"
        for t, b in [
            ("Gateway retention window", BODY.format(word="retention_window")),
            ("Gateway timeouts", "The gateway retention window and timeouts are set in the gateway config."),
            ("Retention window sizes", "A gateway retention window of a day; a retention window of a week."),
        ]
    )
    vault.note("notes/filed.md", BODY.format(word="retention_window"), title="Gateway retention window")
    for path, generated in (
        ("maps/gateway.md", "agentmd maps"),
        ("daily/morning-note-2026-03-05.md", "agentmd morning"),
    ):
        vault.note(path, f"# Gateway\n\n{listing}\n", title="Gateway retention window map", generated=generated)
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        res = _search(s, "retention window before the canary rollout")
        gathered = gather(s.catalog, s.index, Walls.from_contract(default_contract()), res["results"])  # type: ignore[arg-type]
    rows = [r["note"] for r in res["results"]]  # type: ignore[attr-defined]
    print([(r["note"], r["explain"]["rank_score"] if "explain" in r else None, r["score"]) for r in res["results"]])
    assert rows[0] == "notes/filed.md", rows  # the page holds the note's words and more, yet the note comes first
    assert all("generated" in r["penalties"] for r in res["results"][1:])  # type: ignore[index]
    assert [c["path"] for c in gathered["direct"]] == ["notes/filed.md"]


def test_recall_leaves_out_a_conflict_copy_until_a_person_ends_it(vault: Vault, cache_dir: Path) -> None:
    vault.note("notes/rule.md", BODY.format(word="retention_window"), title="Gateway retention window")
    copy = "notes/rule.conflict-laptop-2026-03-05.md"
    vault.note(copy, BODY.format(word="retention_window"), title="Gateway retention window", status="conflict")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        res = _search(s, "gateway retention window")
        gathered = gather(s.catalog, s.index, Walls.from_contract(default_contract()), res["results"])  # type: ignore[arg-type]
    assert copy in {r["note"] for r in res["results"]}  # type: ignore[attr-defined]  # search shows it, to be ended
    assert [c["path"] for c in gathered["direct"]] == ["notes/rule.md"]
    assert any(line.startswith(f"{copy}: a conflict copy") for line in gathered["left_out"])


def test_recall_leaves_out_notes_far_below_the_best_one(vault: Vault, cache_dir: Path) -> None:
    # a prompt that names a note (0.99) finds every note that mentions it over the floor (0.6): those only
    # mention it, and push the few that answer out of the budget
    for name in ("seed-bank", "quickstart", "office-hours-1", "office-hours-2"):
        vault.note(f"notes/{name}.md", BODY.format(word=name), title=name.replace("-", " "))
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        rows = [
            {"note": "notes/seed-bank.md", "confidence": 0.99, "name": "title"},
            {"note": "notes/quickstart.md", "confidence": 0.9},
            {"note": "notes/office-hours-1.md", "confidence": 0.605},
            {"note": "notes/office-hours-2.md", "confidence": 0.605},
        ]
        gathered = gather(s.catalog, s.index, Walls.from_contract(default_contract()), rows)
        alone = gather(s.catalog, s.index, Walls.from_contract(default_contract()), rows[2:])
    assert 0.605 < 0.99 * RELATIVE_FLOOR < 0.9
    assert [c["path"] for c in gathered["direct"]] == ["notes/seed-bank.md", "notes/quickstart.md"]
    assert any("far below the best note's" in line for line in gathered["left_out"])
    assert [c["path"] for c in alone["direct"]] == ["notes/office-hours-1.md", "notes/office-hours-2.md"]


def test_recall_never_gathers_unfiled_untrusted_or_probe_notes(store: Store) -> None:
    contract = default_contract()
    with store:
        res = _search(store, "gateway retention window", include_probe=True)
        gathered = gather(store.catalog, store.index, Walls.from_contract(contract), res["results"])  # type: ignore[arg-type]
    assert [c["path"] for c in gathered["direct"]] == ["notes/filed.md"]
    assert "notes/unfiled.md: unfiled note" in gathered["left_out"]
    assert "notes/clip.md: untrusted note" in gathered["left_out"]
    assert "notes/probe.md: self-probe note" in gathered["left_out"]


def test_confidence_is_bounded_and_monotone_in_word_share() -> None:
    values = [
        conf.confidence(conf.Evidence(word_share=s / 10, coverage=0.5, words=5, title_share=0.2, rarity=0.5))
        for s in range(11)
    ]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert values == sorted(values) and values[-1] > values[0]
    assert conf.confidence(conf.Evidence(0.0, 0.0, 0)) == 0.0
    assert conf.confidence(conf.Evidence(1.0, 1.0, 12, 1.0, 1.0)) <= 1.0


def test_a_result_far_from_the_query_in_meaning_keeps_only_its_cosine_confidence(store: Store) -> None:
    """Every word of the query in a note, but its best chunk far from the query in meaning: the words are
    there in another sense, and the dense arm's cosine alone sets the confidence."""
    query = "retention window gateway canary rollout"
    with store:
        request = SearchRequest(query=query, limit=10, mode="fusion")
        lexical = typed_search(store.index, default_contract(), request, store.catalog)
        words_only = conf.annotate(store.index, query, lexical).to_json()["results"][0]  # type: ignore[index]

        def with_cosine(cosine: float) -> float:
            rows = tuple(replace(row, cosine=cosine) for row in lexical.results)
            annotated = conf.annotate(store.index, query, replace(lexical, results=rows))
            return float(annotated.results[0].confidence or 0.0)

        far, near = with_cosine(conf.COSINE_VETO - 0.05), with_cosine(conf.COSINE_VETO + 0.05)
    assert words_only["confidence"] > 0.5  # type: ignore[operator]
    assert far < 0.1 < 0.5 < near and near >= words_only["confidence"]  # type: ignore[operator]


def test_search_below_its_floor_returns_nothing_and_names_the_closest_miss(store: Store) -> None:
    with store:
        request = SearchRequest(query="canary rollout flaky websocket timeout", limit=10)
        res = search(store.index, default_contract(), request, store.catalog, floor=0.99)
        loose = search(store.index, default_contract(), request, store.catalog, floor=0.0)
    assert res["results"] == [] and loose["results"]
    miss = res["closest_miss"]
    best = max(loose["results"], key=lambda r: r["confidence"])
    assert miss["note"] == best["note"] and miss["confidence"] == best["confidence"]
    assert "confidence floor" in res["note"] and str(best["title"]) in res["note"]


def test_an_off_topic_prompt_injects_nothing_and_an_on_topic_one_its_note(store: Store) -> None:
    contract = default_contract()
    walls = Walls.from_contract(contract)
    assert walls.recall_floor > contract.thresholds.search_floor  # the hook is the stricter

    def injected(prompt: str) -> list[str]:
        request = SearchRequest(query=sanitize_query(prompt), limit=15)
        res = search(store.index, contract, request, store.catalog)
        return [c["path"] for c in gather(store.catalog, store.index, walls, res["results"])["direct"]]

    with store:
        assert injected("please refactor the config loader to use async/await before the rollout") == []
        assert injected("fix the failing unit test in src/parser.rs") == []
        assert injected("what do I set retention_window to in the gateway config?") == ["notes/filed.md"]


def test_the_floors_are_contract_thresholds() -> None:
    contract = default_contract()
    assert 0.0 < contract.thresholds.search_floor < contract.thresholds.recall_floor < 1.0
    errors = validate({"thresholds": {"recall_floor": 1.5}})
    assert any("thresholds.recall_floor" in e for e in errors)


def test_eval_prompts_reports_injections(vault: Vault, cli: object, tmp_path: Path) -> None:
    _vault(vault)
    prompts = tmp_path / "prompts.jsonl"
    lines = [
        {"id": "u1", "prompt": "squash the last three commits into one", "expected": None},
        {"id": "h1", "prompt": "what do I set retention_window to in the gateway config", "expected": "notes/filed.md"},
    ]
    prompts.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    run = cli  # the conftest fixture: agentmd in-process
    res: CliResult = run(
        "eval",
        "prompts",
        str(prompts),
        "--vault",
        str(vault.root),
        "--index",  # type: ignore[operator]
        str(tmp_path / "idx"),
        "--json",
    )
    assert res.code == 0, res.err
    report = res.json()
    assert report["summary"]["silent"] == 1 and report["summary"]["kept"] == 1
    loose = run(
        "eval",
        "prompts",
        str(prompts),
        "--vault",
        str(vault.root),
        "--index",  # type: ignore[operator]
        str(tmp_path / "idx"),
        "--json",
        "--search-floor",
        "0",
        "--recall-floor",
        "0",
    ).json()
    assert loose["recall_floor"] == 0.0 and loose["summary"]["kept"] == 1


def test_recall_leaves_out_a_hit_far_from_the_prompt_in_meaning_unless_the_prompt_names_it(store: Store) -> None:
    """A hybrid hit above the recall floor on its words alone, whose best chunk is far from the prompt in
    meaning, is not pushed into the prompt; one near in meaning is, and so is a note the prompt names."""
    walls = Walls.from_contract(default_contract())
    query = "what do I set retention_window to in the gateway config"
    with store:

        def gathered(cosine: float, named: bool = False) -> dict[str, object]:
            response = _search(store, query, mode="fusion")
            rows = [r for r in response["results"] if r["note"] == "notes/filed.md"]  # type: ignore[attr-defined]
            assert rows and rows[0]["confidence"] >= walls.recall_floor  # its words clear the floor
            rows[0]["cosine"] = cosine  # as a hybrid search gives it
            if named:
                rows[0]["name"] = "title"
            return gather(store.catalog, store.index, walls, rows)

        far, near = gathered(RECALL_COSINE - 0.05), gathered(RECALL_COSINE + 0.05)
        named = gathered(RECALL_COSINE - 0.05, named=True)
    assert far["direct"] == [] and any("far from the prompt" in w for w in far["left_out"])  # type: ignore[attr-defined]
    assert [c["path"] for c in near["direct"]] == ["notes/filed.md"]  # type: ignore[attr-defined]
    assert [c["path"] for c in named["direct"]] == ["notes/filed.md"]  # type: ignore[attr-defined]
