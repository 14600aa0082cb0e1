"""The census: every field a writer of this vault puts on a note, held against what the enrichment pass writes,
fills, merges, sinks with, or carries, each with its reason. The note shape is taken from the writers
themselves (capture with every option, ingest, confirm, retire, promote, the phone clipper's fields and the
self-probe's marker), so a writer's new field fails this test instead of being judged by nobody; and every
note those writers made goes through Compose with each of its fields accounted for."""

from __future__ import annotations

from pathlib import Path

from curate_helpers import note
from daemon_helpers import git, make_repo

from agentmd.engine.enrich.compose import FILLED, MERGED, SUNK, WRITTEN, compose, updates_for
from agentmd.engine.enrich.kinds import CARD
from agentmd.engine.enrich.prompt import Proposal
from agentmd.engine.write.phone import CARRIED_FIELDS as PHONE_FIELDS
from agentmd.vault_schema import load_yaml, split_frontmatter

CENSUS: dict[str, tuple[str, str]] = {
    # what the pass owns
    "status": ("written", "the filing: active at or above the floor, else unfiled"),
    "filing_confidence": ("written", "the judgment's own number, so the needs-review reading clears"),
    "enriched": ("written", "the pass's record: when, which prompt, which model, what confidence"),
    "importance_proposed": ("written", "the pass proposes importance; the note's own stays"),
    "title": ("filled", "only where the note has none: a given title is its author's"),
    "type": ("filled", "only where the note has none or one the contract does not list"),
    "summary": ("filled", "only where the note has none"),
    "tags": ("merged", "the note's own first, the answer's after"),
    "aliases": ("merged", "the note's own first; a new one must be a name the note contains"),
    "related": ("merged", "the note's own first; a new one must be a neighbour the prompt offered"),
    "lifecycle": ("sunk", "written only to sink a second verdict below the floor; else carried untouched"),
    "lifecycle_since": ("sunk", "the day of the sink"),
    # what it carries untouched
    "why": ("carried", "never written: no pass was in the room, and an invented why reads like a real one"),
    "importance": ("carried", "the owner's or the capture's; the pass only proposes"),
    "trust": ("carried", "derived from the source by the contract at capture; a judgment does not move it"),
    "captured": ("carried", "immutable: the moment the note entered the vault"),
    "source": ("carried", "where the note came from"),
    "source_url": ("carried", "where the note came from"),
    "project": ("carried", "the project scope; only promote moves it"),
    "task": ("carried", "the task the note was captured under"),
    "instructions": ("carried", "the phone clipper's own instructions, applied by the sweep"),
    "review_flags": ("carried", "the sweep's marks for the owner"),
    "tag": ("carried", "a phone clip's singular spelling, read by the sweep"),
    "alias": ("carried", "a phone clip's singular spelling, read by the sweep"),
    "confirmed": ("carried", "the owner's confirmation record ends the wait; never the pass's to write"),
    "retired_reason": ("carried", "retire's record"),
    "retired_at": ("carried", "retire's record"),
    "promoted": ("carried", "promote's record"),
    "ingest_key": ("carried", "ingest finds its own chunk again by it"),
    "ingest_hash": ("carried", "ingest's same-source update compares it"),
    "ingest_updated": ("carried", "ingest's record of its last update"),
    "probe": (
        "carried",
        "the self-probe's marker; the probe's notes never reach the queue, and the marker is how "
        "the next probe retires them",
    ),
    "kind": ("carried", "a record kind is never judged as a card; a project record's kind is its author's"),
}
CATEGORIES = ("written", "filled", "merged", "sunk", "carried", "let go")


def shape_of(vault: Path) -> dict[str, list[str]]:
    """Every frontmatter field on the vault's notes -> the notes that carry it."""
    out: dict[str, list[str]] = {}
    for path in sorted(vault.rglob("*.md")):
        if ".git" in path.parts or path.name == "README.md":
            continue
        split = split_frontmatter(path.read_text(encoding="utf-8"))
        for key in load_yaml(split.yaml_text or ""):
            out.setdefault(str(key), []).append(path.relative_to(vault).as_posix())
    return out


def written_by_every_writer(cli, tmp_path: Path) -> Path:
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    args = ["--vault", str(vault), "--index", str(tmp_path / "idx")]

    def capture(*extra: str) -> str:
        r = cli("capture", *args, "--json", *extra)
        assert r.code == 0, r.out + r.err
        return str(r.json()["path"])

    capture(
        "--title", "Deploy pipeline", "--body", "Deploys go through GitHub Actions.", "--type", "fact",
        "--summary", "Deploys run on Actions.", "--why", "asked in review", "--importance", "3",
        "--related", "memory/semantic/other", "--project", "alpha", "--task", "t1", "--tags", "deploy",
        "--aliases", "CI", "--source", "cli", "--source-url", "https://example.org/ci",
        "--instructions", "keep this",
    )  # fmt: skip
    unfiled = capture("--title", "Untyped", "--body", "A capture nobody typed.")
    retired = capture("--title", "Retired", "--body", "Soon gone.")
    shared = capture("--title", "Project only", "--body", "For alpha.", "--project", "alpha", "--type", "fact",
                     "--why", "scoped")  # fmt: skip
    for command, path, extra in (
        ("confirm", unfiled, ["--type", "fact", "--why", "the owner read it"]),
        ("retire", retired, ["--reason", "stale"]),
        ("promote", shared, ["--to-shared"]),
    ):
        r = cli(command, *args, *extra, path, "--yes")
        assert r.code == 0, r.out + r.err
    source = tmp_path / "docs" / "runbook.md"
    source.parent.mkdir()
    source.write_text("# Deploy\n\nDeploy from CI with GitHub Actions.\n", encoding="utf-8")
    r = cli("ingest", *args, str(source), "--yes")
    assert r.code == 0, r.out + r.err
    note(vault, "inbox/phone/clip.md", "Clipped.", source="phone", instructions="tag ci", review_flags="[x]")
    note(vault, "memory/probe/self-probe.md", "Synthetic.", probe="self-probe", kind="session-log")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "a clip and a probe note")
    return vault


def proposal() -> Proposal:
    return Proposal("Deploys", "fact", "Deploys run on Actions.", ("ci",), (), (), 3, 0.9)


def test_every_field_of_the_note_shape_is_written_carried_or_let_go_on_purpose(cli, tmp_path: Path) -> None:
    vault = written_by_every_writer(cli, tmp_path)
    shape = shape_of(vault)
    fields = set(shape) | set(PHONE_FIELDS) | {"probe"}
    unweighed = sorted(fields - set(CENSUS))
    assert not unweighed, f"fields no census entry weighs (add each with its reason): {unweighed}"
    assert all(category in CATEGORIES and reason for category, reason in CENSUS.values())
    by = {c: {k for k, (cat, _) in CENSUS.items() if cat == c} for c in CATEGORIES}
    assert by["written"] == set(WRITTEN) and by["filled"] == set(FILLED) and by["merged"] == set(MERGED)
    assert by["sunk"] == set(SUNK)
    assert {"confirmed", "retired_reason", "promoted", "ingest_key", "source_url", "why"} <= set(shape)

    owned = by["written"] | by["filled"] | by["merged"] | by["sunk"]
    for key, paths in shape.items():
        for path in paths:
            text = (vault / path).read_text(encoding="utf-8")
            before = load_yaml(split_frontmatter(text).yaml_text or "")
            updates, _verdict = updates_for(
                before, proposal(), floor=0.5, types={"fact": "memory/semantic"}, at="2026-12-01T00:00:00Z",
                model="m", prompt_version="p", kind=CARD,
            )  # fmt: skip
            assert set(updates) <= owned
            new = compose(text, updates)
            after = load_yaml(split_frontmatter(new).yaml_text or "")
            assert split_frontmatter(new).body == split_frontmatter(text).body
            assert set(before) <= set(after), f"{path}: a field was lost"
            if key not in owned:
                assert after[key] == before[key], f"{path}: {key} moved"
