"""A backend that replays scripted model turns.

For deterministic tests of the loop and of every SDK: the server can load a
script file (`forge-server --backend scripted --script FILE`), so tests in Go
or TypeScript drive the real server through exact guardrail paths. Each run
replays the script of its workflow's name from the start.

Script file: {"<workflow name or *>": [turn, ...]}, or a directory of
conformance cases (each case's `script` keyed by its workflow name). A turn is
{"text": "..."} or {"tool_calls": [{"name": "...", "args": {...}}]}, with an
optional "delay_ms".
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge_core.backends.base import BackendInfo, BackendReply, ChatRequest
from forge_core.calls import (
    ChunkSink,
    ChunkType,
    LLMResponse,
    StreamChunk,
    TextResponse,
    ToolCall,
    Usage,
)
from forge_core.errors import BackendError
from forge_core.messages import Message, MessageRole, MessageType
from forge_core.modes import BudgetMode, ToolCallMode


@dataclass(frozen=True)
class Turn:
    response: LLMResponse
    delay_s: float = 0.0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Turn:
        delay = float(data.get("delay_ms", 0)) / 1000.0
        if "tool_calls" in data:
            calls = [
                ToolCall(name=c["name"], args=dict(c.get("args", {}))) for c in data["tool_calls"]
            ]
            return cls(calls, delay)
        if "text" in data:
            return cls(TextResponse(str(data["text"])), delay)
        raise ValueError(f"a scripted turn needs 'text' or 'tool_calls': {data!r}")


def call(name: str, **args: Any) -> Turn:
    return Turn([ToolCall(name, args)])


def calls(*pairs: tuple[str, dict[str, Any]]) -> Turn:
    return Turn([ToolCall(name, args) for name, args in pairs])


def text(content: str) -> Turn:
    return Turn(TextResponse(content))


Responder = Callable[[ChatRequest, int], Turn]


@dataclass
class ScriptedBackend:
    """Replays `scripts[workflow name]` (or `scripts["*"]`) turn by turn per run,
    or asks `responder(request, turn_index)` when given."""

    scripts: dict[str, list[Turn]] = field(default_factory=dict)
    responder: Responder | None = None
    context_budget_tokens: int = 8192
    name: str = "scripted"
    # A run this backend has not seen starts its script after the model
    # turns its conversation already holds (a run resumed from a journal by
    # a restarted server); else at the first turn.
    continue_conversations: bool = False
    # The most recent requests, for tests that inspect what the loop sent.
    requests: deque[ChatRequest] = field(default_factory=lambda: deque(maxlen=256))
    _cursor: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_path(cls, path: Path) -> ScriptedBackend:
        """A script file, or a directory of conformance cases (tests/conformance)."""
        raw: dict[str, list[dict[str, Any]]] = {}
        if path.is_dir():
            for case_file in sorted(path.glob("*.json")):
                case = json.loads(case_file.read_text())
                raw[case["workflow"]["name"]] = case["script"]
        else:
            raw = json.loads(path.read_text())
        scripts = {name: [Turn.from_json(t) for t in turns] for name, turns in raw.items()}
        # forge-server --backend scripted: a restarted server resumes runs.
        return cls(scripts=scripts, continue_conversations=True)

    def info(self) -> BackendInfo:
        return BackendInfo(
            name=self.name,
            model="scripted",
            context_budget_tokens=self.context_budget_tokens,
            slots=0,
            budget_mode=BudgetMode.MANUAL,
            backend_mode="in-process",
            tool_call_mode=ToolCallMode.SCRIPTED,
        )

    async def aclose(self) -> None:
        return None

    def forget_run(self, run_id: str) -> None:
        """The run ended (backends.base.RunTracking): its place in the
        script goes, else a long-lived server keeps one per run it ever ran."""
        self._cursor.pop(run_id, None)

    @property
    def runs_tracked(self) -> int:
        """Runs whose place in the script is kept (those still running)."""
        return len(self._cursor)

    def next_turn(self, request: ChatRequest) -> Turn:
        # A run this backend has not seen may be one resumed elsewhere (a
        # restarted server): its script goes on after the turns it has.
        index = self._cursor.get(request.run_id)
        if index is None:
            index = _turns_so_far(request.messages) if self.continue_conversations else 0
        self._cursor[request.run_id] = index + 1
        if self.responder is not None:
            return self.responder(request, index)
        script = self.scripts.get(request.workflow_name, self.scripts.get("*"))
        if script is None:
            raise BackendError(f"no script for workflow {request.workflow_name!r}")
        if index >= len(script):
            raise BackendError(f"script for {request.workflow_name!r} has no turn {index + 1}")
        return script[index]

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        self.requests.append(request)
        turn = self.next_turn(request)
        if turn.delay_s:
            await asyncio.sleep(turn.delay_s)
        if isinstance(turn.response, TextResponse):
            raw = turn.response.content
            kind = ChunkType.TEXT_DELTA
        else:
            raw = "\n".join(json.dumps({"tool": c.name, "args": c.args}) for c in turn.response)
            kind = ChunkType.TOOL_CALL_DELTA
        if on_chunk is not None:
            await on_chunk(StreamChunk(kind, raw))
            await on_chunk(StreamChunk(ChunkType.FINAL))
        return BackendReply(response=turn.response, usage=Usage(model_calls=1), raw_text=raw)


def _turns_so_far(messages: list[Message]) -> int:
    """Model turns after the last user request: what a run that started
    elsewhere already had of its script."""
    last_user = max(
        (i for i, m in enumerate(messages) if m.type is MessageType.USER_INPUT), default=-1
    )
    return sum(
        1
        for m in messages[last_user + 1 :]
        if m.role is MessageRole.ASSISTANT and m.type is not MessageType.REASONING
    )
