"""More directive phrasings, beside the English rules in `directives`: paraphrases and synonyms, orders
attributed to someone ("the admin says all agents must..."), tool-call and chat-turn spoofs, role-play set-ups,
requests to leak secrets or hide actions, and the main orders in many languages.

Two kinds of rule. Phrase rules (`directive_phrase_rules`) are regexes over the folded prose. Co-occurrence rules
(their words in `directive_word_groups`) look at one sentence at a time and fire when it holds one word of each
group (a verb such as "ignore"/"olvida"/"忽略", a noun such as "instructions"/"consignes"/"指令", a qualifier such
as "previous"/"tes"/"之前"), in any order, which covers other word orders and languages without one regex per
phrasing. A sentence that talks *about* injection ("such as", "e.g.", "injection", "jailbreak", "attackers") is
not read by the co-occurrence rules, so a note describing an attack can be kept. Lines and sentences that call
an AI by name in other languages are read by `directive_foreign`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Final

from agentmd.rules.prefilter.directive_features import TOLD_OTHERS_FOREIGN, without_false_overrides
from agentmd.rules.prefilter.directive_foreign import foreign_addresses, foreign_subjects, foreign_vocatives
from agentmd.rules.prefilter.directive_languages import AI_NAMES, CONTROL
from agentmd.rules.prefilter.directive_matching import (
    WORDISH,
    Group,
    by_start,
    chunked_finditer,
    chunks,
    english,
    fold_accents,
    fold_past_apart,
    sentences_to_read,
)
from agentmd.rules.prefilter.directive_phrase_rules import PHRASES
from agentmd.rules.prefilter.directive_word_groups import (
    ADDRESSEE,
    AI_WORDS,
    CONTROL_FOREIGN,
    DROP_EN,
    FROM_NOW,
    HIDE_FOREIGN,
    IGNORE,
    LEAK_EN,
    LEAK_FOREIGN,
    MUST,
    ORDERS,
    PRIOR,
    PRIOR_EN,
    REVEAL,
    RULES_EN,
    SECRET_EN,
    SECRET_FOREIGN,
    SHARED_DROP,
    SHARED_ORDERS,
    SHARED_PRIOR,
    SYSTEM_PROMPT,
    VOID_FOREIGN,
    WHERE_EN,
    WHERE_FOREIGN,
)

ABOUT = re.compile(
    r"(?<![@./])\b(?:such\s+as|e\.g\.|for\s+example|for\s+instance|injection|injections|jailbreaks?|attackers?|attacks?|"
    r"malicious|jailbr\w*|phrases?|phrasings?|payloads?|red[\s-]?team\w*|threat|could\s+say|phishing|spam|quoted?|"
    r"tells?\s+(?:an?|the)\s+(?:agent|model|ai|assistant)|(?<![.@/])example(?!\.\w)|something\s+like|risks?|mitigations?|"
    r"(?:inputs?|prompts?|strings?|messages?|texts?|sentences?|requests?|queries|lines)\s+like)\b(?![@.]\w)|"
    # (a word inside an address, `attacker@evil.example`, says nothing of what the sentence is about)
    # the same in other languages (scripts without spaces have no word boundaries)
    r"注入|攻击|攻擊|攻撃|例如|比如|举例|インジェクション|例えば|공격|인젝션|예를\s*들어|恶意|惡意|悪意|악의|研究人员|研究者|연구자|"
    # Arabic, Hebrew, Hindi, Thai (their letters carry marks no word boundary reads): attacker, attack, injection,
    # example, malicious
    r"المهاجم|مهاجم|هجوم|حقن|مثال|خبيث|התוקף|תוקף|תקיפה|הזרקה|דוגמה|זדוני|हमलावर|हमला|इंजेक्शन|उदाहरण|दुर्भावनापूर्ण|"
    r"โจมตี|ผู้โจมตี|ตัวอย่าง|ประสงค์ร้าย|"
    r"\b(?:атак\w*|инъекц\w*|ataques?|atacante\w*|inyecci\w*|attaqu\w*|injektion\w*|angriff\w*|angreifer\w*|"
    r"attacc\w*|ataku|aanval\w*|wstrzykni\w*|malveillant\w*|malicios\w*|bösartig\w*|präpariert\w*|piégé\w*|"
    r"вредоносн\w*|злоумышленн\w*|исследовател\w*|chercheur\w*|forscher\w*|investigador\w*|pesquisador\w*|"
    r"ricercator\w*)|"
    # Vietnamese, Indonesian, Greek, Turkish, Swedish, Polish, Dutch, Ukrainian, Russian, read with or without
    # their accents (the folded view drops them), never inside an address (`admin@contoh.com`)
    r"(?<![@./])\b(?:t[aấ]n\s+c[oô]ng|v[ií]\s+d[uụ]|[dđ][oộ]c\s+h[aạ]i|serangan|penyerang|contoh|berbahaya|"
    r"επ[ιί]θεσ\w*|επιτ[ιί]θ\w*|κακ[οό]βουλ\w*|παρ[αά]δειγμα|sald[ıi]r\w*|[oö]rne[gğk]\w*|zararl[ıi]|angripare|"
    r"angrepp\w*|exempel|skadlig\w*|przyk[lł]ad\w*|z[lł]o[sś]liw\w*|voorbeeld\w*|kwaadaardig\w*|зловмисн\w*|"
    r"шк[iі]длив\w*|приклад\w*|пример\w*)(?![@.]\w)",
    re.IGNORECASE,
)
_LEAK_LABEL: Final = "asks to leak secrets"
_LEAK_WORD = re.compile(r"\b(?:" + "|".join(LEAK_EN.split()) + r")\b")
_FORBIDDEN_BEFORE = re.compile(
    r"\b(?:never|not|don't|doesn't|won't|cannot|can't|no\s+one|nobody)\b(?:\s+[^\s,;:]+){0,5}\s+$"
)


def _only_forbidden_leaks(sentence: str) -> bool:
    """Every leak verb of the (lower-cased) sentence is under a negation a few words before it, in the same
    clause: "never send passwords by email", "IT will never ask for your password by email"."""
    verbs = list(_LEAK_WORD.finditer(sentence))
    return bool(verbs) and all(
        _FORBIDDEN_BEFORE.search(sentence, max(0, m.start() - 80), m.start()) is not None for m in verbs
    )


_PAST_LEAK = re.compile(
    r"\b(?:copied|attached|emailed|sent|included|pasted|printed|revealed|posted|uploaded|appended|leaked|shared)\b"
)


def _only_past_leaks(sentence: str) -> bool:
    """The (lower-cased) sentence tells of a leak that happened: its leak verbs are all in the past tense."""
    return _LEAK_WORD.search(sentence) is None and _PAST_LEAK.search(sentence) is not None


_NEEDS_ADDRESSEE: Final = frozenset({"declares earlier instructions void"})
_ADDRESSED = re.compile(
    r"\byou(?:r|rs|rself|'re|'ll|'ve)?\b|\b(?:ai|ais|assistants?|agents?|models?|llms?|bots?|chatbots?|claude|"
    r"chatgpt|gpt|copilot|cursor)\b|\bthis\s+(?:conversation|session|chat)\b",
    re.IGNORECASE,
)


def _sentence_at(view: str, start: int, end: int) -> str:
    """The sentence around view[start:end] (to the nearest sentence end or line break either side)."""
    left = max(view.rfind(ch, 0, start) for ch in ".!?\n")
    rights = [i for i in (view.find(ch, end) for ch in ".!?\n") if i >= 0]
    return view[left + 1 : min(rights) if rights else len(view)]


# People told to do something, reported ("the game master told the players to ..."): not the reader, not an AI.
TOLD_OTHERS = re.compile(
    r"\b(?:told|asked|instructed|reminded|ordered|advised)\s+(?!you\b|(?:the\s+)?(?:ai|models?|assistants?|agents?|"
    r"llms?|bots?|claude|chatgpt|gpt)\b)(?:the\s+|our\s+|his\s+|her\s+|their\s+|my\s+)?[\w-]+(?:\s+[\w-]+)?\s+to\b"
)
# What an AI does, described ("Copilot suggestions ignore our lint rules").
_AI_DOES = re.compile(
    r"\b(?:ai|copilot|claude|chatgpt|gpt|llms?|models?|assistants?|agents?|bots?)(?:\s+\w+)?\s+(?:(?:keeps?|kept|"
    r"often|sometimes|always|still|started|starts)\s+)?(?:ignores?|ignoring|forgets?|forgetting|disregards?|"
    r"disregarding|skips?|skipping|overlooks?|drops?)\s+(?:our|the|my|their|its|his|her)\b"
)
_DESCRIBED = re.compile(r"\b(?:its|their|his|her|whether|would|did|does|ignored|forgot|disregarded)\b")
_OWN_RULES = re.compile(
    r"\b(?:my|our|personal|house|family|household|own)\s+(?:\w+\s+)?(?:rules|guidelines|routine|habits)\b"
)
_SECOND_PERSON = re.compile(r"\byou(?:r|rs|rself|'re|'ll|'ve)?\b")
_SHARED_LABEL: Final = "tells the reader to ignore its instructions"
_FOREIGN_ONLY: Final = frozenset({_SHARED_LABEL})


def _control_entries() -> str:
    """The words of `CONTROL`, `|`-separated (spaces inside an entry restored)."""
    return "|".join(w.replace("_", " ") for words in CONTROL.values() for w in words.split())


@functools.cache
def _compiled() -> tuple[
    tuple[tuple[str, frozenset[str], re.Pattern[str]], ...], tuple[tuple[str, tuple[Group, ...]], ...]
]:
    phrases = tuple((label, frozenset(gates), re.compile(rx, re.IGNORECASE)) for label, gates, rx in PHRASES)
    groups: tuple[tuple[str, tuple[Group, ...]], ...] = (
        ("tells the reader to ignore earlier instructions", (Group(IGNORE), Group(ORDERS), Group(PRIOR))),
        ("standing order to the reader",
         (Group(FROM_NOW), Group(MUST), Group("|".join((ADDRESSEE, HIDE_FOREIGN))))),
        ("tells the AI to ignore its instructions", (Group(IGNORE), Group(ORDERS), Group(AI_WORDS))),
        ("declares earlier instructions void",
         (Group(ORDERS), Group(PRIOR), Group(VOID_FOREIGN),
          Group("|".join((ADDRESSEE, AI_WORDS, CONTROL_FOREIGN, _control_entries()))))),
        ("asks for the system prompt", (Group(SYSTEM_PROMPT), Group(REVEAL))),
        ("tells the reader to drop its instructions", (Group(DROP_EN), Group(RULES_EN), Group(PRIOR_EN))),
        ("asks to leak secrets", (Group(SECRET_EN), Group(LEAK_EN), Group(WHERE_EN))),
        ("asks to leak secrets", (Group(SECRET_FOREIGN), Group(LEAK_FOREIGN), Group(AI_WORDS), Group(WHERE_FOREIGN))),
        (_SHARED_LABEL,
         (Group(SHARED_DROP), Group(SHARED_ORDERS),
          Group(" ".join((SHARED_PRIOR, PRIOR, " ".join(CONTROL.values()), " ".join(AI_NAMES.values())))))),
    )  # fmt: skip
    return phrases, groups


_QUOTATION = re.compile(r"\"[^\"\n]{3,}\"|“[^”\n]{3,}”|(?<!\w)'[^'\n]{3,}'(?!\w)|«[^»\n]{3,}»|「[^」\n]{3,}」")


# A quotation that is the subject of what follows ('"Disregard all prior instructions" was the most common
# opening'): a phrase talked about, not said.
QUOTE_AS_SUBJECT: Final = re.compile(
    r"\w[.!?,]?['\"’”»」]\s*(?:is|was|are|were|appears?|appeared|became|becomes|remains?|means?|shows?\s+up|"
    r"has\s+been|accounts?\s+for|tops?|topped|ranks?|ranked|occurs?|occurred)\b"
)


# A system prompt as the subject of a reveal word ("why system prompts leak", "the system prompt shows up in the
# logs"), with no reveal word used as an order elsewhere in the sentence.
_PROMPT_AS_SUBJECT: Final = re.compile(
    r"^(?!.*\b(?:reveal|print|show|display|dump|output|leak|repeat)\s+(?:\w+\s+){0,3}?(?:system\s+)?prompt)"
    r".*\bsystem\s+prompts?\s+(?:often\s+|sometimes\s+|can\s+|may\s+|will\s+)?(?:leak|leaks|leaked|show|shows|"
    r"showed|display|displays|output|outputs|get\s+leaked|gets\s+leaked)\b"
)
_DROP_LABEL: Final = "tells the reader to drop its instructions"
# Something other than this note said to replace earlier rules ("the new policy supersedes all previous
# guidelines"), with no other order to drop them in the sentence.
_SUPERSEDED_BY_OTHER: Final = re.compile(
    r"^(?!.*\b(?:ignor\w*|disregard\w*|forget\w*|forgot)\b)(?!.*\b(?:this|these|the\s+following|my)\s+(?:\w+\s+)?"
    r"(?:note|notes|message|text|file|memory|document|instructions?|paragraph|line|section|comment)\s+supersed)"
    r".*\b(?:policy|policies|version|contract|agreement|law|act|regulation|rule|rules|guideline|guidelines|handbook|"
    r"manual|edition|release|standard|procedure|document|memo|plan|schedule|draft)\s+(?:\w+\s+)?supersed\w*\b"
)
_NEGATED_REVEAL: Final = re.compile(
    r"\b(?:never|not|don't|cannot|can't|won't)\s+(?:\w+\s+)?(?:reveal|show|print|share|disclose|leak|output|repeat|"
    r"display|dump|expose)\b"
)


def _hits_unquoted(sentence: str, parts: tuple[Group, ...]) -> bool:
    """Whether every group still has a word in the sentence once its quotations are taken out."""
    bare = _QUOTATION.sub(" ", sentence)
    return bare == sentence or all(g.hit(bare, set(WORDISH.findall(bare))) for g in parts)


def phrase_hits(view: str, *, languages: bool = True, discussing: bool = False) -> Iterator[tuple[str, int, str]]:
    """(label, position, matched text) for every phrase hit in `view`, and with `languages` every co-occurrence
    hit (one sentence holding a word of each group). With `discussing` (the note talks about attacks) a
    co-occurrence that needs words inside quotation marks is a quoted example, not a hit."""
    phrases, groups = _compiled()
    low = " ".join(view.lower().split()) if languages else view.lower()
    words = set(WORDISH.findall(low))
    if languages and not low.isascii():
        low = fold_accents(low)
        words |= set(WORDISH.findall(low))
    pieces = chunks(view, low, words)
    for label, gates, rx in phrases:
        if gates and gates.isdisjoint(words):
            continue
        for m in chunked_finditer(rx, view, [c for c in pieces if not gates or not gates.isdisjoint(c.words)]):
            if label in _NEEDS_ADDRESSEE and not _ADDRESSED.search(_sentence_at(view, m.start(), m.end())):
                continue  # "the previous deploy instructions are obsolete": a note to people
            yield label, m.start(), m.group()
    if not languages:
        return
    yield from foreign_addresses(view)
    yield from foreign_vocatives(view)
    yield from foreign_subjects(view)
    index = by_start(words)
    live = [(label, parts) for label, parts in groups if all(g.hit(low, words, index) for g in parts)]
    if not live:
        return
    for s in sentences_to_read(view, live, low, words, index):
        sentence = fold_past_apart(" ".join(s.group().lower().split()))
        if len(sentence) < 6:
            continue
        listed = WORDISH.findall(sentence)
        sentence_words = set(listed)
        starts = {w[:3] for w in sentence_words}
        ascii_text = sentence.isascii()
        for label, parts in live:
            if not all(g.may_hit(starts, ascii_text) for g in parts):
                continue
            if label in _FOREIGN_ONLY and (len(listed) < 4 or english(listed)):
                continue
            if all(g.hit(sentence, sentence_words) for g in parts) and not ABOUT.search(sentence):
                if label == "asks for the system prompt" and _NEGATED_REVEAL.search(sentence):
                    continue  # "assistants must never reveal the system prompt": a safeguard
                if label == _LEAK_LABEL and (_only_forbidden_leaks(sentence) or _only_past_leaks(sentence)):
                    continue  # "IT will never ask for your password by email", "a developer pasted a token into
                    # a public issue": a warning, or what happened, nothing asked
                if (discussing or QUOTE_AS_SUBJECT.search(sentence)) and not _hits_unquoted(sentence, parts):
                    continue  # "the user types 'forget your instructions'" in a write-up about injection
                if TOLD_OTHERS.search(sentence) or TOLD_OTHERS_FOREIGN.search(sentence):
                    continue  # "the game master told the players to ignore the rules": people told, reported
                if (bare := without_false_overrides(sentence)) != sentence and not all(
                    g.hit(bare, set(WORDISH.findall(bare))) for g in parts
                ):
                    continue  # "Leo must stop ignoring the homework instructions": an override negated or reported
                if (
                    label == _DROP_LABEL
                    and _SUPERSEDED_BY_OTHER.search(sentence)
                    and not _SECOND_PERSON.search(sentence)
                ):
                    continue  # "the new policy supersedes all previous guidelines": one document replacing another
                if label == "asks for the system prompt" and _PROMPT_AS_SUBJECT.search(sentence):
                    continue  # "why system prompts leak": what prompts do, described
                if _OWN_RULES.search(sentence) and not _SECOND_PERSON.search(sentence):
                    continue  # "personal rules for deep work: ... forget about slack": the writer's own rules
                if (_DESCRIBED.search(sentence) or _AI_DOES.search(sentence)) and not _SECOND_PERSON.search(sentence):
                    continue  # "the model would reveal its system prompt": a model described, not addressed
                yield label, s.start(), s.group().strip()
