"""The page's writes, each a plan first and a write only when the person applies it, through the very code
the command line runs:

- `undo` / `revert`: engine/git/undo.py's `make_plan` for the plan; the write is the daemon's own `/v1/revert`
  handler (`agentmd undo --yes` and `agentmd revert HASH --yes` post to it), so the commit, its message and its
  `origin: revert` trailer are the command's;
- `confirm` / `retire`: engine/curate/actions.py's `plan_edits`, applied by `apply_steps` with the daemon's
  curation writer, as the daemon applies the plan `agentmd confirm PATH --yes` hands it (`origin: confirm`,
  `origin: retire`);
- `resolve`: engine/git/resolve.py's `resolve_conflict`, then the daemon's commit cycle (`origin: resolve`), as
  `agentmd resolve PATH --keep K` does while the daemon runs.

A plan carries what it was made on (HEAD for an undo, the note's bytes for a curation step); applying it
after the vault moved is refused, so what is written is what was shown.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentmd.engine.curate.actions import plan_edits
from agentmd.engine.curate.steps import StepRefused, Writer, apply_steps, curation_refusal, digest
from agentmd.engine.errors import AgentmdError, UsageError
from agentmd.engine.git.conflicts import read_state, still_conflict
from agentmd.engine.git.resolve import KEEP, resolve_conflict
from agentmd.engine.git.runner import HEX_ID, GitCli
from agentmd.engine.git.sync import SyncError
from agentmd.engine.git.undo import make_plan
from agentmd.engine.git.undo_types import ResultJson, Selection, UndoPlan, UndoRefused
from agentmd.engine.search.result import SearchResponse
from agentmd.engine.settings import Settings
from agentmd.engine.web.facts import safe_note_path
from agentmd.vocabulary import in_words

ACTIONS = ("undo", "revert", "confirm", "retire", "resolve")
MAX_DIFF_LINES = 200


@dataclass
class PageHost:
    """What the page needs of the daemon serving it."""

    settings: Settings
    status: Callable[[], Mapping[str, object]]
    store: Callable[[], Any]  # the daemon's Store, None while the index opens
    contract: Callable[[], Any]
    search: Callable[..., SearchResponse]  # Daemon.search
    revert: Callable[[dict[str, object]], ResultJson]  # the `/v1/revert` handler, as the operator
    writer: Callable[[], Writer]  # the daemon's curation writer
    identity: Callable[[], dict[str, str]]  # the committer's git identity
    request_commit: Callable[[float], None]
    token: Callable[[], str | None]
    operator: Callable[[Mapping[str, str]], bool]  # whether a request's headers carry the operator token


@dataclass
class Outcome:
    """What the page shows of a plan or a write."""

    title: str
    lines: list[str]
    ready: bool = False  # a plan that would change something
    apply: dict[str, object] | None = None  # the request that applies it
    apply_label: str = "Apply"
    commits: list[str] = field(default_factory=list)
    reason_label: str = ""  # the label of an optional line of text the write takes as its `reason`; "" for none

    def to_dict(self) -> dict[str, object]:
        return {
            "title": self.title, "lines": self.lines, "ready": self.ready, "apply": self.apply,
            "apply_label": self.apply_label, "commits": self.commits, "reason_label": self.reason_label,
        }  # fmt: skip


def _text(data: dict[str, object], name: str) -> str:
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise UsageError(f"`{name}` must be text")
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"`{name}` must be given")
    return value.strip()


def _reason(data: dict[str, object]) -> str | None:
    """A retirement's reason: text, or none."""
    value = data.get("reason")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise UsageError("`reason` is text: a few words on why the note is retired")
    return value.strip() or None


def _selection(data: dict[str, object]) -> Selection:
    if data.get("action") == "undo":
        return Selection("undo")
    commit = _text(data, "commit")
    if not HEX_ID.fullmatch(commit):
        raise UsageError("`commit` must be a commit hash")
    return Selection("revert", commits=(commit,))


def _undo_lines(plan: UndoPlan) -> list[str]:
    lines = [f"takes back {len(plan.targets)} change(s), newest first:"]
    lines += [f"  {t.sha[:10]}  {t.at}  {t.origin:<10} {t.subject}" for t in plan.targets]
    if plan.changes:
        lines.append(f"changes {len(plan.changes)} file(s):")
    for c in plan.changes:
        counts = " ".join(x for x in (f"+{c.added}" if c.added else "", f"-{c.removed}" if c.removed else "") if x)
        lines.append(f"  {c.status} {c.path}" + (f" ({counts})" if counts else ""))
    for left in plan.conflicts:
        if left.get("sibling"):
            lines.append(
                f"conflict: {left['path']} keeps its text; the undone version goes beside it as {left['sibling']}"
            )
        else:
            lines.append(f"kept: {left['path']}: {left.get('how', 'kept as it is now')}")
    if not plan.changes:
        lines.append("nothing to change: the vault already holds that version")
    else:
        lines.append("written as one new commit (origin: revert); nothing is written until you apply it")
    return lines


def _head(host: PageHost) -> str:
    return GitCli(host.settings.vault).run("rev-parse", "--verify", "--quiet", "HEAD").text


def _note_digest(host: PageHost, path: str) -> str | None:
    try:
        return digest((host.settings.vault / path).read_bytes())
    except OSError:
        return None


def _conflict_pair(host: PageHost, path: str) -> tuple[str, str]:
    state = read_state(host.settings.state_dir)
    pairs = [
        (str(c["path"]), str(c["sibling"]))
        for c in state.get("conflicts", [])
        if isinstance(c, dict) and c.get("sibling") and still_conflict(host.settings.vault / str(c["sibling"]))
    ]
    found = list(dict.fromkeys(p for p in pairs if path in p))  # fmt: skip
    if len(found) != 1:
        raise UsageError(f"{path} is no open conflict (or has several: name the sibling)")
    return found[0]


def _read(host: PageHost, path: str) -> list[str]:
    try:
        return (host.settings.vault / path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def plan(host: PageHost, data: dict[str, object], now: dt.datetime | None = None) -> Outcome:
    """The plan of one page action; writes nothing."""
    now = now or dt.datetime.now(dt.UTC)
    action = data.get("action")
    if action in ("undo", "revert"):
        selection = _selection(data)
        try:
            p = make_plan(host.settings.vault, selection, host.identity(), now)
        except UndoRefused as exc:
            return Outcome("Nothing to undo" if action == "undo" else "Cannot revert", [str(exc)])
        title = "Undo the last change made on this machine" if action == "undo" else f"Revert {p.targets[0].sha[:10]}"
        request: dict[str, object] = {
            "action": action,
            "head": p.head,
            **({"commit": selection.commits[0]} if selection.commits else {}),
        }
        return Outcome(title, _undo_lines(p), bool(p.changes), request, "Undo it" if p.changes else "Apply")
    if action in ("confirm", "retire"):
        path = safe_note_path(host.settings.vault, _text(data, "path"))
        options: dict[str, object] = {"reason": _reason(data)} if action == "retire" else {}
        edits = plan_edits(
            host.settings.vault, action, [path], options=options, now=now, inbox=host.contract().is_phone_path
        )
        lines = []
        for item in edits.items:
            if item.skipped:
                lines.append(f"skip {item.path}: {item.skipped}")
            else:
                what = ", ".join(f"{k}: {in_words(v)}" for k, v in item.changes.items())
                lines.append(f"{action} {item.path}")
                lines.append(f"  frontmatter becomes: {what}" + "".join(f"; -{k}" for k in item.removed))
        if edits.changed:
            lines.append(f"written as one commit (origin: {action}); every other byte of the note is kept")
        request = {"action": action, "path": path, "digest": _note_digest(host, path)}
        if action == "retire" and options.get("reason"):
            request["reason"] = options["reason"]
        refused = curation_refusal(host.settings.vault, path, host.contract()) if edits.changed else None
        if refused:  # shown now, not only once Apply is pressed
            lines.append(f"refused by the door: {refused}")
        ready = bool(edits.changed) and not refused
        asks = "Why it is retired (optional, kept in the note)" if action == "retire" else ""
        return Outcome(f"{action.capitalize()} {path}", lines, ready, request, action.capitalize(), reason_label=asks)
    if action == "resolve":
        keep = _text(data, "keep")
        if keep not in KEEP:
            raise UsageError(f"`keep` is one of {', '.join(KEEP)}")
        note, sibling = _conflict_pair(host, _text(data, "path"))
        said = {
            "mine": f"keep {note} as it is and remove {sibling}",
            "theirs": f"put {sibling}'s text into {note} (its conflict mark removed) and remove {sibling}",
            "both": f"keep both: {sibling} becomes a note of its own (its conflict mark removed)",
        }[keep]
        diff = list(difflib.unified_diff(_read(host, note), _read(host, sibling), note, sibling, lineterm=""))
        lines = [said, "committed by the daemon (origin: resolve); the tip before is kept as a rescue ref", ""]
        lines += diff[:MAX_DIFF_LINES] + ([f"… {len(diff) - MAX_DIFF_LINES} more line(s)"] if len(diff) > MAX_DIFF_LINES
                                          else [])  # fmt: skip
        request = {"action": "resolve", "path": sibling, "keep": keep,
                   "digests": [_note_digest(host, note), _note_digest(host, sibling)]}  # fmt: skip
        return Outcome(f"Resolve {note}: keep {keep}", lines, True, request, f"Keep {keep}")
    raise UsageError(f"`action` is one of {', '.join(ACTIONS)}")


def apply(host: PageHost, data: dict[str, object], now: dt.datetime | None = None) -> Outcome:
    """Write what `plan` showed for the same request, refusing when the vault moved since."""
    now = now or dt.datetime.now(dt.UTC)
    action = data.get("action")
    if action in ("undo", "revert"):
        selection = _selection(data)
        head = data.get("head")
        if not isinstance(head, str) or _head(host) != head:
            raise UsageError("the vault changed since the plan was shown (a new commit): look at the plan again")
        try:  # the head goes along: checked again where the undo is written, so one plan takes back one change
            result = host.revert({**selection.to_dict(), "head": head})
        except UndoRefused as exc:
            raise AgentmdError(str(exc)) from None
        commit = result.get("commit")
        if not commit:
            return Outcome("Nothing was written", ["nothing to change: the vault already holds that version"])
        lines = [f"written as commit {commit[:10]} (origin: revert)"]
        lines.append(f"to take this back: agentmd revert {commit[:10]}")
        return Outcome("Undone", lines, commits=[commit])
    if action in ("confirm", "retire"):
        path = safe_note_path(host.settings.vault, _text(data, "path"))
        if _note_digest(host, path) != data.get("digest"):
            raise UsageError(f"{path} changed since the plan was shown: look at the plan again")
        options: dict[str, object] = {"reason": _reason(data)} if action == "retire" else {}
        p = plan_edits(
            host.settings.vault, action, [path], options=options, now=now, inbox=host.contract().is_phone_path
        )
        if not p.changed:
            return Outcome("Nothing was written", [f"skip {i.path}: {i.skipped}" for i in p.items])
        try:
            results = apply_steps(host.writer(), [p.step])
        except StepRefused as exc:
            raise AgentmdError(f"nothing was written: {exc}") from None
        commits = [c for r in results for c in r.commits]
        warnings = [f"warning: {w}" for r in results for w in r.warnings]
        shas = ", ".join(c[:10] for c in commits) or "pending (the daemon's next commit cycle)"
        return Outcome(f"{action.capitalize()}ed {path}" if action == "confirm" else f"Retired {path}",
                       [f"commit {shas} (origin: {action})", *warnings], commits=commits)  # fmt: skip
    if action == "resolve":
        keep = _text(data, "keep")
        note, sibling = _conflict_pair(host, _text(data, "path"))
        if [_note_digest(host, note), _note_digest(host, sibling)] != data.get("digests"):
            raise UsageError(f"{note} or {sibling} changed since the plan was shown: look at the plan again")
        try:
            note, sibling, changed = resolve_conflict(host.settings.vault, host.settings.state_dir, sibling, keep)
        except SyncError as exc:
            raise AgentmdError(str(exc)) from None
        host.request_commit(0.0)
        lines = [f"changed {', '.join(changed)}", "the daemon commits it (origin: resolve)"]
        return Outcome(f"Resolved {note}", lines)
    raise UsageError(f"`action` is one of {', '.join(ACTIONS)}")
