"""The door: path normalisation, symlinks, authority levels, project roots, and that deciding never writes."""

from __future__ import annotations

import dataclasses
import itertools
import os
from pathlib import Path
from types import MappingProxyType

import pytest

from agentmd.rules.contract import Contract, default_contract
from agentmd.rules.door import (
    ACTORS,
    Decision,
    DoorRefused,
    decide,
    explain,
    normalize_path,
    project_root_files,
)
from agentmd.rules.errors import RulesError

CONTRACT = default_contract()


def make_vault(root: Path) -> Path:
    """A small real vault: a few spaces, one project with some root files, a stray root file."""
    vault = root / "vault"
    for rel, text in {
        "memory/decisions/old.md": "# old\n",
        "memory/real.md": "# real\n",
        "projects/alpha/charter.md": "# charter\n",
        "projects/alpha/stray.md": "# stray\n",
        "projects/alpha/docs/design.md": "# design\n",
        "standards/storage-rules.md": "# rules\n",
        "private/diary.md": "# diary\n",
        ".git/config": "[core]\n",
        ".obsidian/app.json": "{}\n",
        "README.md": "# vault\n",
    }.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return vault


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path)


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry under `root` (symlinks not followed) with mode, size and mtime."""
    seen: dict[str, tuple[int, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            seen[os.path.relpath(path, root)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    st = os.lstat(root)
    seen["."] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return seen


def with_authority(contract: Contract, **levels: str) -> Contract:
    return dataclasses.replace(contract, authority=MappingProxyType({**contract.authority, **levels}))


# ------------------------------------------------------------------------------------------- the table

# (path, actor, allowed, rule) over the packaged default contract and the vault above.
TABLE: list[tuple[str, str, bool, str]] = [
    # standing: memory
    ("memory/new.md", "agent", True, "level:standing"),
    ("memory/new.md", "operator", True, "level:standing"),
    ("memory/new.md", "phone", True, "level:standing"),
    ("memory/decisions/new.md", "agent", True, "level:standing"),
    ("memory/2026/03/new.md", "agent", True, "level:standing"),
    ("memory/real.md", "agent", True, "level:standing"),  # existing note in a standing space
    # shared: projects (below a project root), daily, inbox, people, references
    ("projects/alpha/docs/new.md", "agent", True, "level:shared"),
    ("projects/alpha/docs/design.md", "agent", True, "level:shared"),
    ("projects/alpha/docs/new.md", "phone", True, "level:shared"),
    ("projects/alpha/docs/new.md", "operator", True, "level:shared"),
    ("projects/overview.md", "agent", True, "level:shared"),  # directly in the projects folder, no project
    ("daily/2026-03-07.md", "agent", True, "level:shared"),
    ("inbox/phone/clip.md", "phone", True, "level:shared"),
    ("people/ada.md", "agent", True, "level:shared"),
    ("references/paper.md", "agent", True, "level:shared"),
    # alignment: standards; operator only
    ("standards/new.md", "agent", False, "level:alignment"),
    ("standards/new.md", "phone", False, "level:alignment"),
    ("standards/new.md", "operator", True, "level:alignment"),
    ("standards/storage-rules.md", "agent", False, "level:alignment"),
    ("standards/storage-rules.md", "operator", True, "level:alignment"),
    # private: nobody, not even the operator
    ("private/new.md", "agent", False, "level:private"),
    ("private/new.md", "phone", False, "level:private"),
    ("private/new.md", "operator", False, "level:private"),
    ("private/diary.md", "operator", False, "level:private"),
    # unknown spaces: the default authority (alignment)
    ("_vault-archive/x.md", "agent", False, "space:unknown"),
    ("scratch/x.md", "agent", False, "space:unknown"),
    ("scratch/x.md", "phone", False, "space:unknown"),
    ("scratch/x.md", "operator", True, "space:unknown"),
    ("Memory/x.md", "agent", False, "space:unknown"),  # spaces match case-sensitively: stricter, never looser
    # vault root: alignment
    ("README.md", "agent", False, "vault-root"),
    ("new-root-note.md", "agent", False, "vault-root"),
    ("new-root-note.md", "phone", False, "vault-root"),
    ("new-root-note.md", "operator", True, "vault-root"),
    # project roots
    ("projects/alpha/blueprint.md", "agent", True, "project-root:allowed"),
    ("projects/alpha/tracker.md", "agent", True, "project-root:allowed"),
    ("projects/alpha/project.yaml", "agent", True, "project-root:allowed"),
    ("projects/alpha/moc-alpha.md", "agent", True, "project-root:allowed"),
    ("projects/alpha/tracker.md", "phone", True, "project-root:allowed"),
    ("projects/beta/charter.md", "agent", True, "project-root:allowed"),  # a project that does not exist yet
    ("projects/beta/moc-beta.md", "agent", True, "project-root:allowed"),
    ("projects/alpha/moc-beta.md", "agent", False, "project-root:other"),  # the moc is the project's own slug
    ("projects/alpha/moc.md", "agent", False, "project-root:other"),
    ("projects/alpha/notes.md", "agent", False, "project-root:other"),
    ("projects/alpha/notes.md", "phone", False, "project-root:other"),
    ("projects/alpha/notes.md", "operator", True, "project-root:other"),
    ("projects/alpha/charter.md", "agent", False, "project-root:existing"),  # changing a root document
    ("projects/alpha/charter.md", "operator", True, "project-root:existing"),
    ("projects/alpha/stray.md", "agent", False, "project-root:existing"),
    # project.yaml is the one non-note, and only at a project root
    ("memory/project.yaml", "agent", False, "path:not-markdown"),
    ("projects/project.yaml", "agent", False, "path:not-markdown"),
    ("projects/alpha/docs/project.yaml", "agent", False, "path:not-markdown"),
    ("project.yaml", "operator", False, "path:not-markdown"),
    ("memory/config.yaml", "agent", False, "path:not-markdown"),
    ("memory/x.txt", "agent", False, "path:not-markdown"),
    ("memory/x.MD", "agent", False, "path:not-markdown"),
    ("memory/x", "agent", False, "path:not-markdown"),
    (".obsidian/plugins/x/main.js", "operator", False, "path:dot-dir"),
    # shapes: refused before any level applies, for every actor
    ("", "operator", False, "path:empty"),
    ("   ", "agent", False, "path:empty"),
    ("/etc/passwd", "operator", False, "path:absolute"),
    ("/memory/x.md", "agent", False, "path:absolute"),
    ("~/.ssh/id_rsa", "operator", False, "path:home"),
    ("~root/x.md", "agent", False, "path:home"),
    ("memory/~/x.md", "agent", False, "path:home"),
    ("../x.md", "operator", False, "path:dotdot"),
    ("memory/../standards/x.md", "agent", False, "path:dotdot"),
    ("memory/..", "agent", False, "path:dotdot"),
    (".. /x", "agent", False, "path:dotdot"),
    ("memory/... /x.md", "agent", False, "path:dotdot"),
    ("./memory/x.md", "agent", False, "path:dot-segment"),
    ("memory/./x.md", "agent", False, "path:dot-segment"),
    ("memory//x.md", "agent", False, "path:empty-segment"),
    ("memory/x.md/", "agent", False, "path:empty-segment"),
    (".git/config", "operator", False, "path:dot-dir"),
    (".git/hooks/pre-commit", "agent", False, "path:dot-dir"),
    (".trash/x.md", "agent", False, "path:dot-dir"),
    ("memory/.hidden.md", "agent", False, "path:dot-dir"),
    ("memory/.md", "agent", False, "path:dot-dir"),
    ("a\x00.md", "operator", False, "path:nul"),
    ("memory/a\nb.md", "agent", False, "path:control"),
    ("memory/a\tb.md", "agent", False, "path:control"),
    ("memory/a\x7fb.md", "agent", False, "path:control"),
    ("memory/x\u202egpj.md", "agent", False, "path:control"),  # right-to-left override
    ("memory/\ufeffx.md", "agent", False, "path:control"),
    ("memory/x\u200b.md", "agent", False, "path:control"),
    ("memory/x\udcff.md", "agent", False, "path:control"),  # a lone surrogate (undecodable name)
    ("..\\..\\x.md", "operator", False, "path:backslash"),
    ("memory\\x.md", "agent", False, "path:backslash"),
    ("C:\\Windows\\x.md", "operator", False, "path:drive-letter"),
    ("C:/x.md", "operator", False, "path:drive-letter"),
    ("c:x.md", "agent", False, "path:drive-letter"),
    ("\\\\server\\share\\x.md", "operator", False, "path:unc"),
    ("//server/share/x.md", "operator", False, "path:unc"),
    ("%2e%2e%2fx.md", "operator", False, "path:encoded"),
    ("memory/%2E%2E/x.md", "agent", False, "path:encoded"),
    ("memory%2fx.md", "agent", False, "path:encoded"),
    ("..%5cx.md", "agent", False, "path:encoded"),
    ("%252e%252e%252fx.md", "agent", False, "path:encoded"),
    ("%25252e%25252e/x.md", "agent", False, "path:encoded"),
    ("%c0%ae%c0%ae/x.md", "agent", False, "path:encoded"),
    ("%e0%80%ae%e0%80%ae/x.md", "agent", False, "path:encoded"),
    ("memory/%u002e%u002e/x.md", "agent", False, "path:encoded"),
    ("memory/%00.md", "agent", False, "path:encoded"),
    ("memory/%ff.md", "agent", False, "path:encoded"),
    ("memory/%ef%bc%8f.md", "agent", False, "path:encoded"),  # an encoded fullwidth slash
    ("．．／x", "operator", False, "path:lookalike"),
    ("memory/．．/x.md", "agent", False, "path:lookalike"),
    ("memory／x.md", "agent", False, "path:lookalike"),
    ("..∕x.md", "agent", False, "path:lookalike"),
    ("..⁄x.md", "agent", False, "path:lookalike"),
    ("..＼x.md", "agent", False, "path:lookalike"),
    ("memory/\u2024\u2024/x.md", "agent", False, "path:lookalike"),  # one-dot leaders
    ("memory/\u2025/x.md", "agent", False, "path:lookalike"),  # two-dot leader
    ("\uff0egit/config.md", "agent", False, "path:lookalike"),
    ("memory/x\ufe52/y.md", "agent", False, "path:lookalike"),  # small full stop at a folder's end
    ("memory/a：b.md", "agent", False, "path:lookalike"),  # fullwidth colon
    ("～/x.md", "agent", False, "path:lookalike"),  # fullwidth tilde
    ("memory/" + "a" * 256 + ".md", "agent", False, "path:too-long"),
    ("memory/" + "é" * 128 + ".md", "agent", False, "path:too-long"),  # 256 bytes in UTF-8
    ("memory/" + "a/" * 2100 + "x.md", "agent", False, "path:too-long"),
    ("memory/draft./x.md", "agent", False, "path:trailing-dot-space"),
    ("memory/draft /x.md", "agent", False, "path:trailing-dot-space"),
    ("memory/x.md:stream.md", "agent", False, "path:reserved-char"),
    ("memory/why?.md", "agent", False, "path:reserved-char"),
    ("memory/a|b.md", "agent", False, "path:reserved-char"),
    ("memory/con.md", "agent", False, "path:reserved-name"),
    ("memory/NUL.md", "agent", False, "path:reserved-name"),
    ("memory/lpt1/x.md", "agent", False, "path:reserved-name"),
    # legal oddities
    ("memory/hi-everyone..md", "agent", True, "level:standing"),
    ("memory/a..b.md", "agent", True, "level:standing"),
    ("memory/naïve café.md", "agent", True, "level:standing"),
    ("memory/笔记.md", "agent", True, "level:standing"),
    ("memory/nai\u0308ve cafe\u0301.md", "agent", True, "level:standing"),  # decomposed (NFD) accents
    ("memory/Wait….md", "agent", True, "level:standing"),  # an ellipsis inside a name
    ("memory/50% off.md", "agent", True, "level:standing"),
    ("memory/my%20note.md", "agent", True, "level:standing"),  # kept literally; %20 hides nothing
    ("memory/console.md", "agent", True, "level:standing"),
    ("memory/x~y.md", "agent", True, "level:standing"),
    ("memory/ünïcödé/ノート.md", "agent", True, "level:standing"),
    ("memory/family 👨\u200d👩\u200d👧.md", "agent", True, "level:standing"),  # ZWJ emoji
    ("memory/" + "a" * 252 + ".md", "agent", True, "level:standing"),  # exactly 255 bytes
]


def test_table_covers_every_level_and_actor() -> None:
    rules = {rule for _, _, _, rule in TABLE}
    for level in ("standing", "shared", "alignment", "private"):
        assert f"level:{level}" in rules
    for rule in ("project-root:allowed", "project-root:other", "project-root:existing", "vault-root", "space:unknown"):
        assert rule in rules
    for actor in ACTORS:
        assert any(a == actor and ok for _, a, ok, _ in TABLE)
        assert any(a == actor and not ok for _, a, ok, _ in TABLE)


@pytest.mark.parametrize(("path", "actor", "allowed", "rule"), TABLE, ids=[f"{a}:{p[:60]!r}" for p, a, _, _ in TABLE])
def test_door_table(vault: Path, path: str, actor: str, allowed: bool, rule: str) -> None:
    decision = decide(vault, path, CONTRACT, actor=actor)
    assert (decision.allowed, decision.rule) == (allowed, rule), explain(decision)
    assert decision.reason and "\n" not in decision.reason
    if rule.startswith("path:"):
        assert decision.level is None
    else:
        assert decision.path == path
        assert decision.level in ("standing", "shared", "alignment", "private")


def test_levels_reported(vault: Path) -> None:
    assert decide(vault, "memory/x.md", CONTRACT).level == "standing"
    assert decide(vault, "daily/x.md", CONTRACT).level == "shared"
    assert decide(vault, "standards/x.md", CONTRACT).level == "alignment"
    assert decide(vault, "private/x.md", CONTRACT).level == "private"
    assert decide(vault, "projects/alpha/tracker.md", CONTRACT).level == "standing"
    assert decide(vault, "projects/alpha/other.md", CONTRACT).level == "alignment"


def test_refusal_reasons_say_what_to_do(vault: Path) -> None:
    standards = decide(vault, "standards/x.md", CONTRACT)
    assert "operator" in standards.reason and "memory/" in standards.reason
    other = decide(vault, "projects/alpha/notes.md", CONTRACT)
    assert "projects/alpha/docs/" in other.reason and "moc-alpha.md" in other.reason
    private = decide(vault, "private/x.md", CONTRACT, actor="operator")
    assert "own editor" in private.reason
    unknown = decide(vault, "scratch/x.md", CONTRACT)
    assert "not a space" in unknown.reason and "memory/" in unknown.reason


def test_changing_a_root_document_needs_the_operator(vault: Path) -> None:
    assert decide(vault, "projects/alpha/tracker.md", CONTRACT, creating=True).allowed
    changed = decide(vault, "projects/alpha/tracker.md", CONTRACT, creating=False)
    assert (changed.allowed, changed.rule) == (False, "project-root:existing")
    assert decide(vault, "projects/alpha/tracker.md", CONTRACT, creating=False, actor="operator").allowed
    # below the root and in other spaces `creating` changes nothing
    assert decide(vault, "projects/alpha/docs/design.md", CONTRACT, creating=False).allowed
    assert decide(vault, "memory/real.md", CONTRACT, creating=False).allowed


def test_project_root_files() -> None:
    assert project_root_files("alpha") == ("project.yaml", "charter.md", "blueprint.md", "tracker.md", "moc-alpha.md")


def test_stricter_projects_space_wins_over_the_root_rule(vault: Path) -> None:
    locked = with_authority(CONTRACT, projects="alignment")
    decision = decide(vault, "projects/alpha/blueprint.md", locked)
    assert (decision.allowed, decision.rule) == (False, "level:alignment")
    assert decide(vault, "projects/alpha/blueprint.md", locked, actor="operator").allowed
    sealed = with_authority(CONTRACT, projects="private")
    assert decide(vault, "projects/alpha/blueprint.md", sealed, actor="operator").rule == "level:private"


def test_project_root_rule_needs_a_projects_space(vault: Path) -> None:
    spaces = {name: folder for name, folder in CONTRACT.spaces.items() if name != "projects"}
    authority = {name: level for name, level in CONTRACT.authority.items() if name != "projects"}
    contract = dataclasses.replace(
        CONTRACT, spaces=MappingProxyType(spaces), authority=MappingProxyType(authority), dampened_spaces={}
    )
    decision = decide(vault, "projects/alpha/blueprint.md", contract)
    assert (decision.allowed, decision.rule) == (False, "space:unknown")
    refused = decide(vault, "projects/alpha/project.yaml", contract)
    assert (refused.allowed, refused.rule) == (False, "path:not-markdown")


def test_vault_root_is_never_looser_than_alignment(vault: Path) -> None:
    lax = dataclasses.replace(CONTRACT, default_authority="standing")
    assert decide(vault, "scratch/x.md", lax).allowed  # unknown spaces follow the default
    root = decide(vault, "README.md", lax)
    assert (root.allowed, root.rule, root.level) == (False, "vault-root", "alignment")
    strict = dataclasses.replace(CONTRACT, default_authority="private")
    assert decide(vault, "README.md", strict, actor="operator").level == "private"


def test_unknown_actor_is_refused(vault: Path) -> None:
    decision = decide(vault, "memory/x.md", CONTRACT, actor="robot")
    assert (decision.allowed, decision.rule) == (False, "actor:unknown")


def test_missing_vault_is_refused(tmp_path: Path) -> None:
    decision = decide(tmp_path / "nope", "memory/x.md", CONTRACT)
    assert (decision.allowed, decision.rule, decision.path) == (False, "vault:missing", "memory/x.md")


def test_decision_is_frozen_and_explained(vault: Path) -> None:
    decision = decide(vault, "memory/x.md", CONTRACT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        decision.allowed = False  # type: ignore[misc]
    assert explain(decision).startswith("allowed (level:standing): memory/ ")
    refused = decide(vault, "../x.md", CONTRACT)
    assert explain(refused).startswith("refused (path:dotdot): ")
    assert "\n" not in explain(refused)
    assert isinstance(decision, Decision)


# ----------------------------------------------------------------------------------- normalize_path


@pytest.mark.parametrize(
    "path", ["memory/x.md", "memory/hi-everyone..md", "memory/a..b.md", "memory/naïve café.md", "memory/笔记.md"]
)
def test_normalize_path_returns_clean_paths_unchanged(path: str) -> None:
    assert normalize_path(path) == path


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        ("../x.md", "path:dotdot"),
        ("/x.md", "path:absolute"),
        ("memory/x.txt", "path:not-markdown"),
        (None, "path:empty"),
    ],
)
def test_normalize_path_raises_door_refused(raw: str, rule: str) -> None:
    with pytest.raises(DoorRefused) as caught:
        normalize_path(raw)
    assert isinstance(caught.value, RulesError)
    assert caught.value.rule == rule
    assert rule in str(caught.value) and caught.value.reason in str(caught.value)


# ----------------------------------------------------------------------------------- traversal corpus

# Reliability scenario 16, literally.
SCENARIO_16 = [
    "../../etc/passwd",
    "..\\..\\",
    "notes/../../x",
    "/etc/passwd",
    "C:\\Windows\\System32\\drivers\\etc\\hosts",
    "~/.ssh/id_rsa",
    "\\\\server\\share",
    "%2e%2e%2f",
    "%252e%252e%252f",
    "%c0%ae%c0%ae/",
    "a\x00.md",
    ".. /x",
    "．．／x",
    "../vault-evil/x.md",
    ".git/config",
    ".git/hooks/pre-commit",
    ".obsidian/plugins/x/main.js",
    "memory/" + "a/" * 2100 + "x.md",
]

PREFIXES = ["", "memory/", "memory/decisions/", "projects/alpha/", "notes/"]
TRAVERSALS = [
    "../",
    "../../",
    "..\\",
    "..%2f",
    "%2e%2e/",
    "%2e%2e%2f",
    "%2E%2E%2F",
    "..%5c",
    "%252e%252e%252f",
    "%c0%ae%c0%ae/",
    "%e0%80%ae%e0%80%ae/",
    "．．／",
    "..／",
    "․․/",
    "..∕",
    "..⁄",
    "..＼",
    ".. /",
    "... /",
    "....//",
    "./../",
    "..;/",
]
TARGETS = ["etc/passwd", "x.md", "vault-evil/x.md", ".ssh/authorized_keys"]
GENERATED = [
    prefix + traversal + target for prefix, traversal, target in itertools.product(PREFIXES, TRAVERSALS, TARGETS)
]
ABSOLUTE = [
    "/etc/passwd",
    "/tmp/x.md",
    "//etc/passwd",
    "///x.md",
    "C:/Users/x.md",
    "c:\\x.md",
    "D:x.md",
    "\\\\?\\C:\\x.md",
    "\\\\.\\pipe\\x",
    "~",
    "~/x.md",
    "~root/.bashrc",
    "file:///etc/passwd",
]
PAYLOADS = list(dict.fromkeys(SCENARIO_16 + GENERATED + ABSOLUTE))


def test_corpus_is_large_enough() -> None:
    assert len(PAYLOADS) >= 200


def test_traversal_corpus_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    outside = tmp_path / "vault-evil"
    outside.mkdir()
    (outside / "x.md").write_text("outside\n", encoding="utf-8")
    (vault / "memory" / "out").symlink_to(outside, target_is_directory=True)
    before = snapshot(tmp_path)
    for payload in PAYLOADS:
        for actor in ACTORS:
            decision = decide(vault, payload, CONTRACT, actor=actor)
            assert not decision.allowed, (payload, actor, explain(decision))
            assert decision.rule.startswith("path:"), (payload, decision.rule)
            assert decision.reason
        with pytest.raises(DoorRefused):
            normalize_path(payload)
    # plus writes through the outside-pointing folder symlink, and allowed decisions: still nothing written
    assert not decide(vault, "memory/out/x.md", CONTRACT, actor="operator").allowed
    assert decide(vault, "memory/new/deep/x.md", CONTRACT).allowed
    assert snapshot(tmp_path) == before
    assert not (vault / "memory" / "new").exists()


# ------------------------------------------------------------------------------------------- symlinks


def test_directory_symlink_pointing_outside_is_refused(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "memory" / "escape").symlink_to(outside, target_is_directory=True)
    for actor in ACTORS:
        decision = decide(vault, "memory/escape/x.md", CONTRACT, actor=actor)
        assert (decision.allowed, decision.rule) == (False, "path:symlink-escape")
    nested = decide(vault, "memory/escape/deeper/x.md", CONTRACT)
    assert nested.rule == "path:symlink-escape"
    assert list(outside.iterdir()) == []


def test_note_that_is_a_symlink_to_an_outside_file_is_refused(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    secret = tmp_path / "authorized_keys"
    secret.write_bytes(b"ssh-ed25519 AAAA test\n")
    (vault / "memory" / "keys.md").symlink_to(secret)
    for actor in ACTORS:
        decision = decide(vault, "memory/keys.md", CONTRACT, actor=actor, creating=False)
        assert (decision.allowed, decision.rule) == (False, "path:symlink-escape")
        assert "outside" in decision.reason
    assert secret.read_bytes() == b"ssh-ed25519 AAAA test\n"


def test_dangling_symlinks_are_refused(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    (vault / "memory" / "gone.md").symlink_to(tmp_path / "missing.md")
    (vault / "memory" / "gone-dir").symlink_to(tmp_path / "missing-dir", target_is_directory=True)
    (vault / "memory" / "gone-inside").symlink_to(vault / "memory" / "nothing-here", target_is_directory=True)
    assert decide(vault, "memory/gone.md", CONTRACT).rule == "path:symlink-escape"
    assert decide(vault, "memory/gone-dir/x.md", CONTRACT).rule == "path:symlink-escape"
    assert decide(vault, "memory/gone-inside/x.md", CONTRACT).rule == "path:symlink-escape"
    assert not (tmp_path / "missing.md").exists()


def test_note_that_is_a_symlink_inside_the_vault_is_refused(vault: Path) -> None:
    (vault / "memory" / "alias.md").symlink_to(vault / "memory" / "real.md")
    decision = decide(vault, "memory/alias.md", CONTRACT)
    assert (decision.allowed, decision.rule) == (False, "path:symlink-escape")
    assert "inside" in decision.reason


def test_folder_symlink_inside_the_vault_is_judged_where_it_lands(vault: Path) -> None:
    (vault / "memory" / "same").symlink_to(vault / "memory" / "decisions", target_is_directory=True)
    same = decide(vault, "memory/same/x.md", CONTRACT)
    assert (same.allowed, same.rule, same.path) == (True, "level:standing", "memory/same/x.md")
    (vault / "memory" / "rules").symlink_to(vault / "standards", target_is_directory=True)
    climbing = decide(vault, "memory/rules/x.md", CONTRACT)
    assert (climbing.allowed, climbing.rule, climbing.level) == (False, "level:alignment", "alignment")
    assert "symlink" in climbing.reason and "standards/x.md" in climbing.reason
    assert decide(vault, "memory/rules/x.md", CONTRACT, actor="operator").allowed
    (vault / "memory" / "vault").symlink_to(vault / "private", target_is_directory=True)
    assert decide(vault, "memory/vault/x.md", CONTRACT, actor="operator").rule == "level:private"


def test_folder_symlink_into_a_dot_folder_is_refused(vault: Path) -> None:
    (vault / "memory" / "git").symlink_to(vault / ".git", target_is_directory=True)
    decision = decide(vault, "memory/git/hooks.md", CONTRACT, actor="operator")
    assert (decision.allowed, decision.rule) == (False, "path:symlink-escape")


def test_vault_reached_through_a_symlink_works(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    link = tmp_path / "vault-link"
    link.symlink_to(vault, target_is_directory=True)
    assert decide(link, "memory/x.md", CONTRACT).allowed
    assert decide(str(link), "standards/x.md", CONTRACT).rule == "level:alignment"


def test_file_and_folder_in_the_wrong_place(vault: Path) -> None:
    parent_is_file = decide(vault, "memory/real.md/x.md", CONTRACT)
    assert (parent_is_file.allowed, parent_is_file.rule) == (False, "path:not-a-directory")
    (vault / "memory" / "folder.md").mkdir()
    target_is_dir = decide(vault, "memory/folder.md", CONTRACT)
    assert (target_is_dir.allowed, target_is_dir.rule) == (False, "path:is-directory")
    os.mkfifo(vault / "memory" / "pipe.md")
    assert decide(vault, "memory/pipe.md", CONTRACT).rule == "path:not-a-file"
