"""The chat template rendered in Forge (forge_core/backends/llama/chat_template.py).

The renders are compared with llama-server's in tests/e2e/test_chat_template_llama.py;
here the "server" is a Python function that renders, refuses or is down on cue,
to drive LocalPrompts' trust decisions, which a real server cannot be made to
take on demand.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest

from forge_core.backends.llama.chat_template import (
    AUDIT_EVERY,
    AUDITED,
    PROBES,
    ChatTemplate,
    LocalPrompts,
    TemplateError,
)

CHATML = (
    "{%- for message in messages -%}\n"
    "  {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n  {{- '<|im_start|>assistant\\n' -}}\n{%- endif -%}"
)

# Gemma's shape: the system prompt folded into the first user turn, a BOS
# token, an error for a role it does not know.
GEMMA_LIKE = """{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
{%- set prefix = messages[0]['content'] + '\n\n' -%}{%- set rest = messages[1:] -%}
{%- else -%}{%- set prefix = '' -%}{%- set rest = messages -%}{%- endif -%}
{%- for message in rest -%}
{%- if message['role'] not in ['user', 'assistant', 'tool'] -%}
{{ raise_exception('unknown role ' + message['role']) }}
{%- endif -%}
{%- set role = 'model' if message['role'] == 'assistant' else 'user' -%}
<start_of_turn>{{ role }}
{{ (prefix if loop.first else '') + message['content'] | trim }}<end_of_turn>
{% endfor -%}
{%- if add_generation_prompt -%}<start_of_turn>model
{% endif -%}"""

CONVERSATION = [
    {"role": "system", "content": "You call tools."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": '{"tool": "get_weather", "args": {"city": "Paris"}}'},
    {"role": "tool", "content": "18C, ünï 🙂"},
]


def test_a_chatml_template_renders_the_conversation_and_the_assistant_opening() -> None:
    text = ChatTemplate(CHATML).render(CONVERSATION)
    assert text.startswith("<|im_start|>system\nYou call tools.<|im_end|>\n")
    assert "<|im_start|>tool\n18C, ünï 🙂<|im_end|>\n" in text
    assert text.endswith("<|im_start|>assistant\n")


def test_the_bos_token_whitespace_control_and_raise_exception_work_as_in_transformers() -> None:
    template = ChatTemplate(GEMMA_LIKE, bos_token="<bos>", eos_token="<eos>")
    text = template.render(CONVERSATION)
    assert text.startswith("<bos><start_of_turn>user\nYou call tools.\n\nWeather in Paris?")
    assert "<start_of_turn>model\n{" in text and text.endswith("<start_of_turn>model\n")
    with pytest.raises(TemplateError, match="unknown role narrator"):
        template.render([{"role": "user", "content": "a"}, {"role": "narrator", "content": "b"}])


def test_tojson_keeps_non_ascii_text_and_a_broken_template_is_a_template_error() -> None:
    text = ChatTemplate("{{ messages[0] | tojson }}").render([{"role": "user", "content": "ü"}])
    assert text == '{"role": "user", "content": "ü"}'
    with pytest.raises(TemplateError, match="does not compile"):
        ChatTemplate("{% for m in messages %}")
    with pytest.raises(TemplateError, match="failed"):
        ChatTemplate("{{ messages[5].content }}").render([]).upper()


class FakeServer:
    """Renders with its own template, like /apply-template; counts requests."""

    def __init__(self, source: str, refuse: bool = False) -> None:
        self.template = ChatTemplate(source, bos_token="<bos>")
        self.requests = 0
        self.down = False
        self.refuse = refuse

    async def __call__(self, messages: list[dict[str, Any]]) -> str:
        self.requests += 1
        if self.down:
            raise httpx.ConnectError("connection refused")
        if self.refuse:
            raise RuntimeError("HTTP 500: the template raised")
        return self.template.render(messages)


async def settle(prompts: LocalPrompts) -> None:
    """Let background audits finish."""
    for _ in range(5):
        await asyncio.sleep(0)
    await prompts.aclose()


async def test_a_template_that_agrees_is_rendered_here_and_audited_then_sampled() -> None:
    server = FakeServer(GEMMA_LIKE)

    async def load() -> ChatTemplate:
        return ChatTemplate(GEMMA_LIKE, bos_token="<bos>")

    prompts = LocalPrompts(load, server)
    assert await prompts.prompt(CONVERSATION) == server.template.render(CONVERSATION)
    assert prompts.local
    probes = len(PROBES)
    await settle(prompts)
    assert server.requests == probes + 1  # the probes, then one audit
    renders = 1 + AUDITED + 2 * AUDIT_EVERY
    for _ in range(renders - 1):
        await prompts.prompt(CONVERSATION)
    await settle(prompts)
    # Every render audited up to AUDITED, then one in AUDIT_EVERY.
    sampled = sum(1 for n in range(AUDITED + 1, renders + 1) if n % AUDIT_EVERY == 0)
    assert sampled >= 2
    assert server.requests == probes + AUDITED + sampled
    assert prompts.local


async def test_a_template_that_differs_on_a_probe_is_never_rendered_here(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = FakeServer(GEMMA_LIKE)

    async def load() -> ChatTemplate:
        return ChatTemplate(GEMMA_LIKE)  # no BOS token here: the texts part after "<"

    prompts = LocalPrompts(load, server)
    with caplog.at_level(logging.WARNING):
        assert await prompts.prompt(CONVERSATION) == server.template.render(CONVERSATION)
    assert not prompts.local
    assert "at character 1" in caplog.text
    before = server.requests
    await prompts.prompt(CONVERSATION)
    assert server.requests == before + 1  # every prompt asked of the server


async def test_a_probe_the_server_refuses_leaves_prompts_to_the_server() -> None:
    server = FakeServer(CHATML, refuse=True)

    async def load() -> ChatTemplate:
        return ChatTemplate(CHATML)

    prompts = LocalPrompts(load, server)
    with pytest.raises(RuntimeError):  # the conversation's own request fails too
        await prompts.prompt(CONVERSATION)
    assert not prompts.local
    server.refuse = False
    assert await prompts.prompt(CONVERSATION) == server.template.render(CONVERSATION)
    assert not prompts.local


async def test_a_server_that_is_down_is_checked_again_on_the_next_prompt() -> None:
    server = FakeServer(CHATML)
    loads = 0

    async def load() -> ChatTemplate:
        nonlocal loads
        loads += 1
        return ChatTemplate(CHATML, bos_token="<bos>")

    prompts = LocalPrompts(load, server)
    server.down = True
    with pytest.raises(httpx.ConnectError):
        await prompts.prompt(CONVERSATION)
    server.down = False
    assert await prompts.prompt(CONVERSATION) == server.template.render(CONVERSATION)
    assert prompts.local and loads == 2
    await settle(prompts)


async def test_an_audit_that_disagrees_sends_every_later_prompt_to_the_server(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = FakeServer(CHATML)

    async def load() -> ChatTemplate:
        return ChatTemplate(CHATML, bos_token="<bos>")

    prompts = LocalPrompts(load, server)
    await prompts.prompt(CONVERSATION)
    assert prompts.local
    # The server starts rendering differently (e.g. content the probes lack).
    server.template = ChatTemplate(GEMMA_LIKE, bos_token="<bos>")
    with caplog.at_level(logging.WARNING):
        await prompts.prompt(CONVERSATION)
        await settle(prompts)
    assert not prompts.local and "differs" in caplog.text
    assert await prompts.prompt(CONVERSATION) == server.template.render(CONVERSATION)


async def test_no_template_from_the_server_means_prompts_from_the_server() -> None:
    server = FakeServer(CHATML)

    async def load() -> None:
        return None

    prompts = LocalPrompts(load, server)
    assert await prompts.prompt(CONVERSATION) == server.template.render(CONVERSATION)
    assert not prompts.local and server.requests == 1


async def test_a_bos_token_the_server_drops_is_learned_from_the_probes() -> None:
    """llama.cpp drops the template's BOS text where the tokenizer adds BOS."""
    server = FakeServer(GEMMA_LIKE)
    render = server.template.render

    async def without_bos(messages: list[dict[str, Any]]) -> str:
        return render(messages).removeprefix("<bos>")

    async def load() -> ChatTemplate:
        return ChatTemplate(GEMMA_LIKE, bos_token="<bos>")

    prompts = LocalPrompts(load, without_bos)
    text = await prompts.prompt(CONVERSATION)
    assert prompts.local
    assert text == render(CONVERSATION).removeprefix("<bos>") and not text.startswith("<bos>")
    await settle(prompts)
