"""Words of Chinese and Japanese text, which has no spaces between them.

The index makes each CJK ideograph, hiragana and katakana a term of its own (engine/index/fulltext/analyzer.py), so a
word of several such characters is found as a phrase of its characters. A query cannot be split into words
without a dictionary, so each run of CJK characters is read as its overlapping pairs (`中文输入法` -> `中文`,
`文输`, `输入`, `入法`), the usual way to search such text by BM25 without one: every two-character word of the
run is among the pairs, and a longer word is found through the pairs it holds. A run is cut first at the
particles that join words rather than carry meaning (`的`, `吗`, `の`, `を` ...), and pairs that are only
question words (`如何`, `怎么`, `什么` ...) are left out, as stop words are in other languages.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

from agentmd.vocabulary import CJK_CHARACTERS

_CJK_CLASS = CJK_CHARACTERS  # agentmd/vocabulary.py: the characters the index makes one term each
CJK_CLASS = _CJK_CLASS  # for the script shares (vault_schema/scripts.py)
_CJK = re.compile(f"[{_CJK_CLASS}]")
_PIECES = re.compile(f"[{_CJK_CLASS}]+|[^{_CJK_CLASS}]+")
# Particles that join words: a run of characters is cut at them. Only characters that are seldom part of
# a content word are here (不 and 有, for example, are not: 不同, 所有).
_PARTICLES = frozenset("的了吗呢吧啊呀嘛么哪些怎之及与或很都也还就把被让给着にをがはでとものへやかねよ")
# Pairs that only ask (how, what, which, whether ...) or point (this, that, we).
_STOP_PAIRS = frozenset(
    """如何 怎样 什么 哪些 是否 能否 可以 为什 一个 一下 这个 那个 这些 那些 我们 你们 他们 我的 你的 有哪 是什
    请问 需要 应该 如果 然后 因为 所以 但是 还是 或者 已经 并且 还有 以及""".split()  # noqa: SIM905
)


def has_cjk(text: str) -> bool:
    """Whether `text` holds a CJK character."""
    return _CJK.search(text) is not None


def words(text: str) -> list[str]:
    """`text` as words: its runs of other characters as they are, each CJK run as its character pairs (a run
    of one character as that character), cut at particles first, question-word pairs left out."""
    out: list[str] = []
    for piece in _PIECES.findall(text):
        if not _CJK.match(piece):
            out.append(piece)
            continue
        for run in _runs(piece):
            if len(run) == 1:
                out.append(run)
            else:
                out.extend(p for i in range(len(run) - 1) if (p := run[i : i + 2]) not in _STOP_PAIRS)
    return out


def bridges(text: str, doc_freq: Callable[[str], int]) -> set[str]:
    """The character pairs of `text` that no note holds (`doc_freq` 0) standing between two pairs that notes
    do hold: the seam between two words (`示中` in `显示中文`), not a word the vault lacks. A pair at the edge
    of a run is never a seam, so a missing word there (`蓝牙`, `主从`) still counts as missing."""
    out: set[str] = set()
    for piece in _PIECES.findall(text):
        if not _CJK.match(piece):
            continue
        for run in _runs(piece):
            found = [doc_freq(run[i : i + 2]) > 0 for i in range(len(run) - 1)]
            for i in range(1, len(found) - 1):
                if not found[i] and found[i - 1] and found[i + 1]:
                    out.add(run[i : i + 2])
    return out


def _runs(piece: str) -> list[str]:
    runs: list[str] = []
    start = 0
    for i, ch in enumerate(piece):
        if ch in _PARTICLES:
            if i > start:
                runs.append(piece[start:i])
            start = i + 1
    if start < len(piece):
        runs.append(piece[start:])
    return runs


def pairs(terms: Sequence[str]) -> list[str]:
    """The pairs of neighbouring terms that are each one CJK character, joined (`中`, `文`, `输` -> `中文`,
    `文输`): what a note holds of a query's character pairs, which the index finds as phrases."""
    return [a + b for a, b in itertools.pairwise(terms) if len(a) == len(b) == 1 and _CJK.match(a) and _CJK.match(b)]
