"""The run journal (forge_server/journal): one suite, run against the SQLite
journal (a file in tmp_path) and the PostgreSQL one (a real server,
tests/postgres.py, a fresh database per test).

Times are explicit `now` values, so the lease rules are checked without
sleeping.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg_pool
import pytest

from forge_server.journal import Journal, JournaledRun, open_journal
from forge_server.journal import postgres as postgres_journal
from forge_server.journal import sqlite as sqlite_journal
from forge_server.journal.base import (
    ABANDONED,
    COMPLETED,
    FAILED,
    LEASE_S,
    RUNNING,
    RunExists,
)
from forge_server.journal.postgres import PostgresJournal, mask_password
from forge_server.journal.sqlite import SqliteJournal

T0 = 1_000_000.0


class Journals:
    """Journal instances on one store (what several servers, or a restarted
    one, open); all closed at the end of the test."""

    def __init__(self, kind: str, url: str) -> None:
        self.kind = kind
        self.url = url
        self.opened: list[Journal] = []

    async def open(self) -> Journal:
        journal = open_journal(self.url)
        assert journal is not None
        await journal.open()
        self.opened.append(journal)
        return journal

    async def close_all(self) -> None:
        for journal in self.opened:
            await journal.aclose()


@pytest.fixture(params=["sqlite", "postgres"])
async def journals(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Journals]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'journal.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    opened = Journals(request.param, url)
    try:
        yield opened
    finally:
        await opened.close_all()


@pytest.fixture
async def journal(journals: Journals) -> Journal:
    return await journals.open()


async def load(journal: Journal, run_id: str, after_seq: int = 0) -> JournaledRun:
    run = await journal.load(run_id, after_seq)
    assert run is not None, f"run {run_id} not in the journal"
    return run


async def test_open_journal_picks_the_implementation(journals: Journals) -> None:
    journal = await journals.open()
    expected = SqliteJournal if journals.kind == "sqlite" else PostgresJournal
    assert isinstance(journal, expected)
    assert journal.url == journals.url


async def test_create_append_load(journal: Journal) -> None:
    # Binary payloads: NUL bytes and invalid UTF-8 survive BLOB / BYTEA.
    start = b"\x00start\xff\xfe"
    await journal.create_run("r1", start, "alice", "s1", "h1", now=T0)
    await journal.create_run("r2", b"other", "bob", "", "h2", now=T0 + 1)
    assert await journal.load("r1") == JournaledRun(
        "r1", start, "alice", "s1", RUNNING, "h1", T0 + LEASE_S, [], {}
    )

    # Written out of order: load returns them by seq, not as stored.
    await journal.append("r1", 1, b"e1\x00", 3)
    await journal.append("r1", 3, b"e3", 2)
    await journal.append("r1", 2, b"e2", 2)
    await journal.append("r2", 1, b"r2-e1", 5)

    run = await load(journal, "r1")
    assert run.events == [(1, b"e1\x00"), (2, b"e2"), (3, b"e3")]
    assert (await load(journal, "r1", after_seq=1)).events == [(2, b"e2"), (3, b"e3")]
    assert (await load(journal, "r1", after_seq=2)).events == [(3, b"e3")]
    assert (await load(journal, "r1", after_seq=3)).events == []
    assert (await load(journal, "r2")).events == [(1, b"r2-e1")]
    assert await journal.load("missing") is None

    # Many, written newest first.
    for seq in range(40, 3, -1):
        await journal.append("r1", seq, f"e{seq}".encode(), 3)
    assert [seq for seq, _ in (await load(journal, "r1", after_seq=2)).events] == list(range(3, 41))


async def test_record_result_counts_once(journal: Journal) -> None:
    await journal.create_run("r1", b"s", "", "", "h1", now=T0)
    await journal.create_run("r2", b"s", "", "", "h1", now=T0)
    assert await journal.record_result("r1", "call-1", b"first") is True
    assert await journal.record_result("r1", "call-1", b"second") is False
    assert await journal.record_result("r1", "approval:call-1", b"approved") is True
    # Keyed by run: the same call id in another run is another result.
    assert await journal.record_result("r2", "call-1", b"r2's") is True
    assert (await load(journal, "r1")).results == {
        "call-1": b"first",
        "approval:call-1": b"approved",
    }
    assert (await load(journal, "r2")).results == {"call-1": b"r2's"}


async def test_concurrent_results_for_one_call_count_once(journals: Journals) -> None:
    a, b = await journals.open(), await journals.open()
    await a.create_run("r1", b"s", "", "", "h1", now=T0)
    payloads = [f"result-{i}".encode() for i in range(8)]
    recorded = await asyncio.gather(
        *(
            (a if i % 2 else b).record_result("r1", "call-1", payload)
            for i, payload in enumerate(payloads)
        )
    )
    assert recorded.count(True) == 1
    kept = payloads[recorded.index(True)]
    assert (await load(a, "r1")).results == {"call-1": kept}


async def test_finish(journal: Journal) -> None:
    await journal.create_run("r1", b"s", "", "", "h1", now=T0)
    await journal.create_run("r2", b"s", "", "", "h1", now=T0)
    await journal.finish("r1", COMPLETED, T0 + 5)
    await journal.finish("r2", FAILED, T0 + 6)
    r1, r2 = await load(journal, "r1"), await load(journal, "r2")
    assert (r1.status, r1.holder) == (COMPLETED, "")
    assert (r2.status, r2.holder) == (FAILED, "")
    # An ended run is nobody's to take: not its last holder's, not after
    # its lease.
    assert await journal.claim("r1", "h1", T0 + 6) is False
    assert await journal.claim("r1", "h2", T0 + 1000) is False
    assert (await load(journal, "r1")).holder == ""
    # Nor renewed.
    assert await journal.renew("h1", T0 + 7) == []
    assert (await load(journal, "r1")).lease_until == T0 + LEASE_S


async def test_claim_rules(journal: Journal) -> None:
    await journal.create_run("r1", b"s", "", "", "", now=T0)

    # No holder: the first claim wins, the lease starts now.
    assert await journal.claim("r1", "A", T0 + 1)
    run = await load(journal, "r1")
    assert (run.holder, run.lease_until) == ("A", T0 + 1 + LEASE_S)

    # The holder again: still ours, the lease starts again.
    assert await journal.claim("r1", "A", T0 + 5)
    assert (await load(journal, "r1")).lease_until == T0 + 5 + LEASE_S

    # Another holder while the lease is valid: refused, nothing changes.
    assert await journal.claim("r1", "B", T0 + 6) is False
    assert await journal.claim("r1", "B", T0 + 5 + LEASE_S - 0.5) is False
    run = await load(journal, "r1")
    assert (run.holder, run.lease_until) == ("A", T0 + 5 + LEASE_S)

    # The lease expired (A died): B takes it over, and A has lost it.
    later = T0 + 5 + LEASE_S + 0.5
    assert await journal.claim("r1", "B", later)
    run = await load(journal, "r1")
    assert (run.holder, run.lease_until) == ("B", later + LEASE_S)
    assert await journal.claim("r1", "A", later + 1) is False
    assert (await load(journal, "r1")).holder == "B"

    assert await journal.claim("missing", "A", T0) is False


async def test_renew(journal: Journal) -> None:
    for run_id, holder in (("a1", "A"), ("a2", "A"), ("b1", "B"), ("a-done", "A")):
        await journal.create_run(run_id, b"s", "", "", holder, now=T0)
    await journal.finish("a-done", COMPLETED, T0 + 1)

    assert await journal.renew("A", T0 + 5) == []
    leases = {r: (await load(journal, r)).lease_until for r in ("a1", "a2", "b1", "a-done")}
    assert leases == {
        "a1": T0 + 5 + LEASE_S,
        "a2": T0 + 5 + LEASE_S,
        "b1": T0 + LEASE_S,  # B's: untouched
        "a-done": T0 + LEASE_S,  # ended: untouched
    }

    # Another replica asks for a2: A's next renewal reports it, and still
    # extends it (A holds it until it releases it).
    await journal.request_handoff("a2", "B")
    assert await journal.renew("A", T0 + 8) == ["a2"]
    assert (await load(journal, "a2")).lease_until == T0 + 8 + LEASE_S
    assert (await load(journal, "a2")).holder == "A"
    assert await journal.renew("B", T0 + 8) == []
    assert await journal.renew("nobody", T0 + 8) == []


async def test_handoff(journal: Journal) -> None:
    await journal.create_run("r1", b"s", "", "", "A", now=T0)
    # B's client reattached there: A's lease is valid, so B cannot claim...
    assert await journal.claim("r1", "B", T0 + 1) is False
    # ...and asks A for it.
    await journal.request_handoff("r1", "B")
    assert await journal.renew("A", T0 + 2) == ["r1"]

    # Only the holder can release.
    await journal.release("r1", "B")
    assert (await load(journal, "r1")).holder == "A"
    assert await journal.claim("r1", "C", T0 + 3) is False

    await journal.release("r1", "A")
    run = await load(journal, "r1")
    # The lease's end stays (abandon counts the reattach grace from it).
    assert (run.holder, run.lease_until) == ("", T0 + 2 + LEASE_S)
    # Released: B's claim succeeds at once, though A's lease would have run
    # until T0 + 2 + LEASE_S.
    assert await journal.claim("r1", "B", T0 + 3)
    assert (await load(journal, "r1")).holder == "B"
    # The claim answered the request: nothing to hand off any more, and A's
    # renewals no longer touch the run.
    assert await journal.renew("B", T0 + 4) == []
    assert await journal.renew("A", T0 + 5) == []
    assert (await load(journal, "r1")).lease_until == T0 + 4 + LEASE_S


async def test_abandon_ends_runs_nobody_held_for_the_grace(journal: Journal) -> None:
    """A running run whose lease ran out more than the grace ago is ended
    ABANDONED with the given event after its own; a run within its grace
    (a released one counts from its lease's end), one renewed and one that
    ended are left as they are."""
    grace = 60.0
    await journal.create_run("dead", b"s", "", "", "h1", now=T0)  # lease: T0 + 10
    await journal.append("dead", 1, b"e1", 2)
    await journal.append("dead", 2, b"e2", 2)
    await journal.create_run("released", b"s", "", "", "h2", now=T0)
    await journal.renew("h2", T0 + 50)
    await journal.release("released", "h2")  # handed over: lease end T0 + 60
    await journal.create_run("live", b"s", "", "", "h3", now=T0)
    await journal.create_run("done", b"s", "", "", "h3", now=T0)
    await journal.finish("done", COMPLETED, T0 + 1)

    t1 = T0 + LEASE_S + grace + 1
    await journal.renew("h3", t1)
    assert await journal.abandon(t1, grace, b"gone") == ["dead"]
    dead = await load(journal, "dead")
    assert (dead.status, dead.holder) == (ABANDONED, "")
    assert dead.events == [(1, b"e1"), (2, b"e2"), (3, b"gone")]
    assert await journal.claim("dead", "h4", t1) is False
    assert (await load(journal, "released")).status == RUNNING

    t2 = T0 + 50 + LEASE_S + grace + 1
    await journal.renew("h3", t2)
    assert await journal.abandon(t2, grace, b"gone") == ["released"]
    released = await load(journal, "released")
    assert (released.status, released.events) == (ABANDONED, [(1, b"gone")])
    assert (await load(journal, "live")).status == RUNNING
    assert (await load(journal, "done")).status == COMPLETED
    # Each run is ended once.
    assert await journal.abandon(t2, grace, b"gone") == []


async def test_abandon_leaves_a_renewed_run(journal: Journal) -> None:
    await journal.create_run("r1", b"s", "", "", "A", now=T0)
    grace = 5.0
    for t in range(1, 200, 3):
        await journal.renew("A", T0 + t)
        assert await journal.abandon(T0 + t, grace, b"gone") == []
    assert (await load(journal, "r1")).status == RUNNING


async def test_two_replicas_abandon_each_run_once(journals: Journals) -> None:
    a, b = await journals.open(), await journals.open()
    runs = [f"r{i}" for i in range(10)]
    for run_id in runs:
        await a.create_run(run_id, b"s", "", "", "dead", now=T0)
    later = T0 + LEASE_S + 61
    ended = await asyncio.gather(a.abandon(later, 60, b"gone"), b.abandon(later, 60, b"gone"))
    assert sorted(ended[0] + ended[1]) == runs
    for run_id in runs:
        assert [e for _, e in (await load(a, run_id)).events] == [b"gone"]


async def test_disown_lets_go_of_a_dead_processes_runs(journal: Journal) -> None:
    """A server restarted under the same replica id renews what it holds:
    without disown, the dead process's runs would be renewed forever."""
    await journal.create_run("mine", b"s", "", "", "pod-0", now=T0)
    await journal.create_run("other", b"s", "", "", "pod-1", now=T0)
    await journal.create_run("ended", b"s", "", "", "pod-0", now=T0)
    await journal.finish("ended", COMPLETED, T0)
    assert await journal.disown("pod-0") == 1
    assert (await load(journal, "mine")).holder == ""
    assert (await load(journal, "other")).holder == "pod-1"
    await journal.renew("pod-0", T0 + 5)
    assert (await load(journal, "mine")).lease_until == T0 + LEASE_S
    # A reattaching client's claim takes it back at once.
    assert await journal.claim("mine", "pod-0", T0 + 5)


async def test_sessions(journal: Journal) -> None:
    assert await journal.load_session("s1") is None
    await journal.save_session("s1", "alice", b"transcript-1", T0)
    await journal.save_session("s2", "bob", b"other", T0)
    assert await journal.load_session("s1") == ("alice", b"transcript-1")
    # The next completed run's transcript replaces it.
    await journal.save_session("s1", "carol", b"transcript-2\x00\xff", T0 + 1)
    assert await journal.load_session("s1") == ("carol", b"transcript-2\x00\xff")
    assert await journal.load_session("s2") == ("bob", b"other")


async def test_prune_by_age(journal: Journal) -> None:
    now, max_age = T0 + 10_000, 1_000.0
    old = T0  # well before now - max_age
    await journal.create_run("old-done", b"s", "", "", "A", now=old)
    await journal.append("old-done", 1, b"e1", 2)
    assert await journal.record_result("old-done", "call-1", b"r")
    await journal.finish("old-done", COMPLETED, old + 1)
    await journal.create_run("old-failed", b"s", "", "", "A", now=old)
    await journal.finish("old-failed", FAILED, old + 2)
    # Abandoned: still "running", its holder's lease long expired.
    await journal.create_run("old-abandoned", b"s", "", "", "dead", now=old)
    # Old but alive: its holder renews the lease.
    await journal.create_run("old-live", b"s", "", "", "A", now=old)
    assert await journal.renew("A", now - 1) == []
    await journal.create_run("recent-done", b"s", "", "", "A", now=now - 50)
    await journal.finish("recent-done", COMPLETED, now - 10)
    await journal.create_run("recent-stalled", b"s", "", "", "dead", now=now - 100)
    await journal.save_session("s-old", "", b"t", old)
    await journal.save_session("s-new", "", b"t", now - 10)

    assert await journal.prune(now, max_age, 0) == 3
    remaining = {
        r
        for r in (
            "old-done",
            "old-failed",
            "old-abandoned",
            "old-live",
            "recent-done",
            "recent-stalled",
        )
        if await journal.load(r) is not None
    }
    assert remaining == {"old-live", "recent-done", "recent-stalled"}
    assert await journal.load_session("s-old") is None
    assert await journal.load_session("s-new") == ("", b"t")

    # Its events and results went with it: a new run under the same id
    # starts empty.
    await journal.create_run("old-done", b"s", "", "", "A", now=now)
    assert (await load(journal, "old-done")).events == []
    assert (await load(journal, "old-done")).results == {}
    assert await journal.record_result("old-done", "call-1", b"new")

    assert await journal.prune(now, max_age, 0) == 0


async def _sized_run(
    journal: Journal, run_id: str, size: int, created: float, ended: float | None
) -> None:
    """A run holding `size` bytes (its start request included)."""
    await journal.create_run(run_id, b"s", "", "", "A", now=created)
    await journal.append(run_id, 1, b"e" * (size - 1), size - 1)
    if ended is not None:
        await journal.finish(run_id, COMPLETED, ended)


async def test_prune_by_size_oldest_ended_first(journal: Journal) -> None:
    now, no_age_limit = T0 + 100, 1e9
    # Created in one order, ended in the other: "oldest" is by when it ended.
    await _sized_run(journal, "c", 100, created=T0, ended=T0 + 7)
    await _sized_run(journal, "b", 100, created=T0 + 1, ended=T0 + 6)
    await _sized_run(journal, "a", 100, created=T0 + 2, ended=T0 + 5)
    await _sized_run(journal, "live", 100, created=T0 + 3, ended=None)
    assert await journal.renew("A", now) == []

    # 400 bytes; no limit (0) prunes nothing.
    assert await journal.prune(now, no_age_limit, 0) == 0
    assert await journal.prune(now, no_age_limit, 400) == 0
    # 250: a and b go (400 -> 300 -> 200), c stays.
    assert await journal.prune(now, no_age_limit, 250) == 2
    assert [r for r in ("a", "b", "c", "live") if await journal.load(r)] == ["c", "live"]
    # 50: c goes; the running run stays even though it alone is over.
    assert await journal.prune(now, no_age_limit, 50) == 1
    assert await journal.load("c") is None
    assert (await load(journal, "live")).events == [(1, b"e" * 99)]


async def test_prune_by_size_counts_what_age_pruning_removed(journals: Journals) -> None:
    journal = await journals.open()
    now, max_age = T0 + 10_000, 1_000.0
    await _sized_run(journal, "old", 100, created=T0, ended=T0 + 1)
    await _sized_run(journal, "recent", 100, created=now - 20, ended=now - 10)
    await _sized_run(journal, "live", 50, created=now - 20, ended=None)
    # 250 bytes; without "old" (too old) 150, under the 200 limit.
    assert await journal.prune(now, max_age, 200) == 1
    assert await journal.load("old") is None
    assert await journal.load("recent") is not None


async def test_a_reopened_journal_has_everything(journals: Journals) -> None:
    first = await journals.open()
    await first.create_run("r1", b"start", "alice", "s1", "A", now=T0)
    await first.append("r1", 1, b"e1", 2)
    await first.append("r1", 2, b"e2", 2)
    assert await first.record_result("r1", "call-1", b"result")
    await first.request_handoff("r1", "B")
    await first.create_run("r2", b"start2", "bob", "", "A", now=T0)
    await first.finish("r2", COMPLETED, T0 + 1)
    await first.save_session("s1", "alice", b"transcript", T0 + 1)
    await first.aclose()

    # What a restarted server sees (open() again on existing tables).
    second = await journals.open()
    assert await second.load("r1") == JournaledRun(
        "r1",
        b"start",
        "alice",
        "s1",
        RUNNING,
        "A",
        T0 + LEASE_S,
        [(1, b"e1"), (2, b"e2")],
        {"call-1": b"result"},
    )
    assert (await load(second, "r2")).status == COMPLETED
    assert await second.load_session("s1") == ("alice", b"transcript")
    assert await second.record_result("r1", "call-1", b"again") is False
    assert await second.renew("A", T0 + 2) == ["r1"]

    # A third, open at the same time, sees the second's writes.
    third = await journals.open()
    await second.append("r1", 3, b"e3", 2)
    assert (await load(third, "r1", after_seq=2)).events == [(3, b"e3")]


async def test_two_replicas_race_claim(journals: Journals) -> None:
    a, b = await journals.open(), await journals.open()
    runs = [f"r{i}" for i in range(20)]
    for run_id in runs:
        await a.create_run(run_id, b"s", "", "", "dead", now=T0)
    later = T0 + 2 * LEASE_S  # the dead holder's leases expired

    claims = await asyncio.gather(
        *(
            journal.claim(run_id, name, later)
            for run_id in runs
            for journal, name in ((a, "A"), (b, "B"))
        )
    )
    for i, run_id in enumerate(runs):
        won_a, won_b = claims[2 * i], claims[2 * i + 1]
        assert won_a != won_b, f"{run_id}: A {won_a}, B {won_b}"
        assert (await load(b, run_id)).holder == ("A" if won_a else "B")


async def test_replicas_open_at_once(journals: Journals) -> None:
    """Several servers starting together on a new store all create (or
    find) the schema."""
    opened = await asyncio.gather(*(journals.open() for _ in range(4)))
    await opened[0].create_run("r1", b"s", "", "", "A", now=T0)
    for journal in opened:
        assert (await load(journal, "r1")).holder == "A"


def test_postgres_url_hides_the_password() -> None:
    assert (
        PostgresJournal("postgresql://forge:s3cret@db.example:5432/forge").url
        == "postgresql://forge:***@db.example:5432/forge"
    )
    assert (
        mask_password("postgres://u:p%40ss@h1:5432,h2:5433/db?sslmode=require&password=x&a=b")
        == "postgres://u:***@h1:5432,h2:5433/db?sslmode=require&password=***&a=b"
    )
    assert mask_password("postgresql://forge@localhost/forge") == (
        "postgresql://forge@localhost/forge"
    )
    assert mask_password("postgresql:///forge?host=/run/pg") == "postgresql:///forge?host=/run/pg"
    # Unencoded "@" and ":" in the password: up to the authority's last "@".
    assert mask_password("postgresql://u:p@ss:w@host/db") == "postgresql://u:***@host/db"


async def test_postgres_journal_with_a_password_in_its_url(postgres_url: str) -> None:
    # Trust authentication ignores the password; the URL keeps it to connect.
    url = postgres_url.replace("forge@", "forge:s3cret@", 1)
    journal = PostgresJournal(url)
    assert "s3cret" not in journal.url
    await journal.open()
    try:
        await journal.create_run("r1", b"s", "", "", "A", now=T0)
        assert (await load(journal, "r1")).holder == "A"
    finally:
        await journal.aclose()


async def test_postgres_journal_fails_to_open_without_a_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.postgres import free_port

    monkeypatch.setattr(postgres_journal, "CONNECT_TIMEOUT_S", 1.0)
    journal = PostgresJournal(f"postgresql://forge:s3cret@127.0.0.1:{free_port()}/forge")
    with pytest.raises(psycopg_pool.PoolTimeout) as raised:
        await journal.open()
    assert "s3cret" not in str(raised.value)
    await journal.aclose()


async def test_a_taken_run_id_is_run_exists(journal: Journal) -> None:
    await journal.create_run("dup", b"s", "", "", "A", now=T0)
    with pytest.raises(RunExists):
        await journal.create_run("dup", b"other", "", "", "B", now=T0 + 1)
    assert (await load(journal, "dup")).start == b"s"


async def test_appends_under_way_together_all_commit(journal: Journal) -> None:
    """append() starts the write and returns: a run's events of one turn (and
    other runs') go together, and each completes only once committed."""
    await journal.create_run("r1", b"s", "", "", "h1", now=T0)
    await journal.create_run("r2", b"s", "", "", "h1", now=T0)
    writes = [journal.append("r1", seq, f"e{seq}".encode(), 3) for seq in range(1, 101)]
    writes += [journal.append("r2", seq, b"x", 1) for seq in range(1, 51)]
    await asyncio.gather(*writes)
    assert [seq for seq, _ in (await load(journal, "r1")).events] == list(range(1, 101))
    assert len((await load(journal, "r2")).events) == 50


async def test_a_statement_after_appends_sees_them(journal: Journal) -> None:
    """finish() sums the run's events: asked right after appends that were
    not awaited, it still counts every one of them."""
    await journal.create_run("r1", b"start", "", "", "h1", now=T0)
    writes = [journal.append("r1", seq, b"0123456789", 10) for seq in range(1, 31)]
    if isinstance(journal, SqliteJournal):
        await journal.finish("r1", COMPLETED, T0 + 1)
        await asyncio.gather(*writes)
        sizes = dict(journal.db.execute("SELECT run_id, bytes FROM runs").fetchall())
        assert sizes["r1"] == len(b"start") + 30 * 10
    else:
        await asyncio.gather(*writes)
        await journal.finish("r1", COMPLETED, T0 + 1)
    assert len((await load(journal, "r1")).events) == 30


async def test_one_bad_write_fails_alone(tmp_path: Path) -> None:
    """Writes batched into one commit: a write that cannot be kept (an event
    seq the run already has) fails by itself; the others beside it commit."""
    journal = SqliteJournal(tmp_path / "j.db")
    await journal.open()
    try:
        await journal.create_run("r1", b"s", "", "", "h1", now=T0)
        await journal.append("r1", 1, b"first", 5)
        writes = [
            journal.append("r1", 2, b"e2", 2),
            journal.append("r1", 1, b"again", 5),
            journal.append("r1", 3, b"e3", 2),
        ]
        outcomes = await asyncio.gather(*writes, return_exceptions=True)
        assert isinstance(outcomes[1], sqlite3.IntegrityError)
        assert not isinstance(outcomes[0], Exception)
        assert not isinstance(outcomes[2], Exception)
        assert (await load(journal, "r1")).events == [(1, b"first"), (2, b"e2"), (3, b"e3")]
    finally:
        await journal.aclose()


async def test_events_commit_on_the_loop_without_a_thread_hop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events and results commit on the event loop's connection: no job for
    the journal's thread, and the rows are on disk (another connection reads
    them) by the time each write completes."""
    journal = SqliteJournal(tmp_path / "j.db")
    await journal.open()
    hops: list[object] = []
    submit = journal._in_thread

    def counted(fn: Any, *args: Any) -> asyncio.Future[Any]:
        hops.append(fn)
        return submit(fn, *args)

    monkeypatch.setattr(journal, "_in_thread", counted)
    try:
        await journal.create_run("r1", b"s", "", "", "h1", now=T0)
        await asyncio.gather(*(journal.append("r1", seq, b"e", 1) for seq in range(1, 6)))
        assert await journal.record_result("r1", "c1", b"result")
        assert hops == []
        reader = sqlite3.connect(tmp_path / "j.db")
        try:
            assert reader.execute("SELECT COUNT(*) FROM events").fetchone() == (5,)
            assert reader.execute("SELECT COUNT(*) FROM results").fetchone() == (1,)
        finally:
            reader.close()
    finally:
        await journal.aclose()


async def test_a_locked_journal_sends_writes_to_the_thread_and_the_loop_keeps_running(
    tmp_path: Path,
) -> None:
    """Another writer holds the lock (a second process on the file): the
    loop's connection does not wait for it. The batch goes to the thread,
    which waits; meanwhile the event loop serves everything else, and the
    writes complete in order once the lock is released."""
    journal = SqliteJournal(tmp_path / "j.db")
    await journal.open()
    other = sqlite3.connect(tmp_path / "j.db", isolation_level=None, check_same_thread=False)
    try:
        await journal.create_run("r1", b"s", "", "", "h1", now=T0)
        other.execute("BEGIN IMMEDIATE")
        writes = asyncio.gather(*(journal.append("r1", seq, b"e", 1) for seq in range(1, 4)))
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 20 and not writes.done()
        other.execute("COMMIT")
        await asyncio.wait_for(writes, 10)
        await journal.append("r1", 4, b"e", 1)
        assert [seq for seq, _ in (await load(journal, "r1")).events] == [1, 2, 3, 4]
    finally:
        other.close()
        await journal.aclose()


async def test_the_thread_checkpoints_what_the_loop_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop's connection never checkpoints (that syncs the database
    file); the thread does, every CHECKPOINT_EVERY inline commits."""
    monkeypatch.setattr(sqlite_journal, "CHECKPOINT_EVERY", 4)
    journal = SqliteJournal(tmp_path / "j.db")
    await journal.open()
    checkpoints: list[int] = []
    run_checkpoint = journal._run_checkpoint

    def counted() -> None:
        checkpoints.append(1)
        run_checkpoint()

    monkeypatch.setattr(journal, "_run_checkpoint", counted)
    try:
        await journal.create_run("r1", b"s", "", "", "h1", now=T0)
        seq = 0
        for commits in (4, 8, 12):
            while journal._inline_commits < commits:
                seq += 1
                await journal.append("r1", seq, b"e", 1)
            # A checkpoint syncs the files (tens of ms here): the thread's
            # next job runs after it.
            await journal.load("r1")
        assert len(checkpoints) == 3 and seq == 11  # after commits 4, 8 and 12
    finally:
        await journal.aclose()


async def test_a_result_and_the_events_of_the_next_turn_share_one_commit(
    tmp_path: Path,
) -> None:
    """A client's result is written in the loop turn that reads it, and the
    events its run emits in reply in the next one (where the engine's task
    wakes): both go in one commit, not one each, and the result's write is
    under way before anything is awaited (no task per result)."""
    journal = SqliteJournal(tmp_path / "j.db")
    await journal.open()
    try:
        await journal.create_run("r1", b"s", "", "", "h1", now=T0)
        before = journal._inline_commits
        kept = journal.keep_result("r1", "c1", b"result")
        assert len(journal._group._pending) == 1  # queued at once, no task to start it
        await asyncio.sleep(0)  # the engine's turn
        events = [journal.append("r1", seq, b"e", 1) for seq in (1, 2, 3)]
        await asyncio.gather(kept, *events)
        assert journal._inline_commits - before == 1
        assert (await load(journal, "r1")).results == {"c1": b"result"}
        # Kept once: the same call's result again changes nothing.
        assert await journal.record_result("r1", "c1", b"again") is False
    finally:
        await journal.aclose()
