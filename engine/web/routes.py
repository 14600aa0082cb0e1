"""The page's routes, mounted on the daemon's listener beside `/v1` and `/mcp` (the guard in
engine/daemon/server.py lets `/ui` in on the page's cookie, engine/web/session.py).

Views are GETs that write nothing; every write is `POST /ui/api/apply` after `POST /ui/api/plan` showed what
it does (engine/web/actions.py). `POST /v1/page-ticket` (bearer token only) is how `agentmd open` gets the
one-time ticket the enter page trades for the session cookie.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from agentmd.engine.errors import AgentmdError, UsageError
from agentmd.engine.web import actions, facts, views
from agentmd.engine.web.assets import CSS, ICON, JS
from agentmd.engine.web.html import ENTER_PAGE, SECURITY_HEADERS, Markup, page, refusal_page
from agentmd.engine.web.session import (
    COOKIE,
    ENTER_PATH,
    SESSIONS,
    Tickets,
    csrf_value,
    new_session,
    parse_body,
    session_base,
    session_value,
)

log = logging.getLogger("agentmd.web")
RECALL_SECONDS = 30.0


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers=SECURITY_HEADERS)


class Page:
    """The page of one daemon."""

    def __init__(self, host: actions.PageHost) -> None:
        self.host = host
        self.tickets = Tickets()
        # one page write at a time, so a write's check that the vault is as its plan showed and the write itself
        # are one step: of two presses of one plan's Apply, the second finds the note changed and writes nothing
        self._writing = threading.Lock()

    def _page(self, title: str, body: Markup, current: str, session: str) -> HTMLResponse:
        token = self.host.token() or ""
        return _html(
            page(
                title,
                body,
                current=current,
                csrf=csrf_value(token, session),
                vault=str(self.host.settings.vault),
                base=session_base(session),
            )
        )

    async def _view(self, request: Request, build: Callable[[], tuple[str, Markup, str]]) -> Response:
        try:
            title, body, current = await anyio.to_thread.run_sync(build)
        except UsageError as exc:
            return _html(refusal_page(str(exc)), 404)
        except AgentmdError as exc:
            return _html(refusal_page(str(exc)), 503)
        return self._page(title, body, current, str(request.path_params["session"]))

    # -- views ---------------------------------------------------------------------------------------

    def today(self) -> tuple[str, Markup, str]:
        now = dt.datetime.now(dt.UTC)
        commits = facts.recent_commits(self.host.settings.vault, now - dt.timedelta(days=facts.TIMELINE_DAYS))
        days, counts = facts.day_counts(commits, now)
        return "Today", views.today(self.host.status(), days, counts, commits), "today"

    def review(self) -> tuple[str, Markup, str]:
        from agentmd.engine.curate.queue import review_queue

        store = self._store()
        items = review_queue(self.host.settings.vault, store.catalog, self.host.contract(),
                             state_dir=self.host.settings.state_dir)  # fmt: skip
        return "Review", views.review(items, dt.datetime.now(dt.UTC)), "review"

    def _store(self) -> Any:
        store = self.host.store()
        if store is None:
            raise AgentmdError("the index is still opening; reload in a moment")
        return store

    def search(self, query: str, recall: bool, project: str | None, archived: bool = False) -> tuple[str, Markup, str]:
        from agentmd.engine.search.searcher import SearchRequest

        if not query.strip():
            return "Search", views.search("", None, [], None, archived), "search"
        asked = SearchRequest(query, limit=10, explain=True, include_archived=archived)
        response = self.host.search(asked, count_usage=False)
        everything = self.host.search(replace(asked, floor=0.0), count_usage=False)
        kept = {r.note for r in response.results}
        hidden = [r.to_json() for r in everything.results if r.note not in kept]
        answer = self.recall_preview(query, project) if recall else None
        return f"Search: {query}", views.search(query, response.to_json(), hidden, answer, archived), "search"

    def recall_preview(self, query: str, project: str | None) -> dict[str, object]:
        """What the recall hook would inject for `query`: `agentmd recall --preview --json`, the hook's own code
        (run as the command, since the hook's layer sits above the engine), counting nothing."""
        s = self.host.settings
        argv = [sys.executable, "-m", "agentmd", "recall", "--preview", "--json", "--vault", str(s.vault),
                "--index", str(s.cache_dir)]  # fmt: skip
        if s.config_file is not None and s.config_file.exists():
            argv += ["--config", str(s.config_file)]
        if project:
            argv += ["--project", project]
        try:
            run = subprocess.run([*argv, "--", query], capture_output=True, timeout=RECALL_SECONDS, cwd=s.vault,
                                 check=False)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"error": f"the recall preview did not finish ({exc})"}
        try:
            return dict(json.loads(run.stdout))
        except ValueError:
            said = run.stderr.decode("utf-8", "replace").strip().splitlines()
            return {"error": f"the recall preview failed: {said[-1] if said else run.returncode}"}

    def note(self, path: str) -> tuple[str, Markup, str]:
        from agentmd.engine.curate.changelog import history
        from agentmd.engine.search.graph import Graph
        from agentmd.engine.web.neighbours import picture
        from agentmd.engine.web.svg import history_strip

        vault = self.host.settings.vault
        text = facts.read_note(vault, path)
        graph = Graph(self._store().catalog)
        links = graph.links_of(text.path)
        image = picture(vault, graph, text.path, links, views.note_href)
        changes = history(vault, path=text.path) if (vault / ".git").exists() else []
        strip = history_strip([c.origin if c.parents < 2 else "merge" for c in changes])
        return text.title, views.note(text, links, image, changes, strip), "note"

    def change(self, sha: str) -> tuple[str, Markup, str]:
        commit, patch, cut = facts.commit_of(self.host.settings.vault, sha)
        return commit.subject, views.change(commit, patch, cut), "today"

    # -- endpoints -----------------------------------------------------------------------------------

    async def today_route(self, request: Request) -> Response:
        return await self._view(request, self.today)

    async def review_route(self, request: Request) -> Response:
        return await self._view(request, self.review)

    async def search_route(self, request: Request) -> Response:
        q = request.query_params.get("q", "")[:500]
        recall = request.query_params.get("recall") == "1"
        project = request.query_params.get("project") or None
        archived = request.query_params.get("archived") == "1"
        return await self._view(request, lambda: self.search(q, recall, project, archived))

    async def note_route(self, request: Request) -> Response:
        path = request.query_params.get("path", "")
        return await self._view(request, lambda: self.note(path))

    async def change_route(self, request: Request) -> Response:
        sha = str(request.path_params["sha"])
        return await self._view(request, lambda: self.change(sha))

    async def enter_route(self, request: Request) -> Response:
        return _html(ENTER_PAGE)

    async def session_route(self, request: Request) -> Response:
        """A ticket traded for a new page session: its cookie, scoped to the session's own path, and that path."""
        data = parse_body(await request.body())
        secret = str(data.get("ticket", "")) if isinstance(data, dict) else ""
        token = self.host.token()
        if token is None or not self.tickets.redeem(secret):
            log.warning("refused a page session: the ticket is unknown, used or expired")
            return JSONResponse({"error": "this ticket is unknown, used or expired: run `agentmd open` again"}, 403)
        session = new_session()
        response = JSONResponse({"ok": True, "base": session_base(session)})
        value = session_value(token, session)
        response.set_cookie(COOKIE, value, path=session_base(session).rstrip("/"), httponly=True, samesite="strict")
        return response

    async def ticket_route(self, request: Request) -> Response:
        """A one-time ticket for `agentmd open`: only for the operator token (the owner's own file), as a page
        session may take back any change; the access token alone, which agents' configurations hold, is not
        enough."""
        if not self.host.operator(request.headers):
            return JSONResponse({"error": "a page ticket needs the operator token: run `agentmd open`"}, 403)
        return JSONResponse({"ticket": self.tickets.issue(), "path": ENTER_PATH})

    async def _act(self, request: Request, run: Callable[..., actions.Outcome]) -> Response:
        data = parse_body(await request.body())
        if not isinstance(data, dict):
            return JSONResponse({"error": "send a JSON object"}, 400)
        try:
            outcome = await anyio.to_thread.run_sync(run, self.host, data)
        except UsageError as exc:
            return JSONResponse({"error": str(exc), "code": "usage"}, 400)
        except AgentmdError as exc:
            return JSONResponse({"error": str(exc), "code": "failed"}, 409)
        return JSONResponse(outcome.to_dict())

    async def plan_route(self, request: Request) -> Response:
        return await self._act(request, actions.plan)

    async def apply_route(self, request: Request) -> Response:
        def one_at_a_time(host: actions.PageHost, data: dict[str, object]) -> actions.Outcome:
            with self._writing:
                return actions.apply(host, data)

        return await self._act(request, one_at_a_time)

    def routes(self) -> list[BaseRoute]:
        def static(text: str, media: str) -> Callable[[Request], Any]:
            async def serve(request: Request) -> Response:
                return Response(text, media_type=media, headers={"cache-control": "no-cache",
                                                                 "x-content-type-options": "nosniff"})  # fmt: skip

            return serve

        async def home(request: Request) -> Response:
            return _html(refusal_page("Open the page with `agentmd open`: it opens a page session of its own."), 401)

        async def session_home(request: Request) -> Response:
            return RedirectResponse(session_base(str(request.path_params["session"])), 302)

        s = SESSIONS + "{session}"
        return [
            Route("/ui", home, methods=["GET"]),
            Route("/ui/", home, methods=["GET"]),
            Route(s, session_home, methods=["GET"]),
            Route(f"{s}/", self.today_route, methods=["GET"]),
            Route(f"{s}/review", self.review_route, methods=["GET"]),
            Route(f"{s}/search", self.search_route, methods=["GET"]),
            Route(f"{s}/note", self.note_route, methods=["GET"]),
            Route(f"{s}/change/{{sha}}", self.change_route, methods=["GET"]),
            Route(ENTER_PATH, self.enter_route, methods=["GET"]),
            Route("/ui/session", self.session_route, methods=["POST"]),
            Route(f"{s}/api/plan", self.plan_route, methods=["POST"]),
            Route(f"{s}/api/apply", self.apply_route, methods=["POST"]),
            Route("/ui/static/app.js", static(JS, "text/javascript"), methods=["GET"]),
            Route("/ui/static/app.css", static(CSS, "text/css"), methods=["GET"]),
            Route("/ui/static/icon.svg", static(ICON, "image/svg+xml"), methods=["GET"]),
            Route("/v1/page-ticket", self.ticket_route, methods=["POST"]),
        ]
