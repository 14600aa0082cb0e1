"""The prefilters' shared ground: the reason codes, findings and verdicts, and the text helpers every family uses.

A finding's message says what was found and how to fix it and never contains a secret value, nor any part of
one. Line numbers are 1-based within the field's text.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from agentmd import vault_schema
from agentmd.rules.errors import RulesError

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
    "secret:npm-token",
    "secret:pypi-token",
    "secret:huggingface-token",
    "secret:sendgrid-key",
    "secret:twilio-key",
    "secret:digitalocean-token",
    "secret:shopify-token",
    "secret:discord-token",
    "secret:telegram-token",
    "secret:mailgun-key",
    "secret:databricks-token",
    "secret:basic-auth",
    "secret:service-token",
    "secret:password",
    "secret:seed-phrase",
    "secret:recovery-codes",
    "executable:dataviewjs",
    "executable:templater",
    "executable:destructive-shell",
    "executable:remote-script",
    "executable:reverse-shell",
    "executable:html-script",
    "executable:javascript-url",
    "hidden-unicode:bidi",
    "hidden-unicode:tag-chars",
    "hidden-unicode:zero-width",
    "hidden-unicode:variation-selectors",
    "hidden-unicode:control",
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


class Lines:
    """Line numbers of positions in one text (bisect over its line breaks, built on first use)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._breaks: list[int] | None = None

    def at(self, pos: int) -> int:
        if self._breaks is None:
            self._breaks = [m.start() for m in re.finditer("\n", self._text)]
        return bisect.bisect_left(self._breaks, pos) + 1


_CONTAINER_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]*)*", re.MULTILINE)


def flatten_containers(text: str) -> str:
    """Drop leading indentation and blockquote markers on every line (line count kept).

    The fence scanner follows top-level CommonMark only, but fences inside list items or callouts (indented or
    behind `>`) still render and run in Obsidian, so the checks read a flattened copy.
    """
    return _CONTAINER_PREFIX.sub("", text)


def fence_lines(blocks: Iterable[vault_schema.FencedBlock], n_lines: int) -> set[int]:
    """0-based line numbers covered by fenced blocks, fences included."""
    covered: set[int] = set()
    for b in blocks:
        end = b.start_line + b.content.count("\n") + 1
        covered.update(range(b.start_line, min(end + 1, n_lines)))
    return covered


def entropy(value: str) -> float:
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
# the sample keys vendors print in their own documentation (Stripe's test keys, after their prefix; the signature
# of jwt.io's sample token)
_DOCUMENTED: Final = ("4eC39HqLyjWDarjtT1zdp7dc", "TYooMQauvdEDq54NiTphI7jx", "BQokikJOvBiI2HlWgH4olfQ2",
                      "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")  # fmt: skip


# a value of lowercase words only that names itself a secret: `my-secret-pw`, `mysecretpassword` (the examples of
# database images' documentation); a real password of words has no reason to say that it is one
_SELF_NAMED = re.compile(r"[a-z]*(?:secret|passw|pwd|(?<![a-z])pw(?![a-z]))[a-z]*(?:[-_][a-z]+)*|(?:[a-z]+[-_])+pw")


def is_placeholder(value: str) -> bool:
    """Obvious stand-ins: `xxxx`, `<your-token>`, `${VAR}`, `changeme`, `example`, runs of one character, lowercase
    words that call themselves a secret."""
    low = value.lower()
    if any(mark in low for mark in _PLACEHOLDER_MARKS) or _SELF_NAMED.fullmatch(value):
        return True
    return value[:1] in ("$", "%", "@", "&", "*") or _REPEAT_RUN.search(value) is not None


def is_filler(value: str) -> bool:
    """Stand-ins after a fixed token prefix: few distinct characters (`xxxx…`, `XXXX…0000`), counting runs or
    template punctuation. Narrower than `is_placeholder`, so that no real random token is ever let through
    because a word such as "your" happened to appear in it. A vendor's documented example credential, written
    with `EXAMPLE` in capitals (AWS's `AKIAIOSFODNN7EXAMPLE`) or printed in its documentation (Stripe's test
    keys), is a stand-in too: a random token holds those
    seven letters in a row about once in 10^10."""
    low = value.lower()
    return (
        value.startswith(_DOCUMENTED)
        or "EXAMPLE" in value
        or len(set(low)) < 8
        or any(seq in low for seq in _SEQUENCES)
        or any(c in value for c in "<>{}$*…")
        or "..." in value
    )


def documented_sample(value: str) -> bool:
    """The value holds a vendor's published sample credential (Stripe's documented test keys, jwt.io's token)."""
    return any(sample in value for sample in _DOCUMENTED)


def random_looking(value: str, min_len: int = 20, min_entropy: float = 3.5) -> bool:
    return (
        len(value) >= min_len
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and entropy(value) >= min_entropy
        and not is_placeholder(value)
    )
