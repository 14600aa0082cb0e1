"""Faults on the write path: folders swapped for links mid-capture, a vault folder replaced by an empty one,
a state folder that fails after the note landed, retries while the index is not built, the start-up temp
sweep beside captures in flight, names that are not UTF-8, special files named `*.md`, a 60,000-tag note,
and a commit cycle skipped for an operation in progress.

Every test runs against a real temporary vault (real git, real index where one is involved) and is bounded:
loops have fixed counts, waits have deadlines.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from daemon_helpers import git, make_repo, wait_until

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.daemon.status import assemble
from agentmd.engine.fsutil import NotRegularFile, read_regular
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.settings import resolve
from agentmd.engine.write.capture import Capturer, CaptureRefused, CaptureRequest, sweep_temp_files
from agentmd.engine.write.tempfiles import SCRATCH_DIR
from agentmd.rules import ContractCache
from agentmd.vault_schema import parse_note

pytestmark = pytest.mark.slow

FIXED_NOW = dt.datetime(2024, 3, 5, 10, 20, 30, tzinfo=dt.UTC)
SHARD = "memory/2024/03"  # where an untyped capture made at FIXED_NOW goes


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "vault").resolve()


@pytest.fixture
def make_capturer(tmp_path: Path, vault: Path) -> Iterator[Callable[..., Capturer]]:
    stores: list[Store] = []

    def make(*, indexed: bool = False, state: str = "state", **kwargs: object) -> Capturer:
        store = None
        if indexed:
            store = Store(tmp_path / "cache")
            stores.append(store)
        kwargs.setdefault("now", lambda: FIXED_NOW)
        return Capturer(vault, tmp_path / state, ContractCache(vault), store, **kwargs)  # type: ignore[arg-type]

    yield make
    for s in stores:
        s.close()


def files_under(root: Path) -> list[str]:
    out = []
    for dirpath, _dirs, names in os.walk(root):
        out.extend(os.path.join(dirpath, n) for n in names)
    return sorted(out)


def notes_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.md")) if folder.is_dir() else []


# ---------------------------------------------------------------------------------------------- links


def test_a_folder_swapped_for_a_link_mid_capture_never_sends_a_byte_outside(
    tmp_path: Path, vault: Path, make_capturer: Callable[..., Capturer]
) -> None:
    """A racer flips the capture folder between the real folder and a link to outside while captures run:
    nothing lands outside, and every acknowledged note is in the vault."""
    outside = tmp_path / "outside"
    outside.mkdir()
    real = vault / SHARD
    aside = vault / "memory" / "2024" / ".03-aside"
    real.mkdir(parents=True)
    capturer = make_capturer(cap_override=0)
    done = threading.Event()
    racing = threading.Event()  # set while a raced capture runs
    flips = 0

    def restore() -> None:
        if real.is_symlink():
            real.unlink()
        while aside.exists():
            try:
                os.rename(aside, real)
            except OSError:  # a capture made a fresh folder meanwhile: merge the two
                for name in os.listdir(aside):
                    os.rename(aside / name, real / name)
                aside.rmdir()

    def racer() -> None:
        nonlocal flips
        while not done.is_set():
            if not racing.wait(timeout=0.05):  # every other capture runs unraced (see below)
                continue
            try:
                os.rename(real, aside)
            except OSError:
                continue
            with contextlib.suppress(FileExistsError):
                os.symlink(outside, real, target_is_directory=True)
            flips += 1
            restore()

    thread = threading.Thread(target=racer, daemon=True)
    thread.start()
    acknowledged: list[str] = []
    refused: list[str] = []
    try:
        # Even captures run while the racer flips; odd ones between its runs, so that however fast a machine
        # flips, a good share of the captures is acknowledged and checked (the test is never vacuous).
        for i in range(300):
            req = CaptureRequest(title=f"Race note {i}", body=f"body {i} quetzal\n")
            if i % 2 == 0:
                racing.set()
            try:
                acknowledged.append(capturer.capture(req).path)
            except CaptureRefused as exc:
                refused.append(exc.code)
            finally:
                racing.clear()
    finally:
        done.set()
        thread.join(10)
    restore()
    assert not thread.is_alive()
    assert flips > 50, f"the racer flipped only {flips} times"
    assert files_under(outside) == []
    assert set(refused) <= {"outside-vault", "write-failed", "path:symlink-escape"}, refused  # nothing written
    for rel in acknowledged:
        full = vault / rel
        assert not full.is_symlink() and full.is_file(), rel
        assert os.path.realpath(full).startswith(str(vault) + os.sep)
    assert len(acknowledged) + len(refused) == 300 and len(acknowledged) > 30
    assert not [p for p in files_under(vault / "memory") if p.endswith(".capture-tmp")]


def test_a_capture_into_a_folder_that_is_a_link_is_refused(
    tmp_path: Path, vault: Path, make_capturer: Callable[..., Capturer]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "memory" / "2024").mkdir(parents=True)
    os.symlink(outside, vault / SHARD)
    with pytest.raises(CaptureRefused) as info:
        make_capturer().capture(CaptureRequest(title="Into the link", body="x\n"))
    assert info.value.code in ("outside-vault", "door-symlink") or "link" in str(info.value)
    assert files_under(outside) == []


# ---------------------------------------------------------------------------------------------- identity


def test_a_vault_folder_replaced_by_an_empty_one_refuses_captures(
    tmp_path: Path, vault: Path, make_capturer: Callable[..., Capturer]
) -> None:
    capturer = make_capturer()
    first = capturer.capture(CaptureRequest(title="Before the swap", body="kept\n"))
    assert (vault / first.path).is_file()
    assert capturer.identity.problem() is None
    os.rename(vault, tmp_path / "vault-unmounted")  # the drive goes away; its mount point stays, empty
    vault.mkdir()
    with pytest.raises(CaptureRefused) as info:
        capturer.capture(CaptureRequest(title="After the swap", body="must not land\n"))
    assert info.value.code == "vault-replaced"
    assert files_under(vault) == []
    problem = capturer.identity.problem()
    assert problem and "no longer the vault" in problem
    status = assemble({"git": {"state": "ok"}}, vault, {"running": True, "vault_problem": problem})
    assert status["color"] == "red" and status["red"][0].startswith("vault-replaced:")


def test_a_vault_emptied_in_place_refuses_captures(vault: Path, make_capturer: Callable[..., Capturer]) -> None:
    """Deleted and made again at the same path: even if the folder gets its inode back, the repository is gone."""
    capturer = make_capturer()
    capturer.capture(CaptureRequest(title="Before", body="x\n"))
    subprocess.run(["rm", "-rf", str(vault)], check=True)
    vault.mkdir()
    with pytest.raises(CaptureRefused) as info:
        capturer.capture(CaptureRequest(title="After", body="y\n"))
    assert info.value.code == "vault-replaced"
    assert files_under(vault) == []


def test_a_repository_made_after_opening_is_adopted(tmp_path: Path, make_capturer: Callable[..., Capturer]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    capturer = Capturer(plain, tmp_path / "s", ContractCache(plain), None, now=lambda: FIXED_NOW)
    capturer.capture(CaptureRequest(title="No git yet", body="a\n"))
    subprocess.run(["git", "init", "-q", str(plain)], check=True)
    capturer.capture(CaptureRequest(title="Git now", body="b\n"))
    assert capturer.identity.problem() is None


# ---------------------------------------------------------------------------------------------- after landing


def _count_write_fails(state: Path) -> None:
    """The day's count cannot be saved: its temp file is a link to /dev/full (ENOSPC), or a folder."""
    folder = state / "captures"
    folder.mkdir(parents=True)
    tmp = folder / f"{FIXED_NOW.date().isoformat()}.tmp"
    if os.path.exists("/dev/full"):
        os.symlink("/dev/full", tmp)
    else:
        tmp.mkdir()


def test_a_full_state_folder_after_the_note_landed_answers_written_and_a_retry_makes_no_twin(
    tmp_path: Path, vault: Path, make_capturer: Callable[..., Capturer]
) -> None:
    _count_write_fails(tmp_path / "state")
    capturer = make_capturer(indexed=True)
    req = CaptureRequest(title="State disk full", body="the note lands all the same\n")
    result = capturer.capture(req)
    assert (vault / result.path).is_file()
    assert any("was written" in w and "count" in w for w in result.warnings), result.warnings
    again = capturer.capture(req)
    assert again.path == result.path and again.reinforced
    assert notes_in(vault / SHARD) == ["state-disk-full.md"]


def test_a_hook_failing_after_the_note_landed_is_a_warning(vault: Path, make_capturer: Callable[..., Capturer]) -> None:
    def after(path: str, origin: str) -> None:
        raise OSError(28, "No space left on device")

    capturer = make_capturer(after_write=after)
    result = capturer.capture(CaptureRequest(title="After hook fails", body="still written\n"))
    assert (vault / result.path).is_file()
    assert any("do not retry" in w for w in result.warnings)


def test_a_state_folder_that_cannot_be_written_before_the_note_refuses_cleanly(
    tmp_path: Path, vault: Path, make_capturer: Callable[..., Capturer]
) -> None:
    (tmp_path / "state").write_text("a file where the state folder should be")
    with pytest.raises(CaptureRefused) as info:
        make_capturer().capture(CaptureRequest(title="No state", body="x\n"))
    assert info.value.code == "write-failed" and "nothing was written" in str(info.value)
    assert notes_in(vault / SHARD) == []


def test_a_retry_before_the_index_is_built_finds_the_note_on_disk(
    vault: Path, make_capturer: Callable[..., Capturer]
) -> None:
    """A restarted daemon serves captures before its first pass (no index yet): a retry is not a twin."""
    req = CaptureRequest(title="Retried capture", body="sent twice\n")
    first = make_capturer().capture(req)
    restarted = make_capturer()  # a new process, nothing indexed
    again = restarted.capture(req)
    assert again.path == first.path and again.reinforced and not again.indexed
    assert notes_in(vault / SHARD) == ["retried-capture.md"]
    other = restarted.capture(CaptureRequest(title="Retried capture", body="a different body\n"))
    assert other.path == f"{SHARD}/retried-capture-2.md" and not other.reinforced


# ---------------------------------------------------------------------------------------------- temp sweep


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_the_start_up_sweep_keeps_temp_files_of_live_writers_and_new_ones(vault: Path) -> None:
    folder = vault / SHARD
    folder.mkdir(parents=True)
    dead = _dead_pid()
    live = folder / f".note.{os.getpid()}-0123abcd.capture-tmp"
    crashed = folder / f".note.{dead}-0123abcd.capture-tmp"
    crashed_new = folder / f".other.{dead}-4567cdef.capture-tmp"
    for p in (live, crashed, crashed_new):
        p.write_text("x")
    started = time.time()
    os.utime(crashed, (started - 60, started - 60))
    os.utime(live, (started - 60, started - 60))
    os.utime(crashed_new, (started + 1, started + 1))
    assert sweep_temp_files(vault, older_than=started) == 1
    assert live.exists() and crashed_new.exists() and not crashed.exists()


def test_the_start_up_sweep_clears_the_scratch_folder_of_a_crashed_writer_and_only_that(vault: Path) -> None:
    scratch = vault / SCRATCH_DIR
    scratch.mkdir()
    (scratch / "nested").mkdir()
    dead = _dead_pid()
    live = scratch / f".note.{os.getpid()}-0123abcd.capture-tmp"
    crashed = scratch / f".note.{dead}-0123abcd.capture-tmp"
    below = scratch / "nested" / f".deep.{dead}-89abcdef.capture-tmp"  # not where a capture writes
    for p in (live, crashed, below):
        p.write_text("x")
    assert sweep_temp_files(vault) == 1
    assert live.exists() and below.exists() and not crashed.exists()


def test_a_capture_writes_its_temp_file_in_the_scratch_folder_and_leaves_none(
    vault: Path, make_capturer: Callable[..., Capturer]
) -> None:
    capturer = make_capturer()
    path = capturer.capture(CaptureRequest(title="Scratch", body="written through the scratch folder\n")).path
    assert (vault / path).read_text().endswith("written through the scratch folder\n")
    assert (vault / SCRATCH_DIR).is_dir() and os.listdir(vault / SCRATCH_DIR) == []  # linked into place, gone
    assert not [p for p in files_under(vault / "memory") if p.endswith(".capture-tmp")]


def test_a_scratch_folder_swapped_for_a_link_is_not_followed_and_the_capture_still_lands(
    vault: Path, tmp_path: Path, make_capturer: Callable[..., Capturer]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / SCRATCH_DIR).symlink_to(outside)
    capturer = make_capturer()
    path = capturer.capture(CaptureRequest(title="Linked scratch", body="kept inside the vault\n")).path
    assert (vault / path).is_file() and not (vault / path).is_symlink()
    assert files_under(outside) == []  # the temp file went to the note's own folder instead
    assert not [p for p in files_under(vault / "memory") if p.endswith(".capture-tmp")]


def test_the_sweep_never_races_captures_in_flight(vault: Path, make_capturer: Callable[..., Capturer]) -> None:
    capturer = make_capturer()
    done = threading.Event()
    swept = 0

    def sweeper() -> None:
        nonlocal swept
        while not done.is_set():
            swept += sweep_temp_files(vault)

    thread = threading.Thread(target=sweeper, daemon=True)
    thread.start()
    try:
        paths = [capturer.capture(CaptureRequest(title=f"Swept {i}", body=f"{i}\n")).path for i in range(150)]
    finally:
        done.set()
        thread.join(10)
    assert swept == 0
    assert all((vault / p).is_file() for p in paths)


# ---------------------------------------------------------------------------------------------- reading


def test_a_name_that_is_not_utf8_never_fails_a_hint_pass(tmp_path: Path, vault: Path) -> None:
    good = vault / "good.md"
    good.write_text("# Good\n\nquetzal\n")
    bad_name = os.fsdecode(b"caf\xe9.md")
    with open(os.path.join(os.fsencode(vault), b"caf\xe9.md"), "wb") as fh:
        fh.write(b"# Bad name\n")
    with Store(tmp_path / "cache") as store:
        report = reconcile(vault, store, only={"good.md", bad_name})
        assert report.added == 1 and not report.errors
        assert [s["reason"] for s in report.skipped] == ["file name is not valid UTF-8; rename the file"]
        assert "good.md" in store.catalog.stat_keys()
        full = reconcile(vault, store)
        assert not full.errors and any("UTF-8" in s["reason"] for s in full.skipped)


def _special_files(vault: Path) -> list[str]:
    os.mkfifo(vault / "pipe.md")
    made = ["pipe.md"]
    try:
        os.mknod(vault / "zero.md", 0o644 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero: reads never end
        made.append("zero.md")
    except PermissionError:
        pass  # not root: the FIFO alone is the case
    return made


def test_special_files_named_md_are_skipped_not_read(tmp_path: Path, vault: Path) -> None:
    (vault / "real.md").write_text("# Real\n\nquetzal\n")
    made = _special_files(vault)
    outcome: dict[str, object] = {}

    def run() -> None:
        with Store(tmp_path / "cache") as store:
            outcome["full"] = reconcile(vault, store)
            outcome["hints"] = reconcile(vault, store, only=set(made) | {"real.md"})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(30)
    if thread.is_alive():  # release a reader stuck on the FIFO before failing
        fd = os.open(vault / "pipe.md", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    assert not thread.is_alive(), "reconcile hung on a special file"
    full = outcome["full"]
    assert full.added == 2 and not full.errors  # type: ignore[attr-defined]
    assert sorted(s["path"] for s in full.skipped) == sorted(made)  # type: ignore[attr-defined]
    assert not outcome["hints"].errors  # type: ignore[attr-defined]


def test_read_regular_refuses_special_files_without_blocking(vault: Path) -> None:
    for name in _special_files(vault):
        with pytest.raises(NotRegularFile):
            read_regular(vault / name)
    (vault / "big.md").write_bytes(b"x" * 2000)
    with pytest.raises(OSError, match="over the limit"):
        read_regular(vault / "big.md", limit=1000)
    os.symlink(vault / "big.md", vault / "link.md")
    with pytest.raises(NotRegularFile):
        read_regular(vault / "link.md")


# ---------------------------------------------------------------------------------------------- tags


def _tag_body(tags: int, size: int) -> str:
    body = " ".join(f"#t{i:05d}" for i in range(tags))
    return body + " " + "x" * max(0, size - len(body) - 2) + "\n"


def test_sixty_thousand_inline_tags_parse_in_linear_time() -> None:
    big = "---\ntitle: Tags\n---\n" + _tag_body(60_000, 469 * 1024)
    start = time.process_time()  # CPU time: a loaded machine must not fail a test of the algorithm's order
    note = parse_note("tags.md", big.encode(), 0)
    seconds = time.process_time() - start
    assert len(note.tags) == 60_000 and list(note.tags[:2]) == ["t00000", "t00001"]
    assert seconds < 1.5, f"{seconds:.2f} s for 60,000 tags (a quadratic merge took about 27 s)"


def test_a_sixty_thousand_tag_capture_is_bounded(vault: Path, make_capturer: Callable[..., Capturer]) -> None:
    capturer = make_capturer(indexed=True)
    start = time.process_time()  # CPU time (of every thread of the process): a loaded machine must not fail it
    result = capturer.capture(CaptureRequest(title="Many tags", body=_tag_body(60_000, 469 * 1024)))
    seconds = time.process_time() - start
    assert result.indexed
    assert seconds < 10, f"a 469 KB capture with 60,000 tags took {seconds:.1f} s of CPU"


# ---------------------------------------------------------------------------------------------- catalog


def test_opening_the_catalog_waits_on_no_writer(tmp_path: Path) -> None:
    """A second handle (a CLI search, a restarted daemon) opens a catalog of this schema without writing,
    so a writer holding the lock does not make it wait or fail with "database is locked"."""
    path = tmp_path / "catalog.sqlite"
    Catalog(path).close()
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    opened: list[Catalog] = []
    thread = threading.Thread(target=lambda: opened.append(Catalog(path)), daemon=True)
    try:
        thread.start()
        thread.join(3)
        assert opened, "opening the catalog waited on the writer's lock"
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        thread.join(30)
        for c in opened:
            c.close()


# ---------------------------------------------------------------------------------------------- commit cycles


def test_a_commit_cycle_skipped_for_an_operation_in_progress_is_rescheduled(tmp_path: Path, vault: Path) -> None:
    settings = resolve(vault=str(vault), index=str(tmp_path / "index"))
    daemon = Daemon(settings, port=0, commit_debounce=0.1, probe_interval=0, watch=False)
    daemon.start()
    try:
        wait_until(lambda: not daemon.health()["index_stale"] and daemon.commit_cycles >= 1, 30, "first cycle")
        merge_head = vault / ".git" / "MERGE_HEAD"
        merge_head.write_text(git(vault, "rev-parse", "HEAD") + "\n")
        (vault / "edited.md").write_text("# Edited while a merge is open\n")
        cycles = daemon.commit_cycles
        daemon.request_commit(0.0)
        wait_until(lambda: daemon.commit_cycles > cycles, 20, "a skipped cycle")
        assert "edited.md" not in git(vault, "ls-files")
        merge_head.unlink()  # the merge is over; no new event arrives
        wait_until(lambda: "edited.md" in git(vault, "ls-files"), 20, "the rescheduled commit")
    finally:
        daemon.stop()


def test_the_daemon_refuses_captures_into_a_replaced_vault_and_status_turns_red(tmp_path: Path, vault: Path) -> None:
    settings = resolve(vault=str(vault), index=str(tmp_path / "index"))
    daemon = Daemon(settings, port=0, commit_debounce=0.1, probe_interval=0, watch=False)
    daemon.start()
    try:
        wait_until(lambda: not daemon.health()["index_stale"], 30, "first pass")
        served = daemon.capture(CaptureRequest(title="Served", body="fine\n"))["path"]
        # its commit settles first: a swap in the middle of a cycle is the committer's own test
        # (tests/engine/git/test_git_committer.py, test_a_vault_swapped_during_a_cycle_is_not_committed_into)
        wait_until(lambda: served in git(vault, "ls-files"), 30, "the served capture committed")
        os.rename(vault, tmp_path / "vault-unmounted")
        vault.mkdir()
        with pytest.raises(CaptureRefused) as info:
            daemon.capture(CaptureRequest(title="Into the void", body="must not land\n"))
        assert info.value.code == "vault-replaced"
        assert files_under(vault) == []
        daemon.request_pass()  # the next health pass
        wait_until(lambda: any(r.startswith("vault-replaced:") for r in daemon.status()["red"]), 30, "status red")
        assert daemon.status()["color"] == "red"
    finally:
        daemon.stop()


@pytest.mark.parametrize("instructions", ["file as lesson", "frobnicate"])  # filed and deleted, or flagged
def test_a_phone_folder_swapped_for_a_link_mid_sweep_never_touches_outside_notes(
    tmp_path: Path, vault: Path, make_capturer: Callable[..., Capturer], instructions: str
) -> None:
    """The sweep reads a phone note, then (after registering its origin) deletes or flags it: the folder is
    swapped for a link to an outside copy of the very same bytes right then. The outside copy is untouched."""
    from agentmd.engine.write.phone import sweep_phone_notes

    text = f"---\ntitle: Clip\ninstructions: {instructions}\n---\nclipped words\n"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "clip.md").write_text(text)
    real = vault / "inbox" / "phone" / "sub"
    real.mkdir(parents=True)
    (real / "clip.md").write_text(text)
    swapped: list[str] = []

    def swap(path: str, origin: str) -> None:
        if path.startswith("inbox/phone/") and not swapped:
            os.rename(real, vault / "inbox" / "phone" / ".sub-aside")
            os.symlink(outside, real, target_is_directory=True)
            swapped.append(path)

    contract = ContractCache(vault).get().contract
    actions = sweep_phone_notes(vault, contract, make_capturer(cap_override=0), note_origin=swap)
    assert swapped == ["inbox/phone/sub/clip.md"], actions
    assert (outside / "clip.md").read_text() == text
    assert files_under(outside) == [str(outside / "clip.md")]


def test_the_embedder_never_reads_a_note_swapped_for_a_fifo(vault: Path) -> None:
    from agentmd.engine.index.vector_refresh import note_chunks

    (vault / "note.md").write_text("# Note\n\nwords\n")
    assert note_chunks(vault, "note.md") is not None
    (vault / "note.md").unlink()
    os.mkfifo(vault / "note.md")
    got: list[object] = []
    thread = threading.Thread(target=lambda: got.append(note_chunks(vault, "note.md")), daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        os.close(os.open(vault / "note.md", os.O_WRONLY | os.O_NONBLOCK))
    assert got == [None]


def test_a_temp_file_that_cannot_be_written_whole_is_removed_and_nothing_is_written(tmp_path: Path) -> None:
    """The disk fills while a capture writes its temp file (here the process's file-size limit, which fails
    the write the way ENOSPC does): the capture is refused, and no temp file waits for the next start."""
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    child = subprocess.run(
        [sys.executable, "-c", f"""
import resource, signal, sys
from pathlib import Path
from agentmd.engine.index.store import Store
from agentmd.engine.write.capture import Capturer, CaptureRefused, CaptureRequest
from agentmd.rules import ContractCache
vault = Path({str(vault)!r})
with Store(Path({str(tmp_path / "cache")!r})) as store:
    capturer = Capturer(vault, Path({str(tmp_path / "state")!r}), ContractCache(vault), store)
    capturer.capture(CaptureRequest(title="Warm", body="a first note"))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    try:
        capturer.capture(CaptureRequest(title="Too big for the disk", body="word " * 4000))
    except CaptureRefused as exc:
        print(exc.code)
        print(exc)
        sys.exit(0)
sys.exit("the capture was not refused")
"""],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    code, said = child.stdout.strip().split("\n", 1)
    assert child.returncode == 0 and code == "write-failed", child.stderr
    assert "nothing was written" in said and "size limit" in said and "capture again" in said, said  # how to fix it
    leftovers = [p.name for p in vault.rglob("*") if p.is_file() and ".git" not in p.parts and "tmp" in p.name]
    assert leftovers == []
    assert not list(vault.rglob("too-big-for-the-disk*.md"))
