"""PrefixIds: a system prefix learned once, in the background, and sent as
token ids only where its tokens are the ones the whole text gives.

The tokenizer here is a greedy longest-match one over a small vocabulary, so
that a border can be made to merge (`"\\n<"` is one token); the real
llama-server's tokenizer is exercised in tests/e2e/test_prefix_ids_llama.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from forge_core.backends.llama.prefix_ids import FOLLOWS_CHARS, PREFIX_ENTRIES, PrefixIds

BOS = 1
OPENER = "<|im_start|>user\n"


class FakeServer:
    def __init__(self, merges: tuple[str, ...] = ()) -> None:
        self.vocab = {
            piece: 100 + n for n, piece in enumerate(("<|im_start|>", "<|im_end|>", *merges))
        }
        self.renders: list[str] = []
        self.tokenized: list[tuple[str, bool]] = []
        self.refuse = False

    async def render(self, system: dict[str, Any]) -> str:
        if self.refuse:
            raise ConnectionError("not serving")
        self.renders.append(system["content"])
        return f"<|im_start|>system\n{system['content']}<|im_end|>\n"

    async def tokenize(self, text: str, add_special: bool) -> list[int]:
        self.tokenized.append((text, add_special))
        ids = [BOS] if add_special else []
        at = 0
        while at < len(text):
            piece = max(
                (p for p in self.vocab if text.startswith(p, at)), key=len, default=text[at]
            )
            ids.append(self.vocab[piece] if piece in self.vocab else ord(piece))
            at += len(piece)
        return ids


def prompt(system: str, user: str) -> str:
    return (
        f"<|im_start|>system\n{system}<|im_end|>\n{OPENER}{user}<|im_end|>\n<|im_start|>assistant\n"
    )


def system(content: str) -> dict[str, Any]:
    return {"role": "system", "content": content}


async def learned(server: FakeServer, sys_text: str = "You call tools.") -> PrefixIds:
    ids = PrefixIds(server.render, server.tokenize)
    first = prompt(sys_text, "Weather in Paris?")
    assert ids.prompt(system(sys_text), first, '{"tool":') == first + '{"tool":'
    await ids.learned()
    return ids


async def test_a_learned_prefix_goes_as_the_ids_the_whole_text_gives() -> None:
    server = FakeServer()
    ids = await learned(server)
    text = prompt("You call tools.", "And in Rome?")
    sent = ids.prompt(system("You call tools."), text, '{"tool":')
    assert isinstance(sent, list) and isinstance(sent[-1], str)
    head = [t for t in sent[:-1] if isinstance(t, int)]
    assert len(head) == len(sent) - 1
    # The same tokens as the whole text: the prefix's, then the rest's alone.
    assert head + await server.tokenize(sent[-1], False) == await server.tokenize(
        text + '{"tool":', True
    )
    assert sent[-1].startswith(OPENER) and ids.sent == 1
    # Learned once: later prompts ask nothing more of the server.
    asked = len(server.tokenized)
    ids.prompt(system("You call tools."), prompt("You call tools.", "Oslo?"))
    await ids.learned()
    assert len(server.tokenized) == asked and server.renders == ["You call tools."]


async def test_a_border_the_tokenizer_merges_across_is_sent_as_text() -> None:
    server = FakeServer(merges=("\n<",))
    ids = await learned(server)
    text = prompt("You call tools.", "And in Rome?")
    assert ids.prompt(system("You call tools."), text) == text
    assert ids.sent == 0


async def test_a_prompt_that_does_not_start_with_the_prefix_or_goes_on_otherwise_is_text() -> None:
    server = FakeServer()
    ids = await learned(server)
    # Compacted or rewritten: the system text in the prompt is another one.
    other = prompt("You call tools!", "And in Rome?")
    assert ids.prompt(system("You call tools."), other) == other
    # The same prefix, but a turn the checked prompt did not open with.
    head = "<|im_start|>system\nYou call tools.<|im_end|>\n"
    odd = head + "<|im_start|>assistant\nhi<|im_end|>\n"
    assert not odd[len(head) :].startswith(OPENER[:FOLLOWS_CHARS])
    assert ids.prompt(system("You call tools."), odd) == odd
    assert ids.sent == 0


async def test_no_system_message_no_learning() -> None:
    server = FakeServer()
    ids = PrefixIds(server.render, server.tokenize)
    text = prompt("x", "y")
    assert ids.prompt(None, text) == text
    assert ids.prompt({"role": "user", "content": "y"}, text) == text
    await ids.learned()
    assert server.renders == [] and server.tokenized == []


async def test_a_template_that_renders_no_prefix_of_its_own_sends_text() -> None:
    """Gemma's templates fold the system prompt into the first user turn."""
    server = FakeServer()

    async def folded(_: dict[str, Any]) -> str:
        return ""

    ids = PrefixIds(folded, server.tokenize)
    text = prompt("You call tools.", "Paris?")
    ids.prompt(system("You call tools."), text)
    await ids.learned()
    assert ids.prompt(system("You call tools."), text) == text
    assert server.tokenized == []  # nothing to check


async def test_a_server_that_does_not_answer_is_asked_again_and_a_restart_forgets() -> None:
    server = FakeServer()
    server.refuse = True
    ids = PrefixIds(server.render, server.tokenize)
    text = prompt("You call tools.", "Paris?")
    ids.prompt(system("You call tools."), text)
    await ids.learned()
    assert ids.prompt(system("You call tools."), text) == text  # learning again
    server.refuse = False
    await ids.learned()
    assert isinstance(ids.prompt(system("You call tools."), text), list)
    ids.forget()
    assert ids.prompt(system("You call tools."), text) == text
    await ids.aclose()


async def test_a_refusal_is_final_and_asks_nothing_more() -> None:
    """A template that refuses a system-only conversation, say: unlike a
    server that is away, asking again would fail the same way every call."""
    server = FakeServer()
    asked = [0]

    async def refusing(_: dict[str, Any]) -> str:
        asked[0] += 1
        raise ValueError("the template needs a user message")

    ids = PrefixIds(refusing, server.tokenize)
    text = prompt("You call tools.", "Paris?")
    for _ in range(3):
        assert ids.prompt(system("You call tools."), text) == text
        await ids.learned()
    assert asked[0] == 1 and server.tokenized == []


async def test_runs_of_a_new_workflow_at_once_learn_it_once_and_the_cache_is_bounded() -> None:
    server = FakeServer()
    ids = PrefixIds(server.render, server.tokenize)
    text = prompt("You call tools.", "Paris?")
    for _ in range(5):
        ids.prompt(system("You call tools."), text)
    await ids.learned()
    assert server.renders == ["You call tools."]
    for n in range(PREFIX_ENTRIES + 10):
        ids.prompt(system(f"workflow {n}"), prompt(f"workflow {n}", "go"))
        await ids.learned()
    assert len(ids._known) == PREFIX_ENTRIES
    # The oldest went first.
    assert ids.prompt(system("You call tools."), text) == text


async def test_closing_cancels_learning_in_flight() -> None:
    started = asyncio.Event()

    async def slow(_: dict[str, Any]) -> str:
        started.set()
        await asyncio.sleep(60)
        return ""

    ids = PrefixIds(slow, FakeServer().tokenize)
    ids.prompt(system("s"), prompt("s", "u"))
    await started.wait()
    await asyncio.wait_for(ids.aclose(), 5)
    assert not ids._learning


@pytest.mark.parametrize("call", ["", '{"tool": "'])
async def test_the_call_text_follows_the_rest(call: str) -> None:
    ids = await learned(FakeServer())
    text = prompt("You call tools.", "Rome?")
    sent = ids.prompt(system("You call tools."), text, call)
    assert isinstance(sent, list) and isinstance(sent[-1], str) and sent[-1].endswith(call)
