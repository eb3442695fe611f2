"""One session's writes in one SQLite transaction, in as few statements as they allow.

The entries the writes name are looked up together (one query per kind), new ones are
numbered from one `max(seq)` and inserted together, items appended to an entry in this commit
become one row (a JSON array), and the session's row — its patched columns, `updated_at` and
its size — is one UPDATE whose size arithmetic SQLite does on the row's old values. Any order
of writes gives what applying them one by one gives; folded ones (`store_fold`) just need
fewer statements.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Final

from .store_engine import PATCHABLE, AppendItem, PatchSession, PutEntry, WriteOp

SEQ_CACHE: Final = 4096
"""Entries whose position the engine remembers, for appends to them without a lookup."""
_IN_LIST: Final = 400  # keys per lookup query (SQLite allows 999 parameters at the least)

SeqCache = dict[tuple[int, str, str], int]
"""(session, kind, key) → the entry's position, of entries this engine wrote or read."""


class SessionWrite:
    """The writes of one session in the transaction open on `conn`."""

    __slots__ = ("conn", "sid", "seqs", "known", "sizes", "made", "values", "changed", "items",
                 "delta")  # fmt: skip

    def __init__(self, conn: sqlite3.Connection, sid: int, seqs: SeqCache) -> None:
        self.conn, self.sid, self.seqs = conn, sid, seqs
        self.known: dict[tuple[str, str], int] = {}  # (kind, key) → position, of existing entries
        self.sizes: dict[int, int] = {}  # position → the length of its value, of those put
        self.made: dict[tuple[str, str], int] = {}  # (kind, key) → position, of new entries
        self.values: dict[int, str] = {}  # position → value, of new entries
        self.changed: dict[int, str] = {}  # position → the new value, of existing entries
        self.items: dict[int, list[str]] = {}  # position → the items appended in this commit
        self.delta = 0  # bytes the session grows by

    def apply(self, ops: Sequence[WriteOp], stamp: str) -> None:
        patches: dict[str, str] = {}
        closed: bool | None = None
        self._look_up(ops)
        for op in ops:
            if type(op) is PatchSession:
                patches.update(op.texts)
                closed = op.closed if op.closed is not None else closed
            elif type(op) is AppendItem:
                seq = self._place(op.kind, op.key, "null")
                self.items.setdefault(seq, []).append(op.item)
                self.delta += len(op.item)
            else:
                assert isinstance(op, PutEntry)
                self._put(op)
        self._write_entries()
        self._write_session(patches, closed, stamp)

    # -- finding and making entries --------------------------------------------------------
    def _look_up(self, ops: Sequence[WriteOp]) -> None:
        """Find the entries `ops` name that exist: the positions of those only appended to
        (from the cache when known), the positions and value lengths of those put."""
        put = {(op.kind, op.key) for op in ops if type(op) is PutEntry}
        wanted: dict[str, set[str]] = {}
        for op in ops:
            if type(op) is PatchSession:
                continue
            assert isinstance(op, PutEntry | AppendItem)
            name = (op.kind, op.key)
            seq = None if name in put else self.seqs.get((self.sid, op.kind, op.key))
            if seq is not None:
                self.known[name] = seq
            else:
                wanted.setdefault(op.kind, set()).add(op.key)
        for kind, keys in wanted.items():
            ordered = sorted(keys)
            for start in range(0, len(ordered), _IN_LIST):
                chunk = ordered[start : start + _IN_LIST]
                marks = ", ".join("?" for _ in chunk)
                rows = self.conn.execute(
                    "SELECT key, seq, length(value) FROM entries"
                    f" WHERE sid = ? AND kind = ? AND key IN ({marks})",
                    (self.sid, kind, *chunk),
                )
                for key, seq, size in rows:
                    self.known[kind, key] = int(seq)
                    self.sizes[int(seq)] = int(size)
                    self._remember(kind, key, int(seq))

    def _place(self, kind: str, key: str, value: str) -> int:
        """The entry's position; made with `value` if it is new."""
        name = (kind, key)
        seq = self.known.get(name, self.made.get(name))
        if seq is not None:
            return seq
        if self.values:
            seq = max(self.values) + 1
        else:
            last = self.conn.execute("SELECT max(seq) FROM entries WHERE sid = ?", (self.sid,))
            found = last.fetchone()[0]
            seq = 1 if found is None else int(found) + 1
        self.made[name] = seq
        self.values[seq] = value
        self.delta += len(kind) + len(key) + len(value)
        self._remember(kind, key, seq)
        return seq

    def _remember(self, kind: str, key: str, seq: int) -> None:
        if len(self.seqs) >= SEQ_CACHE:
            self.seqs.clear()
        self.seqs[self.sid, kind, key] = seq

    def _put(self, op: PutEntry) -> None:
        name = (op.kind, op.key)
        existing = name in self.known
        if existing:
            seq = self.known[name]
            self.delta += len(op.value) - self.sizes[seq]
            self.sizes[seq] = len(op.value)
            self.changed[seq] = op.value
        elif name in self.made:
            seq = self.made[name]
            self.delta += len(op.value) - len(self.values[seq])
            self.values[seq] = op.value
        else:
            seq = self._place(op.kind, op.key, op.value)
        if op.items is None:
            return
        self.delta -= sum(map(len, self.items.pop(seq, [])))
        if existing:  # and the items committed before
            old = self.conn.execute(
                "SELECT coalesce(sum(bytes), 0) FROM items WHERE sid = ? AND seq = ?",
                (self.sid, seq),
            ).fetchone()[0]
            self.conn.execute("DELETE FROM items WHERE sid = ? AND seq = ?", (self.sid, seq))
            self.delta -= int(old)
        if op.items:
            self.items[seq] = list(op.items)
            self.delta += sum(map(len, op.items))

    # -- the statements --------------------------------------------------------------------
    def _write_entries(self) -> None:
        conn, sid = self.conn, self.sid
        if self.made:
            conn.executemany(
                "INSERT INTO entries (sid, seq, kind, key, value) VALUES (?, ?, ?, ?, ?)",
                [(sid, seq, kind, key, self.values[seq]) for (kind, key), seq in self.made.items()],
            )
        if self.changed:
            conn.executemany(
                "UPDATE entries SET value = ? WHERE sid = ? AND seq = ?",
                [(value, sid, seq) for seq, value in self.changed.items()],
            )
        if self.items:
            conn.executemany(
                "INSERT INTO items (sid, seq, value, bytes) VALUES (?, ?, ?, ?)",
                [
                    (sid, seq, f"[{','.join(items)}]", sum(map(len, items)))
                    for seq, items in self.items.items()
                ],
            )

    def _write_session(self, patches: dict[str, str], closed: bool | None, stamp: str) -> None:
        """One UPDATE of the session's row. Its right-hand sides read the row as it was, so
        `length(column)` is the old text's length."""
        assert all(column in PATCHABLE for column in patches)
        sets = ["updated_at = ?", *(f"{column} = ?" for column in patches)]
        args: list[object] = [stamp, *patches.values()]
        if closed is not None:
            sets.append("closed = ?")
            args.append(int(closed))
        size = "bytes + ?" + "".join(f" + length(?) - length({column})" for column in patches)
        args += [self.delta, *patches.values(), self.sid]
        self.conn.execute(
            f"UPDATE sessions SET {', '.join(sets)}, bytes = {size} WHERE sid = ?", args
        )
