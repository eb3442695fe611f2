"""An incoming request on its way (`InFlight`, from arrival until its answer is in the output,
and `serve_call`, which runs its handler) and the answers to one batch (`Batch`, sent as one
array). The dispatcher (_dispatch.py) makes and bounds them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

from ._output import Output
from ._runtime import DecodeError, decode
from .jsonrpc import ConnectionClosed, Message, Route, reply_line

Sink = Callable[[Message], None]
ABSENT: Final = object()  # a message without params


async def serve_call(flight: InFlight) -> Any:
    """What the handler `flight` was routed to returns for it; InvalidParams when its params
    do not decode."""
    handler, route, params = flight.handler, flight.route, flight.params
    if route is None:
        return await handler.ext_method(flight.method, None if params is ABSENT else params)
    if route.params is None:
        value = None if params is ABSENT else params
    else:
        try:
            value = decode(route.params, {} if params is ABSENT else params)
        except DecodeError as exc:
            raise InvalidParams(exc) from None
    return await getattr(handler, route.attr)(value)


class Batch:
    """Collects the answers to one incoming batch and sends them as one array."""

    def __init__(self, output: Output, incoming: dict[Any, InFlight]) -> None:
        self._output = output
        self._incoming = incoming
        self.expected = 0
        self.sealed = False  # every item was dispatched
        self.replies: list[bytes] = []
        self.flights: list[InFlight] = []

    def add(self, reply: Message) -> None:
        self.replies.append(reply_line(reply)[:-1])
        self.flush_if_complete()

    def flush_if_complete(self) -> None:
        if not self.sealed or len(self.replies) != self.expected or not self.expected:
            return
        try:
            self._output.put(b"[" + b",".join(self.replies) + b"]\n")
        except ConnectionClosed:
            pass
        self.replies = []
        self.expected = 0
        for flight in self.flights:  # their ids are free once the array is in the output
            if self._incoming.get(flight.rid) is flight:
                del self._incoming[flight.rid]


class InFlight:
    """An incoming request, from arrival until its answer is written, with the handler it was
    routed to. A task cancelled before its first turn never runs its code, so a cancellation
    that comes that early (or while the request is held) is a flag the task checks when it
    starts."""

    __slots__ = (
        "handler", "rid", "method", "route", "params", "sink", "batched", "task", "started",
        "cancelled",
    )  # fmt: skip

    def __init__(
        self,
        handler: Any,
        rid: Any,
        method: str,
        route: Route | None,
        params: Any,
        sink: Sink,
        batched: bool,
    ) -> None:
        self.handler = handler
        self.rid = rid
        self.method = method
        self.route = route
        self.params = params
        self.sink = sink
        self.batched = batched  # its id is freed when the batch's array is sent
        self.task: asyncio.Task[None] | None = None
        self.started = False
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        if self.started and self.task is not None:
            self.task.cancel()


class InvalidParams(Exception):
    def __init__(self, error: DecodeError) -> None:
        self.error = error
