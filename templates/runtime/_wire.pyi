# The interface of `_wire.py`, which every package generates from its schema (templates/wire.py.j2):
# it lets mypy check the runtime modules here as source. The generator does not copy this file.
from typing import Any

def to_text(value: Any) -> str: ...
