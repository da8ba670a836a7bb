"""One engine transcript that the native-backend tests convert to each wire format.

It holds every case the conversion has to get right: replayed and dropped
reasoning, a text attempt and its retry nudge, a parallel call batch with one
result missing (compaction dropped it) and one orphan result, a tool name with
a dot (which OpenAI and Anthropic reject), and a blocked call answered by a
nudge in a tool message.
"""

from __future__ import annotations

from forge_core.backends.base import ChatRequest
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.workflow import ToolSpec

LOOKUP = ToolSpec(
    "lookup",
    "Look an order up",
    {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
)
NOTE = ToolSpec("notes.add", "", {"type": "object", "properties": {"text": {"type": "string"}}})
SUBMIT = ToolSpec(
    "submit",
    "Report the answer. Ends the task.",
    {"properties": {"answer": {"type": "string"}}, "required": ["answer"]},
)
TOOLS = [LOOKUP, NOTE, SUBMIT]

A = MessageRole.ASSISTANT


def history() -> list[Message]:
    return [
        Message(MessageRole.SYSTEM, "You are careful.", MessageType.SYSTEM_PROMPT),
        Message(MessageRole.USER, "Find order 7", MessageType.USER_INPUT),
        Message(A, "old thought", MessageType.REASONING),
        Message(A, "I will look.", MessageType.TEXT_RESPONSE),
        Message(MessageRole.USER, "Call a tool.", MessageType.RETRY_NUDGE),
        Message(A, "Need the order first.", MessageType.REASONING),
        Message(
            A,
            "",
            MessageType.TOOL_CALL,
            tool_calls=[
                ToolCallInfo("call_1", "lookup", {"id": "7"}),
                ToolCallInfo("call_2", "notes.add", {"text": "x"}),
            ],
        ),
        Message(
            MessageRole.TOOL,
            "order 7: shipped",
            MessageType.TOOL_RESULT,
            tool_call_id="call_1",
            tool_name="lookup",
        ),
        # Answers no call of the assistant message before it.
        Message(
            MessageRole.TOOL,
            "stale",
            MessageType.TOOL_RESULT,
            tool_call_id="call_0",
            tool_name="lookup",
        ),
        Message(
            A,
            "",
            MessageType.TOOL_CALL,
            tool_calls=[ToolCallInfo("call_3", "submit", {"answer": "shipped"})],
            transient=True,
        ),
        Message(
            MessageRole.TOOL,
            "Call lookup before submit.",
            MessageType.STEP_NUDGE,
            tool_call_id="call_3",
            tool_name="submit",
        ),
    ]


def request(
    messages: list[Message] | None = None,
    *,
    allowed: list[str] | None = None,
    constrained: bool = True,
    parallel: bool = False,
    reasoning_replay: str = "keep_last",
) -> ChatRequest:
    return ChatRequest(
        run_id="run-1",
        workflow_name="orders",
        messages=history() if messages is None else messages,
        tools=TOOLS,
        allowed=["lookup", "notes.add"] if allowed is None else allowed,
        constrained=constrained,
        temperature=0.2,
        max_tokens=256,
        parallel=parallel,
        reasoning_replay=reasoning_replay,
    )
