"""An agent's own file tools on a note in the vault: the door, then the content prefilters, on the text the tool
would leave in the file. The file guard hook (hooks/file_guard.py) asks this, in its own process or, when a
daemon serves the vault, through the daemon (`POST /v1/guard`), whose contract and compiled prefilters are
already loaded: a check in a new process spends about half a second compiling the prefilters' rules.

The file tools, by their `tool_input` fields (Claude Code's):
- `Write {file_path, content}`, `Edit {file_path, old_string, new_string, replace_all?}`,
  `MultiEdit {file_path, edits: [{old_string, new_string, replace_all?}]}`,
  `NotebookEdit {notebook_path, new_source, cell_id?, cell_type?, edit_mode?}`.

The door judges the vault-relative path for the actor `agent` (dot folders, the vault root, `alignment` and
`private` spaces and anything not a `.md` note are refused; `standing` and `shared` spaces are open). The
prefilters read, through the same entry point captures use (`check_fields`): Write's content; Edit's and
MultiEdit's replacements applied to the file's current text as Claude Code applies them (the first occurrence
unless `replace_all`), or, when an `old_string` is not in the file (the tool itself will then fail), the new
strings alone; NotebookEdit's new source. A refusal names the door's rule id or the prefilters' reason codes and
points to `memory_capture` (or `agentmd capture`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentmd.rules import ContractState

FILE_TOOLS: Mapping[str, str] = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
USE_CAPTURE = "save memories with the `memory_capture` MCP tool (or `agentmd capture`)"


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as fh:
            return fh.read()
    except OSError:
        return None


def _replace(text: str, edit: Mapping[str, Any]) -> str | None:
    """`text` after one Edit replacement, or None when its `old_string` is not there (the tool fails)."""
    old, new = edit.get("old_string"), edit.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str) or old not in text:
        return None
    return text.replace(old, new) if edit.get("replace_all") is True else text.replace(old, new, 1)


def note_fields(text: str) -> dict[str, str]:
    """A note's text as the fields the prefilters read: its frontmatter and its body."""
    from agentmd.vault_schema import split_frontmatter

    split = split_frontmatter(text)
    if split.yaml_text is None:
        return {"body": text}
    # blank lines stand for what comes before each part, so a refusal's "line N" is the file's line N
    before = text[: len(text) - len(split.body)].count("\n") if text.endswith(split.body) else 0
    return {"frontmatter": "\n" + split.yaml_text, "body": "\n" * before + split.body}


def written_text(
    tool: str, tool_input: Mapping[str, Any], target: Path, current: str | None = None
) -> dict[str, str] | dict[str, list[str]]:
    """The fields the prefilters read for one file tool call: the text it would leave in the file (`current`: the
    file's text, when the caller has read it already)."""
    if tool == "Write":
        content = tool_input.get("content")
        return note_fields(content if isinstance(content, str) else "")
    if tool == "NotebookEdit":
        source = tool_input.get("new_source")
        return {"new_source": source if isinstance(source, str) else ""}
    edits = _edits(tool, tool_input)
    text = _applied(tool, tool_input, current if current is not None else _read(target))
    if text is not None:
        return note_fields(text)
    return {"new_string": [e["new_string"] for e in edits if isinstance(e.get("new_string"), str)]}


def refusal_of(tool: str, tool_input: Mapping[str, Any], vault: Path, rel: str, state: ContractState) -> str | None:
    """Why a file tool's write to `rel` in `vault` (its real path) is refused, None when it may run. The door
    is asked first: a path it refuses (a link leading out of the vault among them) is never read."""
    from agentmd.engine.write.request import refusal
    from agentmd.rules.door import decide
    from agentmd.rules.prefilter import check_fields

    where = f"{rel} in the agentmd vault {vault}"
    if state.halted:
        return unchecked(tool, vault, rel, f"the storage-rules contract is invalid: {state.errors[0]}")
    path = Path(os.path.realpath(vault / rel))
    exists = os.path.isfile(path)
    names = os.stat(path).st_nlink if exists else 1
    if names > 1:  # a hard link: the write would change a note under another name, past the door that one meets
        return (
            f"agentmd file guard: {tool} to {where} is refused: the file has {names} names (a hard link), so a write "
            "through this one would also change the note under its other names, which the door judges apart. "
            f"Agents' file tools write only files with one name; {USE_CAPTURE}."
        )
    decision = decide(vault, rel, state.contract, actor="agent", creating=not exists)
    if not decision.allowed:
        return (
            f"agentmd file guard: {tool} to {where} is refused by the door ({decision.rule}): "
            f"{decision.reason.rstrip('.')}. Agents' file tools meet the same door as captures; {USE_CAPTURE}, "
            "which files them where agents may write."
        )
    current = _read(path) if exists else None  # read once: every check below reads this text
    if exists and tool in ("Edit", "MultiEdit") and _applied(tool, tool_input, current) is None:
        return (
            f"agentmd file guard: {tool} to {where} is refused: its old_string is not in the note as written (a "
            "curly quote for a straight one, other line ends), so what the edit would leave cannot be checked. "
            f"Read the note again and give the text exactly; {USE_CAPTURE}."
        )
    size = max(_size_of(tool_input), os.path.getsize(path) if exists else 0)
    if size > MAX_CHECKED_BYTES:  # checked in time or not at all: a hook past its time lets the tool run unchecked
        return (
            f"agentmd file guard: {tool} to {where} is refused: the note would be {size:,} bytes, over the "
            f"{MAX_CHECKED_BYTES:,} an agent's file tool may write (the checks of a larger note take longer than "
            f"a tool call may wait). Split it into smaller notes; {USE_CAPTURE}."
        )
    text = written_text(tool, tool_input, path, current)
    emptied = all(isinstance(v, str) and not v.strip() for v in text.values())
    body = text.get("body")
    bare = isinstance(body, str) and not body.strip() and bool(current and note_fields(current)["body"].strip())
    if exists and (emptied or bare):  # a deletion by another name, which agents' tools never make
        left = "empty" if emptied else "without its text (its frontmatter alone)"
        return (
            f"agentmd file guard: {tool} to {where} would leave the note {left}, which deletes it in all but name. "
            "Agents do not delete notes: to retire one use `agentmd retire` (it archives, never deletes), or leave "
            f"it for the person; {USE_CAPTURE}."
        )
    restamped = _restamped(tool, tool_input, current)
    if restamped:
        return (
            f"agentmd file guard: {tool} to {where} would {restamped}. The stamps (trust, status, "
            "filing_confidence, lifecycle) say what a note may be used for and who judged it; agents' file tools "
            "leave them as they are and the person changes them (to take a note out of use, `agentmd retire` "
            f"archives it); {USE_CAPTURE}, which stamps a new note itself."
        )
    verdict = check_fields(text)
    if not verdict.ok:
        return (
            f"agentmd file guard: {tool} to {where} would leave text the content prefilters refuse; "
            f"{refusal(verdict).rstrip('.')}. Take it out and try again: the `memory_capture` MCP tool (and "
            "`agentmd capture`) runs the same checks."
        )
    return None


MAX_CHECKED_BYTES = 2 * 2**20  # measured: the prefilters read 1 MB of prose in about 2 s on a loaded machine


def _size_of(tool_input: Mapping[str, Any]) -> int:
    """The bytes of text a call brings (Write's content, the edits' new strings, a notebook cell's source)."""
    edits = tool_input.get("edits")
    parts = [tool_input.get(k) for k in ("content", "new_string", "new_source")]
    parts += [e.get("new_string") for e in edits if isinstance(e, Mapping)] if isinstance(edits, list) else []
    return sum(len(p.encode("utf-8", "surrogatepass")) for p in parts if isinstance(p, str))


STAMPS = ("trust", "status", "filing_confidence", "lifecycle")
# what only a judgment stamps (a person's, or the review's)
CLAIMS = {"trust": {"trusted"}, "status": {"active"}, "filing_confidence": {"high"}, "lifecycle": {"pinned"}}


def _stamps(text: str) -> dict[str, str]:
    from agentmd.vault_schema import parse_note

    fields = parse_note("x.md", text.encode("utf-8", "surrogatepass"), 0).frontmatter
    return {k: str(fields[k]) for k in STAMPS if isinstance(fields, Mapping) and fields.get(k) is not None}


def _edits(tool: str, tool_input: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    edits_value = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    return [e for e in edits_value if isinstance(e, Mapping)] if isinstance(edits_value, list) else []


def _applied(tool: str, tool_input: Mapping[str, Any], text: str | None) -> str | None:
    """`text` (a note's) after an Edit's or MultiEdit's replacements, None when one does not apply."""
    for edit in _edits(tool, tool_input):
        text = None if text is None else _replace(text, edit)
    return text


def _restamped(tool: str, tool_input: Mapping[str, Any], before: str | None) -> str | None:
    """What a file tool's write would do to the stamps of a note holding `before` (None: a new note): change
    one, or write one into a new note. A notebook and an edit that does not apply (the tool fails) change none."""
    if tool == "NotebookEdit":
        return None
    after: str | None
    if tool == "Write":
        content = tool_input.get("content")
        after = content if isinstance(content, str) else ""
    else:
        after = _applied(tool, tool_input, before) if before is not None else None
        if after is None:
            return None
    now, then = _stamps(after), _stamps(before) if before is not None else {}
    if before is None:  # a new note may say it waits for review, not that it was judged
        claims = sorted(f"{k}: {v}" for k, v in now.items() if v.lower() in CLAIMS.get(k, ()))
        return f"write {', '.join(claims)} into a new note" if claims else None
    changed = sorted(k for k in set(now) | set(then) if now.get(k) != then.get(k))
    if not changed:
        return None
    k = changed[0]
    return f"change the note's {k} from {then.get(k, '(none)')!r} to {now.get(k, '(none)')!r}"


def unchecked(tool: str, vault: Path, rel: str, why: str) -> str:
    """The refusal of a write into the vault that could not be checked."""
    return (
        f"agentmd file guard: {tool} would write {rel} in the agentmd vault {vault}, and the guard "
        f"could not check it ({why}). An unchecked write would bypass the door and the content prefilters, so it "
        f"is refused; {USE_CAPTURE}, or fix the problem above and try again."
    )
