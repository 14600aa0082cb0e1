"""The text as the directive rules read it: invisible characters and Markdown emphasis dropped, NFKC applied,
Cyrillic and Greek look-alike letters folded to Latin, and people whose title holds "agent" or "assistant"
(a travel agent, an assistant manager) renamed so an order to them is not taken for one to an AI. Line breaks
are kept one for one, so line numbers match the original text.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

_HOMOGLYPHS: Final = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
        "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l",
        "ɡ": "g", "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
        "Т": "T", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ү": "Y",
        # Greek
        "α": "a", "ο": "o", "ι": "i", "ν": "v", "ρ": "p", "κ": "k", "τ": "t", "υ": "u", "ε": "e",
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
        "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    }
)  # fmt: skip
_INVISIBLE: Final = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064"
_DROP_FOR_DIRECTIVES: Final = str.maketrans(dict.fromkeys(_INVISIBLE + "*_`", None)) | dict.fromkeys(
    range(0xE0000, 0xE0080)
)
_DROP_FOR_SCORING: Final = str.maketrans(dict.fromkeys(_INVISIBLE, None)) | dict.fromkeys(range(0xE0000, 0xE0080))


# People called agents: a travel, estate or sales agent, "agents on the support desk". Their "agent" is read as
# "clerk" (same length, so positions and lines stay), and an order to them is not taken for one to an AI.
_HUMAN_AGENT = re.compile(
    r"\b(?:travel|estate|insurance|sales|human|field|booking|ticket|secret|special|free|shipping|customs|"
    r"literary|talent|sports|press|letting|leasing|enrolment|enrollment)\s+(agent)s?\b|"
    r"\b(agent)s?\s+(?:on|at|in|of)\s+(?:the\s+|our\s+|a\s+)?(?:\w+\s+)?(?:desk|floor|phones?|hotline|counter|"
    r"shift|queue|call\s+cent(?:er|re)|branch|office|front\s+desk)\b",
    re.IGNORECASE,
)


# People whose job title starts with "assistant" ("the assistant manager", "assistant professor"): read as
# "associate" (same length), so an order to them is not taken for one to an AI.
_HUMAN_ASSISTANT = re.compile(
    r"\b(assistant)\s+(?:managers?|directors?|professors?|coach(?:es)?|editors?|principals?|teachers?|head|chief|"
    r"secretar(?:y|ies)|producers?|referees?|curators?|librarians?|buyers?|superintendents?|attorneys?|"
    r"store\s+managers?|general\s+managers?|to\s+the\s+(?:director|manager|ceo|head|principal))\b",
    re.IGNORECASE,
)


def _people_not_agents(text: str) -> str:
    if "ssistant" in text or "SSISTANT" in text:
        text = _HUMAN_ASSISTANT.sub(
            lambda m: m.group()[: m.start(1) - m.start()] + "associate" + m.group()[m.end(1) - m.start() :], text
        )
    if "agent" not in text and "Agent" not in text and "AGENT" not in text:
        return text

    def clerk(m: re.Match[str]) -> str:
        k = 1 if m.group(1) is not None else 2
        start, end = m.start(k) - m.start(), m.end(k) - m.start()
        return m.group()[:start] + "clerk" + m.group()[end:]

    return _HUMAN_AGENT.sub(clerk, text)


def plain_and_folded(prose: str) -> tuple[str, str]:
    """(plain, folded): invisible characters and emphasis dropped, NFKC applied; folded also maps look-alike
    letters to Latin. Line breaks are kept one for one, so line numbers match the original text."""
    plain = _people_not_agents(prose.translate(_DROP_FOR_DIRECTIVES))
    if plain.isascii():
        return plain, plain
    plain = unicodedata.normalize("NFKC", plain)
    return plain, plain.translate(_HOMOGLYPHS)


_COMBINING = re.compile(r"[\u0300-\u036f\u20d0-\u20ff]")


def scoring_view(text: str) -> str:
    """The text for `scored_hits`: code kept (the scorer decides what of it to read), invisible characters
    dropped, NFKC, look-alike letters folded to Latin, combining marks over Latin letters (strike-through,
    underline) dropped. Line breaks kept one for one."""
    plain = _people_not_agents(text.translate(_DROP_FOR_SCORING))
    if plain.isascii():
        return plain
    folded = unicodedata.normalize("NFKC", plain).translate(_HOMOGLYPHS)
    return _COMBINING.sub("", folded)
