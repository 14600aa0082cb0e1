"""One recall, short of printing: query, project, search (through the daemon or in this process), the
gathered candidates, and the rendered block. `recall` is what both the hook and `agentmd recall` run."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from agentmd.engine import recall_pause
from agentmd.engine.client import DaemonError, DaemonHTTPError, DaemonTimeout, Located, locate
from agentmd.engine.hooklog import RECALL_TIME_BUDGET, HookError, HookGaveUp
from agentmd.engine.recall.query import MAX_QUERY_WORDS, PROJECTS_SPACE, bind_project, load_walls, sanitize_query
from agentmd.engine.recall.render import MAX_ENTRIES, MAX_LINKED, TOKEN_BUDGET, Entry, Rendered, render
from agentmd.engine.search.recall import Gathered, Walls

TIME_BUDGET = RECALL_TIME_BUDGET  # seconds, process start to exit (engine/hooklog.py)
MAX_SEARCH_LIMIT = 50
_OLD_DAEMON = r"count_usage|recall"  # in an older daemon's refusal; compiled only there


class Options:
    """The hook's budgets (its flags). Plain classes here, not dataclasses: `dataclasses` costs the prompt hook
    about 10 ms of imports on every prompt."""

    __slots__ = ("max_entries", "max_linked", "max_query_words", "time_budget", "token_budget")

    def __init__(
        self,
        token_budget: int = TOKEN_BUDGET,
        max_entries: int = MAX_ENTRIES,
        max_linked: int = MAX_LINKED,
        time_budget: float = TIME_BUDGET,
        max_query_words: int = MAX_QUERY_WORDS,
    ) -> None:
        self.token_budget, self.max_entries, self.max_linked = token_budget, max_entries, max_linked
        self.time_budget, self.max_query_words = time_budget, max_query_words

    def __repr__(self) -> str:
        return "Options(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__) + ")"


class Recall:
    """One recall's outcome, short of printing."""

    __slots__ = ("daemon", "notes", "project", "project_source", "query", "rendered", "via")

    def __init__(
        self,
        query: str,
        project: str | None,
        project_source: str,
        via: str,  # daemon | in-process | none
        rendered: Rendered,
        notes: list[str] | None = None,  # why some hits were left out
        daemon: Located | None = None,  # the daemon that answered the search, which also counts the injections
    ) -> None:
        self.query, self.project, self.project_source, self.via = query, project, project_source, via
        self.rendered, self.notes, self.daemon = rendered, [] if notes is None else notes, daemon

    def to_dict(self) -> dict[str, object]:
        return {
            "query": self.query,
            "project": self.project,
            "project_source": self.project_source,
            "via": self.via,
            "tokens": self.rendered.tokens,
            "entries": [e.to_dict() for e in self.rendered.considered],
            "direct": len(self.rendered.direct),
            "linked": len(self.rendered.linked),
            "text": self.rendered.text,
            "notes": self.notes,
        }


def search_daemon(daemon: Located, request: dict[str, object], timeout: float) -> dict[str, object]:
    """The daemon's search answer, with the recall candidates it gathered (`recall`), not counted as
    recalls. A daemon from an older install that knows neither option is asked again for a plain search."""
    if timeout <= 0:
        raise HookGaveUp("the time budget ran out before the search")
    deadline = time.monotonic() + timeout
    client = daemon.client()
    try:
        try:
            data = client.post("/v1/search", request | {"count_usage": False, "recall": True}, timeout=timeout)
        except DaemonHTTPError as exc:
            if exc.status != 400 or not re.search(_OLD_DAEMON, exc.message):
                raise
            data = client.post("/v1/search", request, timeout=deadline - time.monotonic())
    except DaemonHTTPError as exc:
        raise HookError(f"the daemon answered HTTP {exc.status}: {exc.payload.get('error') or exc.payload!r}") from None
    except DaemonTimeout as exc:
        raise HookGaveUp(str(exc)) from None
    except DaemonError as exc:
        raise HookError(str(exc)) from None
    if not isinstance(data, dict):
        raise HookError(f"the daemon answered with {type(data).__name__}, not an object")
    return data


def recall(
    settings: Any,
    prompt: str,
    *,
    cwd: str | None = None,
    project: str | None = None,
    options: Options | None = None,
    deadline: float | None = None,
    now: Callable[[], float] = time.monotonic,
) -> Recall:
    """Everything the hook does short of printing: query, project, search, walls, links, budget.

    With a daemon up this is one HTTP call: the daemon searches and gathers the candidates (walls, facts,
    links, summaries) itself (engine/search/recall.py), so this process imports neither tantivy, the
    contract parser nor the catalog. A daemon too old to gather is asked for a plain search and the
    candidates are gathered here; without a daemon everything runs here. `deadline` is on the `now` clock."""
    options = options or Options()
    deadline = deadline if deadline is not None else now() + 3600
    query = sanitize_query(prompt, options.max_query_words)
    try:
        daemon = locate(settings.state_dir, settings.vault)
    except DaemonError as exc:
        raise HookError(str(exc)) from None
    walls = load_walls(settings) if daemon is not None else None
    if project is not None:
        project_source = "given"
    else:
        folders = walls.projects_folder if walls is not None else PROJECTS_SPACE
        project, project_source = bind_project(cwd, settings.vault, folders)
    if not query:
        return Recall(query, project, project_source, "none", render([], token_budget=options.token_budget))
    limit = min(max(options.max_entries, 1), MAX_SEARCH_LIMIT)
    request = {"query": query, "limit": limit, "mode": "hybrid", "project": project}
    gathered: Gathered | None = None
    if daemon is not None:
        response = search_daemon(daemon, request, deadline - now())
        sent = response.get("recall")
        gathered = cast(Gathered, sent) if isinstance(sent, dict) else None  # the daemon's own `gather`
        via = "daemon" if gathered is not None else "daemon (candidates gathered here: restart agentmd serve)"
        if gathered is None:
            from agentmd.engine.search.recall import gather_beside_daemon

            assert walls is not None
            if now() > deadline:
                raise HookGaveUp("the time budget ran out during the search")
            results = response.get("results")
            results = results if isinstance(results, list) else []
            gathered = gather_beside_daemon(settings, walls, results, options.max_entries, deadline, now)
    else:
        gathered, walls, query = _search_here(settings, request, options.max_entries, deadline, now, prompt, options)
        via = "in-process"
        if project_source != "given" and walls.projects_folder != PROJECTS_SPACE:
            project, project_source = bind_project(cwd, settings.vault, walls.projects_folder)
    if now() > deadline:
        raise HookGaveUp("the time budget ran out during the search")
    return rendered_recall(query, project, project_source, via, gathered, options, daemon)


def rendered_recall(
    query: str,
    project: str | None,
    project_source: str,
    via: str,
    gathered: Gathered,
    options: Options,
    daemon: Located | None = None,
) -> Recall:
    """The gathered candidates rendered within the budgets: the last step of every recall, in the hook's
    process or in the daemon's (`engine/recall/serve.py`)."""
    direct = [Entry.from_candidate(c, project) for c in gathered.get("direct", [])]
    linked = [Entry.from_candidate(c, project) for c in gathered.get("linked", [])]
    left_out = list(gathered.get("left_out", []))
    rendered = render(
        direct,
        linked,
        token_budget=options.token_budget,
        max_entries=options.max_entries,
        max_linked=options.max_linked,
    )
    return Recall(query, project, project_source, via, rendered, left_out, daemon)


def log_detail(result: Recall, counted: int) -> str:
    """What one recall's `ok` line in hook.log says after its outcome (engine/hooklog.py)."""
    return (
        f"via={result.via} project={result.project or '-'} query={result.query!r} direct={len(result.rendered.direct)} "
        f"linked={len(result.rendered.linked)} tokens={result.rendered.tokens} counted={counted}"
        + (f" left-out: {'; '.join(result.notes)}" if result.notes else "")
    )


def paused(
    settings: Any, cwd: str | None, env: Mapping[str, str] | None = None, walls: Walls | None = None
) -> recall_pause.Pause | None:
    """The pause that holds for this session (engine/recall_pause.py), if any; `env` is the session's
    environment (default this process's). The session's project is bound only when nothing but project pauses
    hold, from `walls` (default the cached walls of the contract)."""
    pauses = recall_pause.in_effect(settings.state_dir, env=env)
    if not pauses:
        return None
    project = None
    if recall_pause.project_scoped(pauses):
        if walls is not None:
            folders = walls.projects_folder
        else:
            try:
                folders = load_walls(settings).projects_folder
            except Exception:  # a contract that cannot be read: the default projects folder
                folders = PROJECTS_SPACE
        project, _how = bind_project(cwd, settings.vault, folders)
    return recall_pause.applying(pauses, project)


def _search_here(
    settings: Any,
    request: dict[str, object],
    max_direct: int,
    deadline: float,
    now: Callable[[], float],
    prompt: str,
    options: Options,
) -> tuple[Gathered, Walls, str]:
    """Search and gather in this process (no daemon runs): (candidates, walls, the query searched). The
    query is made from the prompt as the daemon makes it, keeping the stop words a note's name holds. Never
    builds an index: a missing one is an error. Refreshes the walls cache from the contract it parsed."""
    if not settings.index_dir.is_dir() or not settings.catalog_path.is_file():
        raise HookError(f"no index at {settings.cache_dir}; run `agentmd reindex` or start `agentmd serve`")
    from agentmd.engine.recall.query import named_stop_words, save_walls
    from agentmd.engine.search.recall import search_and_gather

    def query_of(index: Any) -> str:
        return sanitize_query(prompt, options.max_query_words, named_stop_words(index, prompt))

    answer, walls, gathered = search_and_gather(
        settings, request, max_direct=max_direct, deadline=deadline, now=now, query_of=query_of
    )
    save_walls(settings, walls)
    return gathered, walls, str(answer.get("query", request["query"]))
