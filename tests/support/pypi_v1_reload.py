"""A v1 client on the PyPI Python SDK (`agent-client-protocol`) for sessions that outlive
their agent process, written the way its README shows (`spawn_agent_process`).

    python -m tests.support.pypi_v1_reload [--session ID] -- AGENT_CMD [ARGS...]

Without --session: initialize, session/new in this directory, one prompt "hello" (permission
requests allowed); prints {"sessionId": ...}. With --session ID: initialize, session/list
(this directory), session/load; prints {"listed": [...], "replayed": [...]}, the sessions and
the updates as the SDK decoded them (dumped by alias, unset fields left out).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

import acp
from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, RequestPermissionResponse


class Recorder:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_unset=True))

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        option = next((o for o in options if str(o.kind).startswith("allow")), None)
        outcome: AllowedOutcome | DeniedOutcome = (
            DeniedOutcome(outcome="cancelled")
            if option is None
            else AllowedOutcome(outcome="selected", option_id=option.option_id)
        )
        return RequestPermissionResponse(outcome=outcome)


async def run_client(session_id: str | None, command: list[str]) -> dict[str, Any]:
    client = Recorder()
    async with acp.spawn_agent_process(client, *command) as (conn, _process):  # type: ignore[arg-type]
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        if session_id is None:
            session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hello")])
            return {"sessionId": session.session_id}
        page = await conn.list_sessions(cwd=os.getcwd())
        listed = [
            s.model_dump(mode="json", by_alias=True, exclude_unset=True) for s in page.sessions
        ]
        await conn.load_session(cwd=os.getcwd(), session_id=session_id, mcp_servers=[])
        return {"listed": listed, "replayed": client.updates}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1 :] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--session")
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if not command:
        parser.error("the agent's command comes after --")
    print(json.dumps(asyncio.run(run_client(args.session, command))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
