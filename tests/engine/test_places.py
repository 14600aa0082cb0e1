"""A vault's state folder, named without `pathlib`, `re` or `hashlib` (engine/places.py): the same name the
settings give it, for every kind of folder name."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from agentmd.engine import places
from agentmd.engine.settings import resolve


def expected_id(vault: Path) -> str:
    """The rule written with the regular expression and hashlib it replaces."""
    real = str(vault.resolve())
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", vault.resolve().name).strip("-") or "vault"
    return f"{slug[:40]}-{hashlib.sha256(real.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


@pytest.mark.parametrize(
    "name",
    ["notes", "My Vault", "--odd--", "ünïcödé notes", "日本語", "a  b\tc", "x" * 60, ".hidden", "a.b_c-d", "!!!"],
)
def test_a_vault_id_is_the_folder_name_made_safe_and_a_hash_of_its_real_path(tmp_path: Path, name: str) -> None:
    vault = tmp_path / name
    vault.mkdir()
    assert places.vault_id(vault) == expected_id(vault)
    link = tmp_path / "link"
    link.symlink_to(vault)
    assert places.vault_id(link) == places.vault_id(vault)  # the real path names it


def test_the_state_folder_is_the_one_the_settings_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert places.state_dir(vault) == str(resolve(vault=str(vault)).state_dir)
    monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")  # the specification ignores a relative value
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert places.state_root() == os.path.join(str(tmp_path / "home"), ".local/state", "agentmd")
    assert places.state_dir(vault) == str(resolve(vault=str(vault)).state_dir)
