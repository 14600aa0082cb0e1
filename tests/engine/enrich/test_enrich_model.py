"""The model-CLI adapter against a scripted stand-in executable: isolation on the command itself, the envelope
read strictly, usage metered, failures, garbage and hangs refused (a hang killed with its process group)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from conftest import TESTS

from agentmd.engine.enrich.model import (
    ModelCallFailed,
    ModelConfig,
    Usage,
    call,
    claude_command,
    config_from,
)
from agentmd.engine.errors import UsageError

FAKE = TESTS / "bin" / "fake_model_cli.py"


@pytest.fixture
def script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    log = tmp_path / "calls.jsonl"
    rules = tmp_path / "rules.json"
    monkeypatch.setenv("FAKE_MODEL_LOG", str(log))
    monkeypatch.setenv("FAKE_MODEL_SCRIPT", str(rules))

    def write(*items: dict) -> Path:
        rules.write_text(json.dumps(list(items)), encoding="utf-8")
        return log

    return write


def logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def test_the_claude_command_carries_every_isolation_flag() -> None:
    argv = claude_command("claude", "opus")
    assert argv[0] == "claude" and argv[1] == "-p"  # --no-session-persistence works only beside -p
    pairs = {argv[i]: argv[i + 1] for i in range(1, len(argv) - 1)}
    assert pairs["--output-format"] == "json"
    assert "--strict-mcp-config" in argv and json.loads(pairs["--mcp-config"]) == {"mcpServers": {}}
    assert json.loads(pairs["--settings"]) == {"disableAllHooks": True}
    assert "--no-session-persistence" in argv
    assert pairs["--tools"] == ""  # no tool can run inside the call
    assert pairs["--model"] == "opus"
    assert config_from({}).command == claude_command()  # the default adapter is claude's


def test_a_call_is_isolated_and_its_usage_metered(script, tmp_path: Path) -> None:
    log = script(
        {
            "match": "",
            "answer": {"ok": True},
            "usage": {"input": 7, "cache_read": 900, "cache_write": 3, "output": 11},
            "cost": 0.25,
        }
    )
    config = ModelConfig(claude_command(str(FAKE)))
    answer = call(config, "judge this note")
    assert json.loads(answer.text) == {"ok": True}
    assert answer.usage == Usage(7, 900, 3, 11, 0.25)
    assert answer.usage.added == 21 and answer.usage.total == 921  # the cached prefix is not counted as added
    (entry,) = logged(log)
    assert entry["prompt"] == "judge this note"  # the prompt travelled on stdin
    assert entry["argv"] == list(claude_command(str(FAKE)))[1:]
    assert Path(entry["cwd"]).name.startswith("agentmd-enrich-") and not Path(entry["cwd"]).exists()
    assert Path(entry["cwd"]).resolve() != Path.cwd().resolve()


def test_other_commands_through_configuration(script, tmp_path: Path) -> None:
    log = script({"match": "hello", "text": "plain answer"})
    config = config_from({"command": [sys.executable, str(FAKE), "--prompt-arg", "{prompt}"], "prompt": "arg"})
    assert call(config, "hello there").text == "plain answer"
    assert logged(log)[0]["argv"][-1] == "hello there"
    with pytest.raises(UsageError):
        config_from({"command": ["x"], "prompt": "arg"})  # no {prompt} element to put it in
    with pytest.raises(UsageError):
        config_from({"command": "x --json"})
    assert not config_from({}).judge and config_from({"judge": True}).judge  # the faithfulness judge is opt-in
    assert config_from({"command": ["x"], "judge": True}).judge
    with pytest.raises(UsageError):
        config_from({"judge": "yes"})


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ({"fail": "Credit balance is too low"}, "Credit balance is too low"),
        ({"garbage": "Sure! Here is the JSON you asked for"}, "not a JSON envelope"),
        ({"garbage": "[1, 2]"}, "not an envelope object"),
        ({"answer": {"a": 1}, "no_usage": True}, "no usage"),
    ],
)
def test_output_that_is_not_the_envelope_is_refused(script, rule: dict, reason: str) -> None:
    script({"match": "", **rule})
    with pytest.raises(ModelCallFailed, match=reason):
        call(ModelConfig(claude_command(str(FAKE))), "x")


def test_a_hanging_call_is_killed_with_its_process_group(script) -> None:
    log = script({"match": "", "hang": True})
    started = time.monotonic()
    with pytest.raises(ModelCallFailed, match="no answer within"):
        call(ModelConfig(claude_command(str(FAKE)), timeout=30), "x", timeout=1.0)
    assert time.monotonic() - started < 20
    pid = logged(log)[0]["pid"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)  # waiting on a condition (the process gone), with a deadline
    else:
        pytest.fail("the hung model process is still alive")


def test_a_missing_program_fails_the_call() -> None:
    with pytest.raises(ModelCallFailed, match="cannot start"):
        call(ModelConfig(("/nonexistent/claude", "-p")), "x")
