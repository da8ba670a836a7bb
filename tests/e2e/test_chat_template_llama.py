"""The chat template rendered in Forge against llama-server's own render.

For the bundled model's template and for templates in the shapes of other
model families (loaded with `--chat-template-file`), Forge's render of real
conversations -- tool prompt, calls, results, nudges, replayed reasoning --
must equal `/apply-template`'s byte for byte, and the probes must have let
Forge render it. Once the audits have thinned out, a call in pieces sends no
`/apply-template` request at all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from forge_core.backends.base import ChatRequest
from forge_core.backends.llama.chat_template import AUDITED
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.llama_host.install import bundled_binary, bundled_model
from forge_core.llama_host.process import LlamaServerConfig, ManagedLlamaServer
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.prompting import to_chat_messages
from tests.e2e.test_call_pieces_llama import paths
from tests.e2e.test_grammar_llama import TOOLS
from tests.unit.test_chat_template import GEMMA_LIKE

pytestmark = pytest.mark.e2e

# Llama 3's shape: a BOS token, headers per turn, `ipython` for tool results,
# today's date from strftime_now, a namespace carried across the loop.
LLAMA3_LIKE = """{{- bos_token }}
{%- set ns = namespace(turns=0) %}
{%- for message in messages %}
    {%- set role = 'ipython' if message.role == 'tool' else message.role %}
    {%- if role == 'system' %}
        {{- '<|start_header_id|>system<|end_header_id|>\\n\\n' }}
        {{- 'Today: ' + strftime_now('%d %b %Y') + '\\n\\n' }}
    {%- else %}
        {{- '<|start_header_id|>' + role + '<|end_header_id|>\\n\\n' }}
    {%- endif %}
    {{- message.content | trim + '<|eot_id|>' }}
    {%- set ns.turns = ns.turns + 1 %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
{%- endif %}
"""

# Qwen's shape: tool results wrapped and grouped under one user turn,
# `loop.previtem`/`loop.nextitem`, a JSON-encoded value.
QWEN_LIKE = """{%- for message in messages %}
    {%- if message.role == 'tool' %}
        {%- if loop.first or loop.previtem.role != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}
        {%- if loop.last or loop.nextitem.role != 'tool' %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- else %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""


def conversations() -> list[list[dict[str, object]]]:
    """What Forge sends for runs at several points: the tool prompt, a call
    and its result, two results in a row, a nudge, replayed reasoning."""
    system = Message(MessageRole.SYSTEM, "Book travel and shop.", MessageType.SYSTEM_PROMPT)
    user = Message(
        MessageRole.USER, 'Book 2 seats Oslo → Rome, "window" please.', MessageType.USER_INPUT
    )
    call = Message(
        MessageRole.ASSISTANT,
        "",
        MessageType.TOOL_CALL,
        tool_calls=[
            ToolCallInfo("c1", "search_flights", {"origin": "Oslo", "destination": "Rome"})
        ],
    )
    result = Message(
        MessageRole.TOOL,
        '{"flights": [{"id": "SK-4411", "price": 129.5}]}\n',
        MessageType.TOOL_RESULT,
        tool_call_id="c1",
        tool_name="search_flights",
    )
    second = Message(MessageRole.TOOL, "  ok  ", MessageType.TOOL_RESULT, tool_call_id="c2")
    nudge = Message(MessageRole.USER, "Call add_items next.", MessageType.STEP_NUDGE)
    thought = Message(MessageRole.ASSISTANT, "The flight is booked.", MessageType.REASONING)
    runs = [
        [system, user],
        [system, user, call, result],
        [system, user, call, result, second, nudge],
        [system, user, thought, call, result],
    ]
    return [to_chat_messages(m, TOOLS, reasoning_replay="full") for m in runs]


@asynccontextmanager
async def backend_on(
    template: str | None, tmp_path: Path, ctx_size: int = 1024
) -> AsyncIterator[LlamaServerBackend]:
    """A backend on a server of its own with the bundled model, loaded with
    `template` (`--chat-template-file`) or the model's own when None."""
    config = LlamaServerConfig(
        model_path=bundled_model(),
        binary=bundled_binary(),
        ctx_size=ctx_size,
        slots=1,
        warm_up=False,
        prefix_snapshots=False,
    )
    if template is not None:
        path = tmp_path / "template.jinja"
        path.write_text(template)
        config = replace(config, extra_args=["--chat-template-file", str(path)])
    server = ManagedLlamaServer(config)
    await server.start()
    try:
        backend = await LlamaServerBackend.connect(server.url, backend_mode="managed")
        try:
            yield backend
        finally:
            await backend.aclose()
    finally:
        await server.stop()


async def assert_renders_agree(backend: LlamaServerBackend) -> None:
    for messages in conversations():
        ours = await backend.prompts.prompt(messages)
        assert ours == await backend.server_prompt(messages)
    assert backend.prompts.local


async def test_the_bundled_template_renders_here_and_calls_skip_apply_template(
    llama_backend: LlamaServerBackend,
) -> None:
    await assert_renders_agree(llama_backend)
    for _ in range(AUDITED):
        await llama_backend.prompts.prompt(conversations()[1])
    await llama_backend.prompts.audited()
    assert llama_backend.prompts.local
    sent = paths(llama_backend)
    reply = await llama_backend.complete(
        ChatRequest(
            run_id="template-e2e",
            workflow_name="travel",
            messages=[
                Message(MessageRole.SYSTEM, "Book travel and shop.", MessageType.SYSTEM_PROMPT),
                Message(MessageRole.USER, "Add a lamp to the cart.", MessageType.USER_INPUT),
            ],
            tools=TOOLS,
            allowed=["add_items"],
        ),
        None,
    )
    assert isinstance(reply.response, list)
    assert "/completion" in sent and "/apply-template" not in sent


@pytest.mark.parametrize(
    "source", [GEMMA_LIKE, LLAMA3_LIKE, QWEN_LIKE], ids=["gemma-like", "llama3-like", "qwen-like"]
)
async def test_other_families_templates_render_here_as_llama_server_does(
    source: str, tmp_path: Path
) -> None:
    async with backend_on(source, tmp_path) as backend:
        await assert_renders_agree(backend)
