"""`PostgresStore`: sessions in a PostgreSQL database, so that several agent server workers
(behind a load balancer) serve any session from any worker. Same contract as the SQLite store.

    store = await PostgresStore("postgresql://agent@db.internal/agents").open()

Needs psycopg 3 (`pip install 'psycopg[binary]'`), imported only when a PostgresStore is made:
without it, the toolkit imports and runs, and making one raises DriverMissing saying what to
install. The store keeps its tables (and two small functions) in their own schema,
`acp_sessions` by default, versioned in its `meta` table and migrated at `open()` under an
advisory lock, so workers starting together migrate once. Its connection is used by a worker
thread (psycopg's asyncio API, on that thread's own event loop), never by the agent's loop;
a dropped connection is reopened and the commit tried again.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from datetime import datetime
from typing import Final

from .store import SessionStore
from .store_runner import COMMIT_INTERVAL, MAX_BACKLOG, ThreadRunner
from .store_types import DEFAULT_RETENTION, DriverMissing, Retention, utc_now

INSTALL_HINT: Final = "pip install 'psycopg[binary]>=3.2'"
_SCHEMA_NAME: Final = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def require_driver() -> None:
    """Raise DriverMissing unless psycopg 3 can be imported."""
    try:
        importlib.import_module("psycopg")
    except ImportError:
        raise DriverMissing(
            f"the PostgreSQL session store needs psycopg 3, which is not installed: {INSTALL_HINT}"
        ) from None


class PostgresStore(SessionStore):
    """The session store in PostgreSQL; see the module docstring. `dsn` is a libpq
    connection string or URL (its password never appears in messages); `schema` is where
    the store's tables live (lower-case letters, digits, `_`); `connect_timeout` in seconds;
    `max_backlog` bounds queued writes (bytes); `commit_interval` is the shortest time (seconds)
    between two commits nobody waits for; `durable_turn_ends` (see `SessionStore`)."""

    __slots__ = ()

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "acp_sessions",
        retention: Retention = DEFAULT_RETENTION,
        connect_timeout: float = 10.0,
        max_backlog: int = MAX_BACKLOG,
        commit_interval: float = COMMIT_INTERVAL,
        durable_turn_ends: bool = True,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if not isinstance(schema, str) or not _SCHEMA_NAME.fullmatch(schema):
            raise ValueError(
                f"schema must be 1-63 lower-case letters, digits or '_', got {schema!r:.80}"
            )
        if not connect_timeout > 0:
            raise ValueError(f"connect_timeout must be positive, got {connect_timeout!r}")
        require_driver()
        from .store_postgres_engine import PostgresEngine

        engine = PostgresEngine(dsn, schema=schema, connect_timeout=connect_timeout)
        runner = ThreadRunner(max_backlog=max_backlog, commit_interval=commit_interval)
        super().__init__(
            engine, runner, retention=retention, durable_turn_ends=durable_turn_ends, clock=clock
        )
