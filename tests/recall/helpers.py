"""Shared pieces of the recall tests: a small real vault, hook payloads in Claude Code's documented
UserPromptSubmit shape, the hook run as a real process, and a clock the tests move themselves."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from agentmd.engine.recall.render import FENCE_CLOSE, FENCE_OPEN, HEADER, HINT_FOUND
from agentmd.engine.settings import Settings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hooks"
HOOK = [sys.executable, "-c", "import sys; from hooks.entry import main; sys.exit(main())", "recall"]

NOTES: dict[str, str] = {
    "memory/decisions/postgres-over-mysql.md": """---
title: PostgreSQL over MySQL for the ledger database
type: decision
project: ledgerline
summary: We chose PostgreSQL for the ledger because of transactional DDL and CHECK constraints.
---
# PostgreSQL over MySQL

Postgres won for the ledger. Vacuum needs watching on the journal table; see [[postgres-vacuum-cheatsheet]].
""",
    "references/postgres-vacuum-cheatsheet.md": """---
title: Postgres vacuum cheatsheet
---
Dead tuples pile up after updates; autovacuum reclaims them. Check bloat on the journal table weekly.
""",
    "memory/lessons/migration-locked-journal.md": """---
title: A migration locked the journal table
project: ledgerline
---
The migration took an exclusive lock on the journal table for nine minutes. Related: [[postgres-over-mysql]].
""",
    "projects/ledgerline/charter.md": "# Ledgerline charter\n\nA small ledger service for invoices.\n",
    "projects/tidewatch/notes/cache.md": "# Tide cache\n\nPostgres is not used here; the journal table idea was dropped.\n",  # noqa: E501
    "private/journal-thoughts.md": "# Journal\n\nPrivate: postgres vacuum journal table feelings.\n",
    "memory/decisions/old-postgres-choice.md": """---
title: Old postgres journal table decision
status: archived
---
Superseded thinking about postgres vacuum on the journal table.
""",
    "memory/conventions/webhook-retries.md": """---
title: Webhook retries use exponential backoff
project: ledgerline
---
Retry backoff doubles from one second, capped at five attempts.
""",
}


class ManualClock:
    """A clock that moves only when the hook waits. A wait first lets the worker reach the point the test
    names (`reached`, waited on with a deadline), then passes the whole timeout at once."""

    def __init__(self, reached: threading.Event | None = None, start: float = 1000.0) -> None:
        self.now = start
        self.reached = reached
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def wait(self, worker: threading.Thread, timeout: float) -> None:
        if self.reached is not None:
            assert self.reached.wait(30), "the worker never got where the test waits for it"
        self.waits.append(timeout)
        self.now += timeout


def hook_env(tmp_path: Path, vault: Path | None) -> dict[str, str]:
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
    }
    for k in ("AGENTMD_VAULT", "AGENTMD_DAILY_WRITE_CAP"):
        env.pop(k, None)
    if vault is not None:
        env["AGENTMD_VAULT"] = str(vault)
    return env


def payload(name: str, cwd: Path | str, **changes: Any) -> str:
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    data["cwd"] = str(cwd)
    data.update(changes)
    return json.dumps(data)


def run_hook(stdin: str, env: dict[str, str], *args: str, timeout: float = 30) -> tuple[int, str, str]:
    """The hook as a real process, the way `agentmd-hook recall` runs it. Unless a test sets its own, the time
    budget is generous: these runs check what the hook prints, and the budget itself is tested with a clock the
    test moves, so a loaded machine cannot turn a slow search into an empty answer here."""
    if not any(a.startswith("--time-budget") for a in args):
        args = (*args, "--time-budget", "60")
    proc = subprocess.run([*HOOK, *args], input=stdin, capture_output=True, text=True, env=env, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def hook_log(settings: Settings) -> str:
    path = settings.state_dir / "hook.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def usage_rows(settings: Settings) -> dict[str, tuple[int, int]]:
    db = sqlite3.connect(settings.catalog_path)
    try:
        return {p: (i, r) for p, i, r in db.execute("SELECT path, injections, recalls FROM usage")}
    finally:
        db.close()


def assert_block_shape(out: str) -> list[str]:
    """The printed text is the header, one fence holding only bullets, and the hint; returns the bullets."""
    lines = out.splitlines()
    assert lines[0] == HEADER
    assert lines[1] == FENCE_OPEN
    assert lines[-2] == FENCE_CLOSE
    assert lines[-1] == HINT_FOUND
    bullets = lines[2:-2]
    assert bullets and all(b.startswith("- ") for b in bullets)
    assert sum(1 for ln in lines if ln.startswith("```")) == 2
    return bullets
