"""The prompt-submit recall hook: real Claude Code payloads in, the prior learnings block out.

Most hook runs here are real processes (`hooks.entry:main`, what `agentmd-hook recall` runs) fed a fixture
in Claude Code's documented UserPromptSubmit shape, against a real vault, index and catalog, with and
without the daemon. The hook must always exit 0, print nothing on failure, and stay inside its budgets;
the budgets are checked in-process with a clock the test moves (`ManualClock`).
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentmd.engine.client import DaemonClient, access_token
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.recall.pipeline import TIME_BUDGET, Options
from agentmd.engine.recall.render import TOKEN_BUDGET, estimate_tokens
from agentmd.engine.settings import Settings
from agentmd.hooks.recall import hook as H
from recall.helpers import HOOK, ManualClock, assert_block_shape, hook_env, hook_log, payload, run_hook, usage_rows

# ------------------------------------------------------------------------ the hook, no daemon running


def test_hook_without_daemon_renders_the_block(indexed: Settings, env: dict[str, str], workdir: Path) -> None:
    code, out, err = run_hook(payload("user_prompt_submit.json", workdir), env)
    assert code == 0 and err == ""
    bullets = assert_block_shape(out)
    text = "\n".join(bullets)
    assert bullets[0].startswith("- PostgreSQL over MySQL for the ledger database — We chose PostgreSQL")
    assert "(memory/decisions/postgres-over-mysql.md) [this project]" in bullets[0]
    assert "private/" not in text  # recall-exempt area
    assert "old-postgres-choice" not in text  # archived
    # the prompt's second half (vacuum) is too small a share of its words for the cheatsheet to reach the
    # floors as a direct hit (it rides along as a link of the decision); the other project's note shares
    # little with the prompt and is left out
    assert "(references/postgres-vacuum-cheatsheet.md) [linked] [general]" in text and "tidewatch" not in text
    assert estimate_tokens(out) <= TOKEN_BUDGET
    log = hook_log(indexed)
    assert "recall ok" in log and "via=in-process" in log and "project=ledgerline" in log
    assert "session=7c1e0a52-3f7d-4e0b-9a51-2f6b1f0c9d11" in log
    counts = usage_rows(indexed)
    assert counts["memory/decisions/postgres-over-mysql.md"] == (1, 0)
    assert all(i == 1 and r == 0 for i, r in counts.values())


def test_crlf_note_is_injected_with_its_frontmatter_summary(
    indexed: Settings, env: dict[str, str], workdir: Path
) -> None:
    note = "---\r\ntitle: Tidal flux capacitor\r\nsummary: Recalibrate the flux capacitor after every spring tide.\r\n"
    note += "---\r\n# Flux capacitor\r\n\r\nThe capacitor drifts; see the tide tables.\r\n"
    (indexed.vault / "memory/lessons/flux-capacitor.md").write_bytes(note.encode("utf-8"))
    with Store(indexed.cache_dir) as store:
        reconcile(indexed.vault, store)
    code, out, _err = run_hook(payload("user_prompt_submit.json", workdir, prompt="flux capacitor drift"), env)
    assert code == 0
    bullets = assert_block_shape(out)
    assert bullets[0] == (
        "- Tidal flux capacitor — Recalibrate the flux capacitor after every spring tide. "
        "(memory/lessons/flux-capacitor.md) [general]"
    )
    assert "title:" not in out


@pytest.mark.parametrize(
    ("path", "text", "why"),
    [
        (  # a clip in the phone inbox nobody has filed: refused for its secret, and never shown
            "inbox/phone/clip-secret.md",
            "---\ntitle: Tidal flux capacitor key\nsource: phone\nreview_flags: ['secret:aws-access-key']\n---\n\n"
            "The tidal flux capacitor key is kept on the spring tide tables.\n",
            "recall-exempt area",
        ),
        (  # a note whose frontmatter does not parse: its status and trust are unknown
            "memory/lessons/flux-capacitor.md",
            "---\ntitle: Tidal flux capacitor\nstatus: unfiled\nbroken: [x\n---\n\n"
            "Recalibrate the tidal flux capacitor after every spring tide.\n",
            "its frontmatter cannot be read",
        ),
    ],
)
def test_a_note_nobody_confirmed_is_never_injected(
    path: str, text: str, why: str, indexed: Settings, env: dict[str, str], workdir: Path
) -> None:
    (indexed.vault / path).parent.mkdir(parents=True, exist_ok=True)
    (indexed.vault / path).write_text(text, encoding="utf-8")
    with Store(indexed.cache_dir) as store:
        reconcile(indexed.vault, store)
    code, out, _err = run_hook(
        payload("user_prompt_submit.json", workdir, prompt="tidal flux capacitor spring tide"), env
    )
    assert code == 0 and path not in out and "flux capacitor" not in out, out
    from agentmd.engine.search.recall import search_and_gather

    request = {"query": "tidal flux capacitor spring tide", "limit": 5, "mode": "fusion"}
    _response, _walls, gathered = search_and_gather(indexed, request, max_direct=5, deadline=float("inf"))
    assert any(line.startswith(f"{path}: {why}") for line in gathered["left_out"]), gathered["left_out"]


def test_hook_strips_noise_and_follows_links(indexed: Settings, env: dict[str, str], workdir: Path) -> None:
    code, out, _err = run_hook(payload("user_prompt_submit_noisy.json", workdir / "src" / "api"), env)
    assert code == 0
    bullets = assert_block_shape(out)
    assert bullets[0].startswith("- Webhook retries use exponential backoff")
    # the prompt's path gives its file's name (webhooks), its code block and URL nothing
    assert "query='webhook retries test fails webhooks fix retry backoff'" in hook_log(indexed)


def test_hook_linked_notes_pass_the_same_walls(indexed: Settings, env: dict[str, str], workdir: Path) -> None:
    vault = indexed.vault
    (vault / "memory/lessons/retry-storm.md").write_text(
        "# Retry storm\n\nThe zebracorn outage: see [[webhook-retries]], [[journal-thoughts]], [[old-postgres-choice]]"
        " and [[charter]].\n"
    )
    with Store(indexed.cache_dir) as store:
        reconcile(vault, store)
    code, out, _err = run_hook(payload("user_prompt_submit.json", workdir, prompt="zebracorn outage"), env)
    assert code == 0
    bullets = assert_block_shape(out)
    assert bullets[0].startswith("- retry storm — The zebracorn outage: see webhook-retries, journal-thoughts")
    assert "[linked]" not in bullets[0]
    linked = [b for b in bullets if "[linked]" in b]
    assert [b.split(" (")[-1] for b in linked] == [
        "memory/conventions/webhook-retries.md) [linked] [this project]",
        "projects/ledgerline/charter.md) [linked] [this project]",
    ]
    assert "(private/journal-thoughts.md)" not in out and "(memory/decisions/old-postgres-choice.md)" not in out


def test_hook_nothing_matched_prints_nothing(indexed: Settings, env: dict[str, str], tmp_path: Path) -> None:
    code, out, _err = run_hook(payload("user_prompt_submit_unmatched.json", tmp_path), env)
    assert (code, out) == (0, "")
    code, out, _err = run_hook(payload("user_prompt_submit_chatter.json", tmp_path), env)
    assert (code, out) == (0, "")
    assert usage_rows(indexed) == {}


@pytest.mark.parametrize(
    "stdin",
    ["", "not json", "[1, 2]", json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": "/"})],
    ids=["empty", "garbage", "not-an-object", "no-prompt"],
)
def test_hook_bad_input_prints_nothing(indexed: Settings, env: dict[str, str], stdin: str) -> None:
    code, out, err = run_hook(stdin, env)
    assert (code, out, err) == (0, "", "")
    assert "recall error" in hook_log(indexed)


def test_hook_ignores_other_events(indexed: Settings, env: dict[str, str], workdir: Path) -> None:
    stdin = payload("user_prompt_submit.json", workdir, hook_event_name="SessionStart")
    assert run_hook(stdin, env)[:2] == (0, "")
    assert "hook_event_name is 'SessionStart'" in hook_log(indexed)


def test_entry_point_names_its_hooks_and_never_blocks(env: dict[str, str]) -> None:
    """An unknown hook name exits 1, which Claude Code shows to the person without blocking the agent (2 blocks)."""
    proc = subprocess.run([*HOOK[:3], "no-such-hook"], input="{}", capture_output=True, text=True, env=env)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "recall" in proc.stderr and "worktree-guard" in proc.stderr


def test_hook_with_index_missing_prints_nothing(settings: Settings, env: dict[str, str], workdir: Path) -> None:
    code, out, _err = run_hook(payload("user_prompt_submit.json", workdir), env)
    assert (code, out) == (0, "")
    assert "no index at" in hook_log(settings)
    assert not settings.cache_dir.exists()  # the hook never builds an index


def test_hook_with_no_vault_configured_prints_nothing(tmp_path: Path, workdir: Path) -> None:
    env = hook_env(tmp_path, None)
    code, out, _err = run_hook(payload("user_prompt_submit.json", workdir), env)
    assert (code, out) == (0, "")
    assert "no vault given" in (tmp_path / "xdg-state" / "agentmd" / "hook.log").read_text()


def test_hook_budget_flags(indexed: Settings, env: dict[str, str], workdir: Path) -> None:
    code, out, _err = run_hook(payload("user_prompt_submit.json", workdir), env, "--token-budget", "90")
    assert code == 0
    bullets = assert_block_shape(out)
    assert len(bullets) == 1 and bullets[0].startswith("- PostgreSQL over MySQL")
    assert estimate_tokens(out) <= 90
    code, out, _err = run_hook(payload("user_prompt_submit.json", workdir), env, "--max-entries=2")
    assert len(assert_block_shape(out)) == 2


# ----------------------------------------------------------------------------- a daemon that hangs


@dataclass
class HungDaemon:
    port: int
    accepted: threading.Event  # set once the hook's connection has been taken and left unanswered


@pytest.fixture
def hung_daemon(indexed: Settings) -> Iterator[HungDaemon]:
    """What a hung daemon looks like from outside: the instance lock held, daemon.json naming a port, and a
    listener on that port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()
    accepted = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                held.append(conn)
                accepted.set()
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    state = indexed.state_dir
    state.mkdir(parents=True, exist_ok=True)
    fd = os.open(state / "daemon.lock", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    port = server.getsockname()[1]
    (state / "daemon.json").write_text(json.dumps({"pid": os.getpid(), "port": port}))
    yield HungDaemon(port, accepted)
    stop.set()
    t.join()
    for c in held:
        c.close()
    server.close()
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def test_hook_process_with_a_hung_daemon_prints_nothing(
    indexed: Settings, env: dict[str, str], workdir: Path, hung_daemon: HungDaemon
) -> None:
    code, out, err = run_hook(payload("user_prompt_submit.json", workdir), env, "--time-budget", "0.5")
    assert (code, out) == (0, "")
    said = err.splitlines()  # the give-up, in one line on stderr (Claude Code shows stdout to the model only)
    log = hook_log(indexed)
    assert len(said) == 1 and said[0].startswith("agentmd hook: ") and " recall timeout " in said[0], (err, log)
    # On a loaded machine the start-up alone may spend the budget before the daemon is asked; every way the
    # budget can run out is logged as a give-up (status counts them), and none prints anything on stdout.
    assert " recall timeout " in log and said[0].removeprefix("agentmd hook: ") in log, log
    assert usage_rows(indexed) == {}


def test_hook_with_a_hung_daemon_gives_up_at_its_budget(
    indexed: Settings, workdir: Path, hung_daemon: HungDaemon
) -> None:
    clock = ManualClock(reached=hung_daemon.accepted)
    out = io.StringIO()
    stdin = io.StringIO(payload("user_prompt_submit.json", workdir))
    code, timed_out = H.run_hook(stdin, out, lambda: indexed, options=Options(time_budget=1.0), clock=clock)
    assert (code, timed_out, out.getvalue()) == (0, True, "")
    assert clock.waits == [pytest.approx(1.0)]  # the budget, counted from the start, and no more
    assert clock.now == pytest.approx(1001.0)
    assert "recall timeout" in hook_log(indexed) and "1.0s time budget" in hook_log(indexed)
    assert usage_rows(indexed) == {}


def test_a_give_up_is_said_on_stderr_and_counted_in_status(
    indexed: Settings, workdir: Path, hung_daemon: HungDaemon
) -> None:
    """A hook that runs out of time says so in one line on stderr (stdout stays empty, so the prompt goes on),
    and `status` counts the give-ups of the last hour in a yellow line, never red."""
    import datetime as dt

    from agentmd.engine.daemon.status import hooks_section

    assert hooks_section(indexed.state_dir, dt.datetime.now(dt.UTC))["yellow"] == []
    for _ in range(2):
        out, err = io.StringIO(), io.StringIO()
        stdin = io.StringIO(payload("user_prompt_submit.json", workdir))
        log = H.HookLog(False, err)
        clock = ManualClock(reached=hung_daemon.accepted)
        code, timed_out = H.run_hook(
            stdin, out, lambda: indexed, options=Options(time_budget=1.0), clock=clock, log=log
        )
        assert (code, timed_out, out.getvalue()) == (0, True, "")
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and " recall timeout " in lines[0] and "1.0s time budget" in lines[0]
        hung_daemon.accepted.clear()
    section = hooks_section(indexed.state_dir, dt.datetime.now(dt.UTC))
    assert section["gave_up_last_hour"] == {"recall": 2}
    assert section["red"] == [] and "recall 2 times" in section["yellow"][0]
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=2)
    assert hooks_section(indexed.state_dir, later)["gave_up_last_hour"] == {}


def test_without_a_daemon_the_query_keeps_a_stop_word_a_notes_name_holds(indexed: Settings) -> None:
    """The hook's own process makes the query as the daemon does (engine/recall/serve.py): a stop word inside a
    run of the prompt naming a note is kept."""
    from agentmd.engine.recall.pipeline import recall

    prompt = "what did I note about free will and determinism"
    assert recall(indexed, prompt).query == "note free determinism"
    (indexed.vault / "references" / "free-will.md").write_text(
        "---\ntitle: Free Will\n---\nOn determinism: whether choices are caused.\n"
    )
    with Store(indexed.cache_dir) as store:
        reconcile(indexed.vault, store)
    found = recall(indexed, prompt)
    assert found.query == "note free will determinism" and found.via == "in-process"
    assert "Free Will" in found.rendered.text


def test_a_search_that_ends_past_the_budget_is_a_give_up(indexed: Settings) -> None:
    """A search that returns after the budget's end is a give-up (said on stderr, counted in status), not a
    silent error; so is a budget spent before the search begins."""
    import time

    from agentmd.engine.recall.pipeline import HookGaveUp, recall, search_daemon

    with pytest.raises(HookGaveUp, match="ran out during the search"):
        recall(indexed, "how do postgres migrations retry", deadline=time.monotonic() - 1)
    with pytest.raises(HookGaveUp, match="ran out before the search"):
        search_daemon(None, {"query": "postgres"}, 0.0)  # type: ignore[arg-type]  # never reached


def test_hook_default_time_budget_holds_with_a_hung_daemon(
    indexed: Settings, workdir: Path, hung_daemon: HungDaemon
) -> None:
    clock = ManualClock(reached=hung_daemon.accepted, start=50.0)
    stdin = io.StringIO(payload("user_prompt_submit.json", workdir))
    code, timed_out = H.run_hook(stdin, io.StringIO(), lambda: indexed, started=49.75, clock=clock)
    assert (code, timed_out) == (0, True)
    assert clock.waits == [pytest.approx(TIME_BUDGET - 0.25)]  # the budget counts from process start, not from the call


def test_stuck_worker_is_abandoned_at_the_deadline(indexed: Settings) -> None:
    """A read that never returns (stdin left open here) costs the time budget and nothing more."""
    reading, release = threading.Event(), threading.Event()

    class NeverEnds(io.StringIO):
        def read(self, *_a: Any) -> str:
            reading.set()
            release.wait(30)
            return ""

    clock = ManualClock(reached=reading)
    out = io.StringIO()
    try:
        code, timed_out = H.run_hook(NeverEnds(), out, lambda: indexed, options=Options(time_budget=0.3), clock=clock)
    finally:
        release.set()
    assert (code, timed_out, out.getvalue()) == (0, True, "")
    assert clock.waits == [pytest.approx(0.3)]


# --------------------------------------------------------------------------- with the daemon running


def test_hook_with_daemon_renders_the_same_block(
    daemon: Daemon, indexed: Settings, env: dict[str, str], workdir: Path
) -> None:
    code, out, err = run_hook(payload("user_prompt_submit.json", workdir), env)
    assert code == 0 and err == ""
    bullets = assert_block_shape(out)
    assert bullets[0].startswith("- PostgreSQL over MySQL for the ledger database — We chose PostgreSQL")
    assert "private/" not in out and "old-postgres-choice" not in out
    assert "via=daemon" in hook_log(indexed)
    from agentmd.engine.index import usage

    usage.flush()
    counts = usage_rows(indexed)
    assert counts["memory/decisions/postgres-over-mysql.md"][0] == 1  # one injection
    # the in-process path (lexical: the hook never loads the model) leads with the same note; the daemon's
    # block is hybrid, so the notes after the first may differ
    daemon.stop()
    code, out2, _err = run_hook(payload("user_prompt_submit.json", workdir), env)
    assert assert_block_shape(out2)[0] == bullets[0] and "via=in-process" in hook_log(indexed)


def test_search_route_takes_the_recall_options(daemon: Daemon, indexed: Settings) -> None:
    body = {"query": "webhook retries", "limit": 5, "count_usage": False, "recall": True}
    data = DaemonClient(daemon.port, token=access_token(daemon.settings.state_dir)).post("/v1/search", body, timeout=10)
    assert data["recall"]["direct"][0]["path"] == "memory/conventions/webhook-retries.md"
    from agentmd.engine.index import usage

    usage.flush()
    assert usage_rows(indexed) == {}
