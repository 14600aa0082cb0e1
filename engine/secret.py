"""Secrets kept as small files in the state folder, readable by their owner only.

Two live there: the operator token (engine/daemon/operator.py: who may write `alignment` folders) and the
access token (engine/client.py: who may call the daemon at all). A file is made on first use with mode 0600,
by a hard link from a temp file so that two processes making it at once agree on one token; a rotation
renames a new one over it. A file that others could read, that is not a regular file, or that another user
owns is refused rather than trusted.

Standard library only (and the engine's exception root): the prompt hook reads the access token on every
prompt.
"""

from __future__ import annotations

import os
import stat

from agentmd.engine.errors import AgentmdError

TYPE_CHECKING = False  # `typing` is one more import on the prompt hook's path; mypy reads the block below
if TYPE_CHECKING:
    from pathlib import Path

TOKEN_BYTES = 32


class SecretFileError(AgentmdError):
    """A secret file is unsafe or unreadable; the message says what to do."""


def read_secret(path: str | os.PathLike[str], what: str) -> str | None:
    """The secret in `path`, None when there is no file; SecretFileError when it is not safe to trust.
    `what` names it in messages ("the operator token")."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SecretFileError(
            f"{what} {path} could not be opened ({exc.strerror or exc}); it must be a regular file readable by "
            "its owner only: delete it and a new one is made"
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SecretFileError(f"{what} {path} is not a regular file; delete it")
        if st.st_uid != os.geteuid():
            raise SecretFileError(f"{what} {path} belongs to another user; delete it")
        if st.st_mode & 0o077:
            raise SecretFileError(
                f"{what} {path} has mode {stat.S_IMODE(st.st_mode):04o}, readable by others; run `chmod 600` on "
                "it or delete it so a new one is made"
            )
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    token = data.decode("ascii", "replace").strip()
    if len(token) < 32:
        raise SecretFileError(f"{what} {path} is empty or too short; delete it so a new one is made")
    return token


def _new_file(path: Path) -> Path:
    """A new secret in a temp file beside `path` (0600, in a 0700 folder, synced)."""
    import secrets  # (with `hmac` below: loaded only where a secret is made or compared, not on the hook's path)

    from agentmd.engine.failpoints import failpoint

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        failpoint("secret-write")
        os.write(fd, (secrets.token_hex(TOKEN_BYTES) + "\n").encode("ascii"))
        os.fsync(fd)
    except OSError:  # a full disk: no empty temp file is left behind
        os.close(fd)
        _unlink(temp)
        raise
    os.close(fd)
    return temp


def ensure_secret(path: Path, what: str) -> str:
    """The secret in `path`, made when there is none yet."""
    found = read_secret(path, what)
    if found is not None:
        return found
    temp = _new_file(path)
    try:
        os.link(temp, path)  # never replaces a secret another process made meanwhile
    except FileExistsError:
        pass
    finally:
        _unlink(temp)
    found = read_secret(path, what)
    if found is None:
        raise SecretFileError(f"{what} {path} could not be made; check the state folder")
    return found


def replace_secret(path: Path, what: str) -> str:
    """A new secret in `path`, replacing the old one at once (readers see the old file or the new one)."""
    temp = _new_file(path)
    try:
        os.replace(temp, path)
    except OSError:
        _unlink(temp)
        raise
    found = read_secret(path, what)
    if found is None:
        raise SecretFileError(f"{what} {path} could not be made; check the state folder")
    return found


def _unlink(path: Path) -> None:
    try:  # noqa: SIM105 - contextlib is one more import on the prompt hook's path
        os.unlink(path)
    except OSError:
        pass


def matches(presented: object, secret: str | None) -> bool:
    """Whether `presented` (a header value, or None) is `secret`, compared in constant time."""
    import hmac

    if not isinstance(presented, str) or not presented or not secret:
        return False
    return hmac.compare_digest(presented.strip().encode("utf-8", "replace"), secret.encode("ascii"))
