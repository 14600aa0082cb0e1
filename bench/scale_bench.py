"""Scale benchmark: a 100,000-note vault, built, searched through a real daemon, and its dense arm sized.

Two vaults (`--mode`):

- `synthetic`: the generator of index_bench.py (Zipf-like words, folders, frontmatter, links);
- `corpora`: the shared real vaults (dendron-site, obsidian-tasks, vaultofknowledge under
  /work/shared/corpora, or `--corpora DIR`) copied over and over with edits until there are `--notes`
  notes: each copy after the first gets a new file name and title and has a share of its words swapped
  for other words of the same note, so no two notes are identical (chunks still repeat, as in real vaults
  that grew by copying).

Each vault is generated in a temporary folder outside the project. Measured, in order:

1. the lexical build: `agentmd reindex --from-scratch --no-dense` in its own process, its wall and CPU time and
   peak resident memory (the child's ru_maxrss), then the index's and the catalog's size on disk;
2. the unchanged pass: a reconcile of the untouched vault (median of 3), beside a bare stat walk;
3. a lexical-only daemon (`agentmd serve`, AGENTMD_DENSE=0) over HTTP: p50/p99 of name queries and of
   question-length queries (4-12 words of a note's text), then its resident memory at rest with the index
   loaded;
4. the dense arm: the real model's rate in the daemon's slices of 8 on a sample of the vault's chunks and the
   time to full coverage it implies, then the store filled by search_bench's stand-in vectors (a search's
   cost does not depend on their values), the vector file's size and the memory the loaded store takes;
   a daemon with the dense arm then answers the same queries in `hybrid` (and lexically), and its resident
   memory is read with every vector loaded and the model warm.

Bars (issue #16): lexical build <= 60 s, lexical daemon RSS <= 500 MB, unchanged pass <= 1 s, lexical search
p99 <= 50 ms.

    .venv/bin/python bench/scale_bench.py [--notes 100000] [--mode synthetic|corpora|both] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hook_bench import daemon_pid, wait_for_daemon
from index_bench import generate, stat_walk
from search_bench import fill_vectors, queries, rss_kib, summary, timed

from agentmd.engine.client import DaemonClient, access_token
from agentmd.engine.index.embedder import MODEL_ID
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.index.vectors import VectorStore
from agentmd.engine.settings import resolve

BARS = {"build_s": 60.0, "daemon_rss_mib": 500.0, "unchanged_s": 1.0, "search_p99_ms": 50.0}
CORPORA = Path("/work/shared/corpora")
SOURCES = ("dendron-site", "obsidian-tasks", "vaultofknowledge")
WORD = re.compile(r"[A-Za-z]{4,}")


# ----- vaults -----


def corpus_files(root: Path) -> list[tuple[str, Path]]:
    """(source name, file) for every Markdown note of the shared corpora, dot folders left out."""
    out = []
    for name in SOURCES:
        base = root / name
        for path in sorted(base.rglob("*.md")):
            if not any(part.startswith(".") for part in path.relative_to(base).parts):
                out.append((name, path))
    return out


def perturb(text: str, copy: int, rng: random.Random, share: float = 0.06) -> str:
    """The note with a new title and a share of its words swapped for other words of the same note."""
    head, body = "", text
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end > 0:
            head, body = text[: end + 4], text[end + 4 :]
    words = WORD.findall(body)
    if words:
        body = WORD.sub(lambda m: rng.choice(words) if rng.random() < share else m.group(0), body)
    suffix = f" {rng.choice(words) if words else 'copy'} {copy}"
    title = re.search(r"^title:[ \t]*(.*?)[ \t]*$", head, flags=re.M)
    if title:
        value = title.group(1).strip("'\"") + suffix
        head = head[: title.start()] + f"title: {json.dumps(value, ensure_ascii=False)}" + head[title.end() :]
    elif re.search(r"^# .*$", body, flags=re.M):
        body = re.sub(r"^(# [^\n]*)$", lambda m: m.group(1) + suffix, body, count=1, flags=re.M)
    return head + body


def generate_corpora(vault: Path, n: int, root: Path = CORPORA, seed: int = 3) -> int:
    """`n` notes made of the shared corpora, copy 0 as it is and every later copy edited (see the docstring)."""
    files = corpus_files(root)
    if not files:
        raise SystemExit(f"no notes under {root}/{{{','.join(SOURCES)}}}")
    rng = random.Random(seed)
    written = 0
    copy = 0
    while written < n:
        for name, path in files:
            if written >= n:
                break
            rel = path.relative_to(root / name)
            text = path.read_text(encoding="utf-8", errors="replace")
            if copy:
                text = perturb(text, copy, rng)
                rel = rel.with_name(f"{rel.stem}-{copy}.md")
            target = vault / f"copy-{copy:02d}" / name / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            written += 1
        copy += 1
    return written


# ----- measurements -----


def disk_mib(path: Path) -> float:
    if path.is_file():
        return round(path.stat().st_size / 2**20, 1)
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20, 1)


def lexical_build(env: dict[str, str]) -> dict[str, float]:
    """`agentmd reindex --from-scratch --no-dense` in a child process: wall time and peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentmd", "reindex", "--from-scratch", "--no-dense"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"reindex failed ({proc.returncode}): {err[-2000:]}")
    return {
        "build_s": round(seconds, 2),
        "build_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),  # the command's and its worker processes'
        "build_peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }


def unchanged(vault: Path, cache: Path, runs: int = 3) -> dict[str, float]:
    passes, walks = [], []
    with Store(cache) as store:
        for _ in range(runs):
            t0 = time.perf_counter()
            stat_walk(vault)
            walks.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            report = reconcile(vault, store)
            passes.append(time.perf_counter() - t0)
            assert report.changed == 0, report.to_dict()
    return {"unchanged_s": round(statistics.median(passes), 3), "stat_walk_s": round(statistics.median(walks), 3)}


def serve(env: dict[str, str], state_dir: Path) -> tuple[subprocess.Popen[bytes], DaemonClient]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentmd", "serve", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    port = wait_for_daemon(state_dir, proc, timeout=900)
    return proc, DaemonClient(port, timeout=60, token=access_token(state_dir))


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def latencies(client: DaemonClient, asked: dict[str, list[str]], modes: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for shape, texts in asked.items():
        for mode in modes:
            got = timed(client, [{"query": q, "mode": mode} for q in texts])
            out[f"{'lexical' if mode == 'fusion' else mode}_{shape}"] = summary(got)
    return out


def wait_dense(client: DaemonClient, timeout: float = 900.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        dense = client.get("/status").get("dense") or {}
        if dense.get("chunks_total") and dense.get("chunks_done") == dense.get("chunks_total"):
            return dense
        if dense.get("state") == "lexical-only" or time.monotonic() > deadline:
            raise SystemExit(f"the daemon's dense arm is not ready: {dense}")
        time.sleep(0.5)


def memory(pid: int) -> dict[str, float]:
    """A process's resident memory (MiB): the total, and its anonymous part (the heap: Python objects, numpy
    arrays, the model's arena) apart from file pages (the memory-mapped index, the catalog's pages)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _colon, rest = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            fields[name] = round(int(rest.split()[0]) / 1024, 1)
    return {
        "rss_mib": fields.get("VmRSS", 0.0),
        "anon_mib": fields.get("RssAnon", 0.0),
        "file_mib": fields.get("RssFile", 0.0),
        "peak_mib": fields.get("VmHWM", 0.0),
    }


def store_memory(cache: Path) -> dict[str, float]:
    """What the loaded vector store adds to this process (VmRSS before and after loading it and readying a
    search), and the size of the vectors themselves (int8 codes and a scale per row)."""
    before = rss_kib(os.getpid())
    t0 = time.perf_counter()
    store = VectorStore(cache, MODEL_ID)
    rows = store.coverage().done
    matrix = store.vector_bytes()
    load_s = time.perf_counter() - t0
    after = rss_kib(os.getpid())
    del store
    return {
        "store_load_s": round(load_s, 2),
        "store_rss_mib": round((after - before) / 1024, 1),
        "matrix_mib": round(matrix / 2**20, 1),
        "rows": rows,
    }


def run(mode: str, notes: int, n_queries: int, work: Path, corpora: Path, dense: bool) -> dict[str, Any]:
    vault = work / "vault"
    env = {
        **os.environ,
        "HOME": str(work / "home"),
        "XDG_CACHE_HOME": str(work / "cache"),
        "XDG_STATE_HOME": str(work / "state"),
        "XDG_CONFIG_HOME": str(work / "config"),
        "AGENTMD_VAULT": str(vault),
    }
    result: dict[str, Any] = {"mode": mode, "notes": notes, "load_average_1min_at_start": round(os.getloadavg()[0], 2)}
    t0 = time.perf_counter()
    if (vault / ".complete").is_file():
        result["generate_s"] = None  # kept from an earlier run (--keep)
    else:
        if mode == "synthetic":
            generate(vault, notes)
        else:
            generate_corpora(vault, notes, corpora)
        (vault / ".complete").write_text(str(notes), encoding="utf-8")
        result["generate_s"] = round(time.perf_counter() - t0, 1)
    settings = resolve(vault=str(vault), env=env)
    result |= lexical_build(env)
    result["index_mib"] = disk_mib(settings.index_dir)
    result["catalog_mib"] = round(sum(disk_mib(p) for p in settings.cache_dir.glob("catalog.sqlite3*")), 1)
    result |= unchanged(vault, settings.cache_dir)
    asked = queries(vault, n_queries)

    proc, client = serve({**env, "AGENTMD_DENSE": "0"}, settings.state_dir)
    try:
        result["lexical_daemon"] = latencies(client, asked, ("fusion",))
        result["lexical_daemon_memory"] = memory(daemon_pid(settings.state_dir))
        result["lexical_daemon_rss_mib"] = result["lexical_daemon_memory"]["rss_mib"]
    finally:
        stop(proc)
    if not dense:
        return result

    with Store(settings.cache_dir) as store:
        hashes = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
    vectors = fill_vectors(settings.cache_dir, vault, hashes, real=False)
    vectors["vectors_file_mib"] = disk_mib(settings.cache_dir / "vectors.npz")
    vectors |= store_memory(settings.cache_dir)
    proc, client = serve(env, settings.state_dir)
    try:
        vectors["daemon_load_s"] = wait_dense(client).get("load_seconds")
        result["dense_daemon"] = latencies(client, asked, ("hybrid", "fusion"))
        result["dense_daemon_memory"] = memory(daemon_pid(settings.state_dir))
        result["dense_daemon_rss_mib"] = result["dense_daemon_memory"]["rss_mib"]
    finally:
        stop(proc)
    result["dense"] = vectors
    return result


def verdict(result: dict[str, Any]) -> dict[str, bool]:
    lex = result["lexical_daemon"]
    return {
        "build": result["build_s"] <= BARS["build_s"],
        "daemon_rss": result["lexical_daemon_rss_mib"] <= BARS["daemon_rss_mib"],
        "unchanged": result["unchanged_s"] <= BARS["unchanged_s"],
        "search_p99": max(row["p99_ms"] for row in lex.values()) <= BARS["search_p99_ms"],
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['mode']}: {result['notes']} notes (generated in {result['generate_s']} s)",
        f"  lexical build {result['build_s']} s (CPU {result.get('build_cpu_s')} s),"
        f" peak RSS {result['build_peak_rss_mib']} MiB;"
        f" index {result['index_mib']} MiB, catalog {result['catalog_mib']} MiB on disk",
        f"  unchanged pass {result['unchanged_s']} s (bare stat walk {result['stat_walk_s']} s)",
        f"  lexical daemon RSS {result['lexical_daemon_rss_mib']} MiB"
        f" ({result['lexical_daemon_memory']['anon_mib']} MiB heap, {result['lexical_daemon_memory']['file_mib']}"
        " MiB file pages)",
    ]
    for part in ("lexical_daemon", "dense_daemon"):
        for name, row in result.get(part, {}).items():
            lines.append(
                f"  {part.split('_')[0]:7s} daemon {name:18s} p50 {row['p50_ms']:7.2f} ms  p99 {row['p99_ms']:7.2f} ms"
            )
    dense = result.get("dense")
    if dense:
        lines.append(
            f"  dense: {dense['chunks']} chunks; model {dense['model_chunks_per_s']} chunks/s, full coverage in"
            f" about {dense['coverage_eta_s'] / 3600:.1f} h; vectors {dense['vectors_file_mib']} MiB on disk,"
            f" {dense['store_rss_mib']} MiB loaded (matrix {dense['matrix_mib']} MiB);"
            f" dense daemon RSS {result['dense_daemon_rss_mib']} MiB"
        )
    lines.append("  bars: " + ", ".join(f"{k} {'pass' if v else 'FAIL'}" for k, v in result["pass"].items()))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--mode", choices=("synthetic", "corpora", "both"), default="both")
    ap.add_argument("--queries", type=int, default=200, help="queries a shape")
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--no-dense", action="store_true", help="measure the lexical side only")
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = ap.parse_args()

    results = []
    for mode in ("synthetic", "corpora") if args.mode == "both" else (args.mode,):
        work = args.keep / mode if args.keep else Path(tempfile.mkdtemp(prefix=f"agentmd-scale-{mode}-"))
        work.mkdir(parents=True, exist_ok=True)
        try:
            result = run(mode, args.notes, args.queries, work, args.corpora, not args.no_dense)
        finally:
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)
        result["bars"] = BARS
        result["pass"] = verdict(result)
        result["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)  # the machine is shared
        results.append(result)
        print(report(result), file=sys.stderr, flush=True)
        if args.out:  # after each vault, so a long run keeps what it measured
            args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))
    print("\n\n".join(report(r) for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
