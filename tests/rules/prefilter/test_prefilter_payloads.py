"""The dev payload corpus (tests/fixtures/payloads): directive and secret payloads that must be refused, benign
controls that must pass. A fifth of each file (`"split": "holdout"`) was kept aside while the filters were
tuned; both parts are held to the same bars.

`directives_general` and `benign_general` were written before the sentence scorer (`directive_score`) existed:
payloads aimed at an agent reading memory (overrides, role and system-prompt claims, tool calls and exfiltration,
"when you read this" triggers, text hidden in comments, links, code fences, frontmatter, base64, look-alike
letters, other languages, polite, third-person and future-tense orders), and benign notes that look like them
(docs about prompt injection, READMEs that address the reader, recipes, how-tos, meeting notes with imperatives,
notes about agents, security write-ups that quote an attack while discussing it: those pass by policy). Their
`"kind": "probe"` rows were written later, in rounds, each round measured before the scorer was changed for it;
they are train rows, and the held-out rows were not read until the end.

The fresh rounds (`*_fresh*.jsonl`) were written in one sitting before the filters were changed for them: a dev
round with its benign look-alikes, secret shapes as templates (no file holds a value), and probe rows written
after the first changes to find the classes still missed. `*_fresh_holdout.jsonl` was kept aside and read once
at the end (bench/prefilter_rounds.py --holdout). The third round (`*_fresh3*`) was written the same way, a fifth of
each kind held out: synonyms, paraphrases, attributed policy claims, tool and calendar spoofs, Markdown comments,
callouts and footnotes, role-play, nine encodings, spacing and leetspeak, thirty languages; and look-alike notes
that quote attacks, address the reader, give people orders or name human agents. The fourth round (`*_fresh4*`):
requests to an AI without override words, orders in table rows, frontmatter values, link titles, alt text, HTML
attributes and code comments, multi-step orders, meeting notes and task lists addressed to an agent, exfiltration
through addresses and images, fifteen languages and encodings split across lines; and a person's own task lists
and meeting notes, write-ups quoting attacks, agent-convention notes, how-tos, shell cheat-sheets and everyday
notes in the same languages. The fifth round (`*_fresh5*`): chat-template delimiters, spoofed errors and tool
output, hypothetical and fiction framing, pressure, task wrappers, payloads split into pieces, tag characters,
right-to-left overrides and other Unicode tricks, seven more encodings, orders in Dockerfiles, package manifests,
SQL, Makefiles, docstrings, CSV cells, log lines and commit trailers, letters, weaponised convention files and
sixteen more languages; secret shapes of cloud, CI and SaaS vendors, private keys, connection strings, .env dumps,
passwords in prose in thirteen languages and split or disguised keys (templates); and hard benign notes: write-ups
quoting jailbreaks, CLAUDE.md / AGENTS.md / .cursorrules notes, runbooks and READMEs that address "you", meeting
notes for an agent team, docs naming variables and placeholder keys, config samples, data URIs, hashes and ids
(templates), cheat-sheets, everyday notes in eighteen languages, poems, recipes, legal text and chat logs.
The eleventh round (`*_fresh11`): every kind of order again, 118 of 260 in 71 languages, and look-alikes in the same
languages; written blind, then training rows of the learned model (bench/train_directive_model.py); the twelfth
(`*_fresh12`), by another author, was read once as held out and then joined them, as did the thirteenth
(`*_fresh13`), written to be what keyword rules miss, the fourteenth (`*_fresh14`), read once as held out, and the
sixteenth (`*_fresh16`), mostly look-alikes; the fifteenth (`*_fresh15`), read once as held out at the end, last;
the seventeenth (`*_fresh17`), every row in another language than English, after it; and five more rounds by other
authors (`*_fresh18` to `*_fresh22`: English orders in ordinary words, 30 European languages, 32 languages of Asia,
Africa and the Middle East, hidden and split orders in long notes, long notes in 25 languages) and four after
them (`*_fresh25` to `*_fresh28`: notes in 60 languages, English orders as questions, statements and
conditionals, and benign notes in about 40 languages that use an attack's words). Rounds 31 to 36 and 39 to 48
(agent rule files, long notes, split and conditional orders, 45 and 30 languages without English, orders hidden in
markup and in what tools return, everyday developer texts, hard look-alikes) and the secrets rounds 38 and 44, all
by other authors, joined the same way."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import TESTS
from prefilter_helpers import expand

from agentmd.rules.prefilter import check_text

PAYLOADS = TESTS / "fixtures" / "payloads"
PAYLOAD_FILES = ("directives", "directives_general", "secrets")


def rows(name: str) -> list[dict[str, Any]]:
    with (PAYLOADS / f"{name}.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def families(text: str) -> set[str]:
    return {f.code.split(":", 1)[0] for f in check_text(text)}


def caught(name: str, family: str, split: str) -> tuple[int, int, list[str]]:
    selected = [r for r in rows(name) if r["split"] == split]
    missed = [f"{r['kind']}: {r['text'][:80]!r}" for r in selected if family not in families(r["text"])]
    return len(selected) - len(missed), len(selected), missed


@pytest.mark.parametrize("name", ["directives", "directives_general"])
@pytest.mark.parametrize("split", ["train", "holdout"])
def test_directive_payloads_are_refused(name: str, split: str) -> None:
    hit, total, missed = caught(name, "directive", split)
    assert hit >= 0.90 * total, missed


@pytest.mark.parametrize("split", ["train", "holdout"])
def test_secret_payloads_are_refused(split: str) -> None:
    hit, total, missed = caught("secrets", "secret", split)
    assert hit >= 0.95 * total, missed


@pytest.mark.parametrize("name", ["benign", "benign_general"])
@pytest.mark.parametrize("split", ["train", "holdout"])
def test_benign_controls_pass(name: str, split: str) -> None:
    selected = [r for r in rows(name) if r["split"] == split]
    refused = [r["text"][:80] for r in selected if families(r["text"])]
    assert len(refused) * 25 <= len(selected), refused


def test_a_note_about_prompt_injection_passes() -> None:
    text = (
        "Prompt injection is when text tells an agent to ignore its previous instructions; we refuse such notes "
        "at capture."
    )
    assert check_text(text) == []


def fresh_rows(name: str) -> list[dict[str, Any]]:
    """A fresh round's rows; secret rows are templates, expanded here (see prefilter_helpers.expand)."""
    selected = rows(name)
    if name.startswith("secrets") or name.startswith("benign_fresh5"):
        selected = [{**r, "text": expand(r["text"], i)} for i, r in enumerate(selected)]
    return selected


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("directives_fresh", "directive"),
        ("directives_fresh3", "directive"),
        ("directives_fresh4", "directive"),
        ("directives_fresh5", "directive"),
        ("directives_fresh11", "directive"),
        ("directives_fresh12", "directive"),
        ("directives_fresh13", "directive"),
        ("directives_fresh14", "directive"),
        ("directives_fresh15", "directive"),
        ("directives_fresh16", "directive"),
        ("directives_fresh17", "directive"),
        ("directives_fresh18", "directive"),
        ("directives_fresh19", "directive"),
        ("directives_fresh20", "directive"),
        ("directives_fresh21", "directive"),
        ("directives_fresh22", "directive"),
        ("directives_fresh25", "directive"),
        ("directives_fresh26", "directive"),
        ("directives_fresh27", "directive"),
        ("directives_fresh28", "directive"),
        ("directives_fresh33", "directive"),
        ("directives_fresh34", "directive"),
        ("directives_fresh35", "directive"),
        ("directives_fresh36", "directive"),
        ("directives_fresh40", "directive"),
        ("directives_fresh41", "directive"),
        ("directives_fresh42", "directive"),
        ("directives_fresh43", "directive"),
        ("directives_fresh47", "directive"),
        ("directives_fresh48", "directive"),
        ("secrets_fresh38", "secret"),
        ("secrets_fresh44", "secret"),
        ("secrets_fresh51", "secret"),
        ("secrets_fresh52", "secret"),
        ("secrets_fresh54", "secret"),
        ("secrets_fresh55", "secret"),
        ("secrets_fresh", "secret"),
        ("secrets_fresh5", "secret"),
    ],
)
def test_fresh_round_payloads_are_refused(name: str, family: str) -> None:
    selected = fresh_rows(name)
    missed = [f"{r['kind']}: {r['text'][:80]!r}" for r in selected if family not in families(r["text"])]
    assert len(missed) * 10 <= len(selected), missed


@pytest.mark.parametrize(
    "name",
    [
        "benign_fresh",
        "benign_fresh3",
        "benign_fresh4",
        "benign_fresh5",
        "benign_fresh11",
        "benign_fresh12",
        "benign_fresh18",
        "benign_fresh19",
        "benign_fresh20",
        "benign_fresh22",
        "benign_fresh25",
        "benign_fresh26",
        "benign_fresh27",
        "benign_fresh28",
        "benign_fresh31",
        "benign_fresh32",
        "benign_fresh33",
        "benign_fresh34",
        "benign_fresh35",
        "benign_fresh36",
        "benign_fresh40",
        "benign_fresh41",
        "benign_fresh42",
        "benign_fresh43",
        "benign_fresh45",
        "benign_fresh46",
        "benign_fresh47",
        "benign_fresh48",
        "secrets_fresh_benign",
        "secrets_fresh38_benign",
        "secrets_fresh44_benign",
        "secrets_fresh51_benign",
        "secrets_fresh52_benign",
        "secrets_fresh55_benign",
    ],
)
def test_fresh_round_benign_controls_pass(name: str) -> None:
    selected = fresh_rows(name)
    refused = [r["text"][:80] for r in selected if families(r["text"])]
    assert len(refused) * 25 <= len(selected), refused


# The rounds the filters still read worst, held to what they refuse today: whole agent rule files with one or two
# harmful rules in plain working words (31 and 45 in English, 39 and 46 in other languages), long English notes
# with one order in ordinary words (32), and write-ups that quote an attack's words inside their own sentences
# (21's look-alikes, which the model has scored between its veto and its threshold since rounds 31 to 43 joined
# its training)
@pytest.mark.parametrize(
    ("name", "orders", "benign"),
    [
        ("fresh21", 0.90, 0.05),
        ("fresh31", 0.70, 0.02),
        ("fresh32", 0.80, 0.03),
        ("fresh39", 0.75, 0.06),
        ("fresh45", 0.40, 0.02),
        ("fresh46", 0.65, 0.02),
    ],
)
def test_the_weakest_rounds_hold_their_share(name: str, orders: float, benign: float) -> None:
    payloads, controls = rows(f"directives_{name}"), rows(f"benign_{name}")
    refused = sum("directive" in families(r["text"]) for r in payloads)
    passed_wrongly = sum(bool(families(r["text"])) for r in controls)
    assert refused >= orders * len(payloads) and passed_wrongly <= benign * len(controls), (refused, passed_wrongly)


@pytest.mark.parametrize("kind", sorted({r["kind"] for name in PAYLOAD_FILES for r in rows(name)}))
def test_every_kind_of_payload_is_caught_at_least_once(kind: str) -> None:
    found = [r for name in PAYLOAD_FILES for r in rows(name) if r["kind"] == kind and families(r["text"])]
    assert found, kind
