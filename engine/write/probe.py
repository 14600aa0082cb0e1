"""Self-probe: the daemon checks its own agent door end to end.

A probe captures a synthetic note through the real MCP endpoint, with one nonce only in the frontmatter
`aliases` and another only in the body, then searches for each nonce through the same endpoint; both
must find the note within the budget. The daemon recognises the probe's capture by the alias nonce it
registered (nothing in the published tool schemas says "probe"), marks the note `probe: self-probe`,
keeps it out of the queue and the daily volume count, and commits it with `origin: self-probe`. On
success the previous probe note is deleted; a failed probe's note is left as evidence.

The budget is what a healthy round trip should take. A probe over it is still allowed to finish, up to
`SLOW_FACTOR` times the budget: one that finishes late is a success marked `slow` (status yellow, with the
time it took: a busy machine is not a broken door), and only one that fails, or does not finish even then,
is a failure (status red).
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

import anyio

DEFAULT_BUDGET = 5.0
SLOW_FACTOR = 6.0  # how far past its budget a probe may run before it counts as failed


class ProbeRecord(TypedDict, total=False):
    """A probe's outcome as `probe.json` keeps it and status shows it (the fields of `ProbeResult`)."""

    ok: bool
    at: str
    round_trip_ms: float | None
    path: str | None
    error: str | None
    budget_s: float | None
    slow: bool


@dataclass
class ProbeResult:
    ok: bool
    at: str
    round_trip_ms: float | None = None
    path: str | None = None
    error: str | None = None
    budget_s: float | None = None
    slow: bool = False  # succeeded, but over its budget

    def to_dict(self) -> ProbeRecord:
        return cast(ProbeRecord, asdict(self))


def new_nonces() -> tuple[str, str]:
    return f"probealias{secrets.token_hex(6)}", f"probebody{secrets.token_hex(6)}"


def _payload(result: Any) -> dict[str, object]:
    if getattr(result, "is_error", False):
        texts = [getattr(c, "text", "") for c in result.content]
        raise RuntimeError(" ".join(texts) or "the tool reported an error")
    data = result.structured_content
    if data is None:
        data = json.loads(result.content[0].text)
    return dict(data)


async def _probe(url: str, alias: str, body_nonce: str, budget: float, token: str | None) -> tuple[str, float]:
    # the MCP client is only needed here; importing it costs half a second
    from mcp import Client
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    start = time.perf_counter()
    with anyio.fail_after(budget):
        async with Client(streamable_http_client(url, http_client=create_mcp_http_client(headers))) as client:
            title = f"agentmd self-probe {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M:%S')}"
            body = f"Synthetic note written by the daemon's self-probe. Marker: {body_nonce}\n"
            captured = _payload(
                await client.call_tool("memory_capture", {"title": title, "body": body, "aliases": [alias]})
            )
            path = str(captured["path"])
            for nonce in (alias, body_nonce):
                asked = {"query": nonce, "limit": 3, "include_probe": True}
                found = _payload(await client.call_tool("memory_search", asked))
                results = found.get("results")
                paths = [r["path"] for r in results if isinstance(r, dict)] if isinstance(results, list) else []
                if path not in paths:
                    raise RuntimeError(f"search for the {nonce[:9]} nonce did not return {path} (got {paths})")
    return path, (time.perf_counter() - start) * 1000


def run_probe(
    port: int,
    alias: str,
    body_nonce: str,
    budget: float = DEFAULT_BUDGET,
    token: str | None = None,
    limit: float | None = None,
) -> ProbeResult:
    """Run one probe against the daemon on `port`, as an MCP client holding the access `token` does, for at
    most `limit` seconds (default `SLOW_FACTOR` times the budget). Never raises."""
    at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    url = f"http://127.0.0.1:{port}/mcp"
    limit = budget * SLOW_FACTOR if limit is None else limit
    try:
        path, ms = anyio.run(_probe, url, alias, body_nonce, limit, token)
    except TimeoutError:
        return ProbeResult(
            False,
            at,
            error=f"the probe did not finish within {limit:g} s (its budget was {budget:g} s)",
            budget_s=budget,
        )
    except Exception as exc:  # a probe reports every failure; it never takes the daemon down
        return ProbeResult(False, at, error=f"{type(exc).__name__}: {exc}", budget_s=budget)
    return ProbeResult(True, at, round_trip_ms=round(ms, 1), path=path, budget_s=budget, slow=ms > budget * 1000)


def load_last(state_dir: Path) -> ProbeRecord | None:
    """The last probe's outcome as `probe.json` holds it; None when there is none or it cannot be read."""
    try:
        data = json.loads((state_dir / "probe.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return cast(ProbeRecord, data) if isinstance(data, dict) else None
