"""The PostgreSQL store beyond the shared contract: several workers on one store, its schema's
version and migrations, a server that is not there, a dropped connection, no driver."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from templates.toolkit.store import (
    ANY_OWNER,
    DriverMissing,
    HistoryEntry,
    SessionSetup,
    StoreOpenError,
)
from templates.toolkit.store_postgres import PostgresStore
from tests.support.store_backends import Backend, backend_fixture, postgres_fixture  # noqa: F401
from tests.support.store_child import apply

REPO = Path(__file__).resolve().parents[2]


def run(work: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(work)


@pytest.fixture
def schema(postgres_dsn: str, tmp_path: Path) -> Iterator[Backend]:
    made = Backend("postgres", tmp_path, postgres_dsn)
    try:
        yield made
    finally:
        made.drop()


async def open_and_close(backend: Backend) -> None:
    store = await backend.make().open()
    await store.close()


def expected(turns: range) -> list[HistoryEntry]:
    entries = []
    for turn in turns:
        entries += [
            HistoryEntry("message", f"u{turn}", {"role": "user", "turn": turn}, ()),
            HistoryEntry(
                "message",
                f"a{turn}",
                None,
                tuple({"type": "text", "text": f"{turn}.{c}"} for c in range(5)),
            ),
            HistoryEntry("tool_call", f"t{turn}", {"status": "completed", "turn": turn}, ()),
        ]
    return entries


def test_two_workers_share_sessions_cursors_and_writes(schema: Backend) -> None:
    async def body() -> None:
        first, second = schema.make(), schema.make()
        await asyncio.gather(first.open(), second.open())  # both migrate a new schema at once
        try:
            await first.create(SessionSetup("from-first", "/p", protocol_version=1))
            apply(first, "from-first", 0)
            await first.flush()
            record = await second.get("from-first")
            assert record is not None and record.protocol_version == 1
            assert [e async for e in second.history("from-first")] == expected(range(1))
            await second.create(SessionSetup("from-second", "/p", protocol_version=2))
            await second.create(SessionSetup("third", "/p", protocol_version=2))
            page = await first.list_sessions(limit=2)
            assert [r.session_id for r in page.sessions] == ["third", "from-second"]
            rest = await second.list_sessions(limit=2, cursor=page.next_cursor)
            assert [r.session_id for r in rest.sessions] == ["from-first"]
            # One session served by one worker, then by the other: positions stay in order.
            apply(second, "from-first", 1)
            await second.flush()
            apply(first, "from-first", 2)
            await first.flush()
            assert [e async for e in second.history("from-first")] == expected(range(3))
            assert await second.delete("from-first")
            assert await first.get("from-first") is None
        finally:
            await asyncio.gather(first.close(), second.close())

    run(body())


def test_workers_writing_different_sessions_at_once(schema: Backend) -> None:
    async def worker(name: str) -> None:
        async with schema.make() as store:
            await store.create(SessionSetup(name, "/p", protocol_version=2))
            for turn in range(60):
                apply(store, name, turn)
                await asyncio.sleep(0)
            await store.flush()

    async def body() -> list[list[HistoryEntry]]:
        async with schema.make() as store:  # the schema made before the workers start
            await asyncio.gather(worker("one"), worker("two"), worker("three"))
            return [[e async for e in store.history(n)] for n in ("one", "two", "three")]

    assert run(body()) == [expected(range(60))] * 3


def test_a_schema_of_a_newer_version_is_refused(schema: Backend) -> None:
    import psycopg

    run(open_and_close(schema))
    with psycopg.connect(schema.dsn or "", autocommit=True) as conn:
        conn.execute(
            f"UPDATE \"{schema.schema}\".meta SET value = '7' WHERE name = 'schema_version'"
        )
    store = schema.make()
    with pytest.raises(StoreOpenError) as caught:
        run(store.open())
    assert str(caught.value) == (
        f"{store.name}: written by a newer session store (schema version 7; this one reads up to 1)"
    )


def test_a_schema_holding_other_tables_is_refused(schema: Backend) -> None:
    import psycopg

    with psycopg.connect(schema.dsn or "", autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema.schema}"')
        conn.execute(f'CREATE TABLE "{schema.schema}".invoices (n int)')
    store = schema.make()
    with pytest.raises(StoreOpenError) as caught:
        run(store.open())
    assert str(caught.value) == f"{store.name}: not a session store (the schema holds other tables)"


def test_a_migration_step_runs_once_under_the_lock(
    schema: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    from psycopg import sql

    from templates.toolkit import store_postgres_engine as engine

    ran: list[str] = []

    async def add_tags(conn: Any, where: sql.Identifier) -> None:
        ran.append("tags")
        await conn.execute(sql.SQL("CREATE TABLE {}.tags (sid bigint)").format(where))

    run(open_and_close(schema))
    monkeypatch.setattr(engine, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(engine.MIGRATIONS, 1, add_tags)

    async def body() -> None:
        stores = [schema.make() for _ in range(3)]
        await asyncio.gather(*(store.open() for store in stores))
        await asyncio.gather(*(store.close() for store in stores))

    run(body())
    import psycopg

    with psycopg.connect(schema.dsn or "") as conn:
        version = conn.execute(
            f"SELECT value FROM \"{schema.schema}\".meta WHERE name = 'schema_version'"
        ).fetchone()
    assert (ran, version) == (["tags"], ("2",))


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_server_is_one_clear_error_without_the_password() -> None:
    port = _closed_port()
    store = PostgresStore(f"postgresql://agent:hunter2@127.0.0.1:{port}/agents", connect_timeout=2)
    assert store.name == f"postgresql://agent@127.0.0.1:{port}/agents (schema acp_sessions)"
    with pytest.raises(StoreOpenError) as caught:
        run(store.open())
    message = str(caught.value)
    assert message.startswith(f"{store.name}: cannot connect: ")
    assert "\n" not in message and "hunter2" not in message


def test_a_dropped_connection_is_reopened_and_the_commit_tried_again(schema: Backend) -> None:
    import psycopg

    async def body() -> list[HistoryEntry]:
        async with schema.make() as store:
            await store.create(SessionSetup("s", "/p", protocol_version=2))
            apply(store, "s", 0)
            await store.flush()
            with psycopg.connect(schema.dsn or "", autocommit=True) as admin:
                ended = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE pid <> pg_backend_pid() AND datname = current_database()"
                    " AND backend_type = 'client backend'"
                ).fetchall()
            assert ended and all(row == (True,) for row in ended)  # the store's among them
            apply(store, "s", 1)
            await store.flush()
            return [e async for e in store.history("s")]

    assert run(body()) == expected(range(2))


def test_without_the_driver_making_a_store_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg → ImportError
    with pytest.raises(DriverMissing) as caught:
        PostgresStore("postgresql://localhost/agents")
    assert isinstance(caught.value, ImportError)
    assert str(caught.value) == (
        "the PostgreSQL session store needs psycopg 3, which is not installed:"
        " pip install 'psycopg[binary]>=3.2'"
    )


def test_the_toolkit_imports_without_the_driver() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "import templates.toolkit.store, templates.toolkit.store_sqlite\n"
        "import templates.toolkit.store_memory, templates.toolkit.store_postgres\n"
        "print(sorted(m for m in sys.modules if m.startswith('psycopg')))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (found.returncode, found.stdout, found.stderr) == (0, "['psycopg']\n", "")


def test_schema_names_and_options_are_checked() -> None:
    for bad in ("Sessions", "a" * 64, 'x"; DROP TABLE y; --', "", "9lives"):
        with pytest.raises(ValueError, match="^schema must be 1-63 lower-case letters"):
            PostgresStore("postgresql://localhost/agents", schema=bad)
    with pytest.raises(ValueError, match="^connect_timeout must be positive, got 0$"):
        PostgresStore("postgresql://localhost/agents", connect_timeout=0)
    with pytest.raises(ValueError, match=r"^not a PostgreSQL connection string \("):
        PostgresStore("host=localhost port=5432 = oops")


def test_sessions_of_every_owner_are_listed_across_workers(schema: Backend) -> None:
    async def body() -> list[str]:
        async with schema.make() as first, schema.make() as second:
            await first.create(SessionSetup("a", "/p", protocol_version=2, owner="alice"))
            await second.create(SessionSetup("b", "/p", protocol_version=2, owner="bob"))
            page = await first.list_sessions(owner=ANY_OWNER)
            assert [r.session_id for r in (await second.list_sessions(owner="alice")).sessions] == [
                "a"
            ]
            return [r.session_id for r in page.sessions]

    assert run(body()) == ["b", "a"]
