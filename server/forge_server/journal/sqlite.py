"""The embedded journal: one SQLite file (stdlib sqlite3), WAL mode.

WAL with synchronous=NORMAL commits without an fsync per event (durable
across a process crash, which is what a SIGKILL is; a power loss may drop
the last commits). Several processes on one host may share the file
(busy_timeout); replicas on several hosts use PostgreSQL.

Two connections. Events and results -- a few per tool round trip -- commit
on the event loop's own connection (group_commit.py `inline`): a commit is
an append to the WAL file, 40-65 µs here, where the hop to a thread and back
cost 2-3 times that. That connection never waits: busy_timeout 0 (a batch
that would wait for another writer goes to the thread) and no automatic
checkpoint (a checkpoint copies pages into the database file and syncs it;
the thread runs one every CHECKPOINT_EVERY inline commits). Everything else
-- reads, leases, sessions, pruning, and any batch the loop's connection
could not commit at once -- runs on one worker thread that owns the other
connection and waits for locks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Awaitable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from forge_server.journal.base import ABANDONED, LEASE_S, RUNNING, JournaledRun, RunExists
from forge_server.journal.group_commit import GroupCommit, Statements, WouldBlock

T = TypeVar("T")

log = logging.getLogger(__name__)

# Commits on the loop's connection between two checkpoints on the thread.
# SQLite's own default is a checkpoint per 1,000 WAL pages; a commit here
# writes 1-4 pages.
CHECKPOINT_EVERY = 256
# Tries at switching a new file to WAL while other servers open it too.
WAL_ATTEMPTS = 40

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  start BLOB NOT NULL,
  owner TEXT NOT NULL,
  session_id TEXT NOT NULL,
  status TEXT NOT NULL,
  created REAL NOT NULL,
  updated REAL NOT NULL,
  holder TEXT NOT NULL DEFAULT '',
  lease_until REAL NOT NULL DEFAULT 0,
  handoff TEXT NOT NULL DEFAULT '',
  bytes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_by_holder ON runs (holder, status);
CREATE INDEX IF NOT EXISTS runs_by_updated ON runs (updated);
CREATE TABLE IF NOT EXISTS events (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event BLOB NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results (
  run_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  result BLOB NOT NULL,
  PRIMARY KEY (run_id, call_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  transcript BLOB NOT NULL,
  updated REAL NOT NULL
);
"""


# Each run's size: counted when it ended; summed now for running ones.
_SIZES = """
SELECT run_id, CASE WHEN status = ? THEN length(start) + (
  SELECT COALESCE(SUM(length(event)), 0) FROM events WHERE events.run_id = runs.run_id
) ELSE bytes END FROM runs
"""


class SqliteJournal:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.url = f"sqlite:///{path}"
        self._db: sqlite3.Connection | None = None
        # The event loop's connection (module doc); None: every write on the thread.
        self._loop_db: sqlite3.Connection | None = None
        self._inline_commits = 0
        self._checkpoint: asyncio.Future[Any] | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="forge-journal")
        # Events and results: many writes per commit (group_commit.py).
        self._group = GroupCommit(self._write_all, self._in_thread, self._write_inline)

    def _in_thread(self, fn: Any, *args: Any) -> asyncio.Future[Any]:
        return asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    async def _run(self, fn: Any, *args: Any) -> Any:
        # After the queued writes: statements keep the order they were asked in.
        await self._group.idle()
        return await self._in_thread(fn, *args)

    def _write_all(self, statements: list[tuple[str, tuple[Any, ...]]]) -> list[int | Exception]:
        """One transaction for a batch of writes; each write's row count. A
        batch that fails is written again one statement at a time, so one
        bad write fails alone, not the other runs' writes beside it."""
        if len(statements) > 1:
            try:
                with self._tx():
                    return [self.db.execute(sql, params).rowcount for sql, params in statements]
            except sqlite3.Error:
                pass
        out: list[int | Exception] = []
        for sql, params in statements:
            try:
                out.append(self._write(sql, params))
            except sqlite3.Error as exc:
                out.append(exc)
        return out

    def _write_inline(self, statements: Statements) -> list[int | Exception]:
        """The batch in one transaction on the loop's connection, or
        WouldBlock with nothing written (the thread then writes it)."""
        db = self._loop_db
        if db is None:
            raise WouldBlock
        try:
            if len(statements) == 1:
                sql, params = statements[0]
                counts: list[int | Exception] = [db.execute(sql, params).rowcount]
            else:
                db.execute("BEGIN IMMEDIATE")
                counts = [db.execute(sql, params).rowcount for sql, params in statements]
                db.execute("COMMIT")
        except sqlite3.Error as exc:
            # Locked by another writer, a constraint, the disk: the thread
            # waits for the lock and fails bad writes one by one.
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            raise WouldBlock from exc
        self._inline_commits += 1
        if self._inline_commits % CHECKPOINT_EVERY == 0 and self._checkpoint is None:
            self._checkpoint = self._in_thread(self._run_checkpoint)
            self._checkpoint.add_done_callback(self._checkpointed)
        return counts

    def _run_checkpoint(self) -> None:
        self.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _checkpointed(self, done: asyncio.Future[Any]) -> None:
        self._checkpoint = None
        if not done.cancelled() and done.exception() is not None:
            log.warning("journal checkpoint failed: %s", done.exception())

    @property
    def db(self) -> sqlite3.Connection:
        assert self._db is not None, "journal not opened"
        return self._db

    async def open(self) -> None:
        def connect() -> None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            # Several servers opening a new file at once: switching it to WAL
            # can answer "locked" at once, without waiting (SQLite does not
            # wait where waiting could deadlock), so ask again a few times.
            for attempt in range(WAL_ATTEMPTS):
                try:
                    db.execute("PRAGMA journal_mode=WAL")
                    break
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or attempt == WAL_ATTEMPTS - 1:
                        raise
                    time.sleep(0.05)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA busy_timeout=5000")
            db.executescript(_SCHEMA)
            self._db = db
            loop_db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            loop_db.execute("PRAGMA busy_timeout=5000")
            loop_db.execute("PRAGMA synchronous=NORMAL")
            loop_db.execute("PRAGMA wal_autocheckpoint=0")
            # A commit touches a few B-tree pages; what misses this cache the
            # OS reads back in microseconds. SQLite's default (2 MB) was a
            # fixed cost bigger than 100 idle streams' worth of run state.
            loop_db.execute("PRAGMA cache_size=-512")
            # Read the schema now, while waiting for other openers is fine.
            loop_db.execute("SELECT 1 FROM runs LIMIT 0").fetchall()
            loop_db.execute("PRAGMA busy_timeout=0")
            self._loop_db = loop_db

        await self._run(connect)

    async def aclose(self) -> None:
        await self._group.idle()
        if self._loop_db is not None:
            self._loop_db.close()
            self._loop_db = None
        if self._db is not None:
            await self._run(self.db.close)
            self._db = None
        self._thread.shutdown(wait=False)

    async def create_run(
        self, run_id: str, start: bytes, owner: str, session_id: str, holder: str, now: float
    ) -> None:
        try:
            await self._create(run_id, start, owner, session_id, holder, now)
        except sqlite3.IntegrityError as exc:
            raise RunExists(run_id) from exc

    async def _create(
        self, run_id: str, start: bytes, owner: str, session_id: str, holder: str, now: float
    ) -> None:
        # With the other runs' writes: a busy server starts many runs at once.
        await self._group.write(
            "INSERT INTO runs (run_id, start, owner, session_id, status, created, updated,"
            " holder, lease_until, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                start,
                owner,
                session_id,
                RUNNING,
                now,
                now,
                holder,
                now + LEASE_S,
                len(start),
            ),
        )

    def _write(self, sql: str, params: tuple[Any, ...]) -> int:
        # One statement: autocommit is its own transaction.
        return self.db.execute(sql, params).rowcount

    @contextlib.contextmanager
    def _tx(self) -> Iterator[None]:
        """One transaction (isolation_level=None leaves sqlite3 in
        autocommit, where `with connection:` begins none)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def append(self, run_id: str, seq: int, event: bytes, size: int) -> Awaitable[object]:
        # One statement per event (the run's size is summed when it ends),
        # committed with whatever else is queued.
        return self._group.write(
            "INSERT INTO events (run_id, seq, event) VALUES (?, ?, ?)", (run_id, seq, event)
        )

    async def record_result(self, run_id: str, call_id: str, result: bytes) -> bool:
        return await self.keep_result(run_id, call_id, result) == 1

    def keep_result(self, run_id: str, call_id: str, result: bytes) -> asyncio.Future[int]:
        return self._group.write(
            "INSERT OR IGNORE INTO results (run_id, call_id, result) VALUES (?, ?, ?)",
            (run_id, call_id, result),
        )

    async def finish(self, run_id: str, status: str, now: float) -> None:
        # Queued after the run's events, so its size counts all of them.
        await self._group.write(
            "UPDATE runs SET status = ?, updated = ?, holder = '', handoff = '',"
            " bytes = length(start) + (SELECT COALESCE(SUM(length(event)), 0) FROM events"
            " WHERE events.run_id = runs.run_id) WHERE run_id = ?",
            (status, now, run_id),
        )

    async def load(self, run_id: str, after_seq: int = 0) -> JournaledRun | None:
        def read() -> JournaledRun | None:
            row = self.db.execute(
                "SELECT start, owner, session_id, status, holder, lease_until FROM runs"
                " WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                return None
            events = self.db.execute(
                "SELECT seq, event FROM events WHERE run_id = ? AND seq > ? ORDER BY seq",
                (run_id, after_seq),
            ).fetchall()
            results = self.db.execute(
                "SELECT call_id, result FROM results WHERE run_id = ?", (run_id,)
            ).fetchall()
            return JournaledRun(
                run_id,
                bytes(row[0]),
                row[1],
                row[2],
                row[3],
                row[4],
                row[5],
                [(seq, bytes(event)) for seq, event in events],
                {call_id: bytes(result) for call_id, result in results},
            )

        found: JournaledRun | None = await self._run(read)
        return found

    async def claim(self, run_id: str, holder: str, now: float) -> bool:
        changed: int = await self._run(
            self._write,
            "UPDATE runs SET holder = ?, lease_until = ?, handoff = '' WHERE run_id = ?"
            " AND status = ? AND (holder = '' OR holder = ? OR lease_until < ?)",
            (holder, now + LEASE_S, run_id, RUNNING, holder, now),
        )
        return changed == 1

    async def renew(self, holder: str, now: float) -> list[str]:
        def write() -> list[str]:
            with self._tx():
                self.db.execute(
                    "UPDATE runs SET lease_until = ? WHERE holder = ? AND status = ?",
                    (now + LEASE_S, holder, RUNNING),
                )
                rows = self.db.execute(
                    "SELECT run_id FROM runs WHERE holder = ? AND status = ? AND handoff != ''",
                    (holder, RUNNING),
                ).fetchall()
            return [r[0] for r in rows]

        wanted: list[str] = await self._run(write)
        return wanted

    async def abandon(self, now: float, grace_s: float, event: bytes) -> list[str]:
        def write() -> list[str]:
            with self._tx():
                ended = [
                    r[0]
                    for r in self.db.execute(
                        "SELECT run_id FROM runs WHERE status = ? AND lease_until < ?",
                        (RUNNING, now - grace_s),
                    ).fetchall()
                ]
                for run_id in ended:
                    self.db.execute(
                        "INSERT INTO events (run_id, seq, event) SELECT ?,"
                        " COALESCE(MAX(seq), 0) + 1, ? FROM events WHERE run_id = ?",
                        (run_id, event, run_id),
                    )
                    self.db.execute(
                        "UPDATE runs SET status = ?, updated = ?, holder = '', handoff = '',"
                        " bytes = length(start) + (SELECT COALESCE(SUM(length(event)), 0)"
                        " FROM events WHERE events.run_id = runs.run_id) WHERE run_id = ?",
                        (ABANDONED, now, run_id),
                    )
            return ended

        ended: list[str] = await self._run(write)
        return ended

    async def disown(self, holder: str) -> int:
        changed: int = await self._run(
            self._write,
            "UPDATE runs SET holder = '', handoff = '' WHERE holder = ? AND status = ?",
            (holder, RUNNING),
        )
        return changed

    async def request_handoff(self, run_id: str, holder: str) -> None:
        await self._run(
            self._write, "UPDATE runs SET handoff = ? WHERE run_id = ?", (holder, run_id)
        )

    async def release(self, run_id: str, holder: str) -> None:
        # The lease's end stays: a claim needs only the empty holder, and the
        # reattach grace before `abandon` counts from there.
        await self._run(
            self._write,
            "UPDATE runs SET holder = '' WHERE run_id = ? AND holder = ?",
            (run_id, holder),
        )

    async def save_session(
        self, session_id: str, owner: str, transcript: bytes, now: float
    ) -> None:
        await self._run(
            self._write,
            "INSERT INTO sessions (session_id, owner, transcript, updated) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner,"
            " transcript = excluded.transcript, updated = excluded.updated",
            (session_id, owner, transcript, now),
        )

    async def load_session(self, session_id: str) -> tuple[str, bytes] | None:
        def read() -> tuple[str, bytes] | None:
            row = self.db.execute(
                "SELECT owner, transcript FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            return (row[0], bytes(row[1])) if row else None

        found: tuple[str, bytes] | None = await self._run(read)
        return found

    async def prune(self, now: float, max_age_s: float, max_bytes: int) -> int:
        def write() -> int:
            with self._tx():
                doomed = [
                    r[0]
                    for r in self.db.execute(
                        "SELECT run_id FROM runs WHERE updated < ?"
                        " AND (status != ? OR lease_until < ?)",
                        (now - max_age_s, RUNNING, now),
                    )
                ]
                sizes = dict(self.db.execute(_SIZES, (RUNNING,)).fetchall())
                total = sum(sizes.values()) - sum(sizes[r] for r in doomed)
                if max_bytes and total > max_bytes:
                    for run_id, size in self.db.execute(
                        "SELECT run_id, bytes FROM runs WHERE status != ? ORDER BY updated",
                        (RUNNING,),
                    ).fetchall():
                        if total <= max_bytes:
                            break
                        if run_id not in doomed:
                            doomed.append(run_id)
                            total -= size
                for run_id in doomed:
                    for table in ("events", "results", "runs"):
                        self.db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
                self.db.execute("DELETE FROM sessions WHERE updated < ?", (now - max_age_s,))
            return len(doomed)

        count: int = await self._run(write)
        return count
