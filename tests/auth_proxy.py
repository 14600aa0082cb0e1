"""A loopback reverse proxy that adds the daemon's access token to every request, for HTTP clients that cannot
be given a header (the official MCP conformance suite takes a URL and nothing else).

One request per connection: the proxy reads a request's head, rewrites its own port to the daemon's in
`Host` and `Origin` (as a reverse proxy in front of a server does), adds `Authorization: Bearer <token>`
and `Connection: close`, forwards the head and the body, then pipes the answer back until the daemon closes
it (a streamed answer included). Clients reconnect for their next request.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_DROPPED = (b"connection:", b"authorization:", b"keep-alive:")


def _rewrite(head: bytes, own: int, upstream: int, token: str) -> bytes:
    lines = head.split(b"\r\n")
    out = [lines[0]]
    for line in lines[1:]:
        lower = line.lower()
        if not line or lower.startswith(_DROPPED):
            continue
        if lower.startswith((b"host:", b"origin:")):
            line = line.replace(f":{own}".encode(), f":{upstream}".encode())
        out.append(line)
    out += [f"Authorization: Bearer {token}".encode(), b"Connection: close"]
    return b"\r\n".join(out) + b"\r\n\r\n"


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


@contextmanager
def auth_proxy(upstream: int, token: str) -> Iterator[int]:
    """A proxy to the daemon on `upstream` adding `token`; yields the proxy's own port."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, asyncio.base_events.Server] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        own = writer.get_extra_info("sockname")[1]
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream)
        up_writer.write(_rewrite(head[:-4], own, upstream, token))
        await up_writer.drain()
        # the request body, whatever its length, then the answer, in both directions until either side closes
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def start() -> None:
        holder["server"] = await asyncio.start_server(handle, "127.0.0.1", 0)
        ready.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True)
    thread.start()
    ready.wait(10)
    server = holder["server"]
    async def shut() -> None:
        server.close()
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)  # every pipe ends before the loop stops

    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        asyncio.run_coroutine_threadsafe(shut(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
