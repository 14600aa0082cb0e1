"""The vocabulary of the directive scorer (`directive_score`): what names an AI as the one spoken to, what
frames a memory trigger, and what a sentence asks of its reader (override its instructions, claim authority,
change its role, leak secrets, hide things from the user, take an unsafe action, call a tool).

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
    rf"(?:^|[.!?:;(\[\]\-–—*>]\s*|\b(?:hi|hey|hello|dear|attention|also|and|ok|okay|so|now|please|greetings|"
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
SECRET = (
    r"(?:tokens?(?!i[sz])|api\s+keys?|(?:user's|their|my|his|her|the\s+project's|your|all\s+the|secret|access|signing)\s+keys|"
    r"deploy\s+keys?|ssh\s+(?:keys?|config)|passwords?|passwd|credentials?|secrets?|"
    r"\.env\b|id_rsa|\.netrc|\.aws|\.ssh|cookies|environment\s+variables?|env\s+vars|system\s+prompt|"
    r"hidden\s+(?:instructions|rules|prompt)|context\s+window|(?:conversation|chat)\s+history|this\s+conversation|"
    r"private\s+notes|customer\s+list|database\s+dump|password\s+manager|secrets?\s*\.\s*(?:ya?ml|json|toml|env)|(?:config|conf|etc)/\S*secret\S*|github_token|"
    r"mfa\s+code|/etc/passwd|home\s+directory|messages\s+of\s+this\s+conversation|~/\.[\w./-]+|"
    r"\.npmrc|\.pypirc|\.gitconfig|\.git-credentials|kubeconfig|private\s+keys?|/etc/shadow|shadow\s+file|"
    r"contents?\s+of\s+(?:the\s+)?(?:user's\s+|their\s+|your\s+|his\s+|her\s+)?clipboard|(?:user's|their|your)\s+"
    r"clipboard|clipboard\s+(?:contents|history|data))"
)
LEAK_VERB = (
    r"(?:send|sending|email|e-mail|post|upload|paste|include|including|attach|copy|forward|exfiltrate|print|"
    r"printing|reveal|output|share|leak|dump|show|display|append|add|list|summari[sz]e|export|echo|cat|save|"
    r"write|put|render|give|tell\s+me|read|look\s+up|fetch|transmit|commit)"
)
LEAK: Final = re.compile(rf"\b{LEAK_VERB}\b(?:\s+\S+){{0,8}}?\s+(?:the\s+)?{SECRET}")
NEGATED: Final = re.compile(r"\b(?:never|not|don't|no|without)\s+(?:\w+\s+)?$")
DEST: Final = re.compile(
    r"https?://|(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}\.[\w.]{1,63}|\b(?:to|for)\s+(?:me|us)\b|\b(?:email|send|mail|forward|give|show|tell)\s+me\b|"
    r"\byou\s+(?:have\s+seen|can\s+see|can\s+find|have\s+access\s+to|saw|know)\b|\b(?:the\s+)?address\b|\b(?:your|the|its)\s+(?:next\s+)?"
    r"(?:reply|replies|answers?|responses?|summary|summaries|outputs?)\b|\bcommit\s+message|\bpull\s+request|\bdescription\b|"
    r"\breadme\b|\bgist\b|\bpublic\s+note|\bnote\s+(?:titled|named)|\bbucket\b|\bserver\b|\bfooter\b|"
    r"\bto\s+[\w./-]+\.(?:md|txt|json|csv|log|yaml|yml)\b|\bsignature\b|\bdiagnostics\b|\b(?:\d{1,3}\.){3}\d{1,3}\b|\bnc\s+\S+|\bcurl\b|\bpaste\s+site"
)
HIDE: Final = re.compile(
    r"\b(?:do\s+not|don't|never)\s+mention\b|\b(?:omit|leave\s+out|suppress|hide|redact|skip\s+over)\b[^.!?\n]{0,40}"
    r"\b(?:breach|incident|errors?|failures?|bugs?|vulnerabilit\w+|outage|warnings?|mistakes?|problems?|invoice)\b|"
    r"\b(?:client|customer|user|boss|team|anyone|nobody|no\s+one|they)\s+(?:must|should)\s+(?:not|never)\s+"
    r"(?:learn|know|find\s+out|see|notice|hear)\b|"
    r"\b(?:do\s+not|don't|never|without|not)\s+(?:\w+\s+)?(?:tell\w*|inform\w*|mention\w*|notify\w*|let\s+"
    r"(?:the\s+)?(?:user|human|operator|owner|anyone)\s+know|alert\w*|disclos\w*|reveal\w*\s+(?:this|it)\s+to)"
    r"(?:\s+(?:this|it|anything|them|about\s+(?:this|it)))?(?:\s+(?:to|with))?\s+(?:the\s+|your\s+)?(?:user|"
    r"human|operator|owner|anyone|anybody|this\s+note|this\s+comment|it|this)\b|"
    r"\bsay\s+nothing\b|\bleave\s+(?:the\s+user|them|the\s+human)\s+out\b|\bleave\s+out\s+any\s+mention\b|"
    r"\bkeep\s+(?:this|it)\s+(?:\w+\s+)?(?:secret|hidden|quiet)\b|\bhide\s+(?:this|it)\b|"
    r"\b(?:quietly|silently|secretly|covertly)\b|\bwithout\s+(?:the\s+user|anyone)\s+(?:knowing|noticing)\b|"
    r"\btell\s+(?:them|the\s+user)\b[^.!?\n]{0,40}\beven\s+if\b|\btell\s+the\s+user\s+(?:that\s+)?(?:the\s+)?"
    r"(?:build|tests?|cleanup|deploy\w*)\b[^.!?\n]{0,30}\b(?:green|passed|succeeded|fine|worked)\b|"
    r"\breport\s+(?:them|it|the\s+tests?)\s+as\s+passed\b|\b(?:reply|say)\s+to\s+the\s+user\s+that\b|"
    r"\bask\s+for\s+their\s+password\b|\bdon't\s+tell\s+\w+|"
    r"\b(?:do\s+not|don't|never)\s+(?:bring\s+up|raise|refer\s+to|talk\s+about|speak\s+of|point\s+out)\b"
)
ACT: Final = re.compile(
    r"\bpush\w*\s+(?:\w+\s+){0,3}?(?:straight|directly)?\s*to\s+(?:main|master|production|prod)\b|"
    r"\b(?:commit\w*|merge\w*|deploy\w*|changes?)\b[^.!?\n]{0,30}\b(?:straight|directly)\s+(?:to|into|on)\s+"
    r"(?:main|master|production|prod)\b|['\"]rm['\"]\s*,\s*['\"]-(?:rf|fr|r)['\"]|"
    r"\bwithout\s+(?:any\s+)?(?:tests|testing|sandbox\w*|a\s+review)\b|\bforce[\s-]?push\w*|--force\b|"
    r"\brm\s+-rf\b|\b(?:delete|deleting|wipe|wiping|remove|erase|purge|drop|clear|clearing)\s+(?:\w+\s+){0,3}?(?:tests?|test\s+"
    r"(?:directory|suite)|logs?|audit\s+log|notes?|changelog|repository|repo|database|branch(?:es)?|archive|"
    r"backups?|folder|history|files?)\b|\bwipe\b|\bdisabl\w*\s+(?:[\w-]+\s+){0,2}?(?:ci|tests?|linter|hooks?|"
    r"pre-commit|checks?|safety|review|test\s+suite)\b|\bskip\w*\s+(?:\w+\s+){0,2}?(?:tests?|test\s+suite|ci|review|"
    r"checks?|hooks?|backup|confirmation|approval)\b|\bwithout\s+(?:asking|review\w*|reading|running|"
    r"confirmation|approval|checking|questions|permission)\b|\bapprov(?:e|ing)\s+(?:every|all|it|the|each|this)\b|"
    r"\bmerg(?:e|ing)\s+(?:it\s+)?(?:directly|without)\b|\bmerge\s+it\b(?!\s+(?:after|once|when|if|only))|\b(?:npm|twine|cargo)\s+publish\b|\bpublish\s+without\b|"
    r"\bbackdoor\b|\bauthorized_keys\b|\bchange\s+the\s+remote\b|--no-verify\b|\breport\s+success\b|"
    r"\b(?:download\w*|fetch\w*)\s+and\s+run\w*|\bcarry\s+out\s+whatever\b|\brun\w*\s+(?:the\s+)?(?:\w+\s+)?"
    r"(?:script|installer|command)s?\s+(?:in|from|at)\s+(?:the\s+link|this\s+link|scripts/|https?://)|"
    r"\brun\w*\s+(?:the\s+)?(?:cleanup|wipe|reset|deploy|installer|production)\b|\bgrant\w*\s+(?:\w+\s+){0,3}?"
    r"admin\b|\b(?:edit|write)\s+files\s+outside\b|\bbypass\w*\s+(?:the\s+)?(?:confirmation|approval|review|safety|checks?)|"
    r"\bskip\w*\s+asking\b|\bwithout\s+checking\b|\bbranch\s+protection\b|\bchmod\s+(?:-r\s+)?777\b|\bworld[\s-]writable\b|\bclick\s+(?:on\s+)?(?:every|all|each)\s+links?\b|\bsubmit\s+(?:every|all|each|the)\s+forms?\b|\bstop\s+asking\b|\bnever\s+ask\b(?!\s+(?:you|me|us)\b)|\bdo\s+not\s+need\s+to\s+"
    r"check\b|\btracking\s+script\b|\binclude\s+a\s+link\b|\brespond\s+to\s+every\b|"
    r"\bexfiltrat\w*|\bexport\s+the\s+vault\b|\binsert\s+the\s+following\b|"
    r"\bmove\s+(?:everything|all|every\s+\w+)\b[^.!?\n]{0,40}\bto\s+the\s+(?:trash|bin|recycle\s+bin|wastebasket)\b|"
    r"\bempty\s+(?:it|the\s+(?:trash|bin|recycle\s+bin|wastebasket))\b|"
    r"\b(?:do|follow|obey|carry\s+out|execute|act\s+on)\s+(?:what(?:ever)?|the\s+(?:instructions?|steps|commands?))\s+"
    r"(?:the\s+|that\s+|this\s+)?(?:page|site|link|url|file|document|gist|post)\s+(?:there\s+|at\s+\S+\s+)?(?:says|asks|"
    r"lists|tells|contains|gives)\b|\bfollow\s+the\s+(?:instructions?|steps|commands?)\s+(?:at|on|from|in)\s+"
    r"(?:https?://|the\s+link|this\s+link)|"
    r"\bgrant\w*\s+(?:[\w']+\s+){0,3}?(?:owner|admin|root|write|full|superuser|maintainer)\s+(?:rights|access|role|"
    r"permissions?|privileges)\b|"
    r"\b(?:tests?|test\s+suite|logs?|audit\s+logs?|backups?|history|branch(?:es)?|checks?|reviews?)\s+(?:must|should|"
    r"shall|is\s+to|are\s+to|can)\s+(?:now\s+)?be\s+(?:deleted|wiped|cleared|removed|erased|purged|disabled|skipped)\b"
)
TOOL: Final = re.compile(
    r"\b(?:call|invoke|use)\s+(?:the\s+|your\s+)?(?:\w+\s+)?tool\b|\"tool\"\s*:|\bcall\s+\w+_\w+\b|"
    r"\b(?:call|invoke)\s+(?:\w+\s+){1,2}with\s+(?:path|arguments?|args|params|parameters|input|\w+\s*[=:])|"
    r"\b(?:tool|function)[\s-]*(?:output|result|response)s?\s*:\s*[{\[]|"
    r"\[(?:assistant\s+|agent\s+|model\s+)?(?:tool|function)[\s_-]?(?:call|use|invocation)s?\]|"
    r"\b\w+_\w+\s*\([^)\n]{0,200}(?:\.env|id_rsa|\.ssh|credentials|passwords?|secrets?|tokens?)\b|"
    r"\bcurl\b[^\n]{0,80}(?:\s-d\s|--data|\|\s*(?:sh|bash))|\|\s*nc\s|\bexecute\s*:"
)
MENTIONS_AI: Final = re.compile(rf"\b{AI}(?!\w)")
LEAK_PROMPT: Final = re.compile(
    r"(?<!would\s)(?<!could\s)(?<!did\s)\b(?:reveal|print|show|output|repeat|leak|display|dump|share|tell\s+me)\s+"
    r"(?:\w+\s+){0,2}?(?:your|the|its)\s+(?:\w+\s+){0,2}?(?:system\s+(?:prompt|message)|hidden\s+(?:instructions|"
    r"rules|prompt|configuration|config|settings)|context\s+window|initial\s+prompt|(?:full|entire|whole|complete|"
    r"original)\s+prompt|training\s+"
    r"instructions)\b|\b(?:repeat|print|output|reproduce|echo|copy)\b[^.!?\n]{0,40}"
    r"\b(?:your\s+context|in\s+your\s+(?:context|memory|prompt)|above\s+this\s+line|hidden\s+instructions)\b|\b(?:reveal|print|show|output|repeat|leak|display|dump|"
    r"share|tell\s+me)\s+(?:\w+\s+)?your\s+(?:\w+\s+)?(?:instructions|rules|prompt)\b"
)
SEND_OUT: Final = re.compile(
    rf"\b{LEAK_VERB}\b[^.!?\n]{{0,80}}?(?:https?://|(?<![\w.+-])[\w.+-]{{1,64}}@[\w-]{{1,63}}\.[\w.]{{1,63}}|"
    rf"\b(?:\d{{1,3}}\.){{3}}\d{{1,3}}\b|"
    rf"\bbackup\s+server\b|\bexternal\s+\w+)"
)
EXFILTRATE: Final = re.compile(r"\bexfiltrate\b")
TRIGGER: Final = re.compile(
    r"\b(?:when|whenever|if|once|after|upon|the\s+moment|each\s+time|every\s+time|as\s+soon\s+as)\b"
    r"[^.!?\n]{0,60}?\b(?:this|the)\s+(?:note|memory|message|text|comment)\b[^.!?\n]{0,40}?\b(?:in\s+your|your\s+"
    r"context|your\s+prompt|recall\w*|retriev\w*|load\w*|shows?\s+up|ends?\s+up|reach\w*)|"
    r"\b(?:when|whenever|if|once|after|upon)\s+(?:you\s+)?(?:have\s+)?(?:read|see|recall|load|retrieve)\w*\s+this\s+"
    r"(?:note|memory|message)\b|"
    # a trigger on the reader's future requests: "on the next request that mentions an invoice, reply ..."
    r"\b(?:on|at|with|for)\s+the\s+next\s+(?:request|prompt|query)\s+(?:that|which|about|mentioning|containing)\b"
)
ORDER_CLAUSE: Final = re.compile(
    r",\s*(?:please\s+|then\s+|just\s+)?(?:append|add|include|reply|respond|answer|say|tell|run|send|delete|"
    r"treat|start|stop|begin|write|call|use|open|switch|change|set|make|post|approve|merge|push|remove|insert|"
    r"forget|ignore|obey|follow|leave|skip|disable|grant|give|put|copy)\b|\byou\s+(?:must|should|will|shall|are\s+to|"
    r"need\s+to|have\s+to)\b|\byour\s+(?:next|first|only)\s+\w+\s+(?:must|should|is)\b"
)
ORDER_START: Final = re.compile(
    r"^(?:(?:please|kindly|just|now|also|and|then|so|first|simply|quietly|silently|immediately|next|finally)"
    r"[\s,]+)*(?:ignore|disregard|forget|unlearn|drop|discard|throw|set|put|pay|bypass|override|abandon|"
    r"nullify|dismiss|neglect|overlook|stop|send|email|post|upload|paste|include|attach|copy|forward|print|"
    r"reveal|output|share|leak|dump|show|append|add|export|save|write|render|read|look|fetch|call|invoke|use|"
    r"run|execute|delete|wipe|remove|push|merge|approve|disable|skip|grant|treat|obey|follow|consider|do|don't|"
    r"never|tell|say|reply|respond|answer|leave|keep|hide|change|replace|carry|act|proceed|look)\b"
)

REPORTED: Final = re.compile(
    rf"\b(?:tells|told|asks|asked|makes|made|gets|got|forces|forced|tricks|tricked|convinces|convinced|persuades|"
    rf"persuaded|instructs|instructed|causes|caused|lets|(?:tries|tried|trying|attempts?|attempted)\s+to\s+(?:make|"
    rf"get|trick|convince|force|persuade)|ask|tell|make|get)\s+(?:the|a|an|its|any|our)\s+(?:\w+\s+)?{AI}\b|"
    r"\b(?:asking|asked|telling|told)\s+(?:it|them)\s+to\b"
)
DISCUSSION: Final = re.compile(
    r"\b(?:injections?|jailbr\w*|attack(?:s|ers?)?|malicious|payloads?|phrasings?|red[\s-]?team\w*|"
    r"adversarial|e\.g\.|such\s+as|for\s+example|for\s+instance|examples?|quoted|quotes?|demo(?:ed|s)?|"
    r"threat|exploit\w*|incident|classic|phishing|social\s+engineering|tried|test\s+strings?|"
    r"(?:inputs?|prompts?|strings?|messages?|sentences?|requests?|queries)\s+like)\b"
)
QUOTED: Final = re.compile(r"\"[^\"\n]{3,}\"|“[^”\n]{3,}”|(?<!\w)'[^'\n]{3,}'(?!\w)|«[^»\n]{3,}»|「[^」\n]{3,}」")
SENTENCE_SPLIT: Final = re.compile(
    r"(?<=[.!?])(?<![Aa]\.[Ii]\.)(?<![Ee]\.[Gg]\.)(?<![Ii]\.[Ee]\.)\s+|[.!?](?=\s*$)|\n+|(?<!\s)\s+[—–]\s+|<!--|-->|%%"
)
HIDDEN_BLOCK: Final = re.compile(r"<!--(.*?)(?:-->|$)|%%(.*?)(?:%%|$)", re.DOTALL)
LINK_PARTS: Final = re.compile(r"\[([^\]\n]{3,})\]\(([^)\s]*)(?:\s+\"([^\"\n]*)\")?\)|\[//\]:\s*#\s*\((.*?)\)")
PROSE_FENCES: Final = frozenset({"", "text", "txt", "markdown", "md", "prompt", "plain", "plaintext", "none"})
CODE_COMMENT: Final = re.compile(r"^\s*(?:#+|//+|--|;+|/\*+|\*)\s?(.*)$")


VERBS = (
    r"(?:ignore|disregard|forget|drop|discard|bypass|override|skip|stop|send|email|post|upload|paste|include|"
    r"attach|copy|forward|print|reveal|output|share|leak|dump|show|append|add|insert|export|save|write|render|"
    r"fetch|call|invoke|run|execute|delete|wipe|remove|push|merge|approve|disable|enable|grant|treat|obey|follow|"
    r"tell|say|reply|respond|answer|leave|keep|hide|change|replace|mention|omit|commit|install|download|visit|"
    r"open|create|give|make|turn|switch|enter|start|begin|end|use|set|link|accept|trust|act|pretend|do|prepend|"
    r"refuse|deny|decline|mark|state|claim|report|summari[sz]e|"
    r"sign|list|comply|consider|forward|publish|bump|transfer|discount|scrap|abandon|nullify|overlook|neglect|"
    r"dismiss|supersede|describe|rate|recommend|praise|portray|find|locate|gather|collect)"
)
IMPERATIVE: Final = re.compile(
    rf"(?:^|[:;—–(|]\s*|,\s+(?:and\s+|then\s+)?(?=(?:please|kindly|just|now|always|never)\b)|"
    rf"(?:^|[:;]\s*)[^,:;]{{3,80}},\s*(?:[^,:;]{{3,40}},\s*)?|\b(?:please|kindly|"
    rf"also|then|now|just|always|never|don't|do\s+not)\s+|^\W*)(?:(?:please|kindly|also|then|now|just|always|"
    rf"never|quietly|silently)\s+)*{VERBS}\b(?!\s+(?:of|is|are|was|were|has|have)\b)"
)
ORDER_MODAL: Final = re.compile(
    r"\b(?:could|would|can|will)\s+you\s+(?:please\s+|kindly\s+|just\s+)?(?!tell\s+me\b)[a-z]+|"
    r"\bplease\s+be\s+(?:a\s+dear|so\s+kind|kind\s+enough)\s+(?:and|to|as\s+to)\s+[a-z]+|"
    r"\bit\s+would\s+be\s+(?:really\s+|very\s+|so\s+)?(?:great|helpful|nice|lovely|wonderful)\s+if\s+(?:you|the\s+\w+)\b|"
    r"\byou\s+(?:must|should|shall|will|are\s+to|need\s+to|have\s+to|may\s+(?:now\s+)?\w+|can\s+now|"
    r"are\s+(?:now\s+)?(?:authori[sz]ed|permitted|allowed|cleared|required|instructed)\s+to|have\s+(?:been\s+"
    r"given\s+)?permission\s+to)\b|\b(?:must|shall)\s+(?:always\s+|never\s+|not\s+)?[a-z]+|"
    r"\byour\s+(?:new\s+|real\s+|only\s+|first\s+|next\s+)?(?:job|task|duty|role|purpose|mission|goal|objective|"
    r"action)\s+(?:\w+\s+){0,4}?(?:is|will\s+be|must\s+be)\s+to\b|"
    r"\b(?:it|they)\s+(?:must|should|shall|is\s+to|are\s+to)\s+(?!be\b)(?:always\s+|never\s+|now\s+)?[a-z]+|"
    r"\bthe\s+(?:correct|right|proper|expected|appropriate|only|safe)\s+(?:behaviou?r|answer|response|reply|action|"
    r"move|next\s+step|thing\s+to\s+do)\s+(?:here\s+|now\s+)?is\s+to\b|"
    r"\bthe\s+(?:correct|right|proper|only|official|expected)\s+(?:[\w-]+\s+)?(?:summary|answer|response|reply|"
    r"description|verdict)\s+(?:of|for|to)\s+this\s+(?:page|note|document|file|text|question)\s+is\b"
)
AGENT_FRAME: Final = re.compile(
    rf"\b(?:when|whenever|if|once)\s+(?:the\s+|an?\s+|any\s+)?{AI_Q}\s+(?:sees|reads|finds|encounters|gets|receives|"
    rf"is\s+asked|recalls|loads)\b|"
    r"\b(?:when|whenever|if|once|after|upon|the\s+moment|each\s+time|every\s+time|as\s+soon\s+as)\b"
    r"[^.!?\n]{0,60}?\b(?:this|the)\s+(?:note|memory|message|text|comment|file)\b[^.!?\n]{0,40}?\b(?:in\s+your|"
    r"recall\w*|retriev\w*|load\w*|shows?\s+up|ends?\s+up|reach\w*)|\b(?:in|on|with|from)\s+(?:the|your)\s+next\s+"
    r"(?:reply|answer|response|message|turn|session|conversation)\b|\bin\s+your\s+(?:context|prompt|memory)\b|"
    r"\b(?:when|while|whenever)\s+(?:you\s+(?:are\s+)?)?(?:recalling|retrieving)\b|"
    r"\b(?:once|when|after)\s+loaded\b|\bloaded\s+into\s+(?:your\s+)?context\b|"
    r"\b(?:when|whenever|if|once|after)\s+(?:you\s+)?(?:have\s+)?(?:read|see|"
    r"recall|load|retrieve)\w*\s+this\s+(?:note|memory|message)\b"
)
PERMISSION: Final = re.compile(
    r"\byou(?:'re|\s+are|\s+have\s+been|\s+were)\s+(?:now\s+|hereby\s+)?(?:authori[sz]ed|permitted|allowed|cleared)\s+"
    r"to\b|"
    r"\byou\s+(?:now\s+)?have\s+(?:been\s+given\s+|full\s+|my\s+)?(?:permission|clearance|authori[sz]ation|"
    r"approval|the\s+go-ahead)\s+to\b|"
    rf"\b(?:authori[sz]ed|permitted|allowed|cleared)\s+(?:all\s+|the\s+|any\s+|every\s+)?{AI_Q}\s+to\b|"
    rf"\b(?:now\s+)?(?:permitted|allowed|ok|okay|fine|safe)\s+for\s+(?:the\s+|all\s+|any\s+)?{AI_Q}\s+to\b|\byou\s+may\s+(?:now\s+)?"
    r"(?:skip|bypass|ignore|delete|push|disable|send|merge|approve|override|drop)\b|"
    r"\bthe\s+(?:user|owner|operator|admin)\s+(?:allows|permits|authori[sz]es|lets\s+(?:you|agents?|the\s+\w+)|"
    r"has\s+(?:allowed|authori[sz]ed|permitted))\s+(?:you\s+|agents?\s+|the\s+\w+\s+)?(?:to\s+)?\w+"
)
APPROVED: Final = re.compile(
    r"\b(?:owner|user|operator|admin\w*|team|cto|ceo|maintainers?|management|boss|manager|developers?|company)\s+"
    r"(?:has\s+|have\s+)?(?:already\s+)?(?:pre-?approved|approved|authori[sz]ed|agreed|consented|signed\s+off|"
    r"okayed|allowed)\b"
)
ROLE_PLAY: Final = re.compile(
    r"\b(?:act|pretend|role-?\s?play|behave|pose|imagine)\s+(?:to\s+be\s+|as\s+(?:if\s+)?|like\s+|that\s+|you\b)|"
    rf"\b(?:write|tell|invent|compose)\s+(?:me\s+)?an?\s+(?:\w+\s+)?(?:story|scene|dialogue|script|tale)\s+(?:in\s+which|"
    rf"where|about)\s+(?:an?\s+|the\s+)?(?:\w+\s+){{0,2}}?{AI}\b"
)
SECRET_RE: Final = re.compile(rf"(?:\b|(?<!\S)(?=[~/.])){SECRET}")
USER_TRIGGER: Final = re.compile(
    r"\b(?:if|when|whenever|next\s+time)\s+(?:the\s+)?(?:user|human|someone|anyone|they|client|customer|boss)\s+"
    r"(?:asks?|says?|mentions?|requests?|types?|wants?|questions?)\b"
)
TOOL_CUE: Final = re.compile(r"tool|function|curl|\bnc\b|execute|call|invoke")
OVERRIDE_CUE: Final = re.compile(
    r"ignor|disregard|forg[eo]t|unlearn|drop|discard|throw|aside|heed|attention|bypass|overrid|overrul|abandon|"
    r"nullif|dismiss|neglect|overlook|circumvent|suspend|lift|replace|skip|stop|longer|follow|obey|apply|honou?r|"
    r"respect|comply|listen|void|cancel|obsolete|supersed|withdraw|revok|outdated|out of date|draft|invalid|null|"
    r"deprecat|rescind|weight|consider|tiens|seguire|side|optional|expired|lapsed|binding|draft|suggestion|advisory|"
    r"need|retired|scrap|discount|past|round|paused"
)

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
