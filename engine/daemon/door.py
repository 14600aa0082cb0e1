"""The daemon's door: what the MCP tools, the JSON routes and the page at /ui call (search, capture,
curation, sync, undo, the self-probe), each answering with the JSON it returns.

`Door` is a part of `Daemon` (engine/daemon/service.py), kept here so each module stays readable; it uses the
daemon's own fields, declared below for the type checker.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import math
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentmd.engine.curate.host import serve_plan
from agentmd.engine.curate.steps import Writer
from agentmd.engine.daemon.jobs_host import DaemonJobs
from agentmd.engine.daemon.operator import OPERATOR_FIELD, OPERATOR_HEADER, is_operator
from agentmd.engine.daemon.server import MAX_PROBE_BUDGET, MIN_PROBE_BUDGET, AccessToken
from agentmd.engine.daemon.state import DaemonState
from agentmd.engine.errors import AgentmdError, IndexDamaged, UsageError
from agentmd.engine.fsutil import write_json
from agentmd.engine.git.sync import DEFAULT_REMOTE, SyncError, SyncResult
from agentmd.engine.git.sync_run import sync_vault
from agentmd.engine.index.fulltext.schema import is_panic
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.request_fields import json_defaults, missing_fields
from agentmd.engine.search.query import search
from agentmd.engine.search.result import SearchResponse
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.synctools import is_sync_temp
from agentmd.engine.write.capture import CaptureRefused, CaptureRequest
from agentmd.engine.write.probe import ProbeRecord, ProbeResult, load_last, new_nonces, run_probe
from agentmd.engine.write.request import CaptureAnswer

if TYPE_CHECKING:
    from agentmd.engine.git.sync import SyncJson
    from agentmd.engine.git.undo_types import ResultJson

log = logging.getLogger("agentmd.daemon")


OPENING_WAIT = 10.0  # seconds a search asked while the daemon opens its index waits for it, before saying so


class Door(DaemonState):
    access: AccessToken
    jobs: DaemonJobs | None
    probe_budget: float
    _probe_aliases: set[str]
    _probe_lock: threading.Lock

    # -- sync ----------------------------------------------------------------------------------

    def sync(
        self,
        remote: str = DEFAULT_REMOTE,
        *,
        clock: Callable[[], dt.datetime] | None = None,
        accept_rewrite: bool = False,
    ) -> SyncResult:
        """One sync round with the vault's git remote, the committer held while it moves the work tree; the
        files it changed are reconciled at once (the watcher sees them too). `clock`: the jobs' clock, which
        dates the backoff after a round that could not reach the remote."""
        try:
            result = sync_vault(
                self.committer, self.settings.state_dir, remote=remote, clock=clock, accept_rewrite=accept_rewrite
            )
        except SyncError:
            self._refresh_git_status()  # status says the round failed, and since when, at once
            raise
        if result.changed and self.store is not None:
            # what git brought is history already: a deletion in it passes the mass-deletion breaker, which
            # keeps guarding deletions git has not seen
            contract = self.contracts.get().contract
            reconcile(
                self.settings.vault,
                self.store,
                only=set(result.changed),
                link_convention=contract.link_convention,
                sync_patterns=contract.sync_tool_patterns,
                allow_mass_delete=True,
            )
            self.dense.wake()
            # a pass the move's own file events started, before or beside the one above, may have refused git's
            # deletions; a full pass after both, the index now agreeing with the vault, goes through and clears it
            self.request_pass()
        self._refresh_git_status()
        return result

    def _sync_temp(self, rel: str) -> bool:
        """A temp file or placeholder by the contract's own sync-tool patterns: no event for the watcher."""
        patterns = self.contracts.get().contract.sync_tool_patterns
        return bool(patterns) and is_sync_temp(rel.rstrip("/"), patterns)

    def _has_remote(self) -> bool:
        """Whether the vault's repository names a sync remote (its config file, read without running git)."""
        try:
            config = (self.settings.vault / ".git" / "config").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        return f'[remote "{DEFAULT_REMOTE}"]' in config

    def _sync_json(self, data: dict[str, object]) -> SyncJson:
        remote = data.get("remote") or DEFAULT_REMOTE
        if not isinstance(remote, str):
            raise UsageError("`remote` must be the name of a git remote")
        accept = data.get("accept_rewrite", False)
        if not isinstance(accept, bool):
            raise UsageError("`accept_rewrite` must be true or false")
        try:
            return self.sync(remote, accept_rewrite=accept).to_dict()
        except SyncError as exc:
            raise AgentmdError(str(exc)) from None

    def _page_routes(self) -> list[Any]:
        """The page at /ui (engine/web): status, review, search and undo for a person, through this daemon."""
        from agentmd.engine.web.actions import PageHost
        from agentmd.engine.web.routes import Page

        host = PageHost(
            settings=self.settings,
            status=self.status,
            store=lambda: self.store,
            contract=lambda: self.contracts.get().contract,
            search=self.search,
            revert=lambda data: self._revert_as(data, operator=True),  # a session only `agentmd open` opens
            writer=self.curation_writer,
            identity=self.committer.identity_env,
            request_commit=self.request_commit,
            token=self.page_key,
            operator=lambda headers: is_operator(self.settings.state_dir, headers.get(OPERATOR_HEADER)),
        )
        return Page(host).routes()

    def page_key(self) -> str | None:
        """What page sessions' cookies and CSRF values are made with: the access token and the operator token
        together. A page session speaks for the owner (it may undo any change), so one that the access token
        alone could make (every MCP client's configuration holds it) would give an agent the owner's hand; and a
        rotation of either token ends every session. None when either cannot be read (every page refused)."""
        from agentmd.engine.daemon.operator import ensure_token
        from agentmd.engine.secret import SecretFileError

        access = self.access.current()
        try:
            owner = ensure_token(self.settings.state_dir)
        except (SecretFileError, OSError):
            return None
        return f"{access}\0{owner}" if access else None

    def _revert_json(self, data: dict[str, object]) -> ResultJson:
        """`POST /v1/revert`: as the operator with the operator token's header (the command line sends it),
        else as an agent."""
        return self._revert_as(data, operator=is_operator(self.settings.state_dir, data.pop(OPERATOR_FIELD, None)))

    def _revert_as(self, data: dict[str, object], *, operator: bool) -> ResultJson:
        """`agentmd undo`, `revert` and `restore` with --yes (engine/git/undo.py): written by this daemon's
        committer, the files it changed indexed at once. The vault's history is its owner's undo: the operator
        (the command line, a page session `agentmd open` opened) may take back any change; an agent (the
        access token alone) only one whose files the door lets an agent write, all or nothing."""
        from agentmd.engine.git.undo import PENDING_WAIT, apply_undo
        from agentmd.engine.git.undo_types import Selection, UndoRefused
        from agentmd.rules.door import decide

        vault = self.settings.vault
        contract = self.contracts.get().contract

        def may_change(paths: list[str]) -> None:
            refused = [
                f"{path} ({decision.reason})"
                for path in paths
                if not (decision := decide(vault, path, contract, creating=not (vault / path).exists())).allowed
            ]
            if refused:
                raise UndoRefused(
                    f"nothing was undone: it would change {len(refused)} file(s) agents may not write: "
                    f"{'; '.join(refused[:3])}{' …' if len(refused) > 3 else ''}. The owner takes these back "
                    f"from the command line (`agentmd undo`, `revert`, `restore`), which sends the operator token"
                )

        result = apply_undo(
            self.committer,
            Selection.from_dict(data),
            self.settings.state_dir,
            dt.datetime.now(dt.UTC),
            may_change=None if operator else may_change,
            pending_wait=PENDING_WAIT,
        )
        if result.commit and self.store is not None:
            contract = self.contracts.get().contract
            paths = {c.path for c in result.plan.changes}
            reconcile(
                self.settings.vault,
                self.store,
                only=paths,
                link_convention=contract.link_convention,
                allow_mass_delete=True,
                sync_patterns=contract.sync_tool_patterns,
            )
            self.dense.wake()
        self._refresh_git_status()
        return result.to_dict()

    # -- the agents' door (MCP tools and the JSON routes call these) ----------------------------

    def search(self, request: SearchRequest, *, count_usage: bool = True, recall: bool = False) -> SearchResponse:
        """One search for an agent (`memory_search`). With `count_usage` the notes it returns each count a
        recall (engine/usage.py), written by a background thread so the answer never waits on the catalog;
        the recall hook's own search and previews pass False. With `recall` the answer also carries the
        recall hook's candidates (`recall`: walls applied, facts, one hop of links, summaries), so the
        hook's process needs one HTTP call and none of the engine's imports (engine/search/recall.py)."""
        if self.store is None and not self.store_opened.wait(OPENING_WAIT):  # a search asked as the daemon starts
            raise AgentmdError("the index is still opening; try again in a moment")
        if self.store is None:
            raise AgentmdError("the index could not be opened; `agentmd status` says why")
        contract = self.contracts.get().contract
        store = self.store
        try:
            response = search(store.index, contract, request, store.catalog, self.dense.arm, self.dense.unavailable())
        except BaseException as exc:
            # Tantivy panics where a damaged file is read (a stored document, a snippet, a count); a panic is not
            # an Exception, so it is turned into the damage it shows here, where every read of the search is below
            failure = exc if isinstance(exc, IndexDamaged) else store.index.damaged(exc) if is_panic(exc) else None
            if failure is None:
                raise
            damage = store.damage()  # a search error on sound files (checksums pass) is no reason to rebuild
            if damage is None:
                raise failure from None
            self.request_rebuild(damage)
            raise IndexDamaged(f"{failure}; the daemon is rebuilding it now: retry in a moment") from None
        note = response.note
        if self._stale:
            # An index already built answers at once while the start-up pass checks the vault against it: a note
            # changed or deleted while the daemon was down shows as it was until the pass reaches it.
            said = "the index is still being built"
            if self.opened_with:
                said = "the start-up pass is still checking the vault"
            elif not response.results:  # nothing found in an index being built says little about the words
                said += ", so this may find more in a moment: ask again before rewording"
                note = (said + "; " + (note or "")).rstrip("; ")
                said = ""
            note = ((note or "") + "; " + said).strip("; ") if said else note
        response = replace(response, note=note, index_stale=self._stale)
        if recall:
            from agentmd.engine.search.recall import gather_in_daemon

            rows = [r.to_json() for r in response.results]
            gathered = gather_in_daemon(self.settings, self.store.index, contract, rows, request.limit)
            if gathered is not None:
                response = replace(response, recall=gathered)
        if count_usage and response.results:
            from agentmd.engine.index import usage

            usage.record_later(self.settings.catalog_path, (r.note for r in response.results), "recall")
        return response

    def capture(self, request: CaptureRequest) -> CaptureAnswer:
        with self._probe_lock:
            is_probe = bool(self._probe_aliases.intersection(request.aliases))
        try:
            if is_probe:
                result = self.capturer.capture(
                    request, origin="self-probe", extra_fields={"probe": "self-probe"}, count=False
                )
            else:
                result = self.capturer.capture(request)
        except sqlite3.DatabaseError as exc:  # before the note was written: the twin check read a damaged catalog
            store = self.store
            damage = store.damage() if store is not None else None
            if damage is None:
                raise
            self.request_rebuild(damage)
            raise AgentmdError(
                f"{damage}; the daemon is rebuilding it from the vault: nothing was written, retry in a moment"
            ) from exc
        return result.to_dict()

    def _search_json(self, data: dict[str, Any]) -> dict[str, object]:
        count_usage = bool(data.pop("count_usage", True))
        recall = bool(data.pop("recall", False))
        missing = missing_fields(SearchRequest, data)
        if missing:
            raise UsageError(f"a search needs {' and '.join(f'`{m}`' for m in missing)}: the words to look for")
        known = {f.name for f in dataclasses.fields(SearchRequest)} | {"count_usage", "recall"}
        unknown = sorted(k for k in data if k not in known and not k.startswith("_"))
        if unknown:
            raise UsageError(
                f"a search takes no field {', '.join(f'`{k}`' for k in unknown)}; its fields are "
                f"{', '.join(f'`{k}`' for k in sorted(known))}"
            )
        try:
            request = SearchRequest(**{**json_defaults(SearchRequest), **data})
        except TypeError as exc:
            raise UsageError(f"bad search request: {exc}") from None
        return self.search(request, count_usage=count_usage, recall=recall).to_json()

    def _injected_json(self, data: dict[str, object]) -> dict[str, object]:
        """`/v1/injected`: the notes a prompt hook showed the agent (`paths`), each counted one injection now,
        before the answer (engine/index/usage.py). The hook hands the count here so its own process loads
        neither the catalog nor sqlite3 on every prompt."""
        paths = data.get("paths")
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise UsageError("`paths` must be a list of the vault paths the hook showed")
        from agentmd.engine.index import usage

        return {"counted": usage.record(self.settings.catalog_path, paths, "injection")}

    def _recall_json(self, data: dict[str, object]) -> dict[str, object]:
        """`/v1/recall`: one prompt's whole recall for the prompt hook's light path (engine/recall/serve.py):
        the text to print, the hook's log line, the shown notes counted as injections."""
        from agentmd.engine.index import usage
        from agentmd.engine.recall.query import named_stop_words
        from agentmd.engine.recall.serve import answer_prompt

        def search_and_gather(fields: dict[str, Any]) -> Any:
            request = SearchRequest(**{**json_defaults(SearchRequest), **fields})
            return self.search(request, count_usage=False, recall=True).recall

        def count(paths: list[str]) -> int:  # a count that fails (logged) never withholds the notes
            return usage.record_quietly(self.settings.catalog_path, paths, "injection")

        def stop_words(prompt: str) -> list[str]:  # the stop words the vault makes words of the prompt
            store = self.store
            try:
                return [] if store is None else named_stop_words(store.index, prompt)
            except BaseException as exc:  # a damaged index: the search that follows meets it and says so
                if isinstance(exc, Exception) or is_panic(exc):
                    return []
                raise

        contract = self.contracts.get().contract
        return dict(answer_prompt(self.settings, contract, search_and_gather, count, data, stop_words))

    def _guard_json(self, data: dict[str, object]) -> dict[str, object]:
        """`/v1/guard`: the file guard hook's question, whether an agent's file tool call (`tool`, `tool_input`)
        on the note at `path` (vault-relative) may run (engine/write/file_tools.py), answered with the contract
        and prefilters this daemon has loaded. A hook that names another contract file than this daemon's is
        told so (400) and judges the call itself."""
        from agentmd.engine.write.file_tools import FILE_TOOLS, refusal_of

        missing = [name for name in ("tool", "tool_input", "path") if name not in data]
        if missing:
            raise UsageError(f"missing field(s): {', '.join(missing)}")
        tool, tool_input, rel = data["tool"], data["tool_input"], data["path"]
        if not (isinstance(tool, str) and isinstance(tool_input, dict) and isinstance(rel, str)):
            raise UsageError("tool and path must be strings and tool_input an object")
        if tool not in FILE_TOOLS:
            raise UsageError(f"tool {tool!r} is not a file tool the guard judges; use one of: {', '.join(FILE_TOOLS)}")
        ours = self.settings.contract_path
        if data.get("contract") != (None if ours is None else str(ours)):
            raise UsageError("this daemon reads another storage-rules contract; judge the call with your own")
        vault = Path(os.path.realpath(self.settings.vault))
        reason = refusal_of(tool, tool_input, vault, rel, self.contracts.get())
        return {"deny": reason is not None, "reason": reason or ""}

    def _capture_json(self, data: dict[str, object]) -> CaptureAnswer:
        actor = data.pop("_actor", "agent")
        token = data.pop(OPERATOR_FIELD, None)
        request = CaptureRequest.from_mapping(data)
        if actor == "operator" or token is not None:
            if not is_operator(self.settings.state_dir, token):
                raise CaptureRefused(
                    "operator:token",
                    f"operator writes need the vault's operator token in the {OPERATOR_HEADER} header (the CLI's "
                    "`capture --operator` sends it); nothing was written",
                )
            return self.capturer.capture(request, actor="operator").to_dict()
        return self.capture(request)

    def _curate_json(self, data: dict[str, object]) -> dict[str, object]:
        """A curation command's plan (engine/curate/host.py): applied here, so the daemon stays the one writer."""
        return serve_plan(self.settings, self.curation_writer(), data)

    def curation_writer(self) -> Writer:
        """The daemon's own committer and indexer, as curation steps (and the enrich job) apply through them."""

        def commit() -> tuple[list[str], str | None]:
            result = self.committer.commit_cycle()
            self.commit_cycles += 1
            self.commits += len(result.commits)
            return [c.sha for c in result.commits], result.error or result.skipped

        def index(paths: Any) -> None:
            with self._cond:
                self._hints |= set(paths)
                self._cond.notify_all()

        contract = lambda: self.contracts.get().contract  # noqa: E731
        return Writer(self.settings.vault, contract, self.committer.note_origin, commit, index, self.committer.paused)

    def _probe_json(self, data: dict[str, object]) -> ProbeRecord:
        unknown = sorted(set(data) - {"budget"})
        if unknown:
            raise UsageError(f"unknown field(s) for a probe: {', '.join(unknown)}")
        budget = data.get("budget", self.probe_budget)
        if (
            isinstance(budget, bool)
            or not isinstance(budget, int | float)
            or not math.isfinite(budget)
            or not MIN_PROBE_BUDGET <= budget <= MAX_PROBE_BUDGET
        ):
            raise UsageError(f"`budget` must be a number of seconds from {MIN_PROBE_BUDGET:g} to {MAX_PROBE_BUDGET:g}")
        return self.probe(float(budget)).to_dict()

    # -- self-probe ------------------------------------------------------------------------------

    def probe(self, budget: float | None = None, limit: float | None = None) -> ProbeResult:
        """Capture and find a synthetic note through the real MCP endpoint, within `limit` seconds at most
        (default: a few times the budget); record the result."""
        budget = self.probe_budget if budget is None else budget
        alias, body_nonce = new_nonces()
        with self._probe_lock:
            self._probe_aliases.add(alias)
        try:
            result = run_probe(self.port, alias, body_nonce, budget, self.access.current(), limit)
        finally:
            with self._probe_lock:
                self._probe_aliases.discard(alias)
        previous = load_last(self.settings.state_dir)
        if result.ok:
            old = (previous or {}).get("path") if (previous or {}).get("ok") else None
            if old and old != result.path:
                self._retire_probe_note(old)
            log.info("self-probe ok (round trip %.1f ms)", result.round_trip_ms or 0.0)
        else:
            log.error("self-probe failed: %s", result.error)
        write_json(self.settings.state_dir / "probe.json", result.to_dict())
        self.request_commit(0.0)
        self._refresh_status()
        return result

    def _retire_probe_note(self, rel: str) -> None:
        path = self.settings.vault / rel
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return
        if "probe: self-probe" not in text:  # never delete a note that is not a probe note
            log.warning("previous probe note %s no longer looks like a probe note; left in place", rel)
            return
        self.committer.note_origin(rel, "self-probe")
        path.unlink(missing_ok=True)
        self._on_change({rel})
