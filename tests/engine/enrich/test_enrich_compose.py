"""Compose and the strict answer reader, field by field: the census of what the pass writes, fills, merges and
carries; the post-gates on aliases and related ids; the body never moved."""

from __future__ import annotations

import json

import pytest

from agentmd.engine.enrich.compose import FILLED, MERGED, WRITTEN, compose, updates_for
from agentmd.engine.enrich.prompt import FIELDS, AnswerRefused, Proposal, read_answer
from agentmd.vault_schema import load_yaml, split_frontmatter

TYPES = {"fact": "memory/semantic", "decision": "memory/decisions"}
NOTE = """---
title: Deploy pipeline
status: unfiled
lifecycle: dormant
importance: 4
source: claude-code
why: the owner said so
tags: [deploy]
related: ["[[memory/a]]"]
custom_field: kept
---
Deploys go through GitHub Actions.
CI (continuous integration) runs on every push.
"""
# Every field a captured note may carry, and what the pass does with it.
CENSUS = {
    "title": "filled",
    "type": "filled",
    "summary": "filled",
    "tags": "merged",
    "aliases": "merged",
    "related": "merged",
    "status": "written",
    "filing_confidence": "written",
    "enriched": "written",
    "importance_proposed": "written",
    "lifecycle": "carried: the owner's hand on a lifecycle is never overridden",
    "importance": "carried: the pass only proposes (importance_proposed)",
    "why": "carried: never written, no pass was in the room",
    "trust": "carried",
    "captured": "carried",
    "source": "carried",
    "source_url": "carried",
    "project": "carried",
    "task": "carried",
    "instructions": "carried",
    "confirmed": "carried",
    "probe": "carried (the self-probe's notes never reach the queue)",
}


def proposal(**over: object) -> Proposal:
    base: dict = dict(
        title="Deploys",
        type="fact",
        summary="Deploys run on Actions.",
        tags=("ci",),
        aliases=(),
        related=(),
        importance=3,
        confidence=0.9,
    )
    base.update(over)
    return Proposal(**base)


def answer_text(**over: object) -> str:
    base = {
        "title": "Deploys",
        "type": "fact",
        "summary": "Deploys run on Actions.",
        "tags": ["ci"],
        "aliases": [],
        "related": [],
        "importance": 3,
        "confidence": 0.9,
    }
    base.update(over)
    return json.dumps(base)


def read(text: str, offered: tuple[str, ...] = ()) -> Proposal:
    body = split_frontmatter(NOTE).body
    return read_answer(
        text,
        types=list(TYPES),
        offered=offered,
        note_text=body,
        note_title="Deploy pipeline",
        file_stem="deploy-pipeline",
    )


def test_every_field_is_written_filled_merged_or_carried_on_purpose() -> None:
    assert {k for k, v in CENSUS.items() if v == "written"} == set(WRITTEN)
    assert {k for k, v in CENSUS.items() if v == "filled"} == set(FILLED)
    assert {k for k, v in CENSUS.items() if v == "merged"} == set(MERGED)
    fm = load_yaml(split_frontmatter(NOTE).yaml_text or "")
    updates, verdict = updates_for(
        fm, proposal(related=("memory/b",)), floor=0.5, types=TYPES, at="T", model="claude", prompt_version="enrich-1"
    )
    assert verdict == "filed" and set(updates) <= set(WRITTEN) | set(FILLED) | set(MERGED)
    assert not {k for k, v in CENSUS.items() if v.startswith("carried")} & set(updates)
    assert "title" not in updates and updates["type"] == "fact"  # the note's title is its own; it had no type
    assert updates["tags"] == ["deploy", "ci"] and updates["related"] == ["[[memory/a]]", "[[memory/b]]"]
    new = compose(NOTE, updates)
    assert split_frontmatter(new).body == split_frontmatter(NOTE).body
    after = load_yaml(split_frontmatter(new).yaml_text or "")
    for key in ("lifecycle", "importance", "why", "source", "custom_field"):
        assert after[key] == fm[key]


def test_below_the_floor_the_note_stays_unfiled() -> None:
    updates, verdict = updates_for(
        {}, proposal(confidence=0.2), floor=0.5, types=TYPES, at="T", model="m", prompt_version="v"
    )
    assert verdict == "below-floor" and updates["status"] == "unfiled" and updates["filing_confidence"] == 0.2


def test_the_post_gates_hold_the_answer_to_the_note() -> None:
    assert read(answer_text(aliases=["CI"])).aliases == ("CI",)  # the note spells it out
    body = split_frontmatter(NOTE).body
    own = read_answer(
        answer_text(aliases=["GHA"]),
        types=list(TYPES),
        offered=(),
        note_text=body,
        note_title="Deploy pipeline",
        file_stem="deploy-pipeline",
        known_aliases=["gha"],
    )
    assert own.aliases == ("GHA",)  # an alias the note already carries may be repeated
    for alias in ("Blue Falcon", "deploy pipeline", "Deploy-Pipeline"):
        with pytest.raises(AnswerRefused) as refused:
            read(answer_text(aliases=[alias]))
        assert refused.value.gate == "alias"
    kept = read(answer_text(related=["memory/a", "memory/made-up"]), offered=("memory/a",))
    assert kept.related == ("memory/a",) and kept.dropped_related == ("memory/made-up",)
    assert read(answer_text(why="invented")).title == "Deploys"  # why is stripped, not a failure
    for bad in (
        answer_text(type="gossip"),
        answer_text(confidence=1.5),
        answer_text(importance=0),
        answer_text(extra=1),
        "not json",
        json.dumps({k: None for k in FIELDS}),
        "[1]",
    ):
        with pytest.raises(AnswerRefused):
            read(bad)


def test_a_note_without_frontmatter_keeps_its_whole_text_as_body() -> None:
    for text in ("just a body\n", "---\nnot closed: this is body\n", "\ufeffbom body\n"):
        new = compose(text, {"title": "t"})
        assert split_frontmatter(new).body == split_frontmatter(text).body
        assert load_yaml(split_frontmatter(new).yaml_text or "") == {"title": "t"}
