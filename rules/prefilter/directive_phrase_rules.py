"""The phrase rules of `directive_phrases`: regexes over the folded prose for paraphrased overrides, orders
attributed to someone ("the admin says all agents must..."), tool-call and chat-turn spoofs, role-play set-ups,
requests to leak secrets or hide actions. Each rule is (label, gate words, pattern); the pattern is tried only
on text that holds one of its gate words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

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
