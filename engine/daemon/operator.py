"""Operator authority over HTTP: a per-vault secret in the state folder, readable by its owner only.

The door lets only the operator write `alignment` folders. Over loopback HTTP any local process can say
whatever it likes in a request body, so the daemon takes nobody's word for it: an operator write must carry
the token from `<state>/operator.token` in the `X-Agentmd-Operator` header. The file is made on first use
(by the daemon or by `agentmd capture --operator`) as engine/secret.py makes every secret file. The
agents' published tools (the MCP `memory_search` and `memory_capture`) never send it: they have no operator
form at all.

What this stops: a request body claiming `"_actor": "operator"`, a web page or a sandboxed tool that can
reach the port but not the owner's files. What it cannot stop: a process running as the owner with a shell
can read the token file as it can read and edit the vault itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from agentmd.engine.secret import SecretFileError, ensure_secret, matches

TOKEN_FILE: Final = "operator.token"
OPERATOR_HEADER: Final = "X-Agentmd-Operator"
OPERATOR_FIELD: Final = "_operator_token"  # where the listener hands the header to a handler; never read from a body
WHAT: Final = "the operator token"

OperatorTokenError = SecretFileError  # the operator token file is unsafe or unreadable


def token_path(state_dir: Path) -> Path:
    return Path(state_dir) / TOKEN_FILE


def ensure_token(state_dir: Path) -> str:
    """The vault's operator token, made (0600, in a 0700 state folder) when there is none yet."""
    return ensure_secret(token_path(state_dir), WHAT)


def is_operator(state_dir: Path, presented: object) -> bool:
    """Whether `presented` (a header value, or None) is this vault's operator token."""
    try:
        token = ensure_token(state_dir)
    except (SecretFileError, OSError):
        return False
    return matches(presented, token)
