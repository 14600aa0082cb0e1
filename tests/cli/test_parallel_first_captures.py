"""Captures started together on a vault that has no index yet, with no daemon (agent hooks capturing at first
use): each creates or opens the index in turn, so every one is written, indexed or queued, and committed, and
none says "internal error" or prints a traceback. Real processes of the installed command, a real vault."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_helpers import make_repo

pytestmark = pytest.mark.slow

AGENTMD = str(Path(sys.executable).with_name("agentmd"))


def test_captures_started_together_on_a_new_vault_all_land(tmp_path: Path, env: dict[str, str]) -> None:
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    environ = {**os.environ, **env, "AGENTMD_DENSE": "0"}

    def start(i: int) -> subprocess.Popen[str]:
        argv = [AGENTMD, "capture", "--vault", str(vault), "--title", f"Parallel note {i}", "--type", "fact",
                "--why", "first use", "--body", f"token{i} written at first use"]  # fmt: skip
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ)

    runs = [start(i) for i in range(12)]
    results = [(p.wait(120), *p.communicate()) for p in runs]
    for code, _out, err in results:
        assert code == 0, err
        assert "internal error" not in err and "Traceback" not in err, err
    found = subprocess.run(
        [AGENTMD, "search", "--vault", str(vault), "--mode", "fusion", "--limit", "20", "--json", "parallel note"],
        capture_output=True, text=True, env=environ,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert found.stdout.count('"note": "') >= 12, found.stdout[:500]
