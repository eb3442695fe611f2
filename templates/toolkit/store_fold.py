"""Folding the writes of one commit into the fewest that leave the same state.

A turn writes the same few things many times (its session's state at the start and the end,
a tool call each time its status moves), and a commit takes every write queued since the
last one: written one by one, most of them would be overwritten in the same transaction.
`fold` keeps per session one `PatchSession` (each column's last text, the last `closed`) and
per entry one write at the place the entry first appears — a `PutEntry` with its last value,
holding its items when they were replaced (the last replacement's and the appends after it),
else followed by the appends — so an engine applying the result in order reaches the state
that applying `ops` would, with new entries created in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence

from .store_engine import AppendItem, PatchSession, PutEntry, WriteOp


class _Entry:
    __slots__ = ("session", "kind", "key", "value", "items", "replaced")

    def __init__(self, session: str, kind: str, key: str) -> None:
        self.session, self.kind, self.key = session, kind, key
        self.value: str | None = None  # the last value put; None: none was
        self.items: list[str] = []  # the items appended (after the last replacement)
        self.replaced = False  # a put replaced the items

    def writes(self) -> list[WriteOp]:
        if self.value is not None and self.replaced:
            return [PutEntry(self.session, self.kind, self.key, self.value, tuple(self.items))]
        out: list[WriteOp] = []
        if self.value is not None:
            out.append(PutEntry(self.session, self.kind, self.key, self.value, None))
        out.extend(AppendItem(self.session, self.kind, self.key, item) for item in self.items)
        return out


class _Patch:
    __slots__ = ("session", "texts", "closed")

    def __init__(self, session: str) -> None:
        self.session = session
        self.texts: dict[str, str] = {}
        self.closed: bool | None = None

    def writes(self) -> list[WriteOp]:
        return [PatchSession(self.session, tuple(self.texts.items()), self.closed)]


def fold(ops: Sequence[WriteOp]) -> Sequence[WriteOp]:
    """`ops` folded (see the module docstring); `ops` itself when nothing repeats."""
    places: list[_Entry | _Patch] = []
    entries: dict[tuple[str, str, str], _Entry] = {}
    patches: dict[str, _Patch] = {}
    for op in ops:
        if type(op) is PatchSession:
            patch = patches.get(op.session)
            if patch is None:
                patch = patches[op.session] = _Patch(op.session)
                places.append(patch)
            patch.texts.update(op.texts)
            if op.closed is not None:
                patch.closed = op.closed
            continue
        assert isinstance(op, PutEntry | AppendItem)
        name = (op.session, op.kind, op.key)
        entry = entries.get(name)
        if entry is None:
            entry = entries[name] = _Entry(op.session, op.kind, op.key)
            places.append(entry)
        if type(op) is AppendItem:
            entry.items.append(op.item)
            continue
        assert isinstance(op, PutEntry)
        entry.value = op.value
        if op.items is not None:
            entry.replaced = True
            entry.items = list(op.items)
    if len(places) == len(ops):
        return ops  # every write has a place of its own: nothing folds
    return [write for place in places for write in place.writes()]
