"""The page's two pictures, drawn here as inline SVG (no script, no library, the same input the same bytes):

- `timeline`: commits a day over the last days, each day's bar stacked by kind of origin (captures, local
  edits, the night's enrichment, sync);
- `neighbourhood`: a note's links within two steps, clusters coloured, laid out on rings: the note in the
  middle, each cluster around a point of an outer ring (in the clusters' order), its members on a small ring.
Every mark has a `<title>` (a tooltip, and what a screen reader reads); each node links to its note.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentmd.engine.web.html import Markup, esc, fmt, join

# kinds of origin, in the order the bars stack them, with their colours
KINDS = (
    ("captures", "#2f7ed8"),
    ("local edits", "#8e5bd6"),
    ("enrichment", "#d98b1c"),
    ("sync", "#2aa198"),
    ("undo", "#c0392b"),
)
COLOURS = dict(KINDS)
CAPTURE_ORIGINS = {"capture", "phone", "ingest", "self-probe", "probe", "morning"}
PALETTE = ("#2f7ed8", "#d98b1c", "#2aa198", "#8e5bd6", "#c0392b", "#6b8e23", "#d6336c", "#5c6bc0", "#8d6e63")


def kind_of(origin: str, merge: bool) -> str:
    """The kind a commit's origin counts as on the timeline."""
    if merge or origin == "sync":
        return "sync"
    if origin == "enrich":
        return "enrichment"
    if origin == "revert":
        return "undo"
    if origin in CAPTURE_ORIGINS:
        return "captures"
    return "local edits"


def swatch(colour: str) -> Markup:
    return fmt('<svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" rx="2" fill="{}"/></svg>',
               colour)  # fmt: skip


def legend(kinds: Sequence[tuple[str, str]]) -> Markup:
    return fmt('<ul class="legend">{}</ul>', join(fmt("<li>{}{}</li>", swatch(c), k) for k, c in kinds))


def timeline(days: Sequence[str], counts: Mapping[str, Mapping[str, int]]) -> Markup:
    """Bars for `days` (ISO dates, oldest first); `counts[day][kind]` commits."""
    width, height, top, bottom, left = 700, 180, 12, 28, 28
    most = max([sum(counts.get(d, {}).values()) for d in days] + [1])
    step = (width - left) / max(len(days), 1)
    bar = step * 0.7
    scale = (height - top - bottom) / most
    parts: list[Markup] = []
    for tick in sorted({0, most // 2, most}):
        y = height - bottom - tick * scale
        parts.append(fmt('<line x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}" class="edge"/>', left, width, y, y))
        parts.append(fmt('<text x="{}" y="{:.1f}" text-anchor="end">{}</text>', left - 4, y + 4, tick))
    for i, day in enumerate(days):
        x = left + i * step + (step - bar) / 2
        y = height - bottom
        for kind, colour in KINDS:
            n = counts.get(day, {}).get(kind, 0)
            if not n:
                continue
            h = n * scale
            y -= h
            parts.append(fmt(
                '<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" data-kind="{}">'
                "<title>{}: {} {} commit(s)</title></rect>", x, y, bar, h, colour, kind, day, n, kind))  # fmt: skip
        if i % max(1, len(days) // 7) == 0 or i == len(days) - 1:
            parts.append(fmt('<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>', x + bar / 2, height - 10,
                             day[5:]))  # fmt: skip
    total = sum(sum(c.values()) for c in counts.values())
    label = f"commits a day over the last {len(days)} days, {total} in all, stacked by origin"
    return fmt('<svg class="chart timeline" viewBox="0 0 {} {}" role="img" aria-label="{}">{}</svg>',
               width, height, label, join(parts))  # fmt: skip


@dataclass(frozen=True)
class Node:
    path: str
    title: str
    cluster: int  # index into the clusters' order; -1: in no cluster
    centre: bool = False


def _layout(nodes: Sequence[Node], size: float) -> dict[str, tuple[float, float]]:
    middle = size / 2
    at: dict[str, tuple[float, float]] = {}
    groups: dict[int, list[Node]] = {}
    for n in nodes:
        if n.centre:
            at[n.path] = (middle, middle)
        else:
            groups.setdefault(n.cluster, []).append(n)
    order = sorted(groups, key=lambda c: (c < 0, c))
    outer = size * 0.32 if len(order) > 1 else 0.0
    for k, cluster in enumerate(order):
        angle = 2 * math.pi * k / max(len(order), 1) - math.pi / 2
        cx, cy = middle + outer * math.cos(angle), middle + outer * math.sin(angle)
        members = sorted(groups[cluster], key=lambda n: n.path)
        ring = min(size * 0.14 + 4 * len(members), size * 0.3) if len(order) > 1 else size * 0.36
        for j, n in enumerate(members):
            a = 2 * math.pi * j / len(members) + angle
            r = ring if len(members) > 1 or len(order) == 1 else 0.0
            at[n.path] = (cx + r * math.cos(a), cy + r * math.sin(a))
    return at


def neighbourhood(nodes: Sequence[Node], edges: Sequence[tuple[str, str]], href: Mapping[str, str]) -> Markup:
    """The graph picture; `href[path]` is the page of each node's note."""
    size = 520.0
    at = _layout(nodes, size)
    parts: list[Markup] = []
    for a, b in edges:
        if a in at and b in at:
            (x1, y1), (x2, y2) = at[a], at[b]
            parts.append(fmt('<line class="edge" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>', x1, y1, x2, y2))
    for n in nodes:
        x, y = at[n.path]
        colour = "#7a828c" if n.cluster < 0 else PALETTE[n.cluster % len(PALETTE)]
        radius = 11 if n.centre else 7
        name = n.title if len(n.title) <= 24 else n.title[:23] + "…"
        anchor = "start" if x >= size / 2 else "end"
        dx = radius + 3 if anchor == "start" else -(radius + 3)
        parts.append(fmt(
            '<a href="{}" data-path="{}"><title>{} ({})</title><circle cx="{:.1f}" cy="{:.1f}" r="{}" fill="{}"/>'
            '<text x="{:.1f}" y="{:.1f}" text-anchor="{}">{}</text></a>',
            href[n.path], n.path, n.title, n.path, x, y, radius, colour, x + dx, y + 4, anchor, name))  # fmt: skip
    label = f"the note's neighbourhood: {len(nodes)} notes, {len(edges)} links, coloured by cluster"
    return fmt('<svg class="chart graph" viewBox="-60 0 {} {}" role="img" aria-label="{}">{}</svg>',
               size + 120, size, label, join(parts))  # fmt: skip


def history_strip(origins: Sequence[str]) -> Markup:
    """One mark per change of a note, oldest first, coloured by kind of origin."""
    if not origins:
        return Markup("")
    width = max(12 * len(origins), 120)
    marks = join(
        fmt('<rect x="{}" y="2" width="10" height="20" rx="2" fill="{}"><title>{}</title></rect>', 12 * i,
            COLOURS[kind_of(o, o == "merge")], o)
        for i, o in enumerate(origins)
    )  # fmt: skip
    return fmt('<svg class="chart strip" viewBox="0 0 {} 24" role="img" aria-label="{}">{}</svg>', width,
               f"{len(origins)} change(s) by origin, oldest first", marks)  # fmt: skip


__all__ = ["KINDS", "Node", "esc", "history_strip", "kind_of", "legend", "neighbourhood", "swatch", "timeline"]
