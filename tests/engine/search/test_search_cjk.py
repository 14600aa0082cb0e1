"""Chinese and Japanese queries: their words found without spaces, on a copy of the shared Chinese vault
(ailurus-zh), and text in other scripts kept from an embedder that reads Latin script only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import corpus
from search_helpers import search

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.index.vector_refresh import refresh
from agentmd.engine.index.vectors import VectorStore
from agentmd.engine.search.hybrid import DenseArm
from agentmd.engine.search.planning import query_terms
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract
from agentmd.vault_schema import cjk, scripts


def test_a_cjk_run_is_read_as_its_character_pairs() -> None:
    assert cjk.words("中文输入法") == ["中文", "文输", "输入", "入法"]
    # particles cut a run, question-word pairs are dropped, other scripts stay whole
    assert cjk.words("怎么安装中文输入法") == ["安装", "装中", "中文", "文输", "输入", "入法"]
    assert cjk.words("如何给WSL2配置固定的IP地址") == ["WSL2", "配置", "置固", "固定", "IP", "地址"]
    assert cjk.words("卷积神经网络的池化层") == ["卷积", "积神", "神经", "经网", "网络", "池化", "化层"]
    assert cjk.words("日本語の文章") == ["日本", "本語", "文章"]
    assert cjk.words("一") == ["一"]
    assert query_terms("docker 安装 piclist") == ["docker", "安装", "piclist"]
    assert query_terms("plain english words") == ["plain", "english", "words"]


def test_foreign_share_weighs_a_word_as_two_cjk_characters() -> None:
    assert scripts.foreign_share("plain english") == 0.0
    assert scripts.foreign_share("Wie man einen Server einrichtet, café") == 0.0
    assert scripts.foreign_share("中文") == 1.0
    assert scripts.foreign_share("docker 安装 piclist") == pytest.approx(2 / 6)
    assert scripts.foreign_share("kubernetes 集群部署") == pytest.approx(4 / 6)
    assert scripts.foreign_share("настроить nginx прокси") == pytest.approx(2 / 3)
    assert scripts.foreign_share("1234 ... !!") == 0.0


@pytest.fixture(scope="module")
def chinese(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("zh")
    vault = root / "vault"
    shutil.copytree(corpus("ailurus-zh"), vault)
    with Store(root / "cache") as store:
        reconcile(vault, store)
        yield vault, store


QUESTIONS = {
    "怎么安装中文输入法": "200-note/02-Linux技术/Arch Linux/中文输入法.md",
    "如何给WSL2配置固定的IP地址": "200-note/02-Linux技术/发行版分类/WSL/配置wsl2固定IP.md",
    "测试用例设计方法有哪些": "200-note/05-测试理论/测试用例八大设计方法.md",
    "卷积神经网络的池化层": "200-note/04-深度学习笔记/卷积神经网络.md",
    "怎么卸载蜂鸣器": "200-note/02-Linux技术/常见问题/卸载蜂鸣器模块.md",
    "Arch 安装显卡驱动": "200-note/02-Linux技术/Arch Linux/显卡驱动.md",
}


@pytest.mark.parametrize("mode", ["fusion", "hybrid"])
def test_a_chinese_question_without_spaces_finds_its_note_first(chinese, mode: str) -> None:  # type: ignore[no-untyped-def]
    _vault, store = chinese
    contract = default_contract()
    for question, note in QUESTIONS.items():
        res = search(store.index, contract, SearchRequest(question, mode=mode), store.catalog)
        assert res["results"], question
        assert res["results"][0]["note"] == note, (question, [r["note"] for r in res["results"]])
        assert res["results"][0]["confidence"] >= 0.8, question


class _EnglishOnly:
    """A real embedder of its own kind: the same vector for every text, as an English model gives Chinese
    text vectors that are all alike."""

    model_id = "english-only"
    dim = 4
    latin_only = True

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.tile(np.array([[1.0, 0.0, 0.0, 0.0]], dtype=np.float32), (len(texts), 1))


def test_a_chinese_query_skips_an_embedder_that_does_not_read_it(chinese) -> None:  # type: ignore[no-untyped-def]
    vault, store = chinese
    vectors = VectorStore(store.cache_dir, _EnglishOnly.model_id, _EnglishOnly.dim)
    hashes = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
    keep, chunks = scripts.chunk_rule(_EnglishOnly())
    refresh(vectors, vault, hashes, keep=keep, chunks=chunks)
    vectors.embed_pending(_EnglishOnly(), 100_000)
    arm = DenseArm(vectors, _EnglishOnly())
    contract = default_contract()
    res = search(store.index, contract, SearchRequest("怎么安装中文输入法", mode="hybrid"), store.catalog, arm)
    assert res["dense"]["used"] is False and "mostly in another script" in res["dense"]["reason"]
    assert [r["arms"] for r in res["results"]] == [["lexical"]] * len(res["results"])
    assert res["results"][0]["note"] == QUESTIONS["怎么安装中文输入法"]
    # every chunk's cosine is 1.0 here: without the check each of them would have come back
    mixed = search(store.index, contract, SearchRequest("docker 安装 piclist", mode="hybrid"), store.catalog, arm)
    assert mixed["dense"]["used"] is True
    request = SearchRequest("настроить обратный прокси", mode="hybrid")
    russian = search(store.index, contract, request, store.catalog, arm)
    assert russian["dense"]["used"] is False and russian["results"] == []


def test_chunks_mostly_in_cjk_are_not_given_to_an_embedder_that_does_not_read_them(chinese, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    vault, store = chinese
    hashes = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
    every = VectorStore(tmp_path / "every", "reads-all", 4)
    keep, chunks = scripts.chunk_rule(_ReadsAll())
    assert keep is None and chunks == scripts.ALL_CHUNKS
    refresh(every, vault, hashes, keep=keep, chunks=chunks)
    some = VectorStore(tmp_path / "some", _EnglishOnly.model_id, 4)
    keep, chunks = scripts.chunk_rule(_EnglishOnly())
    refresh(some, vault, hashes, keep=keep, chunks=chunks)
    assert every.coverage().notes == some.coverage().notes == len(hashes)  # every note is listed
    assert 0 < some.coverage().total < every.coverage().total / 4
    some.embed_pending(_EnglishOnly(), 100_000)
    assert some.coverage().done == some.coverage().total
    # prose in Chinese has no vector; a note of shell commands keeps its chunks
    theory, commands = "200-note/05-测试理论/测试理论基础.md", "200-note/02-Linux技术/Arch Linux/中文输入法.md"
    query = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    assert every.cosines(query, [theory, commands]).keys() == set()  # nothing embedded in that store
    assert set(some.cosines(query, [theory, commands])) == {commands}
    arm = DenseArm(some, _EnglishOnly())
    res = search(store.index, default_contract(), SearchRequest("paru fcitx5 rime", mode="hybrid"), store.catalog, arm)
    assert res["dense"]["used"] is True
    assert theory not in {r["note"] for r in res["results"]}


class _ReadsAll(_EnglishOnly):
    model_id = "reads-all"
    latin_only = False


def test_a_seam_between_two_cjk_words_is_not_a_missing_word() -> None:
    held = {"显示": 13, "示中": 0, "中文": 8, "蓝牙": 0, "配置": 18, "置蓝": 0}
    assert cjk.bridges("显示中文", lambda w: held.get(w, 0)) == {"示中"}
    # a pair no note holds at a run's edge may be the word the vault lacks
    assert cjk.bridges("配置蓝牙", lambda w: held.get(w, 0)) == set()
    assert cjk.pairs(["中", "文", "x", "输", "入"]) == ["中文", "输入"]


CODING_PROMPTS = (
    "请把这个函数重构成 async/await 的写法",
    "修复 src/parser.rs 里失败的单元测试",
    "给这个类加上类型注解",
    "这个接口返回 500 错误，帮我看看日志",
)
HELPFUL_PROMPTS = {
    "怎么在 Arch 上配置 fcitx5 中文输入法": "200-note/02-Linux技术/Arch Linux/中文输入法.md",
    "WSL2 怎么设置固定 IP": "200-note/02-Linux技术/发行版分类/WSL/配置wsl2固定IP.md",
}


def test_the_recall_hook_stays_silent_for_chinese_coding_prompts(chinese, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Before CJK words were held only where their characters stand together, a long Chinese note held
    every character of a coding prompt and the hook injected ~500 tokens of C++ and Go notes."""
    vault, store = chinese
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTMD_", "XDG_"))}
    env |= {
        "HOME": str(tmp_path),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }

    def recall(prompt: str) -> dict[str, Any]:
        argv = [
            sys.executable,
            "-m",
            "agentmd",
            "recall",
            "--vault",
            str(vault),
            "--index",
            str(store.cache_dir),
            "--json",
            prompt,
        ]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=True)
        out: dict[str, Any] = json.loads(done.stdout)
        return out

    for prompt in CODING_PROMPTS:
        got = recall(prompt)
        assert got["tokens"] == 0 and got["entries"] == [], (prompt, [e["path"] for e in got["entries"]])
    for prompt, note in HELPFUL_PROMPTS.items():
        got = recall(prompt)
        assert [e["path"] for e in got["entries"]][:1] == [note], prompt


def test_a_store_cut_before_the_rule_is_cut_again_once_keeping_its_vectors(chinese, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A vector store made before chunks in other scripts were left out (every chunk embedded) drops them at
    the next refresh, keeps the vectors of the others without embedding them again, and is not cut again."""
    vault, store = chinese
    hashes = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
    old = VectorStore(tmp_path, _EnglishOnly.model_id, 4)
    refresh(old, vault, hashes)  # as an earlier version did
    old.embed_pending(_EnglishOnly(), 100_000)
    old.save()
    before = old.coverage()
    store_again = VectorStore(tmp_path, _EnglishOnly.model_id, 4)
    assert store_again.chunks == scripts.ALL_CHUNKS
    keep, chunks = scripts.chunk_rule(_EnglishOnly())
    recut, removed = refresh(store_again, vault, hashes, keep=keep, chunks=chunks)
    after = store_again.coverage()
    assert recut == len(hashes) and removed == 0
    assert after.total < before.total / 4 and after.done == after.total  # nothing left to embed
    assert not store_again.has_pending()
    store_again.save()
    reopened = VectorStore(tmp_path, _EnglishOnly.model_id, 4)
    assert reopened.chunks == scripts.LATIN_CHUNKS
    assert refresh(reopened, vault, hashes, keep=keep, chunks=chunks) == (0, 0)
