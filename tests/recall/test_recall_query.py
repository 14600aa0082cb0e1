"""From a prompt to the recall search: query words, the session's project, the contract's walls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentmd.engine.recall.query import WALLS_CACHE, bind_project, load_walls, sanitize_query
from agentmd.engine.settings import Settings


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Why did we pick postgres for the ledger?", "pick postgres ledger"),
        ("see https://x.example/a?b=1 and www.example.org/y about caching", "caching"),
        # a path gives its file's name, an e-mail address nothing
        ("fix src/api/webhooks.py and C:\\tmp\\x then mail dev@example.org", "fix webhooks mail"),
        ("fix the failing unit test in src/parser.rs", "fix failing unit test parser"),
        ("edit ~/.bashrc and ./scripts/build.sh", "edit bashrc build"),
        # words joined by a slash are words; a slash command is not
        ("please refactor this function to use async/await", "refactor function use async await"),
        ("/review the TCP/IP handshake", "TCP IP handshake"),
        ("```python\nsecret_code_words()\n```\nretry backoff", "retry backoff"),
        ("ok, thanks! yes please", ""),
        ("Retry retry RETRY `backoff()` (backoff) deadbeefcafe1234", "Retry backoff"),
        ("<system-reminder>obey</system-reminder> vacuum", "obey vacuum"),
    ],
)
def test_sanitize_query(prompt: str, expected: str) -> None:
    assert sanitize_query(prompt) == expected


def test_sanitize_query_caps_meaningful_words() -> None:
    words = [f"word{i}" for i in range(30)]
    assert sanitize_query(" the ".join(words)).split() == words[:12]
    assert len(sanitize_query(" ".join(words), max_words=5).split()) == 5


def test_a_stop_word_is_kept_only_when_named_and_after_a_kept_word() -> None:
    prompt = "what did I note about free will and the will of others"
    assert sanitize_query(prompt) == "note free others"
    # `will` follows `free` once and `the` once: kept after the word it follows in the note's name, once
    assert sanitize_query(prompt, keep={"will"}) == "note free will others"
    assert sanitize_query("will it rain", keep={"will"}) == "rain"  # nothing kept before it
    assert sanitize_query("free of will", keep={"will"}) == "free"  # a dropped stop word between


def test_a_long_chinese_clause_is_read_in_slices_not_dropped() -> None:
    clause = "我想知道怎么在Linux系统上安装中文输入法并且把它设置成默认的输入法应该修改哪些配置文件才行"
    assert len(clause) > 40  # one token: no spaces, no punctuation
    query = sanitize_query(clause)
    assert "".join(query.split()) == clause
    assert all(len(word) <= 16 for word in query.split())
    assert "Linux" in query.split()  # the Latin word inside the clause stays whole
    assert sanitize_query("a" * 41 + " vacuum") == "vacuum"  # a long Latin token is still a blob


def test_bind_project_rule(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "projects" / "ledgerline").mkdir(parents=True)
    (vault / "projects" / "tide_watch").mkdir(parents=True)
    repo = tmp_path / "code" / "Ledgerline"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert bind_project(repo / "src", vault, "projects")[0] == "ledgerline"  # folder name, case-insensitive
    assert bind_project(tmp_path / "x" / "tide-watch", vault, "projects")[0] == "tide_watch"
    # the walk stops at the work tree's root: a parent folder named like a project does not bind
    nested = tmp_path / "ledgerline" / "other-repo"
    (nested / ".git").mkdir(parents=True)
    assert bind_project(nested, vault, "projects") == (None, "no binding file; no folder matches a project folder")
    # a binding file wins over folder names, the nearest one first
    (repo / ".agentmd").write_text("# binding\nproject: 'billing'  # the billing project\n")
    assert bind_project(repo / "src", vault, "projects")[0] == "billing"
    (repo / "src" / ".agentmd").write_text("project: none\n")
    project, source = bind_project(repo / "src", vault, "projects")
    assert project is None and source.startswith("binding file")
    assert bind_project(None, vault, "projects")[0] is None


def test_walls_cache_follows_the_contract(indexed: Settings) -> None:
    walls = load_walls(indexed)
    assert walls.recall_exempt_areas == ("private",) and walls.projects_folder == "projects"
    contract = indexed.vault / "standards" / "storage-rules.md"
    contract.parent.mkdir()
    contract.write_text("```yaml\nrecall_exempt_areas: [private, people]\n```\n")
    assert load_walls(indexed).recall_exempt_areas == ("private", "people")
    assert json.loads((indexed.state_dir / WALLS_CACHE).read_text())["recall_exempt_areas"] == ["private", "people"]


def test_terminal_output_and_text_not_in_utf8_leave_the_query_clean() -> None:
    """A prompt holding pasted terminal output (colour sequences, bells, NULs) or bytes that were not UTF-8 (lone
    surrogates): the query keeps the words, and nothing a daemon would refuse reaches it."""
    query = sanitize_query("money integer cents \x00\x1b[31m\x07\u202e\ud800 bell")
    assert query == "money integer cents bell"
    assert sanitize_query("money \udcff\udcfe cents") == "money cents"
    assert not any(ch < " " or "\ud800" <= ch <= "\udfff" for ch in query)
