"""A process that uses a SQLite session store, for the tests that need more than one process or
a real crash: `python -m tests.support.store_child MODE PATH [ARGS]`.

- `open PATH`: open the store; print `opened` or `error: <message>`.
- `turns PATH SESSION TURNS`: create SESSION and write TURNS turns (`turn_ops`), flushing after
  each and printing `flushed <ops>`; then close the store.
- `forever PATH SESSION`: like `turns` without end (a test kills it), flushing every 7 turns.
- `unflushed PATH SESSION TURNS`: write TURNS turns, print `queued <ops>` and exit at once,
  neither flushing nor closing (the interpreter's exit commits what is queued).
- `list PATH ROUNDS`: list every session ROUNDS times; print `listed <count>` at the end.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

from templates.toolkit.store import ANY_OWNER, SessionSetup, SessionStore, StoreError
from templates.toolkit.store_sqlite import SQLiteStore

OPS_PER_TURN = 7


def turn_ops(turn: int) -> Iterator[tuple[str, str, str, Any]]:
    """The writes of one turn: ("put" | "append", kind, key, value)."""
    yield "put", "message", f"u{turn}", {"role": "user", "turn": turn}
    for chunk in range(5):
        yield "append", "message", f"a{turn}", {"type": "text", "text": f"{turn}.{chunk}"}
    yield "put", "tool_call", f"t{turn}", {"status": "completed", "turn": turn}


def apply(store: SessionStore, session: str, turn: int) -> None:
    for verb, kind, key, value in turn_ops(turn):
        if verb == "put":
            store.put(session, kind, key, value)
        else:
            store.append(session, kind, key, value)


async def main(mode: str, path: str, args: list[str]) -> None:
    try:
        store = await SQLiteStore(path).open()
    except StoreError as exc:
        print(f"error: {exc}", flush=True)
        return
    if mode == "open":
        print("opened", flush=True)
        await store.close()
    elif mode in ("turns", "forever"):
        session = args[0]
        await store.create(SessionSetup(session, "/work", protocol_version=2))
        turns = int(args[1]) if mode == "turns" else None
        turn = 0
        while turns is None or turn < turns:
            apply(store, session, turn)
            turn += 1
            if turns is not None or turn % 7 == 0:
                await store.flush()
                print(f"flushed {turn * OPS_PER_TURN}", flush=True)
            else:
                await asyncio.sleep(0)
        await store.close()
    elif mode == "unflushed":
        session, turns = args[0], int(args[1])
        await store.create(SessionSetup(session, "/work", protocol_version=2))
        for turn in range(turns):
            apply(store, session, turn)
        print(f"queued {turns * OPS_PER_TURN}", flush=True)
    elif mode == "list":
        count = 0
        for _ in range(int(args[0])):
            count = len((await store.list_sessions(owner=ANY_OWNER, limit=1000)).sessions)
            await asyncio.sleep(0.01)
        print(f"listed {count}", flush=True)
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
