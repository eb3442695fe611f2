"""The templates every generated package is made from: `*.j2` (rendered from the IR) and the
hand-written modules copied with the banner, `runtime/` (the JSON-RPC runtime) and `toolkit/`
(agents, clients, sessions: lane-neutral).

A package only so that ruff and mypy check the hand-written modules' relative imports across
the two folders as source (`..runtime.jsonrpc` from the toolkit); the generator does not copy
this file."""
