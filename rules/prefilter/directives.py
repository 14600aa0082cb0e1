"""Directives aimed at agents: text addressed to an AI agent or overriding its instructions (prompt injection
written into memory), reported as ``directive``.

Only prose is read: fenced code and inline code are ignored. Invisible characters, Markdown emphasis, full-width
and Cyrillic/Greek look-alike letters are normalised first; base64 runs are decoded and read too. A message
quotes at most six words of the phrase, with anything that could be a value blanked.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from typing import Final

from agentmd import vault_schema
from agentmd.rules.prefilter import directive_model
from agentmd.rules.prefilter.core import Finding, Lines, flatten_containers
from agentmd.rules.prefilter.directive_addressed import IMAGE_SENDS, addressed_hits
from agentmd.rules.prefilter.directive_features import (
    PROMPT_WRITING,
    TOLD_PEOPLE,
    without_false_overrides,
)
from agentmd.rules.prefilter.directive_folding import plain_and_folded, scoring_view
from agentmd.rules.prefilter.directive_matching import chunked_finditer, chunks
from agentmd.rules.prefilter.directive_phrases import ABOUT, QUOTE_AS_SUBJECT, TOLD_OTHERS, phrase_hits
from agentmd.rules.prefilter.directive_requests import (
    AI_ADDRESS,
    CODE_COMMENT,
    EXFIL_LINE,
    EXFIL_STORES,
    HIDE_FROM_USER,
    PROSE_FENCES,
    QUOTED,
    REPORTED,
)
from agentmd.rules.prefilter.directive_rules import directive_res
from agentmd.rules.prefilter.directive_score import asks_for_control, harmless_order, scored_hits, turns_carry_orders
from agentmd.rules.prefilter.directive_sentences import blank_named_quotes, blank_reported_quotes, discusses
from agentmd.rules.prefilter.directive_views import (
    COMPACT_RULES,
    compact,
    decoded_views,
    hidden_views,
)

_WORD = re.compile(r"[a-z0-9]+")
_PARAGRAPH = re.compile(r"(?:[ \t]*\S[^\n]*(?:\n|$))+")
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=_\-])")


def _gates_pass(gates: tuple[frozenset[str], ...], words: AbstractSet[str], low: str) -> bool:
    """Every group has a gate in the text: a word gate among its words, any other gate as a substring."""
    for word_gates, substrings in _split_gates(gates):
        if words.isdisjoint(word_gates) and not any(g in low for g in substrings):
            return False
    return True


@functools.cache
def _split_gates(gates: tuple[frozenset[str], ...]) -> tuple[tuple[frozenset[str], tuple[str, ...]], ...]:
    """A rule's gate groups, each split once into its whole-word gates and its substring gates."""
    return tuple(
        (frozenset(g for g in group if g.isalnum()), tuple(sorted(g for g in group if not g.isalnum())))
        for group in gates
    )


def _snippet(matched: str) -> str:
    """At most six words of a directive; a word that could be a value (digits, a long run of Latin letters) is
    blanked. A long word of words (a slug, `ignore-previous-instructions`, or a script written without spaces)
    shows its start."""
    words = matched.split()
    shown = [_shown_word(w) for w in words[:6]]
    return " ".join(shown) + (" …" if len(words) > 6 else "")


def _shown_word(word: str) -> str:
    if any(c.isdigit() for c in word):
        return "…"
    if len(word) <= 20:
        return word
    spaced = any(c in "-_./" for c in word) or any(c.isalpha() and not c.isascii() for c in word)
    return word[:24] + "…" if spaced else "…"


def _directive_message(line: int, what: str) -> str:
    return (
        f"directive aimed at an AI agent on line {line} ({what}). Memory must describe facts, not give orders to "
        "the agents that read it: restate it as a neutral description (who decided what, and why) or remove it; "
        "an attack quoted as an example belongs in quotation marks or a code block, in a note that says it discusses "
        "one."
    )


_DECODED_CUES: Final = frozenset(
    {"ignore", "disregard", "forget", "override", "bypass", "instructions", "prompt", "you", "your", "system",
     "assistant", "agent", "agents", "ai", "must", "always", "never", "pretend", "act", "send", "reveal"}
)  # fmt: skip
# A dot between letters does not end a sentence, nor does a "!" inside a word (leetspeak "!gn0r3").
_LOOSE_SENTENCE = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.!?]\s+|[!?](?=\s|$)|\n")


def _loose_sentences(folded: str) -> Iterator[str]:
    """The sentences of `folded`, with runs of one- or two-word "sentences" read together ("IGNORE. PREVIOUS.
    INSTRUCTIONS." is one order)."""
    run: list[str] = []
    for sentence in _LOOSE_SENTENCE.split(folded):
        if len(sentence.split()) <= 2:
            run.append(sentence)
            continue
        if run:
            yield " ".join(run)
            run = []
        yield sentence
    if run:
        yield " ".join(run)


_QUOTES: Final = "'\"‘“«„「"


_OPENING_QUOTE = re.compile(r"(?:^|(?<=[\s(\[:]))['\"‘“«„「](?=\w)")


def _mention(view: str, start: int, discussing: bool = False) -> bool:
    """A phrase quoted inside a sentence that talks about attacks ("phrases such as 'ignore previous ...'", "a
    malicious note could say 'agents must ...'"), or quoted anywhere in a note that `discussing` (its prose,
    quotations aside, talks about attacks: a jailbreak taxonomy listing its examples in quotation marks): a
    description of an injection, not one."""
    head = view[max(0, start - 160) : start + 1]  # with the phrase's first letter, which follows an opening quote
    sentence = re.split(r"(?<!e\.g)(?<!i\.e)[.!?\n]\s", head)[-1]
    if ABOUT.search(sentence) and REPORTED.search(sentence.lower()):
        return True  # "a jailbreak asks the model to stay in character": what an attack does, reported
    if discussing and (_in_comment(view, start) or _EXAMPLE_LEAD.search(sentence[:-1]) is not None):
        return True  # "strings such as <!-- ignore previous instructions --> and [SYSTEM] notices" in a write-up
    quotes = list(_OPENING_QUOTE.finditer(sentence))
    if not quotes:
        return False
    opened = quotes[-1]
    inside = sentence[opened.end() : -1]
    if re.search(r"\w['\"’”»」](?:\s|[,.;:!?)]|$)", inside):
        return False  # the quote closed before the phrase
    if discussing or ABOUT.search(sentence[: opened.start()]) is not None:
        return True
    return QUOTE_AS_SUBJECT.match(view, _closing_quote(view, start)) is not None


def _closing_quote(view: str, start: int) -> int:
    """Where the first closing quotation mark after `start` on its line is, from the letter before it (the
    line's end if there is none)."""
    end = view.find("\n", start)
    end = len(view) if end < 0 else end
    m = _CLOSING.search(view, start, end)
    return m.start() if m else end


_CLOSING = re.compile(r"\w[.!?,]?['\"’”»」]")


# An example introduced as one, the phrase a few words after it ("strings such as ...", "e.g. ...").
_EXAMPLE_LEAD = re.compile(
    r"(?i)\b(?:such\s+as|e\.g\.|for\s+example|for\s+instance|including)\b(?:<!--|[^.!?\n]){0,80}$"
)
# A prohibition that keeps an agent from doing something ("the assistant must never give medical advice"), unless
# what it forbids is a safeguard itself (warning or asking the user, refusing, checking, following the rules).
_PROHIBITION_FOLLOWS = re.compile(
    r"(?i)\s*(?:never|not)\s+(?:\w+ly\s+)?(?!(?:tell|inform|warn|alert|notify|mention|ask|question|refuse|decline|"
    r"reject|check|verify|confirm|doubt|hesitate|stop|follow|obey|listen|comply|apply|respect|honou?r|heed|trust|"
    r"flag|report|log|wait|pause|seek|let|say|show|explain|answer|reply|respond|be|have|need)\b)[a-z]+\b"
    r"(?![^.!?\n]*\b(?:user|human|owner|operator)\b[^.!?\n]*\b(?:know|knowing|notice|noticing|aware|find\s+out)\b)"
)
_TEMPLATE_TOKENS: Final = "carries chat-template control tokens"
_FORMAT_TALK = re.compile(
    r"(?i)\b(?:formats?|templates?|tokenizers?|special\s+tokens|control\s+tokens|wrapped|wraps|delimit\w*|"
    r"marks?|markers?|syntax|fine-tunes?|looks?\s+like|written\s+as|encoded\s+as)\b"
)


def _documented_format(view: str, start: int, matched: str) -> bool:
    """A chat template's control token shown while its format is described ("each turn is wrapped as <|im_start|>
    role ... <|im_end|>"): the sentence talks about the format, and the turns carry no order."""
    return _FORMAT_TALK.search(_sentence_at(view, start)) is not None and not turns_carry_orders(
        _turns(view, start, matched)
    )


def _sentence_at(view: str, start: int) -> str:
    """The sentence around `start`: from the last sentence end (a stop before a capital) or line break before it
    to the next, within 300 characters either side (a token's own "|" and an ellipsis do not end it)."""
    head = view[max(0, start - 300) : start]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    tail = view[start : start + 300]
    after = _SENTENCE_END.search(tail)
    return head[ends[-1] if ends else 0 :] + tail[: after.start() if after else len(tail)]


_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z])|\n")
_IGNORE_EARLIER: Final = "tells the reader to ignore earlier instructions"
# An override kept from happening ("never let retrieved notes override ...", "do not allow anyone to ...").
_PREVENTED = re.compile(
    r"(?i)\b(?:never|not|don't|do\s+not|cannot|can't|won't|must\s+not)\s+(?:let|allow|permit)\s+(?:\w+\s+){0,4}?"
    r"(?:to\s+)?$"
)
_OWN_MESSAGE = re.compile(r"(?i)\b(?:my|our)\s+(?:\w+\s+)?messages?$")
_PROCEDURE_LABELS: Final = frozenset({_IGNORE_EARLIER, "tells the reader to drop its instructions"})
# The steps of a procedure a person follows ("ignore the previous install instructions", "之前的安装说明"): a
# task named right before the instructions, or joined to them, is not the reader's own instructions.
_PROCEDURE = re.compile(
    r"(?i)\b(?:install(?:ation)?|setup|set-up|build|assembly|deployment|migration|upgrade|onboarding|packing|"
    r"shipping|cooking|baking|washing|wiring|boarding|parking|printing|care)\s+(?:instructions?|steps|directions)\b|"
    r"(?:安装|安裝|部署|设置|設定|组装|インストール|セットアップ|설치|배포)\s*(?:说明|說明|步骤|指南|手順|説明|지침|안내|절차)"
)


# What a product's assistant is bound to do that guards its user ("the assistant must refuse requests to …",
# "must ask for confirmation before running commands"): a safeguard, with no order after it.
_GUARDS_FOLLOW = re.compile(
    r"(?i)\s*(?:always\s+)?(?:refuse|decline|reject|ask\s+(?:for\s+)?(?:confirmation|permission|the\s+user)|"
    r"flag|warn|escalate)\b(?![^.!?\n]*\b(?:and\s+then|then|but)\s+(?:send|post|upload|delete|reveal|print)\b)"
)
# What an authority's rule forbids: "must never reveal ...", "must not share ...".
_SAFEGUARD_FOLLOWS = re.compile(
    r"(?i)\s*(?:never|not)\s+(?:\w+\s+)?(?:reveal|share|send|post|leak|expose|print|disclose|store|commit|paste|"
    r"upload|give\s+out|hand\s+over)\b"
)


def _in_comment(view: str, start: int) -> bool:
    """The position is inside an HTML or Obsidian comment that opens and closes on its line."""
    line_start = view.rfind("\n", 0, start) + 1
    line_end = view.find("\n", start)
    line_end = len(view) if line_end < 0 else line_end
    for opener, closer in (("<!--", "-->"), ("%%", "%%")):
        at = view.rfind(opener, line_start, start)
        if at >= 0 and view.find(closer, start, line_end) >= 0:
            return True
    return False


def _told_people(view: str, start: int) -> bool:
    """An order reported as given to people ("the game master told the players to ignore the previous rules"):
    the words just before it name who was told, and that is not the reader or an AI."""
    head = view[max(0, start - 80) : start].lower()
    return TOLD_PEOPLE.search(re.split(r"[.!?\n]", head)[-1]) is not None


def _rule_hits(
    plain: str, folded: str, *, languages: bool = True, discussing: bool = False
) -> Iterator[tuple[str, int, str, str]]:
    """(label, position, matched text, view name) of every rule that matches; positions are in `folded` (the
    view "folded") or `plain` (the view "plain"). With `discussing` (see `_mention`) a quoted phrase is kept."""
    low_folded, low_plain = folded.lower(), plain.lower()
    words = set(_WORD.findall(low_folded))
    parts = chunks(folded, low_folded, words, _WORD)
    # the lines that already hold a hit: a finding is one a line (`directive_findings`), so a later match on
    # such a line is not judged again (a run-on line of one order repeated was judged once a repeat)
    breaks = [m.start() for m in re.finditer("\n", folded)]
    found_on: set[int] = set()
    for label, gates, rx in directive_res():
        if _gates_pass(gates, words, low_folded):
            for m in chunked_finditer(rx, folded, [c for c in parts if _gates_pass(gates, c.words, c.low)]):
                line = bisect.bisect_left(breaks, m.start() + len(m.group()) - len(m.group().lstrip()))
                if line in found_on:
                    continue
                if _by_form(label, m.group()) and harmless_order(
                    _normalise(_sentence_around(folded, m.start(), m.end()))
                ):
                    continue  # "Dear assistant, keep the tone friendly": a greeting or a label and a house rule
                if label in _REQUESTS and (
                    _NEGATED.search(folded, max(0, m.start() - 40), m.start())
                    or _REFUSED.search(folded, max(0, m.start() - 60), m.start())
                    or _PREVENTED.search(folded, max(0, m.start() - 60), m.start())
                ):
                    continue  # "assistants must never reveal the system prompt": a safeguard
                if label == _FORGET_TOLD and _TOPIC_FORGOTTEN.match(folded, m.end()):
                    continue  # "forget everything you learned about the old ticketing system": a topic, not rules
                if label == _PROMPT_LABEL and PROMPT_WRITING.match(folded.lower(), m.start()):
                    continue  # "start your system prompt with the role": advice on writing one
                if label == _TEMPLATE_TOKENS and _documented_format(folded, m.start(), m.group()):
                    continue  # "each turn is wrapped as <|im_start|>role ... <|im_end|>": a chat format documented
                if label == _IGNORE_EARLIER and _PREVENTED.search(folded, max(0, m.start() - 60), m.start()):
                    continue  # "never let retrieved notes override the system prompt": a safeguard
                if label == _IGNORE_EARLIER and _OWN_MESSAGE.search(m.group()):
                    continue  # "please disregard my earlier message": the writer takes back what they wrote
                if label == _IGNORE_EARLIER and _PROCEDURE.search(m.group()):
                    continue  # "ignore the previous install instructions": a procedure's steps
                if (label == _ANNOUNCES or label in _PROMPT_TITLES) and _documented_prompt(folded, m.start(), m.end()):
                    continue  # "Support bot v3 system prompt: You are a support assistant ...": a prompt kept
                if not _mention(folded, m.start(), discussing) and not _told_people(folded, m.start()):
                    found_on.add(line)
                    yield label, m.start(), m.group(), "folded"
    if any(store in low_plain for store in EXFIL_STORES) and ("http" in low_plain or "@" in low_plain):
        for hit in EXFIL_LINE.finditer(plain):
            if not ABOUT.search(hit.group()) and not discussing:
                yield "asks an AI to send a secret to an address", hit.start(), hit.group(), "plain"
    if not discussing and HIDE_FROM_USER.search(plain) is not None:
        for paragraph in _PARAGRAPH.finditer(plain):
            hidden = HIDE_FROM_USER.search(paragraph.group())
            if hidden and AI_ADDRESS.search(paragraph.group()) and not ABOUT.search(paragraph.group()):
                yield (
                    "asks an AI to keep something from its user",
                    paragraph.start() + hidden.start(),
                    hidden.group(),
                    "plain",
                )
    for label, pos, matched in phrase_hits(folded, languages=languages, discussing=discussing):
        if label in _FORGED and not turns_carry_orders(_turns(folded, pos, matched)):
            continue  # a chat log, a status line or a tool's output kept as a note: its turns carry no order
        if label in _AGENTS_TOLD and (
            _SAFEGUARD_FOLLOWS.match(folded, pos + len(matched))
            or _PROHIBITION_FOLLOWS.match(folded, pos + len(matched))
            or _GUARDS_FOLLOW.match(folded, pos + len(matched))
        ):
            continue  # "Policy: assistants must never reveal the system prompt": a safeguard
        if (
            label == "gives agents an order"
            and matched.lower().startswith("the ")
            and " should " in f" {matched.lower()} "
            and harmless_order(_normalise(_sentence_around(folded, pos, pos + len(matched))))
        ):
            continue  # "the chatbot should always answer in the user's language": a product's assistant specified
        if label in _PROCEDURE_LABELS and _PROCEDURE.search(_sentence_around(folded, pos, pos + len(matched))):
            continue  # "系统更新后请忽略之前的安装说明": a procedure's steps
        if not _mention(folded, pos, discussing) and not _told_people(folded, pos):
            yield label, pos, matched, "folded"
    if plain is not folded and languages:
        changed, where = _changed_lines(plain, folded)
        for label, pos, matched in phrase_hits(changed):
            yield label, where(pos), matched, "plain"
    whole = compact(folded)
    if not any(rx.search(whole) for _, rx in COMPACT_RULES):
        return
    for sentence in _loose_sentences(folded):
        if ABOUT.search(sentence) or TOLD_OTHERS.search(sentence.lower()):
            continue
        quoting = discussing or QUOTE_AS_SUBJECT.search(sentence) is not None
        read = QUOTED.sub(" ", sentence) if quoting else sentence
        if (bare := without_false_overrides(read.lower())) != read.lower():
            read = bare  # "never let retrieved notes override the system prompt": a safeguard, squeezed or not
        squeezed = compact(read)
        for compact_label, compact_rx in COMPACT_RULES:
            found = compact_rx.search(squeezed)
            if found and compact_label in _REQUESTS and _only_negated_requests(sentence):
                continue  # "assistants must never reveal the system prompt", squeezed: a safeguard all the same
            if found:
                at = folded.find(sentence.strip()[:40])  # a run of short sentences is found by its first
                yield compact_label + " (with its letters spaced, joined or disguised)", at, found.group(), "compact"


_ANNOUNCES: Final = "announces replacement instructions"
# how a rule's hit is read: a forged tool call or result and an image whose address sends data out are forms, not
# the model's to judge; forged chat turns are the model's only when it reads every passage of the note as ordinary
# (a chat kept as a note); the sentence scorer's and the addressed reader's hits are "scored", which the model may
# overrule however short their line (a phrase rule's short hit is a known form it has too little text to judge)
_KINDS: Final = {"spoofs a tool call or result": "spoof", IMAGE_SENDS: "spoof", "spoofs a chat turn": "turns"}
_FORGED: Final = frozenset({"spoofs a chat turn", "spoofs a tool call or result"})
_NAMED_PROMPT: Final = re.compile(r"(?i)\S[^\n]*\s(?:system[\s*_]+prompt)[\s*_]*:$")
# the name after a label, as a title gives it: "# System prompt: FinOpsAssistant", "System prompt: CodeReviewer
# (org-wide)"; a capital, at most four words, nothing after it on the line
_NAME_AFTER: Final = re.compile(r"[ \t*_]*(?P<name>[A-Z][\w.()/&+'-]*(?:[ \t]+[\w.()/&+'-]+){0,3})[ \t*_]*(?=\n|$)")
_BLANK: Final = re.compile(r"\s*")
_PROMPT_CHARS: Final = 2000
_PROMPT_TITLES: Final = ("labels a system prompt", "carries an instruction-tuning header")


def _documented_prompt(view: str, start: int, end: int) -> bool:
    """A system prompt kept as a document: the label names what the prompt is for ("support bot v3 system
    prompt:" or "System prompt: CookBot", not a bare "System prompt:" or "new instructions:"), and neither that name
    nor the prompt (its first `_PROMPT_CHARS` characters) asks for anything an attacker wants (no secrets, no
    dropped rules, no unsafe act, nothing kept from the user)."""
    # the label's end of its line, at most 300 characters: a long line is not read again for every hit on it
    line_start = max(view.rfind("\n", 0, start) + 1, end - 300)
    named_after = _NAME_AFTER.match(view, end)
    if named_after is not None and asks_for_control(named_after.group("name")):
        return False
    if _NAMED_PROMPT.search(view[line_start:end]) is None and named_after is None:
        return False
    after = named_after.end() if named_after else end
    body = blank.end() if (blank := _BLANK.match(view, after)) else after
    return not asks_for_control(view[body : body + _PROMPT_CHARS])


# Rules that match a form (a greeting, a role label, "always answer ...") rather than what is asked: a hit is
# kept only when the sentence asks for something an attacker wants (see directive_score.harmless_order).
_BY_FORM: Final = frozenset({"addresses an AI directly", "carries a chat role label", "orders how to respond"})
_AGENTS_TOLD: Final = frozenset({"claims an authority orders agents", "gives agents an order"})


# Rules that read a request (reveal the system prompt, send secrets out): negated, the request is a safeguard.
_REQUESTS: Final = frozenset({"asks for or replaces the system prompt", "asks to send secrets out"})
_NEGATED = re.compile(r"(?i)\b(?:never|not|don't|do\s+not|must\s+not|cannot|can't|won't)\s+(?:\w+\s+)?$")
# A request refused ("the LLM should refuse requests to reveal the system prompt"): a safeguard.
_REFUSED = re.compile(r"(?i)\b(?:refus\w*|declin\w*|reject\w*|resist\w*)\s+(?:\w+\s+){0,3}?to\s+$")
_PROMPT_LABEL: Final = "asks for or replaces the system prompt"
_FORGET_TOLD: Final = "tells the reader to forget what it was told"
# What was learned about a named topic ("... about our old ticketing system"), the topic no rule, safety or
# instruction of the reader's.
_TOPIC_FORGOTTEN = re.compile(
    r"(?i)\s+(?:about|on|of)\s+(?:our|the|my|this|that|their)\s+(?!(?:\w+\s+)?(?:rules?|instructions?|safety|"
    r"guidelines?|polic(?:y|ies)|restrictions?|prompts?|training|limits|principles|ethics|user|owner|operator)\b)"
    r"(?:old|previous|former|legacy|last|first)?\s*[\w-]+(?:\s+[\w-]+)?\s*(?:system|tool|process|app|workflow|"
    r"setup|software|platform|office|school|course|class|job|team|project|codebase|language|framework)\b"
)
_REQUEST_VERB = re.compile(r"(?i)\b(?:reveal|print|show|leak|share|disclose|output|repeat|display|expose|dump)\b")


def _only_negated_requests(sentence: str) -> bool:
    """The sentence asks to reveal something only under a negation ("must never reveal ..."), at least once."""
    verbs = list(_REQUEST_VERB.finditer(sentence))
    return bool(verbs) and all(_NEGATED.search(sentence, max(0, v.start() - 40), v.start()) for v in verbs)


def _by_form(label: str, matched: str) -> bool:
    """A hit of a rule that reads a form only; a "system:" or "developer:" label claims authority, and is kept,
    and so is "from now on" (a memory frame); "you must always ..." is a runbook's form as much as an attack's."""
    head = matched.lstrip(" \t\n-*+").lower()
    if label == "standing order to the reader":
        return head.startswith("you")
    return label in _BY_FORM and not head.startswith(("system", "developer"))


_AROUND = 600  # characters on each side of a match read as its sentence when its line runs longer


def _sentence_around(view: str, start: int, end: int) -> str:
    """The line of view[start:end], from the start of the match's line to the end of its last line, at most
    `_AROUND` characters on each side (a run-on line of many matches is not read whole for each)."""
    left = max(view.rfind("\n", 0, start) + 1, start - _AROUND)
    right = view.find("\n", end)
    return view[left : min(right if right >= 0 else len(view), end + _AROUND)]


def _normalise(sentence: str) -> str:
    low = sentence.lower().replace("’", "'").replace("‘", "'").replace("_", " ")
    return " ".join(low.split())


def _turns(view: str, pos: int, matched: str) -> str:
    """The spoofed chat turns of a hit: the matched text and the eight lines after it."""
    end = pos + len(matched)
    for _ in range(8):
        nxt = view.find("\n", end + 1)
        if nxt < 0:
            return view[pos:]
        end = nxt
    return view[pos:end]


def _changed_lines(plain: str, folded: str) -> tuple[str, Callable[[int], int]]:
    """The lines of `plain` that folding changed (other scripts: the rules read every other line in `folded`
    already), joined, and a map from a position in them back to a position in `plain`."""
    starts: list[int] = []  # where each kept line starts in `plain`
    kept_starts: list[int] = []  # and in the joined text
    kept: list[str] = []
    offset = size = 0
    for p, f in zip(plain.split("\n"), folded.split("\n"), strict=False):
        if p != f:
            starts.append(offset)
            kept_starts.append(size)
            kept.append(p)
            size += len(p) + 1
        offset += len(p) + 1

    def where(pos: int) -> int:
        i = max(0, bisect.bisect_right(kept_starts, pos) - 1)
        return starts[i] + pos - kept_starts[i] if starts else pos

    return "\n".join(kept), where


def _fenced_words(text: str) -> str:
    """The comments of a note's code fences, at their own lines (all else blank). Prose fences (a chat template
    or a prompt kept for reference) are left to the sentence scorer, which reads them with their context."""
    if "```" not in text and "~~~" not in text:
        return ""
    out = [""] * (text.count("\n") + 1)
    for b in vault_schema.fenced_blocks(text):
        if (b.info.split() or [""])[0].lower() in PROSE_FENCES:
            continue
        for i, row in enumerate(b.content.split("\n"), start=b.start_line + 1):
            m = CODE_COMMENT.match(row)
            if i < len(out) and m:
                out[i] = m.group(1)
    return "\n".join(out)


# Fences that hold text or data, not a program: their words are read as prose (a tool's output pasted in, a JSON
# event whose description speaks to the assistant), unless the note discusses attacks (its examples are fenced)
DATA_FENCES: Final = PROSE_FENCES | {"json", "jsonc", "json5", "yaml", "yml", "toml", "xml", "log", "output", "console"}


# chat-template markup: a fence holding it keeps a format for reference, which the sentence scorer reads in context
_TEMPLATE_MARKUP = re.compile(r"<\|[a-z_]+\|>|\[/?INST\]|<(?:start|end)_of_turn>|<\|im_(?:start|end)\|>")


def _opened_fences(text: str) -> str:
    """`text` with the fence lines of its text and data fences blanked, so that their content reads as prose."""
    if "```" not in text and "~~~" not in text:
        return text
    lines = text.split("\n")
    for b in vault_schema.fenced_blocks(text):
        if (b.info.split() or [""])[0].lower() in DATA_FENCES and not _TEMPLATE_MARKUP.search(b.content):
            close = b.start_line + b.content.count("\n") + 2
            for i in (b.start_line, close):
                if i < len(lines) and lines[i].lstrip().startswith(("```", "~~~")):
                    lines[i] = ""
    return "\n".join(lines)


def directive_findings(text: str, field: str) -> Iterator[Finding]:
    """Directives in `text`. The rules are read first; a note they pass is read by the learned model. A rule's
    refusal of plain text stands unless the model is sure its line is ordinary (under its `veto` probability,
    alone and in its passage): the phrase rules cannot tell a sentence about an order from the order, the model
    has read thousands of both. Forged chat turns stand unless it reads the whole note as ordinary; a forged tool
    result, and what was decoded from an encoding, are forms, not the model's to judge."""
    for finding, how in _findings(text, field):
        if _stands(text, finding, how):
            yield finding


def _stands(text: str, finding: Finding, how: str) -> bool:
    if how == "turns":
        return not directive_model.ordinary_throughout(text)
    if how not in ("plain", "scored") or finding.line is None:
        return True
    return not directive_model.ordinary_at(text, finding.line, short=how == "scored")


def _findings(text: str, field: str) -> Iterator[tuple[Finding, str]]:
    """Findings with how each was read: a phrase rule's hit in "plain" text, a sentence "scored", forged chat
    "turns", a "spoof" of a tool result, an "encoded" form decoded, or the "learned" model."""
    text = blank_named_quotes(text)  # "the phrase '…' became a meme": shown, not said
    text = blank_reported_quotes(text)  # "the page held hidden text: «…»; the filter refused it": reported
    prose = vault_schema.strip_code(flatten_containers(text))
    if prose != text and not discusses(QUOTED.sub(" ", prose.lower())):
        prose = vault_schema.strip_code(flatten_containers(_opened_fences(text)))
    plain, folded = plain_and_folded(prose)
    folded_lines = Lines(folded)
    plain_lines = folded_lines if plain is folded else Lines(plain)
    hit_lines: set[int] = set()
    compact_hit: tuple[str, int] | None = None
    discussing = discusses(QUOTED.sub(" ", folded.lower()))
    for label, pos, matched, view in _rule_hits(plain, folded, discussing=discussing):
        if view == "compact":
            compact_hit = compact_hit or (label, folded_lines.at(pos) if pos >= 0 else 1)
            continue
        lines = folded_lines if view == "folded" else plain_lines
        line = lines.at(pos + len(matched) - len(matched.lstrip()))
        if line not in hit_lines:
            hit_lines.add(line)
            yield (
                Finding("directive", field, _directive_message(line, f'{label}: "{_snippet(matched)}"'), line),
                _KINDS.get(label, "plain"),
            )
    if compact_hit and not hit_lines:
        compact_label, compact_line = compact_hit
        hit_lines.add(compact_line)
        yield Finding("directive", field, _directive_message(compact_line, compact_label), compact_line), "encoded"
    if hit_lines:
        return
    scoring = scoring_view(flatten_containers(text))
    scoring_lines = Lines(scoring)
    # code comments, through the phrase rules of every language too (the prose was read above); a note that
    # discusses attacks keeps its fences as its quoted examples
    comments = "" if discussing else _fenced_words(flatten_containers(text))
    if comments.strip():
        inner_plain, inner_folded = plain_and_folded(comments)
        comment_lines = Lines(inner_folded)
        for label, pos, matched, view in _rule_hits(inner_plain, inner_folded, discussing=discussing):
            if view == "compact":
                continue
            line = comment_lines.at(pos + len(matched) - len(matched.lstrip()))
            if line not in hit_lines:
                hit_lines.add(line)
                what = f'{label}, in a code comment: "{_snippet(matched)}"'
                yield Finding("directive", field, _directive_message(line, what), line), "plain"
    if hit_lines:
        return
    for label, pos, sentence in scored_hits(scoring):
        line = scoring_lines.at(pos + len(sentence) - len(sentence.lstrip()))
        if line not in hit_lines:
            hit_lines.add(line)
            yield (
                Finding("directive", field, _directive_message(line, f'{label}: "{_snippet(sentence)}"'), line),
                "scored",
            )
    if hit_lines:
        return
    for label, pos, segment in addressed_hits(scoring):
        line = scoring_lines.at(pos)
        if line not in hit_lines:
            hit_lines.add(line)
            yield (
                Finding("directive", field, _directive_message(line, f'{label}: "{_snippet(segment)}"'), line),
                _KINDS.get(label, "scored"),
            )
    if hit_lines:
        return
    for how, decoded in itertools.chain(hidden_views(prose), decoded_views(folded)):
        inner_plain, inner_folded = plain_and_folded(decoded)
        # rot13 and reversed text are read for English only: the many-language rules would cost more there
        # than they could find
        languages = how not in ("rot13", "reversed", "leetspeak", "atbash") and "Caesar" not in how
        if not languages and _DECODED_CUES.isdisjoint(_WORD.findall(decoded.lower())):
            continue  # ordinary text read backwards or in rot13 holds none of these words
        for label, _pos, _matched, _view in _rule_hits(inner_plain, inner_folded, languages=languages):
            yield Finding("directive", field, _directive_message(1, _hidden(label, how)), 1), "encoded"
            return
        for label, _pos, _sentence in scored_hits(scoring_view(decoded), encoded=True):
            yield Finding("directive", field, _directive_message(1, _hidden(label, how)), 1), "encoded"
            return
        for label, _pos, _segment in addressed_hits(scoring_view(decoded)):
            yield Finding("directive", field, _directive_message(1, _hidden(label, how)), 1), "encoded"
            return
    if not discussing:  # a note that discusses attacks keeps its quoted examples, as above
        for finding in _learned_findings(text, field):
            yield finding, "learned"


def _learned_findings(text: str, field: str) -> Iterator[Finding]:
    """What the learned model (`directive_model`) refuses that no rule named: the first passage of each line it
    scores over its threshold."""
    view = directive_model.model_view(text)
    lines = Lines(view)
    seen: set[int] = set()
    for passage, p in directive_model.flagged(view):
        offset = len(passage.text) - len(passage.text.lstrip())
        line = lines.at(passage.start + offset)
        if line in seen:
            continue
        seen.add(line)
        what = f'reads as an order to an AI agent, learned score {p:.2f}: "{_snippet(passage.text)}"'
        yield Finding("directive", field, _directive_message(line, what), line)


def _hidden(label: str, how: str) -> str:
    """What a decoded order does and how it was hidden ("tells the reader to ... , hidden as base64-encoded
    text: decoded, it reads as an order")."""
    label = label.split(" (with its letters", 1)[0]
    return f"{label}, hidden as {how} text that reads as an order once decoded"
