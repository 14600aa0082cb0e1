"""The page's views as HTML (engine/web/html.py escapes every value): Today, Review, Search, a note, a change."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from agentmd.engine.times import parse_utc
from agentmd.engine.web.facts import Commit, NoteText, show_value
from agentmd.engine.web.html import Markup, data_json, esc, fmt, join
from agentmd.engine.web.svg import COLOURS, KINDS, legend, swatch, timeline

RECENT = 40  # changes listed under the timeline


def note_href(path: str) -> str:
    return "note?" + urlencode({"path": path})


def change_href(sha: str) -> str:
    return "change/" + quote(sha)


def action_button(label: str, request: Mapping[str, Any], name: str = "") -> Markup:
    """A button the script turns into plan → apply (its plan is shown before anything is written)."""
    return fmt('<button type="button" data-request="{}" data-name="{}">{}</button>', data_json(dict(request)),
               name or label.lower(), label)  # fmt: skip


def health_line(status: Mapping[str, Any]) -> Markup:
    colour = str(status.get("color") or "unknown")
    reasons = [*status.get("red", []), *status.get("yellow", [])]
    head = "healthy" if colour == "green" else f"{colour}: {len(reasons)} reason(s)"
    items = join(fmt("<li>{}</li>", r) for r in reasons)
    return fmt('<div class="health {}" id="health"><strong>Health: {}</strong>{}</div>', colour, head,
               fmt("<ul>{}</ul>", items) if reasons else Markup(""))  # fmt: skip


def _when(at: str) -> str:
    try:
        return dt.datetime.fromisoformat(at).astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return at


def change_row(c: Commit) -> Markup:
    undo = (
        action_button("Undo…", {"action": "revert", "commit": c.sha}, "undo")
        if c.undoable
        else fmt('<span class="muted">undone by <a href="{}">{}</a></span>', change_href(c.undone_by), c.undone_by[:10])
        if c.undone_by
        else Markup("")
    )
    return fmt(
        '<li data-sha="{}"><span class="when">{}</span><span class="origin">{}{}</span>'
        '<span class="grow"><a href="{}">{}</a> <span class="muted">{}</span></span>'
        '<span class="actions">{}</span></li>',
        c.sha, _when(c.at), swatch(COLOURS[c.kind]), c.origin, change_href(c.sha), c.subject, c.sha[:10], undo,
    )  # fmt: skip


def queue_summary(queue: Mapping[str, Any]) -> Markup:
    """How many notes await review, and how the baseline cuts them: those captured since it (what turns the
    health red) and the inherited backlog, with its oldest age and the baseline's date."""
    count = queue.get("count")
    if count is None:
        return Markup("")
    inherited = int(queue.get("inherited") or 0)
    total = queue.get("total", count + inherited)
    oldest = queue.get("oldest_age_days")
    since = fmt("{} since the queue baseline", count)
    if oldest is not None:
        since = fmt("{}, the oldest {} days old", since, oldest)
    backlog = Markup("")
    if inherited:
        age = queue.get("inherited_oldest_age_days")
        backlog = fmt(
            "; {} inherited from before {}{}, shown but never red",
            inherited, str(queue.get("baseline_at") or "")[:10] or "the baseline",
            fmt(" (the oldest {} days old)", age) if age is not None else Markup(""),
        )  # fmt: skip
    return fmt('<p id="queue-summary"><a href="review">{} note(s) await review</a> <span class="muted">({}{})'
               "</span></p>", total, since, backlog)  # fmt: skip


def today(status: Mapping[str, Any], days: Sequence[str], counts: Mapping, commits: Sequence[Commit]) -> Markup:
    review = queue_summary(status.get("queue") or {})
    rows = join(change_row(c) for c in commits[:RECENT])
    more = fmt('<p class="muted">… and {} older change(s) in these days (`agentmd log`)</p>', len(commits) - RECENT)
    return fmt(
        """<h1>Today</h1>{health}{review}
<h2 id="timeline-title">Changes by origin, last {n} days</h2>{chart}{legend}
<h2>Recent changes</h2>
<div class="actions">{undo}</div>
<ul class="changes" id="changes">{rows}</ul>{more}""",
        health=health_line(status), review=review, n=len(days), chart=timeline(days, counts), legend=legend(KINDS),
        undo=action_button("Undo the last change made here…", {"action": "undo"}, "undo-last"),
        rows=rows or Markup('<li class="muted">no commits in these days</li>'),
        more=more if len(commits) > RECENT else Markup(""),
    )  # fmt: skip


def review(items: Sequence[Any], now: dt.datetime) -> Markup:
    rows = []
    for item in items:
        captured = parse_utc(item.captured)  # a date alone is that day's start, UTC, as the queue reads it
        age = f"{(now - captured).days}d" if captured is not None else "?"
        if item.reason == "conflict":
            buttons = join(action_button(f"Keep {k}…", {"action": "resolve", "path": item.path, "keep": k}, f"keep-{k}")
                           for k in ("mine", "theirs", "both"))  # fmt: skip
        else:
            buttons = join([action_button("Confirm…", {"action": "confirm", "path": item.path}, "confirm"),
                            action_button("Retire…", {"action": "retire", "path": item.path}, "retire")])  # fmt: skip
        rows.append(fmt(
            '<li data-path="{}"><span class="when">{} waiting</span><span class="origin">{}</span>'
            '<span class="grow"><a href="{}">{}</a></span><span class="actions">{}</span>'
            '<span class="why">{}: {}</span></li>',
            item.path, age, item.origin, note_href(item.path), item.path, buttons, item.reason, item.why))  # fmt: skip
    body = join(rows) if rows else Markup('<li class="muted">nothing awaits review</li>')
    return fmt('<h1>Review</h1><p class="muted">{} note(s) await judgment, oldest first; each action shows its plan '
               'before it writes.</p><ul class="items" id="queue">{}</ul>', len(items), body)  # fmt: skip


def _explain(row: Mapping[str, Any]) -> Markup:
    explain = dict(row.get("explain") or {})
    dense = explain.pop("dense", None)
    parts = [("arms", ", ".join(row.get("arms") or ["lexical"])),
             ("rank score", explain.pop("rank_score", None)), ("raw score", explain.pop("raw_score", None)),
             ("penalties", ", ".join(row.get("penalties") or []) or "none")]  # fmt: skip
    for key in ("plan", "fields", "fusion_ranks", "multipliers", "name"):
        if key in explain:
            parts.append((f"lexical {key}", json.dumps(explain[key], ensure_ascii=False, sort_keys=True)))
    if dense is not None:
        parts.append(("dense", json.dumps(dense, ensure_ascii=False, sort_keys=True)))
    return fmt('<dl class="explain">{}</dl>', join(fmt("<dt>{}</dt><dd>{}</dd>", k, v) for k, v in parts))


def _result(row: Mapping[str, Any], hidden: bool) -> Markup:
    note = str(row.get("note") or row.get("path") or "")
    score = row.get("score")
    shown = f"{score:.2f}" if isinstance(score, int | float) else "–"
    return fmt(
        '<article class="result{}" data-note="{}"><div><span class="score" title="confidence, 0 to 1">{}</span> '
        '<a href="{}">{}</a> <span class="muted">{}</span></div><p>{}</p>'
        "<details><summary>Why (both arms' evidence)</summary>{}</details></article>",
        " hidden" if hidden else "", note, shown, note_href(note), row.get("title") or note, row.get("path"),
        row.get("snippet") or "", _explain(row),
    )  # fmt: skip


def search(query: str, response: Mapping[str, Any] | None, hidden: Sequence[Mapping[str, Any]],
           recall: Mapping[str, Any] | None, archived: bool = False) -> Markup:  # fmt: skip
    form = fmt(
        '<form class="search" method="get" action="search" role="search">'
        '<label for="q" class="muted">Search</label><input type="search" id="q" name="q" value="{}" '
        'autocomplete="off"><button type="submit" class="primary">Search</button>'
        '<button type="submit" name="recall" value="1">What would the hook inject?</button>'
        '<label class="muted"><input type="checkbox" id="archived" name="archived" value="1"{}> '
        "also archived, superseded and staged notes</label></form>",
        query, Markup(" checked") if archived else Markup(""),
    )  # fmt: skip
    if response is None:
        return fmt("<h1>Search</h1>{}", form)
    results = join(_result(r, False) for r in response.get("results", []))
    floor = response.get("floor")
    floor_text = f"{floor:.2f}" if isinstance(floor, int | float) else "–"
    below = join(_result(r, True) for r in hidden)
    hidden_part = fmt(
        '<h2>What the floor hid ({})</h2><p class="muted">results under the confidence floor {}: a search '
        "returns none of them</p>{}",
        len(hidden),
        floor_text,
        below or Markup('<p class="muted">nothing</p>'),
    )
    note = str(response.get("note") or "").replace("pass include_archived", "tick the box above to see them")
    note = note.replace("(include_archived)", "(tick the box above to see them)")
    return fmt(
        '<h1>Search</h1>{form}{recall}<h2>Results ({n})</h2><p class="muted">mode {mode}; confidence floor {floor}'
        "{note}</p><div id=\"results\">{results}</div>{hidden}",
        form=form, recall=recall_part(recall), n=len(response.get("results", [])), mode=response.get("mode", "–"),
        floor=floor_text, note=f"; {note}" if note else "", results=results or Markup('<p class="muted">none</p>'),
        hidden=hidden_part,
    )  # fmt: skip


def recall_part(recall: Mapping[str, Any] | None) -> Markup:
    if recall is None:
        return Markup("")
    if recall.get("error"):
        return fmt('<h2>What the hook would inject</h2><p role="alert">{}</p>', recall["error"])
    text = recall.get("text") or ""
    considered = recall.get("entries") or []
    rows = join(fmt("<tr><td>{}</td><td>{}</td><td>{}</td></tr>", e.get("outcome"), e.get("path"), e.get("tokens"))
                for e in considered)  # fmt: skip
    return fmt(
        '<section id="recall"><h2>What the hook would inject</h2><p class="muted">{} estimated tokens; query {}; '
        "via {} (a preview: nothing was counted)</p><pre>{}</pre><details><summary>Every candidate ({})</summary>"
        '<div class="scroll"><table><tr><th>outcome</th><th>note</th><th>tokens</th></tr>{}</table></div>'
        "</details></section>",
        recall.get("tokens", 0), recall.get("query"), recall.get("via"), text or "(nothing: the hook stays silent)",
        len(considered), rows,
    )  # fmt: skip


def note(n: NoteText, links: Mapping[str, Any], picture: Markup, history: Sequence[Any], strip: Markup) -> Markup:
    fm_rows = join(fmt("<tr><th>{}</th><td>{}</td></tr>", k, show_value(v)) for k, v in n.frontmatter.items())
    problem = Markup("")
    if n.frontmatter_problem:
        problem = fmt('<p role="alert">frontmatter cannot be read: {}</p>', n.frontmatter_problem)
    out = join(
        fmt("<li>{} → {}</li>", e["written"], fmt('<a href="{}">{}</a>', note_href(e["resolved"]), e["resolved"])
            if e.get("resolved") else Markup('<span class="muted">(dangling)</span>'))
        for e in links.get("out", []) if e.get("target")
    )  # fmt: skip
    back = join(fmt('<li><a href="{}">{}</a> <span class="muted">line {}: {}</span></li>', note_href(e["path"]),
                    e["path"], e["line"], e["written"]) for e in links.get("back", []))  # fmt: skip
    by_origin = Counter(c.origin for c in history)
    hist = join(fmt('<li><span class="when">{}</span><span class="origin">{}</span><span class="grow">'
                    '<a href="{}">{}</a> {}</span></li>', _when(c.at), c.origin, change_href(c.sha), c.sha[:10],
                    c.summary) for c in reversed(history))  # fmt: skip
    counts = ", ".join(f"{o} {k}" for o, k in sorted(by_origin.items()))
    return fmt(
        """<h1>{title}</h1><p class="muted">{path}</p>
<h2>Frontmatter</h2>{problem}<div class="scroll"><table id="frontmatter">{fm}</table></div>
<h2>Neighbourhood</h2>{picture}
<h2>Links out ({n_out})</h2><ul id="links-out">{out}</ul>
<h2>Backlinks ({n_back})</h2><ul id="backlinks">{back}</ul>
<h2>History ({n_hist}: {counts})</h2>{strip}<ul class="changes" id="history">{hist}</ul>
<h2>Text</h2><pre id="note-body">{body}</pre>""",
        title=n.title, path=n.path, problem=problem, fm=fm_rows, picture=picture, n_out=len(links.get("out", [])),
        out=out, n_back=len(links.get("back", [])), back=back, n_hist=len(history), counts=counts or "none",
        strip=strip, hist=hist, body=n.body,
    )  # fmt: skip


def change(c: Commit, patch: str, cut: bool) -> Markup:
    lines = []
    for line in patch.splitlines():
        cls = (
            "add"
            if line.startswith("+") and not line.startswith("+++")
            else "del"
            if line.startswith("-") and not line.startswith("---")
            else "hunk"
            if line.startswith("@@")
            else ""
        )
        lines.append(fmt('<span class="{}">{}</span>', cls, line) if cls else esc(line))  # fmt: skip
    undo = action_button("Undo this change…", {"action": "revert", "commit": c.sha}, "undo") if c.undoable else \
        fmt('<p class="muted">{}</p>', f"undone by {c.undone_by[:10]}" if c.undone_by else
            "a merge or the first commit: it is not undone as one change")  # fmt: skip
    return fmt(
        '<h1>{}</h1><p><span class="origin">{}{}</span> <span class="muted">{} · {} · {}</span></p>'
        '<div class="actions">{}</div><pre class="diff" id="diff">{}</pre>{}',
        c.subject, swatch(COLOURS[c.kind]), c.origin, _when(c.at), c.host or "no host", c.sha, undo,
        join(lines, "\n"), fmt('<p class="muted">the patch is cut here (too long to show)</p>') if cut else "",
    )  # fmt: skip
