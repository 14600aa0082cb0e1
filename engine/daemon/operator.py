"""Operator authority over HTTP: a per-vault secret in the state folder, readable by its owner only.

The door lets only the operator write `alignment` folders. Over loopback HTTP any local process can say
whatever it likes in a request body, so the daemon takes nobody's word for it: an operator write must carry
the token from `<state>/operator.token` in the `X-Agentmd-Operator` header. The file is made on first use
(by the daemon or by `agentmd capture --operator`) with mode 0600 inside the state folder, and a token file
that others could read, that is not a regular file, or that another user owns is refused rather than
trusted. The agents' published tools (the MCP `memory_search` and `memory_capture`) never send it: they have
no operator form at all.

What this stops: a request body claiming `"_actor": "operator"`, a web page or a sandboxed tool that can
reach the port but not the owner's files. What it cannot stop: a process running as the owner with a shell
can read the token file as it can read and edit the vault itself.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import stat
from pathlib import Path
from typing import Final

from agentmd.engine.errors import AgentmdError

TOKEN_FILE: Final = "operator.token"
OPERATOR_HEADER: Final = "X-Agentmd-Operator"
OPERATOR_FIELD: Final = "_operator_token"  # where the listener hands the header to a handler; never read from a body
_TOKEN_BYTES: Final = 32


class OperatorTokenError(AgentmdError):
    """The operator token file is unsafe or unreadable; the message says what to do."""


def token_path(state_dir: Path) -> Path:
    return Path(state_dir) / TOKEN_FILE


def _read(path: Path) -> str | None:
    """The token in `path`, None when there is no file; OperatorTokenError when it is not safe to trust."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OperatorTokenError(
            f"the operator token {path} could not be opened ({exc.strerror or exc}); it must be a regular file "
            "readable by its owner only: delete it and a new one is made"
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OperatorTokenError(f"the operator token {path} is not a regular file; delete it")
        if st.st_uid != os.geteuid():
            raise OperatorTokenError(f"the operator token {path} belongs to another user; delete it")
        if st.st_mode & 0o077:
            raise OperatorTokenError(
                f"the operator token {path} has mode {stat.S_IMODE(st.st_mode):04o}, readable by others; "
                "run `chmod 600` on it or delete it so a new one is made"
            )
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    token = data.decode("ascii", "replace").strip()
    if len(token) < 32:
        raise OperatorTokenError(f"the operator token {path} is empty or too short; delete it so a new one is made")
    return token


def ensure_token(state_dir: Path) -> str:
    """The vault's operator token, made (0600, in a 0700 state folder) when there is none yet."""
    state_dir = Path(state_dir)
    path = token_path(state_dir)
    found = _read(path)
    if found is not None:
        return found
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_hex(_TOKEN_BYTES)
    temp = state_dir / f".{TOKEN_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, (token + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temp, path)  # never replaces a token another process made meanwhile
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    found = _read(path)
    if found is None:
        raise OperatorTokenError(f"the operator token {path} could not be made; check the state folder")
    return found


def is_operator(state_dir: Path, presented: object) -> bool:
    """Whether `presented` (a header value, or None) is this vault's operator token."""
    if not isinstance(presented, str) or not presented:
        return False
    try:
        token = ensure_token(state_dir)
    except (OperatorTokenError, OSError):
        return False
    return hmac.compare_digest(presented.strip().encode("utf-8", "replace"), token.encode("ascii"))
