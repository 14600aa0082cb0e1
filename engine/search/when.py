"""Time in a query: "last May", "in June 2023", "on 8 May, 2023", "two weeks ago", "yesterday", "since March"
read as a span of days, so a search can lower the notes dated outside it (engine/search/multipliers.py) and
leave the date words out of the words it looks for (engine/search/planning.py).

A note's date is its `captured` day: its frontmatter `captured` or `date`, else when git first saw it, else
its file time (vault_schema/note.py, engine/index/notes.py). A relative expression is read against the
search's clock: the request's `now` (an ISO date or date and time), else today.

The forms read (case-insensitive, English):

- a day: `2023-06-08`, `8 May 2023`, `8 May, 2023`, `May 8, 2023`, `May 8th`, `yesterday`, `today`,
  `last night`, a weekday after `on`/`last` (`on Friday`, `last Friday`: the latest such day before today)
  or after a bound word (`since Monday`);
- a month: `2023-06`, `June 2023`, `June, 2023`, `last May` (the latest May before this month), `this
  month`, `last month`, and a month alone after a word that introduces a time (`in June`, `during August`,
  `since March`): any year's June when no year is given;
- a year: `2023` after such a word or alone between words, `this year`, `last year`;
- a week: `this week`, `last week`, `last weekend`;
- `N days|weeks|months|years ago` (N a number, a number word, `a`, `a few`): a window around that day;
- `before X`: up to the day before X; `until X`, `by X`: up to X's end; `after X`: from the day after X;
  `since X`: from X's start (X one of the forms above). "before she moved" names no date and is not read.

A month alone needs its introducing word because `may`, `march` and `august` are ordinary words too.
Hand-written rather than a date library: dateparser (1.5.0) takes 310 ms to import and 400 ms for its first
question, and reads "we" as a weekday; parsedatetime (2.6, last released 2020) takes 50 ms to import and
20 ms for its first question and gives points, not spans, resolving "in June" to a June still to come. A
search reads every query through this module, warm in the daemon, in microseconds.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass

from agentmd.vocabulary import MONTHS

_MONTH_OF = {m: i for i, m in enumerate(MONTHS, 1)} | {m[:3]: i for i, m in enumerate(MONTHS, 1)} | {"sept": 9}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a few": 3, "a couple of": 2,
            "couple of": 2, "few": 3, "several": 3}  # fmt: skip
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_M = r"(?P<{}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"  # noqa: E501
_DAY = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{}>(?:19|20)\d\d)"
_INTRO = r"(?:in|on|during|since|from|of|until|till|by|before|after|early|late|mid|around|this|last|next)"
_NUM = r"(?P<n>\d{1,3}|a few|a couple of|couple of|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"  # noqa: E501

# Each form: a pattern and its kind; the longest match at a place wins, then the earlier form.
_FORMS: tuple[tuple[str, str], ...] = (
    ("iso_day", r"(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)"),
    ("iso_month", r"(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)"),
    ("day_month_year", _DAY.format("d") + r"\s+(?:of\s+)?" + _M.format("mon") + r",?\s+" + _YEAR.format("y")),
    ("month_day_year", _M.format("mon") + r"\.?\s+" + _DAY.format("d") + r",?\s+" + _YEAR.format("y")),
    ("month_year", _M.format("mon") + r",?\s+(?:of\s+)?" + _YEAR.format("y")),
    ("day_month", _DAY.format("d") + r"\s+(?:of\s+)?" + _M.format("mon") + r"\b"),
    ("month_day", _M.format("mon") + r"\.?\s+" + _DAY.format("d") + r"(?!\d)(?!\s*(?:st|nd|rd|th)?\s*(?:\w))"),
    ("ago", _NUM + r"\s+(?P<unit>day|week|month|year)s?\s+ago"),
    ("yesterday", r"yesterday|last\s+night"),
    ("today", r"today|tonight|this\s+morning|this\s+afternoon|this\s+evening"),
    ("this_unit", r"(?P<which>this|last|past|previous)\s+(?P<unit>week|weekend|month|year)"),
    ("weekday", r"(?:on|last)\s+(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"),
    ("named_month", r"(?P<which>last|this)\s+" + _M.format("mon")),
    ("intro_month", r"(?P<intro>" + _INTRO + r")\s+(?:the\s+)?(?:(?:early|late|mid)[\s-]+)?" + _M.format("mon")),
    ("intro_year", r"(?P<intro>" + _INTRO + r")\s+(?:the\s+year\s+)?" + _YEAR.format("y")),
    # a weekday alone, read only after a bound word: "since Monday", "before Friday"
    ("bound_weekday", r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"),
)
_FORM_RE = [(kind, re.compile(r"(?<![\w-])(?:" + pattern + r")(?![\w-])", re.IGNORECASE)) for kind, pattern in _FORMS]
_BOUND = re.compile(r"(?<![\w-])(?P<b>before|until|till|by|after|since)\s+$", re.IGNORECASE)
_LONE_YEAR = re.compile(r"(?<![\w.\-/:#])(?P<y>(?:19|20)\d\d)(?![\w.\-/:])")
_OPEN_BEFORE = ("before", "until", "till", "by")
_OPEN_AFTER = ("after", "since")
_STRICT = ("before", "after")  # the day itself is not in the span
_INTRO_WORDS = frozenset(_INTRO.strip("(?:)").split("|"))


@dataclass(frozen=True, slots=True)
class Span:
    """The days a query's time expression covers (either end may be open), or a month of any year."""

    first: dt.date | None
    last: dt.date | None
    month: int | None = None  # a month alone ("in June"): that month of any year; first and last are None
    words: tuple[tuple[int, int], ...] = ()  # where the expression stands in the query (start, end)
    text: str = ""  # the expression as written

    def holds(self, day: int) -> bool:
        """Whether a yyyymmdd day falls in the span."""
        if self.month is not None:
            return day // 100 % 100 == self.month
        lo = self.first.year * 10000 + self.first.month * 100 + self.first.day if self.first else None
        hi = self.last.year * 10000 + self.last.month * 100 + self.last.day if self.last else None
        return (lo is None or day >= lo) and (hi is None or day <= hi)

    def rest(self, query: str) -> str:
        """The query without the expression's words (the words a search looks for)."""
        out, at = [], 0
        for start, end in self.words:
            out.append(query[at:start])
            at = end
        out.append(query[at:])
        return " ".join("".join(out).split())

    def to_json(self) -> dict[str, object]:
        return {
            "text": self.text,
            "first": self.first.isoformat() if self.first else None,
            "last": self.last.isoformat() if self.last else None,
            "month": self.month,
        }


_AGE = re.compile(r"(\d{1,5})\s*([hdw])")


def bound_day(text: str, bound: str, now: str | dt.date | None = None) -> dt.date | None:
    """A search's `after` or `before` bound given as an age (`3d`, `2w`, `12h`: the day that long before the
    search's day) or in words (`last week`, `yesterday`, `March 2026`: the first day of the span they name for
    `after`, its last for `before`); None when it is neither."""
    day = today(now)
    age = _AGE.fullmatch(text.strip().lower())
    if age:
        return day - dt.timedelta(days=int(age.group(1)) * {"h": 1 / 24, "d": 1, "w": 7}[age.group(2)])
    span = read(text, day)
    return None if span is None else (span.first if bound == "after" else span.last)


def today(now: str | dt.date | None) -> dt.date:
    """The search's day: `now` (an ISO date or date and time, or a date), else the real clock's."""
    if now is None or now == "":
        return dt.date.today()
    if isinstance(now, dt.datetime):
        return now.date()
    if isinstance(now, dt.date):
        return now
    try:
        return dt.datetime.fromisoformat(str(now).strip().replace("Z", "+00:00")).date()
    except ValueError:
        return dt.date.fromisoformat(str(now).strip()[:10])


def _month_end(year: int, month: int) -> dt.date:
    nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
    return nxt - dt.timedelta(days=1)


def _safe_day(y: int, m: int, d: int) -> dt.date | None:
    try:
        return dt.date(y, m, d)
    except ValueError:
        return None


def _span(kind: str, m: re.Match[str], day: dt.date) -> tuple[dt.date | None, dt.date | None, int | None] | None:
    """(first, last, month-of-any-year) of one matched form, or None when it names no real date."""
    g = m.groupdict()
    mon = _MONTH_OF.get((g.get("mon") or "").lower().rstrip(".")) if g.get("mon") else None
    if kind == "iso_day" or kind in ("day_month_year", "month_day_year"):
        month = int(g["m"]) if kind == "iso_day" else mon
        found = _safe_day(int(g["y"]), month or 0, int(g["d"]))
        return (found, found, None) if found else None
    if kind in ("iso_month", "month_year"):
        month = int(g["m"]) if kind == "iso_month" else mon
        if not month or not 1 <= month <= 12:
            return None
        return dt.date(int(g["y"]), month, 1), _month_end(int(g["y"]), month), None
    if kind in ("day_month", "month_day"):
        year = day.year if (mon or 0, int(g["d"])) <= (day.month, day.day) else day.year - 1
        found = _safe_day(year, mon or 0, int(g["d"]))
        return (found, found, None) if found else None
    if kind == "ago":
        n = int(g["n"]) if g["n"].isdigit() else _NUMBERS.get(g["n"].lower(), 1)
        unit = _UNIT_DAYS[g["unit"].lower()]
        centre = day - dt.timedelta(days=n * unit)
        half = max(1, unit // 2) if unit > 1 else 1
        return centre - dt.timedelta(days=half), min(day, centre + dt.timedelta(days=half)), None
    if kind == "yesterday":
        found = day - dt.timedelta(days=1)
        return found, found, None
    if kind == "today":
        return day, day, None
    if kind == "this_unit":
        which, period = g["which"].lower(), g["unit"].lower()
        back = which != "this"
        if period in ("week", "weekend"):
            monday = day - dt.timedelta(days=day.weekday()) - dt.timedelta(days=7 * back)
            if period == "weekend":
                monday = day - dt.timedelta(days=day.weekday() + (7 if day.weekday() < 5 or back else 0))
                return monday + dt.timedelta(days=4), monday + dt.timedelta(days=6), None
            return monday, min(day, monday + dt.timedelta(days=6)) if not back else monday + dt.timedelta(days=6), None
        if period == "month":
            y, mo = (day.year, day.month) if not back else (day.year - (day.month == 1), (day.month - 2) % 12 + 1)
            return dt.date(y, mo, 1), _month_end(y, mo), None
        y = day.year - back
        return dt.date(y, 1, 1), dt.date(y, 12, 31), None
    if kind in ("weekday", "bound_weekday"):
        wanted = WEEKDAYS.index(g["wd"].lower())
        back = (day.weekday() - wanted) % 7 or 7
        found = day - dt.timedelta(days=back)
        return found, found, None
    if kind == "named_month" and mon:
        if g["which"].lower() == "this":
            return dt.date(day.year, mon, 1), _month_end(day.year, mon), None
        y = day.year if mon < day.month else day.year - 1
        return dt.date(y, mon, 1), _month_end(y, mon), None
    if kind == "intro_month" and mon:
        if mon == 5 and g["intro"].lower() in ("of", "by"):  # "of may", "by may": too often the verb
            return None
        return None, None, mon
    if kind == "intro_year":
        y = int(g["y"])
        return dt.date(y, 1, 1), dt.date(y, 12, 31), None
    return None


def read(query: str, now: str | dt.date | None = None) -> Span | None:
    """The span of days the query's time expressions name (the first one read; see the module docstring),
    or None when it names none. A bound word before it (`before`, `since`, ...) opens the span on one side."""
    return _read(query, today(now))


@functools.lru_cache(maxsize=512)
def _read(query: str, day: dt.date) -> Span | None:
    if not any(ch.isdigit() for ch in query) and not _MAYBE.search(query):
        return None  # most queries name no time: one scan for a month, a weekday or a time word
    taken: list[tuple[int, int, str, re.Match[str]]] = []
    for kind, pattern in _FORM_RE:
        for m in pattern.finditer(query):
            if any(m.start() < e and s < m.end() for s, e, _k, _m in taken):
                continue
            taken.append((m.start(), m.end(), kind, m))
    taken.sort()
    for start, end, kind, m in taken:
        bound = _BOUND.search(query[:start])
        if kind == "bound_weekday" and bound is None:
            continue  # "Monday standup notes": a weekday alone names no day
        got = _span(kind, m, day)
        if got is None:
            continue
        first, last, month = got
        intro = m.groupdict().get("intro")
        opener = (intro or (bound.group("b") if bound else "")).lower()
        if month is None and opener in _OPEN_BEFORE:
            first, last = None, (first - dt.timedelta(days=1) if opener in _STRICT and first else last)
        elif month is None and opener in _OPEN_AFTER:
            first, last = (last + dt.timedelta(days=1) if opener in _STRICT and last else first), None
        elif month is not None and opener in _OPEN_BEFORE + _OPEN_AFTER:
            return _widen(query, start, end, month, opener, day, bound)
        if bound is not None:
            start = bound.start()
        return Span(first, last, month, ((start, end),), query[start:end])
    lone = _LONE_YEAR.search(query)
    if lone is not None and _between_words(query, lone):
        y = int(lone.group("y"))
        return Span(dt.date(y, 1, 1), dt.date(y, 12, 31), None, ((lone.start(), lone.end()),), lone.group(0))
    return None


def _widen(
    query: str, start: int, end: int, month: int, opener: str, day: dt.date, bound: re.Match[str] | None
) -> Span:
    """`since March`, `before June`: the latest such month (this year's when it has begun) as one bound."""
    year = day.year if month <= day.month else day.year - 1
    if bound is not None:
        start = bound.start()
    if opener in _OPEN_BEFORE:
        last = dt.date(year, month, 1) - dt.timedelta(days=1) if opener in _STRICT else _month_end(year, month)
        return Span(None, last, None, ((start, end),), query[start:end])
    first = _month_end(year, month) + dt.timedelta(days=1) if opener in _STRICT else dt.date(year, month, 1)
    return Span(first, None, None, ((start, end),), query[start:end])


def _between_words(query: str, m: re.Match[str]) -> bool:
    """Whether a lone year stands among plain words (`what happened in 2023`, `my 2023 goals`), not in a
    version, a path, an address or a list of numbers, nor in the name of a standard or a product, whose word
    before it is written with a capital (`IDNA 2008`, `under Windows 2000`, `Visual Studio 2022`; a query's first
    word only in capitals throughout, as any sentence's first word has one)."""
    before = query[: m.start()].split()
    after = query[m.end() :].split()
    near = (before[-1:] or [""])[0], (after[:1] or [""])[0]
    if any(any(ch.isdigit() for ch in w) for w in near):
        return False
    word = near[0]
    capital = (word.isupper() and len(word) > 1) or (word[:1].isupper() and len(before) > 1)  # not a query's first
    return not (capital and word.lower() not in _INTRO_WORDS and not _MAYBE.match(word))


_MAYBE = re.compile(
    r"(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|yesterday|today|tonight|night|morning|afternoon|evening|week|weekend|month|year|ago)"
)


__all__ = ["Span", "read", "today"]
