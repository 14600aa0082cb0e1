"""The recall gathering: from a search's hits to the notes a prompt hook may show, with what it shows.

`gather` takes a search's results in rank order and returns the candidates, JSON-ready:

    {"direct": [...], "linked": [...], "left_out": ["path: why", ...]}

Each candidate has `path`, `title`, `summary`, `project` (the note's own, else its project folder),
`score` and `linked_from`. Direct hits keep the search's order. Linked notes are one link away from
them: resolved out-links first, then backlinks, hit by hit in rank order (engine/search/graph.py);
dangling links and attachments are left out. Direct and linked notes pass the same walls: the contract's
recall-exempt areas (`Walls`), walled notes (archived, superseded, staged), dormant notes (the lifecycle
policy's, engine/curate/lifecycle.py) and notes that are not confirmed knowledge (unfiled, untrusted and
self-probe notes, generated maps: engine/search/trust.py), read from the catalog row. A direct hit must also reach the
contract's `recall_floor`: its search `confidence` (engine/search/confidence.py) at least the floor, so most
prompts the vault cannot help with gather nothing; and a hit of a hybrid search must be near the prompt in
meaning (`RECALL_COSINE`), unless the whole prompt names it (a name inside a longer prompt, `name_within`,
passes the same gate as any hit: a coding prompt's words are often some note's title). A linked note rides
on the hit it is linked from. Last, a candidate whose title or summary the write prefilters refuse (an order
to the agent, a credential) is withheld (`withheld`).

The summary is what reconcile already read from the note and the index stores with it
(engine/index/digest.py): the frontmatter `summary`, else the search snippet (unless it is only the
note's opening heading) read as prose, else the note's opening line. No note file is read here.

Two callers: the daemon's search route with `recall: true` (`gather_in_daemon`), so a hook with a daemon up
needs one HTTP call, and the hook's own process when no daemon runs (`search_and_gather`). Module level
imports only the standard library: the hook's light path loads this module for `Walls`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, NotRequired, TypedDict

if TYPE_CHECKING:
    from agentmd.engine.index.fulltext import SearchIndex

PROJECTS_SPACE = "projects"
MAX_DIRECT = 15
MAX_LINKED_CANDIDATES = 10  # linked notes gathered, in order, before a budget renders a few of them
DAEMON_GATHER_SECONDS = 1.0
NO_DAEMON = "no daemon runs, and the prompt hook does not load the embedding model itself"
# A direct hit of a hybrid search whose best chunk's cosine to the prompt is below this is not shown, whatever its
# words (a note the prompt names is): the hook pushes notes unasked, and a coding prompt's words
# (`update`, `install`, `steps`, `runs`) fill long notes on other things. Through the hybrid search a daemon
# answers the hook with, on a copy of vaultofknowledge with every chunk embedded (`agentmd eval prompts
# --hybrid`): the 30 fresh coding prompts of bench/fixtures/prompts-vaultofknowledge-fresh.jsonl 27 silent for
# 26 (`update README new install steps` no longer gets a note on installing an operating system; a GitHub
# Actions prompt keeps the GitHub Actions note and no longer gets two others beside it); the 52 train prompts
# 51 silent, and the 20 helpful ones keep their note, as before (their notes' cosines are 0.47 and up); of the
# dev and long questions' answers in a top 5 that reach the recall floor (bench/fixtures, three vaults), 0 of 105
# have a cosine below 0.40. The search's own veto (engine/search/confidence.py COSINE_VETO, 0.30) is lower: a
# person who asks may still want a note their words name.
RECALL_COSINE = 0.40
# A note whose confidence is under this share of the best one's is not pushed for itself: a prompt that names a
# note (0.99) leaves a tail of notes that only mention it (0.6, over the floor) out (bench/RESULTS.md,
# "the recall hook's share of the best note").
RELATIVE_FLOOR = 0.65


class Candidate(TypedDict):
    """One note a recall may show, as the daemon sends it to the hook."""

    path: str
    title: str
    summary: str
    project: str | None
    score: float | None  # the search's score (its confidence, 0 to 1); None for a linked note
    linked_from: str | None  # the direct hit a linked note rides on
    confidence: NotRequired[float | None]  # direct hits only


class Gathered(TypedDict):
    """What `gather` returns: the direct hits, the notes linked from them, and why the others were left out."""

    direct: list[Candidate]
    linked: list[Candidate]
    left_out: list[str]


def vault_relative(path: str) -> str | None:
    """The path as a clean vault-relative path, or None when it is absolute or climbs out of the vault."""
    if not path or path.startswith("/"):
        return None
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return None if ".." in parts else "/".join(parts)


class Walls(NamedTuple):  # not a dataclass: `dataclasses` costs the prompt hook about 10 ms of imports
    """What the contract says recall must not show, and where project folders are."""

    recall_exempt_areas: tuple[str, ...] = ()
    projects_folder: str | None = PROJECTS_SPACE
    recall_floor: float = 0.0  # a direct hit's search confidence must reach this
    phone_paths: tuple[str, ...] = ()  # the clipper's inbox: clips nobody has filed yet, refused ones too

    def exempt(self, path: str) -> bool:
        rel = vault_relative(path)
        if rel is None:
            return True  # not a vault path: never shown
        return any(rel == a or rel.startswith(a + "/") for a in (*self.recall_exempt_areas, *self.phone_paths))

    def project_of_path(self, path: str) -> str | None:
        """The project folder a note lies in (`projects/<slug>/...`), if any."""
        if not self.projects_folder:
            return None
        prefix = self.projects_folder.rstrip("/") + "/"
        if not path.startswith(prefix):
            return None
        rest = path[len(prefix) :].split("/")
        return rest[0] if len(rest) > 1 and rest[0] else None

    @classmethod
    def from_contract(cls, contract: Any) -> Walls:
        return cls(
            tuple(contract.recall_exempt_areas),
            contract.spaces.get(PROJECTS_SPACE),
            float(contract.thresholds.recall_floor),
            tuple(contract.phone_paths),
        )


def summary_of(facts: Mapping[str, Any], snippet: str | None) -> str:
    """The frontmatter summary, else the snippet (unless it is just an opening heading), else the opening
    line; all read as prose."""
    summary = facts.get("summary")
    if isinstance(summary, str) and summary:
        return summary
    if snippet and not snippet.lstrip().startswith("#"):
        from agentmd.vault_schema.digest import plain

        return plain(snippet)
    opening = facts.get("opening")
    return opening if isinstance(opening, str) else ""


def link_paths(found: Any, source: str) -> list[str]:
    """Linked note paths from a `Graph.links_of` answer: resolved out-links first, then the notes linking
    here. Dangling links and attachments are left out."""
    out: list[str] = []
    if not isinstance(found, Mapping):
        return out
    for key, field_name in (("out", "resolved"), ("back", "path")):
        for item in found.get(key) or ():
            path = item.get(field_name) if isinstance(item, Mapping) else None
            if isinstance(path, str) and path and path != source and not item.get("attachment"):
                out.append(path.split("#", 1)[0])
    return out


def _stored_facts(index: Any, path: str) -> dict[str, object]:
    if index is None:
        return {}
    found = index.hit_for(path)
    return dict(found[0].facts) if found else {}


def _candidate(
    catalog: Any, index: Any, walls: Walls, path: str, title: str | None, snippet: str | None
) -> tuple[Candidate | None, str | None]:
    if walls.exempt(path):
        return None, "recall-exempt area"
    row = catalog.get(path, whole=False)  # the notes table's columns are all this reads
    if row is None:
        if title is None:
            return None, "not in the catalog"
    elif row.wall:
        return None, f"walled ({row.wall})"
    elif (row.lifecycle or "").lower() == "dormant":
        return None, "dormant (unused for a long time; search still finds it)"
    else:
        from agentmd.engine.search.trust import unconfirmed_reason

        why = unconfirmed_reason(
            status=row.status,
            untrusted="untrusted" in row.flags,
            probe="probe" in row.flags,
            generated="generated" in row.flags,
            unreadable="frontmatter_error" in row.flags or "decode_error" in row.flags,
        )
        if why:
            return None, why
    return {
        "path": path,
        "title": title or (row.title if row else "") or path.rsplit("/", 1)[-1],
        "summary": summary_of(_stored_facts(index, path), snippet),
        "project": (row.project if row else None) or walls.project_of_path(path),
        "score": None,
        "linked_from": None,
    }, None


def gather(
    catalog: Any,
    index: Any,
    walls: Walls,
    results: Iterable[Mapping[str, Any]],
    *,
    max_direct: int = MAX_DIRECT,
    max_linked: int = MAX_LINKED_CANDIDATES,
    deadline: float | None = None,
    now: Callable[[], float] = time.monotonic,
) -> Gathered:
    """The notes a recall may show (see the module docstring). `catalog` is an engine Catalog, `index` the
    SearchIndex whose stored facts give the summaries (None: snippets only). Links stop being followed
    once `now()` passes `deadline`."""
    left_out: list[str] = []
    direct: list[Candidate] = []
    shown: set[str] = set()
    below: set[str] = set()  # direct hits under the recall floor: not shown for themselves, but may ride a link
    results = list(results)
    scores = [float(c) for r in results if isinstance(c := r.get("confidence", r.get("score")), int | float)]
    least = max(scores, default=0.0) * RELATIVE_FLOOR
    for r in results:
        path = r.get("note") or str(r.get("path", "")).split("#", 1)[0]
        if not path or path in shown or path in below:
            continue
        # the result's confidence, 0 to 1: `score` now; a daemon of an older install sends its ranking score as
        # `score` and the confidence only as `confidence`, so that name is read first while both are sent
        confidence = r.get("confidence", r.get("score"))
        if confidence is not None and float(confidence) < walls.recall_floor:
            below.add(path)
            left_out.append(f"{path}: confidence {float(confidence):.2f} is below the recall floor")
            continue
        if confidence is not None and float(confidence) < least:
            below.add(path)
            left_out.append(f"{path}: confidence {float(confidence):.2f} is far below the best note's")
            continue
        cosine = r.get("cosine")
        named = r.get("entity") or (r.get("name") and not r.get("name_within"))  # the whole prompt names it
        if isinstance(cosine, int | float) and float(cosine) < RECALL_COSINE and not named:
            below.add(path)
            left_out.append(f"{path}: its meaning is far from the prompt's (cosine {float(cosine):.2f})")
            continue
        shown.add(path)
        candidate, why = _candidate(catalog, index, walls, path, r.get("title"), r.get("snippet"))
        if candidate is None:
            left_out.append(f"{path}: {why}")
            continue
        candidate["score"] = confidence
        candidate["confidence"] = confidence
        direct.append(candidate)
        if len(direct) >= max_direct:
            break
    linked: list[Candidate] = []
    if direct and max_linked > 0:
        from agentmd.engine.search.graph import Graph

        graph = Graph(catalog)  # one snapshot of the note paths for every hit
        for hit in direct:
            if len(linked) >= max_linked or (deadline is not None and now() > deadline):
                break
            for path in link_paths(graph.links_of(hit["path"]), hit["path"]):
                if path in shown:
                    continue
                shown.add(path)
                candidate, why = _candidate(catalog, index, walls, path, None, None)
                if candidate is None:
                    left_out.append(f"{path} (linked): {why}")
                    continue
                candidate["linked_from"] = hit["path"]
                linked.append(candidate)
                if len(linked) >= max_linked:
                    break
    return {"direct": withheld(direct, left_out), "linked": withheld(linked, left_out), "left_out": left_out}


WITHHELD_FAMILIES = ("directive", "secret")  # what a shown line must not carry into a prompt


_FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,}).*$", re.MULTILINE)


def tripped(fields: Mapping[str, str]) -> list[str]:
    """The directive and secret codes the write prefilters find in text about to be shown to an agent. Fence
    lines are dropped first: a fence lets a capture quote an attack as an example, but a snippet cut from it
    reaches the agent as plain text."""
    from agentmd.rules.prefilter import check_fields

    plain = {key: _FENCE_LINE.sub("", value) for key, value in fields.items() if value}
    verdict = check_fields(plain)
    return [code for code in verdict.codes() if code.split(":", 1)[0] in WITHHELD_FAMILIES]


def withhold_rows(answer: dict[str, object]) -> dict[str, object]:
    """A search answer (its JSON form) as an agent may read it (`memory_search`): a row whose title or snippet
    trips the prefilters keeps its path, its text replaced by why it was withheld; so does the closest miss's
    title. A person reads the note itself in the vault or with `agentmd search`."""
    rows = answer.get("results")
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        codes = tripped({"title": str(row.get("title") or ""), "snippet": str(row.get("snippet") or "")})
        if codes:
            row["title"] = None
            row["snippet"] = (
                f"[withheld from agents: this note's text trips the write prefilters ({', '.join(codes)}); "
                "its owner can read it in the vault]"
            )
            row["withheld"] = codes
    miss = answer.get("closest_miss")
    if isinstance(miss, dict) and tripped({"title": str(miss.get("title") or "")}):
        miss["title"] = None
    return answer


def withheld(candidates: list[Candidate], left_out: list[str]) -> list[Candidate]:
    """The candidates whose shown text (title and summary) the write prefilters would let through; each other
    one is named in `left_out`. A note the person wrote by hand, or one a tool wrote past the door, never met
    the prefilters: text in it that orders an agent about, or a credential, is kept out of the prompt as a
    capture of it is kept out of the vault. Only the few notes about to be shown are read."""
    if not candidates:
        return candidates
    kept = []
    for c in candidates:
        codes = tripped({"title": str(c.get("title") or ""), "summary": str(c.get("summary") or "")})
        if codes:
            linked = " (linked)" if c.get("linked_from") else ""
            left_out.append(
                f"{c.get('path')}{linked}: withheld, its text trips the write prefilters ({', '.join(codes)})"
            )
        else:
            kept.append(c)
    return kept


def gather_in_daemon(
    settings: Any, index: Any, contract: Any, results: Iterable[Mapping[str, Any]], max_direct: int
) -> Gathered | None:
    """What the daemon's search attaches to its answer when asked for `recall`: `gather` with the daemon's
    contract and index, on a read-only catalog handle of its own (the indexer's connection stays
    untouched). None when it fails (logged): the hook then gathers the candidates itself, so the search
    still answers."""
    from agentmd.engine.index.catalog import Catalog

    try:
        catalog = Catalog.reader(settings.catalog_path, timeout=DAEMON_GATHER_SECONDS)
        try:
            return gather(
                catalog,
                index,
                Walls.from_contract(contract),
                results,
                max_direct=max_direct,
                deadline=time.monotonic() + DAEMON_GATHER_SECONDS,
            )
        finally:
            catalog.close()
    except Exception:
        import logging

        logging.getLogger("agentmd.recall").exception("gathering recall candidates failed")
        return None


def gather_beside_daemon(
    settings: Any,
    walls: Walls,
    results: Iterable[Mapping[str, Any]],
    max_direct: int,
    deadline: float,
    now: Callable[[], float] = time.monotonic,
) -> Gathered:
    """`gather` for a daemon that searched but did not gather (one from an older install): a read-only
    catalog handle, and no index (the daemon owns it), so summaries come from the snippets."""
    from agentmd.engine.index.catalog import Catalog

    catalog = Catalog.reader(settings.catalog_path, timeout=max(0.05, min(0.5, deadline - now())))
    try:
        return gather(catalog, None, walls, results, max_direct=max_direct, deadline=deadline, now=now)
    finally:
        catalog.close()


def search_and_gather(
    settings: Any,
    request: Mapping[str, Any],
    *,
    max_direct: int,
    deadline: float,
    now: Callable[[], float] = time.monotonic,
    query_of: Callable[[SearchIndex], str] | None = None,
) -> tuple[dict[str, object], Walls, Gathered]:
    """Search the index in this process and gather the candidates: (search answer, walls, candidates).
    For a process without a daemon; the index and catalog must exist (checked by the caller). The hook's
    time budget has no room for loading the embedding model, so a hybrid request is answered lexically.
    `query_of` makes the request's query from the open index (the hook's, keeping the stop words a note's name
    holds), in place of the request's own."""
    from agentmd.engine.index.store import Store
    from agentmd.engine.search.query import search
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import load_contract

    contract = load_contract(settings.vault, settings.contract_path).contract
    walls = Walls.from_contract(contract)
    with Store(settings.cache_dir) as store:
        if query_of is not None:
            request = {**request, "query": query_of(store.index)}
        found = search(store.index, contract, SearchRequest(**request), store.catalog, None, NO_DAEMON)
        gathered = gather(
            store.catalog,
            store.index,
            walls,
            [r.to_json() for r in found.results],
            max_direct=max_direct,
            deadline=deadline,
            now=now,
        )
    return found.to_json(), walls, gathered
