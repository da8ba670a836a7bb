"""A workflow's system prefix sent to the real llama-server as token ids.

After a workflow's first call, its calls in pieces send the system prefix as
token ids and the rest as text. What must hold, on the real server and
tokenizer, for the bundled template and for templates of other families
(loaded with `--chat-template-file`) where the prefix has a border of its
own: the ids and the rest give exactly the
tokens the whole text gives (llama-server's `/tokenize` of the whole text),
and the slot's cache, filled by the first call's text prompt, is reused over
the ids (had any token differed, the cache would have been cut there).
A template that folds the system prompt into the first user turn (Gemma's
shape) has no prefix of its own, and one whose border the tokenizer merges
across fails the check: their prompts stay text.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from forge_core.backends.base import ChatRequest
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.messages import Message, MessageRole, MessageType
from tests.e2e.test_chat_template_llama import LLAMA3_LIKE, QWEN_LIKE, backend_on
from tests.e2e.test_grammar_llama import TOOLS
from tests.unit.test_chat_template import GEMMA_LIKE

pytestmark = pytest.mark.e2e

SYSTEM = "Book travel and shop. Use the tools."


def prompts_sent(backend: LlamaServerBackend) -> list[Any]:
    """The `prompt` of every `/completion` request the pieces send from now on."""
    seen: list[Any] = []
    completions = backend._completions
    send = completions._request

    def sending(body: dict[str, Any]) -> AbstractAsyncContextManager[Any]:
        seen.append(body["prompt"])
        return send(body)

    completions._request = sending  # type: ignore[method-assign,assignment]
    return seen


def request(run: str, user: str) -> ChatRequest:
    return ChatRequest(
        run_id=run,
        workflow_name="travel",
        messages=[
            Message(MessageRole.SYSTEM, SYSTEM, MessageType.SYSTEM_PROMPT),
            Message(MessageRole.USER, user, MessageType.USER_INPUT),
        ],
        tools=TOOLS,
        allowed=["add_items"],
        temperature=0.0,
    )


@pytest.mark.parametrize("template", [None, QWEN_LIKE], ids=["bundled", "qwen-like"])
async def test_later_calls_send_the_prefix_as_the_ids_of_the_whole_text(
    template: str | None, tmp_path: Path
) -> None:
    async with backend_on(template, tmp_path, ctx_size=2048) as backend:
        sent = prompts_sent(backend)
        first = await backend.complete(request("run-1", "Add a lamp to the cart."), None)
        assert isinstance(first.response, list), first.raw_text
        # Not learned before the first request; a call in several pieces may
        # send its later pieces as ids once the learning finished meanwhile.
        assert sent and isinstance(sent[0], str)
        await backend.prefix_ids.learned()
        sent.clear()
        before = backend.prefix_ids.sent
        second = await backend.complete(request("run-2", "Add two chairs to the cart."), None)
        assert isinstance(second.response, list), second.raw_text
        assert sent and all(isinstance(p, list) for p in sent)
        assert backend.prefix_ids.sent - before == len(sent)
        (prefix,) = [p for p in backend.prefix_ids._known.values() if p is not None]
        for prompt in sent:
            ids, rest = prompt[:-1], prompt[-1]
            assert ids == list(prefix.ids) and isinstance(rest, str)
            whole = await backend._tokenize_ids(prefix.text + rest, True)
            assert whole == ids + await backend._tokenize_ids(rest, False)
        # The first run's text prompt filled the slot; the second's ids
        # matched it token for token up to where the conversations part.
        assert second.usage.cached_prompt_tokens >= len(prefix.ids)


@pytest.mark.parametrize("template", [GEMMA_LIKE, LLAMA3_LIKE], ids=["gemma-like", "llama3-like"])
async def test_a_prefix_without_a_border_of_its_own_stays_text(
    template: str, tmp_path: Path
) -> None:
    """Gemma's shape renders no prefix of its own. Llama 3's markers are
    plain text to Gemma's tokenizer, and `<|eot_id|><|start_header_id|>`
    has a token across the border (`|`, `><`, `|`)."""
    async with backend_on(template, tmp_path, ctx_size=2048) as backend:
        sent = prompts_sent(backend)
        for run, user in (("run-1", "Add a lamp."), ("run-2", "Add a chair.")):
            reply = await backend.complete(request(run, user), None)
            assert isinstance(reply.response, list), reply.raw_text
            await backend.prefix_ids.learned()
        assert sent and all(isinstance(p, str) for p in sent)
        assert backend.prefix_ids.sent == 0
        assert list(backend.prefix_ids._known.values()) == [None]
