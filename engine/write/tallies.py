"""What capture counts besides the daily cap: refused captures by day and reason (read by the morning note),
typed captures refused while the contract was halted (read by `agentmd status`), and the warning when a day's
captures pass the contract's daily card budget."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
from collections import Counter
from pathlib import Path
from typing import TypedDict, cast

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


class HaltedRefusals(TypedDict):
    count: int
    last: str | None  # ISO time of the last one


def halted_refusals(state_dir: Path) -> HaltedRefusals:
    """How many typed captures were refused while the contract was halted, and when the last was; count 0 when
    none."""
    try:
        data = json.loads((state_dir / "captures" / HALTED_REFUSALS).read_text())
    except (OSError, ValueError):
        return {"count": 0, "last": None}
    return cast(HaltedRefusals, data) if isinstance(data, dict) else {"count": 0, "last": None}


def budget_warning(count: int, budget: int, contract_file: str) -> str:
    return (
        f"{count} captures today are over the daily card budget of {budget} (thresholds.daily_card_budget in "
        f"{contract_file}); nothing is refused, but the review queue grows faster than planned"
    )


REFUSALS = "refusals.json"
REFUSAL_DAYS = 14  # days of refusal counts kept


def count_refusal(state_dir: Path, now: dt.datetime, code: str) -> None:
    """Count one refused capture under its day and reason code; days older than REFUSAL_DAYS are dropped."""
    folder = state_dir / "captures"
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / "lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        days = _refusal_days(state_dir)
        today = days.setdefault(now.date().isoformat(), {})
        today[code] = int(today.get(code, 0)) + 1
        oldest = (now.date() - dt.timedelta(days=REFUSAL_DAYS)).isoformat()
        kept = {d: c for d, c in days.items() if d >= oldest}
        path = folder / REFUSALS
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"days": kept}, sort_keys=True))
        os.replace(tmp, path)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def refusals_since(state_dir: Path, since: dt.date) -> Counter[str]:
    """Refused captures by reason code, over the days from `since` on."""
    out: Counter[str] = Counter()
    for codes in refusal_days(state_dir, since).values():
        out.update(codes)
    return out


def refusal_days(state_dir: Path, since: dt.date) -> dict[str, dict[str, int]]:
    """Refused captures by day (ISO date) and reason code, over the days from `since` on."""
    return {
        day: {str(k): int(v) for k, v in codes.items() if isinstance(v, int)}
        for day, codes in _refusal_days(state_dir).items()
        if day >= since.isoformat() and isinstance(codes, dict)
    }


def _refusal_days(state_dir: Path) -> dict[str, dict[str, int]]:
    try:
        data = json.loads((state_dir / "captures" / REFUSALS).read_text())
    except (OSError, ValueError):
        return {}
    days = data.get("days") if isinstance(data, dict) else None
    return days if isinstance(days, dict) else {}
