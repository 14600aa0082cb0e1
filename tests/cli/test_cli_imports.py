"""The command line starts light: what each command imports, seen from a real process.

`--help`, a command's `--help` and argument errors load no engine module beyond the errors and nothing heavy.
With a real daemon up on a temp vault, `search`, `capture`, `status`, `recall` and `probe` go through the one
light client (engine/client.py) and load neither tantivy, the contract and note model (yaml), the web stack
nor the model; their output is what the daemon gives for the requests the command line sent before it was
light. Without a daemon each command still does the work itself.

Each command runs as a new process whose `sys.modules` is written to a file at exit.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

from agentmd.engine.settings import resolve
from tests.daemon_helpers import GIT_ENV, bearer, http_get, make_repo, wait_until

# Run the command line and write the names of every module it loaded, one a line, when the process ends.
WRAPPER = (
    "import atexit, os, sys\n"
    "def _dump():\n"
    "    with open(os.environ['AGENTMD_TEST_MODULES'], 'w', encoding='utf-8') as fh:\n"
    "        fh.write('\\n'.join(sorted(sys.modules)))\n"
    "atexit.register(_dump)\n"
    "from agentmd.cli import main\n"
    "sys.exit(main())\n"
)
# The prompt hook as Claude Code runs it (`agentmd-hook recall`, hooks/entry.py), its modules written the same way
HOOK_WRAPPER = WRAPPER.replace("from agentmd.cli import main", "from agentmd.hooks.entry import main")
HEAVY = (
    "tantivy",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "yaml",
    "ruamel",
    "starlette",
    "uvicorn",
    "anyio",
    "mcp",
    "pydantic",
    "watchdog",
    "httpx",
    "http.client",
    "urllib.request",
    "agentmd.rules",
    "agentmd.vault_schema",
    "agentmd.engine.index.store",
    "agentmd.engine.index.fulltext",
    "agentmd.engine.search.searcher",
    "agentmd.engine.write",
    "agentmd.engine.git",
    "agentmd.engine.daemon.service",
    "agentmd.engine.daemon.instance",
)
PARSER_ONLY = {"agentmd.engine", "agentmd.engine.errors"}
# the client finds the daemon through the vault lease and reads the access token (both standard library only)
CLIENT = PARSER_ONLY | {
    "agentmd.engine.settings",
    "agentmd.engine.places",
    "agentmd.engine.jsonwire",
    "agentmd.engine.client",
    "agentmd.engine.backends",
    "agentmd.engine.lease",
    "agentmd.engine.secret",
}
# `recall` runs the prompt hook's own light path (engine/recall/pipeline.py) and counts what it shows
RECALL = CLIENT | {
    "agentmd.hooks",
    "agentmd.hooks.recall",
    "agentmd.engine.recall",
    "agentmd.engine.recall.pipeline",
    "agentmd.engine.recall.query",
    "agentmd.engine.recall.render",
    "agentmd.vocabulary",
    "agentmd.engine.search",
    "agentmd.engine.search.recall",
    "agentmd.engine.index",
    "agentmd.engine.index.catalog",
    "agentmd.engine.index.catalog_base",
    "agentmd.engine.index.catalog_links",
    "agentmd.engine.index.catalog_notes",
    "agentmd.engine.index.catalog_schema",
    "agentmd.engine.index.catalog_usage",
    "agentmd.engine.index.sqlite_threads",
    "agentmd.engine.index.usage",
    "agentmd.engine.recall_pause",  # whether recall is paused (standard library only)
    "agentmd.engine.times",  # the pause's times read back (standard library only)
    "agentmd.engine.hooklog",  # the hook's default time budget
}
# the prompt hook with the daemon up (hooks/recall/light.py): the daemon runs the whole recall (/v1/recall), so
# the hook loads only what finds and calls it, and the log
HOOK = PARSER_ONLY | {
    "agentmd.engine.places",
    "agentmd.engine.jsonwire",
    "agentmd.engine.client",
    "agentmd.engine.lease",
    "agentmd.engine.secret",
    "agentmd.engine.hooklog",
    "agentmd.hooks",
    "agentmd.hooks.entry",
    "agentmd.hooks.protocol",
    "agentmd.hooks.recall",
    "agentmd.hooks.recall.light",
}
# `status` renders the daemon's answer with engine/daemon/status_render.py (its jobs lines included)
STATUS = CLIENT | {
    "agentmd.engine.fsutil",
    "agentmd.engine.recall_pause",  # the recall pause, shown as information (standard library only)
    "agentmd.engine.times",  # the times status reads from state files (standard library only)
    "agentmd.engine.synctools",  # names the conflict copies a file-sync tool left (standard library only)
    "agentmd.vocabulary",  # where a vault's own contract lives, said beside the packaged one (no imports)
    "agentmd.engine.daemon",
    "agentmd.engine.daemon.status",
    "agentmd.engine.daemon.status_render",
    "agentmd.engine.jobs",
    "agentmd.engine.jobs.manifest",
    "agentmd.engine.jobs.notify",
    "agentmd.engine.jobs.report",
    "agentmd.engine.jobs.runner",
    "agentmd.engine.jobs.schedule",
}

NOTES = {
    "notes/wal.md": "---\ntitle: SQLite WAL mode\ntags: [sqlite]\n---\nWAL mode lets readers run beside one writer.\n",
    "notes/queue.md": "# Job queue\n\nThe job queue retries failed jobs with backoff; see [[SQLite WAL mode]].\n",
    "notes/postgres.md": "# Postgres in CI\n\nCI pins the Postgres minor version; the queue tests run on it.\n",
}


@dataclasses.dataclass
class Run:
    code: int
    out: str
    err: str
    modules: set[str]

    def engine(self) -> set[str]:
        return {m for m in self.modules if m.startswith(("agentmd.engine", "agentmd.hooks", "agentmd.vocabulary"))}

    def heavy(self) -> set[str]:
        return {m for m in self.modules if any(m == h or m.startswith(h + ".") for h in HEAVY)}


class Cli:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.vault = make_repo(root / "vault", NOTES)
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("AGENTMD_")},
            **GIT_ENV,
            "HOME": str(root / "home"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "AGENTMD_VAULT": str(self.vault),
            "AGENTMD_DENSE": "0",  # no model to load: the daemon is ready at once and answers lexically
            "COLUMNS": "100",
        }
        (root / "home").mkdir(exist_ok=True)
        self.settings = resolve(env=self.env)
        self.runs = 0

    def __call__(self, *argv: str, stdin: str | None = None, wrapper: str = WRAPPER) -> Run:
        self.runs += 1
        dump = self.root / f"modules-{self.runs}.txt"
        proc = subprocess.run(
            [sys.executable, "-c", wrapper, *argv],
            cwd=self.root,
            env={**self.env, "AGENTMD_TEST_MODULES": str(dump)},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr, set(dump.read_text(encoding="utf-8").split("\n")))


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    return Cli(tmp_path_factory.mktemp("cli-imports"))


@pytest.fixture(scope="module")
def before_daemon(cli: Cli) -> dict[str, str]:
    """What the commands print without a daemon, taken before the daemon starts (the index built here)."""
    first = cli("search", "queue", "retries")
    assert first.code == 0, first.err
    assert "agentmd.engine.index.store" in first.modules  # without a daemon the search runs in this process
    # and loads what searching needs, not the daemon's web stack, the watcher nor (dense switched off) the model
    unneeded = ("starlette", "uvicorn", "anyio", "mcp", "watchdog", "onnxruntime", "agentmd.engine.daemon.service")
    assert not {m for m in first.modules if m.split(".")[0] in unneeded or m in unneeded}
    return {
        "search": cli("search", "queue", "retries").out,
        "search_json": cli("search", "sqlite", "wal", "--json").out,
        "search_floor": cli("search", "queue", "retries", "--floor", "0.999", "--json").out,
        "search_no_floor": cli("search", "queue", "retries", "--floor", "0", "--json").out,
        "search_floor_text": cli("search", "queue", "retries", "--floor", "0.999").out,
    }


def test_a_search_takes_its_own_floor_and_refuses_one_out_of_range(cli: Cli, before_daemon: dict[str, str]) -> None:
    """`--floor` replaces the contract's floor for one search, as given (a 3-note vault scales the contract's
    own floor down to almost nothing); 0 returns the whole ranking."""
    whole = json.loads(before_daemon["search_no_floor"])
    strict = json.loads(before_daemon["search_floor"])
    assert whole["floor"] == 0.0 and strict["floor"] == 0.999
    assert whole["results"] and all(r["confidence"] < 0.999 for r in whole["results"])
    assert strict["results"] == [] and strict["below_floor"] == len(whole["results"])
    assert "closest miss" in strict["note"]
    assert "`--floor 0`" in before_daemon["search_floor_text"]  # a person is told how to see what the floor hid
    both = json.loads(cli("search", "queue", "--floor", "0", "--json").out)["results"]  # the queue and CI notes
    confidences = sorted(r["confidence"] for r in both)
    assert confidences[0] < confidences[-1], confidences
    between = (confidences[0] + confidences[-1]) / 2  # a floor that hides some results and keeps some
    partly = cli("search", "queue", "--floor", f"{between:.4f}").out
    hidden = sum(1 for c in confidences if c < between)
    assert f"{hidden} more note" in partly and "`--floor 0` shows them" in partly, partly
    for bad in ("2", "-0.1", "nan"):
        run = cli("search", "queue", "--floor", bad)
        assert run.code == 2, (bad, run.out)
        said = "not a finite number" if bad == "nan" else "out of range; use a number from 0 to 1"
        assert said in run.err, run.err


@pytest.fixture(scope="module")
def daemon(cli: Cli, before_daemon: dict[str, str]) -> Iterator[int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentmd", "serve", "--port", "0"],
        cwd=REPO,
        env=cli.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def ready() -> int | None:
        try:
            info = json.loads((cli.settings.state_dir / "daemon.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        port = info.get("port") if proc.pid in (info.get("pid"), info.get("supervisor")) else None
        if not port:
            return None
        try:
            return int(port) if http_get(int(port), "/health")[1].get("index_stale") is False else None
        except OSError:
            return None

    try:
        yield int(wait_until(ready, 60, "the daemon's first pass"))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def post(port: int, route: str, payload: dict[str, Any], state_dir: Path) -> dict[str, Any]:
    """The daemon's answer to a request sent as the command line sent it before it loaded only the client."""
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/{route}",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", **bearer(state_dir)},
    )
    with opener.open(req, timeout=30) as resp:
        return dict(json.loads(resp.read()))


def assert_light(run: Run, allowed: set[str]) -> None:
    assert not run.heavy(), f"heavy modules loaded: {sorted(run.heavy())}"
    assert run.engine() <= allowed, f"engine modules beyond the light set: {sorted(run.engine() - allowed)}"


# ------------------------------------------------------------------------------------- the parser alone


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("--version",),
        ("search", "--help"),
        ("capture", "--help"),
        ("serve", "--help"),
        ("recall", "--help"),
        ("hook", "session-start", "--help"),
        ("eval", "fixtures", "--help"),
        ("status", "--help"),
    ],
)
def test_help_and_version_load_no_engine(cli: Cli, argv: tuple[str, ...]) -> None:
    run = cli(*argv)
    assert run.code == 0, run.err
    assert run.out
    assert_light(run, PARSER_ONLY)
    assert "logging" not in run.modules and "tomllib" not in run.modules and "shutil" not in run.modules


@pytest.mark.parametrize(
    "argv",
    [("search",), ("nonsense",), ("search", "x", "--limit", "many"), ("search", "x", "--mode", "fuzzy"), ()],
)
def test_argument_errors_load_no_engine(cli: Cli, argv: tuple[str, ...]) -> None:
    run = cli(*argv)
    assert run.code == 2
    assert_light(run, PARSER_ONLY)


def test_parser_defaults_agree_with_the_engine() -> None:
    """The defaults written out in the command line's modules are the engine's own."""
    from agentmd.cli import capture, daemon, evaluation, hooks, index, recall
    from agentmd.engine import settings
    from agentmd.engine.recall import pipeline, render
    from agentmd.engine.search import query
    from agentmd.engine.search.eval import metrics
    from agentmd.engine.write.request import field_names
    from agentmd.hooks import session_start

    assert (index.MODES, index.DEFAULT_MODE) == (query.MODES, query.DEFAULT_MODE)
    assert evaluation.DEFAULT_KS == metrics.DEFAULT_KS
    assert hooks.DEFAULT_BUDGET == session_start.DEFAULT_BUDGET
    assert (recall.TOKEN_BUDGET, recall.MAX_ENTRIES, recall.TIME_BUDGET) == (
        render.TOKEN_BUDGET,
        render.MAX_ENTRIES,
        pipeline.TIME_BUDGET,
    )
    assert (daemon.DEFAULT_PORT, daemon.RECONCILE_INTERVAL, daemon.COMMIT_DEBOUNCE, daemon.COMMIT_MAX_WAIT) == (
        settings.DEFAULT_PORT,
        settings.RECONCILE_INTERVAL,
        settings.COMMIT_DEBOUNCE,
        settings.COMMIT_MAX_WAIT,
    )
    assert list(capture.OPTION_FIELDS) == [f for f in field_names() if f not in ("title", "body")]


# ------------------------------------------------------------------------------------- with the daemon up


def test_search_through_the_daemon_loads_only_the_client(cli: Cli, daemon: int, before_daemon: dict[str, str]) -> None:
    from agentmd.cli.index import render_search
    from agentmd.engine.backends import request_payload
    from agentmd.engine.search.searcher import SearchRequest

    run = cli("search", "queue", "retries")
    assert run.code == 0, run.err
    assert_light(run, CLIENT)
    assert run.out == before_daemon["search"]  # the same index, the same answer as without the daemon
    # and the same as the daemon's answer to the request the command line sent while it built it in the engine
    old = request_payload(SearchRequest(query="queue retries", mode="hybrid")) | {"count_usage": False}
    assert run.out == render_search(post(daemon, "search", old, cli.settings.state_dir)) + "\n"

    run = cli("search", "sqlite", "wal", "--json")
    assert run.code == 0, run.err
    assert_light(run, CLIENT)
    answer = json.loads(run.out)
    assert answer.pop("index_stale") is False  # the daemon says whether its index is still building
    assert answer == json.loads(before_daemon["search_json"])

    for key, argv in (("search_floor", "0.999"), ("search_no_floor", "0")):  # the floor goes to the daemon
        run = cli("search", "queue", "retries", "--floor", argv, "--json")
        assert run.code == 0, run.err
        answer = json.loads(run.out)
        assert answer.pop("index_stale") is False
        assert answer == json.loads(before_daemon[key])
    run = cli("search", "queue", "--floor", "1.5")
    assert run.code == 2 and "out of range" in run.err

    run = cli("search", "queue", "--after", "not-a-date")
    assert run.code == 2
    assert "is not a date" in run.err
    assert_light(run, CLIENT | {"agentmd.engine.search", "agentmd.engine.search.when", "agentmd.vocabulary"})  # dates


def test_capture_through_the_daemon_loads_only_the_client(cli: Cli, daemon: int) -> None:
    from agentmd.engine.backends import request_payload
    from agentmd.engine.write.request import request_from_cli

    fields = ["--type", "decision", "--why", "a plan changed", "--tags", "ci, postgres", "--importance", "4"]
    run = cli("capture", "--title", "Pin the Postgres minor", *fields, "--related", "Postgres in CI", stdin="Body.")
    assert run.code == 0, run.err
    assert_light(run, CLIENT)
    assert run.out.startswith("captured memory/decisions/pin-the-postgres-minor.md (status active, indexed true)")
    # the note is the one the request built in the engine makes (the daemon splits the lists the same way)
    values = {"type": "decision", "why": "a plan changed", "tags": "ci, postgres", "importance": "4"}
    old = request_payload(request_from_cli({"title": "Pin the Postgres major", "body": "Body.", **values}))
    old["related"] = ["Postgres in CI"]
    answer = post(daemon, "capture", old | {"_actor": "agent"}, cli.settings.state_dir)
    new_note = (cli.vault / "memory/decisions/pin-the-postgres-minor.md").read_text(encoding="utf-8")
    old_note = (cli.vault / answer["path"]).read_text(encoding="utf-8")

    def shape(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if not ln.startswith(("title:", "captured:"))]

    assert shape(new_note) == shape(old_note)
    assert "- ci\n- postgres\n" in new_note and "'[[Postgres in CI]]'" in new_note

    # a refusal comes back as the write path's own error (so only then is its module loaded), with --json as JSON
    refused = cli(
        "capture",
        "--title",
        "Key",
        "--json",
        "--body",
        "aws_access_key_id = " + "AKIA" + "Q3EGRTNJ7XKPZM4B",
    )
    assert refused.code == 1
    assert json.loads(refused.out)["refused"] is True
    assert json.loads(refused.out)["code"].startswith("secret:")
    assert "nothing was written" in refused.err


def test_status_probe_and_recall_through_the_daemon(cli: Cli, daemon: int) -> None:
    from agentmd.engine.daemon.status import render

    run = cli("status", "--json")
    assert run.code in (0, 3), run.err
    assert_light(run, STATUS)
    assert json.loads(run.out)["daemon"]["running"] is True
    text = cli("status")
    assert_light(text, STATUS)
    lines = text.out.splitlines()
    expected = render(http_get(daemon, "/status", bearer(cli.settings.state_dir))[1]).splitlines()
    assert lines[:2] == expected[:2]  # the header and the daemon's line; ages move on between the two asks
    assert [ln.split()[0] for ln in lines] == [ln.split()[0] for ln in expected]

    run = cli("probe")
    assert run.code == 0, run.err
    assert_light(run, CLIENT)
    assert run.out.startswith("probe ok (round trip ")

    # the first recall reads the contract's walls and caches them in the state dir, as the hook does; from then on
    # a recall loads neither the contract nor the note model
    first = cli("recall", "how does the job queue retry failed jobs", "--preview")
    assert first.code == 0, first.err
    run = cli("recall", "how does the job queue retry failed jobs", "--preview")
    assert run.code == 0, run.err
    assert run.out == first.out
    assert_light(run, RECALL)
    assert "notes/queue.md" in run.out
    counted = cli("recall", "how does the job queue retry failed jobs", "--json")
    assert counted.code == 0, counted.err
    assert_light(counted, RECALL)
    assert json.loads(counted.out)["counted_recalls"] >= 1
    assert "agentmd.engine.index.store" not in run.modules


def test_the_prompt_hook_through_the_daemon_loads_neither_the_catalog_nor_sqlite(cli: Cli, daemon: int) -> None:
    """The hook as Claude Code runs it, with notes to show: one search and one count through the daemon; the
    block is the one `agentmd recall --preview` shows, and each note shown counts one injection."""
    prompt = "how does the job queue retry failed jobs"
    event = {"session_id": "s-imports", "cwd": str(cli.root), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    cli("recall", prompt, "--preview")  # the walls cached, as after any first prompt
    before = _injections(cli)
    run = cli("recall", stdin=json.dumps(event), wrapper=HOOK_WRAPPER)
    assert run.code == 0, run.err
    assert "notes/queue.md" in run.out
    assert_light(run, HOOK)
    assert "sqlite3" not in run.modules and "logging" not in run.modules
    # nor the standard library's heavier modules: dataclasses (with inspect and ast), socket's enums, OpenSSL
    assert not {"dataclasses", "inspect", "ast", "socket", "hashlib", "_hashlib"} & run.modules
    # nor the ones the engine's own recall needs: the daemon ran it
    assert not {"typing", "threading", "datetime", "agentmd.vocabulary"} & run.modules, sorted(run.modules)
    assert _injections(cli) - before == run.out.count("\n- ") >= 1
    preview = cli("recall", prompt, "--preview")
    assert_light(preview, RECALL | {"agentmd.cli", "agentmd.cli.recall", "agentmd.hooks.recall.hook"})
    assert run.out.strip() in preview.out


def _injections(cli: Cli) -> int:
    import sqlite3

    db = sqlite3.connect(cli.settings.catalog_path)
    try:
        return int(db.execute("SELECT COALESCE(SUM(injections), 0) FROM usage").fetchone()[0])
    finally:
        db.close()


def test_a_checkout_imports_through_a_plain_path_and_the_prompt_hook_stays_light() -> None:
    """An isolated interpreter (`-I`: no site-packages, no environment) given only the checkout's folder finds every
    subpackage beside agentmd/ (agentmd/__init__.py), as ./dev's plain-path install does; and the prompt hook's
    light path loads none of the standard library's costlier modules."""
    costly = "('pathlib', 'typing', 'threading', 'datetime', 'socket', 'signal', 'json', 're', 'enum')"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import agentmd.hooks.entry, agentmd.hooks.recall.light; "
        "import agentmd.engine.client as c; print(c.__file__); "
        f"print(' '.join(m for m in {costly} if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-I", "-c", code, str(REPO)], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr
    where, loaded = [*proc.stdout.splitlines(), ""][:2]
    assert where == str(REPO / "engine" / "client.py")
    assert loaded == ""


def test_a_parser_built_for_one_command_is_that_command_whole_and_lists_the_rest() -> None:
    """`main` builds only the command it was given (the others' arguments are never declared): each command's
    help is the same as in the whole command line, and with no command, or a mistyped one, every command is
    listed as the whole command line lists it."""
    import argparse

    from agentmd.cli import build_parser

    def table(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return dict(found[0].choices) if found else {}

    whole = build_parser()
    names = table(whole)
    assert len(names) > 40
    for name, sub in names.items():
        alone = table(build_parser(only=name))
        assert alone[name].format_help() == sub.format_help(), name
        for inner, inner_parser in table(sub).items():  # a group's own commands (`hook recall`, `token path`)
            assert table(alone[name])[inner].format_help() == inner_parser.format_help(), (name, inner)
    for only in (None, "no-such-command"):
        assert build_parser(only=only).format_help() == whole.format_help()


def _imported(node: ast.AST) -> set[str]:
    return {
        (alias.asname or alias.name).split(".")[0]
        for sub in ast.walk(node)
        if isinstance(sub, ast.Import | ast.ImportFrom)
        for alias in sub.names
    }


def _unimported_uses(fn: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str], given: set[str]) -> list[int]:
    """Lines where `fn` (or a function inside it) reads one of `names` at run time with no import of it in
    scope; annotations are not read at run time (`from __future__ import annotations`)."""
    have = given | _imported(fn)
    lines: list[int] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node is not fn:
            for default in [*node.args.defaults, *node.decorator_list]:
                visit(default)
            lines.extend(_unimported_uses(node, names, have))
            return
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load) and node.id not in have:
            lines.append(node.lineno)
        for field, value in ast.iter_fields(node):
            if field not in ("returns", "annotation"):
                for child in value if isinstance(value, list) else [value]:
                    if isinstance(child, ast.AST):
                        visit(child)

    for statement in fn.body:
        visit(statement)
    return lines


def test_a_module_imported_for_type_checking_only_is_imported_where_it_runs() -> None:
    """The command modules load some modules only in the functions that use them (a light start); the names are
    imported under TYPE_CHECKING for the annotations, which hides a missing run-time import from ruff and mypy.
    Every run-time read of such a name must have an import in its function or one around it."""
    missing = []
    for path in sorted((REPO / "agentmd" / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded = set().union(
            *(_imported(n) for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
        )
        top = set().union(*(_imported(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)))
        names = guarded - top
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        methods = [c.body for c in tree.body if isinstance(c, ast.ClassDef)]
        functions += [m for body in methods for m in body if isinstance(m, ast.FunctionDef)]
        for fn in functions:
            missing += [f"{path.name}:{line}" for line in _unimported_uses(fn, names, top)]
    assert not missing, f"names read at run time but imported only for type checking: {missing}"
