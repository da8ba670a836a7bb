"""How the llama-server backend picks and applies its tool-call mode."""

from __future__ import annotations

import logging

import pytest

from forge_core.backends.base import ChatRequest
from forge_core.backends.llama.props import choose_tool_call_mode
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.messages import Message, MessageRole, MessageType
from forge_core.workflow import ToolSpec

TOOL = ToolSpec(
    "get_weather",
    "Weather",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def request(constrained: bool = True) -> ChatRequest:
    return ChatRequest(
        run_id="r",
        workflow_name="w",
        messages=[Message(MessageRole.USER, "Weather in Paris?", MessageType.USER_INPUT)],
        tools=[TOOL],
        allowed=["get_weather"],
        constrained=constrained,
    )


@pytest.mark.parametrize(
    ("caps", "mode"),
    [
        ({"supports_tool_calls": True, "supports_tools": True}, "native"),
        ({"supports_tool_calls": False, "supports_tools": False}, "constrained"),
        ({"supports_tools": True}, "constrained"),
        ({}, "constrained"),
    ],
)
def test_auto_follows_the_template_caps(caps: dict[str, bool], mode: str) -> None:
    assert choose_tool_call_mode({"chat_template_caps": caps}) == mode


@pytest.mark.parametrize("caps", [{}, {"supports_tool_calls": True, "supports_tools": True}])
def test_the_chosen_mode_is_logged_as_information(
    caps: dict[str, bool], caplog: pytest.LogCaptureFixture
) -> None:
    """A first user read "does not support tool calls" at start-up as a
    problem; it is the mode Forge is built for."""
    caplog.set_level(logging.INFO, "forge_core.backends.llama.props")
    mode = choose_tool_call_mode({"chat_template_caps": caps})
    (record,) = [r for r in caplog.records if "tool-call mode" in r.getMessage()]
    assert record.levelno == logging.INFO
    assert record.getMessage().startswith(f"tool-call mode {mode}: ")
    assert "not support" not in record.getMessage()


def make(mode: str) -> LlamaServerBackend:
    return LlamaServerBackend(
        "http://127.0.0.1:1",
        model="m.gguf",
        context_budget_tokens=2048,
        slots=1,
        budget_mode="backend",
        backend_mode="external",
        tool_call_mode=mode,
    )


async def test_prompt_mode_sends_no_constraint_even_for_constrained_runs() -> None:
    backend = make("prompt")
    body = backend.request_body(request())
    await backend.aclose()
    assert "grammar" not in body and "response_format" not in body
    assert "get_weather(city: string)" in body["messages"][0]["content"]
    assert backend.info().tool_call_mode == "prompt"


async def test_constrained_mode_sends_the_grammar() -> None:
    backend = make("constrained")
    body = backend.request_body(request())
    await backend.aclose()
    assert body["grammar"].startswith("root ::= call")


async def test_native_mode_uses_openai_tool_calling_on_v1() -> None:
    backend = make("native")
    assert backend._native is not None
    body = backend._native.request_body(request())
    assert backend._native.base_url.endswith("127.0.0.1:1/v1")
    await backend.aclose()
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather"]
    assert body["tool_choice"] == "required"
    assert "grammar" not in body
    assert backend.info().tool_call_mode == "native"


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="tool-call mode"):
        make("telepathy")
