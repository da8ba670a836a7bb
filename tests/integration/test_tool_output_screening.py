"""Secrets in tool outputs never reach the model when the workflow says so.

The production server and the Python SDK; the model is a ScriptedBackend
whose responder records every request, so the test sees exactly what the
model was shown.
"""

from __future__ import annotations

from typing import Literal

import pytest

from forge_client import Event, ForgeClient, MessageAppended, ToolOutputScreened, Workflow
from forge_core.backends.base import ChatRequest
from forge_core.backends.scripted import ScriptedBackend, Turn, call
from forge_server.app import ServerOptions
from tests.helpers import address, running_server

LEAKY_OUTPUT = "user=ops host=db1 password=hunter2-prod key AKIAIOSFODNN7EXAMPLE"


def leaky_workflow(policy: Literal["allow", "redact", "block"] | None) -> Workflow:
    wf = Workflow("creds", "Fetch the connection and report.", tool_output_secrets=policy)

    @wf.tool(required=True)
    def connection(db: str) -> str:
        """Connection details for a database."""
        return LEAKY_OUTPUT

    @wf.tool(terminal=True)
    def report(summary: str) -> str:
        """Report."""
        return f"reported: {summary}"

    return wf


class Recorder:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, request: ChatRequest, index: int) -> Turn:
        self.seen += [m.content for m in request.messages]
        script = [call("connection", db="db1"), call("report", summary="done")]
        return script[index]


async def run(
    policy: Literal["allow", "redact", "block"] | None, server_default: str = "allow"
) -> tuple[Recorder, list[Event], str]:
    recorder = Recorder()
    events: list[Event] = []
    options = ServerOptions(host="127.0.0.1", port=0, tool_output_secrets=server_default)
    async with (
        running_server(ScriptedBackend(responder=recorder), options) as server,
        ForgeClient(address(server)) as client,
    ):
        result = await client.run(leaky_workflow(policy), "Check db1", on_event=events.append)
    return recorder, events, result.output


def shown_to_model(recorder: Recorder) -> str:
    return "\n".join(recorder.seen)


async def test_redact_hides_each_secret_from_the_model_and_reports_the_types() -> None:
    recorder, events, _ = await run("redact")
    model_saw = shown_to_model(recorder)
    assert "hunter2-prod" not in model_saw
    assert "AKIAIOSFODNN7EXAMPLE" not in model_saw
    assert "host=db1" in model_saw  # the rest of the output is intact
    assert "[REDACTED: Secret Keyword]" in model_saw
    [screened] = [e for e in events if isinstance(e, ToolOutputScreened)]
    assert (screened.tool_name, screened.action) == ("connection", "redact")
    assert screened.secret_types == ("AWS Access Key", "Secret Keyword")
    assert screened.secrets == 2
    # The streamed transcript is what the model saw, not the secret.
    streamed = "\n".join(e.message.content for e in events if isinstance(e, MessageAppended))
    assert "hunter2-prod" not in streamed


async def test_block_withholds_the_whole_output() -> None:
    recorder, events, _ = await run("block")
    model_saw = shown_to_model(recorder)
    assert "host=db1" not in model_saw
    assert "withheld" in model_saw
    assert [e.action for e in events if isinstance(e, ToolOutputScreened)] == ["block"]


@pytest.mark.parametrize(
    ("policy", "server_default", "screened"),
    [(None, "allow", False), (None, "redact", True), ("allow", "redact", False)],
)
async def test_the_workflow_policy_overrides_the_server_default(
    policy: Literal["allow", "redact", "block"] | None, server_default: str, screened: bool
) -> None:
    recorder, events, _ = await run(policy, server_default)
    assert ("hunter2-prod" not in shown_to_model(recorder)) is screened
    assert any(isinstance(e, ToolOutputScreened) for e in events) is screened


async def test_the_terminal_result_reaches_its_own_client_unscreened() -> None:
    wf = Workflow("creds", "Report the password.", tool_output_secrets="redact")

    @wf.tool(terminal=True)
    def reveal(who: str) -> str:
        """Reveal."""
        return "password=hunter2-prod"

    backend = ScriptedBackend(scripts={"creds": [call("reveal", who="x")]})
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(wf, "go")
    assert result.output == "password=hunter2-prod"
