"""Entity references (repo, issue, release, commit) and derived aliases (acronyms, compound identifiers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.vault_schema import derived_aliases, entity_uri, extract_entities, parse_note, query_entity_uris
from tests.conftest import Vault, corpus

# --- entities --------------------------------------------------------------------------------------------------


def uris(text: str) -> list[str]:
    return [e.uri for e in extract_entities(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see https://github.com/Obsidian-Tasks-Group/obsidian-tasks", ["repo:obsidian-tasks-group/obsidian-tasks"]),
        ("github.com/owner/repo.git", ["repo:owner/repo"]),
        ("(https://www.github.com/o/r).", ["repo:o/r"]),
        ("fixed in owner/repo#12", ["repo:owner/repo", "issue:owner/repo#12"]),
        ("https://github.com/o/r/issues/2061#issuecomment-1", ["repo:o/r", "issue:o/r#2061"]),
        ("https://github.com/o/r/pull/3121", ["repo:o/r", "issue:o/r#3121"]),  # PRs share the issue numbers
        ("shipped as owner/repo@v1.2.3", ["repo:owner/repo", "release:owner/repo@v1.2.3"]),
        ("owner/repo@1.0.0-rc.1", ["repo:owner/repo", "release:owner/repo@1.0.0-rc.1"]),
        ("https://github.com/o/r/releases/tag/v2.0.0", ["repo:o/r", "release:o/r@v2.0.0"]),
        (
            "https://github.com/o/r/commit/5649417006a5ccf80cdaaaeb2bc404db5c6f6a86",
            ["repo:o/r", "commit:5649417006a5ccf80cdaaaeb2bc404db5c6f6a86"],
        ),
        ("https://github.com/o/r/pull/7/commits/abc1234", ["repo:o/r", "issue:o/r#7", "commit:abc1234"]),
        ("reverted in abc1234.", ["commit:abc1234"]),
        (
            "([da825a9](https://github.com/d/d/commit/da825a9d2b1e))",
            ["commit:da825a9", "repo:d/d", "commit:da825a9d2b1e"],
        ),
        ("`fbc07769235bca514f88be79a523311d72c7cafd`", ["commit:fbc07769235bca514f88be79a523311d72c7cafd"]),
    ],
)
def test_entities(text: str, expected: list[str]) -> None:
    assert uris(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "1. a list item\n2. another",  # list markers
        "- #1 and #12 with no repository",  # a bare number is not qualified here
        "colour #a1b2c3d and #ff00ff80",  # colours
        "on 2024-01-01, 20240101 and 1234567",  # dates and all-digit runs
        "#todo #task #abc1234",  # tags
        "deadbeef, defaced, effaced",  # hex letters only: words
        "1e10000 and b1000000 and 10001011b",  # a number, an address, binary
        "block ^abc1234 and 0xdeadbeef1 and sha256:abcdef1234",  # block ids, hex literals, prefixed digests
        "uuid 123e4567-e89b-12d3-a456-426614174000",
        "https://example.com/abc1234def5 and https://example.com/o/r#12",  # hashes inside other addresses
        "docs.github.com/en/get-started and gist.github.com/someone/abc123",  # GitHub's own pages
        "https://github.com/users/someone and https://github.com/settings/profile",
        "![logo](https://github.com/o/r/raw/main/logo.png)",  # an image hosted on GitHub
        "src/components/view#12 and a/b (a path, not a repository)",
        "npm i @scope/pkg@1.2.3",
        "```\nabc1234 https://github.com/o/r owner/repo#1\n```",  # fenced code
        "ABCDEF1 upper-case hex",
        "a" * 7 + "1" * 34,  # 41 characters: longer than a sha-1
    ],
)
def test_entity_false_positives(text: str) -> None:
    assert uris(text) == []


def test_entity_lines_text_and_dedupe() -> None:
    refs = extract_entities("intro\nsee owner/repo#5 and owner/repo#5\n\nhttps://github.com/owner/repo\n")
    assert [(e.uri, e.kind, e.text, e.line) for e in refs] == [
        ("repo:owner/repo", "repo", "owner/repo#5", 2),
        ("issue:owner/repo#5", "issue", "owner/repo#5", 2),
        ("repo:owner/repo", "repo", "https://github.com/owner/repo", 4),
    ]


def test_note_entities_use_file_lines_and_read_frontmatter_addresses() -> None:
    data = b"---\nsource_url: https://github.com/o/r/issues/3\nfingerprint: 4f3a9c2e1d\n---\nfix abc1234\n"
    note = parse_note("n.md", data, 0)
    assert [(e.uri, e.line) for e in note.entities] == [("repo:o/r", 2), ("issue:o/r#3", 2), ("commit:abc1234", 5)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("repo:Owner/Name", "repo:owner/name"),
        ("issue:o/r#12", "issue:o/r#12"),
        ("https://github.com/o/r/issues/12", "issue:o/r#12"),
        ("https://github.com/O/R", "repo:o/r"),
        ("o/r@v1.2.3", "release:o/r@v1.2.3"),
        ("alexherrero/crickets", "repo:alexherrero/crickets"),
        ("a/b and c/d", None),
        ("just words", None),
        (["repo:o/r"], None),
        (None, None),
    ],
)
def test_entity_page_values(value: object, expected: str | None) -> None:
    assert entity_uri(value) == expected


def test_query_entity_uris() -> None:
    assert query_entity_uris("what do I know about alexherrero/crickets") == ["repo:alexherrero/crickets"]
    assert query_entity_uris("what shipped in agentm/agentm@v10.0.0") == [
        "release:agentm/agentm@v10.0.0",
        "repo:agentm/agentm",
    ]
    assert query_entity_uris("plain words only") == []


def test_entities_in_real_notes() -> None:
    root = corpus("dendron-site")
    rel = "vault/changelog.past-versions.0-1-x.md"
    note = parse_note(rel, (root / rel).read_bytes(), 0)
    found = {(e.uri, e.line) for e in note.entities}
    assert ("commit:da825a9", 854) in found
    assert ("commit:da825a9d2b1ec10a3f9d3eac20db06448fe5344b", 854) in found
    assert ("repo:dendronhq/dendron", 854) in found


# --- derived aliases -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We use Write-Ahead Logging (WAL) here.", ["WAL", "write ahead logging"]),
        ("The WAL (write-ahead logging) is fsynced.", ["WAL", "write ahead logging"]),
        ("durable via write-ahead logging (WAL).", ["WAL", "write ahead logging"]),
        ("the Department of Defense (DoD) said", ["department of defense", "DoD"]),  # a function word spells
        ("Bureau of Investigation (BI)", ["BI", "bureau of investigation"]),  # or is skipped
        ("JavaScript Object Notation (JSON)", ["javascript object notation", "JSON"]),  # one letter per hump
        ("APIs (application programming interfaces)", ["API", "application programming interfaces"]),
    ],
)
def test_acronyms_both_directions(text: str, expected: list[str]) -> None:
    assert derived_aliases("note", text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "An ordinary parenthetical (PS) drags nothing in.",
        "Remote calls are fast (RPC) here.",  # initials f, spell nothing
        "WAL (the log we keep)",  # the expansion's initials are not W-A-L
        "Something Else Entirely (SEX)",  # last letter missing
        "Write Ahead (WAL)",  # too few words
        "`Write Ahead Logging (WAL)` in code",
        "a (b) and (x y z)",
    ],
)
def test_acronym_refusals(text: str) -> None:
    assert derived_aliases("note", text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("set max_retry_count and MAX_RETRY_COUNT", ["max retry count"]),
        ("the idx_timestamp_desc index", ["idx timestamp desc"]),
        ("prose maxRetryCount here", ["max retry count"]),
        ("parseXMLFile and HTTPServer", ["parse xml file"]),  # a two-part PascalCase in prose is a name
        ("the SearchIndexWriter class", ["search index writer"]),
        ("`SearchIndex` and `HTTPServer`", ["http server", "search index"]),  # in code two parts are enough
        ("GitHub, JavaScript, YouTube and iPhone", []),
        ("a kebab-case-name in prose", []),  # a hyphen in prose is punctuation
        ("run `kebab-case-name` now", ["kebab case name"]),
        ("```sh\nagentmd --dry-run --from-scratch\n```", ["dry run", "from scratch"]),
        ("__init__ and _private and x_y", []),  # one word, or one-letter parts
        ("https://example.com/some_path/fooBar?a_b=1", []),  # web addresses are not read
        ("base64Encode", ["base64 encode"]),
        ("`f06dcdd8-9880-46c5-8e02-ca4d515f59b9` and `b1000000-b11fffff`", []),  # hex in code is not words
    ],
)
def test_identifier_aliases(text: str, expected: list[str]) -> None:
    assert derived_aliases("note", text) == expected


def test_title_is_read_too() -> None:
    assert derived_aliases("max_retry_count notes", "nothing here") == ["max retry count"]


def test_aliases_sorted_then_capped() -> None:
    idents = [f"name{chr(97 + i)}_part" for i in range(25)] + ["namez_part"] * 4 + ["namey_part"] * 2
    text = "Write-Ahead Logging (WAL)\n" + " ".join(idents)
    got = derived_aliases("note", text, limit=6)
    # acronym pairs first, then identifiers by uses, then alphabetically: the order never depends on the text's
    assert got == ["WAL", "write ahead logging", "namez part", "namey part", "namea part", "nameb part"]
    shuffled = " ".join(reversed(idents)) + "\nWrite-Ahead Logging (WAL)"
    assert derived_aliases("note", shuffled, limit=6) == got
    assert len(derived_aliases("note", text)) == 20


def test_derived_aliases_reach_the_note_meta() -> None:
    note = parse_note("n.md", b"---\naliases: [WAL]\n---\nWrite-Ahead Logging (WAL) and maxRetryCount\n", 0)
    assert note.derived_aliases == ("write ahead logging", "max retry count")  # "WAL" is already an alias
    assert note.meta.split("\n") == ["WAL", "write ahead logging", "max retry count"]


def test_derived_aliases_reach_the_index(vault: Vault, cache_dir: Path) -> None:
    vault.write("memory/retries.md", "# Retries\n\nThe client reads `maxRetryCount` from its settings.\n")
    vault.write("memory/other.md", "# Other\n\nThe maximum is a count of retry attempts, in prose.\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        hits = store.index.search(["max", "retry", "count"], limit=5)
        assert [hits.load(i).path for i in range(len(hits))] == ["memory/retries.md"]


def test_aliases_on_a_real_vault_are_bounded() -> None:
    root = corpus("obsidian-tasks")
    for path in sorted(root.rglob("*.md"))[:120]:
        note = parse_note(path.relative_to(root).as_posix(), path.read_bytes(), 0)
        assert len(note.derived_aliases) <= 20
        assert all(a.strip() and "  " not in a for a in note.derived_aliases)
