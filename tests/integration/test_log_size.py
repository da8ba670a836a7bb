"""Log lines stay small whatever a client sends (issue 22, finding 5).

A fuzzing client once made the server write 53 MB of log: labels and tool
error messages were logged whole. The server's own formatter is installed on
a handler here, as `forge-server` installs it, and a run with a megabyte of
labels and megabyte tool errors is driven through the production server.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from forge_client import ForgeClient, RunFailedError, Workflow
from forge_core.backends.scripted import ScriptedBackend, call
from forge_server.app import ServerOptions
from forge_server.logs import MAX_LOG_LINE, CappedFormatter, JsonFormatter
from tests.helpers import address, running_server
from tests.integration.test_run_stream import WEATHER_SCRIPT, weather_workflow

MEGABYTE = 1024 * 1024


@pytest.fixture
def server_log() -> Iterator[io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(CappedFormatter())
    logger = logging.getLogger("forge_server")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    try:
        yield out
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def failing_workflow() -> Workflow:
    wf = Workflow("lookup", "Look a record up.")

    @wf.tool(required=True)
    def lookup(key: str) -> str:
        """Look a record up."""
        raise RuntimeError(key + "!" * MEGABYTE)

    @wf.tool(terminal=True)
    def done(summary: str) -> str:
        """Finish."""
        return summary

    return wf


async def test_client_strings_are_clipped_in_the_run_log(server_log: io.StringIO) -> None:
    backend = ScriptedBackend(
        scripts={"lookup": [call("lookup", key=k) for k in ("a", "b", "c", "d")]}
    )
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        with pytest.raises(RunFailedError) as failed:
            await client.run(
                failing_workflow(), "Look up a", labels={"team": "x" * MEGABYTE, "k" * 5000: "v"}
            )
    # The client's megabyte reached the failure message the server logs.
    assert len(failed.value.message) > MEGABYTE
    lines = server_log.getvalue().splitlines()
    started = next(line for line in lines if " started: " in line)
    ended = next(line for line in lines if " failed: " in line)
    # The service clips what the client chose; the formatter caps the rest.
    assert len(started) < 1000
    assert len(ended) < 1000
    assert max(len(line) for line in lines) <= MAX_LOG_LINE + 64
    assert len(server_log.getvalue()) < 50 * 1024


def test_the_formatter_caps_any_record() -> None:
    formatter = CappedFormatter("%(message)s", max_chars=100)
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "%s", ("y" * 10_000,), None)
    assert formatter.format(record) == "y" * 100 + "… [9900 more characters dropped]"
    short = logging.LogRecord("x", logging.INFO, __file__, 1, "%s", ("short",), None)
    assert formatter.format(short) == "short"


def secret_workflow() -> Workflow:
    wf = Workflow("lookup", "Look a record up.")

    @wf.tool(required=True)
    def lookup(key: str) -> str:
        """Look a record up."""
        raise PermissionError(f"login failed for {key}: password=hunter2")

    @wf.tool(terminal=True)
    def done(summary: str) -> str:
        """Finish."""
        return summary

    return wf


@pytest.mark.parametrize("log_payloads", [False, True])
async def test_tool_error_text_is_logged_only_with_log_payloads(
    server_log: io.StringIO, log_payloads: bool
) -> None:
    backend = ScriptedBackend(
        scripts={"lookup": [call("lookup", key=k) for k in ("a", "b", "c", "d")]}
    )
    options = ServerOptions(host="127.0.0.1", port=0, log_payloads=log_payloads)
    async with running_server(backend, options) as server, ForgeClient(address(server)) as client:
        with pytest.raises(RunFailedError) as failed:
            await client.run(secret_workflow(), "Look up a")
    # The client gets the whole story either way; the log only when asked.
    assert "password=hunter2" in failed.value.message
    log = server_log.getvalue()
    assert " failed: " in log
    assert ("hunter2" in log) is log_payloads


async def test_json_lines_carry_the_run_id_and_labels_and_stay_valid_json() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter(max_chars=2000))
    logger = logging.getLogger("forge_server")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    try:
        async with running_server(backend) as server, ForgeClient(address(server)) as client:
            await client.run(
                weather_workflow([]), "Weather?", labels={"team": "search", "big": "x" * MEGABYTE}
            )
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    entries = [json.loads(line) for line in out.getvalue().splitlines()]
    about_run = [e for e in entries if e.get("run_id")]
    for what in (" started: ", " completed by "):
        assert any(what in e["message"] for e in about_run), what
    [run_id] = {e["run_id"] for e in about_run}
    assert len(run_id) == 32 and run_id in about_run[0]["message"]
    for entry in about_run:
        assert entry["labels"]["team"] == "search"
        assert len(entry["labels"]["big"]) <= 256
        assert entry["level"] == "INFO" and entry["time"].endswith("+00:00")
    assert max(len(line) for line in out.getvalue().splitlines()) < 5000
