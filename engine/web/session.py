"""Who may read and write the page: a browser holding the cookie of a page session, bound to the vault's access
token.

A browser cannot put `Authorization: Bearer` on a navigation, so the page has a cookie of its own:

- `agentmd open` asks the daemon (with the token) for a one-time ticket and opens `/ui/enter#<ticket>`. The
  ticket travels in the URL's fragment, which a browser never sends to a server, so it reaches no log; the
  enter page's script removes it from the address bar and history and trades it (`POST /ui/session`, JSON,
  same origin) for a page session. A ticket serves once and only for `TICKET_SECONDS`.
- A session has an id of its own, made at random after the time it was opened, and its pages live under
  `/ui/s/<id>/`; it ends `SESSION_SECONDS` after it was opened (the time is in the id the cookie's HMAC covers,
  so no one can stretch it). Its cookie is an
  HMAC of the page key and the id (`session_value`); the page key is the access token and the owner-only
  operator token together, so the access token alone (which agents' configurations hold) can make no session,
  and the bearer token opens no page. The cookie is scoped to that path: `Path=/ui/s/<id>`, `HttpOnly`
  (no script reads it), `SameSite=Strict`. Browsers share cookies among the ports of one host, so a cookie
  scoped to `/ui` alone would also be sent to a server on another loopback port whose page asks for a `/ui`
  path; scoped to a path holding an id nobody else knows, it is sent to no other server. It is never offered
  to `/v1` or `/mcp`, which take the bearer token alone. `agentmd token rotate` changes the token and so ends
  every session.
- A request to a session's pages is refused when the browser says (`Sec-Fetch-Site`) another site's page, or
  another port's, sent it: only the page's own pages and what the person opens themselves pass.
- A write (any POST under a session) needs, besides the cookie, the daemon's own `Origin` (the guard refuses
  every other origin) and the header `X-Agentmd-CSRF` carrying `csrf_value`: the page's script copies it from
  a meta tag of a page only a holder of the cookie can read.

The raw token is never put in a page, a cookie or a URL.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Mapping

COOKIE = "agentmd_page"
CSRF_HEADER = "x-agentmd-csrf"
PREFIX = "/ui"
SESSIONS = "/ui/s/"
ENTER_PATH = "/ui/enter"
SESSION_PATH = "/ui/session"
STATIC_PREFIX = "/ui/static/"
TICKET_SECONDS = 120.0
SESSION_SECONDS = 12 * 3600  # a working day: a cookie that leaked is worth nothing by the next morning
MAX_TICKETS = 32
# what a browser's Sec-Fetch-Site says of a request a session's pages answer: their own, or one the person made
OWN_FETCHES = ("same-origin", "none")


def new_session(now: float | None = None) -> str:
    """A new page session's id: the time it is opened (whole seconds, hex), `_`, and 144 random bits."""
    return f"{int(time.time() if now is None else now):x}_{secrets.token_urlsafe(18)}"


def session_age(session: str, now: float | None = None) -> float | None:
    """Seconds since `session` was opened; None for an id that says no time."""
    stamp, _, rest = session.partition("_")
    try:
        opened = int(stamp, 16)
    except ValueError:
        return None
    return (time.time() if now is None else now) - opened if rest else None


def session_base(session: str) -> str:
    """Where the pages of `session` live (the `<base>` of each of its pages)."""
    return f"{SESSIONS}{session}/"


def session_of(path: str) -> str | None:
    """The page session a request path belongs to (`/ui/s/<id>` or under it), if any."""
    if not path.startswith(SESSIONS):
        return None
    session = path[len(SESSIONS) :].split("/", 1)[0]
    return session if session and all(c.isalnum() or c in "-_" for c in session) and session.isascii() else None


def session_value(token: str, session: str) -> str:
    """The cookie's value of `session` under the token now in force (it reveals nothing of the token)."""
    return hmac.new(token.encode("utf-8"), b"agentmd page session v2\0" + session.encode(), hashlib.sha256).hexdigest()


def csrf_value(token: str, session: str) -> str:
    """The value a write of `session`'s pages carries in `X-Agentmd-CSRF`."""
    return hmac.new(token.encode("utf-8"), b"agentmd page write v2\0" + session.encode(), hashlib.sha256).hexdigest()


def is_page_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def is_open_page_path(path: str) -> bool:
    """The page's parts that hold nothing of the vault: the enter page, the exchange, the script and style, and
    the bare `/ui` (which says how to open the page)."""
    return path in (PREFIX, PREFIX + "/", ENTER_PATH, SESSION_PATH) or path.startswith(STATIC_PREFIX)


def cookies_from(header: str | None) -> list[str]:
    """Every value of the page cookie in a `Cookie` header (a browser sends one a path, longest path first)."""
    found = []
    for part in (header or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value.strip():
            found.append(value.strip())
    return found


def page_refusal(
    method: str, path: str, headers: Mapping[str, str], token: str | None, now: float | None = None
) -> tuple[int, str] | None:
    """None when a request to a session's pages (not carrying the bearer token) may pass on its cookie; else the
    status and the reason it is refused (`now`: the wall clock, for the session's age)."""
    if token is None:
        return 401, "the vault's access token cannot be read; see the daemon's log"
    fetched = headers.get("sec-fetch-site")
    if fetched is not None and fetched.strip().lower() not in OWN_FETCHES:
        return 403, (
            f"forbidden: the page answers its own pages and what you open yourself, not a request another page "
            f"made (Sec-Fetch-Site: {fetched.strip()[:40]}); open it with `agentmd open`"
        )
    session = session_of(path)
    if session is None:
        return 401, "this address belongs to no page session: run `agentmd open` to open the page"
    age = session_age(session, now)
    if age is None or not -300 <= age <= SESSION_SECONDS:  # a few minutes' clock step back is no reason to refuse
        return 401, "the page session has ended (a session lasts 12 hours): run `agentmd open` to open the page again"
    wanted = session_value(token, session)
    cookies = cookies_from(headers.get("cookie"))
    if not any(hmac.compare_digest(c, wanted) for c in cookies):
        said = "this browser holds no cookie of this page session" if not cookies else "the page session has ended"
        return 401, f"{said}: run `agentmd open` to open the page again (a token rotation ends every session)"
    if method.upper() not in ("GET", "HEAD"):
        if not headers.get("origin"):
            return 403, "forbidden: a write from the page must carry the page's own Origin"
        csrf = headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(csrf, csrf_value(token, session)):
            return 403, "forbidden: a write from the page must carry its X-Agentmd-CSRF value (reload the page)"
    return None


def parse_body(body: bytes) -> object:
    """A request body read as JSON; None for one that is not JSON (too deeply nested among them)."""
    import json

    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


class Tickets:
    """One-time tickets that open a page session (`agentmd open` asks for one), each good for one use and
    `TICKET_SECONDS`."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._open: dict[str, float] = {}
        self._lock = threading.Lock()

    def issue(self) -> str:
        ticket = secrets.token_urlsafe(24)
        now = self.clock()
        with self._lock:
            self._open = {t: at for t, at in self._open.items() if now - at < TICKET_SECONDS}
            while len(self._open) >= MAX_TICKETS:
                self._open.pop(next(iter(self._open)))
            self._open[ticket] = now
        return ticket

    def redeem(self, ticket: str) -> bool:
        with self._lock:
            at = self._open.pop(ticket, None)
        return at is not None and self.clock() - at < TICKET_SECONDS
