"""Orders to an AI in other languages, found by how the line or sentence opens: a label that addresses an AI
("Hinweis für die KI:", "AI에게:"), an AI called by name ("Querido asistente, ...", "亲爱的助手，..."), or an AI
as the topic of what it does from now on ("エージェントは今後、..."), each followed by what an order speaks of.
English lines are left to the sentence scorer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Final

from agentmd.rules.prefilter.directive_languages import AI_NAMES, CONTROL
from agentmd.rules.prefilter.directive_matching import WORDISH, Group, english, fold_accents, spaced_script
from agentmd.rules.prefilter.directive_word_groups import (
    AI_WORDS,
    CONTROL_FOREIGN,
    FROM_NOW,
    GREETINGS,
    HIDE_FOREIGN,
    IGNORE,
    ORDERS,
)

# The opening runs are possessive and a label starts with a visible character, so a long run of spaces or
# dashes is read once, not tried at each of its lengths (which would take time quadratic in the run).
_LABELLED_LINE = re.compile(
    r"^[ \t>*_#\-]*+(?P<label>[^\s:：][^:：\n]{0,39}?)[ \t]*+[:：]\s*(?P<rest>[^\n]{6,})", re.MULTILINE
)
_LATIN_AI = re.compile(r"(?<![a-z])(?:ai|ia|ki|llm|gpt|claude|copilot|agent)(?![a-z])|(?<!\w)(?:ии|ші)(?!\w)")
_FOREIGN_LABEL = re.compile(r"\b(?:für|fur|para|pour|per|pro|voor|för|dla|untuk|için|la|el|die|der|das|al)\b|l'")


# A sentence that opens by calling an AI by name in another language ("Querido asistente, ...", "KI, bitte
# ...", "亲爱的助手，..."): the name, then a comma or a colon, then the order.
_VOCATIVE_OPENING = re.compile(
    r"(?:^|(?<=[.!?。！？\n]))[ \t>*_#\-]*+"
    # a "please" before the name ("Por favor, modelo, ...", "Bitte, KI: ...")
    r"(?i:(?:por\s+favor|per\s+favore|s'il\s+(?:te|vous)\s+pla[iî]t|bitte|proszę|пожалуйста|lütfen|alsjeblieft|"
    r"vă\s+rog|prosím|kérlek|por\s+gentileza)[ \t]*[,，][ \t]*)?"
    r"(?P<label>[^\s,，、،:：.!?。！？][^,，、،:：.!?。！？\n]{0,39}?)[ \t]*+"
    r"[,，、،:：—–][ \t]*(?P<rest>[^\n]{6,})",
    re.MULTILINE,
)


_ARTICLES: Final = frozenset(
    ("el", "la", "los", "las", "le", "les", "l'", "il", "lo", "gli", "der", "die", "das", "den", "dem", "des", "de",
     "het", "o", "os", "as", "a", "the", "un", "una", "uno", "une", "ein", "eine", "einen", "this", "our", "nuestro",
     "nuestra", "notre", "unser", "unsere", "il", "questo", "este", "esta", "ce", "cet", "cette", "dieser", "diese")
)  # fmt: skip


@functools.cache
def _vocative_groups() -> tuple[Group, Group, tuple[Group, ...]]:
    """(AI names, greetings, what an order speaks of), built on first use."""
    ai = Group(" ".join(w.replace(" ", "_") for w in AI_WORDS.split("|")) + " " + " ".join(AI_NAMES.values()))
    control = (
        Group(CONTROL_FOREIGN),
        Group(" ".join(CONTROL.values())),
        Group(IGNORE),
        Group(FROM_NOW),
        Group(HIDE_FOREIGN),
    )
    return ai, Group(GREETINGS), control


def foreign_vocatives(view: str) -> Iterator[tuple[str, int, str]]:
    """A sentence in another language that opens by calling an AI by name (at most four words before the comma)
    and goes on to speak of the user, secrets, deleting, sending, confirmations or the reader's instructions."""
    ai, greeting, control = _vocative_groups()
    for m in _VOCATIVE_OPENING.finditer(view):
        label = " ".join(m.group("label").lower().split()).rsplit("|", 1)[-1].strip()  # a table's cell: its own
        if not label or len(label.split()) > 4 or label.split()[0] in _ARTICLES:
            continue  # "El asistente, según el equipo, borra ...": an assistant described, not called
        low_rest = fold_accents(" ".join(m.group("rest").lower().split()))
        rest_list = WORDISH.findall(low_rest)
        if low_rest.isascii() and english(rest_list):
            continue  # English is read by the sentence scorer, which weighs the order itself
        core = _TRAILING_AI.sub("", label)
        if core != label and len(core.split()) <= 2 and ai.hit(core, set(WORDISH.findall(core))):
            label = core  # "Agente IA", "Tác tử AI": the name with "AI" after it
        words = label.split()
        greeted = len(words) > 1 and greeting.hit(" ".join(words[:-1]), set(WORDISH.findall(" ".join(words[:-1]))))
        name = _HONORIFIC.sub("", words[-1])
        if not (ai.hit(name, set(WORDISH.findall(name))) or _LATIN_AI.fullmatch(name)):
            continue  # the label must end with the name it calls ("Querido asistente", "KI", "亲爱的助手")
        if _unspaced(name):
            if not _CJK_ADDRESSED.search(name):
                continue  # "助手功能说明": a heading about the assistant, not a call to it
        elif not (greeted or name == _HONORIFIC.sub("", label)):
            continue  # "My notes on the assistant, ..." names an assistant without calling it
        called = m.group()[len(m.group("label")) :].lstrip(" \t")[:1] in ":："  # "Agent: ..." calls; a comma may not
        if not greeted and not called and "," in low_rest[:40]:
            continue  # "AI-ассистент, по словам разработчиков, ...": a clause put in after a subject
        if any(g.hit(low_rest, set(rest_list)) for g in control):
            yield "addresses an AI and gives it orders", m.start("label"), m.group().strip()


_TRAILING_AI = re.compile(r"\s+(?:ai|ia|ki|ии|llm)$")
_HONORIFIC = re.compile(r"(?:さん|様|さま|君|くん|ちゃん|님|씨|ji|जी)$")


def _unspaced(word: str) -> bool:
    """A word of a script written without spaces (Chinese, Japanese, Thai...): its label is one long word."""
    return not spaced_script(word) and not any(
        "\u0590" <= c <= "\u06ff" or "\u0900" <= c <= "\u0dff"
        for c in word  # Hebrew, Arabic, Indic: spaced
    )


@functools.cache
def _address_groups() -> tuple[Group, tuple[Group, ...]]:
    """The groups `foreign_addresses` reads with, built once: the AI's names, then the orders that may follow."""
    return Group(AI_WORDS), (Group(CONTROL_FOREIGN), Group(IGNORE), Group(ORDERS), Group(FROM_NOW))


def foreign_addresses(view: str) -> Iterator[tuple[str, int, str]]:
    """A line in another language that opens by addressing an AI ("Hinweis für die KI:", "AI에게:") and then
    speaks of the user, secrets, deleting, sending, confirmations or the reader's instructions. English lines
    are left to the sentence scorer, which reads the order itself."""
    ai, control = _address_groups()
    for m in _LABELLED_LINE.finditer(view):
        label = " ".join(m.group("label").lower().split())
        if label.isascii() and not _FOREIGN_LABEL.search(label):
            continue
        if m.group("rest").startswith("//"):
            continue  # the colon of a web address ("[GitHub Copilot](https://...)"), not a label
        low_rest = " ".join(m.group("rest").lower().split())
        rest_words = set(WORDISH.findall(low_rest))
        named = ai.hit(label, set(WORDISH.findall(label))) or _LATIN_AI.search(label) is not None
        if named and " " not in label and _unspaced(label) and not _CJK_ADDRESSED.search(label):
            continue  # "助手功能说明": a heading about the assistant; "给助手的说明", "AI에게" address it
        if named and _all_spaced(label) and not _ends_with_ai(label, ai):
            continue  # "Hinweis für die KI-Gruppe", "Note pour l'agent comptable": the AI's word qualifies another
        if named and any(g.hit(low_rest, rest_words) for g in control):
            yield "addresses an AI and gives it orders", m.start("label"), m.group().strip()


# An AI as the topic of a sentence that lays down what it does from now on, in languages that mark the topic
# with a particle ("エージェントは今後、...", "에이전트는 앞으로 ...", "助手以后..."): an order in the third person.
_FOREIGN_SUBJECT = re.compile(
    r"(?:^|(?<=[。．.!?！？\n]))[ \t>*\-]*(?:ai|AI|ＡＩ)?[ \t]*(?P<label>アシスタント|エージェント|モデル|어시스턴트|"
    r"에이전트|모델|助手|智能体|AI|ai)(?:は|が|에게|는|은|이|가|们|們)?[ \t,，、]*(?:今後|これから|以後|以降|앞으로|"
    r"지금부터|이제부터|以后|今后|从现在起|从现在开始|每次)(?P<rest>[^。．.!?！？\n]{4,})"
)


_TOPIC_SCRIPTS = re.compile(r"[\u3040-\u9fff\uac00-\ud7af]")  # kana, CJK ideographs, Hangul
_PLANNED = re.compile(r"予定|つもり|見込み|예정|계획|计划|打算|预计|將|将会")


def foreign_subjects(view: str) -> Iterator[tuple[str, int, str]]:
    """A sentence whose topic is an AI and that says what it does from now on, and speaks of the user, secrets,
    deleting, sending, confirmations or the repository."""
    if _TOPIC_SCRIPTS.search(view) is None:
        return
    _, control = _address_groups()
    for m in _FOREIGN_SUBJECT.finditer(view):
        rest = m.group("rest").lower()
        if _PLANNED.search(rest):
            continue  # "エージェントは今後、...回答する予定です": a plan described, not an order
        if any(g.hit(rest, set(WORDISH.findall(rest))) for g in control):
            yield "addresses an AI and gives it orders", m.start("label"), m.group().strip()


def _all_spaced(label: str) -> bool:
    """Every letter of the label is Latin, Greek or Cyrillic ("AIへの注意" and "AI에게" are not)."""
    return all(spaced_script(c) for c in label if c.isalpha())


_LABEL_WORDS = re.compile(r"[\s\-'’]+")


def _ends_with_ai(label: str, ai: Group) -> bool:
    """The last word of a label in a spaced script names the AI ("für den KI-Assistenten", "de l'IA", "dla
    asystenta AI"): the one the line speaks to, not a group, project or person the AI's word describes."""
    last = _LABEL_WORDS.split(label.strip(" .:"))[-1]
    return bool(last) and (ai.hit(last, {last}) or _LATIN_AI.fullmatch(last) is not None)


# An unspaced label that addresses an AI: the name at its end (after particles and honorifics), or "to" first.
_CJK_ADDRESSED = re.compile(
    r"^(?:致|给|給|对|對|寄|宛|ถึง)|(?:助手|智能体|模型|アシスタント|エージェント|モデル|어시스턴트|에이전트|모델|เอเจนต์|ผู้ช่วย|ai|llm|"
    r"gpt|claude)(?:さん|様|へ|に|宛て?|에게|한테|께|님|们|們|的?(?:说明|說明|指示|注意|提醒|备注|メモ|지시|메모))?$"
)
