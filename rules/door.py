"""The door: the one decision every writer asks before it writes a file into the vault.

`decide(vault, raw_path, contract, actor=...)` answers whether `actor` may write `raw_path` and why. It runs
in three steps and never writes, creates or changes anything:

1. **Shape.** `normalize_path` accepts only a clean vault-relative POSIX path to a note: no absolute or
   home paths, no `.`/`..` segments, no backslashes, drive letters or UNC names, no control or bidi
   characters, no percent-encoded path characters (single, double or overlong), no Unicode look-alikes of
   `/`, `\\` or `.`, no dot folders or dot files (`.git/`, `.obsidian/`, `.trash/`, `.env`), no segment with
   a trailing dot or space, no characters or device names Windows and Obsidian cannot store, at most 4,096
   bytes in all and 255 bytes per segment, and a `.md` name (or `project.yaml`, judged in step 3).
   Names that merely contain dots (`hi-everyone..md`, `a..b.md`) and non-ASCII names are fine.
2. **Place.** Against the real vault: every existing parent folder that is a symlink must resolve inside
   the vault and outside its dot folders; a symlink that stays inside is followed, and the write is judged
   both where it was asked for and where it would land, the stricter answer winning. The target itself
   may not be a symlink at all (writers would follow it), nor a directory; a parent may not be a file.
3. **Level.** The path's space (the contract's longest matching folder) gives its authority level:

   - `standing` and `shared`: every actor may write (agents, the operator, the phone clipper);
   - `alignment`: only the operator (via the CLI's explicit flag) may write; agents and the phone are
     refused with a reason naming the operator. The door judges the actor it is told; the callers
     establish it: over HTTP the daemon grants `operator` only to a request carrying the vault's
     owner-only operator token, and the MCP tools always write as `agent`;
   - `private`: nobody writes through agentmd, not even the operator: their own editor writes there.

   A top folder that is no space gets the contract's `default_authority` (`space:unknown`). A file at the
   vault root belongs to no space and is at least `alignment` (`vault-root`), whatever the default says.
   Inside the `projects` space, a project's root (`<projects>/<slug>/`, slug = the project's folder name
   as it is) holds exactly `project.yaml`, `charter.md`, `blueprint.md`, `tracker.md` and `moc-<slug>.md`:
   creating a missing one is `standing` (`project-root:allowed`), creating any other new root file is
   `alignment` (`project-root:other`), and changing a root file that already exists is `alignment`
   (`project-root:existing`). Files in a project's subfolders, and files directly in the projects folder,
   follow the space's level. When the contract makes the projects space `alignment` or `private`, that
   stricter level wins over the project-root rule.

The decision is a check, not a lock: a writer must still create files with `O_EXCL`/`O_NOFOLLOW` and
rename atomically, because the tree can change between the check and the write.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import unquote_to_bytes

from .contract import Contract
from .errors import RulesError

ACTORS: Final = ("agent", "operator", "phone")
LEVEL_ORDER: Final = ("standing", "shared", "alignment", "private")  # least to most strict
PROJECTS_SPACE: Final = "projects"
PROJECT_FILE: Final = "project.yaml"
ROOT_DOCUMENTS: Final = ("charter.md", "blueprint.md", "tracker.md")
MAX_PATH_BYTES: Final = 4096
MAX_SEGMENT_BYTES: Final = 255

# Code points that look like `/` or `\\` but which NFKC leaves alone, so the NFKC check below misses them.
# Characters whose NFKC form adds a path character (fullwidth `／`, `．`, `＼`, the one-dot leader `․` ...)
# are caught by that check instead.
_LOOKALIKES: Final = frozenset(
    "\u2044"  # fraction slash
    "\u2215"  # division slash
    "\u2216"  # set minus
    "\u2571"  # box drawings light diagonal upper right to lower left
    "\u2572"  # box drawings light diagonal upper left to lower right
    "\u29f5"  # reverse solidus operator
    "\u29f8"  # big solidus
    "\u29f9"  # big reverse solidus
    "\u2e4a"  # dotted solidus
)
_PATH_CHARS: Final = "/\\:~%"  # besides `.`, which matters only where it makes a dot segment
_KEPT_FORMAT: Final = frozenset("\u200c\u200d")  # ZWNJ and ZWJ: needed by several scripts and emoji
_RESERVED_CHARS: Final = frozenset(':*?"<>|')
_RESERVED_NAMES: Final = frozenset(
    ["con", "prn", "aux", "nul"]
    + [f"{d}{n}" for d in ("com", "lpt") for n in [*"123456789", "\u00b9", "\u00b2", "\u00b3"]]
)
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")
_WIDE_ESCAPE: Final = re.compile(r"%[uU][0-9A-Fa-f]{4}")
_DRIVE: Final = re.compile(r"^[A-Za-z]:")
_ENCODED_BYTES: Final = frozenset(b"./\\%:~") | frozenset(range(0x20)) | {0x7F}
_OVERLONG: Final = frozenset({0xC0, 0xC1} | set(range(0xF5, 0x100)))  # lead bytes UTF-8 never uses
_OVERLONG_SEQ: Final = re.compile(r"%e0%[89][0-9a-f]|%f0%8[0-9a-f]", re.IGNORECASE)  # overlong 3- and 4-byte forms
_DECODE_ROUNDS: Final = 4


class DoorRefused(RulesError):
    """A path the door will not let through; `rule` is the stable id, `reason` says why and what to do."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(f"{rule}: {reason}")
        self.rule = rule
        self.reason = reason


@dataclass(frozen=True)
class Decision:
    """The door's answer for one write."""

    allowed: bool
    path: str | None  # the normalised vault-relative POSIX path, when the raw path could be normalised
    level: str | None  # the authority level that applied, None when the path itself was refused
    rule: str  # stable id of the rule that decided, e.g. `path:dotdot`, `level:standing`
    reason: str  # one sentence: why, and for a refusal what to do instead


# ------------------------------------------------------------------------------------------- shape


def normalize_path(raw: str) -> str:
    """The clean vault-relative POSIX path `raw` names, or `DoorRefused` for anything else.

    The result is `raw` itself when accepted: the door refuses rather than repairs, so a caller never
    writes somewhere other than where it asked.
    """
    if not isinstance(raw, str):
        raise DoorRefused("path:empty", f"the path is a {type(raw).__name__}, not text; pass a vault-relative path")
    if not raw.strip():
        raise DoorRefused("path:empty", "the path is empty; pass a vault-relative path such as memory/note.md")
    if len(raw) > MAX_PATH_BYTES or len(raw.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise DoorRefused(
            "path:too-long", f"the path is over {MAX_PATH_BYTES:,} bytes; use a shorter folder and file name"
        )
    _check_characters(raw)
    _check_encoding(raw)
    if raw.startswith(("\\\\", "//")):
        raise DoorRefused(
            "path:unc", "the path is a network (UNC) name; pass a path inside the vault such as memory/note.md"
        )
    if _DRIVE.match(raw):
        raise DoorRefused(
            "path:drive-letter", "the path starts with a drive letter; pass a path relative to the vault root"
        )
    if "\\" in raw:
        raise DoorRefused("path:backslash", "the path contains a backslash; separate folders with / only")
    if raw.startswith("/"):
        raise DoorRefused("path:absolute", "the path is absolute; pass it relative to the vault root, e.g. memory/x.md")
    if raw.startswith("~"):
        raise DoorRefused("path:home", "the path starts with ~ (a home folder); pass a path relative to the vault root")
    segments = raw.split("/")
    for segment in segments:
        _check_segment(segment)
    name = segments[-1]
    if name != PROJECT_FILE and not name.endswith(".md"):
        raise DoorRefused(
            "path:not-markdown", f"{name!r} is not a Markdown note; only .md notes (and project.yaml) are written"
        )
    return raw


def _check_characters(raw: str) -> None:
    for ch in raw:
        if ch == "\x00":
            raise DoorRefused("path:nul", "the path contains a NUL byte; remove it")
        category = unicodedata.category(ch)
        if category in ("Cc", "Cs", "Co", "Cn", "Zl", "Zp") or (category == "Cf" and ch not in _KEPT_FORMAT):
            raise DoorRefused(
                "path:control", f"the path contains the invisible or control character U+{ord(ch):04X}; remove it"
            )
        if ch in _LOOKALIKES or (ord(ch) > 0x7F and any(c in _PATH_CHARS for c in unicodedata.normalize("NFKC", ch))):
            raise _lookalike(ch)
    if raw.isascii():
        return
    # NFKC folds e.g. fullwidth `．` and the one-dot leader `․` into `.`: harmless inside a name (`Wait….md`),
    # but not where the folded form would be a `.`/`..` segment or a dot folder.
    folded = unicodedata.normalize("NFKC", raw).split("/")
    for segment, fold in zip(raw.split("/"), folded, strict=True):
        leads = fold.startswith(".") and not segment.startswith(".")
        trails = fold.endswith((".", " ")) and not segment.endswith((".", " "))
        if leads or trails:
            odd = segment[0] if leads else segment[-1]
            raise _lookalike(odd)


def _lookalike(ch: str) -> DoorRefused:
    return DoorRefused(
        "path:lookalike",
        f"the path contains U+{ord(ch):04X} ({unicodedata.name(ch, 'unnamed')}), which imitates or folds into a path "
        "character; use plain ASCII / and . instead",
    )


def _check_encoding(raw: str) -> None:
    """Refuse percent escapes that hide path characters, double encodings and overlong UTF-8."""
    text = raw
    for _ in range(_DECODE_ROUNDS):
        if _WIDE_ESCAPE.search(text):
            raise DoorRefused("path:encoded", "the path contains a %u escape; pass the plain characters instead")
        escapes = [int(m.group(1), 16) for m in _ESCAPE.finditer(text)]
        if not escapes:
            return
        if any(byte in _OVERLONG for byte in escapes) or _OVERLONG_SEQ.search(text):
            raise DoorRefused(
                "path:encoded", "the path hides a character in overlong UTF-8 (such as %c0%ae); pass the plain path"
            )
        if any(byte in _ENCODED_BYTES for byte in escapes):
            raise DoorRefused(
                "path:encoded",
                "the path percent-encodes a path character (such as %2e, %2f, %5c, or %25 for double encoding); "
                "pass the plain path",
            )
        try:
            decoded = unquote_to_bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise DoorRefused(
                "path:encoded", "the path's percent escapes are not valid UTF-8 (overlong or broken); remove them"
            ) from None
        try:
            _check_characters(decoded)
        except DoorRefused as exc:
            raise DoorRefused("path:encoded", f"once percent-decoded, {exc.reason}") from None
        text = decoded
    raise DoorRefused("path:encoded", "the path is percent-encoded several times over; pass the plain path")


def _check_segment(segment: str) -> None:
    if not segment:
        raise DoorRefused("path:empty-segment", "the path has an empty segment (// or a trailing /); remove it")
    if "." in segment and set(segment) <= {".", " "}:
        if segment.count(".") >= 2:
            raise DoorRefused("path:dotdot", "the path climbs out with ..; pass a path that stays inside the vault")
        raise DoorRefused("path:dot-segment", "the path has a . segment; remove it and pass the plain path")
    if segment.startswith("."):
        raise DoorRefused(
            "path:dot-dir",
            f"{segment!r} is a dot folder or dot file (like .git or .obsidian), which agentmd never writes; "
            "use a visible folder",
        )
    if segment == "~":
        raise DoorRefused("path:home", "the path has a ~ segment; name the folder plainly")
    if len(segment.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES:
        raise DoorRefused("path:too-long", f"a folder or file name is over {MAX_SEGMENT_BYTES} bytes; shorten it")
    if segment != segment.rstrip(". "):
        raise DoorRefused(
            "path:trailing-dot-space",
            f"{segment!r} ends with a dot or a space, which Windows and sync clients drop; remove it",
        )
    bad = sorted(_RESERVED_CHARS & set(segment))
    if bad:
        raise DoorRefused(
            "path:reserved-char",
            f"{segment!r} contains {' '.join(bad)}, which Obsidian and Windows cannot store in a name; leave it out",
        )
    if reserved_name(segment):
        raise DoorRefused(
            "path:reserved-name", f"{segment!r} is a reserved device name on Windows; choose another name"
        )


def reserved_name(segment: str) -> bool:
    """Whether a file or folder name is one Windows keeps for a device (`con`, `nul.md`, `COM1`)."""
    return segment.split(".", 1)[0].rstrip(" ").lower() in _RESERVED_NAMES


# ------------------------------------------------------------------------------------------- place


@dataclass(frozen=True)
class _Place:
    exists: bool  # the target already exists as a regular file
    resolved: str  # where the write would land once parent symlinks are followed (vault-relative)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _place(vault: Path, rel: str) -> _Place:
    """Check the existing part of `rel` on disk without changing anything; `DoorRefused` on a hazard."""
    real_vault = os.path.realpath(vault)
    parts = rel.split("/")
    current = os.fspath(vault)
    exists = False
    for index, part in enumerate(parts):
        current = os.path.join(current, part)
        last = index == len(parts) - 1
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            break  # from here on nothing exists yet: the writer creates it
        except OSError as exc:
            raise DoorRefused(
                "path:unreadable",
                f"{'/'.join(parts[: index + 1])} could not be checked ({exc.strerror or type(exc).__name__}); "
                "fix its permissions or pick another path",
            ) from None
        shown = "/".join(parts[: index + 1])
        if stat.S_ISLNK(st.st_mode):
            target = os.path.realpath(current)
            if last:
                where = "inside" if _inside(target, real_vault) else "outside"
                raise DoorRefused(
                    "path:symlink-escape",
                    f"{shown} is a symlink (pointing {where} the vault), and writing it would follow the link; "
                    "remove the link or write a different note",
                )
            if not _inside(target, real_vault):
                raise DoorRefused(
                    "path:symlink-escape",
                    f"the folder {shown} is a symlink leading outside the vault; write into a real vault folder",
                )
            try:
                st = os.stat(current)
            except OSError:
                raise DoorRefused(
                    "path:symlink-escape", f"the folder {shown} is a dangling symlink; remove it or write elsewhere"
                ) from None
        if last:
            if stat.S_ISDIR(st.st_mode):
                raise DoorRefused("path:is-directory", f"{shown} is a folder, not a note; name a file inside it")
            if not stat.S_ISREG(st.st_mode):
                raise DoorRefused("path:not-a-file", f"{shown} is not a regular file; write a different note")
            exists = True
        elif not stat.S_ISDIR(st.st_mode):
            raise DoorRefused("path:not-a-directory", f"{shown} is a file, not a folder; pick another folder")
    real_target = os.path.realpath(os.path.join(vault, rel))
    if not _inside(real_target, real_vault) or real_target == real_vault:
        raise DoorRefused("path:symlink-escape", f"{rel} resolves outside the vault; write into a real vault folder")
    resolved = Path(os.path.relpath(real_target, real_vault)).as_posix()
    if any(part.startswith(".") for part in resolved.split("/")):
        raise DoorRefused(
            "path:symlink-escape",
            f"{rel} leads through a symlink into a dot folder ({resolved}); write into a real vault folder",
        )
    return _Place(exists=exists, resolved=resolved)


# ------------------------------------------------------------------------------------------- level


@dataclass(frozen=True)
class _Verdict:
    level: str
    rule: str
    why: str  # the reason's first half: what the place is
    instead: str = ""  # for an actor the level refuses: where to write instead


def _contract_spelling(vault: Path, rel: str, contract: Contract) -> str:
    """`rel` with its space's folder spelt as the contract spells it, when the path is in no space as written
    but starts with a folder the vault already has that spells a space's folder in another case
    (`Memory/Lessons/x.md`, the vault holding `Memory/`, the contract saying `memory`): macOS and Windows see
    one folder there, and a capture writes into the vault's own spelling (engine/write/folders.py). A case
    variant that does not exist yet is judged as written (`space:unknown`): never looser."""
    if contract.space_of(rel) is not None:
        return rel
    best = ""
    for folder in contract.spaces.values():
        n = len(folder)
        if n > len(best) and rel[n : n + 1] in ("", "/") and rel[:n].casefold() == folder.casefold():
            best = folder
    if not best:
        return rel
    try:
        mode = os.lstat(os.path.join(vault, rel[: len(best)])).st_mode
    except OSError:
        return rel
    return best + rel[len(best) :] if stat.S_ISDIR(mode) else rel


def _stricter(a: str, b: str) -> str:
    return a if LEVEL_ORDER.index(a) >= LEVEL_ORDER.index(b) else b


def project_root_files(slug: str) -> tuple[str, ...]:
    """The five files a project's root holds, for the project folder `slug`."""
    return (PROJECT_FILE, *ROOT_DOCUMENTS, f"moc-{slug}.md")


def _agent_spaces(contract: Contract) -> str:
    """The folders agents may write in on their own, for refusal reasons (`memory/, ...`)."""
    folders = [f"{folder}/" for name, folder in contract.spaces.items() if contract.authority_of(name) == "standing"]
    return ", ".join(sorted(folders)) or "a standing space"


def _judge(rel: str, contract: Contract, *, exists: bool, creating: bool) -> _Verdict:
    space = contract.space_of(rel)
    name = rel.rsplit("/", 1)[-1]
    projects = contract.spaces.get(PROJECTS_SPACE)
    inner = rel[len(projects) + 1 :].split("/") if space == PROJECTS_SPACE and projects else []
    if name == PROJECT_FILE and len(inner) != 2:
        raise DoorRefused(
            "path:not-markdown",
            f"project.yaml belongs only at a project root ({projects or PROJECTS_SPACE}/<slug>/); "
            "write a .md note here instead",
        )
    elsewhere = f"write under {_agent_spaces(contract)} instead, or ask the operator"
    if space is None:
        if "/" not in rel:
            level = _stricter("alignment", contract.default_authority)
            return _Verdict(level, "vault-root", f"{rel} sits at the vault root, outside every space", elsewhere)
        top = rel.split("/", 1)[0]
        return _Verdict(
            contract.default_authority,
            "space:unknown",
            f"{top}/ is not a space in the storage-rules contract (its `spaces`), so it takes the contract's "
            f"default level, {contract.default_authority} ({_LEVEL_MEANS[contract.default_authority]})",
            elsewhere,
        )
    folder = contract.spaces[space]
    level = contract.authority_of(space)
    if len(inner) == 2 and LEVEL_ORDER.index(level) < LEVEL_ORDER.index("alignment"):
        slug = inner[0]
        root = f"{folder}/{slug}/"
        if exists or (name in project_root_files(slug) and not creating):
            return _Verdict(
                "alignment",
                "project-root:existing",
                f"{name} is an existing file at the root of project {slug}, and root documents change only "
                "with the operator",
                f"record the proposed change in a note under {root}docs/ and ask the operator",
            )
        if name not in project_root_files(slug):
            return _Verdict(
                "alignment",
                "project-root:other",
                f"{root} holds only {', '.join(project_root_files(slug))}, and {name} is not one of them",
                f"put the note in a subfolder such as {root}docs/ instead",
            )
        return _Verdict("standing", "project-root:allowed", f"{name} is one of the five root files of {root}")
    return _Verdict(
        level, f"level:{level}", f"{folder}/ has the {level} level in the storage-rules contract", elsewhere
    )


def _refusal(verdict: _Verdict, actor: str) -> str | None:
    """None when `actor` may write at `verdict.level`, else the second half of the reason."""
    if verdict.level in ("standing", "shared"):
        return None
    if verdict.level == "private":
        return "nothing writes there through agentmd, the operator included: the owner edits it in their own editor"
    if actor == "operator":
        return None
    return f"only the operator may make this change (the CLI with its explicit operator flag); {verdict.instead}"


_LEVEL_MEANS: Final = {  # each level in a few words, for a reader who has not read the contract
    "standing": "agents write there on their own",
    "shared": "agents and the owner both write there",
    "alignment": "only the owner writes there",
    "private": "nothing writes there through agentmd",
}
_ALLOWED_WHY: Final = {
    "standing": "agents may write there on their own",
    "shared": "agents keep it up to date and the operator writes alongside them",
    "alignment": "the operator may write there",
}


def decide(
    vault: Path | str, raw_path: str, contract: Contract, *, actor: str = "agent", creating: bool = True
) -> Decision:
    """Whether `actor` may write `raw_path` in `vault` under `contract`, and why. Never raises, never writes.

    `actor` is `agent` (MCP, hooks), `operator` (the owner through the CLI's explicit flag) or `phone`;
    an unknown actor is refused. `creating` says the write makes a new file; it matters only at project
    roots, where changing a root document (or writing over any existing root file) needs the operator.
    """
    if actor not in ACTORS:
        return Decision(
            False,
            None,
            None,
            "actor:unknown",
            f"{actor!r} is not a writer the door knows; use one of {', '.join(ACTORS)}",
        )
    try:
        rel = normalize_path(raw_path)
    except DoorRefused as exc:
        return Decision(False, None, None, exc.rule, exc.reason)
    vault = Path(vault)
    if not vault.is_dir():
        return Decision(
            False, rel, None, "vault:missing", f"the vault {vault} is not a folder; check the --vault setting"
        )
    try:
        place = _place(vault, rel)
        verdict = _judge(_contract_spelling(vault, rel, contract), contract, exists=place.exists, creating=creating)
        if place.resolved != rel:  # followed a symlink that stays in the vault: the stricter place decides
            landing = _judge(place.resolved, contract, exists=place.exists, creating=creating)
            if LEVEL_ORDER.index(landing.level) > LEVEL_ORDER.index(verdict.level):
                why = f"{rel} leads through a symlink to {place.resolved}, and {landing.why}"
                verdict = _Verdict(landing.level, landing.rule, why, landing.instead)
    except DoorRefused as exc:
        return Decision(False, rel, None, exc.rule, exc.reason)
    refusal = _refusal(verdict, actor)
    if refusal is None and actor == "agent" and (contract.is_phone_path(rel) or contract.is_phone_path(place.resolved)):
        return Decision(
            False,
            rel,
            verdict.level,
            "area:phone",
            f"{rel} is in the phone clipper's folder (`phone_paths`), whose notes are filed as the person's own clips "
            "by the instructions they carry; agents write their notes elsewhere (the `memory_capture` MCP tool files "
            "them)",
        )
    if refusal is None:
        return Decision(True, rel, verdict.level, verdict.rule, f"{verdict.why}; {_ALLOWED_WHY[verdict.level]}")
    return Decision(False, rel, verdict.level, verdict.rule, f"{verdict.why}; {refusal}")


def explain(decision: Decision) -> str:
    """A one-line verdict for the CLI, e.g. `allowed (level:standing): memory/ is standing ...`."""
    verdict = "allowed" if decision.allowed else "refused"
    return f"{verdict} ({decision.rule}): {decision.reason}"
