"""The hook payload as both recall paths read it (hooks/protocol.py): the light hook that hands the prompt to the
daemon and the full hook that recalls in its own process take the same fields and refuse the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentmd.hooks.protocol import parse_payload, prompt_fields, session_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_claude_codes_prompt_payload_gives_its_session_prompt_and_folder() -> None:
    path = next(FIXTURES.rglob("user_prompt_submit.json"))
    payload = parse_payload(path.read_text(encoding="utf-8"))
    session, prompt, cwd = prompt_fields(payload)
    assert session == payload["session_id"] and prompt == payload["prompt"] and cwd == payload["cwd"]


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ({"hook_event_name": "Stop", "prompt": "x", "session_id": "s1"}, "hook_event_name is 'Stop'"),
        ({"hook_event_name": "UserPromptSubmit", "session_id": "s1"}, "hook input has no prompt"),
        ({"prompt": ["not", "text"], "session_id": "s1"}, "hook input has no prompt"),
    ],
)
def test_another_event_or_no_prompt_is_refused_and_the_session_still_named(
    payload: dict[str, object], said: str
) -> None:
    with pytest.raises(ValueError, match=said):
        prompt_fields(payload)
    assert session_of(payload) == "s1"


def test_a_missing_folder_or_session_reads_as_none() -> None:
    assert prompt_fields({"prompt": "why postgres", "cwd": 7}) == (None, "why postgres", None)
    assert session_of({"session_id": ""}) is None


@pytest.mark.parametrize(
    ("text", "said"), [("", "no hook input"), ("{", "not JSON"), (json.dumps([1]), "not a JSON object")]
)
def test_input_that_is_no_json_object_is_refused_saying_what_it_is(text: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        parse_payload(text)


def test_a_hook_name_mistyped_in_a_settings_file_is_an_error_that_blocks_nothing() -> None:
    """Claude Code shows a hook's exit 1 to the person and carries on (exit 2 would block the agent)."""
    import subprocess
    import sys

    hook = str(Path(sys.executable).with_name("agentmd-hook"))
    typo = subprocess.run([hook, "recal"], input="{}", capture_output=True, text=True, timeout=60)
    assert typo.returncode == 1 and typo.stdout == ""
    assert "there is no hook 'recal'" in typo.stderr and "recall" in typo.stderr
    asked = subprocess.run([hook, "--help"], capture_output=True, text=True, timeout=60)
    assert asked.returncode == 0 and "file-guard" in asked.stderr
