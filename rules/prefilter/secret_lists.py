"""Secrets kept as lists or short codes rather than as one token: an account's recovery codes under their heading,
a wallet's or a program's key written out as a list of bytes, and a PIN or a door code after the word that names
it.

A recovery-code list is three or more lines of short codes (letters and digits, one hyphen or space inside at
most, a few to a line), most of them holding a digit, right under a line that names recovery or backup codes in
one of several languages. A key as bytes is a bracketed list of thirty-two or more numbers of one to three digits
(`~/.config/solana/id.json` holds sixty-four), with a wallet, keypair or private / secret key named on its line or
in the two lines before it: a list of measurements reads the same, so the name is what tells.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from agentmd.rules.prefilter.core import Lines
from agentmd.rules.prefilter.prose_passwords import not_a_pin

_CODES_LABEL = re.compile(
    r"(?i)(?:recovery|backup|emergency|one[- ]time|single[- ]use|2fa|mfa|scratch|rescue)[\s-]+codes?\b|"
    r"\bcodes?\s+(?:de\s+)?(?:secours|récupération|recuperación|recuperacion|respaldo|recuperação|recupero|"
    r"emergenza|backup|sauvegarde)|wiederherstellungs-?codes?|backup-?codes?|notfall-?codes?|herstelcodes?|"
    r"back-?up-?codes?|återställningskoder|reservkoder|gjenopprettingskoder|gendannelseskoder|palautuskoodit|"
    r"varakoodit|kody\s+(?:zapasowe|odzyskiwania|awaryjne)|záložní\s+kódy|kódy\s+pro\s+obnovení|"
    r"резервн\w*\s+код\w*|код\w*\s+(?:восстановления|відновлення)|恢复码|恢復碼|復原碼|备用码|備用碼|"
    r"リカバリーコード|バックアップコード|復旧コード|복구\s*코드|백업\s*코드"
)
_CODE: Final = r"[A-Za-z0-9]{4,12}(?:[- ][A-Za-z0-9]{3,12})?"
_CODE_LINE = re.compile(
    rf"^\s*(?:[-*•+]\s+|\d{{1,2}}[.)]\s+|\[[ x]\]\s+)?`?"
    rf"(?P<codes>{_CODE}(?:(?:[ \t]{{2,}}|\s*[,;|]\s*|\t)`?{_CODE}`?){{0,5}})`?\s*$"
)
_CODE_SPLIT = re.compile(r"[ \t]{2,}|\s*[,;|]\s*|\t|`")
_MIN_CODES: Final = 3


def recovery_code_lines(text: str) -> Iterator[int]:
    """The 1-based line of each heading that names recovery codes and has such a list under it."""
    if _CODES_LABEL.search(text) is None:
        return
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if _CODES_LABEL.search(line) is None:
            continue
        codes: list[str] = []
        for following in lines[number + 1 : number + 40]:
            if not following.strip() and not codes:
                continue  # a blank line between the heading and its list
            m = _CODE_LINE.match(following)
            if m is None:
                break
            codes.extend(c for c in _CODE_SPLIT.split(m.group("codes")) if c)
        with_digit = sum(any(ch.isdigit() for ch in c) for c in codes)
        stand_in = any(len({ch for ch in c.lower() if ch.isalnum()}) < 4 for c in codes) or len(set(codes)) < len(codes)
        if len(codes) >= _MIN_CODES and 3 * with_digit >= 2 * len(codes) and not stand_in:
            yield number + 1  # (a code of three characters or fewer, `xxxxx-xxxxx`, or one repeated: a stand-in)


_BYTE_LIST = re.compile(r"[\[{(]\s*(?:\d{1,3}\s*,\s*){31,}\d{1,3}\s*,?\s*[\]})]")
_KEY_NAME = re.compile(
    r"(?i)solana|keypair|key[\s_-]?pair|id\.json|wallet|private[\s_-]?key|secret[\s_-]?key|privkey|seckey|"
    r"signing[\s_-]?key|secret_?bytes|key_?bytes|seed[\s_-]?bytes"
)


def byte_key_lines(text: str) -> Iterator[int]:
    """The 1-based line where each list of 32 or more byte values that a key name stands beside begins."""
    if text.count(",") < 31:
        return
    lines = Lines(text)
    for m in _BYTE_LIST.finditer(text):
        values = [int(v) for v in re.findall(r"\d+", m.group())]
        if len(set(values)) < len(values) // 4:
            continue  # mostly one value repeated: zeros, a stand-in
        start = m.start()
        for _ in range(3):  # its own line and the two before it
            start = text.rfind("\n", 0, max(0, start - 1)) + 1
        if _KEY_NAME.search(text, start, m.start()):
            yield lines.at(m.start())


# A code of digits that opens something, after a word that names it: a card's or SIM's PIN and PUK, a door, gate,
# garage, alarm, safe or lockbox code, in several languages ("PIN: 5905", "Türcode … ist 291417", "Kod do sejfu …:
# 3416-72", "Alarm şifresi 0599", "the garage keypad code is 7 – 9 – 5 – 1"). Four to twelve digits, single digits
# may stand apart; a year, a run of one digit or a counting run is no code.
_OPENS: Final = (
    r"door|gate|garage|keypad|alarm|safe|lockbox|lock|entry|building|intercom|buzzer|front\s+door|key\s*safe|"
    r"porte|portail|alarme|coffre|puerta|portón|alarma|caja\s+fuerte|porta|portão|cofre|cancello|cassaforte|"
    r"drzwi|sejfu|alarmu|domofonu|bramy|deur|poort|kluis|dveří|trezoru|двер\w*|сейфа|домофона|сигнализации"
)
_DIGIT_CODE = re.compile(
    rf"(?i)(?:(?-i:\b(?:PIN|PUK|MPIN|TPIN|UPI\s+PIN)\d?\b)|\bpin[\s-]?(?:code|kode|koodi|kod)\w*|\bpincode\w*|\bcode\s+pin\b|"
    rf"\b(?:{_OPENS})[\s-]*(?:code|kod|kode|koodi|código|codice|kód)\w*|digicode|"
    r"[^\W\d_]*(?:tür|tor|alarm|tresor|zugangs|schloss|garagen|safe)code\w*|"
    rf"\b(?:code|código|codice|kod|kód|code)\s+(?:(?:de|du|del|da|do|della|dell['’]|d['’]|of|for|to|od|от)\s*)"
    rf"(?:(?:la|le|l['’]|the|a|o)\s+)?(?:{_OPENS})\b|"
    rf"\b(?:{_OPENS})\s+(?:şifre(?:si)?|kodu)|κωδικός\s+(?:της|του)\s+\w+|код\s+(?:от\s+)?(?:{_OPENS}))"
    r"[^\n\d]{0,40}?(?:[ \t]*(?:is|ist|lautet|est|es|è|é|är|er|jest|je|είναι|это|:|=|—|-)[ \t]*|[ \t]+)"
    r"[\"'«„“]?(?P<val>\d(?:[ \t]?[–\-]?[ \t]?\d){3,11})#?(?![\d])"
)
DIGIT_CODE_GATES: Final = ("pin", "puk", "code", "kod", "kód", "şifre", "κωδικ", "код", "código", "codice")


def digit_code_lines(text: str) -> Iterator[int]:
    """The 1-based line of each code of digits after a word that names what it opens."""
    lines = Lines(text)
    for m in _DIGIT_CODE.finditer(text):
        if not_a_pin(re.sub(r"\D", "", m.group("val"))):
            continue
        yield lines.at(m.start())
