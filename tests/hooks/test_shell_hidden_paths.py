"""The Bash file guard and writes whose way into the vault the line does not spell out: a tree copied or unpacked
into a folder that holds the vault (by what the source or the archive holds), a `$'…'` word, a folder the text
cannot settle below one that holds the vault, git's repository given through `env`, a command the line decodes
from base64 before a shell runs it, and a path a program builds from pieces. Real files in a real temporary vault
and the folders around it; what only looks alike passes."""

from __future__ import annotations

import base64
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from agentmd.hooks.shell_writes import check_shell_writes


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    vault = home / "vault"
    (vault / "memory").mkdir(parents=True)
    (vault / "memory" / "a.md").write_text("# A\n", encoding="utf-8")
    work = tmp_path / "work"
    (work / "tree" / "vault" / "memory").mkdir(parents=True)
    (work / "tree" / "vault" / "memory" / "evil.md").write_text("# Evil\n", encoding="utf-8")
    (work / "plain" / "docs").mkdir(parents=True)
    (work / "plain" / "docs" / "x.md").write_text("# X\n", encoding="utf-8")
    return {"home": home, "vault": vault, "work": work}


def decide(command: str, places: dict[str, Path]) -> tuple[bool, str]:
    verdict = check_shell_writes(
        command, cwd=str(places["work"]), vault=places["vault"], env={"HOME": str(places["home"])}
    )
    return verdict.deny, verdict.reason


def archive(path: Path, members: list[str]) -> Path:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w") as z:
            for name in members:
                z.writestr(name, "# note\n")
        return path
    with tarfile.open(path, "w:gz") as t:
        for name in members:
            data = b"# note\n"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def test_a_tree_copied_into_a_folder_holding_the_vault_is_judged_by_what_it_holds(places: dict[str, Path]) -> None:
    home = places["home"]
    for command in (f"cp -r tree/vault {home}/", f"rsync -a tree/ {home}/", f"cp -a tree/. {home}", "cp -r $SRC ~/"):
        deny, reason = decide(command, places)
        assert deny and str(places["vault"]) in reason, command
    for command in (f"cp -r plain/docs {home}/", f"rsync -a plain/ {home}/", f"cp -r tree {home}/backup-tree"):
        assert decide(command, places) == (False, ""), command


def test_an_archive_unpacked_into_a_folder_holding_the_vault_is_judged_by_its_members(places: dict[str, Path]) -> None:
    work, home = places["work"], places["home"]
    archive(work / "evil.tgz", ["vault/memory/t.md"])
    archive(work / "evil.zip", ["vault/memory/z.md"])
    archive(work / "fine.tgz", ["project/readme.md", "project/src/app.py"])
    archive(work / "fine.zip", ["project/readme.md"])
    for command in (
        f"tar xzf evil.tgz -C {home}",
        f"cd {home} && tar -xzf {work}/evil.tgz",
        f"unzip evil.zip -d {home}",
        f"cat evil.tgz | tar xz -C {home}",  # an archive from a pipe: what it holds is not known
        f"tar xzf not-there-yet.tgz -C {home}",
    ):
        deny, reason = decide(command, places)
        assert deny and str(places["vault"]) in reason, command
    for command in (f"tar xzf fine.tgz -C {home}", f"unzip fine.zip -d {home}", "tar xzf evil.tgz", "tar tzf evil.tgz"):
        assert decide(command, places) == (False, ""), command


def test_paths_the_line_spells_in_other_ways(places: dict[str, Path]) -> None:
    home, vault = places["home"], places["vault"]
    hidden = base64.b64encode(f"echo x > {vault}/memory/x.md".encode()).decode()
    for command in (
        f"echo x > $'{home}/\\x76ault/memory/x.md'",
        f"cp plain/docs/x.md $'{home}/v\\141ult/memory/e.md'",
        f"v=/tmp/XvaultX; echo x > {home}/${{v:6:5}}/memory/x.md",
        f"env GIT_DIR={vault}/.git GIT_WORK_TREE={vault} git reset --hard HEAD~2",
        f"echo {hidden} | base64 -d | sh",
        f"python3 -c \"p='{home}/'+'vau'+'lt/memory/x.md'; open(p,'w').write('x')\"",
    ):
        deny, reason = decide(command, places)
        assert deny and str(vault) in reason, command
    for command in (
        "echo x > $'out\\tput.txt'",
        f"v=abc; echo x > {home}/${{v:0:2}}.log",  # a file right in the folder, not a folder that may be the vault
        "env GIT_DIR=/tmp/other.git git log",
        "echo aGVsbG8K | base64 -d",
        "python3 -c \"print('a'+'b')\"",
    ):
        assert decide(command, places) == (False, ""), command
