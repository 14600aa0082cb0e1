"""Where a CLI command or the stdio MCP server sends searches and captures.

When `agentmd serve` runs for the vault, it owns the index writer and the git committer, so writes go to
it over loopback HTTP (`RemoteBackend`). Otherwise the command does the work itself (`LocalBackend`):
it opens the index, captures, and commits under the same lock protocol the daemon uses. Its hybrid
searches use the vectors on disk when there are any and the model loads (once per backend), else they
answer lexically and say why. A long-lived caller (the stdio MCP server) uses `FollowingBackend`, which
asks at every call whether a daemon runs, so a daemon started or stopped meanwhile is followed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from agentmd.engine.client import DaemonError, DaemonHTTPError, DaemonNotReached, DaemonUnreachable, Located, running
from agentmd.engine.errors import AgentmdError, UsageError

if TYPE_CHECKING:
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.engine.settings import Settings
    from agentmd.engine.write.capture import CaptureRequest
    from agentmd.engine.write.request import CaptureAnswer


def request_payload(request: SearchRequest | CaptureRequest | Mapping[str, Any]) -> dict[str, object]:
    """A request as the JSON object the daemon's `/v1` routes take (tuples become lists): a request dataclass,
    or already the mapping of its fields (the daemon fills in the ones left out with their defaults)."""
    if isinstance(request, Mapping):
        items = list(request.items())
    else:
        items = [(f.name, getattr(request, f.name)) for f in dataclasses.fields(request)]
    return {name: list(v) if isinstance(v, tuple) else v for name, v in items}


class RemoteBackend:
    """Sends the work to the running daemon. Loads only the light client (and the operator token's reader), so
    a command the daemon answers starts as quickly as the prompt hook."""

    def __init__(self, daemon: Located, actor: str = "agent", operator_token: str | None = None) -> None:
        self.port = daemon.port
        self.actor = actor
        self._client = daemon.client()
        self._headers: dict[str, str] = {}
        if operator_token:
            from agentmd.engine.daemon.operator import OPERATOR_HEADER

            self._headers[OPERATOR_HEADER] = operator_token

    def _post(self, route: str, payload: dict[str, object], timeout: float = 30.0) -> dict[str, object]:
        try:
            return dict(self._client.post(f"/v1/{route}", payload, timeout=timeout, headers=self._headers))
        except DaemonHTTPError as exc:
            if exc.code == "usage":
                raise UsageError(exc.message) from None
            if exc.status == 413:  # too large to send: said as a local capture of that size says it
                if route == "capture":
                    from agentmd.engine.write.capture import CaptureRefused

                    raise CaptureRefused("body-too-large", f"{exc.message}; nothing was written") from None
                raise UsageError(exc.message) from None
            if exc.status == 422:
                from agentmd.engine.write.capture import CaptureRefused

                raise CaptureRefused(exc.code or "refused", exc.message) from None
            raise AgentmdError(exc.message) from None
        except DaemonNotReached:
            raise  # nothing was sent: the caller may do the work another way (`agentmd capture` does it here)
        except DaemonUnreachable as exc:  # sent, then no whole answer: the daemon may have done it
            done = (
                "the note may have been written: the same capture again comes back as that note, not a twin"
                if route == "capture"
                else "what was asked may be done"
            )
            raise AgentmdError(
                f"agentmd serve on port {self.port} gave no answer ({exc}); {done}; is it still running?"
            ) from None
        except (DaemonError, TypeError, ValueError) as exc:
            raise AgentmdError(
                f"could not reach agentmd serve on port {self.port} ({exc}); is it still running?"
            ) from None

    def search(self, request: SearchRequest | Mapping[str, Any], *, count_usage: bool = True) -> dict[str, object]:
        payload = request_payload(request)
        if not count_usage:
            payload["count_usage"] = False
        return self._post("search", payload)

    def capture(self, request: CaptureRequest | Mapping[str, Any]) -> CaptureAnswer:
        payload = request_payload(request)
        payload["_actor"] = self.actor
        return cast("CaptureAnswer", self._post("capture", payload))

    def probe(self, budget: float) -> dict[str, object]:
        return self._post("probe", {"budget": budget}, timeout=budget + 30)


class LocalBackend:
    """Does the work in this process: no daemon is running for the vault."""

    def __init__(self, settings: Settings, actor: str = "agent") -> None:
        from agentmd.engine.git.committer import committer_for
        from agentmd.engine.index.store import Store
        from agentmd.engine.write.capture import Capturer
        from agentmd.rules import ContractCache

        self.settings = settings
        self.actor = actor
        self.contracts = ContractCache(settings.vault, settings.contract_path)
        self.store = Store(settings.cache_dir)
        # the daemon's origin journal and intent record: captures it had not committed keep their origins
        self.committer = committer_for(settings, self.contracts)
        self.committer.prepare()
        self.capturer = Capturer(
            settings.vault,
            settings.state_dir,
            self.contracts,
            self.store,
            before_write=self.committer.note_origin,
            withdraw=lambda path: self.committer.withdraw_origin(path),
            cap_override=settings.daily_write_cap,
        )
        self.commit_warning: str | None = None
        self._arm: Any = None
        self._arm_reason: str | None = None
        self._indexed = False

    def search(self, request: SearchRequest) -> dict[str, object]:
        from agentmd.engine.index.reconcile import reconcile
        from agentmd.engine.search.query import search

        if request.mode == "hybrid" and self._arm is None:
            from agentmd.engine.search.arm import arm_from_disk

            self._arm, self._arm_reason = arm_from_disk(self.settings)
        contract = self.contracts.get().contract
        if not self._indexed:
            # a vault never indexed (no daemon has run for it yet) is indexed once here, as `agentmd search` does
            if self.store.catalog.count() == 0:
                reconcile(
                    self.settings.vault,
                    self.store,
                    link_convention=contract.link_convention,
                    sync_patterns=contract.sync_tool_patterns,
                )
            self._indexed = True
        return search(self.store.index, contract, request, self.store.catalog, self._arm, self._arm_reason).to_json()

    def capture(self, request: CaptureRequest) -> CaptureAnswer:
        result = self.capturer.capture(request, actor=self.actor).to_dict()
        cycle = self.committer.commit_cycle()
        problem = cycle.error or cycle.skipped
        if problem:
            result["warnings"].append(
                f"not committed yet ({problem}); the next commit cycle of `agentmd serve` will commit it"
            )
        return result

    def close(self) -> None:
        self.store.close()


def backend_for(settings: Settings, actor: str = "agent") -> RemoteBackend | LocalBackend:
    """The daemon's backend when it runs, else this process's. The operator's backend reads the vault's operator
    token first (it fails when this process cannot read the owner's state folder)."""
    token = None
    if actor == "operator":
        from agentmd.engine.daemon.operator import ensure_token

        token = ensure_token(settings.state_dir)
    daemon = running(settings.state_dir, settings.vault)
    if daemon is not None:
        return RemoteBackend(daemon, actor, token)
    return LocalBackend(settings, actor)


class FollowingBackend:
    """For a long-lived caller: each call goes to the daemon when one runs for the vault, else is done here.

    The local backend is opened at the first call that needs it and closed as soon as a daemon is seen, so a
    daemon started while this runs takes over the index and the commits."""

    def __init__(self, settings: Settings, actor: str = "agent") -> None:
        import threading

        self.settings = settings
        self.actor = actor
        self._local: LocalBackend | None = None
        self._lock = threading.Lock()

    def current(self) -> RemoteBackend | LocalBackend:
        daemon = running(self.settings.state_dir, self.settings.vault)
        with self._lock:
            if daemon is not None:
                if self._local is not None:
                    self._local.close()
                    self._local = None
                return RemoteBackend(daemon, self.actor)
            if self._local is None:
                self._local = LocalBackend(self.settings, self.actor)
            return self._local

    def search(self, request: SearchRequest) -> dict[str, object]:
        try:
            return self.current().search(request)
        except DaemonNotReached:  # it stopped since it was seen, before the request was sent: answered here
            return self._here().search(request)

    def capture(self, request: CaptureRequest) -> CaptureAnswer:
        try:
            return self.current().capture(request)
        except DaemonNotReached:  # nothing was sent, so writing it here makes no twin
            return self._here().capture(request)

    def _here(self) -> LocalBackend:
        with self._lock:
            if self._local is None:
                self._local = LocalBackend(self.settings, self.actor)
            return self._local

    def close(self) -> None:
        with self._lock:
            if self._local is not None:
                self._local.close()
                self._local = None
