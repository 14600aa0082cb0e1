"""What this stop's checks cost on their hot paths, each against a floor measured in the same run.

- the Bash file guard, as Claude Code runs it (a process per tool call, the payload on stdin): ordinary project
  commands and commands that read the vault, against a bare `python -c pass` start (interleaved rounds, wall
  time), and the guard's own reading of a command in this process (CPU time);
- `memory_search`'s withholding (`withhold_rows`) of a ten-row answer, against the search that made it (CPU);
- the committer's check of git's index (`index_damaged`) against reading the index file (CPU);
- a sync round's look for conflict markers before a push (`notes_with_markers`), against `git rev-parse HEAD`.

The vault is a git copy of a shared corpus (`--corpus`, vaultofknowledge by default: 2,721 notes), made under
`--work` and kept. Prints one JSON object.

    .venv/bin/python bench/guard_bench.py [--work /tmp/guard-bench] [--rounds 20]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentmd.engine.git.conflicts import notes_with_markers
from agentmd.engine.git.lock import index_damaged
from agentmd.engine.git.runner import GitCli
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.query import search
from agentmd.engine.search.recall import withhold_rows
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import resolve
from agentmd.hooks.shell_writes import check_shell_writes
from agentmd.rules import default_contract

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
HOOK = str(Path(sys.executable).with_name("agentmd-hook"))
CONTRACT = default_contract()
QUERIES = ("docker compose", "loop device disk image", "python virtual environment", "git rebase", "linux kernel")


def vault_at(work: Path, corpus: str) -> Path:
    vault = work / "vault"
    if not (vault / ".git").exists():
        shutil.copytree(CORPORA / corpus, vault)
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
               "GIT_COMMITTER_EMAIL": "b@x"}  # fmt: skip
        for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "corpus"]):
            subprocess.run(["git", *argv], cwd=vault, check=True, env=env)
        note = next(vault.rglob("*.md"))  # one note edited since: what an ordinary push carries
        note.write_text(note.read_text(encoding="utf-8") + "\nedited since\n", encoding="utf-8")
        subprocess.run(["git", "commit", "-qam", "one edit"], cwd=vault, check=True, env=env)
    return vault


def commands(vault: Path) -> dict[str, list[str]]:
    v = str(vault)
    return {
        "project": ["npm test", "pytest -q && ruff check .", "git status && git diff HEAD~1 --stat",
                    "find . -name '*.pyc' -delete", "docker compose up -d", "sed -i 's/a/b/' src/x.py"],
        "reads the vault": [f"rg -n docker '{v}'", f"find '{v}' -name '*.md' | xargs grep -l kernel",
                            f"git -C '{v}' log --oneline -5", f"cp '{v}/README.md' /tmp/copy.md",
                            f"python3 -c \"print(open('{v}/README.md').read()[:80])\""],
    }  # fmt: skip


def per(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(values) * 1000, 3), "max_ms": round(max(values) * 1000, 3)}


def hook_runs(vault: Path, cmds: list[str], rounds: int) -> dict[str, object]:
    env = {**os.environ, "AGENTMD_VAULT": str(vault)}
    hook, bare = [], []
    for _ in range(rounds):
        for command in cmds:
            payload = json.dumps({"hook_event_name": "PreToolUse", "cwd": "/tmp", "tool_name": "Bash",
                                  "tool_input": {"command": command}})  # fmt: skip
            start = time.perf_counter()
            done = subprocess.run([HOOK, "file-guard", "--vault", str(vault)], input=payload, capture_output=True,
                                  text=True, env=env)  # fmt: skip
            hook.append(time.perf_counter() - start)
            assert done.returncode == 0, done.stderr
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - start)
    return {"hook": per(hook), "floor_bare_python": per(bare),
            "ratio_p50": round(statistics.median(hook) / statistics.median(bare), 2)}  # fmt: skip


def cpu(fn, repeat: int) -> float:
    start = time.process_time()
    for _ in range(repeat):
        fn()
    return (time.process_time() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/tmp/guard-bench"))
    parser.add_argument("--corpus", default="vaultofknowledge")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    vault = vault_at(args.work, args.corpus)
    out: dict[str, object] = {"notes": sum(1 for _ in vault.rglob("*.md")), "loadavg": os.getloadavg()}

    cmds = commands(vault)
    out["guard_process"] = {kind: hook_runs(vault, c, args.rounds) for kind, c in cmds.items()}
    every = [c for cs in cmds.values() for c in cs]
    out["guard_in_process_cpu_ms"] = round(
        cpu(lambda: [check_shell_writes(c, cwd="/tmp", vault=vault) for c in every], 50) / len(every) * 1000, 4
    )

    os.environ["XDG_CACHE_HOME"] = str(args.work / "cache")
    os.environ["XDG_STATE_HOME"] = str(args.work / "state")
    settings = resolve(vault=str(vault))
    with Store(settings.cache_dir) as store:
        reconcile(vault, store)
        answers = [
            search(store.index, CONTRACT, SearchRequest(query=q, limit=10, mode="fusion"), store.catalog).to_json()
            for q in QUERIES
        ]
        searched = cpu(
            lambda: [
                search(store.index, CONTRACT, SearchRequest(query=q, limit=10, mode="fusion"), store.catalog)
                for q in QUERIES
            ],
            5,
        )
    for answer in copy.deepcopy(answers):  # the daemon compiles the prefilters' rules at start: not timed here
        withhold_rows(answer)
    copies = [copy.deepcopy(answers) for _ in range(21)]
    withheld = cpu(lambda: [withhold_rows(a) for a in copies.pop()], 20)
    out["withhold"] = {"cpu_ms_per_answer": round(withheld / len(QUERIES) * 1000, 3),
                       "floor_search_cpu_ms": round(searched / len(QUERIES) * 1000, 3),
                       "ratio": round(withheld / searched, 3)}  # fmt: skip

    index = (vault / ".git" / "index").read_bytes()
    read = cpu(lambda: (vault / ".git" / "index").read_bytes(), 200)
    checked = cpu(lambda: index_damaged((vault / ".git" / "index").read_bytes()), 200)
    out["index_check"] = {"index_bytes": len(index), "cpu_ms": round(checked * 1000, 3),
                          "floor_read_cpu_ms": round(read * 1000, 3)}  # fmt: skip

    git = GitCli(vault)
    head = git.run("rev-parse", "HEAD").text
    t0 = time.perf_counter()
    for _ in range(5):
        notes_with_markers(git, head, None)
    markers = (time.perf_counter() - t0) / 5
    t0 = time.perf_counter()
    for _ in range(5):
        notes_with_markers(git, head, git.run("rev-parse", "HEAD~1").text)
    one = (time.perf_counter() - t0) / 5
    t0 = time.perf_counter()
    for _ in range(5):
        git.run("rev-parse", "HEAD")
    floor = (time.perf_counter() - t0) / 5
    out["markers_before_push"] = {"first_push_wall_ms": round(markers * 1000, 1),
                                  "one_note_push_wall_ms": round(one * 1000, 1),
                                  "floor_git_call_ms": round(floor * 1000, 1),
                                  "ratio_first": round(markers / floor, 1),
                                  "ratio_one": round(one / floor, 1)}  # fmt: skip
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
