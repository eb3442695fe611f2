"""The toolkit copied into every generated package that has a lane it serves (with the
banner): lane-neutral agents, turns, tool calls, clients, session bookkeeping, the workspace,
the version router and the session store. It reaches a lane's classes only through the lane
objects a package generates (`lane.py` in each lane), never by importing a lane.

This file only makes the folder a package for ruff and mypy; the generator writes the
package's own `toolkit/__init__.py`."""
