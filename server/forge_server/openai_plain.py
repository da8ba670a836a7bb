"""Plain chat on the OpenAI endpoint: no tools, no workflow, straight to the model.

A request that offers no tool (and names no workflow) has nothing for the
guardrails to check: the only possible answer is text. Sending it through the
loop meant a respond-tool call under the grammar, so the first word of the
answer waited for the model to write `{"tool": "respond", "args":
{"message": "` and for the grammar's set-up (bench/RESULTS.md, "OpenAI
endpoint: plain chat"). Here it is one model call with no grammar and no tool
prompt, on the backend's slots like any other call, and its text deltas are
the answer's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from forge_core.backends.base import Backend, ChatRequest, RunTracking
from forge_core.calls import ChunkSink, TextResponse, Usage
from forge_core.messages import Message
from forge_core.observe import MODEL_CALLS, observed
from forge_core.workflow import RunOptions


@dataclass
class PlainAnswer:
    """The model's text, as it wrote it."""

    text: str
    usage: Usage = field(default_factory=Usage)
    # Generation stopped at max_tokens: OpenAI's finish_reason "length".
    truncated: bool = False


async def plain_turn(
    backend: Backend,
    workflow_name: str,
    messages: list[Message],
    options: RunOptions,
    on_chunk: ChunkSink | None = None,
) -> PlainAnswer:
    """One unconstrained model call on `messages`; ForgeError as the loop's."""
    run_id = "chat-" + uuid.uuid4().hex
    request = ChatRequest(
        run_id=run_id,
        workflow_name=workflow_name,
        messages=messages,
        tools=[],
        allowed=[],
        constrained=False,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        reasoning_replay=options.reasoning_replay,
        priority=options.priority,
    )
    try:
        work = backend.complete(request, on_chunk)
        observer = MODEL_CALLS.get()
        reply = await (work if observer is None else observed(observer, 1, request, work))
    finally:
        if isinstance(backend, RunTracking):
            # Each request is a run of its own: nothing to keep for it.
            backend.forget_run(run_id)
    response = reply.response
    # A backend that read tool-call JSON into calls still kept the text.
    text = response.content if isinstance(response, TextResponse) else reply.raw_text
    return PlainAnswer(text, reply.usage, reply.truncated)
