"""The remote transports copied into every generated package that has a lane it serves (with
the banner): an agent served over Streamable HTTP and WebSocket as an ASGI application, and a
client's connection to one. Standard library only: httpx, websockets and uvicorn are imported
by the modules that use them, when used.

This file only makes the folder a package for ruff and mypy; the generator writes the
package's own `transports/__init__.py`."""
