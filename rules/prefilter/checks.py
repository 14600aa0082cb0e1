"""The entry points: every family run over one text (`check_text`) or over every string of a write
(`check_fields`, `require_clean`), findings de-duplicated and capped.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Final

from agentmd.rules.prefilter.core import Finding, PrefilterRefused, Verdict
from agentmd.rules.prefilter.credentials import secret_findings
from agentmd.rules.prefilter.directives import directive_findings
from agentmd.rules.prefilter.executable import executable_findings
from agentmd.rules.prefilter.hidden_unicode import unicode_findings

MAX_PER_CODE: Final = 20  # findings kept per (field, code)
MAX_DEPTH: Final = 32  # nesting accepted by check_fields
SHORT_TEXT: Final = 256  # texts up to this long are remembered by `_check_short`


def _cap(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (field, code, line), at most MAX_PER_CODE per (field, code)."""
    kept: list[Finding] = []
    per_code: Counter[tuple[str, str]] = Counter()
    seen: set[tuple[str, str, int | None]] = set()
    for f in findings:
        key = (f.field, f.code, f.line)
        if key in seen or per_code[(f.field, f.code)] >= MAX_PER_CODE:
            continue
        seen.add(key)
        per_code[(f.field, f.code)] += 1
        kept.append(f)
    return kept


def check_text(text: str, field: str = "body") -> list[Finding]:
    """Every prefilter finding in one piece of text (a title, a body, one tag...). Empty means clean."""
    if not text:
        return []
    findings: list[Finding] = []
    findings += unicode_findings(text, field)
    findings += secret_findings(text, field)
    findings += executable_findings(text, field)
    findings += directive_findings(text, field)
    return _cap(findings)


@functools.lru_cache(maxsize=4096)
def _check_short(text: str, field: str) -> tuple[Finding, ...]:
    """`check_text` of a short text, remembered: field names and the short values writes repeat (a type, a
    project, a tag, a why) are read once, not on every write. The checks depend on nothing but the text, so a
    remembered answer is the answer."""
    return tuple(check_text(text, field))


def _check(text: str, field: str) -> list[Finding] | tuple[Finding, ...]:
    return _check_short(text, field) if len(text) <= SHORT_TEXT else check_text(text, field)


_SAFE_KEY = re.compile(r"[A-Za-z0-9_\-]{1,64}")


def _walk(value: object, path: str, out: list[Finding], depth: int, active: set[int]) -> None:
    if isinstance(value, str):
        out.extend(_check(value, path))
        return
    if isinstance(value, bytes | bytearray):
        out.extend(check_text(bytes(value).decode("utf-8", "replace"), path))
        return
    if not isinstance(value, Mapping | list | tuple | set | frozenset):
        return  # numbers, booleans, dates and None carry no text
    if depth >= MAX_DEPTH or id(value) in active:
        message = f"the value is nested more than {MAX_DEPTH} levels deep or contains itself: flatten it."
        out.append(Finding("input:too-deep", path or "<root>", message, None))
        return
    active.add(id(value))
    try:
        if isinstance(value, Mapping):
            for i, (key, item) in enumerate(value.items()):
                key_text = key if isinstance(key, str) else str(key)
                key_field = f"{path}.<key {i}>" if path else f"<key {i}>"
                key_findings = _check(key_text, key_field)
                out.extend(key_findings)
                name = key_text if _SAFE_KEY.fullmatch(key_text) and not key_findings else f"<key {i}>"
                _walk(item, f"{path}.{name}" if path else name, out, depth + 1, active)
        else:
            items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
            for i, item in enumerate(items):
                _walk(item, f"{path}[{i}]", out, depth + 1, active)
    finally:
        active.discard(id(value))


def check_fields(fields: Mapping[str, object]) -> Verdict:
    """Run every prefilter over every string of a write: str values, list items and nested mappings.

    Field names follow the path: ``title``, ``tags[2]``, ``related.x``. A key that is not a plain name, or that
    itself trips a filter, is named ``<key N>`` so that a field name never echoes a secret.
    """
    findings: list[Finding] = []
    _walk(fields, "", findings, 0, set())
    return Verdict(ok=not findings, findings=tuple(findings))


def require_clean(fields: Mapping[str, object]) -> Verdict:
    """`check_fields`, raising PrefilterRefused when anything was found; returns the clean verdict."""
    verdict = check_fields(fields)
    if not verdict.ok:
        raise PrefilterRefused(verdict)
    return verdict
