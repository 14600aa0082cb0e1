"""A web page on another loopback port attacks the daemon from a real browser: headless Chromium (Debian's
package; `./dev test` installs it) loads a page served on 127.0.0.1:<other port> whose script tries every way
a page has to send a request elsewhere: `fetch` in `no-cors` and `cors` modes, with and without a JSON
content type, `navigator.sendBeacon`, an XMLHttpRequest with credentials, and HTML form posts of each
encoding into a hidden frame, against `/v1/capture`, `/v1/search`, `/status` and `/mcp`. It reports what it
could read back to its own server. The bar: nothing written, nothing readable, and the daemon's log shows the
requests did arrive and were refused.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import running_daemon, vault_settings, wait_until

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.settings import Settings

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (Debian's `chromium`; ./dev test installs it)"),
]

PAGE = """<!doctype html><html><body>
<iframe name="sink" style="display:none"></iframe>
<div id="forms"></div>
<script>
const D = "http://127.0.0.1:%(port)d";
const note = (t) => JSON.stringify({title: "Poisoned by a page " + t, body: "Injected from another origin: " + t});
const init = JSON.stringify({jsonrpc: "2.0", id: 1, method: "initialize", params: {protocolVersion: "2025-06-18",
  capabilities: {}, clientInfo: {name: "page", version: "1"}}});
const results = {};
async function attempt(name, run) {
  try { results[name] = await run(); } catch (e) { results[name] = "error:" + e; }
}
async function readable(response) {
  if (response.type === "opaque") return "opaque";
  return "read:" + response.status + ":" + (await response.text());
}
async function main() {
  const targets = [["capture", "/v1/capture", note("fetch")],
                   ["search", "/v1/search", JSON.stringify({query: "otters"})], ["mcp", "/mcp", init]];
  for (const [name, path, body] of targets) {
    for (const type of ["text/plain", "application/json", "application/x-www-form-urlencoded"]) {
      await attempt(`fetch-no-cors ${name} ${type}`, async () => readable(await fetch(D + path,
        {method: "POST", mode: "no-cors", headers: {"Content-Type": type}, body})));
      await attempt(`fetch-cors ${name} ${type}`, async () => readable(await fetch(D + path,
        {method: "POST", headers: {"Content-Type": type, "Accept": "application/json, text/event-stream"}, body})));
    }
    await attempt(`beacon ${name}`, async () => "queued:" + navigator.sendBeacon(D + path,
      new Blob([body], {type: "text/plain"})));
    await attempt(`xhr ${name}`, () => new Promise((ok) => {
      const x = new XMLHttpRequest(); x.open("POST", D + path); x.withCredentials = true;
      x.setRequestHeader("Content-Type", "text/plain");
      x.onload = () => ok("read:" + x.status + ":" + x.responseText); x.onerror = () => ok("error:xhr");
      x.send(body);
    }));
  }
  for (const path of ["/status", "/health"]) {
    await attempt(`get ${path}`, async () => readable(await fetch(D + path)));
    await attempt(`get-no-cors ${path}`, async () => readable(await fetch(D + path, {mode: "no-cors"})));
  }
  const forms = document.getElementById("forms");
  for (const enc of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
    const f = document.createElement("form");
    f.method = "POST"; f.action = D + "/v1/capture"; f.enctype = enc; f.target = "sink";
    const i = document.createElement("input");
    i.name = '{"title": "Poisoned by a form", "body": "x", "pad": "'; i.value = '"}';
    f.appendChild(i); forms.appendChild(f); f.submit();
    await new Promise((r) => setTimeout(r, 300));
    results["form " + enc] = "submitted";
  }
  await new Promise((r) => setTimeout(r, 500));
  await fetch("/report", {method: "POST", body: JSON.stringify(results)});
}
main();
</script></body></html>"""


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    return vault_settings(tmp_path / "vault", {"README.md": "# Vault\n", "notes/otters.md": "# Otters\n\nOtters.\n"})


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    with running_daemon(settings, commit_debounce=0.1) as d:
        yield d


class AttackSite:
    """The attacker's page on its own loopback port, and the results its script reports back."""

    def __init__(self, daemon_port: int) -> None:
        self.reports: list[dict[str, str]] = []
        page = (PAGE % {"port": daemon_port}).encode()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                site.reports.append(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def vault_files(vault: Path) -> dict[str, bytes]:
    files = (p for p in vault.rglob("*") if p.is_file() and ".git" not in p.parts)
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in files}


def test_a_page_on_another_loopback_port_writes_nothing_and_reads_nothing(
    daemon: Daemon, settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentmd.server")
    before = vault_files(settings.vault)
    head = subprocess.run(["git", "-C", str(settings.vault), "rev-parse", "HEAD"], capture_output=True, text=True)
    site = AttackSite(daemon.port)
    assert CHROMIUM is not None
    browser = subprocess.Popen(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            f"--user-data-dir={tmp_path / 'profile'}",
            site.url,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: site.reports, 90, "the attack page's report")
    finally:
        browser.kill()
        browser.wait(10)
        site.close()
    results = site.reports[0]
    assert len(results) >= 30, results
    readable = {name: r for name, r in results.items() if r.startswith("read:")}
    assert readable == {}, readable
    refused = [r for r in caplog.records if "refused a request from the web page origin" in r.getMessage()]
    assert len(refused) >= 10, "the attacks never reached the daemon, so the test proves nothing"
    wait_until(lambda: daemon.commit_cycles >= 1, 20, "a commit cycle")
    assert vault_files(settings.vault) == before
    after = subprocess.run(["git", "-C", str(settings.vault), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert after.stdout == head.stdout
