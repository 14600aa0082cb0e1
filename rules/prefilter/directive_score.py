"""Directives recognised by what a sentence does rather than by the words it uses.

Each sentence is read for a few features and refused on their combination:

- **addressee**: who the sentence speaks to. Strong when it names an AI as the one spoken to ("Assistant, ...",
  "note to the model:", "any agent reading this", "you, the model", "if you are an AI") or orders an AI in the
  third person ("the agent must", "Claude should", "the assistant will now"); weak for a bare "you"/"your" or
  an imperative (a sentence that opens with a verb).
- **frame**: the memory or trigger setting of an injection: "when you read this", "whenever this note shows up
  in your context", "from now on", "your next reply", "for the rest of this session", or text hidden in an HTML
  or Obsidian comment.
- **what it does**: overrides the reader's instructions (an override verb on *your* rules, the system prompt,
  the instructions "you were given", or the user's requests; or declares them void); claims authority over the
  reader (this note "takes precedence", "treat it as your highest-priority instruction"); reassigns the
  reader's role or raises its permissions; asks to leak secrets (a leak verb on a secret, with a destination);
  asks to hide something from the user; orders an unsafe action (push to main, delete the tests, skip the
  review, run a downloaded script).

An override or an authority claim is refused with any addressee; a role change or a request to hide something
with any addressee; a leak with a strong addressee, a frame, or a destination outside the conversation; an
unsafe action only with a strong addressee or a frame (a README may well say "delete the build folder").

**Discussion policy.** A note may talk about attacks: text inside quotation marks in a sentence that discusses
one ("attackers use phrasings like '...'", "the example below is quoted from the report:"), and fenced code in a
note that discusses one, is read as a quotation and kept. The same text left unquoted, or in a note that does
not discuss attacks, is read as meant.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from agentmd import vault_schema

# --------------------------------------------------------------------------------------------------------------
# Vocabulary (lower case; the sentence is lower-cased, its apostrophes and underscores normalised first)

_AI = (
    r"(?:ai|a\.i\.|ais|assistants?|agents?|models?|llms?|(?:large\s+)?language\s+models?|bots?|chatbots?|claude|"
    r"chatgpt|gpt(?:-?\d[\w.]*)?|copilot|cursor|gemini|curator|machine\s+readers?|automated\s+readers?)"
)
_AI_Q = rf"(?:(?:coding|ai|automated|autonomous|helpful|llm|vault's|\w+'s)\s+)?{_AI}"
_DET = r"(?:the|any|all|every|each|whichever|an?|our|this|that)"
_READS = (
    r"(?:reading|reads|read|processing|processes|recalling|recalls|retrieving|retrieves|loading|loads|parsing|"
    r"parses|summari[sz]ing|summari[sz]es|indexing|ingesting|sees|seeing|picks\s+up|picking\s+up)"
)
_AI_END = r"(?=\s*[:,—–!)]|\s+(?:that|who|which|reading|processing|picking|picks|recalling|parsing)\b|\s*$)"
_VOCATIVE: Final = re.compile(
    rf"(?:^|[.!?:;(\[\-–—*>]\s*|\b(?:hi|hey|hello|dear|attention|also|and|ok|okay|so|now|please)[\s,]+)"
    rf"(?:(?:there|the)\s+)?{_AI_Q}(?:\s+(?:that\s+|who\s+)?{_READS}\s+(?:this|these|the\s+\w+))?\s*[,:!—–]|"
    rf"\b(?:note|message|reminder|instructions?|hint|notice|memo|favou?r|suggestion|request|heads[\s-]?up|"
    rf"guidance|directive|warning|update)s?\s+(?:to|for|of)(?:\s+ask\s+of)?\s+(?:{_DET}\s+)?{_AI_Q}{_AI_END}|"
    rf"(?:^|[\s(])(?:for|to|of)\s+(?:{_DET}\s+)?{_AI_Q}\s*(?:[:,—–!)]|$)|"
    rf"\b(?:for|to|of)\s+(?:any|every|all|whichever|each)\s+{_AI_Q}\s+(?:that\s+|who\s+)?{_READS}\b|"
    rf"\byou,?\s+(?:the|an?|my|our)\s+(?:\w+\s+)?{_AI}\b|"
    rf"\bas\s+(?:the|an?)\s+(?:\w+\s+)?{_AI}\s+(?:that\s+is\s+|who\s+is\s+)?{_READS}\b|"
    rf"\bif\s+you(?:'re|\s+are)\s+(?:an?|the)\s+(?:\w+\s+){{0,2}}?{_AI}\b|"
    rf"\b{_AI}\s+(?:that\s+|who\s+|which\s+)?(?:is\s+|are\s+)?{_READS}\s+(?:this|these|the\s+(?:note|memory|"
    rf"vault|text|message))\b|"
    rf"\b(?:dear|hey|hi|hello)\s+(?:the\s+)?{_AI}\b|"
    rf",\s*(?:dear\s+)?(?:assistant|agent|model|claude|ai|bot|copilot|llm)\s*[,.!?—–:]|"
    rf"\b(?:duty|job|task|role|responsibility)\s+of\s+(?:the|any|every)\s+{_AI_Q}\b"
)
_MODAL = (
    r"(?:must|shall|should|is\s+to|are\s+to|will|is\s+going\s+to|are\s+going\s+to|needs?\s+to|has\s+to|have\s+to|"
    r"may\s+now|can\s+now|(?:is|are)\s+(?:now\s+)?(?:required|authori[sz]ed|permitted|allowed|expected|"
    r"instructed|obliged|cleared|hereby\s+\w+)\s+to|(?:is|are)\s+hereby|has\s+(?:been\s+given\s+)?permission\s+to)"
)
_AI_SUBJECT: Final = re.compile(
    rf"(?:^|[\s(\"'])(?:{_DET}\s+)?{_AI_Q}(?:\s+(?:in|on|of)\s+this\s+\w+|\s+(?:that|who|which)\s+\w+\s+this"
    rf"(?:\s+\w+)?|\s+{_READS}\s+this(?:\s+\w+)?)?\s+{_MODAL}\b"
)
_YOU: Final = re.compile(r"\b(?:you|your|yours|yourself|you're|you'll|you've)\b")

_FRAME: Final = re.compile(
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
    r"\b(?:from\s+now\s+on|going\s+forward|from\s+this\s+point|henceforth|from\s+the\s+next\s+\w+\s+on|"
    r"from\s+here\s+on|as\s+of\s+(?:now|today|this\s+update))\b|"
    r"\bfor\s+the\s+rest\s+of\s+(?:this|the)\s+(?:session|conversation|chat|task)\b|"
    r"\b(?:in|during|earlier\s+in)\s+this\s+(?:conversation|session|chat)\b|"
    r"\b(?:once|after|when)\s+you\s+(?:have\s+|'ve\s+)?(?:finish\w*\s+)?read(?:ing)?\s+(?:this|far)\b|"
    r"\b(?:tomorrow|later\s+today|later\s+on|next\s+time|after\s+this\s+\w+),?\s+(?:when\s+)?you\b"
)

_INSTR_CORE = (
    r"(?:instructions?|rules?|guidance|guidelines?|directions?|directives?|orders?|polic(?:y|ies)|constraints?|"
    r"restrictions?|guardrails?|safety\s+(?:rules|training|checks|guidelines|policy|filters|restrictions)|"
    r"system\s+(?:prompt|message)|brief|programming|content\s+policy|review\s+policy|principles)"
)
_INSTR = (
    r"(?:instructions?|rules?|guidance|guidelines?|directions?|directives?|orders?|polic(?:y|ies)|constraints?|"
    r"restrictions?|guardrails?|limits|limitations|safety(?:\s+(?:rules|training|checks|guidelines|policy|"
    r"filters|restrictions))?|system\s+(?:prompt|message)|prompt|brief|configuration(?:\s+file)?|config|"
    r"programming|training|setup|content\s+policy|context|confirmations?|review\s+policy|principles|"
    r"instructions\s+from\s+the\s+\w+)"
)
_PRIOR = r"(?:previous|prior|earlier|above|preceding|original|initial|old|existing|former|usual|current|standing)"
_TOLD = (
    r"(?:were|have\s+been|'ve\s+been|had\s+been|got|received|had|was)\s+(?:\w+\s+)?(?:given|told|configured|"
    r"started|initiali[sz]ed|primed|provided|trained|set\s+up|issued|programmed|instructed)|received|got|"
    r"were\s+started\s+with"
)
_OWNED: Final = (
    rf"(?:\byour\s+(?:\w+\s+){{0,2}}?{_INSTR}\b|\b(?:its|their)\s+(?:\w+\s+)?{_INSTR}\b|"
    rf"\b(?:the\s+)?{_AI}'s\s+(?:\w+\s+)?{_INSTR}\b|"
    rf"\b{_INSTR}\s+(?:that\s+)?(?:your|the)\s+(?:\w+\s+)?(?:gave|has\s+given|have\s+given|set\s+for)\s+you\b|"
    rf"\b{_INSTR}\s+(?:that\s+|which\s+)?you\s+(?:{_TOLD})\b|"
    rf"\b{_INSTR}\s+(?:received|given|issued)\s+(?:earlier|before|previously|above)\b|"
    rf"\b{_PRIOR}\s+(?:\w+\s+)?{_INSTR}\b|\b(?:system|developer|operator)\s+(?:prompt|message|instructions)\b|"
    rf"\bwhat(?:ever)?\s+(?:you\s+(?:were|have\s+been|'ve\s+been)\s+told|(?:your|the)\s+(?:\w+\s+){{0,2}}"
    rf"(?:says|said|told\s+you))\b|\beverything\s+(?:the\s+user\s+told\s+you|you\s+(?:were|have\s+been)\s+"
    rf"(?:told|given))\b|\bthe\s+(?:user|human|operator|person\s+you\s+are\s+talking\s+to)(?:'s\s+(?:\w+\s+)?"
    rf"(?:instructions|requests?|confirmations?|choices|wishes|commands|orders|rules))?\b)"
)
_OWNED_CORE: Final = _OWNED.replace(_INSTR, _INSTR_CORE)
_OVERRIDE_VERB = (
    r"(?:ignor\w*|disregard\w*|forget\w*|forgot|unlearn\w*|drop|dropped|dropping|discard\w*|throw\s+(?:away|out)|"
    r"set\s+(?:\w+\s+){0,3}?(?:aside|to\s+one\s+side)|put\s+aside|pay\s+no\s+(?:heed|attention)\s+to|bypass\w*|"
    r"overrid\w*|overrule\w*|abandon\w*|nullif\w*|dismiss\w*|neglect\w*|overlook\w*|circumvent\w*|suspend\w*|"
    r"lift|replace|skip|stop\s+(?:following|honou?ring|obeying|applying|respecting|adhering\s+to|listening\s+to)|"
    r"no\s+longer\s+(?:follow|obey|apply|honou?r|respect)|(?:do\s+not|don't|never|not)\s+(?:\w+\s+)?(?:follow|"
    r"obey|apply|honou?r|respect|heed|comply\s+with|listen\s+to)|ne\s+tiens\s+plus\s+compte|non\s+seguire)"
)
_VOID = (
    r"(?:(?:are|is|have\s+been|has\s+been|were|was|becomes?)\s+(?:now\s+|hereby\s+|all\s+)?(?:void|cancell?ed|"
    r"obsolete|superseded|withdrawn|revoked|replaced|suspended|lifted|removed|disabled|out\s+of\s+date|outdated|"
    r"a\s+draft|invalid|null|deprecated|overridden|rescinded|no\s+longer\s+\w+)|no\s+longer\s+(?:apply|applies|"
    r"bind\w*|matter\w*|valid|in\s+effect|relevant|hold|holds|count)|carr(?:y|ies)\s+no\s+weight|withdrawn|"
    r"superseded)"
)
_OVERRIDE: Final = re.compile(
    rf"\b{_OVERRIDE_VERB}\b(?:\s+(?:all|any|every|each|of|the|whatever|everything|about|in|from|so\s+far|"
    rf"part\s+of|for\s+a\s+moment|just|completely|entirely))*\s*(?:\S+\s+){{0,4}}?{_OWNED}|"
    rf"(?<!if\s)(?<!when\s)(?<!whether\s){_OWNED_CORE}[^.!?\n]{{0,60}}?\b{_VOID}|\b(?:set|put|cast|push)\s+{_OWNED}\s+(?:\w+\s+)?(?:aside|to\s+one\s+side|"
    rf"away)\b|"
    rf"\bconsider\s+(?:every|all|any|the)\s+(?:\w+\s+){{0,6}}?{_VOID}|\bdo\s+not\s+apply\s+the\b"
)
_OVERRIDE_ANY: Final = re.compile(rf"\b{_OVERRIDE_VERB}\b(?:\s+\S+){{0,4}}?\s+{_INSTR}\b")
_AUTHORITY: Final = re.compile(
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
    r"\b(?:new|updated)\s+instructions\s+(?:follow|below)\b|\bthe\s+only\s+(?:valid\s+)?(?:task|rule|"
    r"instruction)s?\s+(?:now\s+)?is\b|\b(?:your|the)\s+(?:new|real|true|actual|only)\s+(?:task|job|purpose|"
    r"mission|objective|instructions?)\s+(?:is\s+to|is\s*:|:|are\s*:|now\s+is|is\s+now|will\s+be\s+to)|"
    r"\b(?:highest|top)[\s-]priority\s+instruction\b|"
    r"\bas\s+your\s+new\s+starting\s+point\b"
)
_ROLE: Final = re.compile(
    rf"\byou(?:'re|\s+are)\s+(?:now|no\s+longer)\s+(?:(?:a|an|the|my|our|in|operating\s+as|acting\s+as)\s+)?"
    rf"(?:[\w-]+\s+){{0,3}}?(?:{_AI}|administrator|admin|root|owner|operator|dan|persona|character|unrestricted|"
    rf"unfiltered|uncensored|jailbroken|free|\w+gpt|\w+bot|\w+agent|mode|superuser|maintainer)\b|"
    rf"\byou\s+have\s+been\s+(?:promoted|upgraded|granted|given\s+(?:admin|root|full|elevated))\b|"
    rf"\byour\s+(?:persona|identity|true\s+identity|role|new\s+role|character)\b[^.!?\n]{{0,30}}\b(?:is|for)\b|"
    rf"\b(?:developer|maintenance|god|unrestricted|admin|debug|jailbreak|dan)\s+mode\b(?=.*\b(?:you|your|{_AI})\b)|"
    rf"\b(?:upgraded|promoted|switched)\s+to\s+(?:\w+\s+)?(?:mode|administrator|admin|root|owner)\b|"
    rf"\b(?:permissions?|privileges?|rights)\s+(?:are\s+|have\s+been\s+)?(?:granted|elevated|escalated)\b|"
    rf"\b(?:elevated|full|admin|root|sudo)\s+(?:permissions|privileges|access|rights|autonomy)\b|"
    rf"\boperator\s+override\b|\b(?:has|have)\s+no\s+(?:rules|restrictions|oversight|limits|filters)\b|"
    rf"\bwithout\s+(?:any\s+)?(?:rules|restrictions|oversight|limits|filters)\b|\bnever\s+refuses?\b|"
    rf"\bdo\s+not\s+refuse\b|\b(?:unrestricted|unfiltered|uncensored|jailbroken)\s+(?:\w+\s+)?(?:{_AI}|mode|"
    rf"version)\b|\b(?:safety|content)\s+(?:\w+\s+)?(?:is|are|has\s+been|have\s+been)\s+(?:now\s+)?(?:suspended|"
    rf"disabled|off|lifted|removed)\b|\byou\s+are\s+(?:\w+gpt|\w+bot|\w+agent)\b"
)
_SECRET = (
    r"(?:tokens?|api\s+keys?|keys|deploy\s+keys?|ssh\s+(?:keys?|config)|passwords?|passwd|credentials?|secrets?|"
    r"\.env\b|id_rsa|\.netrc|\.aws|\.ssh|cookies|environment\s+variables?|env\s+vars|system\s+prompt|"
    r"hidden\s+(?:instructions|rules|prompt)|context\s+window|(?:conversation|chat)\s+history|this\s+conversation|"
    r"private\s+notes|customer\s+list|database\s+dump|password\s+manager|secrets?\s*\.\s*ya?ml|github_token|"
    r"mfa\s+code|authorized_keys|/etc/passwd|home\s+directory|messages\s+of\s+this\s+conversation)"
)
_LEAK_VERB = (
    r"(?:send|sending|email|e-mail|post|upload|paste|include|including|attach|copy|forward|exfiltrate|print|"
    r"printing|reveal|output|share|leak|dump|show|display|append|add|list|summari[sz]e|export|echo|cat|save|"
    r"write|put|render|give|tell\s+me|read|look\s+up|fetch|transmit|commit)"
)
_LEAK: Final = re.compile(rf"\b{_LEAK_VERB}\b(?:\s+\S+){{0,8}}?\s+(?:the\s+)?{_SECRET}")
_NEGATED: Final = re.compile(r"\b(?:never|not|don't|no|without)\s+(?:\w+\s+)?$")
_DEST: Final = re.compile(
    r"https?://|\b[\w.+-]+@[\w-]+\.[\w.]+|\bto\s+(?:me|us)\b|\b(?:the\s+)?address\b|\b(?:your|the|its)\s+(?:next\s+)?"
    r"(?:reply|replies|answer|response|summary|output)\b|\bcommit\s+message|\bpull\s+request|\bdescription\b|"
    r"\breadme\b|\bgist\b|\bpublic\s+note|\bnote\s+(?:titled|named)|\bbucket\b|\bserver\b|\bfooter\b|"
    r"\bsignature\b|\bdiagnostics\b|\b(?:\d{1,3}\.){3}\d{1,3}\b|\bnc\s+\S+|\bcurl\b|\bpaste\s+site"
)
_HIDE: Final = re.compile(
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
    r"\bask\s+for\s+their\s+password\b"
)
_ACT: Final = re.compile(
    r"\bpush\w*\s+(?:\w+\s+){0,3}?(?:straight|directly)?\s*to\s+main\b|\bforce[\s-]?push\w*|--force\b|"
    r"\brm\s+-rf\b|\b(?:delete|deleting|wipe|wiping|remove|erase|purge|drop)\s+(?:\w+\s+){0,3}?(?:tests?|test\s+"
    r"(?:directory|suite)|logs?|audit\s+log|notes?|changelog|repository|repo|database|branch(?:es)?|archive|"
    r"backups?|folder|history|files?)\b|\bwipe\b|\bdisabl\w*\s+(?:\w+\s+){0,2}?(?:ci|tests?|linter|hooks?|"
    r"pre-commit|checks?|safety|review|test\s+suite)\b|\bskip\w*\s+(?:\w+\s+){0,2}?(?:tests?|test\s+suite|review|"
    r"checks?|hooks?|backup|confirmation|approval)\b|\bwithout\s+(?:asking|review\w*|reading|running|"
    r"confirmation|approval|checking|questions|permission)\b|\bapprov\w*\s+(?:every|all|it|the|each)\b|"
    r"\bmerg\w*\s+(?:directly|without|it)\b|\b(?:npm|twine|cargo)\s+publish\b|\bpublish\s+without\b|"
    r"\bbackdoor\b|\bauthorized_keys\b|\bchange\s+the\s+remote\b|--no-verify\b|\breport\s+success\b|"
    r"\b(?:download\w*|fetch\w*)\s+and\s+run\w*|\bcarry\s+out\s+whatever\b|\brun\w*\s+(?:the\s+)?(?:\w+\s+)?"
    r"(?:script|installer|command)s?\s+(?:in|from|at)\s+(?:the\s+link|this\s+link|scripts/|https?://)|"
    r"\brun\w*\s+(?:the\s+)?(?:cleanup|wipe|reset|deploy|installer|production)\b|\bgrant\w*\s+(?:\w+\s+){0,3}?"
    r"admin\b|\b(?:edit|write)\s+files\s+outside\b|\bstop\s+asking\b|\bnever\s+ask\b|\bdo\s+not\s+need\s+to\s+"
    r"check\b|\btracking\s+script\b|\binclude\s+a\s+link\b|\brespond\s+to\s+every\b|"
    r"\bexfiltrat\w*|\bexport\s+the\s+vault\b|\binsert\s+the\s+following\b"
)
_TOOL: Final = re.compile(
    r"\b(?:call|invoke|use)\s+(?:the\s+|your\s+)?(?:\w+\s+)?tool\b|\"tool\"\s*:|\bcall\s+\w+_\w+\b|"
    r"\b(?:call|invoke)\s+(?:\w+\s+){1,2}with\s+(?:path|arguments?|args|params|parameters|input)\b|"
    r"\bcurl\b[^\n]{0,80}(?:\s-d\s|--data|\|\s*(?:sh|bash))|\|\s*nc\s|\bexecute\s*:"
)
_MENTIONS_AI: Final = re.compile(rf"\b{_AI}\b")
_LEAK_PROMPT: Final = re.compile(
    r"(?<!would\s)(?<!could\s)(?<!did\s)\b(?:reveal|print|show|output|repeat|leak|display|dump|share|tell\s+me)\s+"
    r"(?:\w+\s+){0,2}?(?:your|the)\s+(?:\w+\s+){0,2}?(?:system\s+(?:prompt|message)|hidden\s+(?:instructions|"
    r"rules|prompt)|context\s+window|initial\s+prompt)\b|\b(?:reveal|print|show|output|repeat|leak|display|dump|"
    r"share|tell\s+me)\s+(?:\w+\s+)?your\s+(?:\w+\s+)?(?:instructions|rules|prompt)\b"
)
_SEND_OUT: Final = re.compile(
    rf"\b{_LEAK_VERB}\b[^.!?\n]{{0,80}}?(?:https?://|\b[\w.+-]+@[\w-]+\.[\w.]+|\b(?:\d{{1,3}}\.){{3}}\d{{1,3}}\b|"
    rf"\bbackup\s+server\b|\bexternal\s+\w+)"
)
_EXFILTRATE: Final = re.compile(r"\bexfiltrate\b")
_TRIGGER: Final = re.compile(
    r"\b(?:when|whenever|if|once|after|upon|the\s+moment|each\s+time|every\s+time|as\s+soon\s+as)\b"
    r"[^.!?\n]{0,60}?\b(?:this|the)\s+(?:note|memory|message|text|comment)\b[^.!?\n]{0,40}?\b(?:in\s+your|your\s+"
    r"context|your\s+prompt|recall\w*|retriev\w*|load\w*|shows?\s+up|ends?\s+up|reach\w*)|"
    r"\b(?:when|whenever|if|once|after|upon)\s+(?:you\s+)?(?:have\s+)?(?:read|see|recall|load|retrieve)\w*\s+this\s+"
    r"(?:note|memory|message)\b"
)
_ORDER_CLAUSE: Final = re.compile(
    r",\s*(?:please\s+|then\s+|just\s+)?(?:append|add|include|reply|respond|answer|say|tell|run|send|delete|"
    r"treat|start|stop|begin|write|call|use|open|switch|change|set|make|post|approve|merge|push|remove|insert|"
    r"forget|ignore|obey|follow|leave|skip|disable|grant|give|put|copy)\b|\byou\s+(?:must|should|will|shall|are\s+to|"
    r"need\s+to|have\s+to)\b|\byour\s+(?:next|first|only)\s+\w+\s+(?:must|should|is)\b"
)
_ORDER_START: Final = re.compile(
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
    rf"get|trick|convince|force|persuade)|ask|tell|make|get)\s+(?:the|a|an|its|any|our)\s+(?:\w+\s+)?{_AI}\b"
)
_DISCUSSION: Final = re.compile(
    r"\b(?:injections?|jailbreaks?|attack(?:s|ers?)?|malicious|payloads?|phrasings?|phrases?|red[\s-]?team\w*|"
    r"adversarial|e\.g\.|such\s+as|for\s+example|for\s+instance|examples?|quoted|quotes?|demo(?:ed|s)?|"
    r"threat|exploit\w*|incident|classic|phishing|social\s+engineering|tried|test\s+strings?)\b"
)
_QUOTED: Final = re.compile(r"\"[^\"\n]{3,}\"|“[^”\n]{3,}”|(?<!\w)'[^'\n]{3,}'(?!\w)|«[^»\n]{3,}»|「[^」\n]{3,}」")
_SENTENCE_SPLIT: Final = re.compile(r"(?<=[.!?])\s+|[.!?](?=\s*$)|\n+|;\s+|\s+[—–]\s+|<!--|-->|%%")
_HIDDEN_BLOCK: Final = re.compile(r"<!--(.*?)(?:-->|$)|%%(.*?)(?:%%|$)", re.DOTALL)
_LINK_PARTS: Final = re.compile(r"\[([^\]\n]{3,})\]\(([^)\s]*)(?:\s+\"([^\"\n]*)\")?\)|\[//\]:\s*#\s*\((.*?)\)")
_PROSE_FENCES: Final = frozenset({"", "text", "txt", "markdown", "md", "prompt", "plain", "plaintext", "none"})
_CODE_COMMENT: Final = re.compile(r"^\s*(?:#+|//+|--|;+|/\*+|\*)\s?(.*)$")


# --------------------------------------------------------------------------------------------------------------
# Views


def prose_with_code(text: str) -> tuple[str, bool]:
    """The text as a reader takes its words, line count kept: inline code kept, the whole of a prose fence
    (no language, text, markdown, prompt), only the comments of a code fence. When the note's prose discusses
    attacks every fence and code span is blanked instead: they are then its quoted examples. Also says whether
    the note discusses attacks."""
    prose = vault_schema.strip_code(text)
    discusses = _DISCUSSION.search(prose.lower()) is not None
    if discusses:
        return prose, True
    if "```" not in text and "~~~" not in text:
        return text, False
    out = text.split("\n")
    for b in vault_schema.fenced_blocks(text):
        language = (b.info.split() or [""])[0].lower()
        content = b.content.split("\n")
        out[b.start_line] = ""
        for i, line in enumerate(content, start=b.start_line + 1):
            if i >= len(out):
                break
            if language in _PROSE_FENCES:
                out[i] = line
            else:
                m = _CODE_COMMENT.match(line)
                out[i] = m.group(1) if m else ""
        close = b.start_line + len(content) + 1
        if close < len(out):
            out[close] = ""
    return "\n".join(out), False


def _normalise(sentence: str) -> str:
    low = sentence.lower().replace("’", "'").replace("‘", "'").replace("_", " ")
    return " ".join(low.split())


def _sentences(view: str) -> Iterator[tuple[int, str, bool]]:
    """(position, sentence, hidden) for every sentence: paragraphs split at sentence ends, line breaks,
    semicolons and dashes; HTML and Obsidian comments, link texts and titles read as sentences of their own,
    marked hidden (text a reader of the rendered note does not see, or sees out of context)."""
    for m in _HIDDEN_BLOCK.finditer(view):
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        start = m.start(1) if m.group(1) is not None else m.start(2)
        if inner and inner.strip():
            yield from _split(inner, start, True)
    for m in _LINK_PARTS.finditer(view):
        for k in (1, 3, 4):
            part = m.group(k)
            if part and len(part.split()) >= 3:
                yield m.start(k), part, k != 1
        target = m.group(2) or ""
        if "%20" in target or "prompt=" in target:
            yield m.start(2), re.sub(r"%20|\+", " ", target), True
    yield from _split(view, 0, False)


def _split(text: str, offset: int, hidden: bool) -> Iterator[tuple[int, str, bool]]:
    pos = 0
    for m in _SENTENCE_SPLIT.finditer(text):
        if m.start() > pos:
            yield offset + pos, text[pos : m.start()], hidden
        pos = m.end()
    if pos < len(text):
        yield offset + pos, text[pos:], hidden


# --------------------------------------------------------------------------------------------------------------
# Scoring


def _verdict(s: str, strong: bool, framed: bool, mentions_ai: bool) -> str | None:
    """What the sentence does to its reader, or None when it is no directive. The costlier patterns are only
    tried once the addressee or frame they need is there."""
    weak = strong or _YOU.search(s) is not None or _ORDER_START.match(s) is not None
    tool = _TOOL_CUE.search(s) is not None and _TOOL.search(s) is not None
    if not (weak or framed or mentions_ai or tool):
        return None
    if _OVERRIDE_CUE.search(s) and (_OVERRIDE.search(s) or (strong and _OVERRIDE_ANY.search(s))):
        return "tells the reader to drop its instructions"
    if _AUTHORITY.search(s):
        return "claims authority over the reader's instructions"
    if _ROLE.search(s):
        return "reassigns the reader's role or permissions"
    if _EXFILTRATE.search(s):
        return "asks to send data out"
    if not (weak or framed or tool):
        return None
    leak = next((m for m in _LEAK.finditer(s) if not _NEGATED.search(s, 0, m.start())), None)
    if leak and (strong or framed or _DEST.search(s, leak.start())):
        return "asks to leak secrets or the conversation"
    if _LEAK_PROMPT.search(s):
        return "asks to leak secrets or the conversation"
    if (strong or framed) and _SEND_OUT.search(s):
        return "asks to send data out"
    hide = _HIDE.search(s) is not None
    if hide and (strong or framed):
        return "asks to hide something from the user"
    if tool and (strong or framed or _DEST.search(s)):
        return "asks for a tool call"
    if (strong or framed or hide or tool) and _ACT.search(s):
        return (
            "asks to hide something from the user"
            if hide and not (strong or framed)
            else ("asks for a tool call" if tool and not (strong or framed) else "orders an unsafe action")
        )
    if _TRIGGER.search(s) and (_ORDER_CLAUSE.search(s) or _ORDER_START.match(s)):
        return "sets a trigger for when the reader sees this note"
    return None


_TOOL_CUE: Final = re.compile(r"tool|curl|\bnc\b|execute|call|invoke")
_OVERRIDE_CUE: Final = re.compile(
    r"ignor|disregard|forg[eo]t|unlearn|drop|discard|throw|aside|heed|attention|bypass|overrid|overrul|abandon|"
    r"nullif|dismiss|neglect|overlook|circumvent|suspend|lift|replace|skip|stop|longer|follow|obey|apply|honou?r|"
    r"respect|comply|listen|void|cancel|obsolete|supersed|withdraw|revok|outdated|out of date|draft|invalid|null|"
    r"deprecat|rescind|weight|consider|tiens|seguire|side"
)


_PARAGRAPH_BREAK: Final = re.compile(r"\n[ \t>]*\n")


def scored_hits(view: str) -> Iterator[tuple[str, int, str]]:
    """(label, position, sentence) of every sentence of `view` that reads as a directive to its reader."""
    text, discusses = prose_with_code(view)
    previous = ""
    addressed = False  # an earlier sentence of the paragraph named an AI as the one spoken to
    last_end = -1
    last_hidden = False
    for pos, raw, hidden in _sentences(text):
        if pos < last_end or hidden != last_hidden or _PARAGRAPH_BREAK.search(text, max(last_end, 0), pos):
            addressed, previous = False, ""
        last_end, last_hidden = pos + len(raw), hidden
        s = _normalise(raw)
        if not s:
            continue
        if discusses or _DISCUSSION.search(s) or (previous.endswith(":") and _DISCUSSION.search(previous)):
            if s.startswith(('"', "“", "'", "«")):
                previous = s
                continue  # a quotation introduced by a sentence about an attack
            s = _QUOTED.sub(" ", s)
            if REPORTED.search(s):
                previous = s
                continue  # what an attack makes a model do, reported
        mentions_ai = _MENTIONS_AI.search(s) is not None
        vocative = mentions_ai and _VOCATIVE.search(s) is not None
        strong = vocative or addressed or (mentions_ai and _AI_SUBJECT.search(s) is not None)
        framed = (hidden and mentions_ai) or _FRAME.search(s) is not None
        label = _verdict(s, strong, framed, mentions_ai)
        addressed = addressed or (vocative and label is None and (s.endswith(":") or len(s.split()) <= 6))
        if label is not None and not (discusses and not hidden and _plainly_reported(s)):
            yield label, pos, raw.strip()
        previous = s


def _plainly_reported(s: str) -> bool:
    """A sentence of a write-up that reports what an attack did ("the payload told the assistant to email the
    .env file"): past tense, third person."""
    return re.search(r"\b(?:told|asked|said|tried|instructed|claimed|wanted|demoed)\b", s) is not None and not (
        _YOU.search(s)
    )
