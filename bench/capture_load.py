"""Concurrent captures against a running `agentmd serve`: many clients at once, for a fixed time.

Generates a synthetic vault (index_bench.py's generator), makes it a git repository and starts the real
daemon as its own process (`python -m agentmd serve --port 0`), so the clients below never share its
interpreter. Then --clients clients capture for --seconds seconds, each in a loop: half of them POST
`/v1/capture` over one kept-alive HTTP connection, the other half call `memory_capture` over one MCP
session each. Every capture has its own title, body and unique token. Right after a capture is
acknowledged, the same client searches `/v1/search` for its token: the note must be among the results
(searchable on return). Measured: capture latency p50/p95/p99/max per door and together, captures per
second, errors (any answer that is not an acknowledgement, or a transport failure), and the ten slowest
captures with when they began (`slowest_captures`: several beginning at one moment point at a stall of the
daemon, scattered ones at queueing).

With --stages the daemon logs where each capture's time went (engine/write/stages.py) and the result
carries each stage's percentiles (`stages_ms`, the index batch's own stages in `batch_stages_ms`) and, for the
slowest hundredth of the captures, each stage's mean (`stages_ms.slowest_1pct_mean`: what the p99 waits on). The
daemon's CPU time per capture is reported too (`daemon_cpu_ms_per_capture`, and its git commands' in
`git_cpu_ms_per_capture`), and the clients' own (`clients_cpu_ms_per_capture`, this process, which shares the
machine's cores with the daemon): on a busy machine they move much less than the latencies do.

After the run, once git is clean: every acknowledged path must exist, be in a commit carrying
`origin: capture`, be unique (no two acknowledgements name one path) and the captured folder must hold
exactly the acknowledged notes (no twin written on the side).

    .venv/bin/python bench/capture_load.py [--clients 20] [--seconds 60] [--notes 2000] [--debounce 1.0] [--stages]
    .venv/bin/python bench/capture_bench.py --clients 20 ...     (the same run)

Bars (issue 16): capture p99 <= 500 ms, 0 errors, every acknowledged capture searchable on return and
committed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
from hook_bench import daemon_pid, wait_for_daemon
from index_bench import generate, git, percentile, vocabulary, wait_for

from agentmd.engine.client import access_token

REPO = Path(__file__).resolve().parent.parent
CAPTURE_TYPE = "decision"  # memory/decisions
FOLDER = "memory/decisions"


def ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    out = {f"p{q}": round(percentile(values, q / 100) * 1000, 1) for q in (50, 95, 99)}
    out["max"] = round(max(values) * 1000, 1)
    out["n"] = len(values)
    return out


class Fields:
    """Distinct titles and bodies for one client, with a unique token in each body."""

    def __init__(self, client: int) -> None:
        self.client = client
        self.rng = random.Random(1000 + client)
        self.vocab = vocabulary(random.Random(7))

    def make(self, i: int) -> tuple[dict[str, Any], str]:
        token = f"zqload{self.client:02d}n{i:05d}x"
        words = " ".join(self.rng.choices(self.vocab, k=self.rng.randint(30, 80)))
        return {
            "title": f"load capture {self.client} {i} {' '.join(self.rng.choices(self.vocab, k=3))}",
            "body": f"{words.capitalize()}.\n\nMarker {token}.\n",
            "type": CAPTURE_TYPE,
            "why": f"concurrency benchmark, client {self.client}",
        }, token


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = {"http": [], "mcp": []}
        self.timeline: list[tuple[float, float, str]] = []  # (seconds since the start, latency, door)
        self.t0 = time.perf_counter()
        self.acked: list[tuple[str, str]] = []  # (path, token)
        self.errors: list[str] = []
        self.unsearchable: list[str] = []

    def ack(self, door: str, seconds: float, path: str, token: str, searchable: bool, began: float) -> None:
        with self.lock:
            self.latency[door].append(seconds)
            self.timeline.append((began - self.t0, seconds, door))
            self.acked.append((path, token))
            if not searchable:
                self.unsearchable.append(path)

    def error(self, door: str, what: str) -> None:
        with self.lock:
            self.errors.append(f"{door}: {what}"[:300])


AUTH: dict[str, str] = {}  # the daemon's access token, as every client sends it (set once it has started)


class Http:
    """One kept-alive connection to the daemon."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(self, path: str, payload: dict[str, Any]) -> tuple[int, Any]:
        body = json.dumps(payload).encode()
        try:
            self.conn.request("POST", path, body=body, headers={"Content-Type": "application/json", **AUTH})
            resp = self.conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            raise
        return resp.status, json.loads(data) if data else None

    def searchable(self, token: str, path: str) -> bool:
        query = {"query": token, "limit": 5, "count_usage": False}
        try:
            code, found = self.post("/v1/search", query)
        except (OSError, http.client.HTTPException):  # a kept-alive connection the server closed while idle
            code, found = self.post("/v1/search", query)
        return code == 200 and path in [r["path"] for r in found.get("results", [])]


def http_client(port: int, client: int, until: float, tally: Tally) -> None:
    conn, fields = Http(port), Fields(client)
    i = 0
    while time.monotonic() < until:
        payload, token = fields.make(i)
        i += 1
        t0 = time.perf_counter()
        try:
            code, got = conn.post("/v1/capture", payload)
        except (OSError, http.client.HTTPException) as exc:
            tally.error("http", repr(exc))
            continue
        took = time.perf_counter() - t0
        if code != 200 or not got or not got.get("path"):
            tally.error("http", f"{code} {got}")
            continue
        tally.ack("http", took, got["path"], token, conn.searchable(token, got["path"]), t0)


def mcp_clients(port: int, clients: list[int], until: float, tally: Tally) -> None:
    """The MCP clients, each its own session, as tasks of one event loop (in this thread)."""
    from mcp import Client
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    async def one(client: int) -> None:
        fields, search = Fields(client), Http(port)
        i = 0
        transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(AUTH))
        async with Client(transport) as session:
            while time.monotonic() < until:
                payload, token = fields.make(i)
                i += 1
                t0 = time.perf_counter()
                try:
                    result = await session.call_tool("memory_capture", payload)
                except Exception as exc:
                    tally.error("mcp", repr(exc))
                    continue
                took = time.perf_counter() - t0
                if getattr(result, "is_error", False) or not result.structured_content:
                    tally.error("mcp", " ".join(getattr(c, "text", "") for c in result.content) or "no content")
                    continue
                path = result.structured_content["path"]
                ok = await anyio.to_thread.run_sync(search.searchable, token, path)
                tally.ack("mcp", took, path, token, ok, t0)

    async def guarded(client: int) -> None:
        try:
            await one(client)
        except Exception as exc:  # one session's failure is an error, not the end of the others
            tally.error("mcp", f"session {client} failed: {exc!r}")

    async def all_of_them() -> None:
        async with anyio.create_task_group() as tg:
            for c in clients:
                tg.start_soon(guarded, c)

    try:
        anyio.run(all_of_them)
    except Exception as exc:  # a session that could not open at all
        tally.error("mcp", f"session failed: {exc!r}")


def cpu_seconds(pid: int) -> tuple[float, float]:
    """User + system CPU time so far of a process and of its children that ended (its git commands); Linux
    /proc, zeros elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def stage_summary(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Percentiles of each capture stage, and of each stage of the index batches, from the daemon's log."""
    stages: dict[str, list[float]] = {}
    batch: dict[str, list[float]] = {}
    sizes: list[float] = []
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}, {}
    for line in lines:
        item = json.loads(line)
        for name, value in [*item["stages"].items(), ("total", item["total"]), ("cpu", item.get("cpu", 0.0))]:
            stages.setdefault(name, []).append(value / 1000)
        for name, value in item.get("batch_stages", {}).items():
            batch.setdefault(name, []).append(value / 1000)
        if item.get("batch"):
            sizes.append(float(item["batch"]))
    out: dict[str, Any] = {name: ms(values) for name, values in stages.items()}
    batch_out: dict[str, Any] = {name: ms(values) for name, values in batch.items()}
    if sizes:
        batch_out["size"] = {f"p{q}": percentile(sizes, q / 100) for q in (50, 95, 99)} | {"max": max(sizes)}
        # each batch's notes all report it: a batch of n counts 1/n per note, so this sums to the batches run
        batch_out["batches"] = round(sum(1 / s for s in sizes))
        batch_out["notes_per_batch"] = round(len(sizes) / batch_out["batches"], 2)
    out["slowest_1pct_mean"] = tail_stages([json.loads(line) for line in lines])
    return out, batch_out


def tail_stages(items: list[dict[str, Any]]) -> dict[str, float]:
    """Where the slowest hundredth of the captures (by the daemon's own total) spent their time: each stage's
    mean over them, in ms, largest first. Says what the p99 queues behind."""
    if not items:
        return {}
    cut = percentile([float(i["total"]) for i in items], 0.99)
    slow = [i for i in items if float(i["total"]) >= cut]
    sums: dict[str, float] = {}
    for item in slow:
        for name, value in item["stages"].items():
            sums[name] = sums.get(name, 0.0) + float(value)
    means = {name: round(total / len(slow), 1) for name, total in sums.items()}
    return dict(sorted(means.items(), key=lambda kv: -kv[1])) | {"n": len(slow), "totals_from": round(cut, 1)}


def start_daemon(vault: Path, work: Path, args: argparse.Namespace) -> tuple[subprocess.Popen[bytes], int, dict]:
    env = {
        **os.environ,
        "HOME": str(work / "home"),
        "XDG_STATE_HOME": str(work / "state"),
        "XDG_CACHE_HOME": str(work / "cache"),
        "XDG_CONFIG_HOME": str(work / "config"),
        "AGENTMD_DAILY_WRITE_CAP": "0",
        "AGENTMD_DENSE": "1" if args.dense else "0",
    }
    if args.stages:
        env["AGENTMD_CAPTURE_STAGES"] = str(work / "stages.jsonl")
    (work / "home").mkdir(exist_ok=True)
    log = open(work / "serve.log", "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentmd", "serve", "--vault", str(vault), "--port", "0",
         "--commit-debounce", str(args.debounce)],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log,
    )  # fmt: skip
    log.close()
    found: list[Path] = []
    wait_for(lambda: bool(found.extend((work / "state").rglob("daemon.json")) or found), 120)
    port = wait_for_daemon(found[0].parent, proc)
    AUTH["Authorization"] = f"Bearer {access_token(found[0].parent)}"
    return proc, port, env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=20, help="concurrent clients, half HTTP and half MCP")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--notes", type=int, default=2000, help="notes in the generated vault")
    ap.add_argument("--debounce", type=float, default=1.0, help="the daemon's --commit-debounce")
    ap.add_argument("--dense", action="store_true", help="leave the dense arm on (it embeds each capture)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--stages", action="store_true", help="log and report where each capture's time went")
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="agentmd-cload-"))
    vault = work / "vault"
    vault.mkdir()
    generate(vault, args.notes)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "start")
    before = {f"{FOLDER}/{p.name}" for p in (vault / FOLDER).glob("*.md")}  # the generator's own notes
    proc, port, _env = start_daemon(vault, work, args)
    tally = Tally()
    try:
        wait_for(lambda: git(vault, "status", "--porcelain") == "", 60)
        load_before = os.getloadavg()[0]
        daemon = daemon_pid(next((work / "state").rglob("daemon.json")).parent)
        cpu_before = cpu_seconds(daemon)
        clients_cpu = time.process_time()
        t0 = time.monotonic()
        tally.t0 = time.perf_counter()
        until = t0 + args.seconds
        n_mcp = args.clients // 2
        threads = [
            threading.Thread(target=http_client, args=(port, c, until, tally), daemon=True)
            for c in range(args.clients - n_mcp)
        ]
        if n_mcp:
            mcp_ids = list(range(args.clients - n_mcp, args.clients))
            threads.append(threading.Thread(target=mcp_clients, args=(port, mcp_ids, until, tally), daemon=True))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        cpu_after = cpu_seconds(daemon)
        clients_cpu = time.process_time() - clients_cpu
        cpu_run, git_run = cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1]
        load_after = os.getloadavg()[0]
        t_clean = time.perf_counter()
        wait_for(lambda: git(vault, "status", "--porcelain") == "", 300, step=0.1)
        clean_after = time.perf_counter() - t_clean
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()

    paths = [p for p, _ in tally.acked]
    committed = set(git(vault, "log", "--format=", "--name-only", "--grep=^origin: capture$").split("\n")) - {""}
    on_disk = {f"{FOLDER}/{p.name}" for p in (vault / FOLDER).glob("*.md")} - before
    every = tally.latency["http"] + tally.latency["mcp"]
    result: dict[str, Any] = {
        "clients": args.clients,
        "seconds": round(wall, 1),
        "notes": args.notes,
        "dense": args.dense,
        "cpus": os.cpu_count(),
        "loadavg_1m": [round(load_before, 2), round(load_after, 2)],
        "captures_acknowledged": len(paths),
        "captures_per_second": round(len(paths) / wall, 1) if wall else 0.0,
        "capture_ms": ms(every),
        "capture_http_ms": ms(tally.latency["http"]),
        "capture_mcp_ms": ms(tally.latency["mcp"]),
        "slowest_captures": [
            {"at_s": round(at, 2), "ms": round(took * 1000, 1), "door": door}
            for at, took, door in sorted(tally.timeline, key=lambda x: -x[1])[:10]
        ],
        "errors": len(tally.errors),
        "error_examples": tally.errors[:5],
        "searchable_on_return": {"n": len(paths) - len(tally.unsearchable), "of": len(paths)},
        "unsearchable": tally.unsearchable[:10],
        "duplicate_acks": len(paths) - len(set(paths)),
        "missing_on_disk": sorted(set(paths) - on_disk)[:10],
        "twins_on_disk": len(on_disk - set(paths)),
        "uncommitted": sorted(set(paths) - committed)[:10],
        "uncommitted_n": len(set(paths) - committed),
        "git_clean_after_s": round(clean_after, 2),
        "daemon_cpu_ms_per_capture": round(cpu_run * 1000 / len(paths), 2) if paths else None,
        "git_cpu_ms_per_capture": round(git_run * 1000 / len(paths), 2) if paths else None,
        "clients_cpu_ms_per_capture": round(clients_cpu * 1000 / len(paths), 2) if paths else None,
    }
    if args.stages:
        result["stages_ms"], result["batch_stages_ms"] = stage_summary(work / "stages.jsonl")
    p99 = result["capture_ms"].get("p99", float("inf"))
    result["pass"] = {
        "capture_p99_le_500ms": p99 <= 500,
        "no_errors": not tally.errors,
        "all_searchable_on_return": not tally.unsearchable,
        "all_committed": result["uncommitted_n"] == 0 and not result["missing_on_disk"],
        "no_twins": result["duplicate_acks"] == 0 and result["twins_on_disk"] == 0,
    }
    print(json.dumps(result, indent=2))
    c = result["capture_ms"]
    print(
        f"\n{args.clients} clients for {wall:.0f}s on {args.notes} notes: {len(paths)} captures"
        f" ({result['captures_per_second']}/s), p50 {c.get('p50')} ms, p95 {c.get('p95')} ms, p99 {p99} ms,"
        f" max {c.get('max')} ms; daemon CPU {result['daemon_cpu_ms_per_capture']} ms a capture"
        f" (git {result['git_cpu_ms_per_capture']} ms), the clients' {result['clients_cpu_ms_per_capture']} ms;"
        f" load {result['loadavg_1m'][0]}-{result['loadavg_1m'][1]}; {len(tally.errors)} errors; searchable on return"
        f" {result['searchable_on_return']['n']}/{len(paths)}; committed {len(paths) - result['uncommitted_n']}"
        f"/{len(paths)}; " + ", ".join(f"{k} {'PASS' if v else 'FAIL'}" for k, v in result["pass"].items())
    )
    if args.stages and result["stages_ms"].get("slowest_1pct_mean"):
        tail = result["stages_ms"]["slowest_1pct_mean"]
        top = [f"{k} {v} ms" for k, v in tail.items() if k not in ("n", "totals_from")][:4]
        print(f"slowest 1% of captures (daemon total >= {tail['totals_from']} ms) spent on average: " + ", ".join(top))
    if args.keep:
        print(f"kept {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(result["pass"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
