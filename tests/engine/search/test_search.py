"""Search over a real index: walls, penalties, dates, notes for the caller, and hostile query text."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Vault
from hypothesis import given, settings
from hypothesis import strategies as st
from search_helpers import lexical_search as search
from search_helpers import search as full_search

from agentmd.engine.errors import UsageError
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

CONTRACT = default_contract()


@pytest.fixture
def store(vault: Vault, cache_dir: Path) -> Store:
    vault.note(
        "current.md", "the deploy pipeline uses blue green switching\n", title="Deploy pipeline", status="active"
    )
    vault.note("old.md", "the deploy pipeline used a manual checklist\n", lifecycle="archived")
    vault.note("replaced.md", "deploy pipeline via cron\n", superseded_by="[[current]]")
    vault.note("draft.md", "deploy pipeline draft\n", status="staged")
    vault.note("raw.md", "deploy pipeline thought from a chat\n", status="unfiled")
    vault.note("dated.md", "quarterly budget review\n", captured="2025-03-04")
    vault.note("later.md", "quarterly budget planning\n", date="2026-06-01")
    vault.note("proj-a.md", "release checklist for the service\n", project="alpha")
    vault.note("proj-b.md", "release checklist for the service\n", project="beta")
    vault.note("empty.md", "")
    s = Store(cache_dir)
    reconcile(vault.root, s)
    yield s
    s.close()


def run(store: Store, query: str, **kw: object) -> dict:
    return search(store.index, CONTRACT, SearchRequest(query=query, **kw))  # type: ignore[arg-type]


def test_response_shape_and_fields(store: Store) -> None:
    resp = run(store, "blue green")
    assert set(resp) >= {"results", "note", "matched", "archived_hidden", "superseded_hidden", "staged_hidden"}
    (r,) = resp["results"]
    assert r["path"] == "current.md"
    assert {"path", "score", "penalty", "captured", "captured_source", "snippet"} <= set(r)
    assert "raw_score" not in r and r["penalty"] == 1.0
    assert "blue green" in r["snippet"]
    assert r["captured_source"] == "mtime"


def test_the_score_is_the_confidence_and_the_ranking_numbers_are_explained(store: Store) -> None:
    (plain,) = full_search(store.index, CONTRACT, SearchRequest(query="blue green"))["results"]
    assert 0.0 <= plain["score"] <= 1.0 and plain["score"] == plain["confidence"]
    assert "raw_score" not in plain and "explain" not in plain
    (traced,) = full_search(store.index, CONTRACT, SearchRequest(query="blue green", explain=True))["results"]
    assert traced["score"] == plain["score"]
    assert traced["explain"]["rank_score"] == traced["explain"]["raw_score"] > 1.0  # BM25's scale, not 0..1


def test_walls_hide_and_count_even_at_zero(store: Store) -> None:
    resp = run(store, "deploy pipeline")
    paths = [r["path"] for r in resp["results"]]
    assert set(paths) == {"current.md", "raw.md"}
    assert (resp["archived_hidden"], resp["superseded_hidden"], resp["staged_hidden"]) == (1, 1, 1)
    assert "include_archived" in resp["note"]
    resp = run(store, "blue green")
    assert (resp["archived_hidden"], resp["superseded_hidden"], resp["staged_hidden"]) == (0, 0, 0)


def test_include_archived_returns_walled_notes_demoted(store: Store) -> None:
    resp = run(store, "deploy pipeline", include_archived=True)
    by_path = {r["path"]: r for r in resp["results"]}
    assert set(by_path) == {"current.md", "old.md", "replaced.md", "draft.md", "raw.md"}
    assert by_path["old.md"]["penalty"] == CONTRACT.multiplier("archived") < 1.0
    assert by_path["replaced.md"]["penalty"] == CONTRACT.multiplier("superseded") < 1.0
    assert by_path["raw.md"]["penalties"] == ["unfiled"]
    assert resp["results"][0]["path"] == "current.md"
    assert resp["archived_hidden"] == 0


def test_penalised_best_match_still_comes_first(vault: Vault, cache_dir: Path) -> None:
    vault.note("raw.md", "zeppelin zeppelin zeppelin mooring mast\n", title="Zeppelin mooring", status="unfiled")
    vault.note("other.md", "a passing mention of a zeppelin in a long note about weather and wind and rain\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        resp = search(s.index, CONTRACT, SearchRequest("zeppelin"))
    assert resp["results"][0]["path"] == "raw.md"
    assert resp["results"][0]["penalty"] < 1.0


def test_project_mismatch_is_demoted(store: Store) -> None:
    resp = run(store, "release checklist", project="alpha")
    assert [r["path"] for r in resp["results"]] == ["proj-a.md", "proj-b.md"]
    assert resp["results"][1]["penalties"] == ["project_mismatch"]


def test_a_note_of_no_project_is_demoted_unless_it_holds_for_every_project(vault: Vault, cache_dir: Path) -> None:
    words = "rollback plan for the gateway\n"
    vault.note("own.md", words, project="alpha")
    vault.note("other.md", words, project="beta")
    vault.note("loose.md", words, type="fact")
    vault.note("rule.md", words, type="convention")
    vault.note("standards/gateway.md", words)
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        named = search(s.index, CONTRACT, SearchRequest(query="rollback gateway", project="alpha"))["results"]
        plain = search(s.index, CONTRACT, SearchRequest(query="rollback gateway"))["results"]
    assert {r["path"]: r["penalties"] for r in named} == {
        "own.md": [],
        "other.md": ["project_mismatch"],
        "loose.md": ["project_mismatch"],
        "rule.md": [],  # a rule holds for every project
        "standards/gateway.md": [],  # so does the operator's standards space
    }
    assert all(r["penalties"] == [] for r in plain)  # no project named: nobody is lowered


def test_date_bounds_use_captured(store: Store) -> None:
    assert [r["path"] for r in run(store, "quarterly budget", after="2026-01-01")["results"]] == ["later.md"]
    assert [r["path"] for r in run(store, "quarterly budget", before="2025-12")["results"]] == ["dated.md"]
    assert [r["path"] for r in run(store, "quarterly budget", after="2025", before="2025")["results"]] == ["dated.md"]
    resp = run(store, "quarterly budget", after="2027-01-01")
    assert resp["results"] == [] and "date range" in resp["note"]
    assert resp["note"].startswith("2 note(s) hold these words, none captured within the date range")
    other = run(store, "zebra crossing", after="2027-01-01")  # the words match nothing, whatever the dates
    assert other["results"] == [] and not other["note"].startswith("2 note(s)") and "try" in other["note"]
    by_path = {r["path"]: r for r in run(store, "quarterly budget")["results"]}
    assert by_path["dated.md"]["captured_source"] == "captured"
    assert by_path["later.md"]["captured_source"] == "date"


@pytest.mark.parametrize("bad", ["when pigs fly", "2025-13-01", "2025-02-30", "1-2-3-4"])
def test_bad_dates_are_usage_errors(store: Store, bad: str) -> None:
    with pytest.raises(UsageError, match="YYYY-MM-DD"):
        run(store, "budget", after=bad)


def test_date_bounds_read_ages_and_words_against_the_search_day(store: Store) -> None:
    """`yesterday`, `3d` or `last week` as a bound, read against the request's `now`: the same day as its date."""
    paths = lambda **kw: sorted(r["path"] for r in run(store, "quarterly budget", **kw)["results"])  # noqa: E731
    assert paths(after="yesterday", now="2026-06-02") == paths(after="2026-06-01") == ["later.md"]
    assert paths(after="3d", now="2026-06-02") == ["later.md"]
    assert paths(before="last week", now="2026-06-02") == ["dated.md"]  # the week before holds only March 2025's
    assert paths(after="March 2025", before="April 2025") == ["dated.md"]


def test_and_mode_needs_every_word_and_empty_results_say_what_to_do(store: Store) -> None:
    resp = run(store, "quarterly zebra")
    assert resp["results"] == [] and resp["matched"] == 0
    assert "fewer or different" in resp["note"]
    assert "different word" in run(store, "zebra")["note"]
    assert "no searchable words" in run(store, "?? !!")["note"]


def test_file_name_finds_note(store: Store) -> None:
    assert "proj-a.md" in [r["path"] for r in run(store, "proj a")["results"]]


def test_limit_and_mode_are_validated(store: Store) -> None:
    with pytest.raises(UsageError):
        run(store, "deploy", limit=0)
    with pytest.raises(UsageError, match="mode"):
        run(store, "deploy", mode="magic")
    assert len(run(store, "deploy pipeline", include_archived=True, limit=2)["results"]) == 2


HOSTILE = [
    "foo AND (",
    "title:",
    '"unclosed',
    "a OR",
    "-",
    "+",
    "foo^",
    "[a TO",
    "AND",
    "x:y:z",
    "\\",
    "*",
    "nosuchfield:foo",
    "foo:*",
    "path:current.md",
    "~2",
    "a" * 500,
    "\x00",
    "' OR 1=1 --",
    "((((",
    "🙂 ✨",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(store: Store, query: str) -> None:
    resp = run(store, query)
    assert isinstance(resp["results"], list)


def test_star_does_not_match_everything(store: Store) -> None:
    assert run(store, "*")["results"] == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_no_text_raises(store_for_fuzz: Store, text: str) -> None:
    resp = search(store_for_fuzz.index, CONTRACT, SearchRequest(query=text))
    assert set(resp) >= {"results", "note", "matched"}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([*list("+-^`:{}\"'[]()!\\*~ ANDORTO"), "foo", "bar", "title:", "AND", "OR"]), max_size=12)
)
def test_no_operator_soup_raises(store_for_fuzz: Store, parts: list[str]) -> None:
    search(store_for_fuzz.index, CONTRACT, SearchRequest(query="".join(parts)))


@pytest.fixture(scope="module")
def store_for_fuzz(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("fuzzvault")
    v = Vault(root)
    v.note("a.md", "foo bar baz and or not\n", title="Foo")
    v.note("b.md", "unicode: 教育 café naïve ﬁle\n")
    s = Store(tmp_path_factory.mktemp("fuzzcache"))
    reconcile(root, s)
    yield s
    s.close()


# -- fusion mode, sections, explain -------------------------------------------------------------------------


@pytest.fixture
def long_store(vault: Vault, cache_dir: Path) -> Store:
    vault.note(
        "guide.md",
        "# Guide\n\nIntro text.\n\n## Install\n\nRun the installer with the offline flag.\n\n"
        "## Backups\n\nNightly backups go to the cold bucket; restore drills monthly.\n\n"
        "## Backups for laptops\n\nLaptops back up hourly to the same cold bucket.\n",
        title="Operations guide",
    )
    vault.note("other.md", "Notes on the bucket brigade at the village fair.\n")
    vault.note("cats.md", "The cat sleeps on the warm laptop.\n")
    s = Store(cache_dir)
    reconcile(vault.root, s)
    yield s
    s.close()


def test_fusion_finds_note_missing_one_word(long_store: Store) -> None:
    query = "where do the nightly backups of the cold bucket get restored monthly"
    assert run(long_store, query, mode="and")["results"] == []
    resp = run(long_store, query)
    assert resp["mode"] == "fusion"
    assert resp["results"][0]["note"] == "guide.md"


def test_fusion_rejects_questions_no_note_answers(long_store: Store) -> None:
    # each word occurs somewhere, but no two of them together in one note
    resp = run(long_store, "village installer kubernetes autoscaling")
    assert resp["results"] == [] and resp["matched"] == 0


def test_short_query_behaves_like_and(long_store: Store) -> None:
    for q in ("cold bucket", "the cold bucket"):
        fused = [r["note"] for r in run(long_store, q)["results"]]
        strict = [r["note"] for r in run(long_store, "cold bucket", mode="and")["results"]]
        assert fused == strict == ["guide.md"]


def test_result_points_at_best_section_and_per_note(long_store: Store) -> None:
    (r,) = run(long_store, "restore drills")["results"]
    assert r["path"] == "guide.md#Backups" and r["section"] == "Guide > Backups"
    assert "restore drills" in r["snippet"]
    rows = run(long_store, "cold bucket", per_note=2)["results"]
    assert [x["path"] for x in rows] == ["guide.md#Backups", "guide.md#Backups for laptops"]
    with pytest.raises(UsageError):
        run(long_store, "cold bucket", per_note=0)


def test_explain_gives_fields_multipliers_and_fusion_ranks(long_store: Store) -> None:
    (r,) = run(long_store, "nightly backups bucket", explain=True)["results"][:1]
    ex = r["explain"]
    assert ex["plan"] == "fusion"
    assert set(ex["fields"]) == {"title", "meta", "body"} and ex["fields"]["body"] > 0
    assert ex["fusion_ranks"] and all(rank >= 1 for rank in ex["fusion_ranks"].values())
    assert ex["multipliers"] == {}
    question = run(long_store, "where do nightly backups of the cold bucket go", explain=True)["results"][0]
    assert question["explain"]["plan"] == "question" and question["note"] == "guide.md"


def test_entity_page_comes_first_when_the_query_names_it(vault: Vault, cache_dir: Path) -> None:
    vault.note("projects/widget.md", "Our widget library: build notes.\n", entity="repo:acme/widget", title="Widget")
    for i in range(3):
        vault.note(f"n{i}.md", "acme/widget release checklist, release checklist, release checklist\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        resp = search(s.index, CONTRACT, SearchRequest("acme/widget release checklist"), s.catalog)
        assert resp["results"][0]["path"] == "projects/widget.md"
        assert resp["results"][0]["entity"] == "repo:acme/widget"
        assert {r["note"] for r in resp["results"][1:]} == {"n0.md", "n1.md", "n2.md"}
        plain = search(s.index, CONTRACT, SearchRequest("release checklist"), s.catalog)
        assert plain["results"][0]["note"] != "projects/widget.md"


def test_question_words_are_split_at_punctuation() -> None:
    from agentmd.engine.search.planning import split_words

    assert split_words(["IL-6", "the", "TNF-alpha", "il", "cells."]) == ["IL", "6", "TNF", "alpha", "cells"]


def test_a_question_admits_a_note_holding_one_rare_word(vault: Vault, cache_dir: Path) -> None:
    vault.note("fish.md", "Zebrafish studies in the lab.\n")
    for i in range(120):  # "zebrafish" is held by 1 note in 121 (under RARE_SHARE), "water" by 120
        vault.note(f"w{i:03d}.md", f"Notes on water use, entry {i}.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        long_one = "does zebrafish fin regeneration depend on water temperature and daylight"
        for q in (long_one, "zebrafish fin water daylight"):
            assert [r["note"] for r in search(s.index, CONTRACT, SearchRequest(q))["results"]] == ["fish.md"]
        common_only = "does coral fin regeneration depend on water temperature and daylight"
        assert search(s.index, CONTRACT, SearchRequest(common_only))["results"] == []


def test_a_small_vault_admits_no_note_on_one_word(vault: Vault, cache_dir: Path) -> None:
    vault.note("fish.md", "Zebrafish studies in the lab.\n")
    for i in range(10):  # 11 notes: one note in 11 is not rare by share, so a question needs two of its words
        vault.note(f"w{i}.md", f"Notes on water use, entry {i}.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        q = "does zebrafish fin regeneration depend on water temperature and daylight"
        assert search(s.index, CONTRACT, SearchRequest(q))["results"] == []
