"""Who may read and write the page: a browser holding the page's cookie, bound to the vault's access token.

A browser cannot put `Authorization: Bearer` on a navigation, so the page has a cookie of its own:

- `agentmd open` asks the daemon (with the token) for a one-time ticket and opens `/ui/enter#<ticket>`. The
  ticket travels in the URL's fragment, which a browser never sends to a server, so it reaches no log; the
  enter page's script removes it from the address bar and history and trades it (`POST /ui/session`, JSON,
  same origin) for the cookie. A ticket serves once and only for `TICKET_SECONDS`.
- The cookie is an HMAC of the access token (`session_value`): `HttpOnly` (no script reads it), `SameSite=
  Strict` (no other site's page makes the browser send it), `Path=/ui` (it is never offered to `/v1` or `/mcp`,
  which take the bearer token alone). `agentmd token rotate` changes the token and so logs every page out.
- A write (any POST under /ui but the exchange itself) needs, besides the cookie, the daemon's own `Origin`
  (the guard refuses every other origin) and the header `X-Agentmd-CSRF` carrying `csrf_value`: the page's
  script copies it from a meta tag of a page only a holder of the cookie can read.

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
ENTER_PATH = "/ui/enter"
SESSION_PATH = "/ui/session"
STATIC_PREFIX = "/ui/static/"
TICKET_SECONDS = 120.0
MAX_TICKETS = 32


def session_value(token: str) -> str:
    """The cookie's value for the token now in force (it reveals nothing of the token)."""
    return hmac.new(token.encode("utf-8"), b"agentmd page session v1", hashlib.sha256).hexdigest()


def csrf_value(token: str) -> str:
    """The value a page's write carries in `X-Agentmd-CSRF`."""
    return hmac.new(token.encode("utf-8"), b"agentmd page write v1", hashlib.sha256).hexdigest()


def is_page_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def is_open_page_path(path: str) -> bool:
    """The page's parts that hold nothing of the vault: the enter page, the exchange, the script and style."""
    return path in (ENTER_PATH, SESSION_PATH) or path.startswith(STATIC_PREFIX)


def cookie_from(header: str | None) -> str | None:
    """The page cookie's value in a `Cookie` header, if any."""
    for part in (header or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value:
            return value.strip()
    return None


def page_refusal(method: str, headers: Mapping[str, str], token: str | None) -> tuple[int, str] | None:
    """None when a request to the page (not carrying the bearer token) may pass on its cookie; else the status
    and the reason it is refused."""
    if token is None:
        return 401, "the vault's access token cannot be read; see the daemon's log"
    cookie = cookie_from(headers.get("cookie"))
    if cookie is None or not hmac.compare_digest(cookie, session_value(token)):
        said = "this browser holds no page session" if cookie is None else "the page session has ended"
        return 401, f"{said}: run `agentmd open` to open the page again (a token rotation ends every session)"
    if method.upper() not in ("GET", "HEAD"):
        if not headers.get("origin"):
            return 403, "forbidden: a write from the page must carry the page's own Origin"
        csrf = headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(csrf, csrf_value(token)):
            return 403, "forbidden: a write from the page must carry its X-Agentmd-CSRF value (reload the page)"
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
