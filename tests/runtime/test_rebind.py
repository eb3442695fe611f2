"""`Connection.rebind(handler)`: a version router answers `initialize` and hands the connection
the handler of the lane it picked. From then on that handler's ROUTES, CANCEL_METHOD and
BATCHES apply, and nothing made for the router (its notification servers, its cancel method)
is used any more; what was read before stays with the router."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from acp_kit import v2 as acp
from acp_kit.runtime import connection, jsonrpc

from tests.support.rpc_wire import INITIALIZE_PARAMS, RawPeer, error, notification, request, run

Route = jsonrpc.Route


class Lane(acp.AgentBase):
    """The lane's handler: no batches, `$/cancel_request` cancels."""

    def __init__(self) -> None:
        self.cancels: list[str] = []

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(
            protocol_version=2, info=acp.Implementation(name=params.info.name, version="lane")
        )

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id="lane_" + params.cwd.strip("/"))

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        await asyncio.Event().wait()  # until cancelled
        raise AssertionError("not reached")

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        self.cancels.append(params.session_id)


class Router(connection.RoleBase):
    """Serves `initialize` (raw JSON) and a `session/cancel` of its own, with batches and no
    cancel method, until it rebinds the connection to its lane."""

    ROUTES: ClassVar[Mapping[tuple[str, str], Any]] = {
        ("initialize", "request"): Route("initialize", "request", None, None),
        ("session/cancel", "notification"): Route("note", "notification", None, None),
    }
    CANCEL_METHOD: ClassVar[str | None] = None
    BATCHES: ClassVar[bool] = True

    def __init__(self, lane: Lane) -> None:
        self.lane = lane
        self.notes: list[Any] = []

    async def initialize(self, params: Any) -> Any:
        self.connection.rebind(self.lane)
        answer = await self.lane.initialize(acp.decode(acp.InitializeRequest, params))
        return acp.encode(answer)

    async def note(self, params: Any) -> None:
        self.notes.append(params)


def test_rebinding_at_initialize_hands_everything_after_to_the_lane() -> None:
    lane = Lane()
    router = Router(lane)
    cancel = {"sessionId": "s1"}

    async def scenario() -> list[Any]:
        peer = RawPeer(router)
        answers = []
        peer.send(notification("session/cancel", cancel))  # the router's, before initialize
        answers.append(await peer.call([request(1, "session/new", {"cwd": "/"})]))  # a batch
        answers.append(await peer.call(request(2, "initialize", INITIALIZE_PARAMS)))
        assert peer.connection.handler is lane and lane.connection is peer.connection
        peer.send(notification("session/cancel", cancel))  # the lane's now
        answers.append(await peer.call([request(3, "session/new", {"cwd": "/"})]))
        answers.append(await peer.call(request(4, "session/new", {"cwd": "/a"})))
        prompt = {"sessionId": "s1", "prompt": [{"type": "text", "text": "x"}]}
        peer.send(request(5, "session/prompt", prompt))
        await asyncio.sleep(0.01)
        answers.append(await peer.call(notification("$/cancel_request", {"requestId": 5})))
        # A call of ours that times out asks the peer to cancel with the lane's method.
        with pytest.raises(TimeoutError):
            await lane.connection.request("_x/ask", {}, timeout=0.01)
        answers.append(await peer.recv())
        answers.append(await peer.recv())
        await peer.connection.close()
        return answers

    answers = run(scenario())
    assert answers[0] == [error(1, -32601, "Method not found", "session/new")]
    assert answers[1] == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"protocolVersion": 2, "info": {"name": "test-client", "version": "lane"}},
    }
    no_batches = "this protocol version has no batches: send one message per line"
    assert answers[2] == error(None, -32600, "Invalid request", no_batches)
    assert answers[3] == {"jsonrpc": "2.0", "id": 4, "result": {"sessionId": "lane_a"}}
    assert answers[4] == error(5, -32800, "Request cancelled")
    assert answers[5]["method"] == "_x/ask"
    assert answers[6] == notification("$/cancel_request", {"requestId": answers[5]["id"]})
    assert router.notes == [cancel]
    assert lane.cancels == ["s1"]


def test_a_handler_serving_another_connection_cannot_be_bound() -> None:
    async def scenario() -> None:
        busy = Lane()
        RawPeer(busy)
        peer = RawPeer(Router(Lane()))
        with pytest.raises(ValueError, match="already serves another Connection"):
            peer.connection.rebind(busy)
        await peer.connection.close()

    run(scenario())
