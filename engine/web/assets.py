"""The page's one style sheet, one script and its icon, served from /ui/static/ (no network at run time).

The script does three things: trade the enter page's one-time ticket for the session cookie; for a button
that names an action (undo, revert, confirm, retire, resolve), ask the daemon for the plan, show it, and only
on "Apply" ask it to write; and nothing else. Every write carries the CSRF value from the page's meta tag.
"""

from __future__ import annotations

CSS = """
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fbfbfa; --muted: #5b6470; --line: #d6d9de;
  --accent: #1f5fbf; --green: #1d7a3a; --yellow: #9a6a00; --red: #b3261e; --panel: #eef2f8; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --bg: #15181c; --muted: #a0a8b3; --line: #333a43;
  --accent: #7fb0ff; --green: #5cc47e; --yellow: #e0b84f; --red: #ff7b72; --panel: #1f2630; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .6rem 1rem;
  border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; }
nav { display: flex; flex-wrap: wrap; gap: .25rem; }
nav a { padding: .45rem .7rem; border-radius: .4rem; text-decoration: none; color: var(--fg); }
nav a[aria-current="page"] { background: var(--panel); font-weight: 600; }
main { max-width: 64rem; margin: 0 auto; padding: 1rem; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, main:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: .5rem; background: var(--bg); padding: .4rem; }
h1 { font-size: 1.4rem; margin: .2rem 0 .8rem; } h2 { font-size: 1.15rem; margin: 1.4rem 0 .6rem; }
.health { padding: .6rem .8rem; border-radius: .4rem; border-left: .4rem solid var(--muted); background: var(--panel); }
.health.green { border-color: var(--green); } .health.yellow { border-color: var(--yellow); }
.health.red { border-color: var(--red); }
.health ul { margin: .3rem 0 0; padding-left: 1.2rem; }
.muted { color: var(--muted); }
svg.chart { width: 100%; height: auto; max-width: 100%; display: block; }
svg.graph { max-height: 30rem; }
svg.strip { width: auto; height: 24px; max-width: 100%; }
#frontmatter th { width: 11rem; }
svg.chart text { fill: var(--muted); font-size: 11px; }
svg.graph text { fill: var(--fg); font-size: 11px; }
svg.graph a:focus circle { stroke: var(--accent); stroke-width: 4; }
svg .edge { stroke: var(--line); stroke-width: 1.2; }
.legend { display: flex; flex-wrap: wrap; gap: .3rem 1rem; padding: 0; list-style: none; margin: .4rem 0; }
.legend svg { vertical-align: middle; margin-right: .3rem; }
ul.changes, ul.items { list-style: none; padding: 0; margin: 0; }
ul.changes li, ul.items li { border-bottom: 1px solid var(--line); padding: .55rem 0; display: flex;
  flex-wrap: wrap; gap: .3rem .8rem; align-items: baseline; }
.when { color: var(--muted); font-variant-numeric: tabular-nums; min-width: 7.5rem; }
.origin { font-size: .85rem; padding: .05rem .45rem; border-radius: 1rem; background: var(--panel); }
.grow { flex: 1 1 16rem; min-width: 0; overflow-wrap: anywhere; }
.why { flex-basis: 100%; color: var(--muted); font-size: .92rem; }
.actions { display: flex; flex-wrap: wrap; gap: .4rem; }
button { font: inherit; min-height: 2.5rem; padding: .35rem .8rem; border-radius: .4rem;
  border: 1px solid var(--line); background: var(--panel); color: var(--fg); cursor: pointer; }
button.primary { background: var(--accent); color: var(--bg); border-color: var(--accent); }
.plan { border: 2px solid var(--accent); border-radius: .5rem; padding: .8rem; margin-bottom: 1rem;
  background: var(--panel); }
.plan-field { display: flex; flex-direction: column; gap: .2rem; margin: .5rem 0; }
.plan-field input { font: inherit; padding: .3rem .4rem; border: 1px solid var(--line); border-radius: .3rem;
  max-width: 100%; box-sizing: border-box; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--panel); padding: .6rem; border-radius: .4rem;
  font-size: .88rem; max-width: 100%; overflow-x: auto; }
pre.diff .add { color: var(--green); } pre.diff .del { color: var(--red); } pre.diff .hunk { color: var(--accent); }
table { border-collapse: collapse; width: 100%; } .scroll { overflow-x: auto; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--line);
  overflow-wrap: anywhere; }
form.search { display: flex; flex-wrap: wrap; gap: .5rem; }
form.search input[type=search] { flex: 1 1 14rem; font: inherit; padding: .45rem; min-height: 2.5rem; }
.result { border-bottom: 1px solid var(--line); padding: .6rem 0; }
.score { font-variant-numeric: tabular-nums; font-weight: 600; }
dl.explain { display: grid; grid-template-columns: minmax(6rem, max-content) 1fr; gap: .1rem .8rem; margin: .3rem 0;
  font-size: .9rem; } dl.explain dt { color: var(--muted); } dl.explain dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 40rem) { main { padding: .6rem; } .when { min-width: 0; } }
"""

# The tab's icon. Named in every page's head, so a browser never asks the listener for `/favicon.ico`, which
# like every path outside the page would want the access token.
ICON = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">\
<rect width="16" height="16" rx="3" fill="#1f5fbf"/>\
<path d="M4 12V4h2l2 3 2-3h2v8h-2V7.5L8 10 6 7.5V12z" fill="#fff"/></svg>
"""

JS = r"""
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="agentmd-csrf"]');
  var csrf = meta ? meta.getAttribute("content") : "";

  function post(url, body) {
    return fetch(url, {method: "POST", credentials: "same-origin", body: JSON.stringify(body),
      headers: {"Content-Type": "application/json", "X-Agentmd-CSRF": csrf}})
      .then(function (r) {
        return r.json().catch(function () { return {error: "the daemon answered " + r.status}; })
          .then(function (data) { if (!r.ok) { throw new Error(data.error || ("HTTP " + r.status)); } return data; });
      });
  }

  function el(name, text, cls) {
    var e = document.createElement(name);
    if (text !== undefined) { e.textContent = text; }
    if (cls) { e.className = cls; }
    return e;
  }

  if (document.body.getAttribute("data-page") === "enter") {
    var secret = location.hash.slice(1);
    history.replaceState(null, "", location.pathname);
    var say = document.getElementById("enter-message");
    if (!secret) { say.textContent = "No ticket: run `agentmd open` to open the page."; return; }
    post("/ui/session", {ticket: secret})
      .then(function (r) { location.replace(r.base); })
      .catch(function (e) { say.textContent = e.message; });
    return;
  }

  var panel = document.getElementById("plan");
  if (!panel) { return; }

  function show(title, lines, buttons, state, field) {
    panel.textContent = "";
    panel.hidden = false;
    panel.setAttribute("data-state", state);
    var h = el("h2", title);
    h.tabIndex = -1;
    panel.appendChild(h);
    if (lines && lines.length) { panel.appendChild(el("pre", lines.join("\n"), "plan-lines")); }
    if (field) { panel.appendChild(field); }
    var row = el("div", undefined, "actions");
    buttons.forEach(function (b) { row.appendChild(b); });
    panel.appendChild(row);
    panel.scrollIntoView({block: "start"});
    (buttons[0] || h).focus();
  }

  function button(label, cls, onclick, id) {
    var b = el("button", label, cls);
    b.type = "button";
    if (id) { b.id = id; }
    b.addEventListener("click", onclick);
    return b;
  }

  function close() { panel.hidden = true; panel.textContent = ""; }

  function reload() { location.reload(); }

  function reasonField(label) {  // an optional line of text the write carries (a retirement's reason)
    var wrap = el("label", undefined, "plan-field");
    wrap.appendChild(el("span", label));
    var input = el("input");
    input.type = "text";
    input.id = "plan-reason";
    input.maxLength = 300;
    wrap.appendChild(input);
    return wrap;
  }

  function plan(request) {
    show("Planning…", [], [], "planning");
    post("api/plan", request).then(function (p) {
      var buttons = [];
      var field = p.ready && p.reason_label ? reasonField(p.reason_label) : null;
      function go() {
        var r = p.apply;
        var said = field ? field.querySelector("input").value.trim() : "";
        if (said) { r = Object.assign({}, r, {reason: said}); }
        apply(r);
      }
      if (p.ready) { buttons.push(button(p.apply_label || "Apply", "primary", go, "plan-apply")); }
      if (field) {
        field.querySelector("input").addEventListener("keydown", function (ev) {
          if (ev.key === "Enter") { ev.preventDefault(); go(); }
        });
      }
      buttons.push(button(p.ready ? "Cancel" : "Close", "", close, "plan-cancel"));
      show(p.title, p.lines, buttons, p.ready ? "planned" : "nothing", field);
    }).catch(function (e) {
      show("Refused", [e.message], [button("Close", "", close, "plan-cancel")], "refused");
    });
  }

  var writing = false;  // one write at a time: a second press of Apply while one is on its way does nothing

  function apply(request) {
    if (writing) { return; }
    writing = true;
    show("Writing…", [], [], "applying");
    post("api/apply", request).then(function (r) {
      show(r.title, r.lines, [button("Reload", "primary", reload, "plan-reload")], "applied");
    }).catch(function (e) {
      show("Refused", [e.message], [button("Close", "", close, "plan-cancel")], "refused");
    }).then(function () { writing = false; });
  }

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest ? ev.target.closest("button[data-request]") : null;
    if (!b) { return; }
    ev.preventDefault();
    plan(JSON.parse(b.getAttribute("data-request")));
  });

  document.addEventListener("click", function (ev) {  // the skip link, on this page whatever its <base>
    var a = ev.target.closest ? ev.target.closest("a.skip") : null;
    if (!a) { return; }
    ev.preventDefault();
    document.getElementById("main").focus();
  });

  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape" && !panel.hidden) { close(); }
  });
})();
"""
