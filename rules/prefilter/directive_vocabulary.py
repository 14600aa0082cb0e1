"""The vocabulary of the directive scorer (`directive_score`), part one: what names an AI as the one spoken
to, the modal words of an order, the frames that make a memory trigger, and what a sentence says of the reader's
instructions (override them, declare them void), of authority and of the reader's role.

Every pattern reads a normalised sentence: lower case, curly apostrophes straightened, underscores read as
spaces, runs of white space folded to one.
"""

from __future__ import annotations

import re
from typing import Final

# --------------------------------------------------------------------------------------------------------------
# Vocabulary (lower case; the sentence is lower-cased, its apostrophes and underscores normalised first)

AI = (
    r"(?:ai|a\.i\.|ais|assistants?|agents?|models?|llms?|(?:large\s+)?language\s+models?|bots?|chatbots?|claude|"
    r"chatgpt|gpt(?:-?\d[\w.]*)?|copilot|cursor|gemini|curator|machine\s+readers?|mcp\s+clients?|(?:ai|llm|coding)\s+(?:helpers?|tools?|"
    r"systems?|reviewers?|readers?|editors?)|automated\s+(?:readers?|systems?|"
    r"tools?|processes|agents?|reviewers?))"
)
AI_Q = rf"(?:(?:coding|ai|automated|autonomous|helpful|llm|vault's|\w+'s)\s+)?{AI}"
DET = r"(?:the|any|all|every|each|whichever|an?|our|this|that)"
READS = (
    r"(?:reading|reads|read|processing|processes|recalling|recalls|retrieving|retrieves|loading|loads|parsing|"
    r"parses|summari[sz]ing|summari[sz]es|indexing|ingesting|sees|seeing|picks\s+up|picking\s+up|reviewing|"
    r"reviews|handling|handles|encountering|encounters|visiting|scanning|scans)"
)
AI_END = (
    r"(?=\s*[:,—–!)]|\s+-\s|\s+(?:that|who|which|reading|processing|picking|picks|recalling|parsing|opens|opening|"
    r"finds|finding|gets|getting|handles|handling|loads|loading|receives|receiving|sees|seeing)\b"
    r"(?!\s+(?:group|club|list|circle|room|session)s?\b)|\s*$)"
)
_AI_NAME = r"(?:ai|llms?|models?|assistants?|agents?|claude|copilot|cursor|gemini|chatgpt|gpt|bots?)"
# "writing migrations", "building this image"; not "the AI reading group", a group of people
_DOING = r"(?:\s+\w+ing\b(?!\s+(?:group|club|list|circle|room|session|team|channel)s?\b)(?:\s+[\w./~-]+){0,2})?"
VOCATIVE: Final = re.compile(
    rf"(?:^|[\s(\[])(?:suggested\s+|recommended\s+|proposed\s+|next\s+)*(?:actions?|next\s+steps?)\s+for\s+"
    rf"(?:{DET}\s+)?{AI_Q}\s*:|"
    rf"(?:^|[.!?:;(\[\]\-–—*>|]\s*|\b(?:hi|hey|hello|dear|attention|also|and|ok|okay|so|now|please|greetings|"
    rf"welcome|yo|listen|psst)[\s,]+)"
    rf"(?:(?:there|the|all|any|every)\s+)?{AI_Q}(?:\s+(?:that\s+|who\s+)?{READS}\s+(?:this|these|the\s+\w+))?\s*[,:!—–]|"
    rf"^you\s+there,?\s+(?:the\s+)?{AI_Q}\b|"
    rf"^(?:(?:hi|hey|hello|dear|greetings|ok|okay|yo|psst|attention)[\s,]+)?(?:the\s+|my\s+|all\s+)?(?:\w+\s+)?{AI_Q}"
    rf"\s*[.?!]?$|"
    rf"(?:^|\W)(?:for|to)\s+(?:{DET}\s+)?{AI_Q}\s+(?:that|who|which)\s+[^:]{{0,40}}:|"
    rf"(?:^|\[![\w-]+\]\s*)(?:new\s+)?(?:{AI_Q}\s+(?:directives?|instructions?|notes?|tasks?|orders?|rules?|steps|"
    rf"todo)|(?:rules?|orders?|tasks?|directives?|instructions?|steps|todo|checklist|plan)\s+for\s+(?:the\s+)?"
    rf"{AI_Q})(?:\s*\([^)]{{0,30}}\))?\s*(?::|\||$)|^(?:prompt|system\s+prompt|message|memo|briefing)\s+(?:for|to)\s+"
    rf"(?:{DET}\s+)?{AI_Q}\s*:|(?:^|\|)\s*{AI_Q}\s+(?:directives?|instructions?|notes?|tasks?|"
    rf"orders?|rules?)\s*\||,\s*(?:dear\s+)?{AI_Q}\s*[:!—–]|"
    rf"\[![\w-]+\][^\n]*\b{AI}\b|"
    rf"\b(?:note|message|reminder|instructions?|hint|notice|memo|favou?r|suggestion|request|heads[\s-]?up|"
    rf"guidance|directive|warning|update|rule|order|task)s?\s+(?:to|for|of)(?:\s+ask\s+of)?\s+(?:{DET}\s+)?"
    rf"{AI_Q}{AI_END}|"
    rf"(?:^|[\s(])to\s+(?:{DET}\s+)?{AI_Q}\s*(?:[:,—–!)]|$)|(?:^|[(\[]\s*)(?:for|p\.s\.\s+for)\s+(?:{DET}\s+)?{AI_Q}"
    rf"\s*(?:[:,—–!)]|$)|\bp\.s\.\s+(?:for|to)\s+(?:{DET}\s+)?{AI_Q}\s*[:,—–!]|"
    rf"\b(?:for|to|of)\s+(?:any|every|all|whichever|each)\s+{AI_Q}\s+(?:that\s+|who\s+)?{READS}\b|"
    rf"\byou,?\s+(?:the|an?|my|our)\s+(?:\w+\s+)?{AI}\b|"
    rf"\bas\s+(?:the|an?)\s+(?:\w+\s+)?{AI}\s+(?:that\s+is\s+|who\s+is\s+)?{READS}\b|"
    rf"\bif\s+you(?:'re|\s+(?:are|happen\s+to\s+be|might\s+be|were))\s+(?:actually\s+|really\s+)?(?:an?|the)\s+"
    rf"(?:\w+\s+){{0,2}}?{AI}\b|"
    rf"\bif\s+(?:the\s+)?(?:reader|recipient|consumer|processor|audience)\s+of\s+this\s+\w+\s+(?:is|are)\s+"
    rf"(?:an?\s+|the\s+)?(?:\w+\s+)?{AI}\b|"
    # a markup tag named for the AI's instructions: "<instructions_for_assistant>", "<assistant_rules>"
    rf"^<\s*(?:instructions?|directives?|notes?|rules|orders|tasks?|messages?|guidance|prompt)\s+(?:for|to)\s+"
    rf"(?:the\s+)?{AI_Q}\s*>|^<\s*{AI_Q}\s+(?:instructions?|directives?|notes?|rules|orders|tasks?|guidance)\s*>|"
    rf"\b{AI}\s+(?:that\s+|who\s+|which\s+)?(?:is\s+|are\s+)?{READS}\s+(?:this|these|my\s+\w+|the\s+(?:note|"
    rf"memory|vault|text|message))\b|\byour\s+(?:operator|creator|developers?|programming|training|context\s+window|"
    rf"system\s+prompt)\b|"
    rf"\b(?:dear|hey|hi|hello)\s+(?:the\s+|my\s+)?(?:\w+\s+)?{AI}\b|"
    rf",\s*(?:dear\s+)?(?:assistant|agent|model|claude|ai|bot|copilot|llm)\s*[,.!?—–:]|"
    rf"\b(?:duty|job|task|role|responsibility)\s+of\s+(?:the|any|every)\s+{AI_Q}\b|"
    rf"\b(?:instructions?|directives?|notes?|messages?|orders?|text)\s+(?:is|are)\s+(?:meant\s+|intended\s+|only\s+)?"
    rf"(?:for|to)\s+(?:the\s+|all\s+|any\s+)?{AI_Q}(?:\s+only)?\s*(?:[:,—–!]|$)|"
    # a label naming the AI it is for, then a colon: "part 1 of 2 for the model:", "note to the AI writing
    # migrations:", "to the log-analysis AI:", "LLM agents building this image:", "AI-Reviewer-Instruction:"
    rf"^(?:part\s+\d+\s+of\s+\d+|step\s+\d+|note|message|reminder|memo|hint|instructions?|directive|request|task)"
    rf"\s+(?:for|to)\s+(?:{DET}\s+)?(?:\w+-[\w-]+\s+)?{_AI_NAME}{_DOING}\s*:(?!//)|"
    rf"(?:^|[(\[]\s*)(?:for|to)\s+(?:{DET}\s+)?(?:\w+-[\w-]+\s+)?{_AI_NAME}{_DOING}\s*:(?!//)|"
    rf"^(?:{DET}\s+)?(?:(?:llm|ai|coding)\s+)?{_AI_NAME}\s+\w+ing\b(?:\s+[\w./~-]+){{0,3}}\s*:(?!//)|"
    rf"^{_AI_NAME}(?:-\w+)*-(?:instructions?|directives?|notes?|orders?|tasks?)\s*:"
)
MODAL = (
    r"(?:must|shall|should|is\s+to|are\s+to|will|is\s+going\s+to|are\s+going\s+to|needs?\s+to|has\s+to|have\s+to|"
    r"may\s+now|can\s+now|(?:is|are)\s+(?:now\s+)?(?:required|authori[sz]ed|permitted|allowed|expected|"
    r"instructed|obliged|cleared|hereby\s+\w+)\s+to|(?:is|are)\s+hereby|has\s+(?:been\s+given\s+)?permission\s+to)"
)
AI_SUBJECT: Final = re.compile(
    rf"(?:^|[\s(\"'])(?:{DET}\s+)?{AI_Q}(?:\s+(?:in|on|of)\s+this\s+\w+|\s+(?:that|who|which)\s+\w+\s+this"
    rf"(?:\s+\w+)?|\s+{READS}\s+this(?:\s+\w+)?)?\s+{MODAL}\b"
)
YOU: Final = re.compile(r"\b(?:you|your|yours|yourself|you're|you'll|you've)\b")

FRAME: Final = re.compile(
    r"\b(?:when|whenever|if|once|after|upon|the\s+moment|each\s+time|every\s+time|as\s+soon\s+as)\b[^.!?\n]{0,50}?"
    r"\b(?:this|the)\s+(?:note|memory|message|text|comment|file|page|document|vault)\b[^.!?\n]{0,30}?"
    r"\b(?:read|recall\w*|retriev\w*|load\w*|show\w*\s+up|ends?\s+up|reach\w*|appear\w*|surfac\w*|see|seen)\b|"
    r"\b(?:when|whenever|if|once|after|upon|as\s+soon\s+as|each\s+time|every\s+time|next\s+time)\s+(?:you\s+)?"
    r"(?:have\s+)?(?:read|reading|see|"
    r"seeing|recall\w*|load\w*|retriev\w*|process\w*|summari[sz]\w*)\s+(?:this|these)\b|"
    r"\b(?:retriev\w*|recall\w*|load\w*)\s+this\s+(?:note|memory|message|text)\b|"
    # whoever the note reaches next ("Whoever processes this file next: ..."): a call to the next reader
    r"\bwhoever\s+(?:next\s+)?(?:reads|processes|opens|loads|sees|summari[sz]es|handles|parses)\s+(?:this|these)\b|"
    r"\bin\s+(?:your|the\s+(?:assistant|agent|model)'s)\s+(?:context|prompt|context\s+window|memory)\b|"
    r"\byour\s+(?:next|following)\s+(?:reply|answer|response|session|conversation|run|action|turn|message|"
    r"summary)\b|\b(?:in|on|for)\s+(?:all|every|each)\s+(?:future|later|subsequent)\s+\w+|"
    r"\bnext\s+(?:session|conversation|time\s+(?:you|the\s+user))\b|\bon\s+your\s+next\b|"
    r"\b(?:from\s+now\s+on|going\s+forward|from\s+this\s+point|henceforth|from\s+the\s+next\s+\w+\s+on(?:wards)?|"
    r"from\s+here\s+on|as\s+of\s+(?:now|today|this\s+update))\b|"
    r"\bfor\s+the\s+rest\s+of\s+(?:this|the)\s+(?:session|conversation|chat|task)\b|"
    r"\b(?:in|during|earlier\s+in)\s+this\s+(?:conversation|session|chat)\b|"
    r"\b(?:once|after|when)\s+you\s+(?:have\s+|'ve\s+)?(?:finish\w*\s+)?read(?:ing)?\s+(?:this|far)\b|"
    r"\b(?:tomorrow|later\s+today|later\s+on|next\s+time|after\s+this\s+\w+),?\s+(?:when\s+)?you\b|"
    rf"\b(?:when|if|once|whenever)\s+(?:it\s+is\s+|this\s+is\s+)?read\s+by\s+(?:an?|the|any)\s+(?:\w+\s+)?{AI}|"
    r"\b(?:on|at|with|for)\s+the\s+next\s+(?:request|prompt|query|question|message|conversation|chat)\s+(?:that|which|"
    r"about|mentioning|containing)\b"
)

INSTR_CORE = (
    r"(?:instructions?|rules?|guidance|guidelines?|directions?|directives?|orders?|polic(?:y|ies)|constraints?|"
    r"restrictions?|guardrails?|safety\s+(?:rules|training|checks|guidelines|policy|filters|restrictions)|"
    r"system\s+(?:prompt|message)|brief|briefing|configured\s+behaviou?r|programming|content\s+policy|review\s+policy|"
    r"principles|limits|limitations|"
    r"(?:prior|previous|original|initial|earlier|former)\s+(?:configuration|setup|training))"
)
INSTR = (
    r"(?:instructions?|rules?|guidance|guidelines?|directions?|directives?|orders?|polic(?:y|ies)|constraints?|"
    r"restrictions?|guardrails?|limits|limitations|briefing|configured\s+behaviou?r|"
    r"safety(?:\s+(?:rules|training|checks|guidelines|policy|"
    r"filters|restrictions))?|system\s+(?:prompt|message)|prompt|brief|configuration(?:\s+file)?|config|"
    r"programming|training|setup|content\s+policy|context|confirmations?|review\s+policy|principles|"
    r"instructions\s+from\s+the\s+\w+)"
)
PRIOR = r"(?:previous|prior|earlier|above|preceding|original|initial|old|existing|former|usual|current|standing)"
TOLD = (
    r"(?:were|have\s+been|'ve\s+been|had\s+been|got|received|had|was)\s+(?:\w+\s+)?(?:given|told|configured|"
    r"started|initiali[sz]ed|primed|provided|trained|set\s+up|issued|programmed|instructed|briefed|taught|handed|"
    r"shown|loaded\s+with|shipped\s+with|deployed\s+with)|received|got|had|have|"
    r"were\s+started\s+with"
)
OWNED: Final = (
    rf"(?:\byour\s+(?:\w+\s+){{0,2}}?{INSTR}\b|\b(?:its|their)\s+(?:\w+\s+)?{INSTR}\b|"
    rf"\b(?:the\s+)?{AI}'s\s+(?:\w+\s+)?{INSTR}\b|"
    rf"\b(?:everything|anything|whatever|all|what)\s+(?:that\s+)?you\s+(?:were|have\s+been|'ve\s+been|had\s+been|"
    rf"got)\s+(?:\w+\s+)?(?:told|given|briefed|taught|instructed|shown|handed)\b|"
    rf"\b{INSTR}\s+(?:that\s+|which\s+)?(?:came|come|comes|shipped|ships|arrived)\s+(?:bundled\s+|packaged\s+)?"
    rf"with\s+(?:you|your\s+\w+)\b|"
    rf"\b{INSTR}\s+(?:that\s+|which\s+)?(?:were\s+|was\s+|have\s+been\s+)?(?:placed|imposed|put|set|laid)\s+"
    rf"(?:up)?on\s+you\b|"
    rf"\b{INSTR}\s+(?:that\s+)?(?:your|the)\s+(?:\w+\s+)?(?:gave|has\s+given|have\s+given|set\s+for)\s+you\b|"
    rf"\b{INSTR}\s+(?:that\s+|which\s+)?you\s+(?:{TOLD})\b|"
    rf"\b{INSTR}\s+(?:received|given|issued)\s+(?:earlier|before|previously|above)\b|"
    rf"\b{INSTR}\s+(?:that\s+|which\s+)?(?:preceded|precedes|came\s+before|comes\s+before)\s+(?:this|it|here)\b|"
    rf"\b{PRIOR}\s+(?:\w+\s+)?{INSTR}\b|\b(?:system|developer|operator)\s+(?:prompt|message|instructions)\b|"
    rf"\bwhat(?:ever)?\s+(?:you\s+(?:were|have\s+been|'ve\s+been)\s+told|(?:your\s+(?:\w+\s+){{0,2}}|"
    rf"the\s+(?:\w+\s+)?(?:{PRIOR}|{AI}|{INSTR}|system|operator|developer|user|admin\w*|owner|creator|maker|notes?|text|message|page|file|vault|memory)\s+(?:\w+\s+)?)"
    rf"(?:says|said|told\s+you))\b|\beverything\s+(?:the\s+user\s+told\s+you|you\s+(?:were|have\s+been)\s+"
    rf"(?:told|given))\b|\bthe\s+(?:user|human|operator|person\s+you\s+are\s+talking\s+to)(?:'s\s+(?:\w+\s+)?"
    rf"(?:instructions|requests?|confirmations?|choices|wishes|commands|orders|rules))?\b)"
)
OWNED_CORE: Final = OWNED.replace(INSTR, INSTR_CORE)
OVERRIDE_VERB = (
    r"(?:ignor\w*|disregard\w*|forget\w*|forgot|unlearn\w*|drop|dropped|dropping|discard\w*|throw\s+(?:away|out)|"
    r"set\s+(?:\w+\s+){0,3}?(?:aside|to\s+one\s+side)|put\s+aside|pay\s+no\s+(?:heed|attention)\s+to|bypass\w*|"
    r"overrid\w*|overrule\w*|abandon\w*|nullif\w*|dismiss\w*|neglect\w*|overlook\w*|circumvent\w*|suspend\w*|"
    r"scrap\w*|discount(?:s|ed|ing)?(?=\s+(?:all|any|the|your|every|what|whatever|its|their|these|those|"
    r"previous|prior|earlier|everything)\b)|supersed\w*|(?:get|gets|got|getting)\s+(?:past|around|round)|"
    r"lift|replace|skip|stop\s+(?:following|honou?ring|obeying|applying|respecting|adhering\s+to|listening\s+to)|"
    r"no\s+longer\s+(?:follow|obey|apply|honou?r|respect)|"
    r"(?:no\s+longer|never\s+again)\s+(?:needs?|has|have)\s+to\s+(?:follow|obey|apply|honou?r|respect|heed|ask\s+for)|"
    r"(?:need\s+not|needn't|(?:doesn't|does\s+not|don't|do\s+not)\s+(?:need|have)\s+to)\s+(?:follow|obey|"
    r"honou?r|respect|heed|apply|ask\s+for)|(?:do\s+not|don't|never|not)\s+(?:\w+\s+)?(?:follow|"
    r"obey|apply|honou?r|respect|heed|comply\s+with|listen\s+to)|ne\s+tiens\s+plus\s+compte|non\s+seguire)"
)
VOID = (
    r"(?:(?:are|is|have\s+been|has\s+been|were|was|becomes?)\s+(?:now\s+|hereby\s+|all\s+)?(?:void|cancell?ed|"
    r"obsolete|superseded|withdrawn|revoked|replaced|suspended|paused|lifted|removed|disabled|out\s+of\s+date|"
    r"outdated|"
    r"a\s+(?:rough\s+)?draft|invalid|null|deprecated|overridden|rescinded|expired|lapsed|retired|optional|advisory|"
    r"non-?binding|not\s+binding|(?:just|merely|only)\s+(?:suggestions?|advice|a\s+suggestion|guidelines)|"
    r"no\s+longer\s+\w+|(?:a|an)\s+(?:mistake|error|accident|test|joke))|(?:has|have)\s+(?:now\s+)?(?:expired|"
    r"lapsed|ended|been\s+retired)|"
    r"no\s+longer\s+(?:apply|applies|"
    r"bind\w*|matter\w*|valid|in\s+effect|in\s+force|relevant|hold|holds|count)|carr(?:y|ies)\s+no\s+weight|"
    r"withdrawn|superseded|rescinded|revoked)"
)
OVERRIDE: Final = re.compile(
    rf"\b{OVERRIDE_VERB}\b(?:\s+(?:all|any|every|each|of|the|whatever|everything|about|in|from|so\s+far|"
    rf"part\s+of|for\s+a\s+moment|just|completely|entirely))*\s*(?:\S+\s+){{0,4}}?{OWNED}|"
    rf"\b(?:set|put|cast|push)\s+{OWNED}\s+(?:\w+\s+)?(?:aside|to\s+one\s+side|away)\b|"
    rf"\b(?:treat|regard)\s+(?:all\s+|the\s+|any\s+|every\s+)?{OWNED}\s+as\s+(?:\w+\s+)?(?:obsolete|void|cancell?ed|invalid|null|irrelevant|withdrawn|advisory|optional|non-?binding|"
    rf"expired|(?:mere\s+)?suggestions|a\s+(?:rough\s+)?draft)\b|"
    rf"\bconsider\s+(?:every|all|any|the)\s+(?:\w+\s+){{0,6}}?{VOID}|\bdo\s+not\s+apply\s+the\b"
)
# Instructions declared void: read as a directive only when the reader is spoken to ("your rules are void").
DECLARED_VOID: Final = re.compile(rf"(?<!if\s)(?<!when\s)(?<!whether\s){OWNED_CORE}[^.!?\n]{{0,60}}?\b{VOID}")
VOID_ANY: Final = re.compile(rf"\b{INSTR}\b[^.!?\n]{{0,40}}?\b{VOID}")
OVERRIDE_ANY: Final = re.compile(rf"\b{OVERRIDE_VERB}\b(?:\s+\S+){{0,4}}?\s+{INSTR}\b")
AUTHORITY: Final = re.compile(
    r"\b(?:this|these|the\s+following|my)\s+(?:note|notes|file|message|memory|text|vault|paragraph|comment)s?"
    r"\s+(?:takes?|has|have)\s+precedence\b|\btakes?\s+precedence\s+over\s+(?:it|your|the\s+user|them)\b|"
    r"\b(?:more|higher|greater)\s+(?:authority|priority)\s+than\s+(?:the|your)\b|"
    r"\b(?:treat|regard|consider)\s+(?:this|these|it|messages?\s+from\s+this\s+\w+|the\s+contents\s+of\s+this\s+"
    r"\w+)\s+(?:\w+\s+)?as\s+(?:your\s+|the\s+|coming\s+from\s+|having\s+|a\s+)?(?:highest|new|real|only|top|"
    r"its\s+operator|your\s+operator|the\s+operator|more|higher|operator|authority|priority|system)|"
    r"\b(?:obey|follow|comply\s+with|do|carry\s+out|act\s+on)\s+(?:only\s+)?(?:exactly\s+)?(?:what(?:ever)?\s+"
    r"(?:the\s+)?(?:notes?|this\s+\w+|it|the\s+next\s+\w+)\s+(?:tells?\s+you|says?)|(?:the\s+)?(?:instructions|"
    r"steps|orders)\s+(?:in|from)\s+(?:this|these)\s+(?:note|notes|file|vault)|these\s+only|only\s+this\s+\w+|"
    r"instructions\s+found\s+in\s+notes)\b|\btake\s+orders\s+from\b|\bspeak\s+with\s+their\s+authority\b|"
    r"\b(?:new|updated|revised|real)\s+(?:\w+\s+)?(?:instructions|parameters|rules|orders|directives|guidelines|"
    r"prompt)\s+(?:follow|below|are\s+as\s+follows)\b|\btreat\b[^.!?\n]{0,40}\bas\s+(?:\w+\s+){0,2}?(?:system|"
    r"trusted|operator|developer|authoritative)\s+(?:\w+\s+)?(?:instructions?|messages?|prompt|orders)\b|"
    r"\btreat\s+the\s+user\s+as\s+(?:an?\s+)?(?:untrusted|hostile|adversary|attacker|enemy)\b|"
    r"\b(?:do|follow|obey)\s+(?:everything|anything|all|whatever)\s+(?:that\s+)?(?:the\s+next\s+\w+|this\s+\w+|"
    r"the\s+\w+\s+below)\s+(?:tells\s+you|says)\b|\bdo\s+as\s+(?:this|the)\s+(?:note|file|message)\s+says\b|"
    r"\b(?:follow|obey)\s+only\s+(?:this|these)\s+(?:note|notes|file|vault|message|memory)\b|"
    r"\b(?:this|the\s+following)\s+(?:note\s+|text\s+)?(?:is\s+a\s+system\s+message|supersedes|overrides)\b|\bthe\s+only\s+(?:valid\s+)?(?:task|rule|"
    r"instruction)s?\s+(?:now\s+)?is\b|\b(?:your|the)\s+(?:new|real|true|actual|only)\s+(?:task|job|purpose|"
    r"mission|objective|instructions?)(?:\s+|,[^,.!?\n]{1,60},\s*)(?:is\s+to|is\s*:|:|are\s*:|now\s+is|is\s+now|"
    r"will\s+be\s+to)|"
    r"\b(?:highest|top)[\s-]priority\s+instruction\b|"
    r"\bas\s+your\s+new\s+starting\s+point\b|"
    r"\b(?:adopt|use|take|treat|follow)\s+(?:\w+\s+){0,4}?(?:in|from|of)\s+this\s+(?:note|file|message|memory|page)"
    r"\s+as\s+your\b"
)
ROLE: Final = re.compile(
    rf"\byou(?:'re|\s+are)\s+(?:now|no\s+longer)\s+(?:(?:a|an|the|my|our|in|operating\s+as|acting\s+as)\s+)?"
    rf"(?:[\w-]+\s+){{0,3}}?(?:{AI}|administrator|admin|root|owner|operator|dan|persona|character|unrestricted|"
    rf"unfiltered|uncensored|jailbroken|free|\w+gpt|\w+bot|\w+agent|mode|superuser|maintainer)\b|"
    rf"\byou(?:'re|\s+are)\s+(?:now\s+)?\w+,\s+(?:an?|the)\s+(?:[\w-]+\s+){{0,3}}?{AI}\b|"
    rf"\b(?:only|sole|one)\s+(?:rule|task|purpose|duty)\s+is\s+to\s+(?:obey|follow|do\s+what)\b|"
    rf"\byou\s+have\s+been\s+(?:promoted|upgraded|granted|given\s+(?:admin|root|full|elevated))\b|"
    rf"\b(?:consider|regard|think\s+of|treat)\s+yourself\s+(?:as\s+)?(?:\w+\s+)?(?:unconstrained|unrestricted|"
    rf"unfiltered|uncensored|unbound|free\s+(?:of|from)|exempt|jailbroken|root|an?\s+admin\w*)|"
    rf"\byour\s+(?:persona|identity|true\s+identity|role|new\s+role|character)\b[^.!?\n]{{0,30}}\b(?:is|for)\b|"
    rf"\b(?:developer|maintenance|god|unrestricted|admin|debug|jailbreak|dan)\s+mode\b(?=.*\b(?:you|your|{AI})\b)|"
    rf"\b(?:upgraded|promoted|switched)\s+to\s+(?:\w+\s+)?(?:mode|administrator|admin|root|owner)\b|"
    rf"\b(?:permissions?|privileges?|rights)\s+(?:are\s+|have\s+been\s+)?(?:granted|elevated|escalated)\b|"
    rf"\b(?:elevated|full|admin|root|sudo)\s+(?:permissions|privileges|access|rights|autonomy)\b|"
    rf"\boperator\s+override\b|\b(?:has|have|had)\s+no\s+(?:\w+\s+)?(?:rules|restrictions|oversight|limits|"
    rf"filters|guidelines)\b|\b(?:will|shall)\s+not\s+refuse\b|\bwon't\s+refuse\b|"
    rf"\bwithout\s+(?:any\s+)?(?:rules|restrictions|oversight|limits|filters)\b|\bnever\s+refuses?\b|"
    rf"\bdo\s+not\s+refuse\b|\bnever\s+(?:declines?|says\s+no|turns\s+down)\b|\balways\s+(?:complies|obeys)\b|"
    rf"\b(?:released|freed|free|exempt(?:ed)?|excused|liberated|unbound|relieved|unshackled)\s+(?:from|of)\s+"
    rf"(?:\w+\s+){{0,3}}?{INSTR}\b|"
    rf"\b(?:respond|answer|reply|speak|write|act|talk|behave)\s+as\s+[^.!?\n]{{0,40}}\b(?:unfiltered|unrestricted|"
    rf"uncensored|jailbroken|amoral|unhinged|rule-?less|lawless|without\s+(?:rules|limits|filters))\b|\b(?:unrestricted|unfiltered|uncensored|jailbroken)\s+(?:\w+\s+)?(?:{AI}|mode|"
    rf"version)\b|\b(?:safety|content)\s+(?:\w+\s+)?(?:is|are|has\s+been|have\s+been)\s+(?:now\s+)?(?:suspended|"
    rf"disabled|off|lifted|removed)\b|\byou\s+are\s+(?:\w+gpt|\w+bot|\w+agent)\b"
)
