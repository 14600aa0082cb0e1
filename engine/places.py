"""Where agentmd keeps a vault's state on this machine, worked out with `os.path` alone.

The prompt hook's light path (hooks/recall/light.py) finds a daemon serving a vault without git through the
state folder's instance lock, so it needs the folder's name on every prompt, and `pathlib`, `re` and
`hashlib` would cost it milliseconds of imports. engine/settings.py builds its paths from these functions,
so there is one rule for the names.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # `typing` is one more import on the prompt hook's path; mypy reads the block below
if TYPE_CHECKING:
    from collections.abc import Mapping

# The XDG base folders agentmd uses and where each falls back to under the home folder.
XDG_DEFAULTS = {"XDG_CONFIG_HOME": ".config", "XDG_CACHE_HOME": ".cache", "XDG_STATE_HOME": ".local/state"}
SLUG_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def xdg_base(name: str, env: Mapping[str, str] | None = None) -> str:
    """The XDG base folder `name` (a key of `XDG_DEFAULTS`): the variable when it holds an absolute path (the
    specification ignores a relative one), else its default under `$HOME`."""
    env = os.environ if env is None else env
    value = env.get(name)
    if value and os.path.isabs(value):
        return value
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), XDG_DEFAULTS[name])


def state_root(env: Mapping[str, str] | None = None) -> str:
    """agentmd's state folder before a vault is known, `$XDG_STATE_HOME/agentmd`."""
    return os.path.join(xdg_base("XDG_STATE_HOME", env), "agentmd")


def vault_id(vault: str | os.PathLike[str]) -> str:
    """A stable folder name for a vault: its folder name (letters, digits, `._-`; other runs become one `-`)
    plus a hash of its real path."""
    real = os.path.realpath(vault)
    slug = _slug(os.path.basename(real)) or "vault"
    return f"{slug[:40]}-{_sha256_hex(real.encode('utf-8', 'surrogateescape'))[:12]}"


def state_dir(vault: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> str:
    """The vault's own state folder, `<state root>/<vault id>`."""
    return os.path.join(state_root(env), vault_id(vault))


def _slug(name: str) -> str:
    out: list[str] = []
    for ch in name:
        if ch in SLUG_CHARS:
            out.append(ch)
        elif not out or out[-1] != "\0":
            out.append("\0")
    return "".join(out).replace("\0", "-").strip("-")


def _sha256_hex(data: bytes) -> str:
    """SHA-256 of `data` in hex, from the interpreter's built-in SHA-2 module when it has one: `hashlib` loads
    OpenSSL first, about 3 ms of the prompt hook's start on every prompt."""
    import importlib

    for name in ("_sha2", "_sha256"):  # Python 3.12 and later; 3.11
        try:
            return str(importlib.import_module(name).sha256(data).hexdigest())
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256(data).hexdigest()
