"""The run inspector's pages and queries, in process (issue 35).

Real journals (a SQLite file and a real PostgreSQL server, tests/postgres.py)
filled through the Journal interface with real protobuf events, read by the
inspector's stores; the pages are requested over ASGI with httpx. The
browser test is test_inspector_browser.py.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from forge.v1 import workflow_pb2 as wpb
from forge_server.auth import Authenticator, TokenFile
from forge_server.inspector.app import Inspector
from forge_server.inspector.serve import check_ui_exposure
from forge_server.inspector.store import Query, RunStore, open_store
from forge_server.journal import Journal, open_journal

SECRET = "hunter2-A-17"


def start(
    workflow: str,
    policy: wpb.ToolOutputPolicy.ValueType = wpb.TOOL_OUTPUT_POLICY_UNSPECIFIED,
    labels: dict[str, str] | None = None,
) -> bytes:
    wf = wpb.Workflow(name=workflow, tool_output_secrets=policy)
    return pb.StartRun(workflow=wf, user_message="Where?", labels=labels or {}).SerializeToString()


def events(failed: bool = False) -> list[pb.RunResponse]:
    msg = mpb.Message(role=mpb.ROLE_ASSISTANT, type=mpb.MESSAGE_TYPE_TOOL_CALL, step_index=1)
    msg.tool_calls.append(
        mpb.ToolCall(id="c1", name="lookup", arguments_json=f'{{"id": "{SECRET}"}}')
    )
    nudge = mpb.Message(
        role=mpb.ROLE_USER, type=mpb.MESSAGE_TYPE_STEP_NUDGE, content="Call lookup first.",
        step_index=1, transient=True,
    )  # fmt: skip
    call = pb.ToolCallRequest(call_id="c1", tool_name="lookup", arguments_json=f'"{SECRET}"')
    call.coercions.append(pb.Coercion(path="/n", original_json='"42"', coerced_json="42"))
    out = [
        pb.RunResponse(run_started=pb.RunStarted(run_id="x", tool_call_mode="constrained")),
        pb.RunResponse(message_appended=pb.MessageAppended(message=nudge, index=2)),
        pb.RunResponse(message_appended=pb.MessageAppended(message=msg, index=3)),
        pb.RunResponse(tool_call=call),
        pb.RunResponse(compacted=pb.Compacted(iteration=2, phase=1, tokens_before=900,
                                              tokens_after=400, strategy="tiered")),
    ]  # fmt: skip
    if failed:
        out.append(
            pb.RunResponse(
                run_failed=pb.RunFailed(reason=pb.FAILURE_REASON_TOOL_CALL, message=f"bad {SECRET}")
            )
        )
    else:
        out.append(pb.RunResponse(run_completed=pb.RunCompleted(terminal_tool="report")))
    return out


async def add_run(
    journal: Journal,
    run_id: str,
    created: float,
    *,
    owner: str = "",
    status: str = "completed",
    workflow: str = "orders",
    policy: wpb.ToolOutputPolicy.ValueType = wpb.TOOL_OUTPUT_POLICY_UNSPECIFIED,
    labels: dict[str, str] | None = None,
) -> None:
    await journal.create_run(run_id, start(workflow, policy, labels), owner, "", "me", created)
    if status == "running":
        return
    for seq, event in enumerate(events(status == "failed"), 1):
        data = event.SerializeToString()
        await journal.append(run_id, seq, data, len(data))
    await journal.finish(run_id, status, created + 1)


@pytest.fixture(params=["sqlite", "postgres"])
async def journal(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Journal]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'journal.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    opened = open_journal(url)
    assert opened is not None
    await opened.open()
    try:
        yield opened
    finally:
        await opened.aclose()


@pytest.fixture
async def store(journal: Journal) -> AsyncIterator[RunStore]:
    opened = open_store(journal)
    await opened.open()
    try:
        yield opened
    finally:
        await opened.aclose()


async def test_pages_walk_every_run_once_newest_first_with_filters(
    journal: Journal, store: RunStore
) -> None:
    # Equal `created` on purpose: the keyset cursor breaks ties by run id.
    for i in range(23):
        await add_run(
            journal, f"run-{i:02d}", 1000.0 + i // 2, owner=("alice" if i % 2 else "bob"),
            status=("failed" if i % 3 == 0 else "completed"),
            workflow=("Billing" if i % 5 == 0 else "orders"), labels={"req": f"q{i}"},
        )  # fmt: skip
    seen: list[str] = []
    query = Query(limit=5)
    while True:
        page = await store.page(query)
        seen += [r.run_id for r in page.rows]
        if page.next_before is None:
            break
        query = Query(limit=5, before=page.next_before)
    assert seen == [f"run-{i:02d}" for i in reversed(range(23))]
    failed = await store.page(Query(status="failed", limit=100))
    assert {r.run_id for r in failed.rows} == {f"run-{i:02d}" for i in range(0, 23, 3)}
    assert all(r.last_event for r in failed.rows)
    mine = await store.page(Query(owner="alice", limit=100))
    assert {r.owner for r in mine.rows} == {"alice"} and len(mine.rows) == 11
    billing = await store.page(Query(search="billing", limit=100))
    assert {r.run_id for r in billing.rows} == {f"run-{i:02d}" for i in range(0, 23, 5)}
    assert [r.run_id for r in (await store.page(Query(search="run-07"))).rows] == ["run-07"]
    assert [r.run_id for r in (await store.page(Query(search="req=q8"))).rows] == ["run-08"]
    # A run started after the store opened is found by a search too.
    await add_run(journal, "late", 5000.0, workflow="Billing")
    assert "late" in {r.run_id for r in (await store.page(Query(search="billing"))).rows}


async def get(inspector: Inspector, path: str, token: str = "") -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    transport = httpx.ASGITransport(app=inspector.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://ui") as http:
        return await http.get(path, headers=headers)


@pytest.mark.parametrize("log_payloads", [False, True])
async def test_a_redacting_workflow_shows_no_payloads_without_log_payloads(
    journal: Journal, store: RunStore, log_payloads: bool
) -> None:
    await add_run(journal, "secretive", 1.0, status="failed", policy=wpb.TOOL_OUTPUT_POLICY_REDACT)
    await add_run(journal, "open", 2.0, status="failed")
    inspector = Inspector(store, log_payloads=log_payloads)
    for run_id, hidden in (("secretive", not log_payloads), ("open", False)):
        page = await get(inspector, f"/runs/{run_id}")
        exported = await get(inspector, f"/runs/{run_id}/events.json")
        assert page.status_code == exported.status_code == 200
        assert (SECRET in page.text) is not hidden
        assert (SECRET in exported.text) is not hidden
        assert exported.json()["payloads_hidden"] is hidden
        # The interventions stay, with what can be said without payloads.
        assert 'data-guardrail="step-nudge"' in page.text
        assert ("Call lookup first." in page.text) is not hidden
        assert 'data-guardrail="coercion"' in page.text
        assert "tiered phase 1: 900 → 400 tokens" in page.text
    # The server's own default counts for a workflow that does not say.
    strict = Inspector(store, tool_output_secrets="block")
    assert SECRET not in (await get(strict, "/runs/open")).text


async def test_bad_parameters_are_400_naming_the_field(journal: Journal, store: RunStore) -> None:
    await add_run(journal, "r1", 1.0)
    inspector = Inspector(store)
    for path, field in (
        ("/runs?status=bogus", "status"),
        ("/runs?before=yesterday", "before"),
        ("/runs?q=" + "x" * 300, "q"),
        ("/runs/r1/live?after=three", "after"),
    ):
        response = await get(inspector, path)
        assert response.status_code == 400, path
        assert field in response.text
    assert (await get(inspector, "/runs/nope")).status_code == 404
    assert (await get(inspector, "/runs")).status_code == 200


async def test_an_ended_runs_live_stream_sends_its_entries_then_done(
    journal: Journal, store: RunStore
) -> None:
    await add_run(journal, "r1", 1.0, status="failed")
    response = await get(Inspector(store), "/runs/r1/live?after=3")
    assert response.headers["content-type"].startswith("text/event-stream")
    messages = [m for m in response.text.split("\n\n") if m.startswith(("data:", "event:"))]
    seqs = [json.loads(m.removeprefix("data: "))["seq"] for m in messages if m.startswith("data:")]
    assert seqs == [4, 4, 5, 6]  # the call and its coercion, the compaction, the outcome
    assert messages[-1] == 'event: done\ndata: {"status": "failed", "outcome": "TOOL_CALL"}'


async def test_tokens_see_their_own_runs_and_admins_all(
    journal: Journal, store: RunStore, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("a-token name=alice\nb-token name=bob\nops-token name=ops admin\n")
    await add_run(journal, "alices", 1.0, owner="alice")
    await add_run(journal, "bobs", 2.0, owner="bob")
    inspector = Inspector(store, auth=Authenticator(TokenFile(tokens)))
    alice = await get(inspector, "/runs", "a-token")
    assert "alices" in alice.text and "bobs" not in alice.text
    assert (await get(inspector, "/runs/bobs", "a-token")).status_code == 404
    assert (await get(inspector, "/runs/bobs/events.json", "a-token")).status_code == 404
    ops = await get(inspector, "/runs", "ops-token")
    assert "alices" in ops.text and "bobs" in ops.text
    assert (await get(inspector, "/runs")).status_code == 401
    assert (await get(inspector, "/runs", "c-token")).status_code == 401
    # ?token= becomes an HttpOnly cookie and leaves the address.
    cookie = await get(inspector, "/runs?status=completed&token=a-token")
    assert cookie.status_code == 303
    assert cookie.headers["location"] == "/runs?status=completed"
    assert "httponly" in cookie.headers["set-cookie"].lower()


def ui_args(host: str, **extra: object) -> argparse.Namespace:
    values: dict[str, object] = dict(
        ui_port=0, ui_host=host, listen="", host="127.0.0.1", tls_cert=None, insecure=False
    )
    values.update(extra)
    return argparse.Namespace(**values)


def test_the_inspector_needs_tls_beyond_loopback() -> None:
    with pytest.raises(SystemExit, match="without TLS"):
        check_ui_exposure(ui_args("0.0.0.0"))
    check_ui_exposure(ui_args("127.0.0.1"))
    check_ui_exposure(ui_args("0.0.0.0", insecure=True))
    check_ui_exposure(ui_args("0.0.0.0", tls_cert=Path("cert.pem")))


def test_a_model_calls_constraint_follows_the_runs_mode_and_call_pieces() -> None:
    from forge_server.inspector.view import Timeline

    started = pb.RunResponse(run_started=pb.RunStarted(tool_call_mode="constrained"))
    single = mpb.Message(role=mpb.ROLE_ASSISTANT, type=mpb.MESSAGE_TYPE_TOOL_CALL)
    single.tool_calls.append(mpb.ToolCall(id="c1", name="lookup", arguments_json="{}"))
    double = mpb.Message()
    double.CopyFrom(single)
    double.tool_calls.append(mpb.ToolCall(id="c2", name="lookup", arguments_json="{}"))

    def constraint(pieces: bool, message: mpb.Message) -> str:
        timeline = Timeline(hide=False, pieces=pieces)
        timeline.entries(1, started)
        event = pb.RunResponse(message_appended=pb.MessageAppended(message=message))
        (entry,) = timeline.entries(2, event)
        return dict(entry.facts)["constraint"]

    assert constraint(True, single) == "grammar, in pieces"
    assert constraint(True, double) == "grammar, in pieces"
    assert constraint(False, single) == "whole-call grammar"


async def test_the_inspector_serves_https_and_asks_for_client_certificates(
    journal: Journal, store: RunStore, tmp_path: Path
) -> None:
    import ssl

    from forge_server.inspector.app import serve_inspector
    from tests.tls_certs import write_certs

    certs = write_certs(tmp_path / "certs")
    await add_run(journal, "r1", 1.0)
    server = await serve_inspector(
        Inspector(store), "127.0.0.1", 0, certs.server_cert, certs.server_key, certs.ca
    )
    url = f"https://127.0.0.1:{server.port}/runs"
    try:
        trusted = ssl.create_default_context(cafile=str(certs.ca))
        with_cert = ssl.create_default_context(cafile=str(certs.ca))
        with_cert.load_cert_chain(certs.client_cert, certs.client_key)
        async with httpx.AsyncClient(verify=with_cert) as http:
            response = await http.get(url)
        assert response.status_code == 200 and "r1" in response.text
        async with httpx.AsyncClient(verify=trusted) as http:
            with pytest.raises(httpx.HTTPError):
                await http.get(url)  # no client certificate
        async with httpx.AsyncClient() as http:
            with pytest.raises(httpx.HTTPError):
                await http.get(url.replace("https:", "http:"))
    finally:
        await server.stop()


def test_admin_comes_from_the_token_file_or_the_verifiers_answer() -> None:
    from forge_server.auth import _identity_from, parse_tokens

    tokens = parse_tokens("t1 name=ops admin\nt2 name=alice\n", "tokens")
    assert sorted((i.subject, i.admin) for i in tokens.values()) == [
        ("alice", False),
        ("ops", True),
    ]
    request = httpx.Request("GET", "http://verifier")
    said = httpx.Response(200, json={"subject": "ops", "admin": True}, request=request)
    assert _identity_from(said, "digest").admin is True
    truthy = httpx.Response(200, json={"subject": "ops", "admin": "yes"}, request=request)
    assert _identity_from(truthy, "digest").admin is False


async def test_a_live_stream_the_browser_leaves_stops_reading_the_journal(
    journal: Journal, store: RunStore
) -> None:
    import asyncio

    from forge_server.inspector.app import serve_inspector

    await add_run(journal, "busy", 1.0, status="running")
    reads: list[str] = []
    original = store.run

    async def counted(run_id: str, after_seq: int = 0) -> Any:
        reads.append(run_id)
        return await original(run_id, after_seq)

    store.run = counted  # type: ignore[method-assign]
    server = await serve_inspector(Inspector(store), "127.0.0.1", 0)
    try:
        async with httpx.AsyncClient() as http:
            url = f"http://127.0.0.1:{server.port}/runs/busy/live?after=0"
            async with http.stream("GET", url) as response:
                assert response.headers["x-frame-options"] == "DENY"
                lines = response.aiter_lines()
                while len(reads) < 4:  # it polls the still-running run
                    await anext(lines)
        # Left: the polls stop (one may have been under way).
        await asyncio.sleep(1.5)
        left = len(reads)
        await asyncio.sleep(1.5)
        assert len(reads) <= left + 1
    finally:
        await server.stop()


async def test_without_a_journal_the_pages_say_why() -> None:
    response = await get(Inspector(None), "/runs")
    assert response.status_code == 503
    assert "--journal" in response.text


async def test_forge_server_refuses_a_plaintext_inspector_beyond_loopback() -> None:
    import asyncio
    import sys

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server", "--backend", "scripted", "--port", "0",
        "--ui-port", "0", "--ui-host", "0.0.0.0", "--journal", "none",
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode != 0
    assert "refusing to serve the run inspector on 0.0.0.0 without TLS" in stderr.decode()


async def test_a_taken_ui_port_stops_the_start_with_one_message(tmp_path: Path) -> None:
    import asyncio
    import socket
    import sys

    from forge_core.llama_host.process import free_port

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "forge_server", "--backend", "scripted",
            "--port", str(free_port()), "--ui-port", str(taken),
            "--journal", f"sqlite:///{tmp_path / 'j.db'}", stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    text = err.decode()
    assert proc.returncode == 3, text
    assert "Traceback" not in text
    (message,) = [line for line in text.splitlines() if line.startswith("forge-server:")]
    assert f"port {taken} on 127.0.0.1 (--ui-port) is already in use" in message
