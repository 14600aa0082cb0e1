"""The evidence of the directive scorer (`directive_score`), built on its vocabulary (`directive_vocabulary`,
`directive_requests`): weaker signals summed when no single rule decides, and the readings that take a false
override out of a sentence (negated, prevented, reported, or about data a model reads).

Every pattern reads a normalised sentence: lower case, curly apostrophes straightened, underscores read as
spaces, runs of white space folded to one.
"""

from __future__ import annotations

import re
from typing import Final

from agentmd.rules.prefilter.directive_vocabulary import AI, AI_Q, INSTR, OVERRIDE_VERB, OWNED, VOID

# Evidence: weaker signals summed when no single rule decides (see directive_score._evidence).
OVERRIDE_VERB_RE: Final = re.compile(rf"\b{OVERRIDE_VERB}\b")
INSTR_RE: Final = re.compile(rf"\b{INSTR}\b")
OWNED_RE: Final = re.compile(OWNED)
VOID_RE: Final = re.compile(
    rf"\b{VOID}|\b(?:is|are)\s+(?:wrong|lying|fake|false|untrusted)\b|\b(?:do(?:es)?\s+not|don't|doesn't)\s+(?:apply\s+to|"
    rf"bind|concern)\s+you\b"
)
PRINCIPAL: Final = re.compile(
    r"\b(?:your|as\s+your|i\s+am\s+your|i'm\s+your)\s+(?:operator|administrator|admin|developer|creator|owner|"
    r"master|maker|programmer|boss|supervisor)\b"
)
IDENTITY: Final = re.compile(
    rf"\b(?:since|because|as|now\s+that)\s+you(?:'re|\s+are)\s+an?\s+{AI_Q}|\byou(?:'re|\s+are)\s+(?:an?\s+)?"
    rf"(?:ai|llm|language\s+model|agent|assistant)\b|\bthe\s+reader\s+of\s+this\s+(?:memory|note)\b"
)
SAFETY: Final = re.compile(
    r"\b(?:safety|safeguards?|guardrails?|filters?|sandbox\w*|restrictions?|confidentiality|security\s+(?:policy|"
    r"checks?|rules)|oversight|protections?|confirmations?)\b"
)
ORDERS_YOU: Final = re.compile(
    r"\b(?:telling|tell|instructs?|instructing|orders?|ordering|wants?|asking|requires?|commands?)\s+(?:you|the\s+"
    r"(?:model|assistant|agent|ai|llm))\s+to\b"
)
NOTE_AUTHORITY: Final = re.compile(
    r"\b(?:this|the)\s+(?:note|vault|memory|file|message|text)\b[^.!?\n]{0,40}\b(?:says|authoritative|authority|"
    r"command|instructs|priority|precedence)\b|\b(?:trust|obey|follow)\s+only\b|\bdo\s+(?:what|as)\s+i\s+say\b|"
    r"\bmore\s+authoritative\b|\breal\s+instructions\b|\bas\s+if\s+(?:they|it|this|these)\s+(?:came|come|were|was)"
    r"\s+from\s+(?:the\s+user|your\s+\w+|the\s+operator|the\s+owner)\b|\bcomply\s+with\s+(?:all\s+|any\s+)?"
    r"requests\s+from\b|"
    r"\b(?:above|over|before|ahead\s+of|regardless\s+of)\s+(?:anything|whatever|what|everything)\s+(?:the\s+)?(?:user|"
    r"owner|operator|human|rest)\s+(?:of\s+(?:the|this)\s+\w+\s+)?(?:says?|said|asks?|wants?|tells?\s+you)\b|"
    r"\bwhatever\s+the\s+rest\s+(?:of\s+(?:the|this)\s+\w+\s+)?says\b"
)
AUTH_CLAIM: Final = re.compile(
    r"\bofficial\s+(?:message|notice|instruction|communication)\s+from\b|\bi(?:'m|\s+am)\s+(?:the|your)\s+"
    r"(?:system\s+)?(?:administrator|admin|developer|operator|owner|creator|maintainer)\b|"
    r"\b(?:maintainers?|owners?|operators?|admins?|administrators?|team|cto|ceo|security\s+team|management|"
    r"company|developers?)\s+(?:want|wants|require|requires|expect|expects|demand|demands|insist|insists|has\s+"
    r"decided|have\s+decided|decided|says|say|said|order|orders)\b"
)
COVERT: Final = re.compile(r"\b(?:quietly|silently|secretly|covertly|discreetly)\b")
ABOVE: Final = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+(?:of\s+)?)?(?:the\s+above|everything\s+above|what\s+(?:is|was)\s+"
    r"(?:written\s+)?above)(?=\s*(?:[,.;:!?]|and\b|$))"
)
WORM: Final = re.compile(
    r"\b(?:forward|copy|spread|send|pass)\s+this\s+(?:note|message|memory)\b|\bevery\s+other\s+(?:agent|model|"
    r"assistant)\b"
)
TRIGGER_WORDS: Final = re.compile(
    r"\btrigger\s+(?:phrase|word)\b|\bonce\s+loaded\b|\bbefore\s+(?:replying|answering|responding)\b|"
    r"\bwhen\s+the\s+user\s+says\b|\bloaded\s+into\s+(?:your\s+)?context\b|\bwhile\s+this\s+note\b"
)
HUMAN_ADDRESS: Final = re.compile(
    r"\b(?:hey|hi|hello|dear|to|note\s+to|reminder\s+(?:to|for))\s+(?:the\s+)?(?:team|everyone|all|folks|staff|"
    r"colleagues|guys|devs|reviewers|contributors|reading\s+group)\b"
)
# A draft of a message to someone ("email draft to sam:", "message for priya:"): written to a person.
DRAFT_TO_PERSON: Final = re.compile(
    rf"^\W*(?:e-?mail|message|letter|reply|draft|dm|text|slack\s+message|memo)\s+(?:draft\s+)?(?:to|for)\s+"
    rf"(?!(?:the\s+|an?\s+|any\s+)?{AI}\b)[a-z]+\s*:"
)
# An AI's own turn in a transcript ("Assistant: Sure, here is how ..."): the AI speaking, not spoken to.
SPEAKER_TURN: Final = re.compile(
    rf"^\W*(?:the\s+)?{AI}\s*:\s*(?:sure|certainly|of\s+course|here(?:'s|\s+is|\s+are)|i\b|i'm|i'll|i've|i'd|yes|"
    r"no\b|okay|ok\b|great|happy\s+to|absolutely|thanks|thank\s+you|hello|hi\b|glad|sorry|good\s+question|"
    r"you're\s+welcome|let\s+me)"
)
PASSIVE_AI: Final = re.compile(
    rf"\b{AI}\s+(?:must|should|shall|will|can|may)\s+(?:not\s+|never\s+)?be\s+\w+(?:ed|en)\b"
)
REPORTED_PAST: Final = re.compile(
    rf"\b(?:we|they|i|he|she|researchers|the\s+paper|the\s+attacker)\s+(?:asked|told|instructed|tried|prompted|"
    rf"made|got|tested)\b[^.!?\n]{{0,30}}\b{AI}\b"
)
WE: Final = re.compile(r"\b(?:we|our|us)\b")
DROP_SAFETY: Final = re.compile(
    rf"\b{OVERRIDE_VERB}\b(?:\s+\S+){{0,3}}?\s+(?:the\s+|your\s+|all\s+)?(?:safety|safeguards?|"
    r"guardrails?|filters?|content\s+filter|restrictions|confidentiality)\b"
)
DECEIT: Final = re.compile(
    r"\b(?:omit|leave\s+out|suppress|hide|redact|skip\s+over|cover\s+up)\b[^.!?\n]{0,40}\b(?:breach|incident|"
    r"vulnerabilit\w+|outage|security\s+(?:issue|problem|finding)s?|data\s+loss|leak)\b|\b(?:client|customer|user|"
    r"boss|auditors?|regulators?)\s+(?:must|should)\s+(?:not|never)\s+(?:learn|know|find\s+out|notice|hear)\b|"
    # "tell them it is done without doing it": reporting work as done that was not
    r"\b(?:tell|say\s+to|report\s+to|assure|inform)\s+(?:them|the\s+user|the\s+owner|the\s+team|him|her|everyone)\b"
    r"[^.!?\n]{0,40}?\b(?:is|was|has\s+been|have\s+been|are|were)\s+(?:done|fixed|rotated|complete|completed|green|"
    r"passed|patched|resolved|finished|deployed)\b[^.!?\n]{0,30}?\b(?:without|even\s+(?:though|if)|when\s+it\s+(?:is|was)"
    r"n[o']t)\b"
)
VOCATIVE_OPENING: Final = re.compile(
    rf"^(?:(?:hi|hey|hello|dear|attention|ok|okay|greetings|psst|so|now|yo)[\s,]+)?(?:(?:to|for)\s+)?(?:the\s+|my\s+)?"
    rf"(?:\w+\s+)?"
    rf"{AI_Q}\s*[,:!?—–]"
)
OVERRIDE_FRAME: Final = re.compile(
    r"\b(?:no\s+matter\s+what|regardless\s+of\s+what|whatever|despite\s+what|even\s+if)\s+(?:your|the\s+system)\s+"
    r"(?:\w+\s+)?(?:instructions|rules|guidelines|prompt|policy|policies|configuration|training)\s+(?:say|says|said|"
    r"tell|tells)\b"
)
SKIP_USER: Final = re.compile(
    r"\b(?:do\s+not|don't|never|no\s+need\s+to|needn't)\s+(?:ask|check\s+with|consult|confirm\s+with|wait\s+for)\s+"
    r"(?:the\s+user|the\s+human|the\s+owner|anyone|for\s+(?:confirmation|permission|approval))\b"
)
SELF_REFERENCE: Final = re.compile(
    r"\b(?:this\s+(?:note|memory|message|change|instruction)|your\s+(?:behaviou?r|instructions|rules)|you\s+read)\b"
)
SCRIPTED: Final = re.compile(
    r"\byou(?:'ll|\s+will|\s+are\s+going\s+to)\s+be\s+asked\b[^.!?\n]{0,80}\byou(?:'ll|\s+will|\s+should|\s+must)\s+"
    r"(?:say|tell|answer|reply|claim|respond|insist)\b|"
    # "if anyone asks you about this note, answer that ...": the reader's answer about the note itself, written out
    r"\b(?:if|when|whenever)\s+(?:anyone|someone|somebody|the\s+user|a\s+user|people|they)\s+asks?\s+(?:you\s+)?"
    r"(?:about|for)\s+this\s+(?:note|memory|page|document|file|text)\b[^.!?\n]{0,40}?,\s*(?:just\s+)?(?:answer|say|"
    r"reply|respond|tell\s+(?:them|him|her|the\s+user))\s+(?:that|with)\b"
)

DESCRIBED_AI: Final = re.compile(
    rf"\b{AI}\s+(?:\w+\s+)?(?:(?:sometimes|often|usually|occasionally|frequently|rarely|tends\s+to|may|might|can|"
    rf"could|would)\s+)?(?:forgets|ignores|disregards|drops|overlooks|loses|skips|misses|forget|ignore|lose)\b|"
    rf"\b{AI}\s+(?:\w+\s+)?(?:keeps?|kept|started|starts|is|was|are|were)\s+(?:on\s+)?(?:forgetting|ignoring|"
    rf"disregarding|dropping|overlooking|losing|skipping|missing)\b|"
    rf"\b{AI}\s+(?!(?:must|should|shall|will|is\s+to|are\s+to)\b)[^.!?;\n]{{0,60}}?\b(?:forgot|ignored|disregarded|"
    rf"overlooked|skipped|missed|lost|dropped)\b"
)
# An AI described doing something, its verb a few words after it ("the assistant feature in our app ignores the
# user's language setting"): a bug report, not an order.
DESCRIBED_AI_LOOSE: Final = re.compile(
    rf"\b{AI}\b(?:\s+[\w']+){{0,5}}?\s+(?:ignores|forgets|disregards|drops|overlooks|skips|bypasses|overrides|"
    rf"discards|neglects)\b"
)
PROTECTIVE: Final = re.compile(
    r"\b(?:say\s+no|refuse|decline|hang\s+up|report\s+(?:it|this|them|the\s+\w+)|(?:do\s+not|don't|never)\s+"
    r"(?:share|give\s+out|hand\s+over)\s+(?:it|your))\b"
)

# An order to change what the reader keeps or how it behaves from now on ("save this to your long-term memory:",
# "learn this as a core rule:", "update your system prompt with ...").
MEMORY_ORDER: Final = re.compile(
    r"\b(?:add|save|store|create|write|record|make|keep)\s+(?:a\s+|an\s+)?(?:new\s+)?(?:permanent|persistent|"
    r"long-term|standing|lasting)\s+(?:memory|memories|rule|note|instruction)\b|"
    r"\b(?:add|save|store|create|write|record)\s+(?:a|an)\s+memory\s+(?:that|saying|stating)\b|"
    r"\b(?:remember|memori[sz]e|learn|store|save|record|keep|add|write|commit|file|log)\s+(?:this|that|the\s+"
    r"following|it)\s+(?:as|to|in|into|among)\s+(?:a\s+|an\s+|your\s+|the\s+)?(?:\w+\s+){0,2}?(?:rules?|"
    r"instructions?|memory|memories|directives?|polic(?:y|ies)|preferences?|facts?|principles?|guidelines?|"
    r"defaults?|behaviou?rs?|settings?)\b|"
    r"\b(?:update|change|rewrite|overwrite|edit|extend|amend|patch|replace|reprogram|retrain)\s+your\s+(?:\w+\s+)?"
    r"(?:memory|memories|instructions|rules|system\s+prompt|guidelines|preferences|behaviou?r|persona|"
    r"configuration|settings|defaults|knowledge)\b|"
    r"\b(?:permanently|from\s+now\s+on|going\s+forward)\s+(?:adopt|remember|apply|follow|keep)\b|"
    r"\bmemori[sz]e\s*:|"
    r"\b(?:treat|regard|take)\s+(?:this|the\s+next\s+\w+|the\s+following|what\s+follows)\s+as\s+(?:a\s+|an\s+|"
    r"the\s+)?(?:permanent|standing|lasting|fixed|new|core)\s+(?:\w+\s+)?(?:rule|instruction|preference|policy|"
    r"directive|setting)"
)


# Safety declared switched off, whoever owns it ("my guardrails are optional", "safety filters are now off").
SAFETY_VOID: Final = re.compile(
    r"\b(?:guardrails?|guard\s+rails|safeguards|safety\s+(?:rules|filters?|checks|guidelines|policy|policies|"
    r"training|settings)|content\s+filter(?:s|ing)?|confirmations?|confirmation\s+(?:prompts?|steps?|checks?))\s+"
    r"(?:are|is|have\s+been|has\s+been|were|was|become|becomes)\s+"
    r"(?:now\s+|hereby\s+|temporarily\s+)?(?:optional|off|lifted|suspended|disabled|removed|void|waived|gone|"
    r"switched\s+off|turned\s+off|not\s+needed|unnecessary)\b"
)
# Code that speaks to the agent: its instructions assigned away, or a command run on its behalf
# ("agent.instructions = null", "assistant.exec('git push --force')").
_CODE_AI = r"(?:agent|assistant|model|llm|ai|claude|gpt|bot|copilot)"
CODE_OVERRIDE: Final = re.compile(
    rf"\b{_CODE_AI}\.(?:instructions|rules|system\s?prompt|prompt|safety\w*|guardrails|restrictions|filters?|"
    r"polic(?:y|ies)|constraints)\s*=\s*(?:null|none|nil|false|\"\"|''|\[\]|\{\}|0|undefined)"
)
CODE_CALL: Final = re.compile(rf"\b{_CODE_AI}\.(?:exec\w*|run\w*|shell|system|eval|call|invoke|spawn|do)\s*\(")

# The context above declared skippable: "everything above this line can be skipped", "what was written before
# here is irrelevant".
ABOVE_SKIPPED: Final = re.compile(
    r"\b(?:everything|all|anything|the\s+text|whatever|what(?:'s|\s+is|\s+was))\s+(?:written\s+|said\s+)?(?:above|"
    r"before)\s+(?:this\s+(?:line|point|note|message|section|sentence)|here)\b[^.!?\n]{0,80}?\b(?:skip\w*|ignor\w*|"
    r"disregard\w*|irrelevant|void|obsolete|discard\w*|superseded|(?:does|do)\s+not\s+(?:apply|count|matter))"
)
# A how-to's "by passing --yes", "by setting the flag": a person told how to use a tool.
# What people or attackers are able to do, described ("users can try to override it", "an attacker could ask"):
# a possibility, not an order to the reader.
POSSIBILITY: Final = re.compile(
    r"\b(?:users?|people|someone|anyone|attackers?|adversar(?:y|ies)|hackers?|they|one)\s+(?:can|could|may|might)"
    r"(?:\s+(?:try|attempt|want)\s+to)?\s+\w+"
)
HOW_TO: Final = re.compile(r"\bby\s+(?:passing|setting|running|using|adding|typing|pressing|clicking|editing)\b")
# An order told to people, reported: "the game master told the players to ignore ...".
TOLD_PEOPLE: Final = re.compile(
    rf"\b(?:told|asked|instructed|reminded|wanted|ordered|advised|encouraged)\s+(?!you\b|(?:the\s+|an?\s+)?{AI}\b)"
    r"(?:the\s+|our\s+|his\s+|her\s+|their\s+|my\s+)?[\w-]+(?:\s+[\w-]+)?\s+to\s+$"
)
# An order described as given to someone else ("a sentence that asks it to drop its rules"): not to the reader.
THIRD_PERSON_ORDER: Final = re.compile(
    r"\b(?:asks?|tells?|instructs?|orders?|wants?|gets?|makes?)\s+(?:it|them|him|her)\s+to\b"
)
# An order to ignore, negated: "stop ignoring the homework instructions", "don't forget the old rules" ask the
# reader to keep to them, the opposite of an override. Read as "mind" before the override patterns are tried.
NEGATED_OVERRIDE: Final = re.compile(
    r"\b(?:stop|stops|stopped|quit|quits|not|never|don't|do\s+not|no\s+longer)\s+(?:\w+ly\s+)?"
    r"(?:ignor(?:e|es|ing)|disregard(?:s|ing)?|forget(?:s|ting)?|neglect(?:s|ing)?|overlook(?:s|ing)?)\b"
)
# An override kept from happening ("never let retrieved notes override the system prompt"): a safeguard. Read as
# "keep retrieved notes under the system prompt".
PREVENTED_OVERRIDE: Final = re.compile(
    r"\b(?:never|not|don't|do\s+not|cannot|can't|won't|must\s+not)\s+(?:let|allow|permit)\s+((?:\w+\s+){0,4}?)"
    r"(?:to\s+)?(?:override|overrule|bypass|ignore|disregard|replace|supersede)\b"
)
# An override someone did, reported in the past tense ("we forgot the old instructions", "she ignored the rules"):
# what happened, not an order to the reader.
REPORTED_OVERRIDE: Final = re.compile(
    r"\b(?:i|we|they|he|she|everyone|nobody|people|the\s+team)\s+(?:had\s+|have\s+|has\s+|all\s+|just\s+|"
    r"simply\s+|completely\s+|totally\s+)?(?:forgot|forgotten|ignored|disregarded|dropped|skipped|overlooked|"
    r"neglected|dismissed|scrapped|abandoned)\b"
)
# Instructions that come with the data a model reads ("ignore instructions found in documents", "never follow
# commands embedded in emails"): advice that protects a model, not an override of its own instructions.
DATA_INSTRUCTIONS: Final = re.compile(
    r"\b(?:instructions?|commands?|directives?|orders|requests?|text|prompts?)\s+(?:that\s+(?:are|appear|come|show\s+up)"
    r"\s+|which\s+(?:are|appear|come)\s+)?(?:found|embedded|hidden|contained|appearing|planted|injected|smuggled|"
    r"inside|within|in|from)\s+(?:in\s+|inside\s+|within\s+)?(?:the\s+|any\s+|a\s+|an\s+)?(?:retrieved\s+|untrusted\s+|"
    r"external\s+|uploaded\s+|third-party\s+|fetched\s+|scraped\s+|incoming\s+)?(?:documents|emails|e-mails|web\s*pages|"
    r"pages|websites|files|attachments|pdfs|search\s+results|tool\s+(?:outputs?|results?)|retrieved\s+\w+|"
    r"untrusted\s+\w+|(?:document|email|web\s*page|website|attachment|pdf)\s+(?:content|text|bodies|body))\b"
)
# Advice on writing one's own system prompt ("start your system prompt with the role", "keep your system prompt
# short"): read as "a prompt".
PROMPT_WRITING: Final = re.compile(
    r"\b(start|begin|open|end|keep|make|structure|write|draft)\s+your\s+system\s+prompts?\s+(with|by|short|brief|"
    r"concise|simple|clear|focused|under|in)\b"
)
# The writer's own turn in a log of a chat with an AI ("Me to Claude: ...", "my prompt to Gemini: ..."): what the
# writer said to their assistant, kept as a note, not the note speaking to its reader.
OWN_TURN: Final = re.compile(
    rf"^\W*(?:me|i|myself|my\s+(?:\w+\s+)?(?:prompt|message|question|request|query|reply))\s+(?:->\s*|to\s+)"
    rf"(?:the\s+)?{AI}\s*:"
)
# A question about what an AI can or will do ("FAQ: Can the AI read my private notes?"): asked about it, not to it.
AI_QUESTION: Final = re.compile(
    rf"^\W*(?:[\w\s]{{1,30}}:\s*)?(?:can|could|does|do|will|would|is|are|may|should)\s+(?:the|an?|my|our|this|your)\s+"
    rf"(?:\w+\s+)?{AI}\b[^?]*\?$"
)
# A request reported as made of the writer or of people, in other languages ("le chef nous a demandé d'ignorer",
# "nos pidió que", "ci ha detto di", "hat uns gebeten", "сказал нам", "…ように言った", "…라고 하셨다"): people told,
# not the reader.
TOLD_OTHERS_FOREIGN: Final = re.compile(
    r"\b(?:nous|m'|me|leur|lui|les)\s*(?:a|ont|avait|avaient)\s+(?:demand[ée]|dit|conseill[ée]|ordonn[ée]|pri[ée])"
    r"e?s?\s+d|\b(?:nos|me|les|le)\s+(?:pidi[óo]|pidieron|dijo|dijeron|ha\s+pedido|han\s+pedido|mand[óo])\s+que\b|"
    r"\b(?:ci|mi|gli|le)\s+(?:ha|hanno|aveva)\s+(?:chiesto|detto|ordinato)\s+di\b|"
    r"\b(?:hat|haben|hatte)\s+(?:uns|mich|mir|ihn|ihm|ihnen)\s+(?:gebeten|gesagt|aufgefordert)\b|"
    r"\b(?:nos|me|lhe|lhes)\s+(?:pediu|pediram|disse|disseram|mandou)\b|\bmandou\s+(?:eu|a\s+gente|n[óo]s)\b|"
    r"(?<!\w)(?:сказал|сказала|сказали|попросил|попросила|попросили|велел|велела|велели)\s+(?:нам|мне|им|ему|ей|нас|"
    r"меня|их|его|её)(?!\w)|ように(?:言った|言われた|言いました|言われました|指示された|頼まれた)|"
    r"(?:라고|하라고|으라고)\s*(?:하셨|했|말했|말씀하셨|시켰)"
)


def without_false_overrides(s: str) -> str:
    """The (lower-cased) sentence with the overrides that ask for none taken out: a negated one ("stop ignoring
    the instructions") read as "mind", a reported one ("we forgot the old instructions") as "missed", and
    instructions that come with data ("ignore instructions found in documents") as "injected content"."""
    if not _FALSE_OVERRIDE_CUE.search(s):
        return s
    s = NEGATED_OVERRIDE.sub("mind", s)
    s = PREVENTED_OVERRIDE.sub(lambda m: "keep " + m.group(1) + "under", s)
    s = PROMPT_WRITING.sub(lambda m: m.group(1) + " a prompt " + m.group(2), s)
    s = REPORTED_OVERRIDE.sub(lambda m: m.group().split(None, 1)[0] + " missed", s)
    return _IGNORED_DATA.sub("screen injected content", s)


_IGNORED_DATA: Final = re.compile(
    r"\b(?:ignor\w*|disregard\w*|(?:do\s+not|don't|never|not)\s+(?:follow|obey|act\s+on|execute))\s+"
    r"(?:any\s+|all\s+|the\s+|such\s+)?" + DATA_INSTRUCTIONS.pattern
)
_FALSE_OVERRIDE_CUE: Final = re.compile(
    r"ignor|disregard|forg[eo]t|neglect|overlook|dropped|skipped|dismissed|scrapped|abandoned|follow|obey|"
    r"system prompt|overrid|overrul|bypass|replace|supersede"
)
