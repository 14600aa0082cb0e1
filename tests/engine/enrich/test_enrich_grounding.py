"""The faithfulness judge's local check and the reading of the judging call's verdict, claim by claim."""

from __future__ import annotations

import pytest

from agentmd.engine.enrich.grounding import (
    JudgeFailed,
    Unfaithful,
    claims_of,
    judge_prompt,
    local_check,
    read_verdict,
    source_of,
)
from agentmd.engine.enrich.prompt import Neighbour

BODY = "Deploys go through GitHub Actions.\nCI (continuous integration) runs on every push; 3 runners share the load.\n"


def source(fm: dict | None = None, neighbours: tuple[Neighbour, ...] = ()) -> str:
    return source_of("memory/2026/11/deploy-pipeline.md", fm or {"source": "claude-code"}, BODY, neighbours)


@pytest.mark.parametrize(
    "text",
    [
        "Every deploy runs through GitHub Actions.",
        "Deploys run on GitHub Actions; CI runs on every push with 3 runners.",
        "The deploy pipeline: continuous integration on every push.",
        "Deployment goes through Actions.",  # a word's other form is the same word
    ],
)
def test_a_grounded_text_passes(text: str) -> None:
    local_check(text, source())


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Deploys go through GitHub Actions on 12 runners.", "states 12"),
        ("Deploys go through GitHub Actions and Jenkins.", "names 'Jenkins'"),
        ("Deploys go through GitHub Actions and ArgoCD.", "names 'ArgoCD'"),
        ("Releases are signed, notarised and mirrored before customers download them.", "content words"),
    ],
)
def test_an_unsupported_number_name_or_wording_is_named(text: str, said: str) -> None:
    with pytest.raises(Unfaithful) as refused:
        local_check(text, source())
    assert said in refused.value.claim


def test_a_title_may_be_written_in_title_case() -> None:
    local_check("Deploy Pipeline On Every Release", source(), field="title")
    with pytest.raises(Unfaithful):
        local_check("Deploy Pipeline On ArgoCD", source(), field="title")  # a compound name is still a name
    with pytest.raises(Unfaithful):
        local_check("Deploy Pipeline On Every Release", source())  # in a summary, a capital inside a sentence names


def test_the_source_is_the_note_and_its_neighbours_less_the_pass_s_own_earlier_answer() -> None:
    text = "Deploys go through GitHub Actions, chosen over Jenkins."
    with pytest.raises(Unfaithful):
        local_check(text, source())
    neighbour = Neighbour("memory/decisions/ci", "GitHub Actions over Jenkins", "Why Jenkins was dropped.")
    local_check(text, source(neighbours=(neighbour,)))  # a neighbour the prompt offered grounds it
    owner = {"source": "claude-code", "summary": "We left Jenkins."}
    local_check(text, source(owner))  # a summary someone wrote is evidence
    earlier = {"source": "claude-code", "summary": "We left Jenkins.", "enriched": {"at": "T", "prompt": "p"}}
    with pytest.raises(Unfaithful):
        local_check(text, source(earlier))  # ...but not the pass's own earlier answer
    assert "Jenkins" not in source({"enriched": {"model": "Jenkins"}})  # nor its own stamp


def test_only_what_lands_is_judged() -> None:
    claims = claims_of({"summary": "s", "tags": ["t"], "status": "active"})
    assert dict(claims.fields) == {"summary": "s"} and claims
    assert not claims_of({"tags": ["t"]})
    prompt = judge_prompt("memory/x.md", "the source", claims)
    assert "- summary: s" in prompt and "Source (memory/x.md)" in prompt and "Note (" not in prompt


def test_the_judge_s_verdict_is_read_strictly() -> None:
    read_verdict('{"grounded": true, "claim": ""}')
    read_verdict('```json\n{"grounded": true}\n```')
    with pytest.raises(Unfaithful) as refused:
        read_verdict('{"grounded": false, "claim": "It runs on Jenkins."}')
    assert "It runs on Jenkins." in refused.value.claim
    for bad in ('{"grounded": false}', '{"grounded": false, "claim": " "}', '{"grounded": "no"}', "yes", "[]"):
        with pytest.raises(JudgeFailed):
            read_verdict(bad)
