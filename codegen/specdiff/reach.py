"""Who sends each type: walk from every method's payloads through the `$ref`s they contain.

A request handled by the agent has its params sent client → agent and its result agent →
client; a method handled by the client the other way round; `$/` protocol methods go both
ways. The JSON-RPC envelopes add what no method names (`Error`, `RequestId`): they are named
after their sender (`AgentResponse` is sent by the agent). The walk follows every `$ref` in a
definition's JSON (fields, variants and their payloads, list items, alias targets), so it
sees exactly what a message of that type can contain.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..ir import Method, Model
from .rules import Direction

CLIENT_TO_AGENT = "client->agent"
AGENT_TO_CLIENT = "agent->client"
_ENVELOPES = ("Request", "Response", "Notification")


def directions(edges: Mapping[str, list[str]], model: Model) -> dict[str, Direction]:
    """The direction of every `$defs` name ("none" when nothing reaches it), given what each
    definition references (`parse.walk.ref_graph`)."""
    flows: dict[str, set[str]] = {name: set() for name in edges}
    for seed, flow in _seeds(edges, model.methods):
        stack = [seed]
        while stack:
            name = stack.pop()
            if name not in flows or flow in flows[name]:
                continue
            flows[name].add(flow)
            stack.extend(edges.get(name, ()))
    return {name: as_direction(f) for name, f in flows.items()}


def method_direction(method: Method) -> Direction:
    """The direction of a method's params: from the caller to the handling side."""
    if method.side == "agent":
        return "client->agent"
    if method.side == "client":
        return "agent->client"
    return "both"


def sender_direction(name: str) -> Direction:
    """The direction of a root message named after its sender (`AgentBatchCall`)."""
    if name.startswith("Agent"):
        return "agent->client"
    if name.startswith("Client"):
        return "client->agent"
    return "both"


def as_direction(flows: set[str]) -> Direction:
    if len(flows) == 2:
        return "both"
    if flows == {CLIENT_TO_AGENT}:
        return "client->agent"
    if flows == {AGENT_TO_CLIENT}:
        return "agent->client"
    return "none"


def merge(a: Direction, b: Direction) -> Direction:
    """The direction of a type that is sent as `a` before and as `b` after."""
    flows: set[str] = set()
    for d in (a, b):
        flows |= {CLIENT_TO_AGENT, AGENT_TO_CLIENT} if d == "both" else {d} - {"none"}
    return as_direction(flows)


def _seeds(defs: Mapping[str, object], methods: tuple[Method, ...]) -> list[tuple[str, str]]:
    seeds: list[tuple[str, str]] = []
    for m in methods:
        there = method_direction(m)
        back = {"client->agent": AGENT_TO_CLIENT, "agent->client": CLIENT_TO_AGENT}.get(there)
        for name, direction in ((m.params, there), (m.result, back or there)):
            if name is None:
                continue
            for flow in (CLIENT_TO_AGENT, AGENT_TO_CLIENT) if direction == "both" else (direction,):
                seeds.append((name, flow))
    for name in defs:
        for sender, flow in (("Agent", AGENT_TO_CLIENT), ("Client", CLIENT_TO_AGENT)):
            if name in (sender + suffix for suffix in _ENVELOPES):
                seeds.append((name, flow))
    return seeds
