"""The built distribution: one top-level import package, the contract shipped as data, the console scripts."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy of the tracked sources, so nothing left in a local build/ folder can reach the wheel.
    source = tmp_path_factory.mktemp("source")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for rel in filter(None, tracked.decode().split("\0")):
        if (REPO / rel).is_file():
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, source / rel)
    # No build isolation: the test tools installed setuptools and wheel, so the build needs no download.
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--disable-pip-version-check",
         "-w", str(out), str(source)],
        capture_output=True, text=True, timeout=240, cwd=source,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    (found,) = out.glob("agentmd-*.whl")
    return zipfile.ZipFile(found)


def test_one_top_level_import_package(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/", 1)[0] for name in wheel.namelist()}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert len(dist_info) == 1
    assert tops - dist_info == {"agentmd"}, f"the wheel installs more than agentmd: {sorted(tops)}"


def test_every_layer_and_the_contract_are_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for module in (
        "agentmd/cli.py",
        "agentmd/vocabulary.py",
        "agentmd/vault_schema/__init__.py",
        "agentmd/rules/__init__.py",
        "agentmd/engine/index/catalog.py",
        "agentmd/hooks/entry.py",
    ):
        assert module in names or module.replace(".py", "/__init__.py") in names, module
    assert "agentmd/rules/storage-rules.default.md" in names
    for job in ("reconcile", "probe", "repack", "morning-note"):  # the job manifests that ship as defaults
        assert f"agentmd/engine/jobs/defaults/{job}.toml" in names, job
    assert not [n for n in names if "/tests/" in n or n.startswith(("tests/", "bench/", "examples/"))]


def test_console_scripts_point_into_the_namespace(wheel: zipfile.ZipFile) -> None:
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    assert "agentmd = agentmd.cli:main" in text
    assert "agentmd-hook = agentmd.hooks.entry:main" in text
