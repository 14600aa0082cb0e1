"""HTML built by escaping: every value put into a page is escaped unless it is `Markup` this package built.

Notes are untrusted text (a capture, a clip, another machine's sync): a title, a path, a frontmatter value or a
line of a diff reaches the page only through `esc` or `fmt`, and the page's Content-Security-Policy lets no
inline script run besides (`SECURITY_HEADERS`), so a note holding `<script>` shows as text.
"""

from __future__ import annotations

import html
import json
import re
import string
from collections.abc import Iterable
from typing import Any

SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'self'"
    ),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


class Markup(str):
    """Text that is HTML already (built here from escaped parts)."""

    __slots__ = ()


# C0 controls but tab, line feed and carriage return (and DEL) are not allowed in HTML text: a note may hold them
# (a NUL pasted in), and the page shows each as the replacement character
_UNSHOWABLE = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")


def esc(value: Any) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(_UNSHOWABLE.sub("\ufffd", "" if value is None else str(value)), quote=True))


class _Escaping(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, Markup) and not format_spec:
            return value
        return esc(format(value, format_spec))


_FORMATTER = _Escaping()


def fmt(template: str, *args: Any, **kwargs: Any) -> Markup:
    """`template` (trusted HTML) with every `{}` field escaped, unless the value is Markup."""
    return Markup(_FORMATTER.format(template, *args, **kwargs))


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    return Markup(sep.join(esc(p) for p in parts))


def data_json(value: Any) -> Markup:
    """A JSON value for a `data-` attribute (escaped as an attribute)."""
    return esc(json.dumps(value, ensure_ascii=False, sort_keys=True))


NAV = (  # relative to the page session's `<base>`
    ("today", "./", "Today", "t"),
    ("review", "review", "Review", "r"),
    ("search", "search", "Search", "s"),
)


def _current(yes: bool) -> Markup:
    return Markup(' aria-current="page"' if yes else "")


def page(title: str, body: Markup, *, current: str, csrf: str, vault: str, base: str) -> str:
    """A whole page of the page session whose pages live under `base`: the navigation, the plan panel the script
    fills, `body`. Its links are relative to `base`."""
    nav = join(
        fmt('<a href="{}" accesskey="{}"{}>{}</a>', href, key, _current(name == current), label)
        for name, href, label, key in NAV
    )
    return fmt(
        """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<base href="{base}">
<meta name="agentmd-csrf" content="{csrf}">
<title>{title} · agentmd</title>
<link rel="stylesheet" href="/ui/static/app.css">
<link rel="icon" href="/ui/static/icon.svg" type="image/svg+xml">
<script src="/ui/static/app.js" defer></script>
</head><body data-page="{current}">
<a class="skip" href="#main">Skip to content</a>
<header><span class="brand" title="{vault}">agentmd</span><nav aria-label="Views">{nav}</nav></header>
<main id="main" tabindex="-1">
<section id="plan" class="plan" aria-live="polite" hidden></section>
{body}
</main></body></html>""",
        base=base, csrf=csrf, title=title, current=current, vault=vault, nav=nav, body=body,
    )  # fmt: skip


ENTER_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Opening · agentmd</title>
<link rel="stylesheet" href="/ui/static/app.css">
<link rel="icon" href="/ui/static/icon.svg" type="image/svg+xml">
<script src="/ui/static/app.js" defer></script>
</head><body data-page="enter">
<main id="main"><h1>agentmd</h1>
<p id="enter-message" role="status">Opening the page…</p>
<noscript><p>The page needs JavaScript to open its session.</p></noscript>
</main></body></html>"""


def refusal_page(message: str) -> str:
    return fmt(
        """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>agentmd</title>
<link rel="stylesheet" href="/ui/static/app.css">
<link rel="icon" href="/ui/static/icon.svg" type="image/svg+xml"></head>
<body><main id="main"><h1>agentmd</h1><p role="alert">{}</p></main></body></html>""",
        message,
    )
