"""Build benchmark: a full lexical build and an unchanged pass, each against its floor in the same run.

Generates a synthetic vault (index_bench.py's generator: frontmatter, headings, links, tags, a few KB a
note) and measures, interleaved in each of --runs rounds:

- the floor (index_bench.py's `floor`): a stat walk, reading every note, parsing every frontmatter block
  with libyaml, and raw tantivy indexing of path, title and body in one commit; and the same floor with the
  fields agentmd fills (aliases and tags, frontmatter + body, the body stored, the date);
- `agentmd reindex --no-dense` on a fresh cache, as a command (process start, imports and all);
- the same build in this process (`Store` + `reconcile`), wall and CPU time (this process and its children);
  its worker processes are forked, as the command's are, unless the floor's Tantivy writers left threads
  running in this process, which makes it spawn them (engine/index/notes.py, `fork_is_safe`; the summary
  says which);
- a bare stat walk, then the pass over the unchanged vault on a freshly opened store (what a second
  `agentmd reindex` runs), --passes times a round; such a pass reads the stat keys from the snapshot the pass
  before left beside the catalog (engine/index/catalog.py), so once a round the snapshot is deleted first and
  the pass reads the catalog's table instead (and writes the snapshot again), to show what the snapshot saves.

The floor does part of a build's work and nothing a build does not: a build also reads each note's Markdown
(links, entities, derived aliases, inline tags, headings, the recall digest), hashes it, indexes the
frontmatter's text, the names field and the stored facts, and writes the catalog. Only its YAML step costs
more than the build's: libyaml reads every block, where a build reads simple blocks without the YAML loader.

Prints one JSON object, then a summary with the ratios against the bars (build <= 2.5x the floor,
unchanged pass <= 1.5x the stat walk). Medians over all rounds. The dense arm is off throughout.

    .venv/bin/python bench/build_bench.py [--notes 10000] [--runs 3] [--passes 5] [--keep DIR] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if __name__ == "__main__":
    # Imported by the benchmark only: a build's worker processes begin by importing this script again (as
    # `__mp_main__`), which agentmd's own command never makes them do, and these imports would double their
    # start-up cost.
    import tantivy
    import yaml
    from index_bench import floor, generate, stat_walk

    from agentmd.engine.index.notes import fork_is_safe
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.engine.index.store import Store

BUILD_BAR = 2.5
UNCHANGED_BAR = 1.5


def floor_same_fields(root: Path, tmp: Path) -> float:
    """Seconds for the floor's work with the fields agentmd fills: a stat walk, reading, libyaml, then raw
    tantivy (its built-in `en_stem` analyzer) indexing path, title, aliases and tags, frontmatter + body, the
    body stored for snippets and the date as a fast field, in one commit."""
    t0 = time.perf_counter()
    paths = stat_walk(root)
    docs = []
    for p in paths:
        with open(p, "rb") as fh:
            text = fh.read().decode("utf-8")
        end = text.find("\n---", 3)
        yaml_text, body = text[4:end], text[end + 5 :]
        fm = yaml.load(yaml_text, Loader=yaml.CSafeLoader) or {}
        meta = " ".join(str(v) for key in ("aliases", "tags") for v in (fm.get(key) or []))
        docs.append((p, str(fm.get("title", "")), meta, yaml_text + "\n" + body, body, str(fm.get("date", ""))))
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw")
    for name in ("title", "meta", "body"):
        sb.add_text_field(name, stored=False, tokenizer_name="en_stem")
    sb.add_bytes_field("text", stored=True, indexed=False)
    sb.add_integer_field("day", stored=False, indexed=True, fast=True)
    idx_dir = tmp / f"floor-fields-{time.time_ns()}"
    idx_dir.mkdir()
    writer = tantivy.Index(sb.build(), path=str(idx_dir)).writer(heap_size=128_000_000, num_threads=0)
    for p, title, meta, body, text, date in docs:
        day = int(date[:10].replace("-", "") or 0)
        writer.add_document(
            tantivy.Document(path=p, title=title, meta=meta, body=body, text=text.encode("utf-8"), day=day)
        )
    writer.commit()
    writer.wait_merging_threads()
    seconds = time.perf_counter() - t0
    shutil.rmtree(idx_dir)
    return seconds


def agentmd_command() -> list[str]:
    """The installed command beside this interpreter, else the module run by this interpreter."""
    script = Path(sys.executable).parent / "agentmd"
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentmd"]


def cli_reindex(vault: Path, cache: Path, home: Path) -> tuple[float, dict[str, Any]]:
    """Seconds for `agentmd reindex --no-dense --json` as a command, and its report."""
    env = {
        **os.environ,
        "AGENTMD_DENSE": "0",
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
    }
    cmd = [*agentmd_command(), "reindex", "--vault", str(vault), "--index", str(cache), "--no-dense", "--json"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"agentmd reindex failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return seconds, json.loads(done.stdout)


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of its children that have ended."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def build_in_process(
    vault: Path, cache: Path, notes: int, profile: cProfile.Profile | None
) -> tuple[float, float, str]:
    """Wall and CPU seconds of a full build into an empty cache folder, and how its workers started ("fork",
    or "spawn" while threads of the floor's Tantivy writers still run in this process)."""
    shutil.rmtree(cache, ignore_errors=True)
    method = "fork" if fork_is_safe() else "spawn"
    c0, t0 = cpu_seconds(), time.perf_counter()
    if profile is not None:
        profile.enable()
    with Store(cache) as store:
        report = reconcile(vault, store)
    if profile is not None:
        profile.disable()
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    if report.added != notes or report.errors:
        raise RuntimeError(f"build indexed {report.added} of {notes} notes: {report.to_dict()}")
    return wall, cpu, method


def unchanged_pass(vault: Path, cache: Path, *, snapshot: bool = True) -> tuple[float, float]:
    """(bare stat walk, reconcile of the unchanged vault on a freshly opened store), in seconds. Without
    `snapshot`, the stat keys' snapshot is deleted first: the pass reads them from the catalog's table."""
    with Store(cache) as store:
        if not snapshot:
            store.catalog.snapshot_path.unlink()
        t0 = time.perf_counter()
        stat_walk(vault)
        walk = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = reconcile(vault, store)
        seconds = time.perf_counter() - t0
    if report.changed:
        raise RuntimeError(f"the unchanged pass changed something: {report.to_dict()}")
    return walk, seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3, help="rounds of floor, command build, in-process build")
    ap.add_argument("--passes", type=int, default=5, help="unchanged passes (each after a stat walk) per round")
    ap.add_argument("--keep", help="generate the vault here (reused when it already holds --notes notes)")
    ap.add_argument("--no-cli", action="store_true", help="skip the `agentmd reindex` command runs")
    ap.add_argument("--profile", action="store_true", help="print where the in-process builds spend their time")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="agentmd-build-bench-"))
    vault = Path(args.keep).resolve() if args.keep else tmp / "vault"
    if not (vault.is_dir() and len(stat_walk(vault)) == args.notes):
        shutil.rmtree(vault, ignore_errors=True)
        vault.mkdir(parents=True)
        generate(vault, args.notes)
    size = sum(os.path.getsize(p) for p in stat_walk(vault))
    profile = cProfile.Profile() if args.profile else None

    floors: list[dict[str, float]] = []
    cli: list[float] = []
    builds: list[float] = []
    cpus: list[float] = []
    walks: list[float] = []
    passes: list[float] = []
    table_passes: list[float] = []  # unchanged passes without the stat keys' snapshot
    cache = tmp / "cache"
    floor_cpus: list[float] = []
    methods: set[str] = set()  # how the in-process builds started their workers
    field_floors: list[float] = []
    for r in range(args.runs):
        c0 = cpu_seconds()
        floors.append(floor(vault, tmp))
        floor_cpus.append(cpu_seconds() - c0)
        field_floors.append(floor_same_fields(vault, tmp))
        if not args.no_cli:
            seconds, report = cli_reindex(vault, tmp / f"cli-cache-{r}", tmp / "home")
            if report.get("added") != args.notes:
                raise RuntimeError(f"agentmd reindex indexed {report.get('added')} of {args.notes} notes")
            cli.append(seconds)
            shutil.rmtree(tmp / f"cli-cache-{r}", ignore_errors=True)
        wall, cpu, method = build_in_process(vault, cache, args.notes, profile)
        methods.add(method)
        builds.append(wall)
        cpus.append(cpu)
        for _ in range(args.passes):
            walk, seconds = unchanged_pass(vault, cache)
            walks.append(walk)
            passes.append(seconds)
        walk, seconds = unchanged_pass(vault, cache, snapshot=False)
        walks.append(walk)
        table_passes.append(seconds)

    med = statistics.median
    floor_total = med(f["total"] for f in floors)
    result: dict[str, Any] = {
        "notes": args.notes,
        "vault_mb": round(size / 1e6, 1),
        "runs": args.runs,
        "cores": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "floor_s": {k: round(med(f[k] for f in floors), 4) for k in floors[0]},
        "floor_cpu_s": round(med(floor_cpus), 4),
        "floor_same_fields_s": round(med(field_floors), 4),
        "build_in_process_s": round(med(builds), 4),
        "build_in_process_cpu_s": round(med(cpus), 4),
        "build_in_process_workers": " and ".join(sorted(methods)),
        "build_ratio_to_floor": round(med(builds) / floor_total, 2),
        "build_cpu_ratio_to_floor_cpu": round(med(cpus) / med(floor_cpus), 2),
        "build_ratio_to_same_fields_floor": round(med(builds) / med(field_floors), 2),
        "stat_walk_s": round(med(walks), 4),
        "unchanged_pass_s": round(med(passes), 4),
        "unchanged_ratio_to_stat_walk": round(med(passes) / med(walks), 2),
        "unchanged_pass_from_table_s": round(med(table_passes), 4),
        "unchanged_from_table_ratio_to_stat_walk": round(med(table_passes) / med(walks), 2),
        "bars": {"build_ratio_max": BUILD_BAR, "unchanged_ratio_max": UNCHANGED_BAR},
    }
    if cli:
        result["reindex_command_s"] = round(med(cli), 4)
        result["reindex_command_ratio_to_floor"] = round(med(cli) / floor_total, 2)
    build_ratio = result.get("reindex_command_ratio_to_floor", result["build_ratio_to_floor"])
    result["pass"] = {
        "build": build_ratio <= BUILD_BAR,
        "unchanged": result["unchanged_ratio_to_stat_walk"] <= UNCHANGED_BAR,
    }
    print(json.dumps(result, indent=2))
    f = result["floor_s"]
    lines = [
        f"\n{args.notes} notes ({result['vault_mb']} MB), medians of {args.runs} rounds, "
        f"{result['cores']} cores, load {result['load_average_1m']}",
        f"  floor: stat {f['stat_walk']:.3f}s + read {f['read_all']:.3f}s + yaml {f['yaml_parse']:.3f}s"
        f" + tantivy {f['tantivy_index']:.3f}s = {f['total']:.3f}s (CPU {result['floor_cpu_s']:.3f}s)",
        f"  floor with agentmd's fields (title, aliases and tags, frontmatter + body, stored body, date)"
        f" {result['floor_same_fields_s']:.3f}s",
    ]
    if cli:
        lines.append(
            f"  agentmd reindex (command, fresh cache) {result['reindex_command_s']:.3f}s"
            f" = {result['reindex_command_ratio_to_floor']}x floor (bar {BUILD_BAR}x)"
        )
    lines += [
        f"  build in process (workers: {result['build_in_process_workers']}) {result['build_in_process_s']:.3f}s"
        f" (CPU {result['build_in_process_cpu_s']:.3f}s)"
        f" = {result['build_ratio_to_floor']}x floor (CPU {result['build_cpu_ratio_to_floor_cpu']}x),"
        f" {result['build_ratio_to_same_fields_floor']}x the floor with agentmd's fields",
        f"  unchanged pass {1000 * result['unchanged_pass_s']:.1f} ms"
        f" vs stat walk {1000 * result['stat_walk_s']:.1f} ms = {result['unchanged_ratio_to_stat_walk']}x"
        f" (bar {UNCHANGED_BAR}x), {len(passes)} passes",
        f"  unchanged pass without the stat keys' snapshot {1000 * result['unchanged_pass_from_table_s']:.1f} ms"
        f" = {result['unchanged_from_table_ratio_to_stat_walk']}x the stat walk, {len(table_passes)} passes",
    ]
    print("\n".join(lines))
    if profile is not None:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(40)
        print(out.getvalue())
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
