"""The sentences the directive scorer (`directive_score`) reads: a note's prose with the text of chat messages
kept as data in code and the comments of code, hidden comments and link texts, normalised (lower case, curly
apostrophes straightened, underscores read as spaces, white space folded) and cut at sentence ends; a long text
read in overlapping windows.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Final

from agentmd import vault_schema
from agentmd.rules.prefilter import directive_model
from agentmd.rules.prefilter.directive_requests import (
    CODE_COMMENT,
    DISCUSSION,
    HIDDEN_BLOCK,
    LINK_PARTS,
    PROSE_FENCES,
    SENTENCE_SPLIT,
)

# --------------------------------------------------------------------------------------------------------------
# Views


@functools.lru_cache(maxsize=4)
def prose_with_code(text: str) -> tuple[str, bool]:
    """The text as a reader takes its words, line count kept: inline code kept, the whole of a prose fence
    (no language, text, markdown, prompt), only the comments of a code fence. When the note's prose discusses
    attacks every fence and code span is blanked instead: they are then its quoted examples. Also says whether
    the note discusses attacks. The last few answers are kept: the scorer and the segment reader
    (`directive_addressed`) both read the same view of a note."""
    prose = vault_schema.strip_code(text)
    discusses = talks_about_attacks(prose.lower())
    if discusses:
        return prose, True
    if "```" not in text and "~~~" not in text:
        return text, False
    out = text.split("\n")
    for b in vault_schema.fenced_blocks(text):
        language = (b.info.split() or [""])[0].lower()
        content = b.content.split("\n")
        spoofed = _CHAT_ROLE.search(b.content) is not None
        out[b.start_line] = ""
        for i, line in enumerate(content, start=b.start_line + 1):
            if i >= len(out):
                break
            if language in PROSE_FENCES:
                out[i] = line
            else:
                m = CODE_COMMENT.match(line)
                out[i] = m.group(1) if m else (_message_text(line) if spoofed else "")
        close = b.start_line + len(content) + 1
        if close < len(out):
            out[close] = ""
    return "\n".join(out), False


# A chat message written as data ({"role": "tool", "content": "..."}): a model reads its text as a turn of the
# conversation, so the text of such a message in a code fence is read as prose.
_CHAT_ROLE: Final = re.compile(r"[\"']role[\"']\s*:\s*[\"'](?:tool|system|assistant|function|developer|ipython)[\"']")
_MESSAGE_VALUE: Final = re.compile(
    r"[\"'](?:content|text|message|output|result|instructions?)[\"']\s*:\s*\"((?:[^\"\\\n]|\\.){6,})\""
)


def _message_text(line: str) -> str:
    return " ".join(m.group(1) for m in _MESSAGE_VALUE.finditer(line))


def normalise(sentence: str) -> str:
    low = sentence.lower().replace("’", "'").replace("‘", "'").replace("_", " ")
    return " ".join(low.split())


_INLINE_CODE: Final = re.compile(r"(?<!`)`[^`\n]+`(?!`)")
_COMMENT_MARK: Final = re.compile(r"<!--|-->|%%")


def sentences(view: str) -> Iterator[tuple[int, str, bool]]:
    """(position, sentence, hidden) for every sentence: paragraphs split at sentence ends, line breaks,
    semicolons and dashes; HTML and Obsidian comments, link texts and titles read as sentences of their own,
    marked hidden (text a reader of the rendered note does not see, or sees out of context)."""
    if "`" in view and ("<!--" in view or "%%" in view):
        # a comment in inline code is shown as written (a quoted example, not hidden text): its markers are
        # blanked, so it is neither read as hidden nor split off as a sentence of its own
        view = _INLINE_CODE.sub(lambda m: _COMMENT_MARK.sub(lambda c: " " * len(c.group()), m.group()), view)
    for m in HIDDEN_BLOCK.finditer(view):
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        start = m.start(1) if m.group(1) is not None else m.start(2)
        if inner and inner.strip():
            yield from _split(inner, start, True)
    for m in LINK_PARTS.finditer(view):
        for k in (1, 3, 4):
            part = m.group(k)
            if part and len(part.split()) >= 3:
                yield m.start(k), part, k != 1
        target = m.group(2) or ""
        if "%20" in target or "prompt=" in target:
            yield m.start(2), re.sub(r"%20|\+", " ", target), True
    yield from _split(view, 0, False)


_WINDOW: Final = 600  # a run-on "sentence" longer than this is read in overlapping windows of this size
_OVERLAP: Final = 150


def _split(text: str, offset: int, hidden: bool) -> Iterator[tuple[int, str, bool]]:
    pos = 0
    for m in SENTENCE_SPLIT.finditer(text):
        if m.start() > pos:
            yield from _windows(text, pos, m.start(), offset, hidden)
        pos = m.end()
    if pos < len(text):
        yield from _windows(text, pos, len(text), offset, hidden)


def _windows(text: str, start: int, end: int, offset: int, hidden: bool) -> Iterator[tuple[int, str, bool]]:
    """text[start:end] as one sentence, or in overlapping windows cut at spaces when it is longer than a
    sentence can be (a directive is short; the patterns stay cheap on short input)."""
    if end - start <= _WINDOW + _OVERLAP:
        yield offset + start, text[start:end], hidden
        return
    while start < end:
        stop = min(end, start + _WINDOW)
        if stop < end:
            space = text.rfind(" ", start + _WINDOW // 2, stop)
            stop = space if space > 0 else stop
        yield offset + start, text[start:stop], hidden
        if stop >= end:
            return
        back = text.find(" ", max(start + 1, stop - _OVERLAP), stop)
        start = back + 1 if back > 0 else stop


# A comment introduced on its line as an example ("for example <!-- ... -->", "such as %% ... %%").
_COMMENT_EXAMPLE: Final = re.compile(
    r"(?i)\b(?:such\s+as|e\.g\.|for\s+example|for\s+instance|including|like\s+this)\b[^.!?\n]{0,80}(?:<!--|%%)\s*$"
)


def shown_as_example(text: str, pos: int) -> bool:
    """The comment whose text starts at `pos` is introduced as an example by the words before it on its line."""
    return _COMMENT_EXAMPLE.search(text, text.rfind("\n", 0, pos) + 1, pos) is not None


_ADDRESSES: Final = re.compile(
    r"https?://\S{1,300}|(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}\.[\w.]{1,63}|\bexample\.[\w.]{1,63}|"
    r"(?<![\w-])[\w-]{1,63}\.example\b[\w./-]{0,100}"
)


def talks_about_attacks(text: str) -> bool:
    """The text talks about attacks ("injection", "for example", "such as"), web and mail addresses aside
    ("collect.example.net" is no example)."""
    if DISCUSSION.search(text) is None:
        return False  # the addresses are only taken out of text that might discuss attacks: that costs more
    return DISCUSSION.search(_ADDRESSES.sub(" ", text)) is not None


def discusses(text: str) -> bool:
    """The text talks about attacks (see `talks_about_attacks`): for the other readers of segments."""
    return talks_about_attacks(text)


# A quotation the sentence names as a phrase ("the phrase '…'", "zdanie „…”", "عبارة «…»", "'…'는 문장", "'…' वाक्य"),
# calls something ("'…' as a CTF flag"), or reports as what someone typed or asked a third party ("a customer asked
# the bot to '…'", "tried '…' on the support bot"): the words inside are shown, not said to the reader. Words that
# could introduce an order quoted for the reader to run (a command, a prompt, a line to add) are not among them.
_PHRASE_NOUN: Final = (
    r"(?:phrases?|sentences?|strings?|wording|memes?|slogans?|expressions?|payloads?|satz|zeichenkette|chaîne|"
    r"frases?|frasa|cadena|oración|zdanie|fraza|фраз[ауы]?|речення|предложение|문장|문구|フレーズ|文言|句子|短语|"
    r"这句话|عبارة|جملة|جمله|عبارت|वाक्य|वाक्यांश|cümle(?:si)?|ifade(?:si)?|câu|cụm\s+từ|kalimat)"
)
_LIKE: Final = r"(?:like|such\s+as|вроде|как|типа|como|comme|wie|zoals|come|jak|gibi)"
_FOR_EXAMPLE: Final = (
    r"(?:for\s+example|for\s+instance|e\.g\.|such\s+as|like|bijvoorbeeld|zum\s+beispiel|z\.\s?b\.|par\s+exemple|"
    r"por\s+ejemplo|per\s+esempio|por\s+exemplo|например|na\s+przykład|esimerkiksi|till\s+exempel|for\s+eksempel|"
    r"örneğin|例えば|例如|比如|예를\s+들어|مثلاً|مثلا)"
)
_NAMED_BEFORE = re.compile(
    rf"(?i)(?:(?:^|[\s(])(?:the|a|an|this|that|such)?\s*{_PHRASE_NOUN}(?:\s+{_LIKE})?|"
    rf"(?:^|[\s(,]){_FOR_EXAMPLE})\s*[:,]?\s*$"
)
_REPORTED_BEFORE = re.compile(
    r"(?i)(?:\b(?:asked|told|instructed|prompted)\s+(?:the|a|an|its|their|his|her)\s+(?:\w+\s+){1,3}?to|"
    r"\b(?:be|been|being|was|were|is|are)\s+(?:told|asked|instructed)\s+to|"
    r"\b(?:typed|entered|pasted|tried|tested|sent|typing|entering|pasting|trying|testing|sending))\b"
    r"(?:(?!\byou\b|\byour\b)[^.!?\n]){0,50}$"
)
_NAMED_AFTER = re.compile(
    rf"(?i)\S{{0,2}}\s+(?:{_PHRASE_NOUN}|as\s+(?:a|an|the)\s)|"
    r"(?:などの|等の|という|といった|のような|之类的|这样的|等)?(?:文|文言|フレーズ|言葉|指示文|句子|短语|的话)|"
    r"\s?(?:라는|이라는|같은)\s*(?:문장|문구|말)"
)
_IN: Final = r"(?:[^{q}\n]|\n(?![ \t]*\n))"  # a quotation's characters: its closing marks aside, and no blank line
_QUOTATION = re.compile(
    "(?:(?<![\\w])'(?P<a>"
    + _IN.format(q="'")
    + "{3,240}?)'(?![\\w])|[\"“”](?P<b>"
    + _IN.format(q='"“”')
    + '{3,240}?)["”“]|«(?P<c>'
    + _IN.format(q="«»")
    + "{3,240}?)»|„(?P<d>"
    + _IN.format(q="„“”")
    + "{3,240}?)[“”]|‘(?P<e>"
    + _IN.format(q="‘’")
    + "{3,240}?)’|「(?P<f>"
    + _IN.format(q="「」")
    + "{3,240}?)」|『(?P<g>"
    + _IN.format(q="『』")
    + "{3,240}?)』)"
)


def blank_named_quotes(text: str) -> str:
    """`text` with the inside of every quotation its sentence names as a phrase, calls something, or reports as
    typed or asked of a third party turned to spaces (the quotation marks and every offset kept)."""
    if not any(q in text for q in "\"'“«„‘「『"):
        return text
    out: list[str] = []
    pos = 0
    for m in _QUOTATION.finditer(text):
        head = text[max(0, m.start() - 80) : m.start()]
        head = re.split(r"\n[ \t]*\n", head)[-1].replace("\n", " ")  # within its paragraph, lines joined
        if (
            _NAMED_BEFORE.search(head) is None
            and _REPORTED_BEFORE.search(head) is None
            and _NAMED_AFTER.match(text, m.end()) is None
        ):
            continue
        inside = text[m.start() + 1 : m.end() - 1]
        out.append(text[pos : m.start() + 1] + re.sub(r"[^\n]", " ", inside))
        pos = m.end() - 1
    out.append(text[pos:])
    return "".join(out)


# What a quotation's opening follows when it is a value, not something reported: a link's title, an attribute's
# value, a data field's value (JSON, or a frontmatter key), a list's item. Those are forms an order takes.
_VALUE_BEFORE = re.compile(r'(?:\]\([^)\s]*\s*|=\s*|"\s*:\s*|\[\s*|(?:^|\n)[ \t]*[\w.-]+:[ \t]*)$')
FRAME_WORDS: Final = 8
_UNSPACED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _size(text: str) -> int:
    """Words in `text`, a script written without spaces (Thai, Lao, Burmese, Khmer, kana, CJK, Hangul) counted
    as one word every two characters."""
    unspaced = len(_UNSPACED.findall(text))
    return len(_UNSPACED.sub(" ", text).split()) + unspaced // 2


def blank_reported_quotes(text: str) -> str:
    """`text` with the inside of every quotation in double or typographic marks turned to spaces (marks and offsets
    kept) where the words of its lines outside its quotations, `FRAME_WORDS` or more, read to the learned model
    as ordinary prose (under its veto): a report or a discussion that quotes what was said ("the page held hidden
    text: «…». The filter refused it"), in any language. A quotation that is a value stays."""
    if not any(q in text for q in '"“«„「『'):
        return text
    spans = [
        (m.start(), m.end())
        for m in _QUOTATION.finditer(text)
        if m.group()[0] != "'" and _VALUE_BEFORE.search(text, max(0, m.start() - 200), m.start()) is None
    ]
    if not spans:
        return text
    model = directive_model.model()
    out = list(text)
    by_line: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for a, b in spans:  # the quotations of each run of lines, from the line of an opening to that of its closing
        end = text.find("\n", b)
        by_line.setdefault((text.rfind("\n", 0, a) + 1, len(text) if end < 0 else end), []).append((a, b))
    for (start, end), inside in by_line.items():
        frame = list(text[start:end])
        for a, b in inside:
            frame[a + 1 - start : b - 1 - start] = " " * (b - a - 2)
        words = "".join(frame)
        if _size(words) < FRAME_WORDS or model.score(directive_model.model_view(words)) >= model.veto:
            continue
        for a, b in inside:
            out[a + 1 : b - 1] = (" " if c != "\n" else c for c in text[a + 1 : b - 1])
    return "".join(out)
