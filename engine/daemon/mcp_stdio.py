"""The MCP server over this process's stdin and stdout (`agentmd mcp`), one JSON-RPC message a line.

The SDK's own stdio transport hands a line it cannot read to the server as an exception, and the server answers
nothing: a client that sent a request on such a line waits for its answer until it gives up. Here a line that is
not JSON is answered with a parse error (-32700), one that is JSON but no JSON-RPC message (a batch, which MCP's
current protocol no longer takes, an object without `method`, a string holding a lone surrogate) with an invalid
request error (-32600), each with the request's `id` when one can be read, else `null`, as JSON-RPC 2.0 says.
Everything else goes to the server as the SDK's transport would send it. When the client closes stdin, the
requests it sent are answered (within `DRAIN_SECONDS`) before the server hears of the end.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import Any

import anyio
import mcp_types as types
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage

MAX_SHOWN = 200  # characters of the reader's complaint quoted in an error message
DRAIN_SECONDS = 30.0  # how long the requests in flight when stdin closes may take to be answered


class _Unowned(TextIOWrapper):
    """A text layer over a standard stream's buffer that never closes it (the process's own streams stay
    usable after the server ends)."""

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.detach()


def error_for(line: str) -> types.JSONRPCError | None:
    """The answer to a line the server cannot take, or None for a notification, which is never answered (a
    line whose `id` cannot be read is answered with `id: null`)."""
    try:
        value = json.loads(line.strip())
    except (ValueError, RecursionError) as exc:
        return _error(None, types.PARSE_ERROR, f"Parse error: the line is not JSON ({str(exc)[:MAX_SHOWN]})")
    if isinstance(value, list):
        return _error(None, types.INVALID_REQUEST, "Invalid request: send one JSON-RPC message a line, not a batch")
    ident = value.get("id") if isinstance(value, dict) else None
    if isinstance(value, dict) and "method" in value and "id" not in value:
        return None  # a notification the server could not read: JSON-RPC answers no notification
    if not isinstance(ident, int | str) or isinstance(ident, bool):
        ident = None
    return _error(
        ident,
        types.INVALID_REQUEST,
        "Invalid request: not a JSON-RPC 2.0 message the server can read (a string holding a lone surrogate, a "
        "missing `jsonrpc` or `method`, a value of the wrong type)",
    )


def _error(ident: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message))


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for `Server.run` over stdin and stdout, answering unreadable lines itself."""
    stdin = anyio.wrap_file(_Unowned(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(_Unowned(sys.stdout.buffer, encoding="utf-8", write_through=True))
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    answers_writer, answers = anyio.create_memory_object_stream[types.JSONRPCError](16)

    pending: set[int | str] = set()  # requests sent on to the server and not answered yet
    answered = anyio.Event()

    async def read_lines() -> None:
        async with read_writer, answers_writer:
            async for line in stdin:
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception:
                    answer = error_for(line)
                    if answer is not None:
                        await answers_writer.send(answer)
                    continue
                if isinstance(message, types.JSONRPCRequest):
                    pending.add(message.id)
                await read_writer.send(SessionMessage(message))
            # the client closed its end: the requests it sent last are answered before the server is told
            with anyio.move_on_after(DRAIN_SECONDS):
                while pending:
                    await answered.wait()

    async def write_lines() -> None:
        async with write_reader, answers, anyio.create_task_group() as group:

            async def server_messages() -> None:
                nonlocal answered
                async for session_message in write_reader:
                    message = session_message.message
                    await emit(message.model_dump_json(by_alias=True, exclude_unset=True))
                    if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id in pending:
                        pending.discard(message.id)
                        answered.set()
                        answered = anyio.Event()

            async def own_answers() -> None:
                async for answer in answers:
                    await emit(answer.model_dump_json(by_alias=True, exclude_unset=True))

            group.start_soon(server_messages)
            group.start_soon(own_answers)

    lock = anyio.Lock()

    async def emit(text: str) -> None:
        async with lock:  # one whole line at a time, whoever answers
            await stdout.write(text + "\n")
            await stdout.flush()

    async with anyio.create_task_group() as group:
        group.start_soon(read_lines)
        group.start_soon(write_lines)
        yield read_stream, write_stream
