"""The checks at the end of the sync soak (bench/sync_soak.py): convergence, lost edits, forced updates of the
remote, conflict markers, conflict siblings each listed by the machine that wrote it, `git fsck`."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from soak import REPO, git

MARKER = re.compile(r"(?m)^(<<<<<<<|>>>>>>>)( |$)")
CONFLICT_STATUS = re.compile(r"(?m)^status:\s*conflict\s*$")
TOKEN = re.compile(r"\b(?:tk|cap)-m\d+-r\d+-[ec]\d+\b")  # one per save and per capture


def tokens_in(text: str) -> set[str]:
    return set(TOKEN.findall(text))


def tree_texts(repo: Path, rev: str) -> dict[str, str]:
    """Every note (`*.md`) of `rev`'s tree, by path."""
    listing = git(repo, "ls-tree", "-r", "-z", rev).stdout
    blobs: list[tuple[str, str]] = []
    for entry in listing.split("\0"):
        if not entry:
            continue
        info, _, path = entry.partition("\t")
        _mode, kind, oid = info.split()
        if kind == "blob" and path.endswith(".md"):
            blobs.append((path, oid))
    run = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], input="".join(f"{o}\n" for _, o in blobs)
                         .encode(), capture_output=True, check=True)  # fmt: skip
    out, texts, at = run.stdout, {}, 0
    for path, _oid in blobs:
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].split()[2])
        texts[path] = out[header_end + 1 : header_end + 1 + size].decode("utf-8", "replace")
        at = header_end + 1 + size + 1
    return texts


def sibling_owner(repo: Path, path: str) -> str:
    """The host trailer of the commit that first added `path` to the remote's history (the merge that wrote it)."""
    # --topo-order: commits made within the same second (a round's merge and the next machine's) are listed
    # parents first, so the first commit adding the path is the merge that wrote it, not a later one
    log = git(repo, "log", "--full-history", "-m", "--topo-order", "--diff-filter=A", "--reverse",
              "--format=%x1e%(trailers:key=host,valueonly)", "main", "--", path).stdout  # fmt: skip
    hosts = [chunk.strip() for chunk in log.split("\x1e") if chunk.strip()]
    return hosts[0] if hosts else "?"


def listed_conflicts(m: Any) -> list[str]:
    run = subprocess.run([sys.executable, "-m", "agentmd", "conflicts", "--json", "--vault", str(m.vault)],
                         cwd=REPO, env=m.env, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    try:
        return list(json.loads(run.stdout)["conflicts"])
    except (ValueError, KeyError, TypeError):
        return []


def overwritten_mid_move(world: Any, token: str) -> bool:
    """Whether a lost save met the one race no sync can close: git checks that a note is unchanged, then
    rewrites it, and an editor's save landing in between (milliseconds) is overwritten, as with any tool that
    writes into a folder an editor also writes. True only on strict evidence: the token is in no commit of
    any clone, and a sync round on the saving machine rewrote that very note within two seconds of the save."""
    what = world.written[token].split()  # "<kind> <machine> <path>"
    if what[0] not in ("line", "append") or token not in world.saved_at:
        return False
    for m in world.machines:
        if git(m.vault, "log", "--all", "-S", token, "--format=%H").stdout.strip():
            return False  # committed somewhere: a later loss is no race of the work tree
    m = next(m for m in world.machines if m.name == what[1])
    reflog = git(m.vault, "reflog", "show", "--date=unix", "--format=%H %gd %gs", "HEAD").stdout.splitlines()
    entries = [line.split(" ", 2) for line in reflog if line.count(" ") >= 2]
    for (new, when, subject), (old, _when, _subject) in itertools.pairwise(entries):
        stamp = float(when[len("HEAD@{") : -1])
        near = subject.startswith("sync:") and abs(stamp - world.saved_at[token]) <= 2
        if near and what[2] in git(m.vault, "diff", "--name-only", old, new).stdout.split("\n"):
            return True
    return False


def judge(world: Any) -> dict[str, Any]:
    """Run every check on `world` (a bench/sync_soak.py World after its settle); add what fails to its
    violations; the figures."""
    bad = world.violations
    bare: Path = world.bare
    main = git(bare, "rev-parse", "main").stdout.strip()
    main_tree = git(bare, "rev-parse", "main^{tree}").stdout.strip()
    figures: dict[str, Any] = {"remote_commits": int(git(bare, "rev-list", "--count", "main").stdout)}

    # every clone holds the remote's main, and nothing is left uncommitted
    diverged = 0
    for m in world.machines:
        tree = git(m.vault, "rev-parse", "HEAD^{tree}").stdout.strip()
        if tree != main_tree:
            diverged += 1
            bad.append(f"{m.name}: HEAD tree {tree[:10]} is not the remote's main tree {main_tree[:10]}")
        dirty = git(m.vault, "status", "--porcelain").stdout
        if dirty:
            bad.append(f"{m.name}: left uncommitted: {dirty[:300]}")
    figures["clones_diverged"] = diverged

    # no lost edit, no lost capture
    texts = tree_texts(bare, "main")
    where: dict[str, str] = {}
    for path, text in texts.items():
        for token in tokens_in(text):
            if token not in where or ".conflict-" not in path:  # a note's own path is named before a sibling
                where[token] = path
    expected = {t: what for t, what in world.written.items() if t not in world.superseded}
    missing = sorted(t for t in expected if t not in where)
    raced = [t for t in missing if overwritten_mid_move(world, t)]
    lost = [t for t in missing if t not in raced]
    for token in raced:
        world.races.append(f"{token} ({expected[token]}): saved while a sync round rewrote the note")
    for token in lost[:40]:
        bad.append(f"lost: {token} ({expected[token]}) is in no note of the remote's main")
    if len(lost) > 40:
        bad.append(f"lost: {len(lost) - 40} more tokens")
    captures = [t for t in expected if t.startswith("cap-")]
    figures.update(
        tokens_written=len(world.written),
        tokens_superseded=len(world.superseded & set(world.written)),
        tokens_expected=len(expected),
        tokens_lost=len(lost),
        saves_overwritten_mid_move=len(raced),
        captures_lost=len([t for t in lost if t.startswith("cap-")]),
        captures_checked=len(captures),
        tokens_kept_in_siblings=len([t for t in expected if ".conflict-" in where.get(t, "")]),
        tokens_at_a_renamed_path=len([t for t in expected if "-mv" in where.get(t, "")]),
    )

    # the remote's main only ever moved forward
    forced = 0
    heads = world.remote_heads
    for old, new in itertools.pairwise(heads):
        if git(bare, "merge-base", "--is-ancestor", old, new, check=False).returncode != 0:
            forced += 1
            bad.append(f"forced update of the remote: {old[:10]} is not an ancestor of {new[:10]}")
    figures.update(remote_heads_recorded=len(heads), forced_updates=forced)
    if heads and heads[-1] != main:
        bad.append("the remote's main moved after the last record")

    # no conflict marker in any note, in any clone or on the remote
    markers = [f"remote:{p}" for p, t in texts.items() if MARKER.search(t)]
    for m in world.machines:
        for p in m.vault.rglob("*.md"):
            if ".git" not in p.relative_to(m.vault).parts and MARKER.search(p.read_text(errors="replace")):
                markers.append(f"{m.name}:{p.relative_to(m.vault)}")
    bad += [f"conflict marker in {p}" for p in markers[:20]]
    figures["notes_with_markers"] = len(markers)

    # every open conflict sibling is listed by `agentmd conflicts` on the machine whose merge wrote it
    siblings = sorted(p for p, t in texts.items() if ".conflict-" in p and CONFLICT_STATUS.search(t))
    listed = {m.name: set(listed_conflicts(m)) for m in world.machines}
    unlisted = 0
    for path in siblings:
        owner = sibling_owner(bare, path)
        if path not in listed.get(owner, set()):
            unlisted += 1
            bad.append(f"conflict sibling {path} (written by {owner}) is not in its `agentmd conflicts`")
    figures.update(
        conflicts=len(siblings),
        conflicts_listed={name: len(s) for name, s in listed.items()},
        conflicts_unlisted=unlisted,
    )

    # git fsck clean in every clone and on the remote
    fsck_bad = 0
    for repo in [*(m.vault for m in world.machines), bare]:
        fsck = git(repo, "fsck", "--no-progress", check=False)
        if fsck.returncode != 0:
            fsck_bad += 1
            bad.append(f"git fsck in {repo.name}: {fsck.stderr.strip()[:300]}")
    figures["fsck_failures"] = fsck_bad
    return figures
