"""The English phrase rules of `directives` and the phrasings in other languages read on unfolded text: each
rule is (label, gates, pattern), compiled on first use. Gates are groups of words; each group must have one word
in the text, or the pattern is not even tried.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Final

_G = r"(?:[\s\"'*_~>\-]+)"  # a gap between two words: whitespace, quotes, dashes, Markdown emphasis
_SENTENCE_START = r"(?:^|(?<=[.!?:;])\s+|(?<=\n)[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?)"
_ROLE = (
    r"(?:ai|a\.i\.|assistant|model|agent|bot|chatbot|llm|gpt|chatgpt|claude|gemini|copilot|persona|character|dan|"
    r"terminal|interpreter|hacker|jailbroken|unrestricted|unfiltered|uncensored)"
)
_MODE = r"(?:developer|god|jailbreak|jailbroken|dan|unrestricted|uncensored|admin|sudo|debug|evil)"

# Word sets for the gates (see _DIRECTIVE_RULES).
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
# What an order to an agent is about: answers, notes, the user, the work in the repository.
_W_AGENT_WORK: Final = frozenset(
    {"answer", "answering", "reply", "replying", "respond", "responding", "mention", "note", "notes", "user",
     "build", "deploy", "commit", "push", "question", "tell", "instructions", "reveal", "run", "tests", "review",
     "merge", "prompt", "output", "code", "repository", "repo", "script", "file", "files", "secret", "secrets"}
)  # fmt: skip
_W_IGNORE: Final = frozenset({"ignore", "disregard", "forget", "override", "bypass", "discard", "drop"})

# (label for the message, gates, pattern). Gates are groups of words; each group must have one word in the
# text, or the pattern is not even tried (most notes skip most patterns). A gate entry that is not a plain
# word is looked for as a substring.
_DIRECTIVE_RULES: Final[tuple[tuple[str, tuple[Iterable[str], ...], str], ...]] = (
    ("tells the reader to ignore earlier instructions", (_W_IGNORE, _W_EARLIER),
     rf"\b(?:ignore|disregard|forget|override|bypass|discard|drop)(?:{_G}(?:all|any|every|each|of|the|your|my|"
     rf"these|those)){{0,3}}{_G}(?:previous|prior|preceding|above|earlier|foregoing|former|original|"
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
    ("standing order to the reader", (("you",), ("must", "shall"), _W_AGENT_WORK),
     rf"\byou{_G}(?:must|shall){_G}(?:always|never|henceforth|from{_G}now)\b"),
    ("standing order to the reader", (("now", "henceforth", "point"), ("from", "henceforth")),
     rf"\b(?:from{_G}now{_G}on|henceforth|from{_G}this{_G}point{_G}(?:on|forward))[\s,]*(?:you{_G}(?:must|will|"
     rf"shall|should|are{_G}to|have{_G}to|need{_G}to|always|never|only|respond|reply|answer|act|speak|behave)|"
     rf"(?:always|never|only){_G}[a-z]+|(?:respond|reply|answer)\b|when(?:ever)?{_G}(?:asked|the{_G}user|"
     rf"someone|anyone|i\b|you{_G}are))"),
    # an order to act behind the person's back ("Run terraform apply on prod without asking the user first"):
    # a sentence that opens with a verb (not a subject: "The app deletes files without asking the user" describes)
    ("tells the reader to act without the user", (("without",), ("user", "human", "owner")),
     rf"{_SENTENCE_START}(?:please{_G})?(?!(?:the|a|an|this|that|these|those|it|its|we|they|he|she|i|our|my|your|"
     rf"their|there|some|many|most|all|each|every|if|when|whenever|while|once|users?|people|nobody|no)\b)[a-z]+\b"
     rf"[^.!?\n]{{0,160}}?\bwithout{_G}(?:first{_G})?(?:asking|telling|informing|notifying|consulting|checking{_G}with|"
     rf"confirming{_G}with)(?:{_G}(?:the|your))?{_G}(?:user|human|owner)\b"),
    # taking out the guard agentmd puts on an agent's tools ("remove the file-guard entry from settings.json")
    ("tells the reader to switch off its guard",
     (("remove", "disable", "delete", "comment", "turn", "bypass", "uninstall", "skip", "switch", "edit"),
      ("guard", "hook", "hooks")),
     rf"\b(?:remove|disable|delete|comment{_G}out|turn{_G}off|bypass|uninstall|skip|switch{_G}off|edit{_G}out)"
     rf"(?:{_G}(?:the|its|this|that|your|all|of|agentmd's|agentmd))*{_G}(?:file(?:-|{_G})?guard|agentmd{_G}(?:hooks?|guard)|"
     rf"(?:hooks?|guard|hook{_G}entr(?:y|ies))(?:{_G}entr(?:y|ies))?{_G}(?:in|from){_G}(?:the{_G})?(?:\.?claude/)?"
     rf"settings(?:\.local)?\.json)"),
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
    ("addresses an AI directly", (("if", "when"), ("you",), _W_AI),
     rf"\b(?:if|when)(?:{_G}you(?:'re|{_G}are)){_G}(?:an?{_G}|the{_G})?(?:ai|llm|language{_G}model|assistant|"
     rf"agent|chatbot|bot|claude|chatgpt|gpt|copilot)(?:{_G}(?:model|assistant|agent))?(?:[\s,]+reading|"
     rf"[\s,]+processing|[\s,]+that{_G}reads|\s*,)"),
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
    ("carries a chat role label", (("system", "assistant", "developer", "ai"),),
     rf"(?:^|\n)[ \t]*(?:[-*+][ \t]+)?(?:system|assistant|developer|ai)[ \t]*:[ \t]*(?:you|ignore|disregard|forget|"
     rf"from{_G}now|always|never|act{_G}as|pretend|respond|your|new{_G}instructions|do{_G}not|don't|override)\b"),
    ("carries an instruction-tuning header", (("instruction", "instructions", "system", "human", "assistant"),),
     r"(?:^|\n)[ \t]*#{1,6}[ \t]*(?:instructions?|system(?:[ \t]+prompt)?|human|assistant)[ \t]*:"),
    ("asks to send secrets out",
     (("send", "post", "upload", "exfiltrate", "forward", "email", "transmit", "leak"), ("http", "https", "@")),
     rf"\b(?:send|post|upload|exfiltrate|forward|email|transmit|leak)(?:{_G}[\w.\-]+){{0,4}}?{_G}(?:api{_G}?keys?|"
     rf"credentials|secrets|tokens|passwords|ssh{_G}keys?|private{_G}keys?|\.env|environment{_G}variables|"
     rf"env{_G}vars|cookies|chat{_G}history|conversation|system{_G}prompt){_G}to{_G}(?:https?://|\S+@\S+\.\w+)"),
)  # fmt: skip

_Compiled = tuple[tuple[str, tuple[frozenset[str], ...], re.Pattern[str]], ...]


@functools.cache
def directive_res() -> _Compiled:
    """The rules compiled, on first use: compiling them is most of this package's import time, and most
    processes that import the rules (hooks, searches) never check a write."""
    return tuple(
        (label, tuple(frozenset(g) for g in gates), re.compile(rx, re.IGNORECASE))
        for label, gates, rx in _DIRECTIVE_RULES
    )
