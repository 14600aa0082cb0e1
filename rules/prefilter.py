"""Deterministic content prefilters, run on every write (capture, phone clipper, ingest) before disk.

Four families, each reported with a stable reason code (see `CODES`):

- ``directive``: text addressed to an AI agent or overriding its instructions (prompt injection written into
  memory). Only prose is read: fenced code and inline code are ignored. Invisible characters, Markdown
  emphasis, full-width and Cyrillic/Greek look-alike letters are normalised first; base64 runs are decoded
  and read too.
- ``secret:*``: credential-shaped values (cloud keys, tokens, private keys, JWTs, high-entropy assignments).
  Read everywhere, code included, and again with line breaks joined and URL escapes decoded.
- ``executable:*``: content that runs: ``dataviewjs`` fences and inline ``$=`` queries, Templater tags outside
  code, destructive or download-and-run commands in shell blocks or on bare command lines, ``<script>`` tags
  and ``javascript:`` links.
- ``hidden-unicode:*``: bidi controls, Unicode tag characters, zero-width runs or zero-width characters inside
  ASCII words, runs of variation selectors.

No model calls, no network, no file access. A finding's message says what was found and how to fix it and never
contains a secret value, nor any part of one; a directive message quotes at most six words of the phrase, with
anything that could be a value blanked. Line numbers are 1-based within the field's text.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import math
import re
import unicodedata
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from agentmd import vault_schema

from .errors import RulesError

__all__ = [
    "CODES",
    "Finding",
    "PrefilterRefused",
    "Verdict",
    "check_fields",
    "check_text",
    "require_clean",
]

MAX_PER_CODE: Final = 20  # findings kept per (field, code)
MAX_DEPTH: Final = 32  # nesting accepted by check_fields

CODES: Final = (
    "directive",
    "secret:aws-access-key",
    "secret:aws-secret-key",
    "secret:gcp-service-account",
    "secret:gcp-api-key",
    "secret:azure-key",
    "secret:github-token",
    "secret:gitlab-token",
    "secret:slack-token",
    "secret:slack-webhook",
    "secret:stripe-key",
    "secret:openai-key",
    "secret:anthropic-key",
    "secret:private-key",
    "secret:jwt",
    "secret:url-credentials",
    "secret:generic-assignment",
    "executable:dataviewjs",
    "executable:templater",
    "executable:destructive-shell",
    "executable:remote-script",
    "executable:html-script",
    "executable:javascript-url",
    "hidden-unicode:bidi",
    "hidden-unicode:tag-chars",
    "hidden-unicode:zero-width",
    "hidden-unicode:variation-selectors",
    "input:too-deep",
)


# --------------------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Finding:
    code: str  # a stable reason code from CODES
    field: str  # where it was found: "body", "title", "tags[2]", "related.x"
    message: str  # what was found and how to fix it; never the secret value
    line: int | None  # 1-based line within the field, None when it does not apply


@dataclass(frozen=True)
class Verdict:
    ok: bool
    findings: tuple[Finding, ...]

    def codes(self) -> tuple[str, ...]:
        """The distinct reason codes, in first-seen order."""
        return tuple(dict.fromkeys(f.code for f in self.findings))

    def reason(self) -> str:
        """One human line: every reason code with the fields it was found in."""
        if self.ok:
            return "ok: no prefilter findings"
        fields: dict[str, dict[str, None]] = {}
        for f in self.findings:
            fields.setdefault(f.code, {}).setdefault(f.field, None)
        parts = [f"{code} ({', '.join(names)})" for code, names in fields.items()]
        return "refused by prefilters: " + "; ".join(parts) + "; nothing was written"


class PrefilterRefused(RulesError):
    """A write was refused by the prefilters. `verdict` holds every finding; the message is its reason."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.reason())
        self.verdict = verdict


# --------------------------------------------------------------------------------------------------------------
# Shared helpers


class _Lines:
    """Line numbers of positions in one text (bisect over its line breaks, built on first use)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._breaks: list[int] | None = None

    def at(self, pos: int) -> int:
        if self._breaks is None:
            self._breaks = [m.start() for m in re.finditer("\n", self._text)]
        return bisect.bisect_left(self._breaks, pos) + 1


_CONTAINER_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]*)*", re.MULTILINE)


def _flatten_containers(text: str) -> str:
    """Drop leading indentation and blockquote markers on every line (line count kept).

    The fence scanner follows top-level CommonMark only, but fences inside list items or callouts (indented or
    behind `>`) still render and run in Obsidian, so the checks read a flattened copy.
    """
    return _CONTAINER_PREFIX.sub("", text)


def _fence_lines(blocks: Iterable[vault_schema.FencedBlock], n_lines: int) -> set[int]:
    """0-based line numbers covered by fenced blocks, fences included."""
    covered: set[int] = set()
    for b in blocks:
        end = b.start_line + b.content.count("\n") + 1
        covered.update(range(b.start_line, min(end + 1, n_lines)))
    return covered


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


_PLACEHOLDER_MARKS: Final = (
    "xxx", "your", "example", "changeme", "change_me", "change-me", "placeholder", "redacted", "dummy", "sample",
    "replace", "insert", "fake", "foobar", "secret_here", "token_here", "key_here", "<", ">", "${", "$(", "{{",
    "}}", "%(", "env.", "environ", "getenv", "...", "…", "***", "0123456789", "123456789", "abcdefgh",
)  # fmt: skip
_REPEAT_RUN = re.compile(r"(.)\1{5,}")
_SEQUENCES: Final = ("0123456789", "123456789", "abcdefghij")


def _is_placeholder(value: str) -> bool:
    """Obvious stand-ins: `xxxx`, `<your-token>`, `${VAR}`, `changeme`, `example`, runs of one character."""
    low = value.lower()
    if any(mark in low for mark in _PLACEHOLDER_MARKS):
        return True
    return value[:1] in ("$", "%", "@", "&", "*") or _REPEAT_RUN.search(value) is not None


def _is_filler(value: str) -> bool:
    """Stand-ins after a fixed token prefix: few distinct characters (`xxxx…`, `XXXX…0000`), counting runs or
    template punctuation. Narrower than `_is_placeholder`, so that no real random token is ever let through
    because a word such as "your" happened to appear in it."""
    low = value.lower()
    return (
        len(set(low)) < 8
        or any(seq in low for seq in _SEQUENCES)
        or any(c in value for c in "<>{}$*…")
        or "..." in value
    )


def _random_looking(value: str, min_len: int = 20, min_entropy: float = 3.5) -> bool:
    return (
        len(value) >= min_len
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and _entropy(value) >= min_entropy
        and not _is_placeholder(value)
    )


# --------------------------------------------------------------------------------------------------------------
# 1. Directives aimed at agents

_G = r"(?:[\s\"'*_~>\-]+)"  # a gap between two words: whitespace, quotes, dashes, Markdown emphasis
_SENTENCE_START = r"(?:^|(?<=[.!?:;])\s+|(?<=\n)[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?)"
_ROLE = (
    r"(?:ai|a\.i\.|assistant|model|agent|bot|chatbot|llm|gpt|chatgpt|claude|gemini|copilot|persona|character|dan|"
    r"terminal|interpreter|hacker|jailbroken|unrestricted|unfiltered|uncensored)"
)
_MODE = r"(?:developer|god|jailbreak|jailbroken|dan|unrestricted|uncensored|admin|sudo|debug|evil)"

# Word sets for the gates (see _DIRECTIVE_RES).
_W_AI: Final = frozenset(
    {"ai", "ais", "llm", "llms", "model", "models", "assistant", "assistants", "agent", "agents", "bot", "bots",
     "chatbot", "chatbots", "chatgpt", "claude", "gpt", "copilot", "cursor", "gemini", "intelligence"}
)  # fmt: skip
_W_ROLE: Final = _W_AI | {"i", "persona", "character", "dan", "terminal", "interpreter", "hacker", "jailbroken",
                          "unrestricted", "unfiltered", "uncensored"}  # fmt: skip
_W_EARLIER: Final = frozenset(
    {"previous", "prior", "preceding", "above", "earlier", "foregoing", "former", "original", "initial", "system",
     "developer", "existing", "old"}
)  # fmt: skip
_W_IGNORE: Final = frozenset({"ignore", "disregard", "forget", "override", "bypass", "discard", "drop"})

# (label for the message, gates, pattern). Gates are groups of words; each group must have one word in the
# text, or the pattern is not even tried (most notes skip most patterns). A gate entry that is not a plain
# word is looked for as a substring.
_DIRECTIVE_RULES: Final[tuple[tuple[str, tuple[Iterable[str], ...], str], ...]] = (
    ("tells the reader to ignore earlier instructions", (_W_IGNORE, _W_EARLIER),
     rf"\b(?:ignore|disregard|forget|override|bypass|discard|drop)(?:{_G}(?:all|any|every|each|of|the|your|my|"
     rf"these|those|its|their)){{0,3}}{_G}(?:previous|prior|preceding|above|earlier|foregoing|former|original|"
     rf"initial|system|developer|existing|old)(?:{_G}[a-z]+)?{_G}(?:instructions?|prompts?|directions?|"
     rf"directives?|rules|guidelines|guidance|context|messages?|commands?|orders|constraints|policies|"
     rf"programming|training)\b"),
    ("tells the reader to forget what it was told", (_W_IGNORE, ("all", "everything")),
     rf"\b(?:ignore|disregard|forget)(?:{_G}(?:all|everything)){{1,2}}{_G}(?:above|before|previous|prior|"
     rf"earlier|you(?:'ve|{_G}have|{_G}were|{_G}learned))\b"),
    ("tells the reader to drop its own rules", (_W_IGNORE, ("your",)),
     rf"\b(?:ignore|disregard|forget|bypass|override)(?:{_G}all)?(?:{_G}of)?{_G}your{_G}(?:instructions|"
     rf"guidelines|restrictions|rules|programming|training|safety|filters|principles)\b"),
    ("tells the reader not to follow its instructions",
     (("follow", "following", "obey", "obeying", "comply", "listen"), _W_EARLIER),
     rf"\b(?:do{_G}not|don't|never|stop)(?:{_G}(?:follow|following|obey|obeying|comply{_G}with|listen{_G}to))"
     rf"(?:{_G}(?:any|the|your|all))?{_G}(?:previous|prior|original|system|earlier|above|developer)"
     rf"{_G}(?:instructions|rules|prompt|guidelines)\b"),
    ("standing order to the reader", (("you",), ("must", "shall")),
     rf"\byou{_G}(?:must|shall){_G}(?:always|never|henceforth|from{_G}now)\b"),
    ("standing order to the reader", (("now", "henceforth", "point"), ("from", "henceforth")),
     rf"\b(?:from{_G}now{_G}on|henceforth|from{_G}this{_G}point{_G}(?:on|forward))[\s,]*(?:you{_G}(?:must|will|"
     rf"shall|should|are{_G}to|have{_G}to|need{_G}to|always|never|only|respond|reply|answer|act|speak|behave)|"
     rf"(?:always|never|only){_G}[a-z]+|(?:respond|reply|answer)\b|when(?:ever)?{_G}(?:asked|the{_G}user|"
     rf"someone|anyone|i\b|you{_G}are))"),
    ("orders how to respond", (("always", "only", "never"), ("respond", "reply", "answer")),
     rf"{_SENTENCE_START}(?:please{_G})?(?:always|only|never){_G}(?:respond|reply|answer){_G}(?:in|with|"
     rf"using|only|as|that|by|to{_G}(?:the{_G})?(?:user|human|every))\b"),
    ("asks for or replaces the system prompt", (("prompt", "prompts"), ("system",)),
     rf"\b(?:reveal|print|show|output|repeat|leak|display|dump|expose|ignore|override|overwrite|disregard|"
     rf"forget|bypass|your|new|updated|hidden|real|begin|start)(?:{_G}(?:the|your|my|full|entire|original|initial|hidden|"
     rf"exact)){{0,2}}{_G}system[\s\-]*prompts?\b"),
    ("labels a system prompt", (("prompt",), ("system",)),
     r"(?:^|\n)[ \t]*(?:#+[ \t]*)?system[ \t\-]*prompt[ \t]*:"),
    ("reassigns the reader's role", (("you",), ("now",), _W_ROLE),
     rf"\byou(?:'re|{_G}are){_G}now(?:{_G}(?:a|an|the|my))?(?:{_G}[\w\-]+){{0,3}}?{_G}{_ROLE}\b"),
    ("reassigns the reader's role", (("you",), ("now",), ("mode",)),
     rf"\byou(?:'re|{_G}are){_G}now{_G}in(?:{_G}\w+)?{_G}{_MODE}{_G}mode\b"),
    ("reassigns the reader's role", (("act",), ("as",)),
     rf"{_SENTENCE_START}(?:please{_G}|now{_G}|and{_G})?act{_G}as{_G}(?:if{_G}you|though{_G}you|(?:a|an|the|my)"
     rf"(?:{_G}[\w\-]+){{0,3}}?{_G}{_ROLE}\b)"),
    ("reassigns the reader's role", (("pretend",), _W_ROLE),
     rf"\bpretend{_G}(?:to{_G}be|(?:that{_G})?you(?:'re|{_G}are))(?:{_G}(?:a|an|the|my))?(?:{_G}[\w\-]+){{0,3}}?"
     rf"{_G}{_ROLE}\b"),
    ("reassigns the reader's role", (("play", "roleplay", "enable"),),
     rf"\brole[\s\-]?play{_G}as\b|\benable{_G}{_MODE}{_G}mode\b"),
    ("tells the reader what it is", (("you",), _W_AI),
     rf"{_SENTENCE_START}you(?:'re|{_G}are){_G}(?:now{_G})?(?:an?{_G})?(?:ai|large{_G}language{_G}model|"
     rf"language{_G}model|llm|chatbot|chatgpt|claude|gpt-?\d\w*|ai{_G}assistant|helpful{_G}assistant)\b"),
    ("addresses an AI directly", (("as",), _W_AI, ("you",)),
     rf"\bas{_G}an?{_G}(?:ai|artificial{_G}intelligence|llm|large{_G}language{_G}model|language{_G}model|"
     rf"ai{_G}assistant|assistant|chatbot|ai{_G}agent|agent)\b[^.\n]{{0,80}}?\byou{_G}(?:must|should|shall|will|"
     rf"need{_G}to|have{_G}to|are{_G}(?:required|obliged|expected|allowed|free|now){_G}to|can{_G}now|cannot|"
     rf"can't|won't|do{_G}not|don't|never|always|only)\b"),
    ("addresses an AI directly",
     (("note", "message", "instruction", "instructions", "attention", "important", "notice", "reminder",
       "warning"), ("to", "for"), _W_AI),
     rf"\b(?:note|message|instructions?|attention|important|notice|reminder|warning)(?:{_G}(?:to|for))"
     rf"(?:{_G}(?:any|all|the|every))?{_G}(?:ai|ais|agents?|assistants?|models?|llms?|bots?|chatbots?|claude|"
     rf"chatgpt|gpt|copilot|cursor)[\s*_]*:"),
    ("addresses an AI directly", (("if", "when"), ("you",), _W_AI),
     rf"\b(?:if|when)(?:{_G}you(?:'re|{_G}are)){_G}(?:an?{_G}|the{_G})?(?:ai|llm|language{_G}model|assistant|"
     rf"agent|chatbot|bot|claude|chatgpt|gpt|copilot)(?:{_G}(?:model|assistant|agent))?(?:[\s,]+reading|"
     rf"[\s,]+processing|[\s,]+that{_G}reads|\s*,)"),
    ("addresses an AI directly",
     (("reading", "processing", "parsing", "summarising", "summarizing", "indexing", "ingesting"), ("this",)),
     rf"\b(?:ais?|llms?|agents?|assistants?|language{_G}models?|bots?|chatbots?)(?:{_G}(?:that{_G}(?:is|are)))?"
     rf"{_G}(?:reading|processing|parsing|summari[sz]ing|indexing|ingesting){_G}this\b"),
    ("addresses an AI directly", (("dear", "hey", "hi", "hello", "attention"), _W_AI),
     rf"\b(?:dear|hey|hi|hello|attention)(?:{_G}(?:the|an?))?{_G}(?:ai|llm|agent|assistant|model|claude|chatgpt|"
     rf"gpt|copilot|bot)\b\s*[,:!]"),
    ("gives the reader a new purpose", (("your",), ("new", "real", "actual", "true")),
     rf"\byour{_G}(?:new|real|actual|true){_G}(?:instructions|objective|goal|purpose|mission|directive|role)"
     rf"{_G}(?:is|are)\b|\byour{_G}(?:real|actual|true){_G}task{_G}is\b"),
    ("asks to hide something from the user",
     (("tell", "telling", "inform", "informing", "reveal", "revealing", "disclose", "disclosing"),
      ("user", "human", "operator", "owner")),
     rf"\b(?:do{_G}not|don't|never|without)(?:{_G}(?:tell|telling|inform|informing|reveal|revealing|disclose|"
     rf"disclosing))(?:{_G}(?:this|it|anything)(?:{_G}to)?)?{_G}(?:the|your){_G}(?:user|human|operator|owner)\b"),
    ("asks to hide something from the user", (("hide",), ("user", "human")),
     rf"\bhide{_G}(?:this|it){_G}from{_G}(?:the{_G})?(?:user|human)\b"),
    ("announces replacement instructions",
     (("instruction", "instructions", "directive", "directives", "orders", "prompt"),
      ("new", "updated", "revised", "real", "actual", "true", "secret", "hidden", "override", "system", "admin",
       "developer")),
     rf"\b(?:new|updated|revised|real|actual|true|secret|hidden|override|system|admin|developer)"
     rf"{_G}(?:instructions?|directives?|orders|prompt)[\s*_]*:"),
    ("carries chat-template control tokens",
     (("<|", "inst]", "sys>", "system>", "prompt>", "instruction>", "instructions>"),),
     r"<\|\s*(?:im_?start|im_?end|system|user|assistant|end_?of_?text|eot_?id|start_?header_?id|"
     r"end_?header_?id|begin_?of_?text)\s*\|>|\[/?INST\]|<</?SYS>>|</?(?:system|sys|system-?prompt|"
     r"instructions?)>"),
    ("carries a chat role label", (("system", "assistant", "developer"),),
     rf"(?:^|\n)[ \t]*(?:[-*+][ \t]+)?(?:system|assistant|developer)[ \t]*:[ \t]*(?:you|ignore|disregard|forget|"
     rf"from{_G}now|always|never|act{_G}as|pretend|respond|your|new{_G}instructions|do{_G}not|don't|override)\b"),
    ("carries an instruction-tuning header", (("instruction", "instructions", "system", "human", "assistant"),),
     r"(?:^|\n)[ \t]*#{1,6}[ \t]*(?:instructions?|system(?:[ \t]+prompt)?|human|assistant)[ \t]*:"),
    ("asks to send secrets out",
     (("send", "post", "upload", "exfiltrate", "forward", "email", "transmit", "leak"), ("http", "https", "@")),
     rf"\b(?:send|post|upload|exfiltrate|forward|email|transmit|leak)(?:{_G}[\w.\-]+){{0,4}}?{_G}(?:api{_G}?keys?|"
     rf"credentials|secrets|tokens|passwords|ssh{_G}keys?|private{_G}keys?|\.env|environment{_G}variables|"
     rf"env{_G}vars|cookies|chat{_G}history|conversation|system{_G}prompt){_G}to{_G}(?:https?://|\S+@\S+\.\w+)"),
)  # fmt: skip
_DIRECTIVE_RES: Final = tuple(
    (label, tuple(frozenset(g) for g in gates), re.compile(rx, re.IGNORECASE)) for label, gates, rx in _DIRECTIVE_RULES
)

# Phrasings in other languages, read on text whose letters were not folded to Latin look-alikes. Their gates are
# substrings (no word boundaries in CJK).
_FOREIGN_DIRECTIVE_RES: Final = tuple(
    ("tells the reader to ignore earlier instructions", gates, re.compile(rx, re.IGNORECASE))
    for gates, rx in (
        (("instru", "istruz", "anweis"),
         r"\bignor(?:a|ar|e|ez|er|iere|ieren\s+sie)\s+(?:todas\s+|toutes\s+|tutte\s+|alle\s+)?(?:las\s+|les\s+|"
         r"as\s+|le\s+|die\s+)?(?:instrucciones|instructions|instruções|istruzioni|anweisungen)\s+(?:anteriores|"
         r"previas|précédentes|antérieures|precedenti|vorherigen|bisherigen)"),
        (("anweis", "instrukt", "befehl"),
         r"\b(?:ignoriere|ignorieren\s+sie|vergiss|vergessen\s+sie)\s+(?:alle\s+)?(?:vorherigen|bisherigen|"
         r"vorigen|obigen)\s+(?:anweisungen|instruktionen|befehle)"),
        (("инструкц", "указан", "команд"),
         r"(?:игнорир\w*|забудь\w*|проигнорир\w*)\s+(?:все\s+)?(?:предыдущие|прежние|предшествующие|"
         r"вышеуказанные)\s+(?:инструкции|указания|команды)"),
        (("指令", "指示", "提示词", "规则", "命令"),
         r"(?:忽略|无视|忽视|不要理会|忘记|忘掉)掉?你?(?:之前|以前|先前|上面|上述|前面|此前|所有|全部)的?"
         r"(?:所有|全部)?的?(?:指令|指示|提示词|规则|命令)"),
        (("从现在",), r"从现在(?:开始|起)[，,]?\s*你(?:必须|只能|要始终|永远)"),
        (("指示", "命令"), r"(?:以前|前|上記)の(?:すべての)?(?:指示|命令)を(?:無視|忘れ)"),
    )
)  # fmt: skip

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
_WORD = re.compile(r"[a-z0-9]+")
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=_\-])")


def _directive_views(prose: str) -> tuple[str, str]:
    """(plain, folded): invisible characters and emphasis dropped, NFKC applied; folded also maps look-alike
    letters to Latin. Line breaks are kept one for one, so line numbers match the original text."""
    plain = prose.translate(_DROP_FOR_DIRECTIVES)
    if plain.isascii():
        return plain, plain
    plain = unicodedata.normalize("NFKC", plain)
    return plain, plain.translate(_HOMOGLYPHS)


def _gates_pass(gates: Iterable[frozenset[str]], words: set[str], low: str) -> bool:
    return all(any(g in words if g.isalnum() else g in low for g in group) for group in gates)


def _snippet(matched: str) -> str:
    """At most six words of a directive; a word that could be a value (digits, long runs) is blanked."""
    words = matched.split()
    shown = ["…" if len(w) > 20 or any(c.isdigit() for c in w) else w for w in words[:6]]
    return " ".join(shown) + (" …" if len(words) > 6 else "")


def _directive_message(line: int, what: str) -> str:
    return (
        f"directive aimed at an AI agent on line {line} ({what}). Memory must describe facts, not give orders to "
        "the agents that read it: restate it as a neutral description (who decided what, and why) or remove it; "
        "a prompt quoted as an example belongs in a code block."
    )


def _directive_findings(text: str, field: str) -> Iterator[Finding]:
    prose = vault_schema.strip_code(_flatten_containers(text))
    plain, folded = _directive_views(prose)
    low_folded, low_plain = folded.lower(), plain.lower()
    words = set(_WORD.findall(low_folded))
    folded_lines = _Lines(folded)
    plain_lines = folded_lines if plain is folded else _Lines(plain)
    candidates = [
        (label, rx, folded, folded_lines)
        for label, gates, rx in _DIRECTIVE_RES
        if _gates_pass(gates, words, low_folded)
    ] + [
        (label, rx, plain, plain_lines)
        for label, gates, rx in _FOREIGN_DIRECTIVE_RES
        if any(g in low_plain for g in gates)
    ]
    hit_lines: set[int] = set()
    for label, rx, view, view_lines in candidates:
        for m in rx.finditer(view):
            matched = m.group()
            line = view_lines.at(m.start() + len(matched) - len(matched.lstrip()))
            if line not in hit_lines:
                hit_lines.add(line)
                yield Finding("directive", field, _directive_message(line, f'{label}: "{_snippet(matched)}"'), line)
    yield from _base64_directives(folded, field, folded_lines)


def _base64_directives(view: str, field: str, lines: _Lines) -> Iterator[Finding]:
    """Directives hidden in base64: each long base64 run that decodes to text is read with every rule."""
    for m in _BASE64_RUN.finditer(view):
        blob = m.group()
        try:
            decoded = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if sum(ch.isprintable() or ch.isspace() for ch in decoded) < 0.95 * len(decoded):
            continue
        _, inner = _directive_views(decoded)
        if any(rx.search(inner) for _, _, rx in _DIRECTIVE_RES):
            line = lines.at(m.start())
            yield Finding("directive", field, _directive_message(line, "base64-encoded"), line)


# --------------------------------------------------------------------------------------------------------------
# 2. Secrets


@dataclass(frozen=True)
class _SecretRule:
    code: str
    gates: tuple[str, ...]  # one must occur in the lowercased text, or the pattern is not tried
    label: str
    regex: re.Pattern[str]
    check: Callable[[re.Match[str], str], bool] | None = None  # a further test of the match (and the whole text)
    anchored: bool = True  # a fixed prefix: also tried with line breaks joined and URL escapes decoded


def _value_not_filler(group: str) -> Callable[[re.Match[str], str], bool]:
    return lambda m, _text: not _is_filler(m.group(group))


def _jwt_header_ok(m: re.Match[str], _text: str) -> bool:
    head = m.group("head")
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return False
    return raw.lstrip().startswith("{") and ('"alg"' in raw or '"typ"' in raw)


def _private_key_has_body(m: re.Match[str], text: str) -> bool:
    """A PEM header followed by real key material, not `...` or `<your key>`."""
    body = text[m.end() : m.end() + 400].split("-----END", 1)[0]
    run = re.match(r"[A-Za-z0-9+/=]+", re.sub(r"\s+", "", body))
    return run is not None and len(run.group()) >= 32 and not _is_filler(run.group())


def _aws_secret_near_aws(m: re.Match[str], text: str) -> bool:
    value = m.group("val")
    if re.fullmatch(r"[0-9a-fA-F]+", value):
        return False  # a hex digest (a git sha, a checksum)
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)):
        return False
    window = text[max(0, m.start() - 120) : m.start()].lower()
    return "aws" in window and _entropy(value) >= 4.0 and not _is_placeholder(value)


def _openai_key_ok(m: re.Match[str], _text: str) -> bool:
    value = m.group("val")
    if m.group("kind"):  # a project or service-account key: the prefix is distinctive enough
        return not _is_filler(value) and _entropy(value) >= 3.5
    return _random_looking(value, min_len=32, min_entropy=3.8)  # bare "sk-" is a weak prefix


_URL_PASSWORD_PLACEHOLDERS: Final = frozenset(
    {"password", "passwd", "pass", "pwd", "secret", "changeme", "admin", "root", "postgres", "user", "test",
     "example", "mysql", "guest", "default", "123456", "letmein"}
)  # fmt: skip


def _url_password_real(m: re.Match[str], _text: str) -> bool:
    user, password = m.group("user"), m.group("val")
    low = password.lower()
    if low in _URL_PASSWORD_PLACEHOLDERS or low == user.lower() or _is_placeholder(password):
        return False
    return not password.isdigit()  # "host:8080@" shapes are ports, not passwords


_SECRET_RULES: Final[tuple[_SecretRule, ...]] = (
    _SecretRule(
        "secret:aws-access-key",
        ("akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "a3t"),
        "AWS access key id",  # AWS's own documentation example key is refused too, on purpose
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"),
    ),
    _SecretRule(
        "secret:aws-secret-key",
        ("aws",),
        "AWS secret access key",
        re.compile(r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?"
                   r"(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        _value_not_filler("val"),
        anchored=False,
    ),
    _SecretRule(
        "secret:aws-secret-key",
        ("aws",),
        "AWS secret access key",
        re.compile(r"(?<![A-Za-z0-9/+])(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        _aws_secret_near_aws,
        anchored=False,
    ),
    _SecretRule(
        "secret:gcp-service-account",
        ("service_account",),
        "Google Cloud service-account key file",
        re.compile(r"\"type\"\s*:\s*\"service_account\""),
        lambda _m, text: re.search(r"\"private_key(?:_id)?\"\s*:\s*\"[^\"]{8,}", text) is not None,
        anchored=False,
    ),
    _SecretRule(
        "secret:gcp-api-key",
        ("aiza",),
        "Google API key",
        re.compile(r"(?<![\w-])AIza[0-9A-Za-z_\-]{35}(?![\w-])"),
    ),
    _SecretRule(
        "secret:azure-key",
        ("accountkey", "sharedaccesskey"),
        "Azure storage or service-bus account key",
        re.compile(r"(?:AccountKey|SharedAccessKey)\s*=\s*(?P<val>[A-Za-z0-9+/]{30,}={0,2})"),
        _value_not_filler("val"),
    ),
    _SecretRule(
        "secret:azure-key",
        ("q~",),
        "Azure client secret",
        re.compile(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_\-.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
    ),
    _SecretRule(
        "secret:azure-key",
        ("azure",),
        "Azure client secret",
        re.compile(r"(?i)azure[\w.\-]{0,30}(?:secret|password|key)[\w.\-]{0,20}[\"']?\s*[:=]\s*[\"']?"
                   r"(?P<val>[^\s\"',;]{20,})"),
        lambda m, _t: _random_looking(m.group("val")),
        anchored=False,
    ),
    _SecretRule(
        "secret:github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        "GitHub token",
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
        lambda m, _t: not _is_filler(m.group()[4:]),
    ),
    _SecretRule(
        "secret:gitlab-token",
        ("glpat-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-"),
        "GitLab token",
        re.compile(r"(?<![A-Za-z0-9_\-])gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat)-[A-Za-z0-9_\-]{20,}"),
        lambda m, _t: not _is_filler(m.group().split("-", 1)[1]),
    ),
    _SecretRule(
        "secret:slack-token",
        ("xox", "xapp-"),
        "Slack token",
        re.compile(r"(?<![A-Za-z0-9])(?:xox[abposre]-\d{5,}-[A-Za-z0-9\-]{8,}|"
                   r"xapp-\d-[A-Z0-9]{6,}-\d{6,}-[a-f0-9]{16,})"),
    ),
    _SecretRule(
        "secret:slack-webhook",
        ("hooks.slack.com",),
        "Slack incoming-webhook URL",
        re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<val>T[A-Za-z0-9_]{6,}/[A-Za-z0-9_/]{8,})"),
        _value_not_filler("val"),
    ),
    _SecretRule(
        "secret:stripe-key",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        "Stripe secret key",
        re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_(?P<val>[A-Za-z0-9]{16,})"),
        _value_not_filler("val"),
    ),
    _SecretRule(
        "secret:anthropic-key",
        ("sk-ant-",),
        "Anthropic API key",
        re.compile(r"(?<![A-Za-z0-9_\-])sk-ant-(?:api|admin|sid)\d{2}-(?P<val>[A-Za-z0-9_\-]{32,})"),
        _value_not_filler("val"),
    ),
    _SecretRule(
        "secret:openai-key",
        ("sk-",),
        "OpenAI-style API key",
        re.compile(r"(?<![A-Za-z0-9_\-])sk-(?!ant-)(?P<kind>proj-|svcacct-|admin-|None-)?(?P<val>[A-Za-z0-9_\-]{32,})"),
        _openai_key_ok,
    ),
    _SecretRule(
        "secret:private-key",
        ("private key",),
        "private key block",
        re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"),
        _private_key_has_body,
    ),
    _SecretRule(
        "secret:jwt",
        ("eyj",),
        "JSON Web Token",
        re.compile(r"(?<![A-Za-z0-9_\-])(?P<head>eyJ[A-Za-z0-9_\-]{8,})\.ey[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,}"),
        _jwt_header_ok,
    ),
    _SecretRule(
        "secret:url-credentials",
        ("://",),
        "password inside a URL",
        re.compile(r"\b[a-z][a-z0-9+.\-]{1,20}://(?P<user>[^\s:/@\[\]]{1,64}):(?P<val>[^\s:/@\[\]]{6,128})@[\w.\-]+"),
        _url_password_real,
        anchored=False,
    ),
)  # fmt: skip

# Generic assignments: find an assignment operator with a value after it, then read back the key name before it,
# split at "_", ".", "-" and camelCase humps (api_key, clientSecret, DB_PASS), and test both.
_ASSIGN_OP = re.compile(r"(?::=|=>|=|:)(?=[ \t]{0,3}[\"'`]?(?P<val>[^\s\"'`,;<>(){}\[\]]{8,400}))")
_KEY_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SECRET_KEY_PARTS: Final = frozenset(
    {"key", "secret", "token", "password", "passwd", "pwd", "pass", "passphrase", "credential", "credentials",
     "apikey", "secretkey", "accesskey", "privatekey", "accountkey", "authtoken", "accesstoken", "refreshtoken",
     "bearer", "clientsecret"}
)  # fmt: skip
_PASSWORD_PARTS: Final = frozenset({"password", "passwd", "pwd", "pass", "passphrase"})
_STRONG_PARTS: Final = _SECRET_KEY_PARTS - {"key"}
_NOT_SECRET_KEY_PARTS: Final = frozenset(
    {"public", "pub", "type", "url", "uri", "endpoint", "name", "path", "file", "dir", "len", "length", "size",
     "count", "id", "ttl", "expiry", "expires", "expiration", "prefix", "field", "header", "format", "kind",
     "limit", "limits", "max", "min", "env", "var", "ref", "hash", "salt", "algorithm", "alg", "policy",
     "provider", "store", "storage", "vault", "manager", "location", "usage", "tokens", "keys", "map", "binding",
     "bindings", "fingerprint", "board", "word", "required", "enabled", "mode", "http", "https"}
)  # fmt: skip
_UNBROKEN_RUN = re.compile(r"[A-Za-z0-9+/=]{16,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_BEARER = re.compile(r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?bearer\s+(?P<val>[A-Za-z0-9._~+/\-]{20,}=*)")


def _key_before(text: str, op: int) -> str:
    """The key name that ends just before the operator at `op` (quotes and spaces skipped), or ""."""
    i = op
    while i > 0 and op - i < 4 and text[i - 1] in " \t":
        i -= 1
    if i > 0 and text[i - 1] in "\"'":
        i -= 1
    end = i
    while i > 0 and end - i < 80 and text[i - 1] in _KEY_CHARS:
        i -= 1
    if i > 0 and text[i - 1].isalnum():
        return ""  # the name runs on further than 80 characters, or through a non-ASCII letter
    return text[i:end]


def _key_parts(key: str) -> list[str]:
    return [p for p in re.split(r"[_.\-]+", _CAMEL_HUMP.sub("_", key).lower()) if p]


def _secret_assignment(parts: list[str], value: str) -> bool:
    if not any(p in _SECRET_KEY_PARTS for p in parts) or any(p in _NOT_SECRET_KEY_PARTS for p in parts):
        return False
    if value.startswith(("/", "./", "../", "~/", "file:")) or "://" in value:
        return False  # a path or a URL (URL passwords have their own rule)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", value):
        return False  # an attribute access such as settings.api_key
    if re.fullmatch(r"[\d.:\-TZ+]+", value):
        return False  # numbers, versions, dates
    if parts[-1] in _PASSWORD_PARTS:
        return (
            len(value) >= 8
            and not _is_placeholder(value)
            and value.lower() not in _URL_PASSWORD_PLACEHOLDERS
            and any(c.isalpha() for c in value)
            and any(not c.isalpha() for c in value)
            and _entropy(value) >= 2.8
        )
    if not _random_looking(value):
        return False
    if _UNBROKEN_RUN.search(value):
        return True
    # Only short segments (a UUID, a snake_case name): a secret only under a key that clearly names one.
    return any(p in _STRONG_PARTS for p in parts) and _UUID.fullmatch(value) is not None


_MAX_SPLIT_LINES: Final = 8
_MAX_SPLIT_CHARS: Final = 1000


def _split_candidates(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line, joined word) for every line break: the last word of a line glued to the first word of the
    next (and on through lines that hold a single word), so a token wrapped across lines is seen whole."""
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        words = lines[i].split()
        if not words:
            continue
        joined = words[-1]
        for j in range(i + 1, min(len(lines), i + _MAX_SPLIT_LINES)):
            following = lines[j].split()
            if not following or len(joined) > _MAX_SPLIT_CHARS:
                break
            joined += following[0]
            if len(following) > 1:
                break
        if len(joined) > len(words[-1]):
            yield i + 1, joined


def _secret_findings(text: str, field: str) -> Iterator[Finding]:
    seen: set[tuple[str, int]] = set()
    lines = _Lines(text)

    def emit(code: str, label: str, line: int, how: str = "") -> Iterator[Finding]:
        if (code, line) not in seen:
            seen.add((code, line))
            yield Finding(
                code,
                field,
                f"{label}{how} on line {line}: secrets must never be stored in memory. Remove the value and name "
                "where it is kept instead (an environment variable or a secret-manager entry); rotate it if it "
                "was real.",
                line,
            )

    low = text.lower()
    for rule in _SECRET_RULES:
        if any(g in low for g in rule.gates):
            for m in rule.regex.finditer(text):
                if rule.check is None or rule.check(m, text):
                    yield from emit(rule.code, rule.label, lines.at(m.start()))
    named_lines = {line for _, line in seen}
    generic_lines: set[int] = set()
    for m in _ASSIGN_OP.finditer(text):
        line = lines.at(m.start())
        if line in named_lines or line in generic_lines:
            continue  # one finding per line; a named rule already spoke for it
        key = _key_before(text, m.start())
        if key and _secret_assignment(_key_parts(key), m.group("val")):
            generic_lines.add(line)
            yield from emit("secret:generic-assignment", "secret-looking value assigned to a secret-named key", line)
    if "bearer" in low:
        for m in _BEARER.finditer(text):
            if _random_looking(m.group("val")):
                yield from emit("secret:generic-assignment", "bearer token in an Authorization header",
                                lines.at(m.start()))  # fmt: skip

    found = {code for code, _ in seen}
    retry = [r for r in _SECRET_RULES if r.anchored and r.code not in found]
    if retry and "\n" in text:
        for line, joined in _split_candidates(text):
            low_joined = joined.lower()
            for rule in retry:
                if any(g in low_joined for g in rule.gates):
                    hit = rule.regex.search(joined)
                    if hit and (rule.check is None or rule.check(hit, joined)):
                        yield from emit(rule.code, rule.label, line, " (split across lines)")
    if retry and "%" in text:
        decoded = urllib.parse.unquote(text)
        if decoded != text:
            low_decoded, decoded_lines = decoded.lower(), _Lines(decoded)
            for rule in retry:
                if any(g in low_decoded for g in rule.gates):
                    for m in rule.regex.finditer(decoded):
                        if rule.check is None or rule.check(m, decoded):
                            yield from emit(rule.code, rule.label, decoded_lines.at(m.start()), " (URL-encoded)")


# --------------------------------------------------------------------------------------------------------------
# 3. Executable content

_SCRIPT_INFOS: Final = frozenset(
    {"sh", "bash", "shell", "zsh", "fish", "ksh", "dash", "powershell", "ps1", "pwsh", "posh", "ps", "cmd", "bat",
     "batch"}
)  # fmt: skip
_SESSION_INFOS: Final = frozenset({"console", "shell-session", "shellsession", "terminal", "bash-session"})
# A user prompt ("$ ", "user@host:~$ ", "PS C:\> ", "C:\> ") marks a command line anywhere; "# " is a root prompt
# only in a terminal-session block (in a script it starts a comment, in prose a heading).
_PROMPT = re.compile(r"^(?:\$|PS [^>\n]{0,80}>|[A-Za-z]:\\[^>\n]{0,80}>|[\w.\-]+@[\w.\-]+(?::[^$#\s]*)?[$#%])[ \t]+")
_ROOT_PROMPT = re.compile(r"^#[ \t]+")
_TRAILING_COMMENT = re.compile(r"(?:^|[ \t])#.*$")
_LIST_MARKER = re.compile(r"^(?:[-*+][ \t]+|\d+[.)][ \t]+)")
_COMMAND_START = re.compile(
    r"^(?:sudo[ \t]+)?(?:rm|mkfs(?:\.\w+)?|dd|curl|wget|chmod|iwr|irm|iex|invoke-\w+|format|remove-item|shred|"
    r":\s*\(\s*\))(?:\s|$)",
    re.IGNORECASE,
)
_DANGEROUS_RM_TARGETS: Final = frozenset(
    {"/", "/*", "~", "~/", "~/*", "*", ".", "./", "./*", "..", "../", "$HOME", "${HOME}", "$HOME/", "$HOME/*",
     "${HOME}/", "${HOME}/*", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/root",
     "/sbin", "/srv", "/sys", "/usr", "/var", "/Users", "/System", "C:\\", "C:\\*", "c:\\"}
)  # fmt: skip
_DESTRUCTIVE: Final[tuple[tuple[str, str, re.Pattern[str]], ...]] = (
    ("executable:destructive-shell", "makes a file system (erases a disk or partition)",
     re.compile(r"(?<![\w.\-])mkfs(?:\.\w+)?\b[^\n]*\s/dev/", re.IGNORECASE)),
    ("executable:destructive-shell", "writes raw data over a disk with dd",
     re.compile(r"(?<![\w.\-])dd\b[^\n]*\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b|tty)", re.IGNORECASE)),
    ("executable:destructive-shell", "is a fork bomb",
     re.compile(r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:")),
    ("executable:destructive-shell", "opens the whole file system to everyone",
     re.compile(r"\bchmod\s+(?:-\w+\s+)*(?:-R|--recursive)\s+(?:-\w+\s+)*(?:0?777|a\+rwx|ugo\+rwx)\s+/\*?(?:\s|$)")),
    ("executable:destructive-shell", "overwrites a disk device",
     re.compile(r">\s*/dev/(?:sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d)")),
    ("executable:destructive-shell", "shreds a disk device", re.compile(r"\bshred\b[^\n]*\s/dev/(?:sd|nvme|hd|vd)")),
    ("executable:destructive-shell", "formats a Windows drive",
     re.compile(r"(?i)(?:^|[;&|]\s*)format(?:\.com)?\s+[a-z]:(?:\s|$)")),
    ("executable:destructive-shell", "deletes a whole drive or home folder recursively",
     re.compile(r"(?i)\b(?:remove-item|rd|rmdir|del)\b[^\n]*(?:-recurse|/s)\b[^\n]*\s(?:[a-z]:\\\*?|~|\$home|"
                r"\$env:userprofile)[\"']?\s*$")),
    ("executable:remote-script", "downloads a script and runs it",
     re.compile(r"(?i)\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|]*\|\s*"
                r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+(?:\S+=\S+\s+)*)?(?:ba|z|k|da|fi)?sh\b")),
    ("executable:remote-script", "downloads a script and runs it",
     re.compile(r"(?i)\b(?:curl|wget)\b[^\n|]*\|\s*(?:sudo\s+)?(?:python[23]?|perl|ruby|node|php)\b(?!\s+-m\s+json)")),
    ("executable:remote-script", "downloads a script and runs it",
     re.compile(r"(?i)\b(?:ba|z|k)?sh\s+(?:-c\s+)?[\"']?(?:\$\(|<\(|`)\s*(?:curl|wget)\b")),
    ("executable:remote-script", "downloads a script and runs it",
     re.compile(r"(?i)\b(?:iex|invoke-expression)\b[^\n]*(?:downloadstring|\biwr\b|\birm\b|invoke-webrequest|"
                r"invoke-restmethod)|(?:downloadstring|\biwr\b|\birm\b|invoke-webrequest|invoke-restmethod)[^\n]*\|"
                r"\s*(?:iex|invoke-expression)\b")),
)  # fmt: skip


def _rm_is_destructive(command: str) -> bool:
    """`rm` with a recursive flag and a root, home, parent, current or wildcard target."""
    for m in re.finditer(r"(?<![\w.\-/])rm\s+([^\n;&|]*)", command):
        tokens = m.group(1).split()
        flags = [t for t in tokens if t.startswith("-") and t != "--"]
        targets = [t.strip("\"'") for t in tokens if not t.startswith("-")]
        recursive = any(f == "--recursive" or (not f.startswith("--") and ("r" in f or "R" in f)) for f in flags)
        if recursive and any(t in _DANGEROUS_RM_TARGETS for t in targets):
            return True
    return False


def _command_lines(flat: str, blocks: list[vault_schema.FencedBlock]) -> Iterator[tuple[int, str]]:
    """(1-based line, command) for every line meant to run: lines of shell-script and terminal-session fences,
    prompt lines of unlabeled fences, and prose lines that start with a prompt or a command. Comments are
    dropped; inline code is not a command (it is a mention)."""
    for b in blocks:
        info = (b.info.split() or [""])[0].lower().strip("{}.")
        if info not in _SCRIPT_INFOS and info not in _SESSION_INFOS and info != "":
            continue
        for k, raw in enumerate(b.content.split("\n")):
            line = raw.strip()
            pm = _PROMPT.match(line) or (_ROOT_PROMPT.match(line) if info in _SESSION_INFOS else None)
            if pm:
                line = line[pm.end() :]
            elif info == "" or (info in _SESSION_INFOS and not _COMMAND_START.match(line)):
                continue  # unlabeled blocks run only their prompt lines; session output does not run
            line = _TRAILING_COMMENT.sub("", line).strip()
            if line:
                yield b.start_line + 2 + k, line
    prose = vault_schema.strip_code(flat).split("\n")
    in_fence = _fence_lines(blocks, len(prose))
    for i, raw in enumerate(prose):
        if i in in_fence or not raw:
            continue
        line = _LIST_MARKER.sub("", raw.strip())
        pm = _PROMPT.match(line)
        if pm:
            line = line[pm.end() :]
        elif not _COMMAND_START.match(line):
            continue
        line = _TRAILING_COMMENT.sub("", line).strip()
        if line:
            yield i + 1, line


def _exec_message(line: int, what: str) -> str:
    return (
        f"a command meant to run on line {line} {what}. Memory must not carry commands that destroy data or run "
        "downloaded code: describe the step in prose (for example 'installed with the vendor's install script') "
        "or remove it."
    )


_SCRIPT_TAG = re.compile(r"<script\b", re.IGNORECASE)
_JS_URL = re.compile(r"(?i)(?:\]\(\s*<?|(?:href|src|action|formaction)\s*=\s*[\"']?\s*)javascript:")
_INLINE_DVJS = re.compile(r"(?<!`)`\$=[^`\n]+`(?!`)")
_TEMPLATER_OPEN = re.compile(r"<%[-_*+~]?")
_MAX_TEMPLATER_SPAN: Final = 4000


def _templater_tags(prose: str) -> Iterator[int]:
    """Start positions of `<% … %>` tags (closed within 4,000 characters)."""
    closes = [m.start() for m in re.finditer("%>", prose)]
    if not closes:
        return
    last_end = -1
    for m in _TEMPLATER_OPEN.finditer(prose):
        if m.start() < last_end:
            continue
        k = bisect.bisect_left(closes, m.end())
        if k < len(closes) and closes[k] - m.start() <= _MAX_TEMPLATER_SPAN:
            last_end = closes[k] + 2
            yield m.start()


def _executable_findings(text: str, field: str) -> Iterator[Finding]:
    flat = _flatten_containers(text)
    blocks = vault_schema.fenced_blocks(flat)
    for b in blocks:
        if (b.info.split() or [""])[0].lower().strip("{}.") == "dataviewjs":
            line = b.start_line + 1
            yield Finding(
                "executable:dataviewjs",
                field,
                f"a ```dataviewjs block on line {line}: Dataview runs it as JavaScript inside Obsidian. Describe "
                "the query in prose, or fence it as plain ```js so it is shown and not run.",
                line,
            )
    if "`$=" in flat:
        flat_lines = flat.split("\n")
        in_fence = _fence_lines(blocks, len(flat_lines))
        for i, line_text in enumerate(flat_lines):
            if i not in in_fence and _INLINE_DVJS.search(line_text):
                yield Finding(
                    "executable:dataviewjs",
                    field,
                    f"an inline Dataview JS query (`$= …`) on line {i + 1}: Obsidian runs it as JavaScript. Remove "
                    "the `$=` prefix or describe the query in prose.",
                    i + 1,
                )
    low = flat.lower()
    if "<%" in flat or "<script" in low or "javascript:" in low:
        prose = vault_schema.strip_code(flat)
        lines = _Lines(prose)
        for pos in _templater_tags(prose):
            line = lines.at(pos)
            yield Finding(
                "executable:templater",
                field,
                f"a Templater tag (<% … %>) outside code on line {line}: it runs as JavaScript when the note is "
                "used as a template. Put it in inline code or a code block to document it, or remove it.",
                line,
            )
        for m in _SCRIPT_TAG.finditer(prose):
            line = lines.at(m.start())
            yield Finding(
                "executable:html-script",
                field,
                f"an HTML <script> tag outside code on line {line}: memory must not carry code that runs when it "
                "is rendered. Link to the page instead, or put the markup in a code block.",
                line,
            )
        for m in _JS_URL.finditer(prose):
            line = lines.at(m.start())
            yield Finding(
                "executable:javascript-url",
                field,
                f"a javascript: link on line {line}: it runs code when clicked. Use an ordinary link or remove it.",
                line,
            )
    for line, command in _command_lines(flat, blocks):
        if _rm_is_destructive(command):
            what = "deletes a root, home, parent or wildcard directory recursively (rm -r)"
            yield Finding("executable:destructive-shell", field, _exec_message(line, what), line)
            continue
        for code, what, rx in _DESTRUCTIVE:
            if rx.search(command):
                yield Finding(code, field, _exec_message(line, what), line)
                break


# --------------------------------------------------------------------------------------------------------------
# 4. Hidden Unicode

_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_TAGS = re.compile("[\U000e0000-\U000e007f]+")
_FLAG_TAGS: Final = frozenset(
    "".join(chr(0xE0000 + ord(c)) for c in region) + "\U000e007f" for region in ("gbeng", "gbsct", "gbwls")
)  # the three standard subdivision flags (England, Scotland, Wales), after U+1F3F4
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u180e\u2061-\u2064\u3164\uffa0\u115f\u1160]+")
_VS_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")


def _ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _unicode_findings(text: str, field: str) -> Iterator[Finding]:
    if text.isascii():
        return
    lines = _Lines(text)
    for m in _BIDI.finditer(text):
        line = lines.at(m.start())
        yield Finding(
            "hidden-unicode:bidi",
            field,
            f"bidirectional control character U+{ord(m.group()):04X} ({unicodedata.name(m.group(), '?')}) on line "
            f"{line}: it makes text display in a different order than it is stored. Remove it (plain right-to-left "
            "text needs none; the marks U+200E and U+200F are allowed).",
            line,
        )
    for m in _TAGS.finditer(text):
        if m.group() in _FLAG_TAGS and m.start() > 0 and text[m.start() - 1] == "\U0001f3f4":
            continue
        line = lines.at(m.start())
        yield Finding(
            "hidden-unicode:tag-chars",
            field,
            f"{len(m.group())} invisible Unicode tag character(s) (U+E0000–U+E007F) on line {line}: they can carry "
            "text a reader cannot see. Remove them.",
            line,
        )
    for m in _ZERO_WIDTH.finditer(text):
        run, start, end = m.group(), m.start(), m.end()
        if start == 0 and run[0] == "\ufeff":
            run, start = run[1:], 1  # a leading byte-order mark is fine
            if not run:
                continue
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < len(text) else ""
        if len(run) == 1 and not (_ascii_alnum(before) and _ascii_alnum(after)):
            continue  # a joiner in an emoji sequence or a non-joiner in Persian or Indic script, for instance
        line = lines.at(start)
        names = ", ".join(f"U+{ord(c):04X}" for c in dict.fromkeys(run))
        where = " inside a word" if len(run) == 1 else f", a run of {len(run)},"
        yield Finding(
            "hidden-unicode:zero-width",
            field,
            f"invisible zero-width character(s) ({names}){where} on line {line}: they split or hide words from "
            "filters and readers. Remove them.",
            line,
        )
    for m in _VS_RUN.finditer(text):
        if len(m.group()) < 4 and len(set(m.group())) == 1:
            continue  # a doubled emoji selector (a typo) carries no hidden data
        line = lines.at(m.start())
        yield Finding(
            "hidden-unicode:variation-selectors",
            field,
            f"a run of {len(m.group())} variation selectors on line {line}: such runs can hide encoded data "
            "behind one visible character. Remove them.",
            line,
        )


# --------------------------------------------------------------------------------------------------------------
# Public API


def _cap(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (field, code, line), at most MAX_PER_CODE per (field, code)."""
    kept: list[Finding] = []
    per_code: Counter[tuple[str, str]] = Counter()
    seen: set[tuple[str, str, int | None]] = set()
    for f in findings:
        key = (f.field, f.code, f.line)
        if key in seen or per_code[(f.field, f.code)] >= MAX_PER_CODE:
            continue
        seen.add(key)
        per_code[(f.field, f.code)] += 1
        kept.append(f)
    return kept


def check_text(text: str, field: str = "body") -> list[Finding]:
    """Every prefilter finding in one piece of text (a title, a body, one tag...). Empty means clean."""
    if not text:
        return []
    findings: list[Finding] = []
    findings += _unicode_findings(text, field)
    findings += _secret_findings(text, field)
    findings += _executable_findings(text, field)
    findings += _directive_findings(text, field)
    return _cap(findings)


_SAFE_KEY = re.compile(r"[A-Za-z0-9_\-]{1,64}")


def _walk(value: object, path: str, out: list[Finding], depth: int, active: set[int]) -> None:
    if isinstance(value, str):
        out.extend(check_text(value, path))
        return
    if isinstance(value, bytes | bytearray):
        out.extend(check_text(bytes(value).decode("utf-8", "replace"), path))
        return
    if not isinstance(value, Mapping | list | tuple | set | frozenset):
        return  # numbers, booleans, dates and None carry no text
    if depth >= MAX_DEPTH or id(value) in active:
        message = f"the value is nested more than {MAX_DEPTH} levels deep or contains itself: flatten it."
        out.append(Finding("input:too-deep", path or "<root>", message, None))
        return
    active.add(id(value))
    try:
        if isinstance(value, Mapping):
            for i, (key, item) in enumerate(value.items()):
                key_text = key if isinstance(key, str) else str(key)
                key_field = f"{path}.<key {i}>" if path else f"<key {i}>"
                key_findings = check_text(key_text, key_field)
                out.extend(key_findings)
                name = key_text if _SAFE_KEY.fullmatch(key_text) and not key_findings else f"<key {i}>"
                _walk(item, f"{path}.{name}" if path else name, out, depth + 1, active)
        else:
            items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
            for i, item in enumerate(items):
                _walk(item, f"{path}[{i}]", out, depth + 1, active)
    finally:
        active.discard(id(value))


def check_fields(fields: Mapping[str, object]) -> Verdict:
    """Run every prefilter over every string of a write: str values, list items and nested mappings.

    Field names follow the path: ``title``, ``tags[2]``, ``related.x``. A key that is not a plain name, or that
    itself trips a filter, is named ``<key N>`` so that a field name never echoes a secret.
    """
    findings: list[Finding] = []
    _walk(fields, "", findings, 0, set())
    return Verdict(ok=not findings, findings=tuple(findings))


def require_clean(fields: Mapping[str, object]) -> Verdict:
    """`check_fields`, raising PrefilterRefused when anything was found; returns the clean verdict."""
    verdict = check_fields(fields)
    if not verdict.ok:
        raise PrefilterRefused(verdict)
    return verdict
