"""What capture counts besides the daily cap: typed captures refused while the contract was halted (read by
`agentmd status`), and the warning when a day's captures pass the contract's daily card budget."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
from pathlib import Path
from typing import Any

HALTED_REFUSALS = "halted-refusals.json"


def count_halted_refusal(state_dir: Path, now: dt.datetime) -> None:
    """Count one typed capture refused while the contract was halted (read by `agentmd status`)."""
    folder = state_dir / "captures"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / HALTED_REFUSALS
    fd = os.open(folder / "lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        current = halted_refusals(state_dir)
        data = {"count": int(current.get("count", 0)) + 1, "last": now.isoformat(timespec="seconds")}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def halted_refusals(state_dir: Path) -> dict[str, Any]:
    """{"count", "last"} of typed captures refused while the contract was halted; count 0 when none."""
    try:
        data = json.loads((state_dir / "captures" / HALTED_REFUSALS).read_text())
    except (OSError, ValueError):
        return {"count": 0, "last": None}
    return data if isinstance(data, dict) else {"count": 0, "last": None}


def budget_warning(count: int, budget: int, contract_file: str) -> str:
    return (
        f"{count} captures today are over the daily card budget of {budget} (thresholds.daily_card_budget in "
        f"{contract_file}); nothing is refused, but the review queue grows faster than planned"
    )
