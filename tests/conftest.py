"""Shared fixtures: real temporary vaults, real indexes, the real CLI."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
CORPORA = REPO.parent / "shared" / "corpora"
EXAMPLE_VAULT = REPO / "examples" / "vault"

# The tests sit in folders that follow the packages (tests/engine/git/ holds engine/git/'s). A test imports the
# helpers here, and at times a test module of another folder, by bare name (`from test_sync import Machine`):
# every folder of tests is on the import path, whichever test runs first. Package folders (faults/, recall/)
# are imported by their package name instead.
for _folder in sorted({p.parent for p in TESTS.rglob("test_*.py")}):
    if not (_folder / "__init__.py").exists() and str(_folder) not in sys.path:
        sys.path.append(str(_folder))


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """Run `agentmd` in-process with its own HOME so no real user config or cache is touched."""
    home = tmp_path / "home"
    home.mkdir()
    for var in ("AGENTMD_VAULT", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "AGENTMD_DAILY_WRITE_CAP"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))

    from agentmd.cli import main

    def run(*argv: str) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(argv), out=out, err=err)
        return CliResult(code, out.getvalue(), err.getvalue())

    return run


class Vault:
    """A real vault folder with helpers to write notes the way editors do."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def note(self, rel: str, body: str, **fm: Any) -> Path:
        if fm:
            lines = ["---"] + [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in fm.items()] + ["---", ""]
            return self.write(rel, "\n".join(lines) + body)
        return self.write(rel, body)

    def remove(self, rel: str) -> None:
        (self.root / rel).unlink()


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path / "vault")


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def corpus(name: str) -> Path:
    """A shared corpus. Missing corpora fail the test: they are part of the test data, present in CI too."""
    path = CORPORA / name
    if not path.is_dir():
        pytest.fail(f"corpus {name} is missing at {path}; the suite reads ../shared/corpora beside the repository")
    return path


def pytest_sessionstart(session: pytest.Session) -> None:
    if not CORPORA.is_dir():
        raise pytest.UsageError(
            f"the shared corpora are missing at {CORPORA}; the suite needs ../shared beside the repository"
        )


SKIPPED: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        SKIPPED.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A skipped test can hide a regression: under CI (CI=true) any skip fails the run."""
    if SKIPPED and os.environ.get("CI") and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if SKIPPED and os.environ.get("CI"):
        terminalreporter.write_line(f"{len(SKIPPED)} test(s) skipped under CI, which fails the run:", red=True)
        for nodeid in SKIPPED:
            terminalreporter.write_line(f"  {nodeid}")


def _serve_children() -> list[int]:
    """The `agentmd serve` processes this test process started and that are still its children (Linux /proc)."""
    me = os.getpid()
    found = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
                if ppid != me:
                    continue
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    argv = fh.read().split(b"\0")
            except (OSError, ValueError, IndexError):
                continue
            if b"serve" in argv and any(b"agentmd" in a for a in argv):
                found.append(int(entry))
    return found


@pytest.fixture(scope="module", autouse=True)
def no_daemon_outlives_its_module() -> Iterator[None]:
    """A test that failed while its `agentmd serve` was starting may never have stopped it. Whatever is left
    is stopped when the module ends, so one failure does not leave daemons loading the machine for the rest
    of the run (and failing later tests by it)."""
    yield
    left = _serve_children()
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for sig_after in (signal.SIGKILL, None):
        for pid in list(left):
            while True:
                try:
                    done, _status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:  # reaped already (its Popen waited)
                    done = pid
                if done or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            if done:
                left.remove(pid)
        if not left or sig_after is None:
            break
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig_after)
        deadline = time.monotonic() + 10


def md_files(root: Path) -> set[str]:
    """Every .md file outside dot folders, walked independently of the engine."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if f.lower().endswith(".md") and not f.startswith("."):
                found.add(os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/"))
    return found


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A private HOME and XDG dirs for code that resolves settings itself (the daemon, subprocesses)."""
    values = {
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    for k in ("AGENTMD_VAULT", "AGENTMD_DAILY_WRITE_CAP", "AGENTMD_CRASH_POINT"):
        monkeypatch.delenv(k, raising=False)
    (tmp_path / "home").mkdir(exist_ok=True)
    return values
