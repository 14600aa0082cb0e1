"""The budgets of an enrichment run, which only the owner raises: calls, tokens a call adds (never the cached
prefix it re-reads), wall time, and a fuse (N notes in a row whose model call failed). The `[enrich]` table of
the config file sets them; a flag may lower a line, never raise it. All are read before each note; the first
one a run would cross ends it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentmd.engine.errors import UsageError


@dataclass(frozen=True)
class Budget:
    max_calls: int = 100
    max_tokens: int = 2_000_000
    max_seconds: float = 3.5 * 3600
    fuse: int = 5

    KEYS = ("max_calls", "max_tokens", "max_seconds", "fuse")

    def lowered(self, **flags: float | int | None) -> Budget:
        """The budget with each given flag applied only where it is lower: a flag never raises a line."""
        values = {k: getattr(self, k) for k in self.KEYS}
        for key, value in flags.items():
            if value is None:
                continue
            if value < 0:
                raise UsageError(f"--{key.replace('_', '-')} must be 0 or more")
            values[key] = min(values[key], type(values[key])(value))
        return Budget(**values)

    def to_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.KEYS}


def budget_from(table: Mapping[str, Any]) -> Budget:
    """The owner's budget, from the config file's `[enrich]` table (defaults for what it leaves out)."""
    values: dict[str, Any] = {}
    for key in Budget.KEYS:
        if key not in table:
            continue
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise UsageError(f"[enrich] {key} = {value!r} must be a number, 0 or more")
        values[key] = float(value) if key == "max_seconds" else int(value)
    return Budget(**values)


def stop_reason(budget: Budget, calls: int, added: int, failures: int, elapsed: float, per_note: int = 1) -> str | None:
    """The first line a run would cross by starting one more note (of `per_note` calls), in words; else None."""
    if calls + per_note > budget.max_calls:
        return f"max_calls: the call budget ({budget.max_calls} calls) is spent"
    if added >= budget.max_tokens:
        return f"max_tokens: the token budget ({budget.max_tokens} tokens added) is spent"
    if elapsed >= budget.max_seconds:
        return f"max_seconds: the time budget ({budget.max_seconds:g} s) is spent"
    if budget.fuse and failures >= budget.fuse:
        return f"fuse: {failures} notes in a row whose model call failed"
    return None
