"""Named fault points on the commit path, for the fault-injection tests.

`AGENTMD_FAILPOINTS="index-publish=enospc,after-index-published=kill"` makes the named point fail every time
it is reached: `kill` sends SIGKILL to this process (a real crash, not an exception),
`enospc`, `eio` and `erofs` raise the matching `OSError`. Without the variable every point is a dictionary
lookup on the environment and nothing else.

`AGENTMD_CRASH_POINT=<name>` (the variable the capture path's crash points read) kills the process at the
named point too.

The points: `index-publish` (the new index is about to replace `.git/index`), `after-index-published`
(the index is in place, HEAD has not moved), `before-commit-cycle` and `sync-tree-moved` (a sync round's move
of the work tree, the index and HEAD has just returned).
"""

from __future__ import annotations

import errno
import os
import signal

ENV = "AGENTMD_FAILPOINTS"
CRASH_ENV = "AGENTMD_CRASH_POINT"
_ERRORS = {"enospc": errno.ENOSPC, "eio": errno.EIO, "erofs": errno.EROFS}


def failpoint(name: str) -> None:
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
