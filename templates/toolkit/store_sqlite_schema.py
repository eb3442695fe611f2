"""The SQLite store's file: checked, created and migrated by `open_database`.

The schema's version is the file's `user_version`; `MIGRATIONS[n]` takes a file from version n
to n + 1, all steps in one transaction, so a failed migration leaves the file as it was. The
file is marked as ours with `application_id`. Everything that could refuse the file (not a
database, another program's database, a newer schema, corruption, no write access) is checked
before anything is written to it, and reported as one StoreOpenError naming the file.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal

from .store_types import StoreOpenError

SCHEMA_VERSION: Final = 1
APPLICATION_ID: Final = 0x41435053  # "ACPS"
_HEADER: Final = b"SQLite format 3\x00"
Synchronous = Literal["FULL", "NORMAL"]

_V1: Final = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE sessions (
    sid INTEGER PRIMARY KEY AUTOINCREMENT,  -- creation number: never reused, cursors point past it
    id TEXT NOT NULL UNIQUE,
    owner TEXT,
    cwd TEXT NOT NULL,
    cwd_key TEXT NOT NULL,
    protocol_version INTEGER NOT NULL,
    additional_directories TEXT NOT NULL,
    mcp_servers TEXT NOT NULL,
    config TEXT NOT NULL,
    title TEXT NOT NULL,
    state TEXT NOT NULL,
    usage TEXT NOT NULL,
    closed INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    bytes INTEGER NOT NULL
);
CREATE INDEX sessions_by_update ON sessions (updated_at, sid);
CREATE INDEX sessions_by_cwd ON sessions (cwd_key, sid);
CREATE INDEX sessions_by_owner ON sessions (owner, sid);
CREATE TABLE entries (
    sid INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (sid, seq),
    UNIQUE (sid, kind, key)
);
CREATE TABLE items (  -- the items one commit appended to one entry
    id INTEGER PRIMARY KEY,
    sid INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    value TEXT NOT NULL,  -- a JSON array of them
    bytes INTEGER NOT NULL  -- the size of their JSON text (brackets and commas not counted)
);
CREATE INDEX items_by_entry ON items (sid, seq, id);
"""


def _create_v1(conn: sqlite3.Connection) -> None:
    for statement in _V1.split(";"):
        if statement.strip():
            conn.execute(statement)


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {0: _create_v1}
"""Schema version n → the step to version n + 1 (0: a new, empty file)."""


def describe(exc: sqlite3.Error, busy_timeout: float) -> str:
    """What a SQLite error says about the file, in a few words."""
    name = getattr(exc, "sqlite_errorname", "")
    if name == "SQLITE_NOTADB":
        return "not a SQLite database"
    if name.startswith("SQLITE_CORRUPT"):
        return f"corrupted ({' '.join(str(exc).split())})"
    if name == "SQLITE_READONLY_DIRECTORY":
        return "its folder is read-only (SQLite keeps -wal and -shm files beside the database)"
    if name.startswith("SQLITE_READONLY"):
        return "read-only: the session store needs to write it"
    if name.startswith("SQLITE_CANTOPEN"):
        return "cannot be opened (SQLite also needs to create -wal and -shm files beside it)"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return f"locked by another connection for more than {busy_timeout:g} s"
    if name == "SQLITE_FULL":
        return "the disk is full"
    if name.startswith("SQLITE_IOERR"):
        return f"input/output error ({' '.join(str(exc).split())})"
    return " ".join(str(exc).split()) or type(exc).__name__


def _check_file(path: Path) -> bool:
    """Refuse what cannot be a session store; True when the file has contents."""
    if path.is_dir():
        raise StoreOpenError(f"{path}: a folder, not a database file")
    if not path.exists():
        if not path.parent.is_dir():
            raise StoreOpenError(f"{path}: its folder does not exist")
        if not os.access(path.parent, os.W_OK | os.X_OK):
            raise StoreOpenError(f"{path}: its folder is not writable (no database can be made)")
        return False
    if not path.is_file():
        raise StoreOpenError(f"{path}: not a regular file")
    try:
        with path.open("rb") as file:
            header = file.read(len(_HEADER))
    except OSError as exc:
        raise StoreOpenError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if header and header != _HEADER:
        raise StoreOpenError(f"{path}: not a SQLite database (no SQLite header)")
    if not os.access(path, os.W_OK):
        raise StoreOpenError(f"{path}: read-only: the session store needs to write it")
    return bool(header)


FILE_MODE: Final = 0o600
"""A new store file's permissions: it holds prompts and replies, for its owner's eyes only.
SQLite gives its -wal and -shm files the database file's permissions."""


def _create(path: Path) -> None:
    """Make the missing file, readable and writable by its owner only (another process may
    make it first: then it is theirs, as it is)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE))
    except FileExistsError:
        pass
    except OSError as exc:
        raise StoreOpenError(f"{path}: cannot be created ({exc.strerror or exc})") from None


def _inspect(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file of another program or of a newer schema (reads only)."""
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if application_id != APPLICATION_ID and (application_id != 0 or tables or version):
        raise StoreOpenError(f"{path}: not a session store (a database of another program)")
    if version > SCHEMA_VERSION:
        raise StoreOpenError(
            f"{path}: written by a newer session store (schema version {version}; this one "
            f"reads up to {SCHEMA_VERSION})"
        )


def _verify(conn: sqlite3.Connection, path: Path) -> None:
    problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        lines = [line.strip() for text in problems for line in text.splitlines()]
        found = "; ".join(line for line in lines if line and not line.startswith("***"))
        raise StoreOpenError(f"{path}: corrupted ({found[:200]})")


def migrate(conn: sqlite3.Connection, path: Path) -> int:
    """Bring the schema to SCHEMA_VERSION in one transaction; returns the version found."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:  # another process upgraded it since `_inspect`
            raise StoreOpenError(
                f"{path}: written by a newer session store (schema version {version})"
            )
        while version < SCHEMA_VERSION:
            MIGRATIONS[version](conn)
            version += 1
        conn.execute(f"PRAGMA user_version = {int(version)}")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(
            "INSERT OR IGNORE INTO meta (name, value) VALUES ('cursor_secret', ?)",
            (os.urandom(32),),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return int(found)


def open_database(
    path: Path, *, busy_timeout: float, synchronous: Synchronous, verify: bool
) -> tuple[sqlite3.Connection, bytes]:
    """A connection to the store at `path` (created when missing) in WAL mode, and the
    secret cursors are signed with. Raises StoreOpenError, having written nothing, when the
    file cannot be used."""
    existing = _check_file(path)
    if not existing:
        _create(path)
    try:
        conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreOpenError(f"{path}: {describe(exc, busy_timeout)}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        if existing:
            _inspect(conn, path)
            if verify:
                _verify(conn, path)
        else:
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only before the first table
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreOpenError(f"{path}: cannot use write-ahead logging (journal mode {mode})")
        conn.execute(f"PRAGMA synchronous = {'FULL' if synchronous == 'FULL' else 'NORMAL'}")
        migrate(conn, path)
        secret = conn.execute("SELECT value FROM meta WHERE name = 'cursor_secret'").fetchone()
        return conn, bytes(secret[0])
    except sqlite3.Error as exc:
        conn.close()
        raise StoreOpenError(f"{path}: {describe(exc, busy_timeout)}") from None
    except BaseException:
        conn.close()
        raise
