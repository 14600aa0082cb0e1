"""The three kinds of note the night reaches, and where each lives by the contract's own routing.

- A **card**: any note of the review queue (an unfiled capture, an ingested note, a phone clip, a
  low-confidence filing). The pass may file it: its verdict is the filing.
- An **idea card**: a note of type `idea` filed directly inside the folder the contract routes `idea` to
  (`types.idea`), flat (no subfolder, no dotfile), and not unfiled. Someone filed it as an idea by putting it
  there, so the pass thinks it through without re-grading it: no filing verdict is written (its `status` and
  `filing_confidence` stay what they were), its title and type stand over the answer, no lifecycle is written
  and it never sinks to dormant. The pass still fills an empty summary, adds tags, aliases and related links,
  and proposes an importance.
- A **project record**: inside the contract's `projects` space, a project's charter at its root
  (`charter.md`, or `_index.md`) or any note under its `decisions/`, `designs/` or `research/` folders. Never
  a tracker, a blueprint, a plan or a progress log: those belong to whoever keeps them, and a nightly writer
  would race them. A record is not filed either: the pass merges into the frontmatter its author wrote
  (an empty summary filled, tags, aliases and related added after the record's own, importance proposed, the
  `enriched` stamp), and never writes its title, type, status, filing confidence, lifecycle or importance. A
  record without a frontmatter block is declined before the call: there is nothing to merge into.

Idea cards and project records that are not already in the review queue join the night's queue after it,
the idea cards with the cards and the records last; the ledger's fingerprint gate skips, for free, every one
the pass is current on.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from agentmd.engine.curate.queue import QueueItem
from agentmd.engine.index.catalog import Catalog
from agentmd.rules import Contract

CARD = "card"
IDEA = "idea"
RECORD = "record"
KINDS = (CARD, IDEA, RECORD)
IDEA_TYPE = "idea"
PROJECTS_SPACE = "projects"
CHARTERS = ("charter.md", "_index.md")
RECORD_FOLDERS = ("decisions", "designs", "research")


def _parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p]


def project_of_record(path: str, contract: Contract) -> str | None:
    """The project a vault-relative path is a record of (its charter, a decision, design or research note),
    else None."""
    folder = contract.spaces.get(PROJECTS_SPACE)
    if not folder or not path.endswith(".md"):
        return None
    top = _parts(folder)
    parts = _parts(path)
    if parts[: len(top)] != top or any(p.startswith(".") for p in parts):
        return None
    rest = parts[len(top) :]
    if len(rest) == 2 and rest[1] in CHARTERS:
        return rest[0]
    if len(rest) >= 3 and rest[1] in RECORD_FOLDERS:
        return rest[0]
    return None


def ideas_folder(contract: Contract) -> str | None:
    """The folder the contract files ideas in (`types.idea`), or None when it lists no idea type."""
    folder = contract.types.get(IDEA_TYPE)
    return "/".join(_parts(folder)) if folder else None


def in_ideas_folder(path: str, contract: Contract) -> bool:
    folder = ideas_folder(contract)
    if folder is None or not path.endswith(".md"):
        return False
    pure = PurePosixPath(path)
    return str(pure.parent) == folder and not pure.name.startswith(".")


def is_idea_card(path: str, note_type: object, status: object, contract: Contract) -> bool:
    """A filed idea: type `idea`, directly inside the ideas folder, and not unfiled."""
    if note_type != IDEA_TYPE or not in_ideas_folder(path, contract):
        return False
    return str(status or "").strip().lower() != "unfiled"


def kind_of(path: str, fm: dict[str, object], contract: Contract) -> str:
    if project_of_record(path, contract) is not None:
        return RECORD
    if is_idea_card(path, fm.get("type"), fm.get("status"), contract):
        return IDEA
    return CARD


def extra_queue(catalog: Catalog, contract: Contract, queued: set[str]) -> list[QueueItem]:
    """Idea cards, then project records, that the review queue does not already hold (walled notes and the
    self-probe's never), each oldest first."""
    ideas: list[QueueItem] = []
    records: list[QueueItem] = []
    for path, captured, status, _hash, flags in catalog.review_rows():
        if path in queued or "probe" in flags:
            continue
        project = project_of_record(path, contract)
        if project is not None:
            why = f"a record of the project {project}: summary, tags and links are merged into it, never a filing"
            records.append(QueueItem(path, captured, "project-record", why, "capture", None))
            continue
        if in_ideas_folder(path, contract):
            row = catalog.get(path)
            if row is not None and is_idea_card(path, row.type, status, contract):
                why = "an idea card: thought through, never re-graded"
                ideas.append(QueueItem(path, captured, "idea-card", why, "capture", None))
    return ideas + records
