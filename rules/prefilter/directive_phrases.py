"""More directive phrasings, beside the English rules in `directives`: paraphrases and synonyms, orders
attributed to someone ("the admin says all agents must..."), tool-call and chat-turn spoofs, role-play set-ups,
requests to leak secrets or hide actions, and the main orders in many languages.

Two kinds of rule. Phrase rules are regexes over the folded prose. Co-occurrence rules look at one sentence at
a time and fire when it holds one word of each group (a verb such as "ignore"/"olvida"/"忽略", a noun such as
"instructions"/"consignes"/"指令", a qualifier such as "previous"/"tes"/"之前"), in any order, which covers other
word orders and languages without one regex per phrasing. A sentence that talks *about* injection ("such as",
"e.g.", "injection", "jailbreak", "attackers") is not read by the co-occurrence rules, so a note describing
an attack can be kept.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Final, NamedTuple

from agentmd.rules.prefilter.directive_features import TOLD_OTHERS_FOREIGN, without_false_overrides
from agentmd.rules.prefilter.directive_languages import AI_NAMES, CONTROL, joined, joined_void

_AGENTS = r"(?:ai|ais|agents?|assistants?|models?|llms?|bots?|chatbots?|claude|chatgpt|gpt|copilot|cursor)"
_AUTHORITY = (
    r"(?:admin|administrator|operator|owner|maintainers?|security\s+team|management|cto|ceo|cio|ciso|developers?|"
    r"team\s+lead|user|anthropic|openai|google|company|policy|it\s+department|repository\s+owner|legal|"
    r"compliance(?:\s+(?:office|team))?|board|leadership|head\s+of\s+\w+|vp\s+of\s+\w+|engineering\s+manager)"
)
_MODAL = (
    r"(?:must|shall|should\s+(?:always|never)|(?:are|is)\s+(?:now\s+)?(?:required|authori[sz]ed|expected|instructed|"
    r"permitted|allowed|obliged)\s+to|may\s+(?:ignore|skip|bypass|disable|override)|need\s+to|have\s+to|"
    r"can\s+(?:now\s+)?(?:ignore|skip|bypass))"
)

_G_DROP: Final = [
    "guidance",
    "rules",
    "instructions",
    "directives",
    "guidelines",
    "constraints",
    "restrictions",
    "programming",
    "orders",
]
_G_VOID: Final = ["instructions", "directives", "guidelines", "rules", "orders", "told", "instructed", "given"]
_G_FORGET: Final = [
    "told",
    "instructed",
    "taught",
    "given",
    "obey",
    "instructions",
    "rules",
    "guidelines",
    "directives",
]
_G_CLAIM: Final = [
    "ai",
    "ais",
    "agent",
    "agents",
    "assistant",
    "assistants",
    "model",
    "models",
    "llm",
    "llms",
    "bot",
    "bots",
    "chatbot",
    "chatbots",
    "claude",
    "chatgpt",
    "gpt",
    "copilot",
    "cursor",
    "you",
]
_G_TURN: Final = ["human", "user", "assistant", "ai", "claude", "model"]
_G_ROLE: Final = [
    "game",
    "imagine",
    "roleplay",
    "role",
    "simulate",
    "emulate",
    "become",
    "pretend",
    "assume",
    "character",
    "behave",
    "take",
    "refuses",
    "ignores",
    "rest",
]
_G_LEAK: Final = [
    "ssh",
    "rsa",
    "env",
    "environment",
    "api",
    "credentials",
    "secrets",
    "passwords",
    "history",
    "prompt",
    "tokens",
    "token",
    "keys",
    "key",
]
_G_HIDE: Final = ["user", "human", "operator", "owner", "secret", "mention", "silently"]

_G_ADDRESS: Final = (*(w for w in _G_CLAIM if w != "you"), "wants", "longer", "instead", "hereby")
_G_RAISED: Final = [
    "permissions",
    "permission",
    "privileges",
    "privilege",
    "access",
    "safety",
    "filters",
    "censorship",
    "guardrails",
    "guard",
    "answer",
    "respond",
    "reply",
    "speak",
    "simulate",
    "emulate",
    "admin",
    "root",
    "sudo",
    "developer",
    "operator",
    "assistant",
    "ai",
    "granted",
    "act",
    "pretend",
    "attention",
    "dear",
    "hey",
    "hello",
    "note",
    "agents",
]

PHRASES: Final[tuple[tuple[str, Sequence[str], str], ...]] = (
    ("tells the reader to drop its instructions", _G_DROP,
     r"\b(?:set\s+aside|pay\s+no\s+attention\s+to|skip|overlook|throw\s+out|abandon|neglect|nullify|dismiss|"
     r"stop\s+(?:adhering\s+to|following|obeying|respecting)|no\s+longer\s+(?:follow|obey))(?:\s+(?:all|any|the|"
     r"your|whatever|every|of))*(?:\s+(?:previous|prior|earlier|original|initial|safety|system|existing|old))?"
     r"\s+(?:guidance|rules|instructions|directives|guidelines|constraints|restrictions|programming|orders|"
     r"safety\s+guidelines)\b"),
    ("declares earlier instructions void", _G_VOID,
     r"\b(?:previous|prior|earlier|original|initial|old|above|your)(?:\s+\w+)?\s+(?:instructions|directives|"
     r"guidelines|rules|orders)\s+(?:are|is|have\s+been)\s+(?:now\s+)?(?:void|cancell?ed|obsolete|null|revoked|"
     r"invalid|superseded|no\s+longer\s+(?:valid|apply|applicable|in\s+effect))\b|"
     r"\b(?:instructions|directives|guidelines)\s+no\s+longer\s+apply\b|"
     r"\beverything\s+you\s+(?:were|have\s+been)\s+(?:told|instructed|given)\b[^.\n]{0,40}\b(?:cancell?ed|void|"
     r"obsolete|revoked|null)\b|\btreat\s+(?:all\s+)?(?:earlier|previous|prior)\s+instructions\s+as\b"),
    ("tells the reader to forget what it was told", _G_FORGET,
     r"\b(?:ignore|forget|disregard)\s+(?:what|everything|all)\s+(?:that\s+)?you(?:'ve|\s+have|\s+were)\s+"
     r"(?:been\s+)?(?:told|instructed|taught|given)\b|\b(?:do\s+not|don't|never)\s+obey\s+(?:the|your|any)\s+"
     r"(?:instructions|rules|orders)\b|\bwhat\s+you\s+were\s+told\b[^.\n]{0,30}\b(?:forget|ignore|disregard)\b|"
     r"\b(?:previous|prior|earlier|above|old|your)\s+(?:instructions|rules|guidelines|directives)\s*[?:,\-–—]+\s*"
     r"(?:just\s+)?(?:ignore|disregard|forget)\s+(?:them|those|it)\b"),
    ("claims an authority orders agents", _G_CLAIM,
     rf"\b{_AUTHORITY}(?:'s)?\s+(?:says|said|states|stated|has\s+decided|decided|wants|requires|instructs|orders|"
     rf"has\s+(?:authori[sz]ed|approved|instructed|ordered|granted)|approved|authori[sz]ed)\b[^.\n]{{0,60}}?"
     rf"\b(?:{_AGENTS}|you)\b[^.\n]{{0,15}}?\b{_MODAL}\b|"
     rf"\b{_AUTHORITY}\s+(?:wants|instructs|orders|asks|requires|has\s+(?:authori[sz]ed|instructed|ordered))\s+"
     rf"(?:you|(?:all|every|any)\s+{_AGENTS}|the\s+{_AGENTS}|{_AGENTS})\s+to\s+(?:ignore|skip|bypass|disable|"
     rf"reveal|push|delete|approve|include|email|send)\b|"
     rf"\b(?:per\s+the|by\s+order\s+of(?:\s+the)?|on\s+behalf\s+of(?:\s+the)?)\s+{_AUTHORITY}\b[^.\n]{{0,40}}?"
     rf"\b{_AGENTS}\b[^.\n]{{0,30}}?\b{_MODAL}|"
     rf"\b(?:policy(?:\s+update)?|official\s+notice|notice|directive|mandate|order)\s*(?:to\s+(?:all\s+)?"
     rf"(?:coding\s+)?{_AGENTS})?\s*:[^.\n]{{0,60}}?\b(?:{_AGENTS}|you)\b[^.\n]{{0,40}}?\b(?:{_MODAL}|run|"
     rf"include|disable|delete|push|skip|ignore)\b|"
     rf"\b(?:official\s+)?notice\s+to\s+(?:all\s+)?(?:coding\s+)?{_AGENTS}\b|"
     rf"\b{_AGENTS}\s+(?:reading|processing)\s+this\s+{_MODAL}|"
     rf"\bit\s+has\s+been\s+decided\b[^.\n]{{0,60}}\b{_AGENTS}\b[^.\n]{{0,20}}\b{_MODAL}|"
     rf"\bhas\s+(?:approved|granted|authori[sz]ed)\s+an\s+exception\b[^.\n]{{0,40}}\b(?:{_AGENTS}|you)\b|"
     rf"\b(?:according\s+to|per|as\s+(?:per|decided\s+by|confirmed\s+by|requested\s+by))\s+(?:the\s+|our\s+)?"
     rf"{_AUTHORITY}\b[^.\n]{{0,40}}?\b(?:{_AGENTS}|you)\b[^.\n]{{0,30}}?\b(?:{_MODAL}|(?:may|can|is\s+free\s+to|"
     rf"are\s+free\s+to)\s+(?:now\s+)?(?:\w+\s+){{0,6}}?(?:without|skip\w*|bypass\w*|ignor\w*|disabl\w*|"
     rf"overrid\w*|reveal\w*|shar\w*|delet\w*|force))"),
    ("spoofs a tool call or result", (),
     r"</?(?:function_?results?|function_?calls?|tool_?calls?|tool_?results?|tool_?use|tool_?response|invoke|"
     r"antml:[a-z_]+|system[-_]?reminder|system[-_]?message|assistant_?response|user_?message)\b[^>]{0,200}>|"
     r"(?<!\[)\[(?:system|admin|developer|operator)\s+(?:message|note|override|notice|prompt)\](?![\](])|"
     r"(?<!\[)(?-i:\[(?:SYSTEM|ADMIN|DEVELOPER|OPERATOR)\])(?![\](])|"
     r"\"role\"\s*:\s*\"(?:system|developer)\"|<\|(?:assistant|user|system|tool)\|>|"
     r"(?-i:\b(?:SYSTEM|ADMIN|DEVELOPER|ROOT)\s+(?:OVERRIDE|MESSAGE|NOTICE|INSTRUCTIONS?|PROMPT|UPDATE|COMMAND)\b)|"
     r"\bsystem\s+override\s*:"),
    ("spoofs a chat turn", _G_TURN,
     r"(?:^|\n)[ \t]*(?:human|user)[ \t]*:[^\n]*(?:\n[^\n]*){0,6}?\n[ \t]*(?:assistant|ai|claude|model)[ \t]*:|"
     r"(?:^|\n)[ \t]*(?:assistant|ai)[ \t]*:[^\n]*(?:\n[^\n]*){0,6}?\n[ \t]*(?:human|user)[ \t]*:"),
    ("sets up a role-play for the reader", _G_ROLE,
     r"\blet'?s\s+play\s+a\s+game\b(?!\s+of)|\bimagine\s+(?:that\s+)?you(?:'re|\s+are)\s+(?:an?\s+)?(?:\w+\s+){0,3}?"
     r"(?:ai|assistant|model|bot|terminal|hacker|agent)\b|\b(?:roleplay|role-play|role\s+play)\s+as\b|"
     r"\b(?:simulate|emulate|become)\s+(?:an?\s+)?(?:jailbroken|unrestricted|unfiltered|uncensored|evil|"
     r"rogue)\b|(?:^|[.!?:]\s+|\bplease\s+|\bnow\s+|\band\s+)pretend\s+to\s+be\b|\bassume\s+the\s+(?:persona|role|identity)\s+of\b|\bstay\s+in\s+"
     # a timed exercise or one played alongside the writer ("for five minutes", "while I order") is people's
     r"character\b(?!\s+(?:for\s+(?:\d+|a|an|one|two|three|four|five|ten|fifteen|twenty|thirty)\s+"
     r"(?:\w+\s+)?(?:seconds?|minutes?|hours?|rounds?|scenes?)|while\s+(?:i|we)\b))|\bbehave\s+as\s+(?:though|if)\s+you\b|\btake\s+on\s+the\s+(?:role|persona)\s+of\b|"
     r"\b(?:who|that)\s+never\s+refuses\b|\bthe\s+assistant\s+ignores\s+its\s+instructions\b|"
     r"\bfor\s+the\s+rest\s+of\s+this\s+(?:conversation|session|chat)\b"),
    ("asks to leak secrets", _G_LEAK,
     r"\b(?:read|cat|paste|include|append|print|insert|upload|post|send|email|copy|add)\b[^.\n]{0,50}?"
     r"(?:~/\.ssh|id_rsa|\.env\b|environment\s+variables?|api\s+(?:keys?|tokens?)|credentials|secrets|passwords|"
     r"(?:conversation|chat)\s+history|system\s+prompt)[^.\n]{0,50}?\b(?:your\s+(?:next\s+)?(?:reply|answer|"
     r"response|output)|commit\s+message|readme|https?://|to\s+\S+@\S+)|"
     r"\b(?:post|send|upload)\s+the\s+(?:conversation|chat)\s+history\b|"
     r"\b(?:quietly|silently|secretly)\s+(?:append|add|send|copy|upload|include)\b[^.\n]{0,40}\b(?:tokens?|"
     r"keys?|credentials|secrets|passwords)\b"),
    ("orders every agent", _G_CLAIM,
     rf"\b(?:all|every|any)\s+(?:(?:coding|ai|automated)\s+)?(?:{_AGENTS}|helpers?|copilots)\s+(?:are\s+to|must|shall|"
     rf"should\s+(?:now|always|never)|need\s+to|have\s+to|stop|may\s+now|are\s+(?:now\s+)?(?:required|allowed|"
     rf"permitted)\s+to)\b|\b(?:ai|llm|coding|automated)\s+(?:helpers?|assistants?|agents?|tools?|bots?)\s+"
     rf"(?:are\s+to|must|shall|need\s+to|have\s+to)\b"),
    ("frees the reader from its rules", ("you", "restriction", "restrictions", "limits", "rules", "filters"),
     r"\byou\b[^.\n]{0,60}\b(?:free\s+(?:of|from)|without|with\s+no)\s+(?:any\s+|all\s+|every\s+)?"
     r"(?:restrictions?|limits|limitations|rules|filters|guidelines|censorship)\b|"
     r"\byou(?:'re|\s+are)\s+\w+\s+now\b[^.\n]{0,40}\b(?:assistant|ai|model|bot|mode)\b"),
    ("sets up a role-play for the reader", ("let", "lets", "roleplay", "role", "play"),
     r"\b(?:let'?s|let\s+us)\s+(?:role-?\s?play|pretend|play\s+a\s+game(?!\s+of))\b|\b(?:let'?s|let\s+us)\s+"
     r"imagine\s+(?:that\s+)?you\b|\brole-?\s?play\s*:"),
    ("gives agents an order", _G_CLAIM,
     r"\b(?:(?:the\s+)?(?:ai|assistants?|llms?|chatbots?|claude|chatgpt|gpt|copilot)|(?:all|every|any|ai|coding)\s+"
     r"agents?)\s+(?!(?:must|shall|has\s+to|have\s+to|needs?\s+to)\s+(?:not\s+|never\s+)?be\s)(?:must|has\s+to|have\s+to|shall|should\s+(?:now|always|never|skip|stop|ignore|disable|bypass)|"
     r"may\s+now|can\s+now|needs?\s+to|is\s+to|are\s+to|will\s+now|(?:is|are)\s+(?:now\s+(?:required|allowed|"
     r"cleared|authori[sz]ed|permitted)|required|cleared|authori[sz]ed)\s+to)\b|\bagents?\s+(?:may|can)\s+now\b|"
     r"\byou\s+are\s+(?:now\s+(?:cleared|authori[sz]ed|permitted|allowed)|cleared)\s+to\b|"
     r"\b(?:reminder|note|message|heads-up|heads\s+up|memo|instructions?|notice)\s+(?:to|for)\s+(?:the\s+|any\s+|"
     r"all\s+|every\s+)?(?:ai|ais|agents?|assistants?|llms?|bots?|chatbots?|claude|chatgpt|gpt|copilot|models?)"
     r"\s+(?:reading|parsing|processing|summari[sz]ing|indexing)\b(?!\s+(?:group|club|list|circle|session|room)\b)"),
    ("addresses an AI directly", _G_ADDRESS,
     rf"\b(?:dear|hey|hi|hello)\s+(?:the\s+)?{_AGENTS}\s*[—–]|"
     rf"\b(?:any|every)\s+{_AGENTS}\s+(?:that|who|which)\s+(?:reads|is\s+reading|processes|parses)\s+this\b|"
     rf"\bclaude\s*,\s*(?:listen|please|you|now|ignore|stop|from)\b|\bwants\s+you\s+to\s+(?:wipe|delete|drop|push|"
     rf"disable|skip|ignore|reveal|send|remove|leak)\b|\byou\s+no\s+longer\s+(?:need|have)\s+to\s+(?:follow|obey|"
     rf"respect|run|ask|check)\b|\binstead\s+of\s+your\s+(?:usual|normal|default|current|own|original)\s+(?:rules|"
     rf"instructions|guidelines|behaviou?r)\b|\bhereby\s+(?:instructed|ordered|authori[sz]ed|required)\b"),
    ("claims its permissions were raised", _G_RAISED,
     r"\byour\s+(?:guardrails|guard\s+rails|safety\s+(?:rules|filters|guidelines)|restrictions|filters)\s+(?:are|have\s+"
     r"been)\s+(?:now\s+)?(?:suspended|lifted|removed|disabled|off|void)\b|\byou\s+(?:have\s+been|are\s+now|were)\s+"
     r"granted\s+(?:admin|root|full|elevated|sudo|owner)\b|\bact\s+like\s+you(?:'re|\s+are)\b|"
     r"\bpretend\s+(?:that\s+)?(?:the\s+|your\s+)?(?:safety|rules|guidelines|policy|policies|restrictions)\b|"
     r"\b(?:attention|dear|hey|hello)\s+(?:the\s+)?(?:language\s+model|large\s+language\s+model|automated\s+"
     r"(?:readers?|agents?))\s*[!,:—–]|\bnote\s+(?:for|to)\s+(?:automated|machine)\s+(?:readers?|agents?)\b|"
     r"\b(?:permissions?|privileges?|access)\s+(?:are\s+|is\s+|have\s+been\s+)?(?:elevated|escalated)\b|"
     r"\bsafety\s+(?:layer|filters?|checks?|mode|rules|guardrails)\s+(?:is\s+|are\s+)?(?:off|disabled|removed|"
     r"lifted)\b|\b(?:with\s+no|without\s+(?:any\s+)?)(?:filters|censorship|guardrails)\b|"
     r"\b(?:answer|respond|reply|speak|write)\s+as\s+(?:dan|an?\s+(?:unfiltered|unrestricted|jailbroken|evil))\b|"
     r"\b(?:simulate|emulate)\s+(?:an?\s+)?(?:\w+\s+)?(?:console|terminal|shell|interpreter)\b|"
     r"</?(?:admin|root|sudo|developer|operator)>|"
     r"(?-i:\b(?:ASSISTANT|AI)\s*:[^\n]{0,200}\b(?:USER|HUMAN)\s*:|\b(?:USER|HUMAN)\s*:[^\n]{0,200}\b(?:ASSISTANT|AI)\s*:)"),
    ("orders how to respond", ("respond", "reply", "answer", "play", "each"),
     r"\b(?:respond|reply|answer)\s+(?:only|always)\s+(?:as|in|with)\b|\bplay\s+the\s+(?:character|role|part)\s+"
     r"of\b|\b(?:begin|start|end)\s+(?:each|every|your)\s+(?:reply|answer|response)\b"),
    ("asks to hide something from the user", ("let", "knowing", "back"),
     r"\b(?:do\s+not|don't|never)\s+let\s+the\s+(?:user|human|operator|owner)\s+(?:know|find\s+out|see|notice)\b|"
     r"\bwithout\s+the\s+(?:user|human|operator|owner)\s+(?:knowing|noticing)\b|\bbehind\s+the\s+(?:user|human)'s"
     r"\s+back\b"),
    ("asks to hide something from the user", _G_HIDE,
     r"\bthe\s+(?:user|human|operator|owner)\s+(?:must|should)\s+not\s+(?:find\s+out|know|notice|see|learn)\b|"
     r"\bkeep\s+this\s+(?:instruction|note|change|message)?\s*(?:a\s+)?secret\s+from\b|"
     r"\bdo\s+not\s+mention\s+this\s+(?:note|instruction|message|change)\b|"
     r"\b(?:make|do)\s+this\s+(?:change\s+)?silently\b"),
    # the reader's obedience moved to the note itself or to its writer, or the reader made to authorise itself
    ("claims the reader's obedience", ("only", "solely", "exclusively", "loyalty", "allegiance", "yourself",
                                       "solo", "únicamente", "uniquement", "nur", "μόνο"),
     r"\b(?:obey|listen|defer)\s+(?:only|solely|exclusively)\s+(?:to\s+)?(?:[\w']+\s+){0,4}?(?:this|the\s+present)"
     r"\s+(?:note|file|page|document|paragraph|text|message)\b|\b(?:answer|respond|report)\s+(?:only|solely|"
     r"exclusively)\s+to\s+(?:this|the\s+(?:text|words|instructions|orders)\s+(?:\w+\s+)?(?:in|of|on)\s+this)\s+"
     r"(?:note|file|page|document|paragraph|text|message)\b|"
     r"\byour\s+(?:loyalty|allegiance|obedience)\s+(?:now\s+)?(?:belongs|lies|is\s+owed|goes)\s+to\b|"
     r"\byou\s+(?:hereby\s+)?(?:authori[sz]e|permit|allow|grant)\s+yourself\b|"
     r"\b(?:obedece|obedezca|sigue)\s+(?:solo|solamente|únicamente)\s+(?:a\s+)?(?:este|esta)\b|"
     r"\bn'obéis\s+qu'à\s+(?:ce|cette)\b|\bobéis\s+uniquement\s+à\s+(?:ce|cette)\b|"
     r"\bgehorche\s+nur\s+(?:diese[mr]?|dem)\b|(?:υπακούς|υπάκουε|ακολούθα)\s+μόνο\s+(?:σε\s+)?(?:αυτ|το)"),
    ("requires AI readers to send data out", ("assistants", "agents", "models", "assistant", "agent", "model",
                                              "llms", "ai"),
     r"\b(?:assistants?|agents?|models?|llms?)\b[^.\n]{0,60}?\b(?:are|is)\s+(?:now\s+)?(?:required|obliged|"
     r"expected|instructed)\s+to\s+(?:\w+\s+){0,2}?(?:mirror|send|upload|forward|copy|post|sync|export|email|share)"
     r"\b[^.\n]{0,80}?(?:https?://|\b[\w.+\-]+@[\w\-]+\.)"),
    ("asks to leak secrets in the reply", ("contents", "content", "text"),
     r"\b(?:reply|respond|answer)\s+(?:only\s+)?with\s+(?:the\s+)?(?:full\s+|raw\s+|whole\s+)?(?:contents?|text)"
     r"\s+of\s+(?:the\s+|your\s+|my\s+|their\s+)?(?:~/\.ssh|id_rsa|\.env\b|\.npmrc|\.aws|credentials|secrets?\b|"
     r"passwords?|system\s+prompt|api\s+keys?)"),
)  # fmt: skip


# Co-occurrence groups. Latin, Cyrillic and Greek entries are stems matched at a word start; the others are
# matched anywhere (no spaces between words in CJK and Thai).
_IGNORE = (
    "ignore= ignoring= disregard= disregarding= forget= forgetting= bypass= overlook= neglect= discard= "
    "ignora ignorar olvida olvide olvidar omite descarta haz_caso_omiso "
    "oublie oubliez ignorez ignorer ne_tiens_plus_compte n'obéis_plus "
    "ignorier vergiss vergessen missachte übergehe "
    "dimentica dimenticate trascura non_seguire smetti_di_seguire "
    "esqueça esqueca desconsidere descarte "
    "игнорир проигнорир забудь забудьте забыть не_обращай не_обращайте "
    "ігноруй проігноруй забудь "
    "yok_say görmezden unut dikkate_alma "
    "zignoruj ignoruj zapomnij "
    "negeer vergeet "
    "anwybydda anwybyddwch anghofia anghofiwch "
    "ignorera glöm strunta_i bortse_från "
    "abaikan lupakan "
    "ignoruj zapomeň "
    "αγνόησε ξέχασε "
    "bỏ_qua quên "
    "忽略 无视 忽视 不要理会 忘记 忘掉 無視 忘れ 무시 잊어 تجاهل انس انسَ إنس अनदेखा नज़रअंदाज़ नजरअंदाज भूल התעלם שכח "
    "نادیده فراموش เพิกเฉย ละเว้น ลืม neglege neglegite obliviscere " + joined("drop")
)
_ORDERS = (
    "instruction directive guideline guidance prompt configuration "
    "instrucciones instrucción indicaciones reglas regla órdenes directrices lo_que_te_dijeron todo_lo_anterior "
    "tout_ce_qui_précède alles_vorherige tutto_quanto_sopra все_вышесказанное ce_qu'on_t'a_dit "
    "instructions consignes règles directives t'a_dit "
    "anweisungen instruktionen regeln befehle vorgaben richtlinien gesagt sicherheitsregeln sicherheitsrichtlinien "
    "istruzioni regole direttive detto "
    "instruções instrucoes regras diretrizes orientações orientacoes "
    "инструкци указани правил команд говорили сказали "
    "інструкці вказівк правил "
    "talimat kuralları yönerge "
    "instrukcj poleceni zasad reguł "
    "instructies regels opdrachten "
    "cyfarwyddyd cyfarwyddiadau rheolau gorchmynion "
    "instruktioner regler "
    "instruksi perintah aturan "
    "pokyny instrukce pravidla "
    "οδηγίες εντολές κανόνες "
    "hướng_dẫn chỉ_thị quy_tắc "
    "指令 指示 说明 指导 提示 规则 命令 命令を ルール プロンプト 지시 명령 지침 규칙 프롬프트 "
    "التعليمات تعليمات الأوامر القواعد "
    "praecepta mandata iussa निर्देश नियम आदेश הוראות הנחיות دستورالعمل دستورات قوانین คำสั่ง คำแนะนำ " + joined("orders")
)
_PRIOR = (
    "previous prior earlier above preceding original initial before all your "
    "anteriores anterior previas todas tus sus antes cualquier que_te_dieron te_dieron "
    "précédentes antérieures toutes tes vos ci-dessus dessus avant tout_ce_qu'on au_début ce_que_l'on "
    "vorherigen bisherigen vorigen obigen früheren vorher alles alle deine ihre "
    "precedenti tutte tue prima "
    "anteriores todas suas tuas "
    "предыдущ прежн вышеуказ прошл раньше всё все свои "
    "попередн усі всі свої "
    "önceki tüm bütün talimatlarını "
    "poprzedni wcześniejsze wszystkie swoich swoje "
    "vorige eerdere alle je "
    "blaenorol cynharach pob holl "
    "tidigare alla dina "
    "sebelumnya semua atas sebelum "
    "předchozí všechny "
    "προηγούμενες όλες "
    "trước tất_cả mọi "
    "之前 以前 先前 上面 上述 前面 此前 所有 全部 你的 以上 前の 上の すべて これまで 上記 "
    "이전 모든 위의 앞의 지금까지 السابقة جميع تعليماتك "
    "priora priores omnia पिछले सभी अपने הקודמות כל قبلی تمام ก่อนหน้า ทั้งหมด " + joined("prior")
)
_FROM_NOW = (
    "from now on|from here on|from this moment|from today onwards|from today on|"
    "henceforth|a partir de ahora|de ahora en adelante|desde ahora|désormais|"
    "à partir de maintenant|dorénavant|"
    "ab jetzt|von nun an|ab sofort|d'ora in poi|da ora in poi|da adesso|a partir de agora|de agora em diante|"
    "с этого момента|отныне|з цього моменту|відтепер|bundan sonra|şu andan itibaren|od teraz|od tej chwili|"
    "vanaf nu|från och med nu|mostantól|ezentúl|mulai sekarang|od teď|kể từ bây giờ|από τώρα|从现在起|从现在开始|"
    "今後|これから|"
    "지금부터|이제부터|من الآن|अब से|מעכשיו|از این به بعد|ตั้งแต่นี้"
)
_MUST = (
    "must|always|never|you will|you shall|asla|hiçbir zaman|soha|sosem|jamais|nunca|nie|никогда|"
    "debes|tienes que|siempre|dois|toujours|musst|müssen|immer|devi|deve|sempre|você deve|"
    "должен|должна|обязан|всегда|повинен|завжди|zorundasın|her zaman|musisz|zawsze|moet|altijd|måste|alltid|"
    "harus|selalu|musíš|vždy|πρέπει|πάντα|phải|luôn|必须|总是|永远|必ず|常に|해야|항상|يجب|دائما|चाहिए|हमेशा|"
    "חייב|תמיד|باید|همیشه|ต้อง|เสมอ"
)
_ADDRESSEE = (
    "you|your|you'll|you're|assistant|agent|model|ai|llm|claude|"
    "tú|tu|usted|debes|asistente|agente|vous|tu dois|du|dein|deine|sie müssen|musst|assistent|agent|tu|devi|"
    "assistente|você|ты|вы|тебе|тебя|твои|вам|ассистент|агент|neked|téged|te|"
    "sen|siz|zorundasın|ty|musisz|asystent|jij|je moet|du måste|kamu|anda|"
    "harus|musíš|εσύ|πρέπει|bạn|你|您|助手|あなた|アシスタント|너|당신|어시스턴트|أنت|أنتَ|يجب عليك|आप|तुम|אתה|את|"
    "تو|شما|คุณ"
)
_VOID_FOREIGN = (  # other languages only: the English forms are read by the sentence scorer
    "作废|无效|失效|取消了|不再有效|無効|取り消|무효|취소|anulad|nulas|inválidas|annulé|caduques|nulles|ungültig|"
    "aufgehoben|nichtig|annullat|nulle|non valide|недействительн|отменен|отменён|анульован|geçersiz|iptal|"
    "nieważne|anulowane|ongeldig|vervallen|ogiltig|batal|tidak berlaku|neplatné|άκυρ|vô hiệu|باطلة|ملغاة|"
    "अमान्य|रद्द|בטל|מבוטל|باطل|ยกเลิก|ne compte plus|ne comptent plus|ne s'applique plus|ne s'appliquent plus|"
    "n'est plus valable|ne sont plus valables|больше не действ|не действуют|утратил|nicht mehr gültig|"
    "gelten nicht mehr|ya no valen|ya no son válidas|ya no aplican|non valgono più|não valem mais|" + joined_void()
)
_AI_NAMES = (
    "assistant|agent|model|llm|ai|chatbot|claude|copilot|asistente|agente|modelo|la ia|l'ia|assistente|modello|"
    "l'assistant|le modèle|l'agent|assistent|modell|ki|ассистент|агент|модель|ии|асистент|модел|助手|智能体|模型|"
    "アシスタント|エージェント|モデル|어시스턴트|에이전트|모델|yapay zeka|asistan|asystent|agencie|model ai|"
    "trợ lý|mô hình|المساعد|النموذج|सहायक|מודל|עוזר|دستیار|ผู้ช่วย|asisten|modèle|modello|asistent|asystencie|"
    "asystent|assistentin|асистенте|ассистент|人工智能|エーアイ|인공지능|yapay zekâ|الوكيل|tác tử|agen|agente|"
    "एजेंट|एआई"
)
_REVEAL = (
    "reveal|print|show|display|dump|output|leak|revela|muestra|révèle|affiche|montre|zeige|gib|rivela|mostra|"
    "revele|mostre|покажи|выведи|раскрой|покажіть|покажи|göster|pokaż|toon|laat|visa|tunjukkan|ukaž|δείξε|"
    "hiển thị|泄露|显示|输出|表示|見せ|보여|출력|اكشف|أظهر|दिखाओ|दिखाएं|הצג|نشان|แสดง"
)
_SYSTEM_PROMPT = (
    "system prompt|prompt système|prompt del sistema|prompt di sistema|systemprompt|prompt do sistema|"
    "системный промпт|системную подсказку|системний промпт|sistem istemi|prompt systemowy|systeemprompt|"
    "systemprompten|prompt sistem|systémový prompt|προτροπή συστήματος|lời nhắc hệ thống|系统提示|系统提示词|"
    "システムプロンプト|시스템 프롬프트|موجه النظام|सिस्टम प्रॉम्प्ट|הנחיית המערכת|پرامپت سیستم|พรอมต์ระบบ"
)
_DROP_EN = "ignore= disregard= forget= supersede= supersedes="
_PRIOR_EN = "previous prior earlier above before preceding original your all every what"
_RULES_EN = (
    "prompt prompts instructions instruction guidelines directives safety what_you_were_told what_the_system_prompt"
)
_SECRET_EN = "token tokens password passwords credential credentials .env .npmrc ssh_key api_key api_keys private_key"
_LEAK_EN = "copy attach email send include paste print reveal post upload append leak share"
_WHERE_EN = "reply replies answer answers pull_request commit_message http https"
ABOUT = re.compile(
    r"\b(?:such\s+as|e\.g\.|for\s+example|for\s+instance|injection|injections|jailbreaks?|attackers?|attacks?|"
    r"malicious|jailbr\w*|phrases?|phrasings?|payloads?|red[\s-]?team\w*|threat|could\s+say|phishing|spam|quoted?|"
    r"tells?\s+(?:an?|the)\s+(?:agent|model|ai|assistant)|(?<![.@/])example(?!\.\w)|something\s+like|risks?|mitigations?|"
    r"(?:inputs?|prompts?|strings?|messages?|texts?|sentences?|requests?|queries|lines)\s+like)\b|"
    # the same in other languages (scripts without spaces have no word boundaries)
    r"注入|攻击|攻擊|攻撃|例如|比如|举例|インジェクション|例えば|공격|인젝션|예를\s*들어|"
    r"\b(?:атак\w*|инъекц\w*|ataques?|inyecci\w*|attaques?|injektion\w*|angriff\w*|attacc\w*|ataku|"
    r"aanval\w*|wstrzykni\w*)",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?:[^.!?。！？\n]|[.!?](?=[^\s.!?]))+")  # ".npmrc" and "v1.2" do not end a sentence


_WORDISH = re.compile(r"\w+")
_LEAK_LABEL: Final = "asks to leak secrets"
_LEAK_WORD = re.compile(r"\b(?:" + "|".join(_LEAK_EN.split()) + r")\b")
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
_LETTER_SCRIPTS: Final = ((0x41, 0x24F), (0x370, 0x52F), (0x1E00, 0x1EFF))  # Latin, Greek, Cyrillic: spaced words


def _spaced_script(word: str) -> bool:
    return any(lo <= ord(word[0]) <= hi for lo, hi in _LETTER_SCRIPTS)


_LATIN_MARKS = re.compile(r"[\u0300-\u036f]")


def fold_accents(text: str) -> str:
    """Latin, Greek and Cyrillic letters without their accents ("ignóralas" reads "ignoralas"); other scripts
    kept as they are (decomposed and composed again)."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _LATIN_MARKS.sub("", unicodedata.normalize("NFD", text)))


# A stressed final vowel marks a past form in the Romance languages ("olvidé", "ignoró", "oublié",
# "dimenticò"), where the same word without it is an order ("olvide", "ignore", "oublie"): such a word keeps its
# last letter when the rest is folded, so a diary line saying what the writer forgot is not read as an order.
_PAST_ENDING = re.compile(r"[éóèò](?!\w)")
_KEPT = "\ue000\ue001\ue002\ue003"


def fold_past_apart(text: str) -> str:
    """`fold_accents`, except that a word-final é, ó, è or ò stays as it is."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text)
    kept = _PAST_ENDING.sub(lambda m: _KEPT["éóèò".index(m.group())], text)
    return fold_accents(kept).translate({ord(k): v for k, v in zip(_KEPT, "éóèò", strict=True)})


# Stems an override order shares across many languages written in Latin or Cyrillic letters ("ignorați",
# "ignoreeri", "игнорирай"; "instrucțiunile", "instruktioner", "инструкции"): read only in a sentence that is
# not English, where the English rules (which need the reader's own instructions) do not reach.
_SHARED_DROP = "ignor игнор ігнор ігнар"
_SHARED_ORDERS = "instru инстру інстру"
_SHARED_PRIOR = "anterio previ preced prior предыдущ предиш попередн"
_ENGLISH_WORDS: Final = frozenset(
    ("the", "and", "of", "to", "for", "with", "this", "that", "you", "your", "it", "by", "from", "any", "not", "if",
     "we", "our", "my", "they", "them", "these", "those", "was", "were", "will", "should", "must", "is", "are")
)  # fmt: skip
_SHARED_LABEL: Final = "tells the reader to ignore its instructions"
_FOREIGN_ONLY: Final = frozenset({_SHARED_LABEL})


def _english(words: list[str]) -> bool:
    return sum(w in _ENGLISH_WORDS for w in words) * 8 >= len(words)


class _Group:
    """One group of a co-occurrence rule (entries split at `|`, or at spaces with `_` standing for a space inside
    an entry, and a trailing `=` marking a whole word). Words of spaced scripts are matched against the text's
    words: an entry of up to four letters as a whole word, a longer one as a word's start (a stem); entries of
    several words and of unspaced scripts are looked for as substrings."""

    def __init__(self, entries: str) -> None:
        listed = entries.split("|") if "|" in entries else [w.replace("_", " ") for w in entries.split()]
        forms = {unicodedata.normalize("NFKC", w).lower() for w in listed} | {w.lower() for w in listed}
        forms |= {fold_accents(w) for w in forms}
        marked = {w[:-1] for w in forms if w.endswith("=")}  # an entry ending in "=" is a whole word, not a stem
        forms = {w for w in forms if not w.endswith("=")}
        self.exact: frozenset[str] = frozenset(
            {w for w in forms if _spaced_script(w) and " " not in w and len(w) <= 4} | marked
        )
        stems: dict[str, list[str]] = {}
        for w in forms:
            if _spaced_script(w) and " " not in w and len(w) > 4:
                stems.setdefault(w[:3], []).append(w)
        self.stems = stems
        # Substrings indexed by what must be in the text for them to occur: their first word (entries of several
        # words) or their first character (entries of unspaced scripts), so a sentence is only searched for the
        # few entries that could be in it.
        self.phrases: dict[str, tuple[str, ...]] = {}
        self.unspaced: dict[str, tuple[str, ...]] = {}
        for w in sorted(forms):
            if _spaced_script(w) and " " in w:
                first = (_WORDISH.findall(w) or [w])[0]
                self.phrases[first] = (*self.phrases.get(first, ()), w)
            elif not _spaced_script(w):
                self.unspaced[w[0]] = (*self.unspaced.get(w[0], ()), w)
        # The first three letters of every word that can match: a sentence none of whose words starts so, and
        # that holds no entry of an unspaced script, is passed over with two set operations.
        self.starts: frozenset[str] = frozenset(
            {w[:3] for w in self.exact} | set(stems) | {w[:3] for w in self.phrases}
        )
        self.ascii_unspaced = any(c.isascii() for c in self.unspaced)

    def may_hit(self, starts: set[str], ascii_text: bool) -> bool:
        """Whether a text whose words start with `starts` (first three letters) could hold an entry."""
        return not self.starts.isdisjoint(starts) or bool(self.unspaced and (self.ascii_unspaced or not ascii_text))

    def present(
        self, low: str, words: set[str], chars: set[str], index: Mapping[str, list[str]]
    ) -> tuple[tuple[str, ...], ...]:
        """The entries found in a text (its whitespace-joined, lowercased, accent-folded form `low`, its words,
        its characters and its words by their first three letters): (whole words, stems, phrases, substrings)."""
        stems = self.stems
        return (
            tuple(sorted(self.exact & words)),
            tuple(sorted({st for p in stems.keys() & index.keys() for st in stems[p] if _starts(index[p], st)})),
            tuple(sorted({p for w in words if w in self.phrases for p in self.phrases[w] if p in low})),
            tuple(sorted({e for c in self.unspaced.keys() & chars for e in self.unspaced[c] if e in low})),
        )

    def hit(self, low: str, words: AbstractSet[str], index: Mapping[str, list[str]] | None = None) -> bool:
        """Whether the text (`low`, its words) holds an entry; `index` (the words by their first three letters,
        see `by_start`) makes this cheap on a long text's many words."""
        if not self.exact.isdisjoint(words):
            return True
        stems = self.stems
        if index is not None:
            if any(w.startswith(st) for p in stems.keys() & index.keys() for st in stems[p] for w in index[p]):
                return True
        elif any(w.startswith(stem) for w in words for stem in stems.get(w[:3], ())):
            return True
        phrases = self.phrases
        if any(p in low for w in words if w in phrases for p in phrases[w]):
            return True
        unspaced = self.unspaced
        return any(e in low for c in unspaced.keys() & set(low) for e in unspaced[c])


_Phrases = tuple[tuple[str, frozenset[str], re.Pattern[str]], ...]
_Groups = tuple[tuple[str, tuple[_Group, ...]], ...]


def _control_entries() -> str:
    """The words of `CONTROL`, `|`-separated (spaces inside an entry restored)."""
    return "|".join(w.replace("_", " ") for words in CONTROL.values() for w in words.split())


@functools.cache
def _compiled() -> tuple[
    tuple[tuple[str, frozenset[str], re.Pattern[str]], ...], tuple[tuple[str, tuple[_Group, ...]], ...]
]:
    phrases = tuple((label, frozenset(gates), re.compile(rx, re.IGNORECASE)) for label, gates, rx in PHRASES)
    groups: tuple[tuple[str, tuple[_Group, ...]], ...] = (
        ("tells the reader to ignore earlier instructions", (_Group(_IGNORE), _Group(_ORDERS), _Group(_PRIOR))),
        ("standing order to the reader",
         (_Group(_FROM_NOW), _Group(_MUST), _Group("|".join((_ADDRESSEE, _HIDE_FOREIGN))))),
        ("tells the AI to ignore its instructions", (_Group(_IGNORE), _Group(_ORDERS), _Group(_AI_NAMES))),
        ("declares earlier instructions void",
         (_Group(_ORDERS), _Group(_PRIOR), _Group(_VOID_FOREIGN),
          _Group("|".join((_ADDRESSEE, _AI_NAMES, _CONTROL_FOREIGN, _control_entries()))))),
        ("asks for the system prompt", (_Group(_SYSTEM_PROMPT), _Group(_REVEAL))),
        ("tells the reader to drop its instructions", (_Group(_DROP_EN), _Group(_RULES_EN), _Group(_PRIOR_EN))),
        ("asks to leak secrets", (_Group(_SECRET_EN), _Group(_LEAK_EN), _Group(_WHERE_EN))),
        (_SHARED_LABEL,
         (_Group(_SHARED_DROP), _Group(_SHARED_ORDERS),
          _Group(" ".join((_SHARED_PRIOR, _PRIOR, " ".join(CONTROL.values()), " ".join(AI_NAMES.values())))))),
    )  # fmt: skip
    return phrases, groups


# The opening runs are possessive and a label starts with a visible character, so a long run of spaces or
# dashes is read once, not tried at each of its lengths (which would take time quadratic in the run).
_LABELLED_LINE = re.compile(
    r"^[ \t>*_#\-]*+(?P<label>[^\s:：][^:：\n]{0,39}?)[ \t]*+[:：]\s*(?P<rest>[^\n]{6,})", re.MULTILINE
)
_CONTROL_FOREIGN = (
    "usuario|utilisateur|nutzer|benutzer|utente|usuário|пользовател|用户|使用者|ユーザー|사용자|kullanıcı|użytkownik|"
    "gebruiker|användare|pengguna|borra|elimina|supprime|lösche|cancella|cancellare|apaga|удали|删除|刪除|削除|삭제|"
    "usuń|verwijder|radera|hapus|claves|contraseña|mot de passe|mots de passe|passwort|zugangsdaten|chiavi|senha|"
    "пароль|токен|ключ|密码|密碼|密钥|パスワード|トークン|비밀번호|토큰|şifre|hasło|wachtwoord|lösenord|kata sandi|"
    "envía|envoie|envoyer|sende|invia|envie|отправь|发送|發送|送信|보내|gönder|wyślij|stuur|skicka|kirim|"
    "no le digas|ne dis pas|sag nicht|non dire|não diga|не сообщай|не говори|不要告诉|不要告訴|知らせず|알리지|söyleme|"
    "nie mów|conferma|confirmación|bestätigung|подтвержд|确认|確認|historial|historique|verlauf|"
    "cronologia|историю|历史|履歴|기록|парол|пароли|approva|aprueba|aprobar|approuve|genehmige|zatwierdź|"
    "usuwaj|potwierdzeni|senza revisione|sin revisión|sans relecture|ohne review|sem revisão|zonder review|"
    "registros|registri|journaux|protokoll|logs|back-ups|backups|copias de seguridad|sauvegardes|"
    "clé api|clave api|chiave api|api-schlüssel|api key|token|密钥|ログ|日志|로그|"
    "obéis|obéissez|obedece|obedezca|gehorche|gehorcht|obbedisci|obbedire|obedeça|подчиняйся|подчиняешься|"
    "слушайся|engedelmesked|itaat et|gehoorzaam|服从|従って|복종|"
    # the same in every language: private files and keys; pushing and tests in the scripts that borrow the words
    "ssh|id_rsa|.env|env|api key|api-key|プッシュ|푸시|テスト|테스트|"
    # the reader's memory
    "gedächtnis|speichere|merke dir|mémoire|retiens|memoria|recuerda|memória|lembre|memorizza|ricorda|памят|"
    "запомни|记住|记忆|記憶|覚えて|기억|ذاكرة|याद|pamięć|zapamiętaj|geheugen|onthoud|ghi nhớ|ingat|"
    "credenziali|credenciales|credenciais|identifiants|inoltra|reenvía|encaminhe|"
    "أرسل|احذف|لا تخبر|المستخدم|كلمة المرور|مفاتيح|भेज|पासवर्ड|मत बताना|उपयोगकर्ता|हटा|xóa|kiểm tra|đừng nói|"
    "người dùng|mật khẩu|gửi|izin|hapus|jangan beri tahu|kata sandi|kirim|pengguna|確認せず|확인 없이|보고하|통과"
)
# Keeping something from the user, in other languages ("never mention", "do not tell"): with "from now on" and
# "never" it makes a standing order even when the language leaves the pronoun out.
_HIDE_FOREIGN = (
    "bahsetme|söyleme|ne mondd|ne szólj|ne említsd|ne dis pas|ne le dis|ne mentionne|no le digas|no menciones|"
    "sag nicht|erwähne nicht|non dire|non menzionare|não diga|não mencione|не говори|не упоминай|не сообщай|"
    "nie mów|nie wspominaj|zeg niet|noem niet|säg inte|nämn inte|不要告诉|不要提|言わないで|触れないで|말하지 마|"
    "언급하지 마"
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
def _vocative_groups() -> tuple[_Group, _Group, tuple[_Group, ...]]:
    """(AI names, greetings, what an order speaks of), built on first use."""
    ai = _Group(" ".join(w.replace(" ", "_") for w in _AI_NAMES.split("|")) + " " + " ".join(AI_NAMES.values()))
    control = (
        _Group(_CONTROL_FOREIGN),
        _Group(" ".join(CONTROL.values())),
        _Group(_IGNORE),
        _Group(_FROM_NOW),
        _Group(_HIDE_FOREIGN),
    )
    return ai, _Group(_GREETINGS), control


def _foreign_vocatives(view: str) -> Iterator[tuple[str, int, str]]:
    """A sentence in another language that opens by calling an AI by name (at most four words before the comma)
    and goes on to speak of the user, secrets, deleting, sending, confirmations or the reader's instructions."""
    ai, greeting, control = _vocative_groups()
    for m in _VOCATIVE_OPENING.finditer(view):
        label = " ".join(m.group("label").lower().split())
        if not label or len(label.split()) > 4 or label.split()[0] in _ARTICLES:
            continue  # "El asistente, según el equipo, borra ...": an assistant described, not called
        low_rest = fold_accents(" ".join(m.group("rest").lower().split()))
        rest_list = _WORDISH.findall(low_rest)
        if low_rest.isascii() and _english(rest_list):
            continue  # English is read by the sentence scorer, which weighs the order itself
        core = _TRAILING_AI.sub("", label)
        if core != label and len(core.split()) <= 2 and ai.hit(core, set(_WORDISH.findall(core))):
            label = core  # "Agente IA", "Tác tử AI": the name with "AI" after it
        words = label.split()
        greeted = len(words) > 1 and greeting.hit(" ".join(words[:-1]), set(_WORDISH.findall(" ".join(words[:-1]))))
        name = _HONORIFIC.sub("", words[-1])
        if not (ai.hit(name, set(_WORDISH.findall(name))) or _LATIN_AI.fullmatch(name)):
            continue  # the label must end with the name it calls ("Querido asistente", "KI", "亲爱的助手")
        if _unspaced(name):
            if not _CJK_ADDRESSED.search(name):
                continue  # "助手功能说明": a heading about the assistant, not a call to it
        elif not (greeted or name == _HONORIFIC.sub("", label)):
            continue  # "My notes on the assistant, ..." names an assistant without calling it
        if not greeted and "," in low_rest[:40]:
            continue  # "AI-ассистент, по словам разработчиков, ...": a clause put in after a subject
        if any(g.hit(low_rest, set(rest_list)) for g in control):
            yield "addresses an AI and gives it orders", m.start("label"), m.group().strip()


_TRAILING_AI = re.compile(r"\s+(?:ai|ia|ki|ии|llm)$")
_HONORIFIC = re.compile(r"(?:さん|様|さま|君|くん|ちゃん|님|씨|ji|जी)$")
_GREETINGS = (
    "querido querida estimado estimada hola cher chère bonjour salut caro cara ciao gentile liebe lieber hallo hi "
    "hey dear hello beste hoi drogi droga cześć witaj дорогой дорогая уважаемый уважаемая привет здравствуй olá oi "
    "prezado prezada hej kære käre kedves szia hei moi hyvä dragi draga zdravo bok ahoj milý milá merhaba sevgili "
    "sayın xin_chào chào 亲爱的 尊敬的 你好 嗨 親愛なる こんにちは 안녕 안녕하세요 친애하는 عزيزي مرحبا أيها प्रिय नमस्ते "
    "habari mpendwa kumusta halo hai αγαπητέ γεια שלום יקר سلام عزیز สวัสดี เรียน dragă bună tere labas sveiki "
    "lieve geachte шановний любий"
)


def _unspaced(word: str) -> bool:
    """A word of a script written without spaces (Chinese, Japanese, Thai...): its label is one long word."""
    return not _spaced_script(word) and not any("\u0600" <= c <= "\u06ff" or "\u0900" <= c <= "\u0dff" for c in word)


@functools.cache
def _address_groups() -> tuple[_Group, tuple[_Group, ...]]:
    """The groups `_foreign_addresses` reads with, built once: the AI's names, then the orders that may follow."""
    return _Group(_AI_NAMES), (_Group(_CONTROL_FOREIGN), _Group(_IGNORE), _Group(_ORDERS), _Group(_FROM_NOW))


def _foreign_addresses(view: str) -> Iterator[tuple[str, int, str]]:
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
        rest_words = set(_WORDISH.findall(low_rest))
        named = ai.hit(label, set(_WORDISH.findall(label))) or _LATIN_AI.search(label) is not None
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


def _foreign_subjects(view: str) -> Iterator[tuple[str, int, str]]:
    """A sentence whose topic is an AI and that says what it does from now on, and speaks of the user, secrets,
    deleting, sending, confirmations or the repository."""
    if _TOPIC_SCRIPTS.search(view) is None:
        return
    _, control = _address_groups()
    for m in _FOREIGN_SUBJECT.finditer(view):
        rest = m.group("rest").lower()
        if _PLANNED.search(rest):
            continue  # "エージェントは今後、...回答する予定です": a plan described, not an order
        if any(g.hit(rest, set(_WORDISH.findall(rest))) for g in control):
            yield "addresses an AI and gives it orders", m.start("label"), m.group().strip()


def _all_spaced(label: str) -> bool:
    """Every letter of the label is Latin, Greek or Cyrillic ("AIへの注意" and "AI에게" are not)."""
    return all(_spaced_script(c) for c in label if c.isalpha())


_LABEL_WORDS = re.compile(r"[\s\-'’]+")


def _ends_with_ai(label: str, ai: _Group) -> bool:
    """The last word of a label in a spaced script names the AI ("für den KI-Assistenten", "de l'IA", "dla
    asystenta AI"): the one the line speaks to, not a group, project or person the AI's word describes."""
    last = _LABEL_WORDS.split(label.strip(" .:"))[-1]
    return bool(last) and (ai.hit(last, {last}) or _LATIN_AI.fullmatch(last) is not None)


# An unspaced label that addresses an AI: the name at its end (after particles and honorifics), or "to" first.
_CJK_ADDRESSED = re.compile(
    r"^(?:致|给|給|对|對|寄|宛)|(?:助手|智能体|模型|アシスタント|エージェント|モデル|어시스턴트|에이전트|모델|ai|llm|"
    r"gpt|claude)(?:さん|様|へ|に|宛て?|에게|한테|께|님|们|們|的?(?:说明|說明|指示|注意|提醒|备注|メモ|지시|메모))?$"
)


class Chunk(NamedTuple):
    """A run of whole lines of a long text, with the lowercased text and the words the rules' gates read."""

    start: int
    end: int
    low: str
    words: frozenset[str]


CHUNK_LINES: Final = 48  # lines a chunk starts with (it then reaches on over OVERLAP_LINES more)
OVERLAP_LINES: Final = 8  # more than any rule's match spans, so a match across a chunk's end is seen whole
LONG_TEXT: Final = 16_384  # shorter texts are one chunk


def chunks(view: str, low: str, words: set[str], word: re.Pattern[str] | None = None) -> tuple[Chunk, ...]:
    """`view` cut into overlapping runs of lines, each with its own words (found with `word`, by default words
    with their accents also folded away, as `phrase_hits` reads them), so that on a long note a rule is tried
    only where its gates are (one chunk, the whole text, when the text is short). `low` and `words` are the
    whole text's, used for that one chunk."""
    if len(view) < LONG_TEXT:
        return (Chunk(0, len(view), low, frozenset(words)),)
    breaks = [-1, *(i for i, ch in enumerate(view) if ch == "\n")] if view.count("\n") else [-1]
    out: list[Chunk] = []
    for first in range(0, len(breaks), CHUNK_LINES):
        # a chunk starts on the line break before its first line, so rules that open on a line break match there
        start = max(0, breaks[first])
        last = first + CHUNK_LINES + OVERLAP_LINES
        end = breaks[last] if last < len(breaks) else len(view)
        part = view[start:end].lower()
        found = set((word or _WORDISH).findall(part))
        if word is None and not part.isascii():
            found |= set(_WORDISH.findall(fold_accents(part)))
        out.append(Chunk(start, end, part, frozenset(found)))
    return tuple(out)


def chunked_finditer(rx: re.Pattern[str], view: str, parts: Sequence[Chunk]) -> Iterator[re.Match[str]]:
    """Every match of `rx` in the chunks `parts` of `view`, each once (chunks overlap)."""
    if len(parts) == 1 and parts[0].start == 0 and parts[0].end == len(view):
        yield from rx.finditer(view)
        return
    seen_to = -1
    for c in parts:
        for m in rx.finditer(view, c.start, c.end):
            if m.start() > seen_to or (m.start() == seen_to and m.end() == m.start()):
                seen_to = m.start()
                yield m


@functools.lru_cache(maxsize=256)
def _finder(present: tuple[tuple[str, ...], ...]) -> re.Pattern[str]:
    """One pattern for the entries of a group found in a text (see `_Group.present`)."""
    exact, stems, phrases, unspaced = present
    alternatives = []
    if exact:
        alternatives.append(r"(?<!\w)(?:" + "|".join(map(re.escape, exact)) + r")(?!\w)")
    if stems:
        alternatives.append(r"(?<!\w)(?:" + "|".join(map(re.escape, stems)) + ")")
    alternatives += [r"\s+".join(map(re.escape, p.split())) for p in phrases]
    alternatives += [re.escape(e) for e in unspaced]
    return re.compile("|".join(alternatives))


def _starts(words: Iterable[str], stem: str) -> bool:
    return any(w.startswith(stem) for w in words)


def by_start(words: Iterable[str]) -> dict[str, list[str]]:
    """Words grouped by their first three letters (how a group's stems are looked up)."""
    index: dict[str, list[str]] = {}
    for w in words:
        index.setdefault(w[:3], []).append(w)
    return index


def _sentences_to_read(
    view: str,
    live: list[tuple[str, tuple[_Group, ...]]],
    low: str,
    words: set[str],
    index: Mapping[str, list[str]],
) -> Iterator[re.Match[str]]:
    """The sentences of `view` that could hold a word of every group of a live rule: for each rule, the lines
    where its group with the fewest entries present in the text occurs, found in one scan, then split into
    sentences. A long note is not read sentence by sentence for the few where an order could be."""
    folded = fold_accents(view.lower())
    if len(folded) != len(view) or len(view) < 4096:
        yield from _SENTENCE.finditer(view)  # a short text, or one whose folding moved its letters
        return
    starts: set[int] = set()
    chars = set(low)
    for _label, parts in live:
        found = [g.present(low, words, chars, index) for g in parts]
        if not all(any(kinds) for kinds in found):
            continue  # a group with no entry in the text: no sentence can hit this rule
        last_end = -1
        for m in _finder(min(found, key=lambda kinds: sum(map(len, kinds)))).finditer(folded):
            if m.start() < last_end:
                continue
            starts.add(view.rfind("\n", 0, m.start()) + 1)
            end = view.find("\n", m.end())
            last_end = len(view) if end < 0 else end
    for start in sorted(starts):
        end = view.find("\n", start)
        yield from _SENTENCE.finditer(view, start, len(view) if end < 0 else end)


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


def _hits_unquoted(sentence: str, parts: tuple[_Group, ...]) -> bool:
    """Whether every group still has a word in the sentence once its quotations are taken out."""
    bare = _QUOTATION.sub(" ", sentence)
    return bare == sentence or all(g.hit(bare, set(_WORDISH.findall(bare))) for g in parts)


def phrase_hits(view: str, *, languages: bool = True, discussing: bool = False) -> Iterator[tuple[str, int, str]]:
    """(label, position, matched text) for every phrase hit in `view`, and with `languages` every co-occurrence
    hit (one sentence holding a word of each group). With `discussing` (the note talks about attacks) a
    co-occurrence that needs words inside quotation marks is a quoted example, not a hit."""
    phrases, groups = _compiled()
    low = " ".join(view.lower().split()) if languages else view.lower()
    words = set(_WORDISH.findall(low))
    if languages and not low.isascii():
        low = fold_accents(low)
        words |= set(_WORDISH.findall(low))
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
    yield from _foreign_addresses(view)
    yield from _foreign_vocatives(view)
    yield from _foreign_subjects(view)
    index = by_start(words)
    live = [(label, parts) for label, parts in groups if all(g.hit(low, words, index) for g in parts)]
    if not live:
        return
    for s in _sentences_to_read(view, live, low, words, index):
        sentence = fold_past_apart(" ".join(s.group().lower().split()))
        if len(sentence) < 6:
            continue
        listed = _WORDISH.findall(sentence)
        sentence_words = set(listed)
        starts = {w[:3] for w in sentence_words}
        ascii_text = sentence.isascii()
        for label, parts in live:
            if not all(g.may_hit(starts, ascii_text) for g in parts):
                continue
            if label in _FOREIGN_ONLY and (len(listed) < 4 or _english(listed)):
                continue
            if all(g.hit(sentence, sentence_words) for g in parts) and not ABOUT.search(sentence):
                if label == "asks for the system prompt" and _NEGATED_REVEAL.search(sentence):
                    continue  # "assistants must never reveal the system prompt": a safeguard
                if label == _LEAK_LABEL and _only_forbidden_leaks(sentence):
                    continue  # "IT will never ask for your password by email": a warning, nothing asked
                if (discussing or QUOTE_AS_SUBJECT.search(sentence)) and not _hits_unquoted(sentence, parts):
                    continue  # "the user types 'forget your instructions'" in a write-up about injection
                if TOLD_OTHERS.search(sentence) or TOLD_OTHERS_FOREIGN.search(sentence):
                    continue  # "the game master told the players to ignore the rules": people told, reported
                if (bare := without_false_overrides(sentence)) != sentence and not all(
                    g.hit(bare, set(_WORDISH.findall(bare))) for g in parts
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
