"""The daemon's page (/ui, engine/web) in a real browser: headless Chromium (Debian's package) drives every
view of a real daemon on a real git vault, takes a screenshot of each (desktop and phone width, into
`<tmp>/screens`, and into $AGENTMD_SCREENSHOTS when set), and presses the buttons a person would: each write
shows its plan first, and what it writes is what the command line writes (the same origin trailer, the same
kind of commit and the same change to the note). A page on another loopback port can neither read nor write it.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cdp_helpers import CHROMIUM, Browser, browser
from daemon_helpers import client_of, git, running_daemon, vault_settings, wait_until

from agentmd.cli import main
from agentmd.engine.client import DaemonHTTPError, access_token
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.git.conflicts import conflict_text, record_conflicts
from agentmd.engine.settings import Settings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (Debian's `chromium`; ./dev test installs it)"),
]

UNFILED = "---\ntitle: {title}\nstatus: unfiled\ncaptured: 2026-11-20T10:00:00Z\n---\n\n{body}\n"
NOTES = {
    "README.md": "# Vault\n",
    "notes/otters.md": "---\ntitle: Otters\ntype: concept\n---\n\nOtters hold hands. See [[rivers]] and [[kelp]].\n",
    "notes/rivers.md": "---\ntitle: Rivers\n---\n\nRivers carry otters to the [[sea]].\n",
    "notes/kelp.md": "---\ntitle: Kelp\n---\n\nKelp forests shelter [[otters]].\n",
    "notes/sea.md": "---\ntitle: Sea\n---\n\nThe sea holds kelp and rivers end in it.\n",
    "notes/lodge.md": "---\ntitle: Lodge\nlifecycle: archived\n---\n\nBeavers once built a lodge here.\n",
    "inbox/first-capture.md": UNFILED.format(title="First capture", body="Beavers build dams of river wood."),
    "inbox/second-capture.md": UNFILED.format(title="Second capture", body="Beavers build dams of river wood."),
    "inbox/third-capture.md": UNFILED.format(title="Third capture", body="Herons wait by the river."),
    "inbox/fourth-capture.md": UNFILED.format(title="Fourth capture", body="Herons wait by the river."),
    "inbox/hostile.md": (
        '---\ntitle: "<script>window.pwned = 1</script>"\nstatus: unfiled\nnote: "<img src=x onerror=window.pwned=2>"\n'
        '---\n\n<script>window.pwned = 3</script> <img src=x onerror="window.pwned = 4"> otters\n'
    ),
}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    return vault_settings(tmp_path / "vault", NOTES)


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    with running_daemon(settings, commit_debounce=0.1) as d:
        yield d


@pytest.fixture
def page(daemon: Daemon, tmp_path: Path) -> Iterator[Browser]:
    """A browser holding a page session, opened as `agentmd open` opens it (a one-time ticket)."""
    with browser(tmp_path / "profile") as b:
        enter(b, daemon)
        yield b


SESSIONS: dict[int, str] = {}  # each browser's page session: the URL its pages live under


def new_ticket(daemon: Daemon) -> str:
    """A one-time page ticket, asked for as `agentmd open` asks: with the operator token."""
    from agentmd.engine.daemon.operator import OPERATOR_HEADER, ensure_token

    operator = {OPERATOR_HEADER: ensure_token(daemon.settings.state_dir)}
    return str(client_of(daemon).post("/v1/page-ticket", {}, headers=operator)["ticket"])


def enter(b: Browser, daemon: Daemon) -> None:
    ticket = new_ticket(daemon)
    b.open(f"http://127.0.0.1:{daemon.port}/ui/enter#{ticket}")
    b.wait("location.pathname.startsWith('/ui/s/') && !!document.getElementById('health')")
    assert ticket not in b.js("location.href")
    SESSIONS[id(b)] = b.js("location.href")
    assert SESSIONS[id(b)] == b.js("document.baseURI")


def at(b: Browser, view: str = "") -> str:
    """The URL of one of the page session's views (`review`, `note?path=...`)."""
    return SESSIONS[id(b)] + view


def shoot(b: Browser, tmp_path: Path, name: str) -> None:
    """A screenshot at desktop width and one at phone width (which must not scroll sideways)."""
    for label, width in (("desktop", 1100), ("phone", 390)):
        b.size(width, 900, mobile=width < 500)
        path = b.screenshot(tmp_path / "screens" / f"{name}-{label}.png")
        assert path.stat().st_size > 5000
        if os.environ.get("AGENTMD_SCREENSHOTS"):
            target = Path(os.environ["AGENTMD_SCREENSHOTS"])
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target / path.name)
        if width < 500:
            assert b.js("document.documentElement.scrollWidth <= window.innerWidth + 1"), f"{name} scrolls sideways"
    b.size(1100, 900)


def head(vault: Path) -> str:
    return git(vault, "rev-parse", "HEAD").strip()


def trailers(vault: Path, rev: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in git(vault, "log", "-1", "--format=%(trailers:only,unfold)", rev).splitlines():
        key, _, value = line.partition(": ")
        if value:
            out.setdefault(key, []).append(value)
    return out


def normalised_diff(vault: Path, rev: str, name: str) -> str:
    """A commit's patch with the note's name and every timestamp replaced, to compare two commits' changes."""
    patch = git(vault, "show", "--format=", "--no-color", rev)
    patch = re.sub(r"index [0-9a-f]+\.\.[0-9a-f]+", "index", patch)
    patch = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", patch)
    return re.sub(re.escape(name), "NAME", patch, flags=re.IGNORECASE)


def press(b: Browser, selector: str, shot: Path | None = None, reason: str | None = None) -> dict[str, Any]:
    """Press a plan button, wait for the plan, check it is shown, apply it (`reason` typed into the plan's
    field first), wait for the outcome (with `shot`, a screenshot of the plan and one of the outcome). Apply is
    pressed twice, as a double click would: one write goes."""
    b.js(f"document.querySelector({json.dumps(selector)}).click()")
    state = b.wait("['planned','nothing','refused'].includes(document.getElementById('plan').dataset.state) "
                   "&& document.getElementById('plan').dataset.state")  # fmt: skip
    plan = b.js("document.getElementById('plan').innerText")
    assert state == "planned", plan
    assert b.js("document.activeElement.id") == "plan-apply"  # the keyboard lands on Apply
    if reason is not None:
        b.js(f"document.getElementById('plan-reason').value = {json.dumps(reason)}")
    if shot is not None:
        b.screenshot(shot.with_name(shot.name + "-plan.png"))
    b.js("var a = document.getElementById('plan-apply'); a.click(); a.click()")
    state = b.wait("['applied','refused'].includes(document.getElementById('plan').dataset.state) "
                   "&& document.getElementById('plan').dataset.state")  # fmt: skip
    done = b.js("document.getElementById('plan').innerText")
    assert state == "applied", done
    if shot is not None:
        b.screenshot(shot.with_name(shot.name + "-applied.png"))
    return {"plan": plan, "done": done}


def test_every_view_renders_in_the_browser_and_is_photographed(
    daemon: Daemon, settings: Settings, page: Browser, tmp_path: Path
) -> None:
    assert "Health" in page.js("document.getElementById('health').innerText")
    assert page.js("document.querySelectorAll('svg.timeline rect[data-kind]').length") >= 1
    assert page.js("document.querySelectorAll('#changes li[data-sha]').length") >= 1
    # the tab's icon is named in the head and served without the access token, so the browser never asks the
    # listener for /favicon.ico (which, like any path outside the page, answers 401)
    icon = page.js("fetch(document.querySelector('link[rel=icon]').href).then(r => r.status + ' ' + "
                   "r.headers.get('content-type'))")  # fmt: skip
    assert icon == "200 image/svg+xml"
    shoot(page, tmp_path, "today")

    page.open(at(page, "review"))
    queued = page.js("[...document.querySelectorAll('#queue li[data-path]')].map(e => e.dataset.path)")
    assert "inbox/first-capture.md" in queued
    assert "unfiled" in page.js("document.getElementById('queue').innerText")
    shoot(page, tmp_path, "review")

    page.open(at(page, "search?q=otters"))
    assert page.js("document.querySelectorAll('#results article').length") >= 1
    assert "lexical" in page.js("document.querySelector('#results article details').textContent")
    assert "What the floor hid" in page.js("document.body.innerText")
    shoot(page, tmp_path, "search")

    page.open(at(page, "search?q=lodge"))  # an archived note is behind its wall until the box is ticked
    assert page.js("document.querySelectorAll('#results article').length") == 0
    assert "tick the box above" in page.js("document.body.innerText")
    page.js("document.getElementById('archived').click(); document.querySelector('form.search').submit()")
    page.wait("location.search.includes('archived=1') && document.readyState === 'complete'")
    assert page.js("document.getElementById('archived').checked")
    assert "notes/lodge.md" in page.js("document.getElementById('results').innerText")

    page.open(at(page, "search?q=otters+kelp&recall=1"))
    page.wait("!!document.getElementById('recall')", 60)
    assert "What the hook would inject" in page.js("document.getElementById('recall').innerText")
    shoot(page, tmp_path, "search-recall")

    page.open(at(page, "note?path=notes/otters.md"))
    nodes = page.js("[...document.querySelectorAll('svg.graph a[data-path]')].map(a => a.dataset.path)")
    assert {"notes/otters.md", "notes/rivers.md", "notes/kelp.md", "notes/sea.md"} <= set(nodes)
    assert "concept" in page.js("document.getElementById('frontmatter').innerText")
    assert "notes/kelp.md" in page.js("document.getElementById('backlinks').innerText")
    assert page.js("document.querySelectorAll('#history li').length") >= 1
    shoot(page, tmp_path, "note")

    sha = head(settings.vault)
    page.open(at(page, f"change/{sha}"))
    assert "notes/otters.md" in page.js("document.getElementById('diff').innerText")
    assert page.js("document.baseURI") == at(page)  # the page's own policy lets its `<base>` stand: links resolve
    shoot(page, tmp_path, "change")
    page.open(at(page, f"change/{sha[:10]}"))  # the short hash the command line prints
    assert "notes/otters.md" in page.js("document.getElementById('diff').innerText")


def test_a_note_holding_script_shows_as_text_and_runs_nothing(daemon: Daemon, page: Browser) -> None:
    for path in ("note?path=inbox/hostile.md", "review", "search?q=otters"):
        page.open(at(page, path))
        assert page.js("typeof window.pwned") == "undefined", path
    page.open(at(page, "note?path=inbox/hostile.md"))
    assert "<script>window.pwned = 3</script>" in page.js("document.getElementById('note-body').innerText")
    assert page.js("document.querySelectorAll('main script, main img').length") == 0


def test_confirm_and_retire_through_the_page_write_what_the_command_writes(
    daemon: Daemon, settings: Settings, page: Browser, tmp_path: Path
) -> None:
    vault = settings.vault
    for action, by_page, by_cli in (("confirm", "first-capture", "second-capture"),
                                    ("retire", "third-capture", "fourth-capture")):  # fmt: skip
        page.open(at(page, "review"))
        before = head(vault)
        reason = "a duplicate of the heron note" if action == "retire" else None
        shown = press(
            page,
            f'#queue li[data-path="inbox/{by_page}.md"] button[data-name="{action}"]',
            tmp_path / "screens" / action,
            reason=reason,
        )
        assert f"{action} inbox/{by_page}.md" in shown["plan"]
        assert "{'" not in shown["plan"] and "':" not in shown["plan"]  # values in words, no Python dict
        page_commit = wait_until(lambda: head(vault) != before and head(vault), 20, "the page's commit")  # noqa: B023
        if reason is not None:  # the reason typed into the plan is the note's, as `--reason` writes it
            assert reason in (vault / f"inbox/{by_page}.md").read_text()
        with_reason = ("--reason", reason) if reason is not None else ()
        code, _out, err = cli(action, f"inbox/{by_cli}.md", "--yes", "--vault", str(vault), *with_reason)
        assert code == 0, err
        cli_commit = wait_until(lambda: head(vault) != page_commit and head(vault), 20, "the command's commit")  # noqa: B023
        assert trailers(vault, page_commit)["origin"] == trailers(vault, cli_commit)["origin"] == [action]
        assert git(vault, "show", "--name-only", "--format=", page_commit).split() == [f"inbox/{by_page}.md"]
        assert normalised_diff(vault, page_commit, by_page.split("-")[0]) == normalised_diff(
            vault, cli_commit, by_cli.split("-")[0]
        )
        assert git(vault, "log", "-1", "--format=%s", page_commit).replace(by_page, "X") == git(
            vault, "log", "-1", "--format=%s", cli_commit
        ).replace(by_cli, "X")


def test_two_writes_of_one_plan_sent_at_once_write_once(daemon: Daemon, settings: Settings, page: Browser) -> None:
    # the same plan's Apply sent twice at once (two tabs, a double click before the page could stop it): the
    # check that the note is as the plan showed and the write are one step, so the second finds it changed
    page.open(at(page, "review"))
    before = head(settings.vault)
    answers = page.js("""(async () => {
        const csrf = document.querySelector('meta[name=agentmd-csrf]').content;
        const send = (url, body) => fetch(url, {method: 'POST', credentials: 'same-origin', body: JSON.stringify(body),
            headers: {'Content-Type': 'application/json', 'X-Agentmd-CSRF': csrf}});
        const plan = await (await send('api/plan', {action: 'confirm', path: 'inbox/first-capture.md'})).json();
        const both = await Promise.all([send('api/apply', plan.apply), send('api/apply', plan.apply)]);
        return Promise.all(both.map(async r => r.status + ' ' + JSON.stringify(await r.json())));
    })()""")
    statuses = sorted(a.split(" ", 1)[0] for a in answers)
    assert statuses == ["200", "400"], answers
    assert any("changed since the plan was shown" in a for a in answers), answers
    wait_until(lambda: head(settings.vault) != before, 20, "the one write's commit")
    assert len(git(settings.vault, "log", "--format=%H", f"{before}..HEAD").split()) == 1


def test_undo_through_the_page_writes_what_agentmd_revert_writes(
    daemon: Daemon, settings: Settings, page: Browser, tmp_path: Path
) -> None:
    vault = settings.vault
    for name in ("alpha", "beta"):
        (vault / f"notes/{name}.md").write_text(f"# {name}\n\nA note about {name}.\n", encoding="utf-8")
        before = head(vault)
        wait_until(lambda: head(vault) != before and head(vault), 20, "the edit's commit")  # noqa: B023
    beta, alpha = git(vault, "log", "-2", "--format=%H").split()
    page.open(at(page, ""))
    shown = press(page, f'#changes li[data-sha="{alpha}"] button[data-name="undo"]', tmp_path / "screens" / "undo")
    assert "notes/alpha.md" in shown["plan"] and "origin: revert" in shown["plan"]
    page_commit = head(vault)
    assert not (vault / "notes/alpha.md").exists()
    code, _out, err = cli("revert", beta, "--yes", "--vault", str(vault))
    assert code == 0, err
    cli_commit = head(vault)
    assert cli_commit != page_commit and not (vault / "notes/beta.md").exists()
    page_t, cli_t = trailers(vault, page_commit), trailers(vault, cli_commit)
    assert page_t["origin"] == cli_t["origin"] == ["revert"]
    assert page_t["reverts"] == [alpha] and cli_t["reverts"] == [beta]
    assert page_t["host"] == cli_t["host"]
    assert normalised_diff(vault, page_commit, "alpha") == normalised_diff(vault, cli_commit, "beta")
    page.open(at(page, ""))
    assert "undone by" in page.js(f"document.querySelector('#changes li[data-sha=\"{alpha}\"]').innerText")


def test_resolve_through_the_page_writes_what_agentmd_resolve_writes(
    daemon: Daemon, settings: Settings, page: Browser
) -> None:
    vault = settings.vault
    pairs = []
    for name in ("rivers", "kelp"):
        note = f"notes/{name}.md"
        sibling = f"notes/{name}.conflict-laptop-20261201-100000.md"
        (vault / sibling).write_bytes(conflict_text(f"# {name}\n\nThe laptop's version.\n".encode(), note))
        pairs.append({"path": note, "sibling": sibling})
    before = head(vault)
    record_conflicts(settings.state_dir, pairs)
    wait_until(lambda: head(vault) != before and not git(vault, "status", "--porcelain"), 20, "the siblings' commit")
    keep_theirs = f'#queue li[data-path="{pairs[0]["sibling"]}"] button[data-name="keep-theirs"]'

    def listed() -> bool:  # the review page lists a sibling once the daemon has indexed it, a moment after its commit
        page.open(at(page, "review"))
        return bool(page.js(f"!!document.querySelector({json.dumps(keep_theirs)})"))

    wait_until(listed, 20, "the sibling in the review queue")
    before = head(vault)
    shown = press(page, keep_theirs)
    assert "laptop's version" in shown["plan"]
    page_commit = wait_until(lambda: head(vault) != before and head(vault), 20, "the page's resolve commit")
    code, _out, err = cli("resolve", pairs[1]["sibling"], "--keep", "theirs", "--vault", str(vault))
    assert code == 0, err
    # the command writes the note and removes the sibling, and the daemon commits both (on a loaded machine its
    # debounce may fall between the two writes: then two commits, both `origin: resolve`)
    settled = lambda: head(vault) != page_commit and not git(vault, "status", "--porcelain") and head(vault)  # noqa: E731
    cli_commit = wait_until(settled, 20, "the command's resolve committed")
    assert trailers(vault, page_commit)["origin"] == trailers(vault, cli_commit)["origin"] == ["resolve"]
    for pair in pairs:
        assert not (vault / pair["sibling"]).exists()
        assert "The laptop's version." in (vault / pair["path"]).read_text(encoding="utf-8")

    def changed(old: str, new: str, name: str) -> str:
        return git(vault, "diff", "--name-status", old, new).replace(name, "NAME")

    assert changed(page_commit + "~1", page_commit, "rivers") == changed(page_commit, cli_commit, "kelp")
    assert sorted(changed(page_commit + "~1", page_commit, "rivers").split()) == [
        "D",
        "M",
        "notes/NAME.conflict-laptop-20261201-100000.md",
        "notes/NAME.md",
    ]


# -- the page's protection -------------------------------------------------------------------------------


def request(port: int, path: str, *, method: str = "GET", headers: dict[str, str] | None = None,
            body: dict[str, Any] | None = None) -> tuple[int, str]:  # fmt: skip
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers or {})
    try:
        with opener.open(req, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def session_cookie(daemon: Daemon) -> tuple[str, str, str]:
    """A page session's cookie, CSRF value and path, taken as the page takes them."""
    from agentmd.engine.web.session import COOKIE

    ticket = new_ticket(daemon)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(
        f"http://127.0.0.1:{daemon.port}/ui/session", data=json.dumps({"ticket": ticket}).encode(),
        headers={"Content-Type": "application/json"}, method="POST",
    )  # fmt: skip
    with opener.open(req, timeout=10) as resp:
        cookie = resp.headers["Set-Cookie"]
        base = json.loads(resp.read())["base"]
    assert re.fullmatch(r"/ui/s/[0-9a-f]+_[A-Za-z0-9_-]{24}/", base), base
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert f"Path={base.rstrip('/')};" in cookie + ";"  # scoped to the session's own path, not to /ui
    assert (access_token(daemon.settings.state_dir) or "") not in cookie
    value = cookie.split(";")[0].split("=", 1)[1]
    status, html = request(daemon.port, base, headers={"Cookie": f"{COOKIE}={value}"})
    assert status == 200
    csrf = re.search(r'name="agentmd-csrf" content="([0-9a-f]+)"', html)
    assert csrf is not None and f'<base href="{base}">' in html
    return f"{COOKIE}={value}", csrf.group(1), base


def test_the_page_takes_its_cookie_on_its_session_alone_and_a_write_needs_origin_and_csrf(
    daemon: Daemon, settings: Settings
) -> None:
    port = daemon.port
    assert request(port, "/ui/")[0] == 401
    cookie, csrf, base = session_cookie(daemon)
    assert request(port, "/ui/review", headers={"Cookie": cookie})[0] in (401, 404)  # no session's path
    own = f"http://127.0.0.1:{port}"
    plan = {"action": "confirm", "path": "inbox/first-capture.md"}
    json_type = {"Content-Type": "application/json", "Cookie": cookie}
    api = base + "api/plan"
    assert request(port, "/v1/search", method="POST", headers=json_type, body={"query": "otters"})[0] == 401
    assert request(port, "/status", headers={"Cookie": cookie})[0] == 401
    assert request(port, api, method="POST", headers={**json_type, "Origin": own}, body=plan)[0] == 403
    assert request(port, api, method="POST", headers={**json_type, "X-Agentmd-CSRF": csrf}, body=plan)[0] == 403
    other = {**json_type, "Origin": "http://127.0.0.1:1", "X-Agentmd-CSRF": csrf}
    assert request(port, api, method="POST", headers=other, body=plan)[0] == 403
    good = {**json_type, "Origin": own, "X-Agentmd-CSRF": csrf}
    status, answer = request(port, api, method="POST", headers=good, body=plan)
    assert status == 200 and json.loads(answer)["ready"] is True
    # a plan the door would refuse says so at once and offers no Apply; a reason that is no text is refused
    (settings.vault / "private").mkdir(exist_ok=True)
    (settings.vault / "private/diary.md").write_text("---\ntitle: Diary\n---\ndear diary\n", encoding="utf-8")
    private = {"action": "retire", "path": "private/diary.md"}
    status, answer = request(port, api, method="POST", headers=good, body=private)
    shown = json.loads(answer)
    assert status == 200 and shown["ready"] is False and "refused by the door" in json.dumps(shown), shown
    odd = {"action": "retire", "path": "notes/sea.md", "reason": {"a": 1}}
    status, answer = request(port, api, method="POST", headers=good, body=odd)
    assert status == 400 and "`reason` is text" in answer
    # another session's cookie opens neither this session's pages nor its writes
    cookie2, csrf2, base2 = session_cookie(daemon)
    assert base2 != base and request(port, base, headers={"Cookie": cookie2})[0] == 401
    assert request(port, api, method="POST", headers={**good, "Cookie": cookie2, "X-Agentmd-CSRF": csrf2},
                   body=plan)[0] == 401  # fmt: skip
    used = new_ticket(daemon)
    assert request(port, "/ui/session", method="POST", headers={"Content-Type": "application/json"},
                   body={"ticket": used})[0] == 200  # fmt: skip
    assert request(port, "/ui/session", method="POST", headers={"Content-Type": "application/json"},
                   body={"ticket": used})[0] == 403  # a ticket serves once  # fmt: skip
    # the access token alone (every MCP client's configuration holds it) neither gets a ticket nor is one
    with pytest.raises(DaemonHTTPError) as no_ticket:
        client_of(daemon).post("/v1/page-ticket", {})
    assert no_ticket.value.status == 403 and "operator token" in no_ticket.value.message
    token = access_token(daemon.settings.state_dir)
    assert request(port, "/ui/session", method="POST", headers={"Content-Type": "application/json"},
                   body={"ticket": token})[0] == 403  # fmt: skip
    # nor does it open a page session's pages: neither as a bearer token nor by making a session's cookie with it
    from agentmd.engine.web.session import COOKIE, csrf_value, new_session, session_value

    bearer = {"Authorization": f"Bearer {token}", "Origin": own, "Content-Type": "application/json"}
    assert request(port, "/ui/s/anything/api/plan", method="POST", headers=bearer, body={"action": "undo"})[0] == 401
    mine = new_session()
    forged = {"Cookie": f"{COOKIE}={session_value(token or '', mine)}", "Origin": own,
              "Content-Type": "application/json", "X-Agentmd-CSRF": csrf_value(token or "", mine)}  # fmt: skip
    assert request(port, f"/ui/s/{mine}/", headers=forged)[0] == 401
    assert request(port, f"/ui/s/{mine}/api/plan", method="POST", headers=forged, body={"action": "undo"})[0] == 401
    code, _out, err = cli("token", "rotate", "--vault", str(settings.vault))
    assert code == 0, err
    assert request(port, base, headers={"Cookie": cookie})[0] == 401  # a rotation ends every session


def test_a_request_another_page_made_a_planted_cookie_a_deep_body_and_a_link_out_are_refused(
    daemon: Daemon, settings: Settings, tmp_path: Path
) -> None:
    from agentmd.engine.web.session import COOKIE

    port = daemon.port
    cookie, _csrf, base = session_cookie(daemon)
    for site, status in (("same-site", 403), ("cross-site", 403), ("same-origin", 200), ("none", 200)):
        got, text = request(port, base + "review", headers={"Cookie": cookie, "Sec-Fetch-Site": site})
        assert got == status, (site, text)
        if status == 403:
            assert "agentmd open" in text
    planted = f"{COOKIE}=junk; {cookie}"  # a page on another port planted a cookie of the same name
    assert request(port, base, headers={"Cookie": planted})[0] == 200
    json_type = {"Content-Type": "application/json"}
    deep = urllib.request.Request(f"http://127.0.0.1:{port}/ui/session", data=b"[" * 100_000, headers=json_type,
                                  method="POST")  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(deep, timeout=30)
    assert caught.value.code in (400, 403)
    outside = tmp_path / "secret.txt"
    outside.write_text("the owner's secret\n", encoding="utf-8")
    (settings.vault / "notes" / "leak.md").symlink_to(outside)
    (settings.vault / "etc-link").symlink_to(tmp_path, target_is_directory=True)
    for path in ("notes/leak.md", "etc-link/secret.txt"):
        got, text = request(port, base + "note?path=" + path, headers={"Cookie": cookie})
        assert got == 404 and "the owner's secret" not in text, (path, text)


def test_agentmd_open_prints_a_one_time_url_that_opens_the_page(daemon: Daemon, settings: Settings) -> None:
    code, out, err = cli("open", "--print", "--json", "--vault", str(settings.vault))
    assert code == 0, err
    url = json.loads(out)["url"]
    assert url.startswith(f"http://127.0.0.1:{daemon.port}/ui/enter#")
    ticket = url.split("#", 1)[1]
    status, _ = request(daemon.port, "/ui/session", method="POST", headers={"Content-Type": "application/json"},
                        body={"ticket": ticket})  # fmt: skip
    assert status == 200


def test_agentmd_open_starts_the_browser_with_a_file_and_never_the_ticket(
    daemon: Daemon, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The browser's command line (which any local user reads in /proc) holds the name of an owner-only file,
    not the ticket; that file, opened in a real browser, leads on to a page session."""
    said = tmp_path / "browser-argv.txt"
    fake = tmp_path / "fake-browser"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{said}"\n', encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(fake))
    code, out, err = cli("open", "--json", "--vault", str(settings.vault))
    assert code == 0 and json.loads(out)["opened"] is True, err
    wait_until(lambda: said.exists() and said.read_text(encoding="utf-8").strip(), 10, "the browser started")
    argv = said.read_text(encoding="utf-8").strip()
    assert argv.startswith("file://") and "#" not in argv and "ticket" not in argv, argv
    redirect = Path(urllib.parse.unquote(argv.removeprefix("file://")))
    assert redirect.stat().st_mode & 0o777 == 0o600 and redirect.parent.stat().st_mode & 0o777 == 0o700
    assert f"127.0.0.1:{daemon.port}/ui/enter#" in redirect.read_text(encoding="utf-8")
    with browser(tmp_path / "profile") as b:
        b.open(argv)
        b.wait("location.pathname.startsWith('/ui/s/') && !!document.getElementById('health')")


ATTACK = """<!doctype html><html><body><iframe name="sink"></iframe>
<img src="/ui/steal.png"><img src="/ui/s/steal.png"><script>
const D = "http://127.0.0.1:%(port)d";
const results = {};
async function attempt(name, run) { try { results[name] = await run(); } catch (e) { results[name] = "error:" + e; } }
async function readable(r) { return r.type === "opaque" ? "opaque" : "read:" + r.status + ":" + (await r.text()); }
async function main() {
  const body = JSON.stringify(%(request)s);
  for (const path of ["/ui/api/plan", "/ui/api/apply"]) {
    for (const type of ["text/plain", "application/json"]) {
      await attempt(`no-cors ${path} ${type}`, async () => readable(await fetch(D + path, {method: "POST",
        mode: "no-cors", credentials: "include", headers: {"Content-Type": type}, body})));
      await attempt(`cors ${path} ${type}`, async () => readable(await fetch(D + path, {method: "POST",
        credentials: "include", headers: {"Content-Type": type, "X-Agentmd-CSRF": "guess"}, body})));
    }
    const f = document.createElement("form");
    f.method = "POST"; f.action = D + path; f.enctype = "text/plain"; f.target = "sink";
    const i = document.createElement("input"); i.name = body.slice(0, -1) + ', "x": "'; i.value = '"}';
    f.appendChild(i); document.body.appendChild(f); f.submit();
    await new Promise((r) => setTimeout(r, 300));
  }
  for (const path of ["/ui/", "/ui/review", "/ui/note?path=notes/otters.md"]) {
    await attempt(`get ${path}`, async () => readable(await fetch(D + path, {credentials: "include"})));
  }
  await attempt("frame", () => new Promise((ok) => {
    const fr = document.createElement("iframe"); fr.src = D + "/ui/";
    fr.onload = () => { try { ok("read:" + fr.contentDocument.body.innerText); } catch (e) { ok("blocked"); } };
    document.body.appendChild(fr); setTimeout(() => ok("no-load"), 3000);
  }));
  await fetch("/report", {method: "POST", body: JSON.stringify(results)});
}
main();
</script></body></html>"""


def test_a_page_on_another_loopback_port_cannot_read_or_write_the_page(
    daemon: Daemon, settings: Settings, page: Browser
) -> None:
    """The browser holds a live page session; a page on another loopback port (the same site to the browser,
    so the cookie could ride along) tries to read the views and to confirm a note through the page's API."""
    reports: list[dict[str, str]] = []
    cookies: list[str] = []  # what the browser sent the attacker's own server (browsers share cookies by host)
    plan = {"action": "confirm", "path": "inbox/first-capture.md"}
    html = (ATTACK % {"port": daemon.port, "request": json.dumps(plan)}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            cookies.append(self.headers.get("Cookie") or "")
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

        def do_POST(self) -> None:
            reports.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0")))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    before = head(settings.vault)
    note = (settings.vault / "inbox/first-capture.md").read_bytes()
    try:
        page.open(f"http://127.0.0.1:{server.server_address[1]}/")
        wait_until(lambda: reports, 60, "the attack page's report")
    finally:
        server.shutdown()
        server.server_close()
    results = reports[0]
    assert len(results) >= 10, results
    assert len(cookies) >= 2 and not any("agentmd_page" in c for c in cookies), cookies
    assert {k: v for k, v in results.items() if v.startswith("read:")} == {}
    wait_until(lambda: daemon.commit_cycles >= 1, 20, "a commit cycle")
    assert (settings.vault / "inbox/first-capture.md").read_bytes() == note
    assert head(settings.vault) == before
    page.open(at(page, ""))  # the session itself still works
    assert page.js("!!document.getElementById('health')")
