"""The witness over HTTP: C2SP ``tlog-witness``'s ``POST /add-checkpoint``, served by aiohttp.

The body is bounded (:data:`~ledger.witness.protocol.MAX_REQUEST_BYTES`, larger is answered 413
unread); each request is answered by :meth:`~ledger.witness.core.Witness.add_checkpoint` in a
worker thread, under the lock of its log, so concurrent requests for one log are serialised and
requests for different logs do not wait for each other. ``aiohttp`` is imported when a server
starts, not when the ``ledger`` command loads.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

from ledger.witness.core import Witness
from ledger.witness.protocol import MAX_REQUEST_BYTES, Answer, refusal
from ledger.witness.state import StateError

if TYPE_CHECKING:
    from aiohttp import web

LOG = logging.getLogger("ledger.witness")
ADD_CHECKPOINT = "/add-checkpoint"
INTERNAL = 500


def make_app(witness: Witness) -> web.Application:
    """The aiohttp application of one witness."""
    from aiohttp import web

    async def add_checkpoint(request: web.Request) -> web.Response:
        body = await request.read()
        try:
            answer = await asyncio.to_thread(witness.add_checkpoint, body)
        except (StateError, OSError) as exc:
            LOG.error("state error: %s", exc)
            answer = refusal(INTERNAL, f"the witness cannot use its state: {exc}")
        _log(request, answer)
        return web.Response(
            status=answer.status,
            body=answer.body.encode("utf-8"),
            headers={"Content-Type": answer.content_type},
        )

    app = web.Application(client_max_size=MAX_REQUEST_BYTES)
    app.router.add_post(ADD_CHECKPOINT, add_checkpoint)
    return app


def _log(request: web.Request, answer: Answer) -> None:
    reason = "" if answer.ok else " " + answer.body.strip()
    LOG.info("%s %s %d%s", request.remote, request.path, answer.status, reason)


def serve(
    witness: Witness, host: str, port: int, ready: Callable[[list[str]], None] = lambda addresses: None
) -> None:
    """Serve until SIGINT or SIGTERM; ``ready`` is told the bound ``http://HOST:PORT`` URLs."""
    asyncio.run(serve_async(witness, host, port, ready))


async def serve_async(
    witness: Witness,
    host: str,
    port: int,
    ready: Callable[[list[str]], None],
    stop: asyncio.Event | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM, or, given ``stop``, until it is set (no signal handler
    is then installed, so a thread other than the main one may serve); ``ready`` is told the
    bound ``http://HOST:PORT`` URLs."""
    from aiohttp import web

    runner = web.AppRunner(make_app(witness), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        addresses = [_url(a) for a in runner.addresses]
        ready(addresses)
        if stop is None:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()


def _url(address: object) -> str:
    host, port = address[:2] if isinstance(address, tuple) else (str(address), 0)
    return f"http://[{host}]:{port}" if ":" in str(host) else f"http://{host}:{port}"
