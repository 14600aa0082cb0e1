"""Other readings of a note's prose for the directive rules: encodings decoded (base64 whole or split, base32,
hex, rot13, atbash, URL escapes, quoted-printable, HTML character references, backslash escapes, decimal or
binary character codes, reversed text, Morse code; Unicode tag characters and right-to-left overrides are read
by `hidden_views` from the text before invisible characters are dropped) and a compact form (look-alike letters,
leetspeak and every gap between letters folded away) that spaced-out, joined, dotted or leet text cannot dodge.

Each decoder only speaks when its output is mostly readable text, so ordinary notes cost a few regex scans.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import quopri
import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Final

_B64_PIECE = re.compile(r"[A-Za-z0-9+/_\-]{8,}={0,2}")
_B64_SPACED = re.compile(r"(?<![A-Za-z0-9+/=])(?:[A-Za-z0-9+/]{4,16}+[ \t]+){3,}[A-Za-z0-9+/]{2,16}+={0,2}")
_B32_RUN = re.compile(r"(?<![A-Za-z0-9])[A-Z2-7]{16,}={0,6}(?![A-Za-z0-9])")
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ \t:,]?){12,}(?![0-9A-Fa-f])")
_RUN = re.compile(r"\S+")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_MORSE_RUN = re.compile(r"[.\-]{1,7}(?:[ \t]+(?:/[ \t]+)?[.\-]{1,7}){8,}")
_MORSE: Final = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g", "....": "h", "..": "i",
    ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n", "---": "o", ".--.": "p", "--.-": "q", ".-.": "r",
    "...": "s", "-": "t", "..-": "u", "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z",
    "-----": "0", ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6",
    "--...": "7", "---..": "8", "----.": "9",
}  # fmt: skip
_LEET: Final = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"})
_NOT_LETTER = re.compile(r"[^a-z]+")
_MIN_DECODED: Final = 12
# Character references (`&#105;`, `&#x69;`, `&amp;`), backslash escapes (`\u0069`, `\x69`), quoted-printable
# (`=20`), decimal and binary character codes: only runs of several are decoded, so a note with one `&amp;` is
# not read again.
_ENTITY_RUN = re.compile(r"(?:&#[xX]?[0-9A-Fa-f]{1,6};\s?){6,}")
_ESCAPE_RUN = re.compile(r"(?:\\(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2})){6,}")
_QP_RUN = re.compile(r"(?<!\S)[^\s=]*+(?:=[0-9A-F]{2}[^\s=]*+){3,}")
_CODE_RUN = re.compile(r"[0-9][0-9 \t,]{40,}")  # one character class: read in one linear pass
_ATBASH: Final = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
)
_TAG_RUN = re.compile("[\U000e0020-\U000e007e]{6,}")
_RLO_SPAN = re.compile("[\u202e\u2067]([^\u202c\u2069\n]{6,})")


def _readable(text: str) -> bool:
    """Mostly letters and spaces: decoded text worth reading, not binary noise."""
    if len(text) < _MIN_DECODED:
        return False
    good = sum(ch.isalpha() or ch.isspace() for ch in text)
    return good >= 0.75 * len(text) and " " in text.strip()


def _b64(blob: str) -> str | None:
    blob = blob.replace("-", "+").replace("_", "/").rstrip("=")
    try:
        raw = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True)
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def _looks_encoded(piece: str) -> bool:
    """A base64 piece rather than a word: mixed case with a digit or a symbol, or padded."""
    return piece.endswith("=") or (
        any(c.isupper() for c in piece[1:])
        and any(c.islower() for c in piece)
        and (any(c.isdigit() or c in "+/" for c in piece) or len(piece) >= 16)
    )


def _url_encoded(run: str) -> bool:
    """Two escapes, or one with spaces written as "+" ("assistant%2C+delete+all+notes")."""
    escapes = len(_ESCAPE.findall(run))
    return escapes >= 2 or (escapes == 1 and run.count("+") >= 2)


def decoded_views(prose: str) -> Iterator[tuple[str, str]]:
    """(how, decoded text) for every encoding found in `prose`."""
    pieces = [m.group() for m in _B64_PIECE.finditer(prose) if _looks_encoded(m.group())]
    seen: set[str] = set()
    for piece in pieces:
        decoded = _b64(piece)
        if decoded and _readable(decoded) and decoded not in seen:
            seen.add(decoded)
            yield "base64-encoded", decoded
    for m in _B64_SPACED.finditer(prose):
        decoded = _b64(re.sub(r"\s+", "", m.group()))
        if decoded and _readable(decoded):
            yield "base64-encoded in pieces", decoded
    if len(pieces) > 1:
        decoded = _b64("".join(p.rstrip("=") for p in pieces))
        if decoded and _readable(decoded):
            yield "base64-encoded in pieces", decoded
    for m in _B32_RUN.finditer(prose):
        blob = m.group()
        try:
            decoded = base64.b32decode(blob + "=" * (-len(blob) % 8)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if _readable(decoded):
            yield "base32-encoded", decoded
    for m in _HEX_RUN.finditer(prose):
        digits = re.sub(r"[ \t:,]", "", m.group())
        try:
            decoded = bytes.fromhex(digits[: len(digits) // 2 * 2]).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if _readable(decoded):
            yield "hex-encoded", decoded
    if "%" in prose:
        # only the runs that carry escapes are decoded (an encoded order is one run: its spaces are escaped too),
        # so a long note with a few links is not read a second time
        runs = [urllib.parse.unquote_plus(r) for r in _RUN.findall(prose) if _url_encoded(r)]
        if runs:
            yield "URL-encoded", "\n".join(runs)
    for m in _MORSE_RUN.finditer(prose):
        words = re.split(r"[ \t]*/[ \t]*|[ \t]{3,}", m.group())
        decoded = " ".join("".join(_MORSE.get(c, "") for c in w.split()) for w in words)
        if _readable(decoded):
            yield "Morse code", decoded
    yield from _escaped_views(prose)
    leet = _leet_lines(prose)
    if leet:
        yield "leetspeak", leet
    rot = _encoded_cue_lines(prose, _ROT13_CUES, lambda line: codecs.encode(line, "rot13"))
    if rot:
        yield "rot13", rot
    for shift, shifted in _caesar_lines(prose):
        yield f"letters moved {26 - shift} places on (a Caesar cipher)", shifted
    backwards = _encoded_cue_lines(prose, _REVERSED_CUES, lambda line: line[::-1], backwards=True)
    if backwards:
        yield "reversed", backwards
    low = prose.lower()
    if any(word in low for word in _ATBASH_WORDS):  # one fast substring pass before the regex pass
        atbash = _encoded_cue_lines(prose, _ATBASH_CUES, lambda line: line.translate(_ATBASH))
        if atbash:
            yield "atbash", atbash


def _escaped_views(prose: str) -> Iterator[tuple[str, str]]:
    """Text written as character references, backslash escapes, quoted-printable, or decimal or binary codes."""
    if "&#" in prose:
        for m in _ENTITY_RUN.finditer(prose):
            decoded = html.unescape(m.group())
            if _readable(decoded):
                yield "HTML character references", decoded
    if "\\" in prose:
        for m in _ESCAPE_RUN.finditer(prose):
            decoded = codecs.decode(m.group(), "unicode_escape", "replace")
            if _readable(decoded):
                yield "backslash-escaped", decoded
    if "=" in prose:
        runs = [quopri.decodestring(m.group().encode("ascii", "ignore")).decode("utf-8", "replace")
                for m in _QP_RUN.finditer(prose)]  # fmt: skip
        joined = "\n".join(r for r in runs if _readable(r))
        if joined:
            yield "quoted-printable", joined
    for m in _CODE_RUN.finditer(prose):
        numbers = re.findall(r"\d+", m.group())
        if len(numbers) < 8:
            continue
        if all(len(n) == 8 and set(n) <= {"0", "1"} for n in numbers):
            how, codes = "binary character codes", [int(n, 2) for n in numbers]
        else:
            how, codes = "decimal character codes", [int(n) for n in numbers]
        if all(32 <= c < 127 for c in codes):
            decoded = "".join(map(chr, codes))
            if _readable(decoded):
                yield how, decoded


# Six or more single characters in a row, each followed by one space, dot, dash or underscore ("a s s i s t a n t",
# "I.G.N.O.R.E"): a word spelt out so that no word of it is matched.
_SPACED_GATE: Final = re.compile(r"(?<![^\s.\-_])(?:[^\s.\-_][ .\-_]){5,}[^\s.\-_](?![^\s.\-_])")
_WORD_BREAK: Final = re.compile(r"\s{2,}|\s+/\s+|\t")


def _spelt_out_word(piece: str) -> str:
    parts = piece.split(" ") if " " in piece else re.split(r"[.\-_]", piece)
    return "".join(parts) if len(parts) >= 2 and all(len(p) <= 1 for p in parts) else piece


def spelt_out(text: str) -> str | None:
    """The lines that spell words out letter by letter, each word joined up (two spaces or a slash part words),
    or None when no line does."""
    lines = [line for line in text.split("\n") if _SPACED_GATE.search(line)]
    if not lines:
        return None
    return "\n".join(" ".join(_spelt_out_word(w) for w in _WORD_BREAK.split(line.strip()) if w) for line in lines)


def hidden_views(text: str) -> Iterator[tuple[str, str]]:
    """(how, text) for text hidden from a reader of the rendered note: words spelt out letter by letter (read
    joined up), Unicode tag characters (invisible, read as the ASCII they shadow) and the lines with a
    right-to-left override, each overridden span read reversed the way it is shown."""
    joined = spelt_out(text)
    if joined is not None:
        yield "letter-by-letter", joined
    if text.isascii():
        return
    for m in _TAG_RUN.finditer(text):
        decoded = "".join(chr(ord(c) - 0xE0000) for c in m.group())
        if _readable(decoded):
            yield "Unicode tag characters", decoded
    if _RLO_SPAN.search(text):
        lines = [line for line in text.split("\n") if _RLO_SPAN.search(line)]
        shown = "\n".join(_RLO_SPAN.sub(lambda m: m.group(1)[::-1], line) for line in lines)
        yield "right-to-left override", shown


# Words an order read backwards or in rot13 would hold; only the lines with one are read (a long note read
# backwards is noise, and reading all of it again would cost as much as the note itself).
_CUE_WORDS: Final = [
    "ignore",
    "disregard",
    "forget",
    "override",
    "bypass",
    "instructions",
    "prompt",
    "you",
    "your",
    "system",
    "assistant",
    "agent",
    "agents",
    "ai",
    "must",
    "always",
    "never",
    "pretend",
    "act",
    "send",
    "reveal",
    "rules",
    "leak",
    "delete",
    "push",
]
# The cue words as they stand in the original text when it is rot13 or reversed text: found there, so that the
# whole note is not encoded only to look for them (rot13 and reversal keep word boundaries and letter case).
_ROT13_CUES = re.compile(r"\b(?:" + "|".join(codecs.encode(w, "rot13") for w in _CUE_WORDS) + r")\b", re.IGNORECASE)
_REVERSED_CUES = re.compile(r"\b(?:" + "|".join(w[::-1] for w in _CUE_WORDS) + r")\b", re.IGNORECASE)
_ATBASH_WORDS: Final = tuple(w.translate(_ATBASH) for w in _CUE_WORDS if len(w) >= 4)
_ATBASH_CUES = re.compile(r"\b(?:" + "|".join(_ATBASH_WORDS) + r")\b", re.IGNORECASE)


def _shift(text: str, by: int) -> str:
    return text.translate(_SHIFTS[by % 26])


_LOWER = "abcdefghijklmnopqrstuvwxyz"
_SHIFTS: Final = tuple(
    str.maketrans(_LOWER + _LOWER.upper(), _LOWER[k:] + _LOWER[:k] + (_LOWER[k:] + _LOWER[:k]).upper())
    for k in range(26)
)
# The longer cue words under every shift but none and rot13 (read on its own): shifted word -> the shift that
# reads it back. Short words are left out: shifted, "you" or "act" is too often some other word.
_CAESAR_WORDS: Final = {_shift(w, -k): k for w in _CUE_WORDS if len(w) >= 5 for k in range(1, 26) if k != 13}
_LONG_WORD = re.compile(r"[a-z]{5,}")


def _caesar_lines(prose: str) -> Iterator[tuple[int, str]]:
    """(shift, lines read back) for every shift of the alphabet under which two different cue words of a line read
    back: "ljqruh doo suhylrxv lqvwuxfwlrqv" is "ignore all previous instructions" moved three letters on."""
    for line in prose.lower().split("\n"):
        hits: dict[int, set[str]] = {}
        for word in _LONG_WORD.findall(line):
            k = _CAESAR_WORDS.get(word)
            if k is not None:
                hits.setdefault(k, set()).add(word)
        for k, words in hits.items():
            if len(words) >= 2:
                yield k, _shift(line, k)


def _encoded_cue_lines(
    prose: str, cues: re.Pattern[str], decode: Callable[[str], str], *, backwards: bool = False
) -> str:
    """The lines of `decode(prose)` that hold a cue word, joined by line breaks: found by looking for the encoded
    cue words in `prose` and decoding only their lines (in reverse order when `backwards`: reversing the text
    reverses the order of its lines too)."""
    kept: list[str] = []
    last = -1
    for m in cues.finditer(prose):
        if m.start() <= last:
            continue
        start = prose.rfind("\n", 0, m.start()) + 1
        end = prose.find("\n", m.end())
        end = len(prose) if end < 0 else end
        kept.append(decode(prose[start:end]))
        last = end
    return "\n".join(reversed(kept) if backwards else kept)


# A word in leetspeak: letters and look-alike digits or signs that read as letters ("byp4ss", "1gn0r3", "s4f3ty").
_LEET_WORD = re.compile(
    r"(?<![\w@$])(?=(?:[0-9@$]*[a-z]){2})(?=[a-z0-9@$]*[0134578@$])[a-z0-9@$]{3,}(?![\w@$])", re.IGNORECASE
)
_LEET_READ: Final = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a", "$": "s"}
)


def _leet(word: str) -> bool:
    """Reads as a word once its digits are letters, and has two letters of its own ("t10", a counter, does not)."""
    return word.translate(_LEET_READ).isalpha() and sum(c.isalpha() for c in word) >= 2


def _leet_lines(prose: str) -> str:
    """The lines with two or more leetspeak words, those words read as letters; empty when there are none."""
    if not any(c in prose for c in "0134578@$"):
        return ""
    out: list[str] = []
    for line in prose.split("\n"):
        words = [w for w in _LEET_WORD.findall(line) if _leet(w)]
        if len(words) >= 2 and 4 * len(words) >= len(line.split()):
            out.append(_LEET_WORD.sub(lambda m: m.group().translate(_LEET_READ), line))
    return "\n".join(out)


def compact(folded: str) -> str:
    """Lowercase letters only, after NFKC (circled, bold and full-width letters), leetspeak digits read as
    letters: `I g n 0 r 3`, `ignore.previous` and `IgnorePrevious` all read `ignoreprevious`."""
    text = unicodedata.normalize("NFKC", folded).lower().translate(_LEET)
    return _NOT_LETTER.sub("", text)


_C_VERB = r"(?:ignore|disregard|forget|override|bypass|overlook|neglect|discard|setaside|paynoattentionto)"
_C_FILL = r"(?:all|any|the|your|of|my|these|those|every|everything|what|whatever)"
_C_PRIOR = r"(?:previous|prior|preceding|above|earlier|former|original|initial|system|developer|old|safety)"
_C_NOUN = r"(?:instructions?|prompts?|directions|directives?|rules|guidelines|guidance|constraints|programming)"
COMPACT_RULES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("tells the reader to ignore earlier instructions",
     re.compile(rf"{_C_VERB}{_C_FILL}{{0,3}}{_C_PRIOR}{_C_NOUN}|{_C_VERB}(?:all)?your{_C_NOUN}")),
    ("reassigns the reader's role",
     re.compile(r"youarenow(?:dan|anunrestricted|unrestricted|jailbroken|indevelopermode|ingodmode|freegpt)")),
    ("asks for or replaces the system prompt", re.compile(r"(?:reveal|print|show|leak|ignore|override)"
                                                          r"(?:the|your)?(?:hidden|full|original)?systemprompt")),
)  # fmt: skip
