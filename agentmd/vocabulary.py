"""Names and word lists every layer shares, and how a value is put into words for a person (`in_words`): the
floor of the import graph (standard library only, no imports).

`vault_schema`, `rules`, `engine` and `hooks` may all import this module; it imports nothing of theirs, so it
can be read by the light hook entry point without loading the YAML or Markdown stacks.
"""

from __future__ import annotations

from typing import Final

# Hiragana, katakana (and their half-width forms), CJK radicals, ideographs and their extensions: the
# characters the index's tokenizer makes one term each (\p{Han}, \p{Hiragana}, \p{Katakana} there), as the
# body of a regular-expression character class. Chinese and Japanese put no spaces between words.
CJK_CHARACTERS: Final = (
    "\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3038-\u303b\u3041-\u309f\u30a0-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)

# Where the storage-rules contract lives in a vault, relative to its root.
VAULT_CONTRACT: Final = "standards/storage-rules.md"

# Function words that say nothing about which note is wanted. Kept short on purpose: words like "not",
# "no" or "new" can matter in a note title.
STOP_WORDS: Final = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself of off on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your yours
    yourself yourselves""".split()  # noqa: SIM905
)

# The filler people put in prompts to an agent, dropped (with the stop words) when a prompt becomes a query.
PROMPT_FILLER: Final = frozenset(
    """please pls thanks thank thx hi hello hey ok okay yes yeah yep no-op lets let let's us also now
    really actually maybe want wanted need needs something anything everything stuff thing things sure
    gonna go going kind sort bit lot see eg ie etc can't don't i'm i've it's that's there's what's
    we're you're""".split()  # noqa: SIM905
)

# The words a question uses to ask a memory for something rather than to say what it is about ("summarise
# what I wrote about X", "remind me what X is", "find my notes on X"). How sure a result is (the search's
# confidence) is read without them when the question has other words, so a note is not judged by whether it
# happens to say "wrote" or "remind"; the search itself still looks for every word.
REQUEST_WORDS: Final = frozenset(
    """summarise summarize summary recap wrote write written writing note noted jotted know knew remember
    remind recall tell told mention mentioned said say find show look explain describe notes info
    information details got""".split()  # noqa: SIM905
)

# The verbs a question about a time asks with ("what did I capture yesterday", "what happened last week",
# "what did I work on yesterday", "anything new since Monday"): a query of a time and these words alone lists
# the notes of that time (engine/search/dated.py).
TIME_QUESTION_WORDS: Final = frozenset(
    """capture captured captures saved save added add happen happened happening done work worked working
    learn learned learnt read change changed new decide decided""".split()  # noqa: SIM905
)

# The modal verbs of a question about what to do ("what should I work on today", "what will we ship next week"):
# such a question asks for advice or a plan, not for the notes of that time, so it is never listed by date.
MODAL_WORDS: Final = frozenset(["should", "shall", "must", "ought", "will", "would", "could", "might"])

# The months by name, in order: dates in queries (engine/search/when.py) and in note titles (vault_schema/note.py).
MONTHS: Final = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                 "november", "december")  # fmt: skip


def in_words(value: object) -> str:
    """A value as a person reads it: a mapping as `(key value, ...)`, a list comma-joined, never Python's repr."""
    if isinstance(value, dict):
        return "(" + ", ".join(f"{k} {in_words(v)}" for k, v in value.items()) + ")"
    if isinstance(value, list | tuple):
        return ", ".join(in_words(v) for v in value)
    return str(value)
