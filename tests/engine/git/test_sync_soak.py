"""The sync soak at a small size (`./dev soak --sync --rounds 8`): three clones of one vault, a real daemon on
each, a person editing every clone, agents capturing over HTTP, the remote out of reach at times and daemons
killed with SIGKILL; at the end every clone holds the remote's main, nothing acknowledged or saved is lost, the
remote only moved forward, no note holds a conflict marker and every conflict sibling is listed. The big run
(200 rounds) is `./dev soak --sync --rounds 200`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow


def test_a_short_sync_soak_converges_and_loses_nothing() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "AGENTMD_", "XDG_"))}
    argv = [sys.executable, "bench/sync_soak.py", "--rounds", "8", "--seed", "5", "--kill-rate", "0.4",
            "--partition-rate", "0.4", "--max-round", "2.0"]  # fmt: skip
    run = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=280, check=False)
    assert run.stdout.strip(), run.stderr[-2000:]
    out = json.loads(run.stdout)
    assert run.returncode == 0 and out["violations"] == 0, out["problems"]
    assert out["rounds"] == 8 and out["machines"] == 3
    assert out["tokens_written"] > 20 and out["captures_checked"] > 0 and out["tokens_lost"] == 0
    assert out["clones_diverged"] == 0 and out["forced_updates"] == 0 and out["notes_with_markers"] == 0
    assert out["conflicts_unlisted"] == 0 and out["fsck_failures"] == 0
    assert out.get("syncs_merged", 0) + out.get("syncs_pushed", 0) > 0  # the daemons did sync with one another
