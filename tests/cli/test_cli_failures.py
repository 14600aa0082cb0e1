"""No traceback reaches a person: each way a command can fail, run as a real `agentmd` process, ends with one
line on stderr saying what was wrong and how to fix it, and a non-zero exit code."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmd.cli.base import EXIT_BROKEN_PIPE, EXIT_FAILURE, EXIT_INTERRUPTED

DEADLINE = 120.0  # seconds any one command may take on a loaded machine


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of a person's shell, with a home and state folders of its own."""
    home = tmp_path / "home"
    home.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTMD_", "XDG_"))}
    return clean | {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "memory").mkdir(parents=True)
    for n in range(40):
        (root / "memory" / f"queue-{n}.md").write_text(
            f"---\ntitle: Queue note {n}\n---\nThe sqlite wal job queue, note {n}.\n", encoding="utf-8"
        )
    return root


def agentmd(*argv: str) -> list[str]:
    return [sys.executable, "-m", "agentmd", *argv]


def run(argv: list[str], env: dict[str, str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=DEADLINE, **kw)  # type: ignore[call-overload, no-any-return]


def assert_one_line(stderr: str, *expected: str) -> str:
    """The stderr of a failed command: no traceback, exactly one `agentmd:` line, holding every `expected`."""
    assert "Traceback" not in stderr and "ERROR" not in stderr and "Exception" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("agentmd:")]
    assert len(lines) == 1, stderr
    for text in expected:
        assert text in lines[0], stderr
    return lines[0]


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port on 127.0.0.1 that another process (this test) is listening on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_serve_on_a_port_in_use(busy_port: int, vault: Path, env: dict[str, str], tmp_path: Path) -> None:
    done = run(agentmd("serve", "--vault", str(vault), "--port", str(busy_port)), env, tmp_path)
    assert done.returncode == EXIT_FAILURE
    line = assert_one_line(done.stderr, f"port {busy_port} on 127.0.0.1 is in use", "--port")
    assert line.endswith("stop the other process or pass --port")


@pytest.mark.parametrize("given", ["99999", "-1", "http"])
def test_a_port_out_of_range_is_a_usage_line(given: str, vault: Path, env: dict[str, str], tmp_path: Path) -> None:
    done = run(agentmd("serve", "--vault", str(vault), "--port", given), env, tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert f"argument --port: {given!r}" in done.stderr or f"argument --port: {given} is not a port" in done.stderr


def test_an_age_older_than_any_date_reads_as_the_whole_history(env: dict[str, str], tmp_path: Path) -> None:
    vault = tmp_path / "repo"
    vault.mkdir()
    for argv in (
        ["init", "-q"],
        ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x"],
    ):
        subprocess.run(["git", "-C", str(vault), *argv], check=True, env=env)
    done = run(agentmd("log", "--vault", str(vault), "--since", "99999999d"), env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 commit(s)" in done.stdout


def _closed_pipe() -> int:
    """The write end of a real pipe whose reader has already gone away."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    return write_end


@pytest.mark.parametrize(
    "argv",
    [
        ("search", "sqlite", "queue", "--limit", "40"),
        ("recall", "--preview", "sqlite", "wal", "job", "queue"),
    ],
    ids=["search", "recall-preview"],
)
def test_a_reader_that_went_away_ends_the_command_quietly(
    argv: tuple[str, ...], vault: Path, env: dict[str, str], tmp_path: Path
) -> None:
    assert run(agentmd("reindex", "--vault", str(vault)), env, tmp_path).returncode == 0
    write_end = _closed_pipe()
    try:
        done = subprocess.run(
            agentmd(*argv, "--vault", str(vault)),
            env=env,
            cwd=tmp_path,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=DEADLINE,
        )
    finally:
        os.close(write_end)
    assert done.returncode == EXIT_BROKEN_PIPE
    assert done.stderr == ""


def test_head_closing_the_pipe_leaves_no_message(vault: Path, env: dict[str, str], tmp_path: Path) -> None:
    """`agentmd recall --preview ... | head -1` in a shell: the first line arrives, and nothing on stderr."""
    assert run(agentmd("reindex", "--vault", str(vault)), env, tmp_path).returncode == 0
    script = f"{' '.join(agentmd('recall', '--preview', 'sqlite', 'queue', '--vault', str(vault)))} | head -1"
    done = run(["bash", "-o", "pipefail", "-c", script], env, tmp_path)
    assert done.stdout.startswith("Prior learnings")
    assert len(done.stdout.splitlines()) == 1
    assert done.stderr == ""
    assert done.returncode in (0, EXIT_BROKEN_PIPE)  # 0 when all of it fit in the pipe before head left


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _blocked_reading_a_pipe(pid: int) -> bool:
    try:
        return "pipe_read" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/wchan").exists(), reason="needs /proc to see the process wait")
def test_ctrl_c_is_one_line(vault: Path, env: dict[str, str], tmp_path: Path) -> None:
    """Ctrl-C while `capture` waits for its body on standard input."""
    proc = subprocess.Popen(
        agentmd("capture", "--title", "half written", "--vault", str(vault)),
        env=env,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as a command typed at a terminal: a suite started in the background (`cmd &` without job control)
        # hands its children SIGINT ignored, and Python then installs no Ctrl-C handler
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + DEADLINE
        while not _blocked_reading_a_pipe(proc.pid):
            assert proc.poll() is None and time.monotonic() < deadline, "capture never waited for its body"
            time.sleep(0.02)  # polling a condition with a deadline, not timing the test
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == EXIT_INTERRUPTED
    assert_one_line(err, "interrupted")
    assert out == ""
    assert not list((vault / "memory").rglob("half-written*.md"))


# The command line has no command today through which a rules or note-model error escapes (the contract
# loader reports a broken file as a halted contract; the indexer reports a note's bad YAML per note). Each
# package's error root is still handled: these run the real command line, with one more command in its
# registry that hands a real broken file from a temp vault to that package's own reader.
DRIVER = """
import sys
from pathlib import Path
from agentmd import cli

def add_read(sub, common):
    p = sub.add_parser("read", parents=[common])
    p.add_argument("what", choices=["frontmatter", "door"])
    p.add_argument("file")
    p.set_defaults(func=read)

def read(args, out, err):
    text = Path(args.file).read_text(encoding="utf-8")
    if args.what == "frontmatter":
        from agentmd.vault_schema import load_yaml, split_frontmatter
        load_yaml(split_frontmatter(text).yaml_text or "", what=f"the frontmatter of {args.file}", first_line=2)
    else:
        from agentmd.rules import normalize_path
        normalize_path(text.strip())
    return 0

sys.exit(cli.main(commands=(*cli.COMMANDS, add_read)))
"""


def test_a_note_with_bad_yaml_is_one_line(vault: Path, env: dict[str, str], tmp_path: Path) -> None:
    note = vault / "memory" / "broken.md"
    note.write_text("---\ntitle: [unclosed\ntags: a\n---\nbody\n", encoding="utf-8")
    done = run([sys.executable, "-c", DRIVER, "read", "frontmatter", str(note)], env, tmp_path)
    assert done.returncode == EXIT_FAILURE
    assert_one_line(done.stderr, f"the frontmatter of {note} is not valid YAML at line", "fix the YAML syntax")


def test_a_rules_error_is_one_line(vault: Path, env: dict[str, str], tmp_path: Path) -> None:
    listing = vault / "standards" / "write-targets.txt"
    listing.parent.mkdir()
    listing.write_text("memory\\notes\\x.md\n", encoding="utf-8")  # a Windows path: the door refuses it
    done = run([sys.executable, "-c", DRIVER, "read", "door", str(listing)], env, tmp_path)
    assert done.returncode == EXIT_FAILURE
    assert_one_line(done.stderr, "backslash", "separate folders with / only")


def test_an_unexpected_error_names_itself_and_verbose_shows_where(env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.md"
    done = run([sys.executable, "-c", DRIVER, "read", "door", str(missing)], env, tmp_path)
    assert done.returncode == EXIT_FAILURE
    assert_one_line(done.stderr, "No such file or directory", str(missing))
    loud = run([sys.executable, "-c", DRIVER, "read", "door", str(missing), "--verbose"], env, tmp_path)
    assert loud.returncode == EXIT_FAILURE and "Traceback" in loud.stderr
    assert loud.stderr.splitlines()[-1].startswith("agentmd: No such file or directory")


def test_packaged_contract_found_outside_the_repository(vault: Path, env: dict[str, str], tmp_path: Path) -> None:
    """Run from a folder outside the source tree, a vault without its own contract uses the packaged one."""
    done = run(agentmd("door", "check", "memory/x.md", "--vault", str(vault)), env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("allowed")


def test_an_unknown_command_is_named_once(env: dict[str, str], tmp_path: Path) -> None:
    """A vault path given where the command goes (`agentmd /my/vault reindex`) says what the commands are."""
    done = run(agentmd(str(tmp_path), "reindex"), env, tmp_path)
    assert done.returncode != 0
    line = assert_one_line(done.stderr, "invalid choice", "reindex", "agentmd --help")
    assert not line.startswith("agentmd: agentmd:"), line


def test_status_names_a_daemon_too_busy_to_answer_as_slow_not_stopped(
    busy_port: int, vault: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """A daemon that holds its port but does not answer in time (a loaded machine: here a listener that never
    replies) is reported as slow, in yellow, with the status read from disk; never as stopped, never red."""
    import json

    done = run(
        agentmd("status", "--vault", str(vault), "--port", str(busy_port), "--wait", "1.5", "--json"), env, tmp_path
    )
    status = json.loads(done.stdout)
    assert status["daemon"]["running"] is True
    slow = [line for line in status["yellow"] if line.startswith("daemon-slow:")]
    assert slow and f"port {busy_port}" in slow[0] and "1.5 s" in slow[0], status["yellow"]
    assert not any(line.startswith("daemon-not-running") for line in status["yellow"])
    assert not any("daemon" in line for line in status["red"]), status["red"]
    text = run(agentmd("status", "--vault", str(vault), "--port", str(busy_port), "--wait", "1"), env, tmp_path)
    assert "too busy to answer" in text.stdout
    assert "Traceback" not in text.stderr


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("search", "queue", "--floor", "nan"), "'nan' is not a finite number"),
        (("search", "queue", "--floor", "inf"), "'inf' is not a finite number"),
        (("search", "queue", "--floor", "1e400"), "'1e400' is not a finite number"),
        (("search", "queue", "--floor", "high"), "'high' is not a number"),
        (("recall", "queue", "--token-budget", "-5"), "-5 is not a count; use 1 or more"),
        (("recall", "queue", "--max-entries", "0"), "0 is not a count; use 1 or more"),
    ],
)
def test_a_number_no_option_means_is_a_usage_error(
    argv: tuple[str, ...], expected: str, vault: Path, env: dict[str, str], tmp_path: Path
) -> None:
    done = run(agentmd(*argv, "--vault", str(vault)), env, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "JSON" not in done.stderr, done.stderr
    assert expected in done.stderr and f"agentmd {argv[0]} --help" in done.stderr, done.stderr


def test_text_not_in_utf8_is_named_and_nothing_is_written(vault: Path, env: dict[str, str], tmp_path: Path) -> None:
    before = sorted(p.name for p in (vault / "memory").rglob("*.md"))
    done = subprocess.run(
        [*agentmd("capture", "--vault", str(vault), "--title", "From a latin-1 file"), "--json"],
        input=b"caf\xe9 au lait\n", env=env, cwd=tmp_path, capture_output=True, timeout=DEADLINE,
    )  # fmt: skip
    err = done.stderr.decode()
    assert done.returncode == 2 and "standard input is not UTF-8 text (byte 0xe9" in err, err
    title = [*agentmd("capture", "--vault", str(vault), "--body", "x", "--title"), b"caf\xe9"]
    done = subprocess.run(title, env=env, cwd=tmp_path, capture_output=True, timeout=DEADLINE)
    err = done.stderr.decode()
    assert done.returncode == 2 and "--title is not UTF-8 text (byte 0xe9" in err and "Traceback" not in err, err
    assert sorted(p.name for p in (vault / "memory").rglob("*.md")) == before


def test_an_unknown_option_points_at_its_commands_help(vault: Path, env: dict[str, str], tmp_path: Path) -> None:
    done = run(agentmd("capture", "--title", "x", "--bogus", "--vault", str(vault)), env, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "agentmd capture: unrecognized arguments: --bogus (see `agentmd capture --help`)" in done.stderr
    done = run(agentmd("--bogus"), env, tmp_path)
    assert done.returncode == 2 and "(see `agentmd --help`)" in done.stderr, done.stderr


def test_the_history_of_a_job_that_does_not_exist_names_the_jobs(
    vault: Path, env: dict[str, str], tmp_path: Path
) -> None:
    done = run(agentmd("jobs", "history", "--job", "nope", "--vault", str(vault)), env, tmp_path)
    assert done.returncode == 2 and "no job is named 'nope'; the jobs are: " in done.stderr, done.stderr
    assert "morning-note" in done.stderr
    done = run(agentmd("jobs", "history", "--job", "morning-note", "--vault", str(vault)), env, tmp_path)
    assert done.returncode == 0 and "job morning-note has not run yet" in done.stdout, done.stderr


def test_a_job_runs_result_reads_as_words_not_python() -> None:
    from agentmd.cli.jobs import _record_line

    run = {"start": "2026-12-06T19:00:00+00:00", "job": "groom-propose", "outcome": "ok", "stop_reason": "finished"}
    changed = {"stats": {"duplicate": 0, "stale": 2}, "paths": ["a.md", "b.md"]}
    line = _record_line({**run, "budget_used": {"wall_s": 1}, "changed": changed})
    assert line.endswith("stats=(duplicate 0, stale 2), paths=a.md, b.md") and "{" not in line and "'" not in line


def test_a_mistyped_command_or_a_config_not_in_utf8_says_how_to_fix_it(env: dict[str, str], tmp_path: Path) -> None:
    done = run(agentmd("serach", "postgres"), env, tmp_path)
    assert done.returncode == 2
    assert_one_line(done.stderr, "invalid choice: 'serach'", "did you mean `search`?")
    config = tmp_path / "config.toml"
    config.write_bytes(b'\xff\xfe vault = "x"\n')
    done = run(agentmd("--config", str(config), "status"), env, tmp_path)
    assert done.returncode != 0
    assert_one_line(done.stderr, str(config), "is not UTF-8", "save it as UTF-8")


def test_addresses_and_origins_no_command_can_use_are_said_at_once(env: dict[str, str], tmp_path: Path) -> None:
    vault = tmp_path / "repo"
    vault.mkdir()
    subprocess.run(["git", "-C", str(vault), "init", "-q"], check=True, env=env)
    added = run(agentmd("remote", "add", "not a url", "--vault", str(vault)), env, tmp_path)
    assert added.returncode == EXIT_FAILURE
    assert_one_line(added.stderr, "'not a url' is not a remote's address", "git@host:owner/vault.git")
    assert subprocess.run(["git", "-C", str(vault), "remote"], capture_output=True, text=True).stdout == ""
    logged = run(agentmd("log", "--vault", str(vault), "--origin", "captrue"), env, tmp_path)
    assert logged.returncode == 2
    assert_one_line(logged.stderr, "--origin captrue: not an origin", "capture", "manual")
    token = run(agentmd("token"), env, tmp_path)
    assert token.returncode == 2 and "ACTION" in token.stderr and "`--`" not in token.stderr
