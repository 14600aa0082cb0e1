"""Moving HEAD as a `git update-ref --stdin` transaction held open while the committer publishes its index.

The committer locks HEAD (and the branch it names) with `prepare` before the new index is in place and
moves it with `commit` right after, so a user's `git commit` that read the old HEAD cannot slip in
between (see "Why HEAD moves last" in `agentmd.engine.git.committer`).
"""

from __future__ import annotations

import contextlib
import subprocess

from agentmd.engine.git.runner import GIT_TIMEOUT_SECONDS, CycleFailure, GitCli, GitRun


class HeadMoved(CycleFailure):
    """HEAD changed between our read and our ref lock (a user's `git commit` moves HEAD after it has
    already released index.lock). Nothing was changed; the cycle starts over."""


class RefUpdate:
    """Moving HEAD as a `git update-ref --stdin` transaction held open across the index publish.

    `prepare` locks HEAD (and the branch it names) and checks its old value; from then on no other
    process can move HEAD until `commit` (or `abort`) ends the transaction.
    """

    def __init__(self, git: GitCli, new: str, old: str | None, reflog: str) -> None:
        self.git = git
        self.new = new
        self.old = old or "0" * len(new)  # the zero id: HEAD's branch must not exist yet
        self.reflog = reflog
        self.proc: subprocess.Popen[bytes] | None = None

    def _say(self, text: str) -> str:
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()
        except OSError:
            return ""
        return self.proc.stdout.readline().decode("utf-8", "replace").strip()

    def _finish(self) -> str:
        """Close the conversation, wait for git and return what it printed on stderr."""
        assert self.proc is not None
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            err = self.proc.stderr.read() if self.proc.stderr is not None else b""
            self.proc.wait(timeout=GIT_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            err = b"git update-ref did not finish in time and was killed"
        for stream in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        return GitRun(1, b"", err.decode("utf-8", "replace")).why()

    def prepare(self) -> None:
        self.proc = self.git.popen("update-ref", "-m", self.reflog, "--stdin")
        started = self._say("start\n")
        prepared = self._say(f"update HEAD {self.new} {self.old}\nprepare\n") if started == "start: ok" else ""
        if prepared != "prepare: ok":
            problem = self._finish()
            if "but expected" in problem or "reference already exists" in problem:
                raise HeadMoved(f"HEAD changed while agentmd was committing ({problem}); nothing was changed")
            raise CycleFailure(
                f"could not lock HEAD to move it ({problem}); nothing was changed. If another program holds the "
                "branch's .lock file, the next cycle retries; a stale one must be removed by hand"
            )

    def commit(self) -> str | None:
        """Move HEAD; None when done, else git's complaint."""
        answer = self._say("commit\n")
        problem = self._finish()
        assert self.proc is not None
        return None if answer == "commit: ok" and self.proc.returncode == 0 else problem

    def abort(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self._say("abort\n")
            self._finish()
