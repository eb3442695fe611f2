"""Fixtures for the session store's tests: `backend` runs a test on each implementation
(memory, SQLite, PostgreSQL); `postgres_dsn` is the session's throwaway server (skips with the
reason where none can start); `durable_backend` runs it on SQLite and PostgreSQL only. Import
the `*_fixture` names a test module uses."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from templates.toolkit.store import SessionStore
from templates.toolkit.store_memory import MemoryStore
from templates.toolkit.store_postgres import PostgresStore
from templates.toolkit.store_sqlite import SQLiteStore
from tests.support import postgres_server

BACKENDS = ("memory", "sqlite", "postgres")


@dataclass
class Clock:
    """A settable clock for stores (`clock=`): starts at a fixed moment, moves when told."""

    now: datetime = field(default_factory=lambda: datetime(2025, 10, 29, 14, 22, 15, 42000, UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass
class Backend:
    name: str
    folder: Path
    dsn: str | None = None
    schema: str = field(default_factory=lambda: f"t_{uuid.uuid4().hex[:16]}")

    def make(self, **options: Any) -> SessionStore:
        """A new (unopened) store; durable ones share one file or schema per test."""
        if self.name == "memory":
            return MemoryStore(**options)
        if self.name == "sqlite":
            return SQLiteStore(self.folder / "sessions.db", **options)
        assert self.dsn is not None
        return PostgresStore(self.dsn, schema=self.schema, **options)

    def drop(self) -> None:
        if self.name == "postgres" and self.dsn is not None:
            import psycopg

            with psycopg.connect(self.dsn, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')


@pytest.fixture(scope="session", name="postgres_dsn")
def postgres_fixture() -> Iterator[str]:
    try:
        server = postgres_server.acquire()
    except postgres_server.Unavailable as exc:
        pytest.skip(f"no PostgreSQL server for the store's tests: {exc}")
    try:
        yield server.dsn
    finally:
        postgres_server.release()


@pytest.fixture(params=BACKENDS, name="backend")
def backend_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from _backend(request, tmp_path)


@pytest.fixture(params=("sqlite", "postgres"), name="durable_backend")
def durable_backend_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """The stores that outlive their process."""
    yield from _backend(request, tmp_path)


def _backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else None
    made = Backend(request.param, tmp_path, dsn)
    try:
        yield made
    finally:
        made.drop()
