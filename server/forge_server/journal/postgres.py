"""The shared journal: PostgreSQL (psycopg 3, an async connection pool).

Several replicas point at one database and take each other's runs over
(base.py, "Ownership"). The schema is sqlite.py's, translated; every
statement that decides ownership is one conditional UPDATE, so PostgreSQL's
row locks make it atomic across replicas: of two replicas claiming one run,
the second waits for the first to commit, re-checks its WHERE clause against
the new row and changes nothing.

Connections are in autocommit mode; the calls that write more than one
statement wrap them in a transaction.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from typing import Any

from psycopg import AsyncConnection
from psycopg.errors import UniqueViolation
from psycopg_pool import AsyncConnectionPool

from forge_server.journal.base import ABANDONED, LEASE_S, RUNNING, JournaledRun, RunExists

# pg_advisory_xact_lock key for the schema creation (replicas starting at
# once would otherwise race CREATE TABLE IF NOT EXISTS into a unique
# violation on pg_type): "forgejnl" as a big-endian 64-bit integer.
_SCHEMA_LOCK = int.from_bytes(b"forgejnl", "big", signed=True)

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  start BYTEA NOT NULL,
  owner TEXT NOT NULL,
  session_id TEXT NOT NULL,
  status TEXT NOT NULL,
  created DOUBLE PRECISION NOT NULL,
  updated DOUBLE PRECISION NOT NULL,
  holder TEXT NOT NULL DEFAULT '',
  lease_until DOUBLE PRECISION NOT NULL DEFAULT 0,
  handoff TEXT NOT NULL DEFAULT '',
  bytes BIGINT NOT NULL DEFAULT 0
)""",
    "CREATE INDEX IF NOT EXISTS runs_by_holder ON runs (holder, status)",
    "CREATE INDEX IF NOT EXISTS runs_by_updated ON runs (updated)",
    """CREATE TABLE IF NOT EXISTS events (
  run_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  event BYTEA NOT NULL,
  PRIMARY KEY (run_id, seq)
)""",
    """CREATE TABLE IF NOT EXISTS results (
  run_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  result BYTEA NOT NULL,
  PRIMARY KEY (run_id, call_id)
)""",
    """CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  transcript BYTEA NOT NULL,
  updated DOUBLE PRECISION NOT NULL
)""",
]

# Connections the pool keeps open / may open: every live run writes its
# events, so a handful serve many runs (each write holds one for a round trip).
POOL_MIN = 1
POOL_MAX = 8
# How long open() waits for the first connection, and a call for a free one.
CONNECT_TIMEOUT_S = 15.0


def mask_password(url: str) -> str:
    """`url` with its password (in the user info or a `password=` query
    parameter) replaced by ***, for logs and GetServerInfo."""
    # user:password@ ends at the authority's last "@".
    url = re.sub(r"^([\w+.-]+://[^:/?#@]*):[^/?#]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url)


class PostgresJournal:
    def __init__(self, url: str) -> None:
        self.url = mask_password(url)
        self._conninfo = url
        self._pool: AsyncConnectionPool[AsyncConnection[tuple[Any, ...]]] | None = None

    @property
    def pool(self) -> AsyncConnectionPool[AsyncConnection[tuple[Any, ...]]]:
        assert self._pool is not None, "journal not opened"
        return self._pool

    async def open(self) -> None:
        pool: AsyncConnectionPool[AsyncConnection[tuple[Any, ...]]] = AsyncConnectionPool(
            self._conninfo,
            min_size=POOL_MIN,
            max_size=POOL_MAX,
            kwargs={"autocommit": True},
            # A connection the server dropped (a PostgreSQL restart, a
            # failover) is replaced before use instead of failing a write.
            check=AsyncConnectionPool.check_connection,
            timeout=CONNECT_TIMEOUT_S,
            name="forge-journal",
            open=False,
        )
        await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        try:
            async with pool.connection() as conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                for statement in _SCHEMA:
                    await conn.execute(statement)
        except BaseException:
            await pool.close()
            raise
        self._pool = pool

    async def aclose(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    async def _write(self, sql: str, params: tuple[Any, ...]) -> int:
        async with self.pool.connection() as conn:
            cur = await conn.execute(sql, params)
            return cur.rowcount

    async def create_run(
        self, run_id: str, start: bytes, owner: str, session_id: str, holder: str, now: float
    ) -> None:
        try:
            await self._create(run_id, start, owner, session_id, holder, now)
        except UniqueViolation as exc:
            raise RunExists(run_id) from exc

    async def _create(
        self, run_id: str, start: bytes, owner: str, session_id: str, holder: str, now: float
    ) -> None:
        await self._write(
            "INSERT INTO runs (run_id, start, owner, session_id, status, created, updated,"
            " holder, lease_until, bytes) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
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

    def append(self, run_id: str, seq: int, event: bytes, size: int) -> Awaitable[object]:
        # One statement per event (the run's size is summed when it ends),
        # under way at once: the caller awaits the commit only where it must.
        return asyncio.ensure_future(self._append(run_id, seq, event))

    async def _append(self, run_id: str, seq: int, event: bytes) -> None:
        await self._write(
            "INSERT INTO events (run_id, seq, event) VALUES (%s, %s, %s)", (run_id, seq, event)
        )

    async def record_result(self, run_id: str, call_id: str, result: bytes) -> bool:
        changed = await self._write(
            "INSERT INTO results (run_id, call_id, result) VALUES (%s, %s, %s)"
            " ON CONFLICT (run_id, call_id) DO NOTHING",
            (run_id, call_id, result),
        )
        return changed == 1

    def keep_result(self, run_id: str, call_id: str, result: bytes) -> Awaitable[object]:
        return asyncio.ensure_future(self.record_result(run_id, call_id, result))

    async def finish(self, run_id: str, status: str, now: float) -> None:
        await self._write(
            "UPDATE runs SET status = %s, updated = %s, holder = '', handoff = '',"
            " bytes = octet_length(start) + (SELECT COALESCE(SUM(octet_length(event)), 0)"
            " FROM events WHERE events.run_id = runs.run_id) WHERE run_id = %s",
            (status, now, run_id),
        )

    async def load(self, run_id: str, after_seq: int = 0) -> JournaledRun | None:
        async with self.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT start, owner, session_id, status, holder, lease_until FROM runs"
                " WHERE run_id = %s",
                (run_id,),
            )
            row = await cur.fetchone()
            if row is None:
                return None
            cur = await conn.execute(
                "SELECT seq, event FROM events WHERE run_id = %s AND seq > %s ORDER BY seq",
                (run_id, after_seq),
            )
            events = await cur.fetchall()
            cur = await conn.execute(
                "SELECT call_id, result FROM results WHERE run_id = %s", (run_id,)
            )
            results = await cur.fetchall()
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

    async def claim(self, run_id: str, holder: str, now: float) -> bool:
        changed = await self._write(
            "UPDATE runs SET holder = %s, lease_until = %s, handoff = '' WHERE run_id = %s"
            " AND status = %s AND (holder = '' OR holder = %s OR lease_until < %s)",
            (holder, now + LEASE_S, run_id, RUNNING, holder, now),
        )
        return changed == 1

    async def renew(self, holder: str, now: float) -> list[str]:
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "UPDATE runs SET lease_until = %s WHERE holder = %s AND status = %s"
                " RETURNING run_id, handoff",
                (now + LEASE_S, holder, RUNNING),
            )
            rows = await cur.fetchall()
        return sorted(run_id for run_id, handoff in rows if handoff != "")

    async def abandon(self, now: float, grace_s: float, event: bytes) -> list[str]:
        async with self.pool.connection() as conn, conn.transaction():
            # The row lock of the UPDATE decides between replicas that try
            # at once: the second finds the status changed and skips it.
            cur = await conn.execute(
                "UPDATE runs SET status = %s, updated = %s, holder = '', handoff = ''"
                " WHERE status = %s AND lease_until < %s RETURNING run_id",
                (ABANDONED, now, RUNNING, now - grace_s),
            )
            ended = sorted(r[0] for r in await cur.fetchall())
            for run_id in ended:
                await conn.execute(
                    "INSERT INTO events (run_id, seq, event) SELECT %s,"
                    " COALESCE(MAX(seq), 0) + 1, %s FROM events WHERE run_id = %s",
                    (run_id, event, run_id),
                )
                await conn.execute(
                    "UPDATE runs SET bytes = octet_length(start) + (SELECT"
                    " COALESCE(SUM(octet_length(event)), 0) FROM events"
                    " WHERE events.run_id = runs.run_id) WHERE run_id = %s",
                    (run_id,),
                )
        return ended

    async def disown(self, holder: str) -> int:
        return await self._write(
            "UPDATE runs SET holder = '', handoff = '' WHERE holder = %s AND status = %s",
            (holder, RUNNING),
        )

    async def request_handoff(self, run_id: str, holder: str) -> None:
        await self._write("UPDATE runs SET handoff = %s WHERE run_id = %s", (holder, run_id))

    async def release(self, run_id: str, holder: str) -> None:
        # The lease's end stays: a claim needs only the empty holder, and the
        # reattach grace before `abandon` counts from there.
        await self._write(
            "UPDATE runs SET holder = '' WHERE run_id = %s AND holder = %s",
            (run_id, holder),
        )

    async def save_session(
        self, session_id: str, owner: str, transcript: bytes, now: float
    ) -> None:
        await self._write(
            "INSERT INTO sessions (session_id, owner, transcript, updated)"
            " VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner,"
            " transcript = EXCLUDED.transcript, updated = EXCLUDED.updated",
            (session_id, owner, transcript, now),
        )

    async def load_session(self, session_id: str) -> tuple[str, bytes] | None:
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT owner, transcript FROM sessions WHERE session_id = %s", (session_id,)
            )
            row = await cur.fetchone()
        return (row[0], bytes(row[1])) if row else None

    async def prune(self, now: float, max_age_s: float, max_bytes: int) -> int:
        async with self.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT run_id, bytes FROM runs WHERE updated < %s"
                " AND (status != %s OR lease_until < %s)",
                (now - max_age_s, RUNNING, now),
            )
            doomed: dict[str, int] = {run_id: size for run_id, size in await cur.fetchall()}
            cur = await conn.execute(
                "SELECT COALESCE(SUM(CASE WHEN status = %s THEN octet_length(start) + ("
                "SELECT COALESCE(SUM(octet_length(event)), 0) FROM events"
                " WHERE events.run_id = runs.run_id) ELSE bytes END), 0) FROM runs",
                (RUNNING,),
            )
            total_row = await cur.fetchone()
            assert total_row is not None
            # What stays once the runs too old are gone.
            total = int(total_row[0]) - sum(doomed.values())
            if max_bytes and total > max_bytes:
                cur = await conn.execute(
                    "SELECT run_id, bytes FROM runs WHERE status != %s ORDER BY updated, run_id",
                    (RUNNING,),
                )
                for run_id, size in await cur.fetchall():
                    if total <= max_bytes:
                        break
                    if run_id not in doomed:
                        doomed[run_id] = size
                        total -= size
            if doomed:
                # The condition again: a replica may have claimed an
                # abandoned run since the SELECT (ended runs stay ended).
                cur = await conn.execute(
                    "DELETE FROM runs WHERE run_id = ANY(%s) AND (status != %s OR lease_until < %s)"
                    " RETURNING run_id",
                    (list(doomed), RUNNING, now),
                )
                gone = [r[0] for r in await cur.fetchall()]
                await conn.execute("DELETE FROM events WHERE run_id = ANY(%s)", (gone,))
                await conn.execute("DELETE FROM results WHERE run_id = ANY(%s)", (gone,))
            else:
                gone = []
            await conn.execute("DELETE FROM sessions WHERE updated < %s", (now - max_age_s,))
        return len(gone)
