"""The model-CLI adapter: one isolated call of a command the owner already has, answered by a JSON envelope.

`claude -p` is the built-in shape. Every call of it carries its isolation on the command line, since a missing
measure fails silently (the call still answers):
- `-p --output-format json`: one machine-readable envelope on stdout, never free text;
- `--strict-mcp-config --mcp-config '{"mcpServers":{}}'`: no MCP server at all (an empty `--mcp-config` alone is
  merged with the configured servers and replaces none of them, so the two travel together);
- `--settings '{"disableAllHooks":true}'`: none of the owner's hooks run inside the call (no prompt hook
  recalls the vault into the prompt, no stop hook records the call);
- `--no-session-persistence`: no transcript of the call (which holds the note's text) is kept on disk;
- `--tools ""`: the model answers from the prompt alone and can run nothing.
The process runs in a fresh, empty temporary folder (so no project instructions are read from a working
folder), in a process group of its own that is killed whole when the wall-time limit passes.

Any other command is configured in the `[enrich]` table of the config file: `command` (its argv; a `{prompt}`
element is replaced by the prompt when `prompt = "arg"`, else the prompt goes to stdin), `answer` (the envelope
key holding the answer text), `error` (a key whose true value marks a failed call), `usage` (the key of the
usage object) and `cost` (the key of the cost). `judge = true` (either shape) adds the faithfulness judge's
second call per note, under the same budgets. The envelope is read the same way for every command: stdout
must be exactly one JSON object with a text answer, else the call is refused rather than read as free text.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentmd.engine.errors import AgentmdError, UsageError

CLAUDE_ISOLATION = (
    "-p",
    "--output-format",
    "json",
    "--strict-mcp-config",
    "--mcp-config",
    '{"mcpServers":{}}',
    "--settings",
    '{"disableAllHooks":true}',
    "--no-session-persistence",
    "--tools",
    "",
)
DEFAULT_TIMEOUT = 300.0
MAX_OUTPUT_BYTES = 4 * 2**20


class ModelCallFailed(AgentmdError):
    """The call did not produce a usable envelope (a failure, a timeout, garbage, an error envelope)."""

    def __init__(self, reason: str, usage: Usage | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.usage = usage or Usage()


@dataclass(frozen=True)
class Usage:
    """What one call processed. `added` is what a budget counts: input, cache writes and output, never the
    cached prefix a call re-reads."""

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    cost_usd: float | None = None

    @property
    def added(self) -> int:
        return self.input + self.cache_write + self.output

    @property
    def total(self) -> int:
        return self.added + self.cache_read

    def __add__(self, other: Usage) -> Usage:
        cost = (
            None if self.cost_usd is None and other.cost_usd is None else (self.cost_usd or 0) + (other.cost_usd or 0)
        )
        return Usage(
            self.input + other.input,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.output + other.output,
            cost,
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "input": self.input,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "output": self.output,
            "added": self.added,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
        }


@dataclass(frozen=True)
class ModelConfig:
    """How to call the model and read its envelope."""

    command: tuple[str, ...]
    prompt_via: str = "stdin"  # "stdin" | "arg" (the `{prompt}` element of the command)
    answer_key: str = "result"
    error_key: str | None = "is_error"
    usage_key: str = "usage"
    cost_key: str | None = "total_cost_usd"
    timeout: float = DEFAULT_TIMEOUT
    name: str = "claude"
    judge: bool = False  # a second call judges each answer's faithfulness (engine/enrich/grounding.py)
    env: Mapping[str, str] | None = field(default=None, compare=False)


def json_answer(text: str) -> object:
    """A model's JSON answer, read as the prompts ask for it (a fenced ```json block is unwrapped); raises
    ValueError when it is not JSON."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    return json.loads(body)


def body_of(text: str) -> str:
    """The answer's text without its fence, for a message quoting it."""
    body = text.strip()
    return body.strip("`").removeprefix("json").strip() if body.startswith("```") else body


def claude_command(program: str = "claude", model: str | None = None) -> tuple[str, ...]:
    """The argv of one isolated `claude -p` call (the prompt travels on stdin)."""
    argv = [program, *CLAUDE_ISOLATION]
    if model:
        argv += ["--model", model]
    return tuple(argv)


def config_from(table: Mapping[str, Any]) -> ModelConfig:
    """The adapter the `[enrich]` table describes; the claude shape when it names no `command`."""
    timeout = table.get("call_timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise UsageError(f"[enrich] call_timeout = {timeout!r} must be a positive number of seconds")
    judge = table.get("judge", False)
    if not isinstance(judge, bool):
        raise UsageError(f"[enrich] judge = {judge!r} must be true or false")
    command = table.get("command")
    if command is None:
        program = table.get("program", "claude")
        model = table.get("model")
        if not isinstance(program, str) or not program:
            raise UsageError("[enrich] program must name the claude executable")
        if model is not None and not isinstance(model, str):
            raise UsageError("[enrich] model must be text")
        return ModelConfig(claude_command(program, model), timeout=float(timeout), judge=judge)
    if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
        raise UsageError('[enrich] command must be a list of strings, e.g. ["llm", "--json"]')
    via = table.get("prompt", "stdin")
    if via not in ("stdin", "arg"):
        raise UsageError('[enrich] prompt must be "stdin" or "arg"')
    if via == "arg" and "{prompt}" not in command:
        raise UsageError('[enrich] prompt = "arg" needs a "{prompt}" element in command')

    def key(name: str, default: str | None) -> str | None:
        value = table.get(name, default)
        if value is not None and (not isinstance(value, str) or not value):
            raise UsageError(f"[enrich] {name} must be an envelope key")
        return value

    return ModelConfig(
        tuple(command),
        prompt_via=str(via),
        answer_key=key("answer", "result") or "result",
        error_key=key("error", "is_error"),
        usage_key=key("usage", "usage") or "usage",
        cost_key=key("cost", "total_cost_usd"),
        timeout=float(timeout),
        name=os.path.basename(command[0]),
        judge=judge,
    )


@dataclass(frozen=True)
class Answer:
    text: str
    usage: Usage
    seconds: float


def _count(data: Mapping[str, Any], *names: str) -> int:
    for name in names:
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return 0


def read_usage(envelope: Mapping[str, Any], config: ModelConfig) -> Usage:
    raw = envelope.get(config.usage_key)
    data = raw if isinstance(raw, Mapping) else {}
    cost = envelope.get(config.cost_key) if config.cost_key else None
    return Usage(
        input=_count(data, "input_tokens", "input"),
        cache_read=_count(data, "cache_read_input_tokens", "cache_read"),
        cache_write=_count(data, "cache_creation_input_tokens", "cache_write"),
        output=_count(data, "output_tokens", "output"),
        cost_usd=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )


def parse_envelope(stdout: str, config: ModelConfig) -> Answer:
    """The answer text and usage of an envelope; raises ModelCallFailed for anything else."""
    text = stdout.strip()
    try:
        envelope = json.loads(text)
    except ValueError:
        shown = text[:80].replace("\n", " ")
        raise ModelCallFailed(f"the output is not a JSON envelope ({shown!r})") from None
    if not isinstance(envelope, dict):
        raise ModelCallFailed("the output is JSON but not an envelope object")
    usage = read_usage(envelope, config)
    answer = envelope.get(config.answer_key)
    if config.error_key and envelope.get(config.error_key) is True:
        detail = answer if isinstance(answer, str) and answer.strip() else "no reason given"
        raise ModelCallFailed(f"the model reported an error: {detail[:200]}", usage)
    if not isinstance(answer, str):
        raise ModelCallFailed(f"the envelope has no text under {config.answer_key!r}", usage)
    if config.usage_key not in envelope:
        # a call the token budget cannot count would silently turn the budget off
        raise ModelCallFailed(f"the envelope reports no usage under {config.usage_key!r}", usage)
    return Answer(answer, usage, 0.0)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def call(config: ModelConfig, prompt: str, *, timeout: float | None = None) -> Answer:
    """One isolated call: a fresh empty working folder, its own process group, the wall-time limit."""
    limit = config.timeout if timeout is None else min(timeout, config.timeout)
    argv: Sequence[str] = list(config.command)
    stdin: bytes | None = prompt.encode("utf-8")
    if config.prompt_via == "arg":
        argv = [prompt if a == "{prompt}" else a for a in argv]
        stdin = None
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="agentmd-enrich-") as neutral:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=neutral,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env=None if config.env is None else dict(config.env),
            )
        except OSError as exc:
            raise ModelCallFailed(f"cannot start {argv[0]} ({exc.strerror or exc})") from None
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            _kill_group(proc)

        timer = threading.Timer(limit, stop)
        timer.daemon = True
        timer.start()
        try:
            out, err = proc.communicate(stdin)
        finally:
            timer.cancel()
            if proc.poll() is None:
                _kill_group(proc)
                proc.wait()
    seconds = time.monotonic() - started
    if timed_out.is_set():
        raise ModelCallFailed(f"no answer within {limit:g} s; the call was killed")
    if len(out) > MAX_OUTPUT_BYTES:
        raise ModelCallFailed(f"the output is over {MAX_OUTPUT_BYTES // 2**20} MiB")
    stdout = out.decode("utf-8", "replace")
    if proc.returncode != 0:
        try:
            parse_envelope(stdout, config)
        except ModelCallFailed as exc:
            if exc.usage.total or "reported an error" in exc.reason:
                raise ModelCallFailed(f"exited {proc.returncode}: {exc.reason}", exc.usage) from None
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise ModelCallFailed(f"exited {proc.returncode}" + (f": {tail[0][:200]}" if tail[0] else ""))
    answer = parse_envelope(stdout, config)
    return Answer(answer.text, answer.usage, seconds)
