"""A whole recall run in the daemon, for the prompt hook's light path (`POST /v1/recall`, hooks/recall/light.py).

The hook sends the prompt as Claude Code gave it (`prompt`, `cwd`, `session_id`), the session's
`AGENTMD_RECALL` and its budgets; the daemon does everything the hook's own pipeline would (engine/recall/
pipeline.py): the pause check, the query, the project, the search with its gathered candidates, the render
within the budgets, and the count of the notes shown. The answer is the text to print and the line for
`hook.log`, so the hook's process imports nothing of the engine but the light leaves that find the daemon.

The count is made before the answer leaves: the hook prints what it is given unless its budget ran out in
between, which it logs as a give-up.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, TypedDict

from agentmd.engine import recall_pause
from agentmd.engine.errors import AgentmdError, UsageError
from agentmd.engine.recall.pipeline import MAX_SEARCH_LIMIT, Options, log_detail, paused, rendered_recall
from agentmd.engine.recall.query import bind_project, sanitize_query
from agentmd.engine.search.recall import Gathered, Walls

# the request's fields and their JSON types (engine/daemon/server.py checks them before the handler runs)
FIELDS: dict[str, tuple[type, ...]] = {
    "prompt": (str,),
    "cwd": (str, type(None)),
    "session_id": (str, type(None)),
    "recall_env": (str, type(None)),  # the session's AGENTMD_RECALL, when set
    "token_budget": (int,),
    "max_entries": (int,),
    "max_linked": (int,),
    "max_query_words": (int,),
}


class RecallAnswer(TypedDict):
    """What `/v1/recall` answers: `outcome` (`ok` or `paused`), the `text` to print (empty: print nothing),
    the `detail` of the hook's log line, and how many notes were `counted` as injections."""

    outcome: str
    text: str
    detail: str
    counted: int


def options_from(body: Mapping[str, object]) -> Options:
    """The budgets a request names (each at least 1), the hook's defaults for the rest."""
    given: dict[str, int] = {}
    for name in ("token_budget", "max_entries", "max_linked", "max_query_words"):
        value = body.get(name)
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UsageError(f"`{name}` must be a whole number of at least 1, not {value!r}")
            given[name] = value
    return Options(**given)


def answer_prompt(
    settings: Any,
    contract: Any,
    search: Callable[[dict[str, Any]], Gathered | None],
    count: Callable[[list[str]], int],
    body: Mapping[str, object],
    stop_words: Callable[[str], Collection[str]] | None = None,
) -> RecallAnswer:
    """One prompt's recall, as the hook would print it. `search` runs a search request (query, limit, mode,
    project) and gathers its candidates (None when the gathering failed); `count` records the shown notes'
    injections and says how many it counted; `stop_words` names the prompt's stop words inside a run of its words
    that names a note (`named.kept_stop_words`: `will` where "Free Will" is a title), kept in the query."""
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise UsageError(f"unknown field(s) {', '.join(unknown)}; a recall takes {', '.join(FIELDS)}")
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise UsageError("`prompt` is required: the text the person submitted")
    given_cwd, given_session = body.get("cwd"), body.get("session_id")
    cwd = given_cwd if isinstance(given_cwd, str) else None
    session = given_session if isinstance(given_session, str) else None
    env_value = body.get("recall_env")
    env = {recall_pause.ENV: env_value} if isinstance(env_value, str) else {}
    options = options_from(body)
    walls = Walls.from_contract(contract)
    held = paused(settings, cwd, env=env, walls=walls)
    if held is not None:
        tell = recall_pause.first_telling(settings.state_dir, held, session)
        said = "said so" if tell else "said so before"
        return {
            "outcome": "paused",
            "text": recall_pause.notice(held) if tell else "",
            "detail": f"recall is paused ({held.scope}, {held.describe()}); injected nothing; {said}",
            "counted": 0,
        }
    keep = stop_words(prompt) if stop_words is not None else ()
    query = sanitize_query(prompt, options.max_query_words, keep)
    project, how = bind_project(cwd, settings.vault, walls.projects_folder)
    if not query:
        result = rendered_recall(query, project, how, "none", {"direct": [], "linked": [], "left_out": []}, options)
    else:
        limit = min(options.max_entries, MAX_SEARCH_LIMIT)
        gathered = search({"query": query, "limit": limit, "mode": "hybrid", "project": project})
        if gathered is None:
            raise AgentmdError("gathering the recall candidates failed; the daemon's log says why")
        result = rendered_recall(query, project, how, "daemon", gathered, options)
    paths = [e.path for e in result.rendered.entries]
    counted = count(paths) if paths else 0
    return {"outcome": "ok", "text": result.rendered.text, "detail": log_detail(result, counted), "counted": counted}
