"""A note renamed (as Obsidian renames, in its folder) while an agent captures the same fact again: the capture
answers the note where it is now and writes no twin at the old name. The catalog here never hears of the
renames (no watcher runs), the worst case: only the rename itself tells where the note went.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import md_files
from daemon_helpers import make_repo

from agentmd.engine.index.store import Store
from agentmd.engine.write.capture import Capturer, CaptureRequest
from agentmd.rules import ContractCache

FACT = CaptureRequest(title="Pin the toolchain", body="Use uv for every repository.", type="decision", why="builds")


@pytest.fixture
def capturer(tmp_path: Path) -> Iterator[Capturer]:
    repo = make_repo(tmp_path / "vault").resolve()
    with Store(tmp_path / "cache") as store:
        yield Capturer(repo, tmp_path / "state", ContractCache(repo), store)


def test_a_note_renamed_before_the_recapture_is_answered_where_it_is_now(capturer: Capturer) -> None:
    vault = capturer.vault
    first = capturer.capture(FACT)
    renamed = first.path.replace("pin-the-toolchain.md", "Toolchain (pinned).md")
    (vault / first.path).rename(vault / renamed)  # the catalog still names the old path
    again = capturer.capture(FACT)
    assert again.reinforced and again.path == renamed
    assert sorted(md_files(vault)) == sorted({"README.md", renamed})  # no twin at the old name


def test_renames_racing_recaptures_make_no_twin_and_no_answer_names_a_missing_path(capturer: Capturer) -> None:
    vault = capturer.vault
    rng = random.Random(7)
    twins = wrong = 0
    for trial in range(30):
        current = capturer.capture(FACT).path
        target = current.rsplit("/", 1)[0] + f"/renamed-{trial}.md"
        renamed_at: list[float] = []
        delay = rng.uniform(0, 0.004)  # an Obsidian rename within the few milliseconds the capture takes

        def rename(src: str = current, dst: str = target, delay: float = delay, at: list[float] = renamed_at) -> None:
            time.sleep(delay)
            (vault / src).rename(vault / dst)
            at.append(time.monotonic())

        mover = threading.Thread(target=rename)
        mover.start()
        asked_at = time.monotonic()
        answer = capturer.capture(FACT)
        mover.join(10)
        twins += len([p for p in md_files(vault) if p != "README.md"]) - 1
        # the answer names the note where it was while the call ran: the old name only if the rename had not
        # happened before the call began (a rename landing as the answer leaves is a race no answer can win)
        renamed_before = bool(renamed_at) and renamed_at[0] < asked_at
        wrong += not (answer.reinforced and answer.path in ((target,) if renamed_before else (current, target)))
        for p in md_files(vault):  # the next trial starts from one note at the capture's own name
            if p != "README.md":
                (vault / p).rename(vault / current)
    assert twins == 0
    assert wrong == 0
