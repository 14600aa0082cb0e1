"""Merging a note both machines changed, as a note: its frontmatter key by key, its body line by line.

git merges text by lines, and two changes on neighbouring lines conflict: two machines that changed
different frontmatter keys (`status:` on one, `importance:` on the next line on the other) would leave a
conflict sibling for nothing. When git reports a content conflict in a note that has a common version, a
sync round merges the note itself (`merge_note`):

* each version is cut into frontmatter and body (`split_frontmatter`) and its frontmatter read as YAML
  (`load_yaml`, with its safety limits);
* the frontmatter is merged key by key against the common version: a key changed on one side only (edited,
  added or deleted) takes that side; the same change on both sides is taken once; a key changed on both
  sides to different values is a real conflict, except a list of plain values (`tags`, `aliases`,
  `related`), which is merged as a set: ours' items in ours' order, less the ones theirs removed, then the
  ones theirs added. Two sides that only added items give the union, without duplicates;
* the body is merged with `git merge-file` (git's own line merge, so changes to neighbouring body lines
  still conflict);
* the text written is ours' with only the lines of the keys theirs changed touched: a key theirs changed
  or added is copied as theirs wrote it (comments inside it and all; a new key goes after the key it
  follows in theirs), a key theirs deleted is cut, a merged list is written in ours' style (a flow list
  `[a, b]` stays one line; a block list is rewritten by the frontmatter writer). Key order, quoting,
  comments, blank lines, the fences, a byte-order mark and the newline style stay ours'. The merged block
  is read back and must hold exactly the merged values in that order, or the merge does not happen.

Anything else (a real conflict in a key or in the body, frontmatter that is not plain `key: value` lines,
a key written twice, text that is not UTF-8) leaves the note to the conflict sibling, as before.

Both sides adding the same path (no common version) with different text are two notes when both are
agent captures (`is_capture`: the `captured` date-time and the `filing_confidence` that capture and ingest
stamp): two machines captured the same title. Ours keeps the path and theirs takes the next free name
beside it (`free_name`: `<stem>-2.md`, `-3`…, as a capture names a note whose name is taken). A note a
person made on both machines (the same daily note) stays a conflict.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmd.engine.git.runner import GitCli

# The YAML readers and the frontmatter writer are imported where a note is merged: `status` reads this module's
# status helpers through engine/git/sync.py, and those imports would cost it over 100 ms.

_MISSING: Any = object()  # a key a version does not have
_SCALARS = (str, int, float, bool, type(None))
_CAPTURED = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


@dataclass(frozen=True)
class _Note:
    """One version of a note, cut for merging."""

    text: str
    values: dict[str, object]  # the frontmatter as read ({} without one)
    segments: list[tuple[str | None, str]]  # the block's lines: (key, its lines) or (None, lines between keys)
    head: str  # everything before the block: the BOM and the opening fence ("" without frontmatter)
    fence: str  # the closing fence line ("" without frontmatter)
    body: str

    @property
    def has_block(self) -> bool:
        return bool(self.head)

    def lines_of(self, key: str) -> str | None:
        return next((text for k, text in self.segments if k == key), None)


def _cut(text: str) -> _Note | None:
    """`text` cut into its block's key segments and body; None when its frontmatter cannot be merged by key."""
    from agentmd.vault_schema.errors import VaultSchemaError
    from agentmd.vault_schema.frontmatter import load_yaml, split_frontmatter, top_level_keys

    split = split_frontmatter(text)
    if split.yaml_text is None:
        return _Note(text, {}, [], "", "", text)
    yaml_text = split.yaml_text
    try:
        values = load_yaml(yaml_text)
    except VaultSchemaError:
        return None
    keys = top_level_keys(yaml_text)
    if keys is None or [k.key for k in keys] != list(values):  # a complex key, a key written twice, `true:`
        return None
    lines = yaml_text.splitlines(keepends=True)
    segments: list[tuple[str | None, str]] = []
    pos = 0
    starts = [k.line for k in keys] + [len(lines)]
    for i, k in enumerate(keys):
        if k.line > pos:
            segments.append((None, "".join(lines[pos : k.line])))
        end = starts[i + 1]
        while end > k.line + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
            end -= 1  # blank lines and unindented comments at a key's end belong to what follows
        segments.append((k.key, "".join(lines[k.line : end])))
        pos = end
    if pos < len(lines):
        segments.append((None, "".join(lines[pos:])))
    body_at = len(text) - len(split.body)
    block_at = text.find("\n") + 1
    fence = text[block_at + len(yaml_text) : body_at]
    return _Note(text, values, segments, text[:block_at], fence, split.body)


def _canon(value: Any) -> str:
    """A value as a comparable text (`1` and `true` differ, as YAML reads them)."""
    return "\0missing" if value is _MISSING else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _merge_list(base: Any, ours: Any, theirs: Any) -> list[Any] | None:
    """Two changed lists of plain values merged as sets (see the module docstring); None when they are not
    such lists."""
    base = [] if base is _MISSING or base is None else base
    lists = (base, ours, theirs)
    if not all(isinstance(v, list) and all(isinstance(x, _SCALARS) for x in v) for v in lists):
        return None
    base_set, theirs_set = {_canon(x) for x in base}, {_canon(x) for x in theirs}
    removed = base_set - theirs_set
    merged = [x for x in ours if _canon(x) not in removed]
    seen = {_canon(x) for x in merged}
    for x in theirs:
        if _canon(x) not in base_set and _canon(x) not in seen:
            merged.append(x)
            seen.add(_canon(x))
    return merged


def _merge_fields(base: _Note, ours: _Note, theirs: _Note) -> tuple[dict[str, object], dict[str, str]] | None:
    """The merged frontmatter in its order, and for each key where it comes from ("ours", "theirs" or
    "list"); None on a real conflict."""
    how: dict[str, str] = {}
    value: dict[str, object] = {}
    for key in [*ours.values, *(k for k in theirs.values if k not in ours.values)]:
        b, o, t = (n.values.get(key, _MISSING) for n in (base, ours, theirs))
        if _canon(o) == _canon(t) or _canon(t) == _canon(b):
            how[key], value[key] = "ours", o
        elif _canon(o) == _canon(b):
            how[key], value[key] = "theirs", t
        else:
            merged = _merge_list(b, o, t)
            if merged is None:
                return None
            how[key], value[key] = "list", merged
    order = [k for k in ours.values if value[k] is not _MISSING]
    for key in theirs.values:  # a key only theirs has goes after the key it follows in theirs
        if key in order or value[key] is _MISSING:
            continue
        before = list(theirs.values)[: list(theirs.values).index(key)]
        after = next((order.index(k) + 1 for k in reversed(before) if k in order), 0)
        order.insert(after, key)
    return {k: value[k] for k in order}, how


def _newline(text: str) -> str:
    nl = text.find("\n")
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


def _as(text: str, newline: str) -> str:
    text = text.replace("\r\n", "\n")
    text = text if text.endswith("\n") else text + "\n"
    return text.replace("\n", newline)


def _flow(lines: str, value: list[Any]) -> str | None:
    """`key: [a, b]` in the style of ours' one-line flow list `lines`; None when ours' list is not one."""
    import yaml

    m = re.fullmatch(r"([^\n#]*?:[ \t]*)\[[^\n]*\]([ \t]*)(\r?\n)", lines)
    if m is None:
        return None
    flow = yaml.safe_dump(value, default_flow_style=True, width=1 << 20, allow_unicode=True).strip()
    return f"{m.group(1)}{flow}{m.group(2)}{m.group(3)}"


def _block(ours: _Note, theirs: _Note, merged: dict[str, Any], how: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """The merged block's text, built from ours' lines, and the list values still to be written by the
    frontmatter writer (ours' block lists)."""
    newline = _newline(ours.text) if ours.has_block else _newline(theirs.text)
    order = list(merged)
    out: list[str] = []
    later: dict[str, Any] = {}

    def new_after(after: str | None) -> None:  # the keys only theirs has, that follow `after` in the order
        for key in order[0 if after is None else order.index(after) + 1 :]:
            if key in ours.values:
                break
            out.append(_as(theirs.lines_of(key) or "", newline))

    front = False
    for key, lines in ours.segments:
        if key is None:
            out.append(lines)
            continue
        if not front:
            new_after(None)
            front = True
        if key not in merged:
            continue  # theirs deleted it
        if how[key] == "theirs":
            out.append(_as(theirs.lines_of(key) or "", newline))
        elif how[key] == "list":
            flow = _flow(lines, merged[key])
            out.append(flow if flow is not None else lines)
            if flow is None:
                later[key] = merged[key]
        else:
            out.append(lines)
        new_after(key)
    if not front:
        new_after(None)
    return "".join(out), later


def merge_fields_text(base: str, ours: str, theirs: str) -> str | None:
    """Ours' note text with theirs' frontmatter changes merged in (the body is ours'); None on a conflict.
    Kept apart from the body merge so the rules can be tested on their own."""
    from agentmd.vault_schema.errors import VaultSchemaError
    from agentmd.vault_schema.frontmatter import load_yaml, split_frontmatter
    from agentmd.vault_schema.writer import update_frontmatter

    cut = [_cut(t) for t in (base, ours, theirs)]
    if cut[0] is None or cut[1] is None or cut[2] is None:
        return None
    b, o, t = cut[0], cut[1], cut[2]
    fields = _merge_fields(b, o, t)
    if fields is None:
        return None
    merged, how = fields
    if all(how[k] == "ours" for k in merged) and len(merged) == len(o.values):
        return ours
    block, later = _block(o, t, merged, how)
    if o.has_block:
        text = o.head + block + o.fence + o.body
    else:
        newline = _newline(t.text)
        text = f"---{newline}{block}---{newline}{o.body}"
    try:
        if later:
            text = update_frontmatter(text, later)
        split = split_frontmatter(text)
        check = load_yaml(split.yaml_text or "")
    except VaultSchemaError:
        return None
    if [(k, _canon(v)) for k, v in check.items()] != [(k, _canon(v)) for k, v in merged.items()]:
        return None
    return text


def _merge_text(git: GitCli, base: str, ours: str, theirs: str) -> str | None:
    """`git merge-file` of three texts; None when they conflict or git cannot merge them."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    out = _merge_file(git, base, ours, theirs)
    try:
        return out.decode("utf-8") if out is not None else None
    except UnicodeDecodeError:
        return None


def _merge_file(git: GitCli, base: str, ours: str, theirs: str, *options: str) -> bytes | None:
    """`git merge-file -p` of three texts (with `options`, such as `--ours`); None when it conflicts or fails."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="agentmd-merge-") as tmp:
        names = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(text.encode("utf-8", "surrogateescape"))
            names.append(str(path))
        run = git.run("merge-file", "-p", "--quiet", *options, *names)
    return run.out if run.code == 0 else None


def merge_note(git: GitCli, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The three versions of a note merged as the module docstring says; None when they really conflict
    (the caller keeps theirs as a conflict sibling)."""
    try:
        texts = [v.decode("utf-8") for v in (base, ours, theirs)]
    except UnicodeDecodeError:
        return None
    cut = [_cut(t) for t in texts]
    if cut[0] is None or cut[1] is None or cut[2] is None:
        return None
    body = _merge_text(git, cut[0].body, cut[1].body, cut[2].body)
    if body is None:
        return None
    # the frontmatter merge on ours' text with the merged body in place of ours' (the body plays no part in it)
    fields = merge_fields_text(texts[0], texts[1][: len(texts[1]) - len(cut[1].body)] + body, texts[2])
    return fields.encode("utf-8") if fields is not None else None


def merge_favouring(git: GitCli, base: str, ours: str, theirs: str, *, favour: str) -> str | None:
    """The three versions of a note merged, each conflict settled for one side (`favour`: "ours" or "theirs"),
    as a person's choice of a version ends a conflict: what only the other side changed is kept. The note merge
    when the versions no longer conflict, else `git merge-file --ours|--theirs` line by line (frontmatter
    included); None when git cannot merge them."""
    merged = merge_note(git, *(t.encode("utf-8", "surrogateescape") for t in (base, ours, theirs)))
    if merged is not None:
        return merged.decode("utf-8", "surrogateescape")
    out = _merge_file(git, base, ours, theirs, f"--{favour}")
    return out.decode("utf-8", "surrogateescape") if out is not None else None


def is_capture(data: bytes) -> bool:
    """Whether a note was made by agent capture (or ingest): its frontmatter has the `captured` date-time
    and the `filing_confidence` those stamp. A person's note rarely has both."""
    from agentmd.vault_schema.errors import VaultSchemaError
    from agentmd.vault_schema.frontmatter import load_yaml, split_frontmatter

    try:
        split = split_frontmatter(data.decode("utf-8"))
        values = load_yaml(split.yaml_text) if split.yaml_text is not None else {}
    except (UnicodeDecodeError, VaultSchemaError):
        return False
    captured = values.get("captured")
    return isinstance(captured, str) and _CAPTURED.match(captured) is not None and "filing_confidence" in values


def free_name(path: str, taken: set[str]) -> str:
    """`<stem>-2.md`, `-3`… beside `path`: the first name not in `taken` (compared without case, for the
    file systems that ignore it)."""
    lower = {t.lower() for t in taken}
    stem = path[: -len(".md")]
    for n in range(2, 10_000):
        name = f"{stem}-{n}.md"
        if name.lower() not in lower:
            return name
    raise ValueError(f"no free name beside {path}")  # ten thousand notes of one title: not a vault of notes


# -- status: the files that are not notes, where ours was kept -------------------------------------------

KEPT_SHOWN = dt.timedelta(days=7)  # status names such a file this long after the round that kept ours


def kept_ours(git: GitCli, conflicts: Iterable[dict[str, str]], now: dt.datetime) -> list[dict[str, str]]:
    """The recent `kept: ours` entries of the sync state's conflicts, the latest per path: files that are not
    notes, changed on two machines, where this machine's version was kept and theirs stays in history."""
    return _untouched(git, _recent(conflicts, now, "ours", "theirs"))


def set_aside_here(git: GitCli, conflicts: Iterable[dict[str, str]], now: dt.datetime) -> list[dict[str, str]]:
    """The recent `kept: theirs` entries, the latest per path: changes made on this machine that another
    machine's merge set aside (a file that is not a note changed on both, a deletion against an edit)."""
    return _untouched(git, _recent(conflicts, now, "theirs", "ours"))


def _recent(conflicts: Iterable[dict[str, str]], now: dt.datetime, kept: str, other: str) -> list[dict[str, str]]:
    """The entries of `conflicts` that kept `kept` and name the `other` version, from the last KEPT_SHOWN, the
    latest per path."""
    latest: dict[str, dict[str, str]] = {}
    for c in conflicts:
        if c.get("kept") != kept or not c.get(other):
            continue
        try:
            at = dt.datetime.fromisoformat(c.get("at", ""))
        except ValueError:
            continue
        if now - at <= KEPT_SHOWN:
            latest[c["path"]] = c
    return list(latest.values())


def _untouched(git: GitCli, entries: list[dict[str, str]]) -> list[dict[str, str]]:
    """The entries whose file still holds the version the merge left (`blob`): once the person has written the
    other version over it, edited it or deleted it, they have acted on the line. An entry recorded before the
    blob was kept stays for KEPT_SHOWN, as does every entry when git cannot hash the files."""
    judged = [c["path"] for c in entries if c.get("blob") and "\n" not in c["path"]]
    present = [p for p in judged if (git.vault / p).is_file() and not (git.vault / p).is_symlink()]
    blobs: dict[str, str] = {}
    if present:
        listed = "".join(f"{p}\n" for p in present).encode()
        hashed = git.run("hash-object", "--stdin-paths", stdin=listed)  # with the repository's filters, as `add`
        if hashed.code != 0:
            return entries
        blobs = dict(zip(present, hashed.text.split(), strict=False))
    return [c for c in entries if c["path"] not in judged or blobs.get(c["path"]) == c["blob"]]


def set_aside_line(entries: list[dict[str, str]]) -> str:
    """The yellow status line naming them, each with what to do if this machine's change should stand."""

    def one(c: dict[str, str]) -> str:
        if c.get("here") == "deleted":
            return f"{c['path']} (deleted here, edited on the other machine: the edit was kept; delete it again)"
        return f"{c['path']} (this machine's version: `git show {c['ours'][:12]}:{c['path']}`)"

    shown = "; ".join(one(c) for c in entries[:5])
    more = f"; and {len(entries) - 5} more" if len(entries) > 5 else ""
    how = (
        "; to keep this machine's version of a file, write the output of its `git show` over it"
        if any(c.get("here") != "deleted" for c in entries)
        else ""
    )
    return (
        f"set-aside-here: {len(entries)} change(s) made here were set aside when another machine merged: "
        f"{shown}{more}{how}"
    )


def kept_ours_line(kept: list[dict[str, str]]) -> str:
    """The yellow status line naming them and how to get theirs back."""
    shown = "; ".join(f"{c['path']} (theirs: `git show {c['theirs'][:12]}:{c['path']}`)" for c in kept[:5])
    more = f"; and {len(kept) - 5} more" if len(kept) > 5 else ""
    return (
        f"kept-ours: {len(kept)} file(s) that are not notes were changed on two machines and this machine's "
        f"version was kept: {shown}{more}; to take the other machine's version, write that output over the file"
    )


def names_apart(conflicts: Iterable[dict[str, str]], now: dt.datetime, vault: Path) -> list[str]:
    """The recent names a merge kept side by side where one note was renamed on two machines, each its own way
    (or renamed on one while its folder was renamed on the other): each holds one machine's edits. Only those
    still in the vault, so the line ends once the person has merged them into one."""
    names: dict[str, None] = {}
    for c in conflicts:
        try:
            at = dt.datetime.fromisoformat(c.get("at", ""))
        except ValueError:
            continue
        if c.get("kept") == "this name" and now - at <= KEPT_SHOWN and (vault / c["path"]).exists():
            names[c["path"]] = None
    return list(names)


def names_apart_line(names: list[str]) -> str:
    """The yellow status line naming them and what to do."""
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return (
        f"renamed-apart: a merge kept {len(names)} name(s) that only one machine gave: {shown}; where two of them "
        "are one note renamed on two machines, each its own way, each holds one machine's edits: merge those two "
        "into one note (a note added to a folder the other machine renamed is listed too, and is fine as it is)"
    )
