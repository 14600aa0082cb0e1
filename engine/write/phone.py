"""The phone clipper: notes dropped under the contract's `phone_paths`, and the operator's `instructions:`.

A phone (or any clipper) writes Markdown files into a phone folder (`inbox/phone/` by default). The committer
commits everything there with `origin: phone` on its own. When such a note carries an `instructions:`
frontmatter field, `sweep_phone_notes` executes it under the fixed grammar below and nothing else: free text
is never interpreted, never summarised, never passed to a model.

The grammar
-----------
`instructions:` is text (or a YAML list of text). It holds one instruction per line; `;` also separates
instructions on one line (there is no escaping, so a title or reason cannot contain `;`). Blank parts are
ignored. Verbs are case-insensitive and may be followed by a colon (`Title: Foo` works like `title Foo`).

- `file as <type>`: route the note as a memory of that type (`decision`, `lesson`, ...). The type is
  kebab-case and must be one the storage-rules contract lists (a typo would otherwise send it to the shard).
- `type <type>`: the same as `file as <type>`.
- `project <slug>`: the project the note belongs to, its kebab-case slug.
- `tag <tag>`: add one tag (a leading `#` is dropped). Repeatable. Letters and digits of any script, `-`, `_`
  and `/` for nested tags; not only digits.
- `title <text>`: the note's title (one line, at most 200 characters); the file name is made from it.
- `why <text>`: why the note matters (one line, at most 1,000 characters). A typed note with a reason is
  filed `active` instead of `unfiled`, exactly as a capture with `why` is.

`file as`/`type`, `project`, `title` and `why` may each be given once (repeating the same value is harmless;
two different values are a conflict). Anything else is a problem: an unknown verb, a missing argument, a
slug or tag of the wrong shape, a title too long, more than 50 instructions. If any part is a problem,
nothing at all is executed.

What a sweep does with each note under `phone_paths` (only `.md` files; dot files, dot folders, symlinks and
capture temp files are skipped):

- no `instructions:` (or an empty one): left alone; the note waits in the phone folder;
- `instructions_done:` set, or a `review_flags` entry already written for the very same instructions text:
  skipped without touching the file, so a flagged note is not rewritten every sweep. Editing the
  instructions makes the note eligible again;
- instructions outside the grammar: a `review_flags` entry (existing entries kept) names every problem and
  the note stays where it is; outcome `flagged`;
- valid instructions: the note is captured like any other capture (same validation, prefilters, routing,
  door and daily volume gate) with `actor="phone"`, `origin="phone"` and `source: phone`, keeping its title
  (or the `title` verb's), body, tags, aliases, summary, why and `source_url`, plus `clipped_from: <old path>`
  and `instructions_applied: [...]` (the instructions in canonical form). The clip's other fields (`author`,
  `site`, `published`, ...) are kept as they are (`clip_fields`), except those the filed note's governance
  sets (`status`, `trust`, ...), values that are not plain, and values the prefilters refuse: those are named
  in the filed note's `clip_fields_dropped` and in the action's detail. The phone note is then deleted (its
  origin registered first, so the deletion is committed as `phone`); outcome `filed`;
- a refused capture: a `review_flags` entry with the refusal code and message; outcome `flagged`. A refusal
  that may pass later by itself (`daily-write-cap`, `write-failed`, `contract-halted`) is retried on every
  sweep, but the same refusal is not written twice.

Every edit of a phone note is atomic (temp file, fsync, rename) and made only if the file still holds the
bytes that were read; a note edited meanwhile is handled by the next sweep. A note that cannot be read, is
not UTF-8 or has broken frontmatter is skipped with a detail saying what to fix; the sweep never raises on
a bad note.

Twins. A capture returns an existing note with the same title and body instead of writing a twin. Notes
in the phone folders themselves are hidden from that check (otherwise the phone note would be its own
twin). A twin elsewhere means the note is already filed (for example a sweep interrupted between the
capture and the deletion): the phone note is deleted and the action names the existing note.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmd.engine.fsutil import opened_dir, read_regular
from agentmd.engine.times import stamp
from agentmd.engine.write.capture import Capturer
from agentmd.engine.write.request import MAX_TITLE, CaptureRefused, CaptureRequest
from agentmd.engine.write.tempfiles import temp_name
from agentmd.rules import Contract
from agentmd.rules.door import decide
from agentmd.vault_schema import SLUG, Note, YamlRefused, parse_note, update_frontmatter

log = logging.getLogger("agentmd.phone")

SOURCE = "phone"
FLAG = "phone-instructions"
INVALID_CODE = "instructions-invalid"
TRANSIENT_CODES = frozenset({"daily-write-cap", "write-failed", "contract-halted"})
MAX_WHY = 1000
MAX_INSTRUCTIONS = 50
MAX_TAG = 100
VERBS = ("file as", "project", "tag", "title", "why")  # canonical verbs; `type` is read as `file as`
SINGLE_VERBS = ("file as", "project", "title", "why")
CARRIED_FIELDS = frozenset(
    {"title", "tags", "tag", "aliases", "alias", "summary", "why", "source_url", "instructions", "review_flags"}
)
# Fields a filed note's governance sets (capture's own stamps and the sweep's): a clip never sets them itself.
GOVERNED_FIELDS = frozenset(
    {"type", "status", "lifecycle", "filing_confidence", "trust", "captured", "source", "project", "task",
     "importance", "related", "clipped_from", "instructions_applied", "instructions_done", "id"}
)  # fmt: skip

_TAG = re.compile(r"^(?!\d+$)\w[\w-]*(?:/\w[\w-]*)*$")
_VERB = re.compile(r"^(file\s+as|type|project|tag|title|why)(?=[\s:]|$)(?:\s*:)?\s*(.*)$", re.IGNORECASE | re.DOTALL)
_GRAMMAR_HINT = "the verbs are: file as <type>, type <type>, project <slug>, tag <tag>, title <text>, why <text>"


def clip_fields(fm: Mapping[str, Any]) -> tuple[dict[str, object], list[str]]:
    """The clip's own fields a filed note keeps (`author`, `published`, `site`, ...), and the names of those it
    drops: a field the filed note's governance sets (`status`, `trust`, ...), one whose value is not plain
    text, numbers, dates or a list of those, or one the prefilters refuse (a secret, an instruction to an
    agent). The filed note lists the dropped names in `clip_fields_dropped`."""
    from agentmd.rules.prefilter import check_fields

    kept: dict[str, object] = {}
    dropped: list[str] = []
    for key, value in fm.items():
        if key in CARRIED_FIELDS:
            continue
        plain = _plain(value)
        shaped = key not in GOVERNED_FIELDS and _FIELD_NAME.match(str(key)) and plain is not None
        if shaped and check_fields({key: plain}).ok:
            kept[key] = plain
        else:
            dropped.append(str(key))
    return kept, sorted(dropped)


_FIELD_NAME = re.compile(r"^[A-Za-z][\w-]{0,63}$")


def _plain(value: Any) -> Any:
    """`value` as plain YAML scalars (dates as ISO text), or None when it is not that shape."""
    if isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) <= 2000):
        return value
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, list) and len(value) <= 50:
        items = [_plain(v) for v in value]
        return items if all(i is not None and not isinstance(i, list) for i in items) else None
    return None


@dataclass(frozen=True)
class Instruction:
    verb: str  # canonical: "file as", "project", "tag", "title" or "why"
    argument: str

    def __str__(self) -> str:
        return f"{self.verb} {self.argument}"


@dataclass
class SweepAction:
    path: str  # the phone note, vault-relative
    outcome: str  # "filed", "flagged" or "skipped"
    detail: str
    new_path: str | None = None


# --------------------------------------------------------------------------------------------------
# The grammar


def _quote(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return f"`{text[:limit]}…`" if len(text) > limit else f"`{text}`"


def _kebab_hint(value: str) -> str:
    hint = "-".join(re.findall(r"[a-z0-9]+", value.lower()))
    return f" (e.g. `{hint}`)" if hint and hint != value else ""


def _check_argument(verb: str, arg: str) -> str | None:
    """Why `arg` is not a valid argument of `verb`, or None when it is."""
    if not arg:
        what = {"file as": "a type", "project": "a project slug", "tag": "a tag", "title": "the title text"}
        return f"`{verb}` needs {what.get(verb, 'some text')} after it"
    if verb in ("file as", "project") and not SLUG.match(arg):
        noun = "type" if verb == "file as" else "project slug"
        return f"{noun} {_quote(arg)} is not kebab-case{_kebab_hint(arg)}"
    if verb == "tag" and (len(arg) > MAX_TAG or not _TAG.match(arg)):
        if any(ch.isspace() for ch in arg):
            return f"{_quote(arg)} is more than one tag; write one `tag <tag>` per tag"
        return f"tag {_quote(arg)} may only hold letters, digits, -, _ and / (and not only digits)"
    if verb == "title" and len(arg) > MAX_TITLE:
        return f"the title is {len(arg)} characters, over the limit of {MAX_TITLE}"
    if verb == "why" and len(arg) > MAX_WHY:
        return f"the reason is {len(arg)} characters, over the limit of {MAX_WHY}"
    return None


def parse_instructions(text: str) -> tuple[list[Instruction], list[str]]:
    """The instructions in `text` and the problems found, each naming its line. See the module docstring.

    When the problem list is not empty the instructions must not be executed, not even in part.
    """
    instructions: list[Instruction] = []
    problems: list[str] = []
    seen: dict[str, tuple[str, int]] = {}  # single-valued verb -> (argument, line)
    parts = 0
    for line_no, line in enumerate(text.splitlines(), 1):
        for part in line.split(";"):
            part = part.strip()
            if not part:
                continue
            parts += 1
            where = f"line {line_no} {_quote(part)}"
            m = _VERB.match(part)
            if m is None:
                word = part.split()[0].rstrip(":")
                problems.append(f"{where}: unknown instruction {_quote(word, 30)}; {_GRAMMAR_HINT}")
                continue
            verb = " ".join(m.group(1).lower().split())
            verb = "file as" if verb == "type" else verb
            arg = m.group(2).strip()
            if verb == "tag":
                arg = arg.removeprefix("#")
            elif verb in ("file as", "project") and SLUG.match(arg.lower()):
                arg = arg.lower()  # a phone keyboard capitalises the word: `File as Decision` is `decision`
            problem = _check_argument(verb, arg)
            if problem:
                problems.append(f"{where}: {problem}")
                continue
            if verb in SINGLE_VERBS:
                if verb in seen:
                    first, first_line = seen[verb]
                    if first != arg:
                        problems.append(f"{where}: conflicts with `{verb} {first}` on line {first_line}; keep one")
                    continue
                seen[verb] = (arg, line_no)
            elif any(i.verb == verb and i.argument == arg for i in instructions):
                continue
            instructions.append(Instruction(verb, arg))
    if parts > MAX_INSTRUCTIONS:
        problems.append(f"there are {parts} instructions; at most {MAX_INSTRUCTIONS} are read")
    if not parts and text.strip():
        problems.append("no instruction found (only separators); " + _GRAMMAR_HINT)
    return instructions, problems


# --------------------------------------------------------------------------------------------------
# The sweep


def _phone_notes(vault: Path, contract: Contract) -> list[str]:
    """Vault-relative paths of the regular `.md` files under the phone folders, sorted."""
    found: set[str] = set()
    for area in contract.phone_paths:
        top = vault / area
        if top.is_symlink() or not top.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not os.path.islink(Path(dirpath, d)))
            for name in filenames:
                if name.startswith(".") or not name.lower().endswith(".md"):
                    continue
                full = Path(dirpath, name)
                if full.is_symlink() or not full.is_file():
                    continue
                rel = full.relative_to(vault).as_posix()
                if contract.is_phone_path(rel):
                    found.add(rel)
    return sorted(found)


def _instructions_text(value: Any) -> tuple[str, str | None]:
    """(the instructions as one text, a problem when the field is not text)."""
    if isinstance(value, list):
        if all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
            return "\n".join(str(v) for v in value).strip(), None
        return repr(value), "`instructions` must be text, or a list of text lines"
    if isinstance(value, dict):
        return repr(value), "`instructions` must be text, or a list of text lines"
    return str(value).strip(), None


def _has_instructions(value: Any) -> bool:
    return value is not None and value is not False and value != "" and value != [] and value != {}


def _previous_flag(flags: Any, text: str) -> Mapping[str, Any] | None:
    """The latest `review_flags` entry this sweep wrote for exactly this instructions text."""
    entries = flags if isinstance(flags, list) else [flags]
    match = None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("flag") == FLAG and entry.get("instructions") == text:
            match = entry
    return match


def _str_field(fm: Mapping[str, Any], key: str) -> str | None:
    value = fm.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _tags(value: Any) -> list[str]:
    """A frontmatter `tags` value as a list: a YAML list, a comma list or words; `#` dropped."""
    raw: list[str] = []
    if isinstance(value, str):
        raw = value.replace(",", " ").split()
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, str | int | float) and not isinstance(v, bool):
                raw.extend(str(v).replace(",", " ").split())
    return [t.lstrip("#") for t in raw if t.lstrip("#")]


def _request(note: Note, instructions: list[Instruction]) -> CaptureRequest:
    fm = note.frontmatter
    single = {i.verb: i.argument for i in instructions if i.verb in SINGLE_VERBS}
    tags = _tags(fm.get("tags", fm.get("tag"))) + [i.argument for i in instructions if i.verb == "tag"]
    return CaptureRequest(
        title=single.get("title") or note.title,
        body=note.text,
        type=single.get("file as"),
        summary=_str_field(fm, "summary"),
        why=single.get("why") or _str_field(fm, "why"),
        project=single.get("project"),
        tags=tuple(dict.fromkeys(tags)),
        aliases=tuple(note.aliases),
        source=SOURCE,
        source_url=_str_field(fm, "source_url"),
    )


def _replace_if_unchanged(vault: Path, rel: str, data: bytes, expected: bytes) -> bool:
    """Atomically replace the note `rel` with `data` if it still holds `expected`. False when it changed or
    vanished.

    The note's folder is opened from the vault root without following a link (`opened_dir`), and the read,
    the temp file and the rename are all relative to that folder's descriptor, so a folder swapped for a
    link meanwhile cannot redirect the write out of the vault. The temp file is hidden and named like a
    capture temp file, so a crash leaves nothing the start-up clean-up does not remove.
    """
    folder, _, name = rel.rpartition("/")
    with opened_dir(vault, folder) as dfd:
        try:
            mode = os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode & 0o7777
        except FileNotFoundError:
            return False
        tmp = temp_name(Path(name).stem)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
        try:
            try:
                os.write(fd, data)
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                if read_regular(name, dir_fd=dfd) != expected:
                    return False
            except FileNotFoundError:
                return False
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            os.fsync(dfd)
            return True
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dfd)


def _remove_if_unchanged(vault: Path, rel: str, expected: bytes, before: Callable[[], object]) -> bool:
    """Delete the note `rel` if it still holds `expected` (False when it changed), relative to its folder's
    descriptor opened without following links. `before` runs just before the deletion."""
    folder, _, name = rel.rpartition("/")
    with opened_dir(vault, folder) as dfd:
        if read_regular(name, dir_fd=dfd) != expected:
            return False
        before()
        os.unlink(name, dir_fd=dfd)
        os.fsync(dfd)
        return True


class _Sweep:
    def __init__(
        self, vault: Path, contract: Contract, capturer: Capturer, note_origin: Callable[[str, str], object]
    ) -> None:
        self.vault = vault
        self.contract = contract
        self.capturer = capturer
        self.now = capturer.now
        self.note_origin = note_origin

    def note(self, rel: str) -> SweepAction | None:
        folder, _, name = rel.rpartition("/")
        try:  # read through the folder opened without following links, like every write to it
            with opened_dir(self.vault, folder) as dfd:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                data = read_regular(name, dir_fd=dfd)
        except OSError as exc:
            return SweepAction(rel, "skipped", f"the note could not be read ({exc.strerror or exc}); it is left as is")
        note = parse_note(rel, data, st.st_mtime_ns)
        if note.frontmatter_error:
            return SweepAction(
                rel, "skipped", f"its frontmatter cannot be read ({note.frontmatter_error}); no instructions were read"
            )
        fm = note.frontmatter
        raw = fm.get("instructions")
        if not _has_instructions(raw):
            return None  # a plain clip: it waits in the phone folder
        text, shape_problem = _instructions_text(raw)
        if not text:
            return None
        if note.decode_error:
            return SweepAction(rel, "skipped", "the note is not valid UTF-8; save it as UTF-8 to have it handled")
        if fm.get("instructions_done"):
            return SweepAction(rel, "skipped", "instructions_done is set; the instructions were handled already")
        previous = _previous_flag(fm.get("review_flags"), text)
        if previous is not None and previous.get("code") not in TRANSIENT_CODES:
            return SweepAction(
                rel, "skipped", f"already flagged ({previous.get('code')}); edit the instructions to try again"
            )
        door = decide(self.vault, rel, self.contract, actor="phone", creating=False)
        if not door.allowed:
            return SweepAction(rel, "skipped", f"the door refuses phone writes to {rel}: {door.reason}")

        instructions: list[Instruction] = []
        if shape_problem:
            problems = [shape_problem]
        else:
            instructions, problems = parse_instructions(text)
        for i in instructions:
            if i.verb == "file as" and self.contract.class_dir(i.argument) is None:
                known = ", ".join(sorted(self.contract.types))
                problems.append(f"type `{i.argument}` is not in the storage-rules contract; use one of: {known}")
        if problems:
            reason = "nothing was executed: " + "; ".join(problems)
            return self.flag(rel, data, text, INVALID_CODE, reason)

        req = _request(note, instructions)
        applied = [str(i) for i in instructions]
        kept, dropped = clip_fields(fm)
        extra: dict[str, object] = {**kept, "clipped_from": rel, "instructions_applied": applied}
        if dropped:
            extra["clip_fields_dropped"] = dropped
        try:
            result = self.capturer.capture(
                req,
                actor="phone",
                origin="phone",
                extra_fields=extra,
                twin_exclude=self.contract.is_phone_path,  # the clip itself is not a twin of its filed copy
            )
        except CaptureRefused as exc:
            if previous is not None and previous.get("code") == exc.code:
                return SweepAction(rel, "skipped", f"still refused ({exc.code}): {exc}; it is tried again next sweep")
            return self.flag(rel, data, text, exc.code, str(exc))

        if self.contract.is_phone_path(result.path):
            why = f"the capture landed in a phone folder ({result.path}), so the phone note was kept"
            return self.flag(rel, data, text, "landed-in-phone-path", why)
        detail = f"filed as {result.path} ({result.status})"
        if result.reinforced:
            detail = f"already filed: {result.path} holds the same title and body"
        if dropped:
            detail += f"; not carried over: {', '.join(dropped)}"
        try:
            if not _remove_if_unchanged(self.vault, rel, data, lambda: self.note_origin(rel, "phone")):
                return SweepAction(
                    rel, "filed", detail + "; the phone note changed meanwhile and was kept", result.path
                )
        except FileNotFoundError:
            pass
        except OSError as exc:
            return SweepAction(
                rel, "filed", detail + f"; the phone note could not be removed ({exc.strerror or exc})", result.path
            )
        log.info("phone note %s: %s", rel, detail)
        return SweepAction(rel, "filed", detail, result.path)

    def flag(self, rel: str, data: bytes, text: str, code: str, reason: str) -> SweepAction:
        """Add a review flag to the phone note, in place, keeping every existing flag."""
        fm = parse_note(rel, data, 0).frontmatter
        existing = fm.get("review_flags")
        flags = [] if existing is None else list(existing) if isinstance(existing, list) else [existing]
        flags.append({"flag": FLAG, "code": code, "reason": reason, "instructions": text, "flagged": stamp(self.now())})
        try:
            new_text = update_frontmatter(data.decode("utf-8"), {"review_flags": flags})
        except (YamlRefused, UnicodeDecodeError) as exc:
            return SweepAction(rel, "skipped", f"{code}: {reason}; the flag could not be written ({exc})")
        self.note_origin(rel, "phone")
        try:
            written = _replace_if_unchanged(self.vault, rel, new_text.encode("utf-8"), data)
        except OSError as exc:
            return SweepAction(rel, "skipped", f"{code}: {reason}; the flag could not be written ({exc})")
        if not written:
            changed = "the note changed while it was being flagged; the next sweep looks again"
            return SweepAction(rel, "skipped", changed)
        log.info("phone note %s flagged (%s): %s", rel, code, reason)
        return SweepAction(rel, "flagged", f"{code}: {reason}")


def sweep_phone_notes(
    vault: Path, contract: Contract, capturer: Capturer, *, note_origin: Callable[[str, str], object]
) -> list[SweepAction]:
    """Execute the `instructions:` of the notes under `contract.phone_paths`; one action per note acted on.

    Notes without instructions are not listed. `note_origin(path, origin)` registers each edit and deletion
    (origin `phone`) before it happens; the capture itself registers the new note through the capturer's
    own `before_write`. Never raises on a bad note.
    """
    sweep = _Sweep(Path(vault), contract, capturer, note_origin)
    actions: list[SweepAction] = []
    for rel in _phone_notes(sweep.vault, contract):
        try:
            action = sweep.note(rel)
        except Exception as exc:  # one bad note must not stop the sweep (or the daemon pass running it)
            log.exception("phone note %s could not be handled", rel)
            action = SweepAction(rel, "skipped", f"unexpected error ({type(exc).__name__}: {exc}); see the log")
        if action is not None:
            actions.append(action)
    return actions
