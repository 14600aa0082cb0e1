"""Faults injected into a running daemon: it stays up, repairs what it can, and its status names each
failure (with its fix) within one health pass.

The index faults run the daemon as its own process (`agentmd serve` on 127.0.0.1): a truncated
memory-mapped segment would kill the process that reads it, and that must never be the test runner.
The others run the daemon in this process and call its health pass directly, so "within one pass" is
exactly one call. Every wait has a deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import auth, http_get, make_repo, running_daemon, wait_until

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import Settings, resolve
from agentmd.engine.write.capture import CaptureRequest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
NOTES = {f"notes/n{i:02d}.md": f"# Note {i}\n\nA note about otters number {i} and rivers.\n" for i in range(30)}


def http_post(port: int, path: str, payload: Any, raw: bytes | None = None) -> tuple[int, dict[str, Any]]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    data = raw if raw is not None else json.dumps(payload).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=data,
        headers={"Content-Type": "application/json", **auth(port)},
        method="POST",
    )
    try:
        with opener.open(req, timeout=20) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def search(port: int, words: str) -> tuple[int, dict[str, Any]]:
    return http_post(port, "/v1/search", {"query": words, "limit": 50, "count_usage": False, "mode": "fusion"})


def found(port: int, words: str) -> set[str]:
    """The notes a search returns (above the confidence floor)."""
    code, body = search(port, words)
    return {r["note"] for r in body.get("results", [])} if code == 200 else set()


def matched(port: int, words: str) -> int:
    """How many notes match the words (whatever their confidence); -1 when the search is refused."""
    code, body = search(port, words)
    return int(body.get("matched", 0)) if code == 200 else -1


def status(port: int) -> dict[str, Any]:
    return http_get(port, "/status")[1]


def reds(port: int) -> list[str]:
    return list(status(port).get("red", []))


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("AGENTMD_DENSE", "0")  # the faults concern the lexical index; no model to load
    env["AGENTMD_DENSE"] = "0"
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", **NOTES})
    return resolve(vault=str(vault))


class Served:
    """`agentmd serve` as a child process, on a free loopback port. The daemon itself is its child in turn
    (engine/daemon/supervisor.py), started again on the same port after a crash signal."""

    def __init__(self, settings: Settings, env: dict[str, str], *extra: str, prefix: tuple[str, ...] = ()) -> None:
        self.settings = settings
        self.proc = subprocess.Popen(
            [
                *prefix,
                sys.executable,
                "-m",
                "agentmd",
                "serve",
                "--vault",
                str(settings.vault),
                "--port",
                "0",
                "--health-interval",
                "0.2",
                "--commit-debounce",
                "0.2",
                *extra,
            ],
            cwd=REPO,
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.port = int(wait_until(self._read_port, 30, "daemon port"))
        wait_until(
            lambda: self.alive() and http_get(self.port, "/health")[1].get("index_stale") is False, 30, "first pass"
        )
        self.daemon_pid = self._daemon_pid()

    def _daemon_pid(self) -> int | None:
        try:
            pid = json.loads((self.settings.state_dir / "daemon.json").read_text()).get("pid")
        except (OSError, ValueError):
            return None
        return int(pid) if pid else None

    def restarted(self) -> bool:
        """Whether the supervisor started the daemon again since this one first served."""
        pid = self._daemon_pid()
        return pid is not None and pid != self.daemon_pid

    def _read_port(self) -> int | None:
        assert self.proc.poll() is None, self.stderr()
        try:
            info = json.loads((self.settings.state_dir / "daemon.json").read_text())
        except (OSError, ValueError):
            return None
        if self.proc.pid not in (info.get("pid"), info.get("supervisor")):  # left by a daemon that was killed
            return None
        return info.get("port") or None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read().decode(errors="replace")[-20000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def served(settings: Settings, env: dict[str, str]) -> Iterator[Served]:
    s = Served(settings, env)
    yield s
    s.stop()


def segment_files(settings: Settings) -> list[Path]:
    index = settings.cache_dir / "index"
    return [p for p in index.iterdir() if p.suffix in (".idx", ".term", ".pos", ".store", ".fieldnorm", ".fast")]


def truncate(f: Path, size: int = 0) -> None:
    """Cut a segment file (one a merge removed since the listing is skipped)."""
    with contextlib.suppress(FileNotFoundError):
        os.truncate(f, size)


def rebuilds(served: Served) -> int:
    try:
        return int(status(served.port)["index"]["rebuild"]["count"])
    except OSError:  # the daemon went away mid-request (and may be starting again): the caller judges
        with contextlib.suppress(subprocess.TimeoutExpired):
            served.proc.wait(2)
        return 0


def recovered(served: Served, words: str, expected: set[str] | int) -> bool:
    assert served.alive(), f"the daemon died: {served.proc.returncode}\n{served.stderr()}"
    try:
        if isinstance(expected, int):
            return matched(served.port, words) == expected
        return expected <= found(served.port, words)
    except OSError:  # the daemon went away mid-request: starting again (the supervisor lives), or say how it died
        with contextlib.suppress(subprocess.TimeoutExpired):
            served.proc.wait(2)
        assert served.alive(), f"the daemon died: {served.proc.returncode}\n{served.stderr()}"
        return False


# -- index damage while running (a separate process) --------------------------------------------------


def restarted_if_killed_by_sigbus(served: Served, env: dict[str, str]) -> Served:
    """The one death the design admits (README, `serve`): a segment cut short in the instant between the
    size check and a read, or under a background merge, kills the reading process with SIGBUS. `agentmd
    serve` then starts its daemon again on the same port (the new one sets the damaged index aside), so it
    is still alive; with `--no-restart` (or a supervisor that gave up) any death but SIGBUS fails the test,
    and after SIGBUS a restart here must set the damaged index aside and serve again."""
    if served.alive():
        return served
    served.proc.wait(10)
    admitted = (-signal.SIGBUS, -signal.SIGSEGV)  # garbled bytes read in that instant can crash Tantivy too
    assert served.proc.returncode in admitted, f"the daemon died: {served.proc.returncode}\n{served.stderr()}"
    return Served(served.settings, env)


def test_truncated_index_files_neither_kill_the_daemon_nor_stop_search(served: Served, env: dict[str, str]) -> None:
    everything = len(NOTES)
    assert matched(served.port, "otters") == everything
    for f in segment_files(served.settings):
        truncate(f)
    for _ in range(20):  # searches right after the damage: answered or refused
        try:
            code, body = search(served.port, "otters")
        except OSError:
            break
        assert code in (200, 503), body
        if code == 503:
            assert "rebuild" in body["error"]
    live = restarted_if_killed_by_sigbus(served, env)
    try:
        if live is served:
            wait_until(
                lambda: not served.alive() or served.restarted() or rebuilds(served) >= 1,
                30,
                "the damage found, index rebuilt",
            )
            live = restarted_if_killed_by_sigbus(served, env)
        if live is served and not served.restarted():  # found by the checks before reads: rebuilt in place
            rebuild = status(served.port)["index"]["rebuild"]
            assert "size" in rebuild["reason"] or "footer" in rebuild["reason"]
        wait_until(lambda: recovered(live, "otters", everything), 30, "search answers again after the rebuild")
        assert not [r for r in status(live.port)["red"] if r.startswith("index-")]
        assert list(live.settings.cache_dir.glob("index.broken-*")), "the damaged index is kept as evidence"
    finally:
        if live is not served:
            live.stop()


def test_garbled_segments_are_rebuilt_without_a_restart(served: Served, env: dict[str, str]) -> None:
    everything = len(NOTES)
    for f in segment_files(served.settings):
        try:
            data = bytearray(f.read_bytes())
        except FileNotFoundError:
            continue
        for i in range(0, len(data), 5):
            data[i] ^= 0xA5
        with open(f, "r+b") as out:  # in place, same size
            out.write(data)
    wait_until(lambda: not served.alive() or rebuilds(served) >= 1, 30, "the damage found and rebuilt")
    live = restarted_if_killed_by_sigbus(served, env)
    try:
        wait_until(lambda: recovered(live, "otters", everything), 30, "search answers again")
    finally:
        if live is not served:
            live.stop()


def test_deleted_cache_is_rebuilt_and_new_captures_become_searchable(served: Served, tmp_path: Path) -> None:
    # The folder leaves in one step (moved out of the cache root, then removed there). Removed file by file in
    # place, the removal raced the daemon, which may set the half-removed index aside while it runs.
    gone = tmp_path / "deleted-cache"
    served.settings.cache_dir.rename(gone)
    shutil.rmtree(gone)
    wait_until(lambda: recovered(served, "otters", len(NOTES)), 30, "the index rebuilt from the vault")
    code, body = http_post(served.port, "/v1/capture", {"title": "Kingfishers nest in banks", "body": "kingfisher"})
    assert code == 200, body
    title = "Kingfishers nest in banks"
    wait_until(lambda: recovered(served, title, {body["path"]}), 20, "the new capture is searchable")
    assert (served.settings.cache_dir / "index").is_dir()


def test_a_garbled_catalog_header_is_set_aside_and_rebuilt_without_a_restart(served: Served) -> None:
    catalog = served.settings.catalog_path
    with open(catalog, "r+b") as fh:  # the header overwritten in place: every statement on it now fails
        fh.write(b"garbage garbage!")
    wait_until(lambda: not served.alive() or rebuilds(served) >= 1, 30, "the damage found and rebuilt")
    assert served.alive()
    assert "header" in status(served.port)["index"]["rebuild"]["reason"]
    wait_until(lambda: recovered(served, "otters", len(NOTES)), 30, "search answers from the rebuilt catalog")
    code, body = http_post(served.port, "/v1/capture", {"title": "Herons fish at dawn", "body": "heron"})
    assert code == 200, body
    assert list(catalog.parent.glob("catalog.sqlite3.broken-*"))  # the damaged one is kept as evidence
    assert not [r for r in status(served.port)["red"] if "damaged" in r]


def test_cli_commands_beside_the_daemon_leave_its_catalog_whole(served: Served, env: dict[str, str]) -> None:
    """The daemon checks its catalog on every health pass (every 0.2 s here) while CLI commands open and close
    the same catalog: the daemon keeps its locks, so no command takes itself for the last user and deletes the
    write-ahead log under it (which turned captures into 500s and then corrupted the file)."""
    catalog = served.settings.catalog_path
    cli_env = {**os.environ, **env}
    for command in (["queue"], ["log"], ["links", "notes/n01.md"], ["queue"]):
        done = subprocess.run(
            [sys.executable, "-m", "agentmd", *command, "--vault", str(served.settings.vault)],
            cwd=REPO,
            env=cli_env,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode in (0, 1), done.stderr.decode(errors="replace")
        assert Path(f"{catalog}-wal").exists(), f"`agentmd {' '.join(command)}` deleted the daemon's log"
    answers: list[int] = []

    def capture(i: int) -> None:
        code, _body = http_post(served.port, "/v1/capture", {"title": f"Grebe sighting {i}", "body": f"grebe {i}"})
        answers.append(code)

    threads = [threading.Thread(target=capture, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert answers == [200] * 10
    assert not [r for r in status(served.port)["red"] if "damaged" in r]
    served.stop()
    check = sqlite3.connect(catalog)
    try:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        check.close()


# -- live failures in status (the daemon in this process; one health pass = one call) ---------------------


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    with running_daemon(settings) as d:
        d.health_check()
        assert d.status()["red"] == [], d.status()["red"]
        yield d


def red_after_one_pass(d: Daemon, prefix: str) -> str:
    d.health_check()
    lines = [r for r in d.status()["red"] if r.startswith(prefix)]
    assert lines, d.status()["red"]
    return lines[0]


class ReadOnly:
    """A folder nobody may write in, even root (the immutable flag) when the tests run as root."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __enter__(self) -> ReadOnly:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "+i", str(self.folder)], check=True)
        else:
            self.folder.chmod(0o555)
        return self

    def __exit__(self, *exc: object) -> None:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(self.folder)], check=True)
        else:
            self.folder.chmod(0o755)


def test_an_index_folder_deleted_under_the_daemon_is_red_when_status_is_asked(
    daemon: Daemon, settings: Settings
) -> None:
    """No health pass runs here: status itself looks (a few stats), says so at once, and asks for the rebuild,
    which the indexer carries out; then green again."""
    shutil.rmtree(settings.cache_dir / "index")
    seen: list[str] = []

    def red_now() -> bool:  # the index's checks share one look for a quarter of a second: ask again until then
        seen[:] = [r for r in daemon.status()["red"] if r.startswith(("index-damaged:", "index-rebuilding:"))]
        return bool(seen)

    wait_until(red_now, 10, "status red for the deleted index")
    assert "deleted" in seen[0], seen
    wait_until(lambda: daemon.status()["index"]["rebuild"].get("count", 0) >= 1, 30, "the rebuild asked by status")
    wait_until(lambda: daemon.status()["red"] == [], 30, "status green after the rebuild")
    assert (settings.cache_dir / "index" / "meta.json").exists()


def test_read_only_state_and_cache_folders_turn_status_red(daemon: Daemon, settings: Settings) -> None:
    for name, folder in (("state", settings.state_dir), ("cache", settings.cache_dir)):
        with ReadOnly(folder):
            line = red_after_one_pass(daemon, f"{name}-unwritable")
            assert str(folder) in line and "make it writable" in line
        daemon.health_check()
        assert not [r for r in daemon.status()["red"] if "unwritable" in r]


def test_a_read_only_vault_turns_status_red_and_clears(daemon: Daemon, settings: Settings) -> None:
    with ReadOnly(settings.vault):
        line = red_after_one_pass(daemon, "vault-unwritable")
        assert str(settings.vault) in line and "captures are refused" in line
    daemon.health_check()
    assert not [r for r in daemon.status()["red"] if "unwritable" in r]


def test_read_only_git_objects_turn_status_red_and_the_commit_follows_once_writable(
    daemon: Daemon, settings: Settings
) -> None:
    from daemon_helpers import is_clean, origins

    objects = settings.vault / ".git" / "objects"
    with contextlib.ExitStack() as frozen:  # the object store and every folder in it: no object can be written
        for folder in [objects, *(p for p in objects.rglob("*") if p.is_dir())]:
            frozen.enter_context(ReadOnly(folder))
        line = red_after_one_pass(daemon, "git-unwritable")
        assert str(objects) in line and "committed once it can" in line
        from agentmd.engine.daemon.status import render

        text = render(daemon.status())  # the git line does not say ok above the red line
        assert "  git       git-unwritable (see RED below)" in text and "  git       ok" not in text, text
        captured = daemon.capture(CaptureRequest(title="Held by git", body="Written while git could not write."))
        wait_until(lambda: daemon.committer.state.to_dict().get("commit_failures", 0) >= 1, 20, "a failed cycle")
        assert not is_clean(settings.vault)
    # no new event after this: the failed cycle is retried on its own
    wait_until(lambda: is_clean(settings.vault), 60, "the retried commit once git can write")
    assert origins(settings.vault)[0] == "capture" and captured["path"].endswith(".md")
    daemon.health_check()
    assert not [r for r in daemon.status()["red"] if r.startswith("git-unwritable")]


def test_a_probe_slowed_by_load_is_yellow_and_one_that_fails_is_red(daemon: Daemon) -> None:
    slow = daemon.probe(budget=0.001, limit=60)  # a budget no round trip meets, a limit every one does
    assert slow.ok and slow.slow
    status = daemon.status()
    assert not [r for r in status["red"] if r.startswith("probe")]
    line = next(y for y in status["yellow"] if y.startswith("probe-slow"))
    assert "over its 0.001 s budget" in line and "nothing failed" in line
    failed = daemon.probe(budget=0.001, limit=0.001)  # not even the limit: a failure
    assert not failed.ok and "did not finish within" in (failed.error or "")
    assert any(r.startswith("probe-failed") for r in daemon.status()["red"])


def test_a_full_disk_turns_status_red(settings: Settings) -> None:
    d = Daemon(settings, port=0, health_interval=0, probe_interval=0, min_free_bytes=2**62)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], 30, "first pass")
        line = red_after_one_pass(d, "disk-full")
        assert "free some space" in line
        vault_line = next(r for r in d.status()["red"] if r.startswith("disk-full") and "vault's disk" in r)
        assert str(settings.vault) in vault_line and "captures and commits will fail once it is full" in vault_line
    finally:
        d.stop()


def test_a_vanished_or_swapped_vault_turns_status_red(daemon: Daemon, settings: Settings) -> None:
    vault = settings.vault
    away = vault.with_name("vault-away")
    vault.rename(away)
    try:
        line = red_after_one_pass(daemon, "vault-missing") if not vault.exists() else "mount or restore it"
        assert "mount or restore it" in line
        vault.mkdir(exist_ok=True)  # an empty folder where the vault was: an unmounted drive's mount point
        assert "put the original folder back" in red_after_one_pass(daemon, "vault-swapped")
        shutil.rmtree(vault)
    finally:
        away.rename(vault)

    def cleared() -> bool:  # a background health pass that began before the folder came back may land after ours
        daemon.health_check()
        return not [r for r in daemon.status()["red"] if r.startswith("vault-")]

    wait_until(cleared, 10, "the vault lines to clear once the folder is back")


def test_a_stopped_watcher_turns_status_red(daemon: Daemon) -> None:
    assert daemon.watcher is not None
    daemon.watcher.stop()
    assert "restart `agentmd serve`" in red_after_one_pass(daemon, "watcher-stopped")


def test_a_refused_mass_deletion_is_red_and_names_the_fix(daemon: Daemon, settings: Settings) -> None:
    for rel in list(NOTES)[:25]:
        (settings.vault / rel).unlink()
    daemon.request_pass()

    def refusal_shown() -> bool:  # the pass records its refusal, then the next health check shows it (the
        daemon.health_check()  # committer's hold may be shown a moment before the pass's own line)
        return any("would remove" in r and not r.startswith("commits-held") for r in daemon.status()["red"])

    wait_until(refusal_shown, 20, "the refused pass in status")
    red = daemon.status()["red"]
    # one line for the refused pass, and (from the committer) one for the commits it holds back meanwhile
    refused = [r for r in red if "would remove" in r and not r.startswith("commits-held")]
    assert len(refused) == 1 and "--allow-mass-delete" in refused[0], red
    assert len([r for r in red if r.startswith("commits-held")]) <= 1


def test_skipped_commit_cycles_are_shown(daemon: Daemon, settings: Settings) -> None:
    lock = settings.vault / ".git" / "index.lock"

    def take_lock() -> bool:  # someone else's git holds the index (created only once the daemon's is gone)
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    wait_until(take_lock, 20, "the index lock")
    try:
        (settings.vault / "notes/n00.md").write_text("# Note 0\n\nchanged while git is busy\n")
        daemon.request_commit(0.0)
        wait_until(lambda: daemon.committer.state.skipped_cycles >= 1, 20, "a skipped cycle")
        daemon.health_check()
        lines = [y for y in daemon.status()["yellow"] if y.startswith("commit-skipped")]
        assert lines and "index.lock" in lines[0], daemon.status()["yellow"]
    finally:
        lock.unlink()


@pytest.mark.parametrize(
    "raw",
    [
        b'{"budget": NaN}',
        b'{"budget": Infinity}',
        b'{"budget": -Infinity}',
        b'{"budget": -1}',
        b'{"budget": 0}',
        b'{"budget": 1e308}',
        b'{"budget": "5"}',
        b'{"budget": true}',
        b'{"budget": null}',
        b'{"budget": [5]}',
        b'{"budget": 5, "x": 1}',
    ],
)
def test_hostile_probe_budgets_are_refused_and_leave_status_alone(daemon: Daemon, raw: bytes) -> None:
    code, body = http_post(daemon.port, "/v1/probe", None, raw=raw)
    assert code == 400 and body["code"] in ("usage", "bad-json", "bad-field"), body  # refused before any work
    daemon.health_check()
    assert daemon.status()["red"] == []
    assert not (daemon.settings.state_dir / "probe.json").exists()


# -- inotify limits (a user namespace gives the daemon a small watch limit of its own) ----------------------


def _userns_available() -> bool:
    try:
        out = subprocess.run(
            ["unshare", "-U", "-r", "sh", "-c", "echo 5 > /proc/sys/user/max_inotify_watches && echo ok"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.stdout.strip() == "ok"


def _in_namespace(limit: int) -> tuple[str, ...]:
    return ("unshare", "-U", "-r", "sh", "-c", f'echo {limit} > /proc/sys/user/max_inotify_watches && exec "$0" "$@"')


class InotifyInstancesUsedUp:
    """Holds every inotify instance this user may open (fs.inotify.max_user_instances), the way a busy IDE
    can: the fallback where no user namespace can give the daemon a small limit of its own."""

    def __enter__(self) -> InotifyInstancesUsedUp:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        self.fds: list[int] = []
        self.libc = libc
        while len(self.fds) < 8192:
            fd = libc.inotify_init1(0)
            if fd < 0:
                break
            self.fds.append(fd)
        if ctypes.get_errno() != 24:  # EMFILE: the per-user limit is reached
            self.__exit__()
            pytest.skip("could not use up the inotify instances")
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


@pytest.mark.parametrize("limit", [0, 3])
def test_serve_starts_at_the_inotify_watch_limit_and_reports_what_is_unwatched(
    settings: Settings, env: dict[str, str], limit: int
) -> None:
    """With a user namespace: a watch limit of 0 (not even the vault folder) and of 3 (part of it). Without
    one (a CI runner that forbids them), every inotify instance is used up instead: nothing is watched."""
    userns = _userns_available()
    for i in range(5):
        (settings.vault / "deep" / f"d{i}").mkdir(parents=True)
    if userns:
        served = Served(settings, env, "--reconcile-interval", "1", prefix=_in_namespace(limit))
    else:
        limit = 0
        with InotifyInstancesUsedUp():
            served = Served(settings, env, "--reconcile-interval", "1")
    try:
        if limit == 0:  # not even the vault folder could be watched: red from the first health pass
            wait_until(lambda: any(r.startswith("watcher-unavailable") for r in reds(served.port)), 20, "red")
        else:
            wait_until(lambda: status(served.port)["daemon"]["watcher"]["unwatched_folders"], 20, "unwatched")
        st = status(served.port)
        watcher = st["daemon"]["watcher"]
        if limit == 0:
            line = next(r for r in st["red"] if r.startswith("watcher-unavailable"))
            assert ("max_user_watches" if userns else "max_user_instances") in line
        else:
            assert watcher["unwatched_folders"], json.dumps(watcher)
            # the folders past the limit are in the deep tree; whether `deep` itself got a watch before `notes`
            # depends on the order the file system lists them in
            in_deep = [f == "deep" or f.startswith("deep/") for f in watcher["unwatched_folders"]]
            assert all(in_deep), json.dumps(watcher)
            assert any("unwatched-folders" in y and "deep/" in y for y in st["yellow"]), st["yellow"]
        (settings.vault / "deep" / "d1" / "heron.md").write_text("# Heron\n\nherons wade in the shallows\n")
        wait_until(lambda: matched(served.port, "herons") == 1, 20, "reconciled without a watch")
    finally:
        served.stop()


def test_concurrent_searches_during_a_rebuild_never_fail_hard(served: Served, env: dict[str, str]) -> None:
    errors: list[Any] = []
    stop = threading.Event()

    def searcher() -> None:
        while not stop.is_set():
            try:
                code, body = search(served.port, "otters")
            except OSError:
                return  # the daemon is gone: judged below
            except ValueError as exc:  # an answer that is not JSON: a failure every client would choke on
                errors.append(("not json", str(exc), repr(getattr(exc, "doc", ""))[:300]))
                continue
            if code not in (200, 503):
                errors.append((code, body))

    threads = [threading.Thread(target=searcher) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for f in segment_files(served.settings):
            truncate(f, 40)
        wait_until(lambda: not served.alive() or recovered(served, "otters", len(NOTES)), 30, "recovered")
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    live = restarted_if_killed_by_sigbus(served, env)
    try:
        wait_until(lambda: recovered(live, "otters", len(NOTES)), 30, "recovered under load")
    finally:
        if live is not served:
            live.stop()
    if live is served:
        if errors:
            served.stop()
        assert errors == [], (errors[:3], served.stderr()[-6000:])


def test_an_index_truncated_while_stopped_is_set_aside_at_start(settings: Settings, env: dict[str, str]) -> None:
    first = Served(settings, env)
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(10)
    for f in segment_files(settings):
        truncate(f, 10)
    again = Served(settings, env)
    try:
        wait_until(lambda: recovered(again, "otters", len(NOTES)), 30, "rebuilt at start")
        assert list(settings.cache_dir.glob("index.broken-*"))
        assert not [r for r in status(again.port)["red"] if r.startswith("index-")]
    finally:
        again.stop()


def test_the_checksum_check_tells_sound_truncated_and_garbled_files_apart(tmp_path: Path) -> None:
    from agentmd.engine.index.fulltext import SearchIndex
    from agentmd.engine.index.fulltext.schema import IndexDoc
    from agentmd.engine.index.integrity import IndexGuard, verify_file

    folder = tmp_path / "index"
    index = SearchIndex(folder)
    index.apply(
        IndexDoc(path=f"n{i}.md", title=f"note {i}", meta="", body=f"otters {i}", text="t", wall=None, day=20260101)
        for i in range(10)
    )
    index.close()
    files = sorted(p for p in folder.iterdir() if p.suffix in (".store", ".term", ".idx"))
    assert files and all(verify_file(p) is None for p in files)
    guard = IndexGuard(folder)
    assert guard.refresh() is None and guard.check() is None
    cut, garbled = files[0], files[1]
    with open(garbled, "r+b") as f:
        f.seek(3)
        byte = f.read(1)
        f.seek(3)
        f.write(bytes([byte[0] ^ 0xFF]))
    assert "checksum" in (verify_file(garbled) or "")
    assert guard.check() is not None  # the mtime moved: verified again, and failed
    os.truncate(cut, cut.stat().st_size - 1)
    assert verify_file(cut) is not None
    fresh = IndexGuard(folder)
    assert fresh.refresh() is not None and fresh.damage is not None


def test_health_pass_lines_for_stopped_threads_and_held_deletions(tmp_path: Path) -> None:
    from agentmd.engine.daemon.health import HealthPass
    from agentmd.engine.git.health import CommitState

    for d in ("vault", "state", "cache"):
        (tmp_path / d).mkdir()
    hp = HealthPass(tmp_path / "vault", tmp_path / "state", tmp_path / "cache", min_free_bytes=0)
    hp.record_vault()
    quiet = hp.run(
        index_damage=None, rebuild=None, watcher={"running": True}, watch_error=None, refused=None, commit_state=None
    )
    assert quiet["red"] == [] and quiet["yellow"] == []
    live = hp.run(
        index_damage=None,
        rebuild=None,
        watcher={"running": True},
        watch_error=None,
        refused=None,
        commit_state=CommitState(
            mass_deletion="412 of 500 notes", skipped_cycles=2, last_skip_reason="a merge is in progress"
        ),
        last_cycle_skipped=True,
        dead_threads=("agentmd-committer",),
    )
    assert any(r.startswith("thread-stopped") and "agentmd-committer" in r for r in live["red"])
    assert any(r.startswith("mass-deletion-held") and "412 of 500" in r for r in live["red"])
    assert any(y.startswith("commit-skipped") and "merge" in y for y in live["yellow"])
    assert all(":" in line.split(": ", 1)[1] for line in live["red"])  # each line: what, then the fix


def test_a_pass_that_failed_is_run_again_soon_not_at_the_next_periodic_pass(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass that fails (the cache's disk full for a moment) is followed by a whole pass within seconds, so
    the notes it missed are searchable soon after the cause goes, not after the periodic pass (five minutes)."""
    settings = resolve(vault=str(make_repo(tmp_path / "vault", {"notes/a.md": "# A\n"})))
    with running_daemon(settings) as daemon:
        monkeypatch.setenv("AGENTMD_FAILPOINTS", "reconcile-pass=enospc")
        failed = daemon.passes
        (settings.vault / "notes" / "kingfishers.md").write_text("# Kingfishers\n\nThey dive for minnows.\n")
        time.sleep(2)  # the watcher's pass runs and fails meanwhile
        assert daemon.passes == failed  # no pass went through
        monkeypatch.delenv("AGENTMD_FAILPOINTS")

        def found() -> bool:
            assert daemon.store is not None
            return daemon.store.catalog.get("notes/kingfishers.md") is not None

        wait_until(found, 45, "the note indexed by the pass run again after the failure")
