# The interface of `_lanes.py`, which every package generates (templates/lanes.py.j2): it lets
# mypy check the toolkit here as source. The generator does not copy this file.
from typing import Final

LANES: Final[tuple[tuple[str, int, bool, str, str], ...]]
