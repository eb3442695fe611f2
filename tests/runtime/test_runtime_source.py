"""Unit tests of the hand-written runtime modules, run against their source in
templates/runtime (not a generated copy), with the generated models of a small fixture schema
(tests/fixtures/golden/v2_tagged) beside them: see tests/support/runtime_package.py."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support import runtime_package
from tests.support.rpc_wire import pipe, run

PACKAGE = "runtime_probe"


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    package = runtime_package.load(tmp_path_factory.mktemp("runtime"), PACKAGE)
    yield package
    runtime_package.unload(PACKAGE)


def module(pkg: ModuleType, name: str) -> ModuleType:
    """A runtime module by its name, or a lane module by `v2.name`."""
    where = name if name.startswith("v2.") else f"runtime.{name}"
    return importlib.import_module(f"{pkg.__name__}.{where}")


def test_the_runtime_modules_are_the_source_files(pkg: ModuleType) -> None:
    for name in ("_runtime", "jsonrpc", "connection", "stdio"):
        assert Path(module(pkg, name).__file__ or "") == runtime_package.RUNTIME / f"{name}.py"
    models = Path(module(pkg, "v2.models").__file__ or "")
    assert (models.parent.name, models.parent.parent.name) == ("v2", PACKAGE)


# -- _runtime ----------------------------------------------------------------------------------
def test_decode_error_paths_quote_keys_that_are_not_identifiers(pkg: ModuleType) -> None:
    rt = module(pkg, "_runtime")
    error = rt.DecodeError("expected a string,\n  got a list").at("a b").at(2).at("parts")
    assert (error.path, error.reason) == ('$.parts[2]["a b"]', "expected a string, got a list")
    assert str(error) == '$.parts[2]["a b"]: expected a string, got a list'


def test_decode_reports_the_path_of_the_first_bad_value(pkg: ModuleType) -> None:
    prompt = [{"type": "text", "text": "ok"}, {"type": "text", "text": 3}]
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(pkg.PromptRequest, {"sessionId": "s", "prompt": prompt})
    assert str(caught.value) == "$.prompt[1].text: expected a string, got an integer"


def test_decode_and_encode_round_trip_with_undeclared_keys(pkg: ModuleType) -> None:
    data = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi", "x": [1]}], "y": None}
    value = pkg.decode(pkg.PromptRequest, data)
    assert value.extra == {"y": None}
    assert pkg.encode(value) == data
    assert pkg.encode((value, {"k": value})) == [data, {"k": data}]


def test_a_skip_invalid_items_list_drops_what_does_not_decode(pkg: ModuleType) -> None:
    content = [{"type": "text", "text": "a"}, {"type": "text"}, 7, {"type": "text", "text": "b"}]
    message = pkg.decode(pkg.Message, {"messageId": "m", "content": content})
    assert pkg.encode(message) == {"messageId": "m", "content": [content[0], content[3]]}


def test_encode_refuses_unset_and_decode_refuses_foreign_types(pkg: ModuleType) -> None:
    with pytest.raises(TypeError, match="UNSET is not a JSON value; omit the field instead"):
        pkg.encode([pkg.UNSET])
    with pytest.raises(TypeError, match="<class 'int'> is not a type of this package"):
        pkg.decode(int, 1)
    assert not pkg.UNSET and repr(pkg.UNSET) == "UNSET"


def test_aliases_decode_through_the_registry(pkg: ModuleType) -> None:
    assert pkg.decode(pkg.SessionId, "s") == "s"
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(pkg.SessionId, 3)
    assert str(caught.value) == "$: expected a string, got an integer"


# -- jsonrpc -----------------------------------------------------------------------------------
def test_rpc_errors_from_json_and_as_text(pkg: ModuleType) -> None:
    jsonrpc = module(pkg, "jsonrpc")
    error = jsonrpc.RpcError.from_json({"code": -32000, "message": "Busy", "data": {"n": 1}})
    assert (error.code, error.message, error.data, str(error)) == (
        -32000,
        "Busy",
        {"n": 1},
        'Busy (-32000): {"n": 1}',
    )
    malformed = jsonrpc.RpcError.from_json({"code": "x"})
    assert malformed.to_json() == {
        "code": -32600,
        "message": "Invalid response",
        "data": {"error": {"code": "x"}},
    }


def test_a_message_is_one_line_with_line_separators_escaped(pkg: ModuleType) -> None:
    jsonrpc = module(pkg, "jsonrpc")
    line = jsonrpc.dump_line({"text": "a\u2028b\u2029c\u0085d é"})
    assert line == '{"text":"a\\u2028b\\u2029c\\u0085d é"}\n'.encode()
    assert jsonrpc.load_line(line) == {"text": "a\u2028b\u2029c\u0085d é"}
    with pytest.raises(ValueError, match="NaN is not JSON"):
        jsonrpc.load_line(b'{"x": NaN}')


def test_a_result_that_is_not_json_is_answered_as_an_internal_error(pkg: ModuleType) -> None:
    jsonrpc = module(pkg, "jsonrpc")
    reply = jsonrpc.load_line(jsonrpc.reply_line({"jsonrpc": "2.0", "id": 4, "result": {1j}}))
    assert reply["id"] == 4 and reply["error"]["code"] == -32603
    assert reply["error"]["data"].startswith("the result is not JSON: ")


# -- connection --------------------------------------------------------------------------------
def test_a_typed_call_and_a_notification_between_two_connections(pkg: ModuleType) -> None:
    updates: list[Any] = []
    turn_end = {"sessionUpdate": "turn_end", "stopReason": "end_turn"}

    class Agent(pkg.AgentBase):  # type: ignore[misc,name-defined]
        async def session_prompt(self, params: Any) -> Any:
            update = {"sessionId": params.session_id, "update": turn_end}
            await self.client.session_update(pkg.UpdateNotification.from_json(update))
            return pkg.PromptResponse(meta={"parts": len(params.prompt)})

    class Client(pkg.ClientBase):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self.updated = asyncio.Event()

        async def session_update(self, params: Any) -> None:
            updates.append(pkg.encode(params))
            self.updated.set()

    async def scenario() -> None:
        to_agent, client_out = pipe()
        to_client, agent_out = pipe()
        handler = Client()
        agent = pkg.Connection(Agent(), to_agent, agent_out)
        client = pkg.Connection(handler, to_client, client_out)
        agent.start()
        client.start()
        request = pkg.PromptRequest.from_json({"sessionId": "s", "prompt": []})
        response = await pkg.AgentStub(client).session_prompt(request)
        assert pkg.encode(response) == {"_meta": {"parts": 0}}
        with pytest.raises(pkg.RpcError) as caught:
            await client.request("nobody/home", {})
        assert (caught.value.code, caught.value.data) == (-32601, "nobody/home")
        await handler.updated.wait()  # notifications are handled in order, after arrival
        await client.close()
        await agent.close()

    run(scenario())
    assert updates == [{"sessionId": "s", "update": turn_end}]


def test_calls_after_close_raise_connection_closed(pkg: ModuleType) -> None:
    async def scenario() -> None:
        reader, writer = pipe()
        connection = pkg.Connection(pkg.ClientBase(), reader, writer)
        connection.start()
        await connection.close()
        with pytest.raises(pkg.ConnectionClosed):
            await connection.request("session/prompt", {})
        await asyncio.sleep(0)

    run(scenario())
