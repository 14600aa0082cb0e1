"""Resident search over MCP, interleaved with a peer: agentmd's `memory_search` against markdown-vault-mcp's
`search`, the same queries, one to each in turn, through the MCP SDK's own client.

A shared corpus vault (by default /work/shared/corpora/obsidian-tasks) is copied to a temporary folder and
made a git repository. agentmd serves it with the real `agentmd serve` (its own home, cache, state and config
folders in the temporary folder; lexical only unless --dense, so both sides are BM25); the MCP client speaks
streamable HTTP to its `/mcp` with the vault's access token. With `--peer-python` (the interpreter of a
virtual environment where markdown-vault-mcp is installed; it is not a dependency of agentmd), the peer's
server (its `markdown-vault-mcp serve --transport http`) serves the same copy with no embedding
provider, and its searches ask for `mode: keyword` (its BM25 over SQLite FTS5). Without it only agentmd runs.
With `--baseline-python` (the interpreter of another agentmd checkout's environment, say the main branch's),
that agentmd serves a second copy of the vault and joins the rotation as `agentmd-baseline`: a change's
before and after, measured in the same run.

Queries (`--queries`, seeded): half are a note's title, half two or three words drawn from the vault's text.
Both servers answer `--warm` other queries first. Then each query goes to one server and then the other,
the order alternating query by query, one request at a time, and the round trip of each call is timed
(the client's `call_tool`, which includes the JSON-RPC framing and the HTTP exchange). Printed as JSON: p50,
p95, p99, mean and max per server in ms, and agentmd's over the peer's.

    .venv/bin/python bench/mcp_peer_bench.py [--peer-python /tmp/peer-venv/bin/python] [--queries 400]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hook_bench import bench_env, stop_daemon, wait_for_daemon
from index_bench import git, percentile

from agentmd.engine.client import access_token
from agentmd.engine.settings import resolve

CORPUS = Path("/work/shared/corpora/obsidian-tasks")
WORD = re.compile(r"[A-Za-z][a-z]{3,}")
LIMIT = 10


def copy_vault(source: Path, vault: Path) -> None:
    """The corpus's notes (Markdown only, no dot folders) copied to `vault`, made a git repository."""
    for path in sorted(source.rglob("*.md")):
        rel = path.relative_to(source)
        if any(part.startswith(".") for part in rel.parts):
            continue
        target = vault / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "-c", "user.name=Bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "start")


def draw_queries(vault: Path, n: int, seed: int) -> list[str]:
    """`n` queries, seeded: titles (a note's first heading, else its file name) and two or three words of its
    text, alternating."""
    rng = random.Random(seed)
    notes = sorted(vault.rglob("*.md"))
    out: list[str] = []
    while len(out) < n:
        path = rng.choice(notes)
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(out) % 2 == 0:
            heading = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "")
            title = heading or path.stem.replace("-", " ").replace("_", " ")
            if title.strip():
                out.append(title[:200])
        else:
            words = WORD.findall(text)
            if len(words) >= 3:
                out.append(" ".join(rng.sample(words, rng.choice((2, 3)))).lower())
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_agentmd(python: str, work: Path, vault: Path, dense: bool) -> tuple[subprocess.Popen[bytes], str, str]:
    """`agentmd serve` of `python` on `vault`, its own folders under `work`; the process, /mcp's URL and the
    access token, once its first pass is done."""
    env = {**bench_env(work, vault), "PYTHONDONTWRITEBYTECODE": "1"}
    if not dense:
        env["AGENTMD_DENSE"] = "0"
    settings = resolve(vault=str(vault), env=env)
    work.mkdir(parents=True, exist_ok=True)
    log = open(work / "serve.log", "wb")  # noqa: SIM115 - closed with the process's end
    serve = subprocess.Popen(
        [python, "-m", "agentmd", "serve", "--port", "0"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=work,
    )  # fmt: skip
    try:
        port = wait_for_daemon(settings.state_dir, serve)
    except BaseException:
        stop_daemon(serve)
        print((work / "serve.log").read_text(errors="replace")[-2000:], file=sys.stderr)
        raise
    return serve, f"http://127.0.0.1:{port}/mcp", access_token(settings.state_dir) or ""


def start_peer(python: str, vault: Path, work: Path) -> tuple[subprocess.Popen[bytes], int]:
    """markdown-vault-mcp over streamable HTTP on a free loopback port, no embedding provider (BM25 only)."""
    port = free_port()
    prefix = "MARKDOWN_VAULT_MCP_"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(prefix) and key not in ("OLLAMA_HOST", "OPENAI_API_KEY", "VOYAGE_API_KEY")
    }
    peer_home = work / "peer"
    peer_home.mkdir(parents=True, exist_ok=True)
    env.update({
        "HOME": str(peer_home / "home"),
        "XDG_CACHE_HOME": str(peer_home / "cache"),
        "XDG_STATE_HOME": str(peer_home / "state"),
        prefix + "SOURCE_DIR": str(vault),
        prefix + "INDEX_PATH": str(peer_home / "index.db"),
        prefix + "STATE_PATH": str(peer_home / "state.json"),
        prefix + "READ_ONLY": "true",
    })  # fmt: skip
    log = open(work / "peer.log", "wb")  # noqa: SIM115 - closed with the process's end
    command = ["serve", "--transport", "http", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(
        [python, "-c", "import sys; from markdown_vault_mcp.cli import main; sys.exit(main())", *command],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = (work / "peer.log").read_text(errors="replace")[-2000:]
            raise SystemExit(f"markdown-vault-mcp exited with {proc.returncode}:\n{tail}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, port
        except OSError:
            time.sleep(0.2)
    raise SystemExit("markdown-vault-mcp did not listen in time")


async def open_session(stack: AsyncExitStack, url: str, headers: dict[str, str]) -> Any:
    from mcp import ClientSession
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    read, write, *_ = await stack.enter_async_context(
        streamable_http_client(url, http_client=create_mcp_http_client(headers))
    )
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def timed_call(session: Any, tool: str, arguments: dict[str, Any]) -> float:
    t0 = time.perf_counter()
    result = await session.call_tool(tool, arguments)
    elapsed = time.perf_counter() - t0
    if result.is_error:
        raise SystemExit(f"{tool} answered an error: {result.content}")
    return elapsed


def summary(samples: list[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(samples, 0.50) * 1000, 1),
        "p95": round(percentile(samples, 0.95) * 1000, 1),
        "p99": round(percentile(samples, 0.99) * 1000, 1),
        "mean": round(statistics.fmean(samples) * 1000, 1),
        "max": round(max(samples) * 1000, 1),
        "n": len(samples),
    }


async def run(servers: dict[str, tuple[str, dict[str, str], str, dict[str, Any]]], queries: list[str], warm: int):
    async with AsyncExitStack() as stack:
        sessions = {name: await open_session(stack, url, headers) for name, (url, headers, _, _) in servers.items()}
        names = list(servers)
        for query in queries[:warm]:
            for name in names:
                _, _, tool, extra = servers[name]
                await timed_call(sessions[name], tool, {"query": query, **extra})
        times: dict[str, list[float]] = {name: [] for name in names}
        for i, query in enumerate(queries[warm:]):
            order = names if i % 2 == 0 else names[::-1]
            for name in order:
                _, _, tool, extra = servers[name]
                times[name].append(await timed_call(sessions[name], tool, {"query": query, **extra}))
        return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="a folder of Markdown notes (copied, never changed)")
    ap.add_argument("--peer-python", help="the Python of a virtual environment with markdown-vault-mcp installed")
    ap.add_argument("--queries", type=int, default=400, help="timed queries per server")
    ap.add_argument("--warm", type=int, default=30, help="queries each server answers before the timed ones")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--baseline-python", help="the Python of another agentmd checkout, served beside this one")
    ap.add_argument("--dense", action="store_true", help="leave agentmd's dense arm on (it embeds during the run)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="agentmd-mcp-peer-"))
    vault = work / "vault"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        copy_vault(args.corpus, vault)
        queries = draw_queries(vault, args.queries + args.warm, args.seed)
        serve, url, token = start_agentmd(sys.executable, work / "agentmd", vault, args.dense)
        procs.append(serve)
        servers: dict[str, tuple[str, dict[str, str], str, dict[str, Any]]] = {
            "agentmd": (url, {"Authorization": f"Bearer {token}"}, "memory_search", {"limit": LIMIT})
        }
        if args.baseline_python:
            other = work / "vault-baseline"
            copy_vault(args.corpus, other)
            serve, url, token = start_agentmd(args.baseline_python, work / "baseline", other, args.dense)
            procs.append(serve)
            servers["agentmd-baseline"] = (url, {"Authorization": f"Bearer {token}"}, "memory_search", {"limit": LIMIT})
        if args.peer_python:
            peer, peer_port = start_peer(args.peer_python, vault, work)
            procs.append(peer)
            servers["markdown-vault-mcp"] = (
                f"http://127.0.0.1:{peer_port}/mcp",
                {},
                "search",
                {"limit": LIMIT, "mode": "keyword"},
            )
        times = asyncio.run(run(servers, queries, args.warm))
        notes = sum(1 for _ in vault.rglob("*.md"))
        result: dict[str, Any] = {
            "corpus": str(args.corpus),
            "notes": notes,
            "queries": args.queries,
            "warm": args.warm,
            "agentmd_mode": "hybrid (dense arm on, embedding during the run)" if args.dense else "lexical (dense off)",
            "transport": "streamable HTTP, MCP SDK ClientSession, one request at a time, interleaved",
            "latency_ms": {name: summary(samples) for name, samples in times.items()},
        }
        latency = result["latency_ms"]
        if "agentmd-baseline" in latency:
            result["agentmd_over_baseline"] = {
                k: round(latency["agentmd"][k] / latency["agentmd-baseline"][k], 2)
                for k in ("p50", "p95", "p99", "mean")
            }
        if args.peer_python:
            result["peer_mode"] = "markdown-vault-mcp search mode=keyword (SQLite FTS5 BM25), no embedding provider"
            for name in ("agentmd", "agentmd-baseline"):
                if name in latency:
                    ours, theirs = latency[name], latency["markdown-vault-mcp"]
                    ratios = {k: round(ours[k] / theirs[k], 2) for k in ("p50", "p95", "p99", "mean")}
                    result[f"{name}_over_peer".replace("-", "_")] = ratios
        print(json.dumps(result, indent=2))
        return 0
    finally:
        for proc in procs:
            stop_daemon(proc)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
