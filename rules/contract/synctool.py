"""The contract's `sync_tool_patterns`: file names a file-sync tool leaves in a vault, beyond the ones agentmd
knows (engine/synctools.py), so a tool it does not know can be taught without a new release.

    sync_tool_patterns:
      temp: ["*.partial-sync", ".cloudsync/"]          # never indexed, never committed
      conflict: ["{stem} (conflict *){ext}"]           # kept and committed, not indexed; named with the original
      placeholder: [".{stem}{ext}.cloudf"]             # the note {stem}{ext} is "not here", not deleted

Every entry is matched against a file's name (never its folder), ignoring case. An entry is a glob (`*` any
run of characters, `?` one character, `[abc]` / `[!abc]` one of / none of) or, written `re:...`, a Python
regular expression matched against the whole name. A `temp` entry ending in `/` names a folder the tool keeps
for itself: everything under it. A `conflict` or `placeholder` entry says where the original's name is: in
a glob `{stem}` (the name without its extension, or the whole name) and `{ext}` (the extension with its dot);
in a regular expression the groups `(?P<stem>...)` and `(?P<ext>...)`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from agentmd.rules.errors import RulesError

SYNC_PATTERN_KINDS: Final = ("temp", "conflict", "placeholder")
REGEX_PREFIX: Final = "re:"
MAX_PATTERN: Final = 200  # characters in one pattern
MAX_PATTERNS: Final = 50  # patterns under one kind


class PatternError(RulesError, ValueError):
    """A pattern that cannot be used; the message says what is wrong and how to write it."""


def compile_pattern(text: str, kind: str) -> re.Pattern[str]:
    """The compiled, case-insensitive, whole-name pattern of one entry of `kind` (a folder entry of `temp`
    without its trailing `/`). Raises `PatternError`."""
    if not text.strip():
        raise PatternError("is empty; write a glob such as `*.partial` or a regular expression `re:...`")
    if len(text) > MAX_PATTERN:
        raise PatternError(f"is over {MAX_PATTERN} characters; write a shorter pattern")
    body = text[:-1] if kind == "temp" and text.endswith("/") else text
    if "/" in body:
        raise PatternError(
            "holds a `/`; a pattern matches a file's name, not its folder (a `temp` entry may end in `/` to "
            "name a folder)"
        )
    if body.startswith(REGEX_PREFIX):
        try:
            pattern = re.compile(body[len(REGEX_PREFIX) :], re.IGNORECASE)
        except re.error as exc:
            raise PatternError(f"is not a regular expression ({exc})") from None
        groups = pattern.groupindex
        if kind != "temp" and "stem" not in groups:
            raise PatternError("has no group `(?P<stem>...)` naming the original; add one around the original's name")
        if set(groups) - {"stem", "ext"}:
            raise PatternError("has a named group other than `stem` and `ext`; name only those two")
        return pattern
    return re.compile(_glob(body, kind), re.IGNORECASE)


def _glob(text: str, kind: str) -> str:
    out: list[str] = []
    seen: set[str] = set()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            end = text.find("}", i)
            word = text[i + 1 : end] if end > 0 else ""
            if word not in ("stem", "ext"):
                raise PatternError("has a `{` that is not `{stem}` or `{ext}`; write `[{]` for the character")
            if kind == "temp":
                raise PatternError(f"uses {{{word}}}, which only `conflict` and `placeholder` patterns have")
            if word in seen:
                raise PatternError(f"uses {{{word}}} twice; the original's name is in one place")
            seen.add(word)
            out.append(r"(?P<stem>.+?)" if word == "stem" else r"(?P<ext>\.[^./]+)")
            i = end + 1
            continue
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[":
            end = text.find("]", i + 2)
            if end < 0:
                raise PatternError("has a `[` without its `]`; write `[[]` for the character")
            inner = text[i + 1 : end]
            inner = "^" + inner[1:] if inner.startswith("!") else inner
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    if kind != "temp" and "stem" not in seen:
        raise PatternError("has no `{stem}` saying where the original's name is; e.g. `{stem} (conflict *){ext}`")
    return "".join(out)


@dataclass(frozen=True)
class SyncToolPatterns:
    """The contract's added patterns, compiled (see the module docstring). Empty: nothing added."""

    temp: tuple[str, ...] = ()
    conflict: tuple[str, ...] = ()
    placeholder: tuple[str, ...] = ()
    _names: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)
    _folders: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)
    _conflicts: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)
    _placeholders: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def of(
        cls, temp: Iterable[str] = (), conflict: Iterable[str] = (), placeholder: Iterable[str] = ()
    ) -> SyncToolPatterns:
        """Compiled patterns; raises `PatternError` (validation runs first, so a loaded contract never does)."""
        temp, conflict, placeholder = tuple(temp), tuple(conflict), tuple(placeholder)
        return cls(
            temp,
            conflict,
            placeholder,
            tuple(compile_pattern(t, "temp") for t in temp if not t.endswith("/")),
            tuple(compile_pattern(t, "temp") for t in temp if t.endswith("/")),
            tuple(compile_pattern(c, "conflict") for c in conflict),
            tuple(compile_pattern(p, "placeholder") for p in placeholder),
        )

    def __bool__(self) -> bool:
        return bool(self.temp or self.conflict or self.placeholder)

    def is_temp(self, rel: str) -> bool:
        """Whether a vault-relative path is an added temp file or lies in an added tool folder."""
        if not (self._names or self._folders):
            return False
        parts = rel.rstrip("/").split("/")
        if self._folders and any(p.fullmatch(part) for part in parts for p in self._folders):
            return True
        return any(p.fullmatch(parts[-1]) for p in self._names)

    def is_temp_folder(self, name: str) -> bool:
        return any(p.fullmatch(name) for p in self._folders)

    def conflict_original(self, name: str) -> str | None:
        """The original's file name when `name` is a conflict copy by an added pattern, else None."""
        return _original(self._conflicts, name)

    def placeholder_original(self, name: str) -> str | None:
        """The file name a placeholder by an added pattern stands for, else None."""
        return _original(self._placeholders, name)


def _original(patterns: tuple[re.Pattern[str], ...], name: str) -> str | None:
    for pattern in patterns:
        m = pattern.fullmatch(name)
        if m is not None and m["stem"]:
            ext = m.groupdict().get("ext") or ""
            return m["stem"] + ext
    return None


NO_PATTERNS: Final = SyncToolPatterns()
