"""The one client of the daemon's loopback HTTP API: every command, hook and backend that asks a running
`agentmd serve` something goes through here.

Where the daemon listens: first the vault lease (engine/lease.py, inside the vault's `.git`), which names
the daemon serving the vault from this machine whatever the caller's XDG folders; then `<state dir>/daemon.json`,
the port of the process holding the instance lock `<state dir>/daemon.lock` (engine/daemon/instance.py writes
both). `locate` checks the locks first (a stale record left by a crashed daemon names nobody) and answers the
port and the daemon's own state folder; `recorded_port` reads daemon.json alone, for callers that verify the
answer themselves; `running_port` is `daemon_port` for callers that do the work themselves when no daemon
answers.

Who may ask: every route but `/health` needs the vault's access token, `<daemon's state dir>/access.token`
(mode 0600, made by the daemon, replaced by `agentmd token rotate`), sent as `Authorization: Bearer <token>`.
A `Located` daemon's `client()` reads it; a process that cannot read the owner's state folder gets no token
and the daemon answers 401.

How it asks: HTTP/1.1 on a plain socket to 127.0.0.1, one request per connection (`Connection: close`),
JSON in and out. Never through a proxy (nothing here reads proxy settings) and never to another host.
Every call has a timeout covering the whole exchange (connect, send, read). Failures are `DaemonError`s:
`DaemonUnreachable` (nothing answers), `DaemonLost` (the connection broke after the request went: it may have
been done), `DaemonTimeout` (no whole answer in time), `DaemonHTTPError` (the daemon answered with an error
status; its JSON `error` and `code` kept).

Only the standard library, and only its light modules: the prompt hook imports this on every prompt, and
`http.client`/`urllib` would cost it tens of milliseconds of imports.
"""

from __future__ import annotations

import _socket  # the C module under `socket`, whose enums cost the prompt hook about 5 ms of imports per prompt
import os
import time

from agentmd.engine import jsonwire, lease
from agentmd.engine.errors import AgentmdError
from agentmd.engine.secret import SecretFileError, read_secret

TYPE_CHECKING = False  # `typing` is one more import on the prompt hook's path; mypy reads the block below
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

HOST = "127.0.0.1"
DEFAULT_TIMEOUT = 30.0
MAX_ANSWER_BYTES = 64 * 2**20
# the largest request body the daemon takes (engine/daemon/server.py answers 413 above): room for a capture whose
# body is at its 512 KiB of UTF-8 even when a client escapes every character as \uXXXX
MAX_REQUEST_BYTES = 4 * 2**20
LOCK_FILE = "daemon.lock"
INFO_FILE = "daemon.json"
ACCESS_TOKEN_FILE = "access.token"
ACCESS_WHAT = "the access token"


class DaemonError(AgentmdError):
    """The daemon could not be asked, or its answer could not be read."""


class DaemonUnreachable(DaemonError):
    """Nothing answered on the port, or the connection broke before a whole answer came back."""


class DaemonTimeout(DaemonUnreachable):
    """The daemon did not give a whole answer within the timeout."""


class DaemonNotReached(DaemonUnreachable):
    """The connection was refused (or failed) before anything was sent: the daemon has done nothing of the request,
    so doing it another way (in this process) makes no twin."""


class DaemonLost(DaemonUnreachable):
    """The daemon took the request and the connection broke before a whole answer came back: what the request
    asked may have been done, in part or whole."""


class DaemonHTTPError(DaemonError):
    """The daemon answered with an error status (4xx, 5xx)."""

    def __init__(self, status: int, payload: Any) -> None:
        self.status = status
        self.payload: dict[str, object] = payload if isinstance(payload, dict) else {}
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The daemon's own `error` text, else the status."""
        return str(self.payload.get("error") or f"the daemon answered HTTP {self.status}")

    @property
    def code(self) -> str | None:
        """The daemon's machine-readable `code` (e.g. `usage`), if it gave one."""
        code = self.payload.get("code")
        return str(code) if code is not None else None


# -------------------------------------------------------------------------------------- discovery


def _valid_port(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536 else None


def recorded_port(state_dir: Path) -> int | None:
    """The port daemon.json names, without checking that its daemon still runs; None when there is none."""
    try:
        with open(os.path.join(state_dir, INFO_FILE), encoding="utf-8") as fh:
            info = jsonwire.loads(fh.read())
    except (OSError, ValueError):
        return None
    return _valid_port(info.get("port")) if isinstance(info, dict) else None


def instance_port(state_dir: str | os.PathLike[str]) -> int | None:
    """The port of the daemon holding this state dir's instance lock; None when no daemon holds it.

    Raises DaemonError when a daemon holds the lock but daemon.json names no usable port."""
    if not lease.lock_held(os.path.join(state_dir, LOCK_FILE)):
        return None
    try:
        with open(os.path.join(state_dir, INFO_FILE), encoding="utf-8") as fh:
            info = jsonwire.loads(fh.read())
    except (OSError, ValueError):
        raise DaemonError(f"the daemon holds the lock but its {INFO_FILE} is unreadable") from None
    port = _valid_port(info.get("port")) if isinstance(info, dict) else None
    if port is None:
        raise DaemonError(f"the daemon holds the lock but names no port ({info!r})") from None
    return port


def access_token_path(state_dir: Path) -> Path:
    from pathlib import Path

    return Path(state_dir) / ACCESS_TOKEN_FILE


def access_token(state_dir: str | os.PathLike[str]) -> str | None:
    """The access token in a daemon's state folder; None when there is none or it cannot be trusted (the
    daemon then answers 401, which says where the token lives)."""
    try:
        return read_secret(os.path.join(state_dir, ACCESS_TOKEN_FILE), ACCESS_WHAT)
    except (SecretFileError, OSError):
        return None


class Located:
    """A running daemon: its port, and the state folder its access token lives in. A plain class: a
    dataclass or a NamedTuple would load `dataclasses` or `typing` on the prompt hook's path."""

    __slots__ = ("port", "state_dir")

    def __init__(self, port: int, state_dir: Path) -> None:
        self.port, self.state_dir = port, state_dir

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Located) and (self.port, self.state_dir) == (other.port, other.state_dir)

    def __hash__(self) -> int:
        return hash((self.port, os.fspath(self.state_dir)))

    def __repr__(self) -> str:
        return f"Located(port={self.port!r}, state_dir={os.fspath(self.state_dir)!r})"

    def client(self, *, timeout: float = DEFAULT_TIMEOUT) -> DaemonClient:
        return DaemonClient(self.port, timeout=timeout, token=access_token(self.state_dir))

    def ask(
        self,
        route: str,
        payload: Any,
        *,
        what: str,
        again: str,
        timeout: float = 600,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """POST `payload` to `route` for a command a person ran; the daemon's refusal (`what: <its error>`)
        or a daemon that cannot be reached becomes an `AgentmdError` saying so. `again` says what running the
        command again does, for a daemon that stopped before it answered."""
        try:
            return self.client(timeout=timeout).post(route, payload, headers=headers)
        except DaemonHTTPError as exc:
            raise AgentmdError(f"{what}: {exc.message}") from None
        except DaemonLost as exc:
            raise AgentmdError(
                f"{what}: agentmd serve on port {self.port} stopped before it answered ({exc}), so what was asked "
                "may be done in part or in whole; `agentmd log --since 1h` and `git status` in the vault show what "
                f"was written. {again}"
            ) from None
        except DaemonError as exc:
            raise AgentmdError(
                f"could not reach agentmd serve on port {self.port} ({exc}); is it still running?"
            ) from None


def locate(state_dir: Path, vault: Path | None = None) -> Located | None:
    """The daemon serving `vault` from this machine (through the vault lease), else the one holding this
    state dir's instance lock; None when neither runs.

    Raises DaemonError when a daemon holds a lock but names no usable port (still starting, or its record
    damaged)."""
    from pathlib import Path

    if vault is not None:
        found = lease_holder(vault)
        if found is not None:
            return Located(found[0], Path(found[1] or state_dir))
    port = instance_port(Path(state_dir))
    return Located(port, Path(state_dir)) if port is not None else None


def lease_holder(vault: str | os.PathLike[str]) -> tuple[int, str] | None:
    """(port, state folder) of the daemon the vault lease names as serving `vault` from this machine, None
    when none holds it; the state folder is "" when the lease names none. Raises DaemonError when the holder
    names no usable port. Strings, not paths: the prompt hook's light path calls this without `pathlib`."""
    holder = lease.live_holder(vault)
    if holder is None:
        return None
    port = _valid_port(holder.get("port"))
    if port is None:
        raise DaemonError(f"the daemon holding the vault lease names no port ({holder!r})")
    own = holder.get("state_dir")
    return port, own if isinstance(own, str) else ""


def daemon_port(state_dir: Path, vault: Path | None = None) -> int | None:
    """The port of the running daemon (`locate`); None when none runs. Raises DaemonError as `locate` does."""
    found = locate(state_dir, vault)
    return found.port if found is not None else None


def running_port(state_dir: Path, vault: Path | None = None) -> int | None:
    """`daemon_port`, None also when the daemon holding a lock names no usable port (still starting, or its
    record damaged)."""
    try:
        return daemon_port(state_dir, vault)
    except DaemonError:
        return None


def running(state_dir: Path, vault: Path | None = None) -> Located | None:
    """`locate`, None also when the daemon holding a lock names no usable port."""
    try:
        return locate(state_dir, vault)
    except DaemonError:
        return None


# ----------------------------------------------------------------------------------------- calls


def port_taken(
    port: int, vault: Path, where: str = "where `agentmd serve` listens by default", *, unclaimed: bool = False
) -> str | None:
    """With no daemon serving `vault`: status's line for what else listens on `port`, where `agentmd serve`
    would, or did last (an MCP client set up over HTTP sends that process the access token with every call,
    and takes its answers for the vault's), or None when nothing does or it is this vault's own daemon after
    all. `where` says why the port matters. `unclaimed`: no daemon holds the vault's lease or lock, so one that
    names this vault is not its daemon either."""
    import socket

    try:
        socket.create_connection((HOST, port), timeout=0.5).close()
    except OSError:
        return None  # nothing listens there
    try:
        health = DaemonClient(port, timeout=1.0).get("/health")
    except DaemonError:
        health = None
    served = health.get("vault") if isinstance(health, dict) else None
    if served == str(vault) and not unclaimed:
        return None
    who = f"agentmd serve for {served}" if served and served != str(vault) else "a process"
    if served == str(vault):
        who = "a process that says it serves this vault but holds none of its locks"
    return (
        f"port-taken: {who} listens on 127.0.0.1:{port}, {where}, and an MCP client "
        "set up over HTTP would send it this vault's access token: stop it, or serve this vault on another port "
        "(`agentmd serve --port N`) and run `agentmd mcp-config` again"
    )


class DaemonClient:
    """Calls to the daemon on one loopback port."""

    def __init__(self, port: int, *, timeout: float = DEFAULT_TIMEOUT, token: str | None = None) -> None:
        if _valid_port(port) is None:
            raise DaemonError(f"not a port: {port!r}")
        self.port = port
        self.timeout = timeout
        self.token = token  # the vault's access token, sent with every request

    def get(self, route: str, *, timeout: float | None = None) -> Any:
        """GET a route; its JSON answer. Raises DaemonHTTPError on an error status."""
        return self._json(*self.request("GET", route, timeout=timeout))

    def post(
        self, route: str, payload: Any, *, timeout: float | None = None, headers: dict[str, str] | None = None
    ) -> Any:
        """POST a JSON body to a route; its JSON answer. Raises DaemonHTTPError on an error status."""
        return self._json(*self.request("POST", route, payload, timeout=timeout, headers=headers))

    def _json(self, status: int, body: bytes) -> Any:
        try:
            data = jsonwire.loads(body) if body.strip() else None
        except ValueError:
            data = None
        if status >= 400:
            raise DaemonHTTPError(status, data)
        if data is None:
            raise DaemonError(f"the daemon on port {self.port} answered HTTP {status} without JSON")
        return data

    def request(
        self,
        method: str,
        route: str,
        payload: Any = None,
        *,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """One HTTP exchange: (status, body). The timeout covers connecting, sending and reading."""
        timeout = self.timeout if timeout is None else timeout
        if timeout <= 0:
            raise DaemonTimeout(f"no time left to ask the daemon on port {self.port}")
        body = b"" if payload is None else jsonwire.dumps(payload).encode("utf-8")
        if len(body) > MAX_REQUEST_BYTES:  # the daemon would answer 413 and close before reading it all
            raise DaemonHTTPError(
                413,
                {
                    "error": f"the request is {len(body):,} bytes, over the {MAX_REQUEST_BYTES:,} bytes "
                    f"({MAX_REQUEST_BYTES >> 20} MiB) the daemon takes in one request: send less (split a long note "
                    "into smaller ones)",
                    "code": "too-large",
                },
            )
        head = f"{method} {route} HTTP/1.1\r\nHost: {HOST}:{self.port}\r\nConnection: close\r\n"
        if self.token:
            head += f"Authorization: Bearer {self.token}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        if payload is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        raw = self._exchange(head.encode("ascii") + b"\r\n" + body, timeout)
        return _parse_answer(raw, self.port)

    def _exchange(self, data: bytes, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        late = f"the daemon on port {self.port} did not answer within {timeout:.2f}s"
        chunks: list[bytes] = []
        size = 0
        sent = False
        try:
            # a plain connect to the loopback address: create_connection would look the address up first, which
            # loads the IDNA codec on every call
            sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
            try:
                sock.settimeout(timeout)
                sock.connect((HOST, self.port))
                sent = True
                try:  # noqa: SIM105 - contextlib is one more import on the prompt hook's path
                    sock.sendall(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the daemon answered (a refusal) and closed before reading it all: read that answer
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise DaemonTimeout(late)
                    sock.settimeout(left)
                    got = sock.recv(65536)
                    if not got:
                        break
                    chunks.append(got)
                    size += len(got)
                    if size > MAX_ANSWER_BYTES:
                        raise DaemonError(f"the daemon's answer is larger than {MAX_ANSWER_BYTES} bytes")
            finally:
                sock.close()
        except TimeoutError:
            raise DaemonTimeout(late) from None
        except OSError as exc:
            if sent:
                raise DaemonLost(f"the connection to the daemon on port {self.port} broke: {exc}") from None
            raise DaemonNotReached(f"could not reach the daemon on port {self.port}: {exc}") from None
        return b"".join(chunks)


def _parse_answer(raw: bytes, port: int) -> tuple[int, bytes]:
    head_end = raw.find(b"\r\n\r\n")
    if head_end < 0:
        raise DaemonLost(f"the answer of the daemon on port {port} was cut short")
    lines = raw[:head_end].decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        raise DaemonError(f"the answer on port {port} is not HTTP ({lines[0][:40]!r})") from None
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    rest = raw[head_end + 4 :]
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return status, _dechunk(rest, port)
    if "content-length" in headers:
        try:
            length = int(headers["content-length"])
        except ValueError:
            raise DaemonError(f"the daemon on port {port} sent a bad Content-Length") from None
        if len(rest) < length:
            raise DaemonLost(f"the answer of the daemon on port {port} was cut short")
        rest = rest[:length]
    return status, rest


def _dechunk(data: bytes, port: int) -> bytes:
    """The body of a `Transfer-Encoding: chunked` answer."""
    out: list[bytes] = []
    pos = 0
    while True:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            raise DaemonLost(f"the chunked answer of the daemon on port {port} was cut short")
        try:
            size = int(data[pos:eol].split(b";")[0], 16)
        except ValueError:
            raise DaemonError(f"the daemon on port {port} sent a bad chunk size") from None
        if size == 0:
            return b"".join(out)
        if eol + 2 + size > len(data):
            raise DaemonLost(f"the chunked answer of the daemon on port {port} was cut short")
        out.append(data[eol + 2 : eol + 2 + size])
        pos = eol + 2 + size + 2
