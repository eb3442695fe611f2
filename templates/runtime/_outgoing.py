"""Our side's calls to the peer: `OutgoingCalls` makes their lines, numbers requests, keeps the
futures that wait for answers and matches answers to them by id.

A line is made as text: the params' JSON text from `jsonrpc.to_text` (a model's class writer,
else the general way) inside an envelope made once per method; `fast=False` makes every line
the general way (`dump_line` of the message with `encode(params)`), the same bytes. Bounds: a
call we stopped waiting for (timeout, cancellation) is remembered so that its late answer is
dropped quietly, the newest MAX_ABANDONED_IDS of them; envelopes are kept for MAX_METHOD_TEXTS
methods.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import Any, Final

from ._output import WRITE_CHUNK, Output
from ._runtime import encode
from ._salvage import Salvaged
from .jsonrpc import (
    INVALID_REQUEST,
    ConnectionClosed,
    Message,
    RpcError,
    UnencodableMessage,
    dump_line,
    dump_text,
    to_text,
)

MAX_ABANDONED_IDS: Final = 4096
MAX_METHOD_TEXTS: Final = 64
_log = logging.getLogger(f"{__package__}.connection")  # the connection's logger


class OutgoingCalls:
    """Requests and notifications to the peer, and the answers we wait for."""

    def __init__(self, output: Output, cancel_method: str | None, fast: bool) -> None:
        self._output = output
        self.cancel_method = cancel_method  # sent to the peer for a call we stop waiting for
        self._fast = fast
        self._ids = itertools.count()
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._abandoned: dict[int, None] = {}  # calls we stopped waiting for, oldest first
        self._method_texts: dict[str, str] = {}  # `"method":M,"params":` by method
        self.done = False  # EOF, read error or close: no answer can come any more

    # -- lines ---------------------------------------------------------------------------------
    def notification_line(self, method: str, params: Any) -> bytes:
        named = self._method_texts.get(method)
        if named is None or params is None:
            return self._line(method, None, params)
        try:
            params_text = to_text(params)
        except UnencodableMessage as exc:
            raise UnencodableMessage(f"cannot send {method}: the params are {exc}") from None
        return f'{{"jsonrpc":"2.0",{named}{params_text}}}\n'.encode()

    def _line(self, method: str, rid: int | None, params: Any) -> bytes:
        """The line of a request (`rid`) or a notification (None): the bytes dump_line makes
        of the message."""
        try:
            if params is None or type(method) is not str or not self._fast:
                message: Message = {"jsonrpc": "2.0"}
                if rid is not None:
                    message["id"] = rid
                message["method"] = method
                if params is not None:
                    message["params"] = encode(params)
                return dump_line(message)
            named = self._method_texts.get(method) or self._method_text(method)
            params_text = to_text(params)
        except UnencodableMessage as exc:
            raise UnencodableMessage(f"cannot send {method}: the params are {exc}") from None
        if rid is None:
            return f'{{"jsonrpc":"2.0",{named}{params_text}}}\n'.encode()
        return f'{{"jsonrpc":"2.0","id":{rid},{named}{params_text}}}\n'.encode()

    def _method_text(self, method: str) -> str:
        text = f'"method":{dump_text(method)},"params":'
        if len(self._method_texts) < MAX_METHOD_TEXTS:
            self._method_texts[method] = text
        return text

    # -- requests ------------------------------------------------------------------------------
    async def call(self, method: str, params: Any, timeout: float | None) -> Any:
        """Send a request and wait for its answer's raw result (see `Connection.request`)."""
        if self.done:
            raise ConnectionClosed("the connection is closed")
        rid = next(self._ids)
        line = self._line(method, rid, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        output = self._output
        try:
            output.put(line)
        except ConnectionClosed:
            del self._pending[rid]
            raise
        try:
            if output.queued >= WRITE_CHUNK:
                await output.flow()
            if timeout is None:
                return await future
            try:
                return await asyncio.wait_for(future, timeout)
            except TimeoutError:
                if future.done() and not future.cancelled():  # the answer won the race
                    return future.result()
                self._abandon(rid)
                raise TimeoutError(
                    f"{method}: no answer within {timeout:g} s (request id {rid}); "
                    "the peer was asked to cancel it"
                ) from None
        except asyncio.CancelledError:
            self._abandon(rid)
            raise
        finally:
            self._pending.pop(rid, None)

    def _abandon(self, rid: int) -> None:
        """Stop waiting for `rid`: its late answer is dropped quietly, and the peer is asked to
        cancel it."""
        if self._pending.pop(rid, None) is None:
            return
        self._abandoned[rid] = None
        if len(self._abandoned) > MAX_ABANDONED_IDS:
            del self._abandoned[next(iter(self._abandoned))]
        cancel = self.cancel_method
        if cancel is not None and not self.done and not self._output.closed:
            notice: Message = {"jsonrpc": "2.0", "method": cancel, "params": {"requestId": rid}}
            self._output.put(dump_line(notice))

    # -- answers -------------------------------------------------------------------------------
    def answer(self, message: Message) -> None:
        """An answer from the peer (a message with an id and no method)."""
        rid = message["id"]
        future = self._pending.pop(rid, None) if type(rid) is int else None
        if future is None:
            if type(rid) is int and rid in self._abandoned:
                del self._abandoned[rid]
            elif "error" in message:
                _log.warning("the peer reported an error: %s", RpcError.from_json(message["error"]))
            else:
                _log.warning("dropped a response to the unknown request id %r", rid)
            return
        if future.done():
            return
        if message.get("jsonrpc") != "2.0" or ("result" in message) == ("error" in message):
            future.set_exception(
                RpcError(INVALID_REQUEST, "Invalid response", {"response": message})
            )
        elif "error" in message:
            future.set_exception(RpcError.from_json(message["error"]))
        else:
            future.set_result(message["result"])

    def unreadable_answer(self, found: Salvaged) -> None:
        """An answer that did not parse but whose id did: the call fails, naming where and why."""
        rid = found.rid
        future = self._pending.pop(rid, None) if type(rid) is int else None
        if future is None:
            if type(rid) is int:
                self._abandoned.pop(rid, None)
            return
        if not future.done():
            where = {"member": found.member, "path": found.error.path, "reason": found.error.reason}
            future.set_exception(RpcError(INVALID_REQUEST, "Invalid response", where))

    def finish(self, why: str) -> None:
        """No answer can come any more: every pending call fails with ConnectionClosed(why)."""
        self.done = True
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed(why))
