"""What every part of the comparison shares: both inputs, the renames, the changes found."""

from __future__ import annotations

from dataclasses import replace

from ..ir import Shape
from ..render.shapes import annotation
from .finding import Change
from .load import Input
from .rules import Direction
from .shapes import Relater, wire

Owners = tuple[str | None, str | None]


class Context:
    def __init__(self, old: Input, new: Input) -> None:
        self.old = old
        self.new = new
        self.renames: dict[str, str] = {}
        self.changes: list[Change] = []
        self.relater = Relater(old.model, new.model, self.rename)

    def rename(self, old_name: str) -> str:
        return self.renames.get(old_name, old_name)

    def add(
        self,
        kind: str,
        path: str,
        detail: str,
        owners: Owners = (None, None),
        *,
        direction: Direction | None = None,
        python: str | None = None,
        hint: str = "",
    ) -> None:
        """Record a change: its direction is the owners' (the types sent), or `direction`."""
        self.changes.append(Change(kind, path, detail, owners, direction, python, hint))

    def wire_old(self, shape: Shape) -> Shape:
        return wire(shape, self.old.model)

    def wire_new(self, shape: Shape) -> Shape:
        return wire(shape, self.new.model)

    def renamed(self, shape: Shape) -> Shape:
        """An old shape with its references spelled by their new names."""
        item = self.renamed(shape.item) if shape.item is not None else None
        ref = self.rename(shape.ref) if shape.ref is not None else None
        return replace(shape, ref=ref, item=item)

    def annotation(self, shape: Shape, *, new: bool) -> str:
        """The annotation the generator writes for a shape (`list[ContentBlock] | None`)."""
        side = self.new if new else self.old
        return annotation(side.model, side.names, shape).replace("_Any", "Any")

    def py_class(self, key: str, *, new: bool) -> str:
        """The Python class of a `Names.fields` key (a `$defs` name or a variant class)."""
        side = self.new if new else self.old
        return side.names.types.get(key, key)
