"""`agentmd enrich` on a copy of a real vault (../shared/corpora/obsidian-tasks/docs): real notes, their real
bodies (tables, code fences, callouts, embeds) captured as unfiled notes, judged through the claude adapter by
the scripted stand-in. Every body stays byte for byte, every other file of the vault is untouched, each filing is
committed with `origin: enrich`, and a second run pays for nothing."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import shutil
from pathlib import Path

import pytest
from conftest import CORPORA
from daemon_helpers import git, make_repo, origins
from enrich_helpers import Model, answer, body, config, fm, outcomes, run

from agentmd.vault_schema import split_frontmatter

CORPUS = CORPORA / "obsidian-tasks" / "docs"
OLD = (dt.datetime.now(dt.UTC) - dt.timedelta(days=5)).isoformat(timespec="seconds")
SPECIAL = ("#", "-", "*", "|", ">", "`", "!", "<", "[", "%", "{", "1.", "^")


def first_sentence(text: str) -> str | None:
    """The note's first line of plain prose, up to its first full stop, when it has at least eight words."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(SPECIAL) or "[[" in line or "](" in line or "`" in line:
            continue
        sentence = re.split(r"(?<=\.)\s", line, maxsplit=1)[0]
        return sentence if len(sentence.split()) >= 8 else None
    return None


def heading(text: str) -> str | None:
    found = re.search(r"^# (.+)$", text, re.MULTILINE)
    return found.group(1).strip() if found else None


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Model:
    return Model.installed(tmp_path, monkeypatch)


def test_enrich_on_a_copy_of_a_real_vault(cli, model: Model, tmp_path: Path) -> None:
    assert CORPUS.is_dir(), f"the shared corpus is missing: {CORPUS}"
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    shutil.copytree(CORPUS, root / "docs")
    # four real notes, taken in a fixed order, become unfiled captures that keep their real bodies
    picked: dict[str, tuple[str, str]] = {}  # capture path -> (title, grounded summary)
    for source in sorted((root / "docs").rglob("*.md")):
        raw = source.read_bytes().decode("utf-8")
        text = split_frontmatter(raw).body
        title, summary = heading(text), first_sentence(text)
        if title is None or summary is None or len(text) < 600:
            continue
        rel = f"memory/2026/11/{len(picked):02d}-{source.stem.lower().replace(' ', '-')}.md"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(
            f"---\nstatus: unfiled\ncaptured: {OLD}\nsource: claude-code\n---\n{text}", encoding="utf-8"
        )
        source.unlink()
        picked[rel] = (title, summary)
        if len(picked) == 4:
            break
    assert len(picked) == 4
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a copy of the obsidian-tasks docs, four notes captured")
    model.rules(
        *(
            {"match": f"Note ({rel})", "answer": answer(title=title, summary=summary, tags=[], related=[])}
            for rel, (title, summary) in picked.items()
        )
    )
    bodies = {rel: body(root, rel) for rel in picked}
    others = {k: v for k, v in tree_hashes(root).items() if k not in picked}

    report = run(cli, root, config(tmp_path))

    assert report["calls"] == 4 and len(model.calls()) == 4
    assert outcomes(report) == {rel: "filed" for rel in picked}, report["notes"]
    assert {rel: body(root, rel) for rel in picked} == bodies  # every real body byte for byte
    assert {k: v for k, v in tree_hashes(root).items() if k not in picked} == others  # nothing else touched
    for rel, (_title, summary) in picked.items():
        filed = fm(root, rel)
        assert filed["status"] == "active" and filed["summary"] == summary and filed["source"] == "claude-code"
    assert origins(root)[:4] == ["enrich"] * 4
    assert git(root, "status", "--porcelain") == ""

    again = run(cli, root, config(tmp_path))  # nothing changed: nothing is paid for
    assert again["calls"] == 0 and len(model.calls()) == 4
