"""The run inspector's runs list against a journal of 100,000 runs (issue 35).

Builds a SQLite journal with N ended and running runs (each a real StartRun
and ten real RunResponse events, the last one its outcome), serves the
inspector on loopback with uvicorn as `forge-server --ui-port` does, and
times GET requests over HTTP: the first page, a page deep in the list
(keyset cursor), a status filter, a search by workflow name that matches
1 run in 10, a search that matches one run, and a run's page. Goal: the
list answers within 200 ms.

    .venv/bin/python -m bench.inspector_list [--runs 100000] [--requests 30]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from bench._common import percentile, table
from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from forge.v1 import workflow_pb2 as wpb
from forge_server.inspector.app import Inspector, serve_inspector
from forge_server.inspector.store import Query, SqliteStore
from forge_server.journal.sqlite import SqliteJournal

WORKFLOWS = [f"workflow_{i}" for i in range(10)]


def _start(i: int) -> bytes:
    tools = [
        wpb.ToolSpec(
            name=f"tool_{t}",
            description="Look something up in the order system by its id." * 2,
            parameters_json_schema='{"type":"object","properties":{"id":{"type":"string"}}}',
        )
        for t in range(5)
    ]
    workflow = wpb.Workflow(name=WORKFLOWS[i % 10], description="Orders.", tools=tools)
    return pb.StartRun(
        workflow=workflow,
        user_message=f"Where is order {i}?",
        labels={"request": f"req-{i}"},
    ).SerializeToString()


def _events(i: int, failed: bool) -> list[bytes]:
    out = [pb.RunResponse(run_started=pb.RunStarted(run_id=f"r{i}", backend="scripted"))]
    for turn in range(1, 5):
        call = mpb.ToolCall(id=f"c{turn}", name="tool_1", arguments_json='{"id":"A-17"}')
        msg = mpb.Message(role=mpb.ROLE_ASSISTANT, type=mpb.MESSAGE_TYPE_TOOL_CALL)
        msg.tool_calls.append(call)
        out.append(pb.RunResponse(message_appended=pb.MessageAppended(message=msg, index=turn)))
        out.append(pb.RunResponse(tool_call=pb.ToolCallRequest(call_id=f"c{turn}")))
    usage = pb.Usage(model_calls=4, prompt_tokens=1200, completion_tokens=80, prompt_ms=90)
    if failed:
        end = pb.RunResponse(
            run_failed=pb.RunFailed(reason=pb.FAILURE_REASON_TOOL_CALL, iterations=4, usage=usage)
        )
    else:
        end = pb.RunResponse(
            run_completed=pb.RunCompleted(terminal_tool="report", iterations=4, usage=usage)
        )
    out.append(end)
    return [e.SerializeToString() for e in out]


def build(path: Path, runs: int) -> None:
    """The journal's own schema (SqliteJournal.open), then rows in bulk."""

    async def schema() -> None:
        journal = SqliteJournal(path)
        await journal.open()
        await journal.aclose()

    asyncio.run(schema())
    db = sqlite3.connect(path)
    rng = random.Random(7)
    t0 = time.time() - runs * 2.0
    with db:
        for lo in range(0, runs, 5000):
            rows, events = [], []
            for i in range(lo, min(runs, lo + 5000)):
                run_id = f"{rng.getrandbits(64):016x}{i:08d}"
                status = "running" if i % 500 == 0 else ("failed" if i % 7 == 0 else "completed")
                created = t0 + i * 2.0
                rows.append(
                    (run_id, _start(i), f"caller-{i % 3}", "", status, created, created + 1)
                )
                events += [(run_id, s, e) for s, e in enumerate(_events(i, i % 7 == 0), 1)]
            db.executemany(
                "INSERT INTO runs (run_id, start, owner, session_id, status, created, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            db.executemany("INSERT INTO events (run_id, seq, event) VALUES (?, ?, ?)", events)
    db.close()


async def measure(path: Path, requests: int) -> list[list[object]]:
    store = SqliteStore(path)
    t = time.perf_counter()
    await store.open()  # creates the inspector's indexes on first open
    index_s = time.perf_counter() - t
    server = await serve_inspector(Inspector(store), "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.port}"
    rows: list[list[object]] = []
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            first = await http.get("/runs")
            cursor = first.text.split('id="next-page"')[0].rsplit('href="', 1)[1].split('"')[0]
            cursor = cursor.replace("&amp;", "&")
            page = (await store.page(Query(limit=1))).rows[0]
            deep = await _deep_cursor(http, store)
            one = page.run_id[:16]
            cases = {
                "first page": "/runs",
                "second page (cursor)": cursor,
                "page at run 50,000 (cursor)": deep,
                "status=failed": "/runs?status=failed",
                "status=running (1 in 500)": "/runs?status=running",
                "search workflow (1 in 10)": "/runs?q=workflow_3",
                "search run id (1 run)": f"/runs?q={one}",
                "one run's page": f"/runs/{page.run_id}",
            }
            for name, url in cases.items():
                times = []
                for _ in range(requests):
                    t = time.perf_counter()
                    response = await http.get(url)
                    times.append((time.perf_counter() - t) * 1000)
                    assert response.status_code == 200, (url, response.status_code)
                rows.append([name, statistics.median(times), percentile(times, 95), max(times)])
    finally:
        await server.stop()
        await store.aclose()
    rows.append(["(open: indexes + terms, once)", index_s * 1000, float("nan"), float("nan")])
    return rows


async def _deep_cursor(http: httpx.AsyncClient, store: SqliteStore) -> str:
    """A cursor half-way down the list (as a 'next page' link would carry)."""
    row = store.db.execute(
        "SELECT created, run_id FROM runs ORDER BY created DESC, run_id DESC"
        " LIMIT 1 OFFSET (SELECT COUNT(*) / 2 FROM runs)"
    ).fetchone()
    return f"/runs?before={row[0]!r}_{row[1]}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=100_000)
    p.add_argument("--requests", type=int, default=30, help="requests per case")
    p.add_argument("--journal", type=Path, help="reuse (or build) this journal file")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.journal or Path(tmp) / "journal.db"
        if not path.exists():
            t = time.perf_counter()
            build(path, args.runs)
            size_mb = path.stat().st_size / 1e6
            print(f"built {args.runs} runs in {time.perf_counter() - t:.1f} s ({size_mb:.0f} MB)")
        rows = asyncio.run(measure(path, args.requests))
    print(table(["GET", "median ms", "p95 ms", "max ms"], rows))


if __name__ == "__main__":
    main()
