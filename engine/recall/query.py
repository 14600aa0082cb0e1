"""From a prompt to what the recall search asks: the query words, the session's project, and the
contract's walls (cached by the contract files' stat, so a prompt with a daemon up never parses the
contract). The rules are in the package docstring (engine/recall/__init__.py)."""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from agentmd.engine.search.recall import PROJECTS_SPACE, Walls
from agentmd.vocabulary import CJK_CHARACTERS, PROMPT_FILLER, STOP_WORDS, VAULT_CONTRACT

MAX_QUERY_WORDS = 12
MAX_PROMPT_CHARS = 100_000  # only the head of a huge pasted prompt is read
BINDING_FILE = ".agentmd"
WALLS_CACHE = "recall-walls.json"

_FENCED = re.compile(r"(?ms)^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)")
_URL = re.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]{1,15}://|www\.)\S+")
_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
_SPLIT = re.compile(r"[^\w'.\-]+")
_HEXISH = re.compile(r"^(?:0x)?[0-9a-f]{10,}$")
_EDGE = "'.-_"
MAX_WORD_CHARS = 40  # a longer word is a hash, a blob or a run-together identifier, not something a note says
# Chinese and Japanese put no spaces between words, so a clause arrives as one long token: it is read in
# slices of this many characters (each slice counts as one of the query's words) rather than dropped.
CJK_SLICE = 16


@functools.cache
def _scripts() -> re.Pattern[str]:
    """CJK runs (group 1) and the text between them. Compiled the first time a prompt needs it: the character
    class takes milliseconds to compile, on a path that runs before every prompt and seldom meets a long CJK word."""
    return re.compile(f"([{CJK_CHARACTERS}]+)|[^{CJK_CHARACTERS}]+")


def _pieces(word: str) -> list[str]:
    """A token as the query reads it: a long one holding CJK text cut where the script changes, its CJK runs in
    slices of CJK_SLICE characters; anything else whole."""
    if len(word) <= MAX_WORD_CHARS or word.isascii():
        return [word]
    runs = list(_scripts().finditer(word))
    if not any(m.group(1) for m in runs):
        return [word]
    out: list[str] = []
    for m in runs:
        run = m.group(0)
        if m.group(1):
            out.extend(run[i : i + CJK_SLICE] for i in range(0, len(run), CJK_SLICE))
        else:
            out.append(run)
    return out


_SLASHES = re.compile(r"[/\\]+")
_CODE_FILE = re.compile(r"^[^.]+\.[A-Za-z][A-Za-z0-9]{0,9}$")  # parser.rs, Button.tsx, README.md


def _slashed(token: str) -> list[str]:
    """The words of a token holding a slash: a file path gives its file's name without the extension (the most
    specific word of a prompt about code: `src/parser.rs` -> `parser`); two or three words joined by slashes
    (`async/await`, `TCP/IP`) give each word; a slash command (`/review`) gives nothing."""
    bare = token.strip(_EDGE + "`\"'()[]{}<>,;:!?")
    parts = [p for p in _SLASHES.split(bare) if p]
    if not parts or (bare.startswith("/") and len(parts) == 1 and "." not in parts[0]):
        return []
    last = parts[-1]
    pathlike = (
        len(parts) > 3 or bool(_CODE_FILE.match(last)) or bare.startswith(("./", "../", "~/", "/")) or ":" in bare
    )
    if pathlike:
        return [last.lstrip(".").split(".", 1)[0]]  # ~/.bashrc -> bashrc
    return parts


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")  # a terminal's colour and cursor sequences
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")  # control characters, lone surrogates


def sanitize_query(prompt: str, max_words: int = MAX_QUERY_WORDS, keep: Collection[str] = ()) -> str:
    """One search query from a prompt: the first `max_words` meaningful words, in order, deduplicated. A stop
    word of `keep` (lower case) right after a kept word is kept: `will` where "Free Will" names a note, as the
    daemon finds it (`named.kept_stop_words`)."""
    text = (prompt or "")[:MAX_PROMPT_CHARS]
    if any(ch < " " or "\ud800" <= ch <= "\udfff" for ch in text):  # pasted terminal output, bytes not UTF-8
        text = _CONTROL.sub(" ", _ANSI.sub(" ", text))
    text = _FENCED.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _TAG.sub(" ", text)
    kept: list[str] = []
    seen: set[str] = set()
    last = ""  # the word before this one, if it was kept
    for token in text.split():
        if "@" in token:  # e-mail addresses, mentions
            last = ""
            continue
        parts = _slashed(token) if "/" in token or "\\" in token else _SPLIT.split(token)
        for word in (piece for part in parts for piece in _pieces(part.strip(_EDGE))):
            lower = word.lower()
            bare = "".join(ch for ch in lower if ch.isalnum())
            previous, last = last, ""
            if len(bare) < 2 or len(word) > MAX_WORD_CHARS or _HEXISH.match(lower):
                continue
            if lower in PROMPT_FILLER or bare in PROMPT_FILLER:
                continue
            if (bare in STOP_WORDS or lower in STOP_WORDS) and not (previous and lower in keep):
                continue
            if lower in seen:
                continue
            seen.add(lower)
            kept.append(word)
            last = "" if bare in STOP_WORDS or lower in STOP_WORDS else word
            if len(kept) >= max_words:
                return " ".join(kept)
    return " ".join(kept)


def named_stop_words(index: Any, prompt: str) -> list[str]:
    """The prompt's stop words inside a run of its words that names a note (`will` where "Free Will" is a
    title), for `sanitize_query` to keep: how the daemon and the hook's own process, each with the index open,
    make the hook's query. `index` is a `SearchIndex`; its module (and Tantivy) load only here."""
    from agentmd.engine.search.named import kept_stop_words, named_runs

    return kept_stop_words(named_runs(index, prompt))


# ----------------------------------------------------------------------------------------- project


def _norm_slug(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def read_binding(path: Path) -> tuple[bool, str | None]:
    """(found, project) from a binding file: a `project: <slug>` line (`#` comments, quotes allowed)."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            text = fh.read(8192)
    except OSError:
        return False, None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == "project":
            value = value.split(" #", 1)[0].strip().strip("'\"").strip()
            return True, (None if value.lower() in ("", "none", "null", "~") else value)
    return False, None


def project_folders(vault: Path, projects_folder: str | None) -> dict[str, str]:
    """normalised name -> folder name of every project folder in the vault."""
    if not projects_folder:
        return {}
    try:
        names = os.listdir(vault / projects_folder)
    except OSError:
        return {}
    return {_norm_slug(n): n for n in names if not n.startswith(".") and (vault / projects_folder / n).is_dir()}


def bind_project(cwd: str | Path | None, vault: Path, projects_folder: str | None) -> tuple[str | None, str]:
    """The session's project for a working directory, and how it was found (see the package docstring)."""
    if not cwd:
        return None, "no working directory"
    start = Path(cwd)
    chain = [start, *start.parents]
    for d in chain:
        candidate = d / BINDING_FILE
        if candidate.is_file():
            found, project = read_binding(candidate)
            if found:
                return project, f"binding file {candidate}"
    folders = project_folders(vault, projects_folder)
    if not folders:
        return None, "no binding file and no project folders"
    for d in chain:
        slug = folders.get(_norm_slug(d.name))
        if slug:
            return slug, f"folder {d} matches {projects_folder}/{slug}"
        if (d / ".git").exists():
            break  # the work tree's root: its parents are other people's folders
    return None, "no binding file; no folder matches a project folder"


# ------------------------------------------------------------------------------------------- walls


def _stamp(path: Path | None) -> list[Any]:
    if path is None:
        return ["none"]
    try:
        st = os.stat(path)
    except OSError:
        return ["missing", str(path)]
    return [str(path), st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev]


def _packaged_contract() -> Path:
    return Path(__file__).resolve().parent.parent.parent / "rules" / "storage-rules.default.md"


def walls_key(settings: Any) -> list[Any]:
    target = settings.contract_path or (settings.vault / VAULT_CONTRACT)
    return [1, _stamp(target), _stamp(_packaged_contract())]


def save_walls(settings: Any, walls: Walls) -> None:
    """Cache the walls under the contract files' current stat (best effort)."""
    cache = settings.state_dir / WALLS_CACHE
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        payload: dict[str, object] = {
            "key": walls_key(settings),
            "recall_exempt_areas": list(walls.recall_exempt_areas),
        }
        payload |= {"projects_folder": walls.projects_folder, "recall_floor": walls.recall_floor}
        payload["phone_paths"] = list(walls.phone_paths)
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass


def load_walls(settings: Any, contract: Any = None) -> Walls:
    """The contract's walls, from the stat-keyed cache when the contract files have not changed; else
    parsed by `rules` (slow to import) and cached again."""
    if contract is None:
        try:
            data = json.loads((settings.state_dir / WALLS_CACHE).read_text(encoding="utf-8"))
            if data.get("key") == walls_key(settings):
                floor, phone = data.get("recall_floor"), data.get("phone_paths")
                if isinstance(floor, int | float) and isinstance(phone, list):  # an older cache is read again
                    exempt = tuple(data["recall_exempt_areas"])
                    return Walls(exempt, data.get("projects_folder"), float(floor), tuple(phone))
        except (OSError, ValueError, KeyError, TypeError):
            pass
        from agentmd.rules import load_contract

        contract = load_contract(settings.vault, settings.contract_path).contract
    walls = Walls.from_contract(contract)
    save_walls(settings, walls)
    return walls


__all__ = [
    "BINDING_FILE",
    "MAX_QUERY_WORDS",
    "PROJECTS_SPACE",
    "WALLS_CACHE",
    "Walls",
    "bind_project",
    "load_walls",
    "project_folders",
    "read_binding",
    "sanitize_query",
    "save_walls",
    "walls_key",
]
