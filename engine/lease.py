"""The vault lease: which daemon serves this vault, kept with the vault itself.

One daemon per vault, wherever its state folder is: two `agentmd serve` with different `XDG_STATE_HOME`
(another user, a container, a second machine whose synced folder holds the same vault and `.git`) would
otherwise both watch, index and commit the same files. The lease lives inside the vault's `.git` (never
indexed, never committed), in `.git/agentmd/`:

- `daemon.lock`, held with an exclusive `flock` for the daemon's whole life: on this machine the kernel says
  whether the holder is alive, and a daemon killed with `kill -9` frees it at once;
- `lease.json`, naming the holder: machine id, host name, boot id, pid, port, the state folder its token and
  logs live in, and when it started.

A daemon that starts takes the lock; when it cannot, another daemon on this machine runs, and the start is
refused naming it. With the lock taken, a `lease.json` left behind by this machine (a crash, an earlier
boot) is reclaimed, but one naming another machine is never taken over: a flock does not reach across a
file-sync tool or a network share, so the other machine may well be running; the start is refused and
`status` is red until that machine stops (its clean stop removes the file) or the person removes it.

Clients (the CLI, the hooks, the stdio MCP server) find the live daemon here first, whatever their own
XDG folders, and fall back to their state folder's own record (a vault that is not a git repository has
no lease). Standard library only: the prompt hook reads it on every prompt.
"""

from __future__ import annotations

import _socket  # for the host name: `socket` itself costs the prompt hook about 5 ms of imports
import fcntl
import os

from agentmd.engine import jsonwire

TYPE_CHECKING = False  # `typing` is one more import on the prompt hook's path; mypy reads the block below
if TYPE_CHECKING:
    from pathlib import Path

LEASE_FOLDER = "agentmd"
LOCK_FILE = "daemon.lock"
LEASE_FILE = "lease.json"


def lease_folder(vault: Path) -> Path | None:
    """`<vault>/.git/agentmd`, or None when the vault has no `.git` folder of its own."""
    from pathlib import Path

    folder = _folder(vault)
    return Path(folder) if folder is not None else None


def _folder(vault: str | os.PathLike[str]) -> str | None:
    """`lease_folder` as a string, without `pathlib` (the prompt hook reads the lease on every prompt)."""
    git = os.path.join(vault, ".git")
    return os.path.join(git, LEASE_FOLDER) if os.path.isdir(git) and not os.path.islink(git) else None


def _first_line(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.readline().strip() or None
    except OSError:
        return None


def this_machine() -> dict[str, object]:
    """How a lease names this machine: a stable id (systemd's machine id where there is one, else the host
    name), the host name people read, and the boot (a reboot frees every lease this machine held)."""
    host = _socket.gethostname()
    machine = _first_line("/etc/machine-id") or _first_line("/var/lib/dbus/machine-id") or host
    return {"machine": machine, "host": host, "boot": _first_line("/proc/sys/kernel/random/boot_id")}


def machine_tag(env: dict[str, str] | None = None) -> str:
    """Four letters and digits that tell this machine's new notes apart from another's (`capture_names` in the
    storage-rules contract): from the stable machine id, and `AGENTMD_HOST` when set (several clones on one
    machine that each act as a machine of their own). The same on every call and across restarts."""
    import base64  # here: the prompt hook reads leases on every prompt and never needs a tag
    import hashlib

    name = (os.environ if env is None else env).get("AGENTMD_HOST", "")
    seed = f"{this_machine()['machine']}\0{name}".encode()
    return base64.b32encode(hashlib.sha256(seed).digest()).decode("ascii")[:4].lower()


def same_machine(lease: dict[str, object], here: dict[str, object] | None = None) -> bool:
    here = here or this_machine()
    return lease.get("machine", lease.get("host")) == here["machine"]


def read_lease(vault: str | os.PathLike[str]) -> dict[str, object] | None:
    """The lease's record as written, or None when there is none (or it is unreadable: a half-synced file)."""
    folder = _folder(vault)
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, LEASE_FILE), encoding="utf-8") as fh:
            data = jsonwire.loads(fh.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def lock_held(path: str | os.PathLike[str]) -> bool:
    """Whether some process holds an exclusive flock on `path` (False when the file does not exist)."""
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def live_holder(vault: str | os.PathLike[str]) -> dict[str, object] | None:
    """The record of the daemon serving this vault from this machine, or None when none holds the lock."""
    folder = _folder(vault)
    if folder is None or not lock_held(os.path.join(folder, LOCK_FILE)):
        return None
    lease = read_lease(vault)
    return lease if lease is not None else {"pid": None, "port": None}


def foreign_holder(vault: Path) -> dict[str, object] | None:
    """The record of a daemon that another machine says it runs on this vault, or None."""
    lease = read_lease(vault)
    if lease is None or same_machine(lease):
        return None
    return lease


def describe(lease: dict[str, object]) -> str:
    """`host H, pid P, port N, since T` for a message."""
    parts = [f"host {lease.get('host', '?')}", f"pid {lease.get('pid', '?')}", f"port {lease.get('port', '?')}"]
    if lease.get("started"):
        parts.append(f"since {lease['started']}")
    return ", ".join(parts)


def foreign_message(vault: Path, lease: dict[str, object]) -> str:
    """What `status` and a refused start say of a lease another machine holds."""
    path = os.path.join(_folder(vault) or os.path.join(vault, ".git", LEASE_FOLDER), LEASE_FILE)
    return (
        f"another machine runs agentmd on this vault ({describe(lease)}); two daemons must not commit into one "
        f"repository: stop the one there (its stop removes the lease), or, if that machine no longer runs "
        f"agentmd on this folder, delete {path}"
    )


class Lease:
    """The lease as a daemon holds it: `acquire` takes it or says who has it, `update` rewrites the record
    (the port is known only once the listener is bound), `release` gives it back."""

    def __init__(self, vault: Path) -> None:
        from pathlib import Path

        self.vault = Path(vault)
        self.folder = lease_folder(self.vault)
        self._fd: int | None = None
        self._record: dict[str, object] | None = None

    def acquire(self, info: dict[str, object]) -> str | None:
        """Take the lease for a daemon described by `info` (pid, port, state folder). None when taken (or there
        is no `.git` to keep it in); otherwise the reason it cannot be taken, naming the holder."""
        if self.folder is None:
            return None
        self.folder.mkdir(exist_ok=True)
        fd = os.open(self.folder / LOCK_FILE, os.O_CREAT | os.O_RDWR | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            other = read_lease(self.vault) or {}
            return (
                f"agentmd serve is already running for this vault ({describe(other)}, state folder "
                f"{other.get('state_dir', '?')}); this one did not start, and that one keeps running"
            )
        here = this_machine()
        left = read_lease(self.vault)
        if left is not None and not same_machine(left, here):
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            return foreign_message(self.vault, left)
        self._fd = fd
        self.update(info)
        return None

    def update(self, info: dict[str, object]) -> None:
        if self._fd is None or self.folder is None:
            return
        self._record = {**this_machine(), **info}
        temp = self.folder / f".{LEASE_FILE}.{os.getpid()}"
        import json  # the daemon's side: jsonwire writes compact JSON only

        from agentmd.engine.failpoints import failpoint  # (the daemon's side only)

        try:
            temp.write_text(json.dumps(self._record, indent=1) + "\n", encoding="utf-8")
            failpoint("lease-write")
            os.replace(temp, self.folder / LEASE_FILE)
        except OSError:  # a full disk: no empty temp file stays behind, whoever retries
            try:  # noqa: SIM105 - contextlib is one more import on the prompt hook's path
                temp.unlink()
            except OSError:
                pass
            raise

    def problem(self) -> str | None:
        """While held: why the lease on disk is no longer this daemon's (another machine's record synced over
        it), else None."""
        if self._fd is None or self._record is None:
            return None
        found = read_lease(self.vault)
        if found is None or (found.get("pid") == self._record.get("pid") and same_machine(found)):
            return None
        if not same_machine(found):
            return foreign_message(self.vault, found)
        return f"the vault lease names another daemon on this machine ({describe(found)})"

    def release(self) -> None:
        if self._fd is None or self.folder is None:
            return
        found = read_lease(self.vault)
        if found is not None and found.get("pid") == (self._record or {}).get("pid") and same_machine(found):
            try:  # noqa: SIM105 - contextlib is one more import on the prompt hook's path
                (self.folder / LEASE_FILE).unlink()
            except OSError:
                pass
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
