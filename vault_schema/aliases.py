"""Aliases a note's own words support: acronyms with their expansions, and compound identifiers as words.

Like the link passes (see `links.py`), this runs on every note at index time: capitals, underscores and hyphens
are found with `str.find` and byte translations, and only the runs around them are read with patterns.

Derived aliases
    Acronyms in both directions ("Write-Ahead Logging (WAL)", "WAL (write-ahead logging)"), kept only when the
    expansion's word initials spell the acronym (short function words may be skipped, a CamelCase word may give
    one letter per hump). Compound identifiers split into words: snake_case and camelCase anywhere; PascalCase
    in code, and in prose from three parts (`SearchIndexWriter`; two-part ones there are mostly names: GitHub,
    JavaScript, YouTube); kebab-case only inside code (a hyphen in prose is punctuation). A part of one letter,
    or fewer than two word-like parts, is no identifier (`iPhone`, `x_y`, a UUID); web addresses are not read.
    Acronym pairs sort first, then identifiers by how often the note uses them, then alphabetically; the sorted
    list is cut to `limit`, so which aliases survive is a property of the note, not of the scan order.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .entities import blank_urls
from .markdown import split_code

# fmt: off
_STOP = frozenset((
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "per", "the", "to",
    "via", "with",
))
# fmt: on
_ACR = r"[A-Z][A-Za-z]{0,8}[A-Z]"
_PAREN = re.compile(r"\(([^()\n]{2,120})\)")
_ACR_ONLY = re.compile(_ACR + r"(?=s?\Z)")  # Expansion (ACR)
_ACR_TAIL = re.compile(r"(?<![\w-])(" + _ACR + r")s?\s*\Z")  # ACR (expansion)
_ACR_LAST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZs")
_EXPANSION_WORDS = re.compile(r"[A-Za-z][A-Za-z' -]*\Z")
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")
_INNER_CAP = re.compile(r"[a-z0-9][A-Z]")
_CAMEL_SEED = re.compile(r"[A-Z](?<=[a-z0-9][A-Z])|[A-Z](?=[a-z]{2})(?<=[A-Z]{3})")
_CASE_SHAPE = bytes(
    ord("a") if chr(i) in "abcdefghijklmnopqrstuvwxyz0123456789" else ord("A") if "A" <= chr(i) <= "Z" else 32
    for i in range(256)
)
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_ALNUM_STR = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_IDENT_CHARS = {
    "_": (_ALNUM_STR + "_", re.compile(r"[A-Za-z0-9_]+")),
    "-": (_ALNUM_STR + "-", re.compile(r"[A-Za-z0-9-]+")),
}
_EXPANSION_END = re.compile(r"[.;:!?()\[\]{}\"]")
MAX_PARTS = 8
_WORDISH = re.compile(r"[A-Za-z]{2,}\d*\Z")


def _units(word: str) -> list[tuple[str, bool]]:
    """(initial, may be skipped) for each letter a word can give: one per CamelCase hump, the first required."""
    if _INNER_CAP.search(word):
        humps = _HUMP.findall(word)
        return [(humps[0][0].lower(), False)] + [(h[0].lower(), True) for h in humps[1:]]
    return [(word[0].lower(), word.lower() in _STOP)]


def _spells(words: list[str], acronym: str) -> bool:
    """Whether the words' initials spell the acronym, in order, every word used (function words and inner
    CamelCase humps may be skipped), the first word giving the first letter."""
    units: list[tuple[str, bool, bool]] = []  # (letter, skippable, starts a word)
    for w in words:
        for j, (letter, skip) in enumerate(_units(w)):
            units.append((letter, skip, j == 0))
    letters = acronym.lower()
    if not units or units[0][0] != letters[0]:
        return False
    # a word's first unit may only be skipped when the word is a function word; humps after it may be skipped
    states = {0}
    for letter, skip, _first in units:
        nxt = set()
        for s in states:
            if s < len(letters) and letters[s] == letter:
                nxt.add(s + 1)
            if skip:
                nxt.add(s)
        states = nxt
        if not states:
            return False
    return len(letters) in states


def _expansion(words: list[str]) -> str:
    return " ".join(w.lower() for w in words)


def _acronyms(prose: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    if "(" not in prose:
        return pairs
    for m in _PAREN.finditer(prose):
        inside = m.group(1).strip()
        acr = _ACR_ONLY.match(inside) if inside[:1].isupper() else None
        if acr:  # Expansion Words (EW): the shortest run of words before the parenthesis that spells it
            acronym = acr.group(0)
            before = prose[max(0, m.start() - 200) : m.start()]
            cut = max(before.rfind("\n"), max((e.end() for e in _EXPANSION_END.finditer(before)), default=-1))
            words = [w for piece in before[cut + 1 :].replace("-", " ").split() for w in _WORD.findall(piece)]
            for start in range(len(words) - 1, max(-1, len(words) - 2 * len(acronym) - 2), -1):
                if words[start].lower() not in _STOP and _spells(words[start:], acronym):
                    pairs.append((acronym, _expansion(words[start:])))
                    break
        elif prose[m.start() - 2 : m.start()].rstrip()[-1:] in _ACR_LAST and _EXPANSION_WORDS.match(inside):
            tail = _ACR_TAIL.search(prose, max(0, m.start() - 14), m.start())  # EW (expansion words)
            if tail:
                acronym = tail.group(1)
                words = _WORD.findall(inside.replace("-", " "))
                if 2 <= len(words) <= 2 * len(acronym) + 2 and _spells(words, acronym):
                    pairs.append((acronym, _expansion(words)))
    return pairs


@lru_cache(maxsize=8192)
def _identifier_words(token: str) -> str | None:
    """The words of a compound identifier, or None when it is not one: fewer than two word-like parts (two or
    more letters, then digits: `base64` is one, `f06dcdd8` from a UUID is not), a one-letter part (`iPhone`,
    `x_y`), or more than MAX_PARTS parts."""
    parts: list[str] = []
    for piece in re.split(r"[_-]+", token):
        if not piece:
            continue
        parts.extend(_HUMP.findall(piece) if _INNER_CAP.search(piece) or piece[:1].isupper() else [piece])
    if not 2 <= len(parts) <= MAX_PARTS:
        return None
    if sum(1 for p in parts if _WORDISH.match(p)) < 2 or any(len(p) < 2 and p.isalpha() for p in parts):
        return None
    return " ".join(p.lower() for p in parts)


def derived_aliases(title: str, text: str, limit: int = 20) -> list[str]:
    """Aliases a note's own words support: acronyms whose expansion really spells them (both forms), and
    compound identifiers as words. Sorted (acronym pairs, then by uses, then alphabetically), then cut."""
    split = split_code(text)
    return read_aliases(title, split.prose, split.code, limit)


def _count(counts: dict[str, int], token: str, pascal_parts: int) -> None:
    words = _identifier_words(token)
    if words and (not token[0].isupper() or words.count(" ") + 1 >= pascal_parts):
        counts[words] = counts.get(words, 0) + 1


def _camel_seeds(text: str) -> list[int]:
    """Positions of the capitals that step up from a lower-case letter or digit (`maxRetry`) or end a capital
    run before lower case (`HTTPServer`). The text's case shape comes from a byte translation (C speed) and,
    unless capitals are many, each capital is checked in turn; else the pattern runs over the text."""
    raw = text.encode("utf-8", "surrogatepass")
    shape = raw.translate(_CASE_SHAPE)
    capitals = shape.count(b"A")
    if not capitals:
        return []
    if capitals > 48:
        return [m.start() for m in _CAMEL_SEED.finditer(text)]
    seeds = []
    i = shape.find(b"A", 1)  # a capital opening the text steps up from nothing
    while i >= 0:
        before = shape[i - 1]
        if before == 97 or (before == 65 and i >= 2 and shape[i - 2] == 65 and shape[i + 1 : i + 3] == b"aa"):
            seeds.append(i)
        i = shape.find(b"A", i + 1)
    if len(raw) == len(text) or not seeds:
        return seeds
    out, last_byte, last_char = [], 0, 0  # byte offsets to character offsets (capitals are ASCII boundaries)
    for b in seeds:
        last_char += len(raw[last_byte:b].decode("utf-8", "surrogatepass"))
        last_byte = b
        out.append(last_char)
    return out


def _run_start(text: str, at: int, chars: str) -> int:
    """Where the run of `chars` that reaches `at` starts (`str.rstrip` walks back at C speed)."""
    start = at
    while True:
        piece = text[max(0, start - 48) : start]
        kept = len(piece.rstrip(chars))
        start -= len(piece) - kept
        if kept or not piece:
            return start


def _tokens_around(text: str, mark: str) -> list[str]:
    """Each maximal run of ASCII letters, digits and `mark` (`_` or `-`) holding `mark`, found from the marks
    themselves (`str.find` is C speed; a pattern would be tried at every letter of the text)."""
    out: list[str] = []
    chars, pattern = _IDENT_CHARS[mark]
    i = text.find(mark)
    while i >= 0:
        a = _run_start(text, i, chars)
        run = pattern.match(text, a)
        end = run.end() if run else i + 1
        if run:
            out.append(run.group(0))
        i = text.find(mark, end)
    return out


def _identifiers(text: str, counts: dict[str, int], *, code: bool) -> None:
    """Count the compound identifiers in `text` (web addresses blanked). snake_case and camelCase anywhere;
    PascalCase in prose only from three parts (two-part ones there are mostly names: GitHub, JavaScript,
    YouTube); kebab-case only in code."""
    for token in _tokens_around(text, "_"):  # snake_case: `_private`, `__init__` and `_em_` give one word
        token = token.strip("_")
        if "_" in token and token[0].isalpha():
            _count(counts, token, 2)
    pascal_parts = 2 if code else 3
    last = -1
    for a in _camel_seeds(text):
        if a < last:
            continue  # another hump of the identifier just counted
        a = _run_start(text, a, _ALNUM_STR)
        run = _ALNUM_RUN.match(text, a)
        if run is None:
            continue
        last = run.end()
        if (a and text[a - 1] == "_") or text[last : last + 1] == "_" or not text[a].isalpha():
            continue  # part of a snake_case identifier, or starts with a digit
        _count(counts, run.group(0), pascal_parts)
    for token in _tokens_around(text, "-") if code else ():  # kebab-case, and `--long-flag`
        token = token.lstrip("-")
        if "-" in token and token[0].isalpha() and "--" not in token and token[-1] != "-":
            _count(counts, token, 2)


def read_aliases(title: str, prose: str, code: list[str], limit: int) -> list[str]:
    """The ranked aliases of a note given its prose (code blanked) and its code, cut to `limit`."""
    prose = title + "\n" + prose
    acronym_forms: dict[str, str] = {}
    for acronym, expansion in _acronyms(prose):
        for form in (acronym, expansion):
            acronym_forms.setdefault(form.casefold(), form)
    counts: dict[str, int] = {}
    _identifiers(blank_urls(prose), counts, code=False)
    if code:
        _identifiers(blank_urls("\n".join(code)), counts, code=True)
    ranked = sorted(acronym_forms.values(), key=str.casefold)
    ranked += sorted((w for w in counts if w.casefold() not in acronym_forms), key=lambda w: (-counts[w], w))
    return ranked[:limit]
