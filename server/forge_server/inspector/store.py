"""The inspector's reads of the run journal: pages of runs and a run's events.

It reads the journal's own tables (journal/sqlite.py, journal/postgres.py)
and never writes a run: SQLite through a connection of its own on a thread
of its own (a slow page must not hold up the journal's commits), PostgreSQL
through the journal's pool.

Pages are keyset-paginated on (created, run_id), newest first, over indexes
the inspector adds when it opens (`inspector_runs_by_*`): a page costs the
same at the 100,000th run as at the first. A search is a substring of the
run id or of the run's start message (workflow name, session, labels),
scanned newest first until a page is full; the caller keeps the rows whose
decoded fields match (the start also holds tools and the user's message).
"""

from __future__ import annotations

import asyncio
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from forge_server.journal import Journal

# "abandoned": its server died and no client came back (the journal ends it).
STATUSES = ("running", "completed", "failed", "abandoned")

_INDEXES = [
    "CREATE INDEX IF NOT EXISTS inspector_runs_by_created ON runs (created, run_id)",
    "CREATE INDEX IF NOT EXISTS inspector_runs_by_owner ON runs (owner, created, run_id)",
    "CREATE INDEX IF NOT EXISTS inspector_runs_by_status ON runs (status, created, run_id)",
]


@dataclass(frozen=True)
class Query:
    # "" : any.
    status: str = ""
    search: str = ""
    # None: every caller's runs (no auth, or an admin token).
    owner: str | None = None
    # Keyset cursor: the last row of the previous page; None: the newest.
    before: tuple[float, str] | None = None
    limit: int = 50


@dataclass
class RunRow:
    run_id: str
    start: bytes
    owner: str
    session_id: str
    status: str
    created: float
    updated: float
    lease_until: float
    # The run's last event (its outcome once it ended); b"" when none.
    last_event: bytes = b""


@dataclass
class Page:
    rows: list[RunRow]
    # Where the next page starts (the last row scanned); None: no more.
    next_before: tuple[float, str] | None = None


@dataclass
class RunEvents:
    row: RunRow
    # (seq, RunResponse bytes) after the asked seq, in order.
    events: list[tuple[int, bytes]] = field(default_factory=list)
    # AnswerKey.decision(call id).stored() -> ApprovalDecision bytes.
    approvals: dict[str, bytes] = field(default_factory=dict)


class RunStore(Protocol):
    async def open(self) -> None: ...

    async def aclose(self) -> None: ...

    async def page(self, query: Query) -> Page: ...

    async def run(self, run_id: str, after_seq: int = 0) -> RunEvents | None: ...


def _where(query: Query, p: str, search: str) -> tuple[str, list[Any]]:
    """The WHERE clause (without the keyword) and its parameters; `p` is the
    driver's placeholder, `search` the store's test of a run against the
    search text (its placeholders take the text twice: as is, lowercased)."""
    clauses: list[str] = []
    params: list[Any] = []
    if query.owner is not None:
        clauses.append(f"owner = {p}")
        params.append(query.owner)
    if query.status:
        clauses.append(f"status = {p}")
        params.append(query.status)
    if query.before is not None:
        created, run_id = query.before
        # A row value: SQLite and PostgreSQL seek the index to it (the
        # equivalent OR scans the index from the top: 6 ms at run 50,000).
        clauses.append(f"(created, run_id) < ({p}, {p})")
        params += [created, run_id]
    if query.search:
        clauses.append(search)
        params += [query.search, query.search.lower()]
    return " AND ".join(clauses) or "1 = 1", params


_COLUMNS = "run_id, start, owner, session_id, status, created, updated, lease_until"


def _row(r: tuple[Any, ...]) -> RunRow:
    return RunRow(r[0], bytes(r[1]), r[2], r[3], r[4], r[5], r[6], r[7])


# The inspector's own table: each run's searchable words (workflow, session,
# labels; lowercased), decoded once from its start message, so a search
# reads 100,000 short strings instead of 100,000 start messages. Rows of
# pruned runs are dropped when the inspector opens.
_TERMS = [
    "CREATE TABLE IF NOT EXISTS inspector_terms (run_id TEXT PRIMARY KEY,"
    " created REAL NOT NULL, terms TEXT NOT NULL) WITHOUT ROWID",
    "DELETE FROM inspector_terms WHERE run_id NOT IN (SELECT run_id FROM runs)",
]
# Runs are looked for this far behind the newest one already read: replicas'
# clocks differ, so a run may arrive with an older `created`.
TERMS_SLACK_S = 120.0
TERMS_BATCH = 5000
# pg_advisory_xact_lock key for the inspector's schema: "forgeins".
_PG_LOCK = int.from_bytes(b"forgeins", "big", signed=True)


def search_terms(start: bytes) -> str:
    from forge.v1 import forge_service_pb2 as pb

    msg = pb.StartRun.FromString(start)
    labels = " ".join(f"{k}={v}" for k, v in msg.labels.items())
    return f"{msg.workflow.name} {msg.session_id} {labels}".lower()


class SqliteStore:
    """Reads a SQLite journal file through a connection of its own."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="forge-inspector")
        # The newest `created` whose run's terms are in inspector_terms.
        self._terms_mark = float("-inf")

    async def _call(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    async def open(self) -> None:
        def connect() -> None:
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA busy_timeout=5000")
            for sql in _INDEXES + _TERMS:
                db.execute(sql)
            self._db = db
            self._read_terms()

        await self._call(connect)

    def _read_terms(self) -> None:
        """Add the search terms of the runs started since the last look, a
        batch per transaction (the journal's writers wait for each)."""
        db = self.db
        if self._terms_mark == float("-inf"):
            (newest,) = db.execute("SELECT MAX(created) FROM inspector_terms").fetchone()
            self._terms_mark = float("-inf") if newest is None else newest
        while True:
            rows = db.execute(
                "SELECT run_id, created, start FROM runs WHERE created >= ? AND NOT EXISTS"
                " (SELECT 1 FROM inspector_terms t WHERE t.run_id = runs.run_id)"
                " ORDER BY created LIMIT ?",
                (self._terms_mark - TERMS_SLACK_S, TERMS_BATCH),
            ).fetchall()
            if not rows:
                return
            with db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany(
                    "INSERT OR IGNORE INTO inspector_terms (run_id, created, terms)"
                    " VALUES (?, ?, ?)",
                    [(r[0], r[1], search_terms(bytes(r[2]))) for r in rows],
                )
                db.execute("COMMIT")
            self._terms_mark = max(self._terms_mark, rows[-1][1])
            if len(rows) < TERMS_BATCH:
                return

    async def aclose(self) -> None:
        if self._db is not None:
            await self._call(self._db.close)
            self._db = None
        self._thread.shutdown(wait=False)

    @property
    def db(self) -> sqlite3.Connection:
        assert self._db is not None, "inspector store not opened"
        return self._db

    async def page(self, query: Query) -> Page:
        found: Page = await self._call(self._page, query)
        return found

    def _page(self, query: Query) -> Page:
        if query.search:
            self._read_terms()
        where, params = _where(
            query,
            "?",
            "(instr(run_id, ?) > 0 OR run_id IN"
            " (SELECT run_id FROM inspector_terms WHERE instr(terms, ?) > 0))",
        )
        rows = [
            _row(r)
            for r in self.db.execute(
                f"SELECT {_COLUMNS} FROM runs WHERE {where}"
                " ORDER BY created DESC, run_id DESC LIMIT ?",
                [*params, query.limit + 1],
            )
        ]
        more = len(rows) > query.limit
        rows = rows[: query.limit]
        for row in rows:
            last = self.db.execute(
                "SELECT event FROM events WHERE run_id = ? ORDER BY seq DESC LIMIT 1",
                (row.run_id,),
            ).fetchone()
            row.last_event = bytes(last[0]) if last else b""
        return Page(rows, (rows[-1].created, rows[-1].run_id) if more and rows else None)

    async def run(self, run_id: str, after_seq: int = 0) -> RunEvents | None:
        found: RunEvents | None = await self._call(self._run, run_id, after_seq)
        return found

    def _run(self, run_id: str, after_seq: int) -> RunEvents | None:
        r = self.db.execute(f"SELECT {_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if r is None:
            return None
        events = self.db.execute(
            "SELECT seq, event FROM events WHERE run_id = ? AND seq > ? ORDER BY seq",
            (run_id, after_seq),
        ).fetchall()
        approvals = self.db.execute(
            "SELECT call_id, result FROM results WHERE run_id = ? AND call_id LIKE 'approval:%'",
            (run_id,),
        ).fetchall()
        return RunEvents(
            _row(r),
            [(seq, bytes(e)) for seq, e in events],
            {k: bytes(v) for k, v in approvals},
        )


class PostgresStore:
    """Reads a PostgreSQL journal through the journal's own pool."""

    def __init__(self, journal: Any) -> None:
        self.journal = journal
        self._terms_mark = float("-inf")

    async def open(self) -> None:
        async with self.journal.pool.connection() as conn:
            # Replicas opening at once would race CREATE ... IF NOT EXISTS.
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK,))
                for sql in _INDEXES:
                    await conn.execute(sql)
                await conn.execute(
                    "CREATE TABLE IF NOT EXISTS inspector_terms (run_id TEXT PRIMARY KEY,"
                    " created DOUBLE PRECISION NOT NULL, terms TEXT NOT NULL)"
                )
                await conn.execute(_TERMS[1])
            await self._read_terms(conn)

    async def _read_terms(self, conn: Any) -> None:
        """SqliteStore._read_terms."""
        if self._terms_mark == float("-inf"):
            cur = await conn.execute("SELECT MAX(created) FROM inspector_terms")
            (newest,) = await cur.fetchone()
            self._terms_mark = float("-inf") if newest is None else newest
        while True:
            cur = await conn.execute(
                "SELECT run_id, created, start FROM runs WHERE created >= %s AND NOT EXISTS"
                " (SELECT 1 FROM inspector_terms t WHERE t.run_id = runs.run_id)"
                " ORDER BY created LIMIT %s",
                (self._terms_mark - TERMS_SLACK_S, TERMS_BATCH),
            )
            rows = await cur.fetchall()
            if not rows:
                return
            async with conn.cursor() as many:
                await many.executemany(
                    "INSERT INTO inspector_terms (run_id, created, terms) VALUES (%s, %s, %s)"
                    " ON CONFLICT (run_id) DO NOTHING",
                    [(r[0], r[1], search_terms(bytes(r[2]))) for r in rows],
                )
            self._terms_mark = max(self._terms_mark, rows[-1][1])
            if len(rows) < TERMS_BATCH:
                return

    async def aclose(self) -> None:
        return None

    async def page(self, query: Query) -> Page:
        where, params = _where(
            query,
            "%s",
            "(position(%s in run_id) > 0 OR run_id IN"
            " (SELECT run_id FROM inspector_terms WHERE position(%s in terms) > 0))",
        )
        async with self.journal.pool.connection() as conn:
            if query.search:
                await self._read_terms(conn)
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM runs WHERE {where}"
                " ORDER BY created DESC, run_id DESC LIMIT %s",
                [*params, query.limit + 1],
            )
            rows = [_row(r) for r in await cur.fetchall()]
            more = len(rows) > query.limit
            rows = rows[: query.limit]
            if rows:
                cur = await conn.execute(
                    "SELECT DISTINCT ON (run_id) run_id, event FROM events"
                    " WHERE run_id = ANY(%s) ORDER BY run_id, seq DESC",
                    ([row.run_id for row in rows],),
                )
                last = {run_id: bytes(event) for run_id, event in await cur.fetchall()}
                for row in rows:
                    row.last_event = last.get(row.run_id, b"")
        return Page(rows, (rows[-1].created, rows[-1].run_id) if more and rows else None)

    async def run(self, run_id: str, after_seq: int = 0) -> RunEvents | None:
        async with self.journal.pool.connection() as conn:
            cur = await conn.execute(f"SELECT {_COLUMNS} FROM runs WHERE run_id = %s", (run_id,))
            r = await cur.fetchone()
            if r is None:
                return None
            cur = await conn.execute(
                "SELECT seq, event FROM events WHERE run_id = %s AND seq > %s ORDER BY seq",
                (run_id, after_seq),
            )
            events = [(seq, bytes(e)) for seq, e in await cur.fetchall()]
            cur = await conn.execute(
                "SELECT call_id, result FROM results WHERE run_id = %s"
                " AND call_id LIKE 'approval:%%'",
                (run_id,),
            )
            approvals = {k: bytes(v) for k, v in await cur.fetchall()}
        return RunEvents(_row(r), events, approvals)


def open_store(journal: Journal) -> RunStore:
    """The store that reads `journal` (not opened yet)."""
    from forge_server.journal.sqlite import SqliteJournal

    if isinstance(journal, SqliteJournal):
        return SqliteStore(journal.path)
    return PostgresStore(journal)
