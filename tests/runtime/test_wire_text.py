"""`jsonrpc.to_text` writes a model's JSON text directly, through the per-class writers each
lane's `_wire` module registers in the runtime: it must give exactly the bytes of
`jsonrpc.dump_text(encode(value))`, for every type of both committed lanes (valid and mutated
values drawn from the IR's strategies), and raise what that raises where it cannot."""

from __future__ import annotations

import asyncio
import importlib
import json
from functools import cache
from types import ModuleType
from typing import Any

import pytest
from acp_kit import v1 as acp_v1
from acp_kit import v2 as acp_v2
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.diagnostics import Diagnostics
from codegen.pipeline import analyse
from tests.support.lanes import pinned_schema
from tests.support.strategies import WireStrategies, mutate

PACKAGES = {"v1": acp_v1, "v2": acp_v2}
SETTINGS = settings(max_examples=25, deadline=None)
TEXT = {"type": "text", "text": "hi"}


def wire(pkg: ModuleType) -> ModuleType:
    return importlib.import_module(f"{pkg.__name__}._wire")


def jsonrpc(pkg: ModuleType) -> ModuleType:
    """The runtime's jsonrpc module of a lane's package."""
    return importlib.import_module(f"{pkg.__name__.rpartition('.')[0]}.runtime.jsonrpc")


def text_of(pkg: ModuleType) -> Any:
    """The runtime's `to_text`, with the lane's writers registered."""
    wire(pkg)
    return jsonrpc(pkg).to_text


def general(pkg: ModuleType, value: Any) -> str:
    return str(jsonrpc(pkg).dump_text(pkg.encode(value)))


def types_of(pkg: ModuleType) -> list[Any]:
    """Every method's params and result type, and the unions messages are made of."""
    roots = {pkg.SessionUpdate, pkg.ContentBlock}
    named = {name for m in pkg.METHODS.values() for name in (m.params, m.result) if name}
    return sorted(named | roots, key=repr)


def type_name(tp: Any) -> str:
    metadata = getattr(tp, "__metadata__", None)
    return str(metadata[0].name) if metadata else str(tp.__name__)


CASES = [(lane, tp) for lane, pkg in PACKAGES.items() for tp in types_of(pkg)]
IDS = [f"{lane}-{type_name(tp)}" for lane, tp in CASES]


@cache
def strategies(lane: str) -> WireStrategies:
    path = pinned_schema(PACKAGES[lane].SCHEMA_REF, f"{lane}/schema.json")
    _, model, _ = analyse(path, Diagnostics())
    return WireStrategies(model)


@pytest.mark.parametrize(("lane", "tp"), CASES, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_the_direct_text_is_the_general_text(lane: str, tp: Any, data: st.DataObject) -> None:
    pkg = PACKAGES[lane]
    value = data.draw(strategies(lane).of(type_name(tp)))
    if data.draw(st.booleans()):  # extra keys, nulls, odd values that still decode
        value = mutate(value, data)
    try:
        decoded = pkg.decode(tp, value)
    except pkg.DecodeError:
        return
    if not isinstance(decoded, pkg.models._rt.Model):
        return
    assert text_of(pkg)(decoded) == general(pkg, decoded)


@pytest.mark.parametrize("pkg", PACKAGES.values(), ids=PACKAGES.keys())
def test_text_the_direct_way_does_not_cover_goes_the_general_way(pkg: ModuleType) -> None:
    to_text = text_of(pkg)
    chunk = pkg.decode(
        pkg.SessionUpdate,
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": TEXT},
    )
    # Extra keys (one overriding a declared key), a field holding another type, separators.
    chunk.content.extra = {"text": "override", "x-more": [1, 2.5, None]}
    assert to_text(chunk) == general(pkg, chunk)
    assert '"text":"override"' in to_text(chunk)
    chunk.content.extra = {}
    chunk.content.text = 42  # type: ignore[assignment]
    assert to_text(chunk) == general(pkg, chunk) and '"text":42' in to_text(chunk)
    chunk.content.text = 'a\u2028b\u2029c\u0085d é "q" \\ \n'
    assert to_text(chunk) == general(pkg, chunk)
    assert "\u2028" not in to_text(chunk) and "\\u2028" in to_text(chunk)
    assert json.loads(to_text(chunk))["content"]["text"] == chunk.content.text
    chunk.content.meta = {"n": 1.5, "deep": {"a": [True, False, None]}}
    assert to_text(chunk) == general(pkg, chunk)


@pytest.mark.parametrize("pkg", PACKAGES.values(), ids=PACKAGES.keys())
def test_values_json_cannot_carry_raise_the_general_way_s_errors(pkg: ModuleType) -> None:
    to_text = text_of(pkg)
    chunk = pkg.decode(
        pkg.SessionUpdate,
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": TEXT},
    )
    chunk.content.meta = {"x": float("inf")}
    with pytest.raises(pkg.UnencodableMessage) as direct:
        to_text(chunk)
    with pytest.raises(pkg.UnencodableMessage) as indirect:
        general(pkg, chunk)
    assert str(direct.value) == str(indirect.value)
    chunk.content.meta = {}
    chunk.content = object()  # type: ignore[assignment]  # not a model where one belongs
    with pytest.raises(TypeError) as misplaced:
        to_text(chunk)
    assert "$.content" in str(misplaced.value)


@pytest.mark.parametrize("pkg", PACKAGES.values(), ids=PACKAGES.keys())
def test_values_that_are_not_models_go_the_general_way(pkg: ModuleType) -> None:
    to_text = text_of(pkg)
    for value in ({"a": [1, "b", None]}, [1, 2], "text", 3, None, pkg.ToolKind.EDIT):
        assert to_text(value) == general(pkg, value)


def test_the_bench_stream_goes_the_direct_way_with_the_same_bytes() -> None:
    from benchmarks.stream import PARAMS_TYPE, generate_messages

    writers = wire(acp_v2)._WRITERS
    params_type = getattr(acp_v2, PARAMS_TYPE)
    messages = generate_messages(7, 300)
    for message in messages:
        value = acp_v2.decode(params_type, message["params"])
        direct = writers[type(value)](value)  # raises where the direct way does not apply
        assert direct == general(acp_v2, value)
        assert json.loads(direct) == message["params"]


class _Capture:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


class _Silent:
    async def read(self, n: int = -1) -> bytes:
        await asyncio.sleep(3600)
        return b""


@pytest.mark.parametrize("pkg", PACKAGES.values(), ids=PACKAGES.keys())
def test_calls_are_written_as_dump_line_writes_their_messages(pkg: ModuleType) -> None:
    chunk = pkg.decode(
        pkg.SessionUpdate,
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": TEXT},
    )
    chunk.content.text = 'é \u2028 "q"'
    methods = ["session/update", 'odd "method"\u2028', "_x/ext"]

    async def run() -> bytes:
        capture = _Capture()
        connection = pkg.Connection(pkg.ClientBase(), _Silent(), capture)
        connection.start()
        for method in methods:
            await connection.notify(method, chunk)
            await connection.notify(method)
            waiting = asyncio.ensure_future(connection.request(method, chunk, timeout=0.5))
            await asyncio.sleep(0)
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)  # its $/cancel_request now
        await connection.close()
        return capture.data

    written = asyncio.run(run())
    encoded = pkg.encode(chunk)
    expected = []
    rid = 0
    for method in methods:
        expected.append({"jsonrpc": "2.0", "method": method, "params": encoded})
        expected.append({"jsonrpc": "2.0", "method": method})
        expected.append({"jsonrpc": "2.0", "id": rid, "method": method, "params": encoded})
        cancel = pkg.ClientBase.CANCEL_METHOD
        if cancel is not None:
            expected.append({"jsonrpc": "2.0", "method": cancel, "params": {"requestId": rid}})
        rid += 1
    assert written == b"".join(jsonrpc(pkg).dump_line(m) for m in expected)


def test_a_lane_registers_its_writers_when_its_rpc_module_is_loaded() -> None:
    import subprocess
    import sys

    from tests.support.hostile import python_env

    script = (
        "import sys\n"
        "from acp_kit import v2\n"
        "from acp_kit.runtime import _runtime\n"
        "assert 'acp_kit.v2._wire' not in sys.modules and not _runtime.WRITERS\n"
        "v2.AgentStub\n"  # the rpc module: a lane's stubs are what sends its models
        "assert _runtime.WRITERS[v2.PromptRequest] is sys.modules['acp_kit.v2._wire']"
        "._WRITERS[v2.PromptRequest]\n"
        "print(len(_runtime.WRITERS))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=python_env(),
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(wire(acp_v2)._WRITERS)
