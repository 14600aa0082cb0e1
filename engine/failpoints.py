"""Named fault points, for the fault-injection and crash tests: the one switch both test variables turn.

`AGENTMD_FAILPOINTS="index-publish=enospc,after-index-published=kill"` makes the named point fail every time
it is reached: `kill` sends SIGKILL to this process (a real crash, not an exception, exactly as a power cut or
`kill -9` would), `enospc`, `eio` and `erofs` raise the matching `OSError`.

`AGENTMD_CRASH_POINT=<name>` kills the process at the one named point.

Without either variable (always, outside tests) a point is a dictionary lookup on the environment and nothing
else.

The points on the commit path: `index-lock-staged` (the lock's marker is written, the lock not yet taken),
`index-publish` (the new index is about to replace `.git/index`),
`after-index-published` (the index is in place, HEAD has not moved), `before-commit-cycle`, and
`sync-tree-written`, `sync-index-moved`, `sync-tree-moved` (the steps of a move of the work tree, the index and
HEAD, a sync round's or an undo's), and `tree-moved-by-git` (the same move made by git's `read-tree -u`, where
files cannot be swapped in one step: the files and index written, HEAD not moved).
On the capture path (engine/write/landing.py, `CRASH_POINTS`): `after-temp-write`, `after-link`, `after-index`.
`reconcile-pass`: a reconcile pass is about to read the vault. `secret-write`: a token file (engine/secret.py)
is about to be written. `lease-write`: the vault lease's record is written, not yet in place.
"""

from __future__ import annotations

import errno
import os
import signal

ENV = "AGENTMD_FAILPOINTS"
CRASH_ENV = "AGENTMD_CRASH_POINT"
_ERRORS = {"enospc": errno.ENOSPC, "eio": errno.EIO, "erofs": errno.EROFS}


def failpoint(name: str) -> None:
    """Fail here as the environment says for `name`; do nothing when it names no fault for this point."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
    spec = os.environ.get(ENV)
    if not spec:
        return
    for item in spec.split(","):
        key, _, action = item.partition("=")
        if key.strip() != name:
            continue
        action = action.strip().lower()
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        code = _ERRORS.get(action)
        if code is not None:
            raise OSError(code, os.strerror(code), f"failpoint {name}")
