"""A workflow's prompt prefix sent to llama-server as token ids.

llama-server tokenizes a text prompt in full on every request, even when its
slot's cache holds all of it: a workflow whose system prompt and tool list run
to 2,600 tokens paid 5 ms per request on these cores, 3.6 ms on an H200 host's
(bench/RESULTS.md §18), for text that never changes. A prompt may also be an
array of token ids and text (`[2, 105, ..., "rest"]`): the ids are taken as
they are and only the text is tokenized. Here each system prompt's rendered
text is tokenized once, in the background, and later requests send it as ids.

The ids must be the very tokens the whole text would give, or the model sees
another prompt and the slot's cache stops matching. That holds where the
tokenizer does not merge across the border: learning checks it on the
prompt it was learned from (the whole prompt's tokens start with the
prefix's, and the rest alone gives the remaining ones, so llama-server adds
nothing, no BOS, no space, to text that follows ids). A prefix that fails a
check, or that the prompt does not start with (a template that folds the
system prompt into the first user turn, as Gemma's does, renders no prefix of
its own), is sent as text, as is a prompt that goes on after the prefix
otherwise than the checked one did.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

# Workflows (system prompts) whose prefixes are kept.
PREFIX_ENTRIES = 64
# Characters after the prefix that must match the checked prompt's: more
# than a token's reach across the border (ChatML's `<|im_start|>user`).
FOLLOWS_CHARS = 16

# The rendered text of a conversation holding only the system message, with
# no generation prompt; raises where the template refuses it.
RenderPrefix = Callable[[dict[str, Any]], Awaitable[str]]
# llama-server's token ids for a text (`add_special`: the BOS it puts first).
Tokenize = Callable[[str, bool], Awaitable[list[int]]]

Prompt = str | list[int | str]


@dataclass(frozen=True, slots=True)
class Prefix:
    text: str
    ids: tuple[int, ...]
    # The characters that followed it in the prompt it was checked on (the
    # template's opening of the next turn): only a prompt that goes on with
    # the same ones is known to split there into the same tokens.
    follows: str


class PrefixIds:
    """System prompt -> its rendered prefix and token ids, learned once."""

    def __init__(
        self,
        render: RenderPrefix,
        tokenize: Tokenize,
        retry_on: tuple[type[BaseException], ...] = (OSError, TimeoutError),
    ) -> None:
        self._render = render
        self._tokenize = tokenize
        # A server that is not answering: learned again at the next request.
        # Any other failure (a template that refuses a system-only
        # conversation, say) sends the prefix as text from then on.
        self._retry_on = retry_on
        # None: this system prompt's prefix cannot be sent as ids.
        self._known: OrderedDict[str, Prefix | None] = OrderedDict()
        self._learning: dict[str, asyncio.Task[None]] = {}
        self.sent = 0

    def prompt(self, system: dict[str, Any] | None, text: str, call: str = "") -> Prompt:
        """The request's prompt for `text + call`: the known prefix as ids and
        the rest as text, or all of it as text (and the prefix learned in the
        background for the next request)."""
        key = _key(system)
        if key is None:
            return text + call
        if key not in self._known:
            self._learn(key, system, text)
            return text + call
        prefix = self._known[key]
        if (
            prefix is None
            or not text.startswith(prefix.text)
            or not text.startswith(prefix.follows, len(prefix.text))
        ):
            return text + call
        self._known.move_to_end(key)
        self.sent += 1
        return [*prefix.ids, text[len(prefix.text) :] + call]

    def forget(self) -> None:
        """After a server restart: another model may answer there."""
        self._known.clear()

    async def learned(self) -> None:
        """Wait for the prefixes being learned."""
        await asyncio.gather(*self._learning.values(), return_exceptions=True)

    async def aclose(self) -> None:
        for task in list(self._learning.values()):
            task.cancel()
        await self.learned()

    def _learn(self, key: str, system: dict[str, Any] | None, text: str) -> None:
        if key in self._learning or system is None:
            return
        task = asyncio.create_task(self._find(key, system, text))
        self._learning[key] = task
        task.add_done_callback(lambda _: self._learning.pop(key, None))

    async def _find(self, key: str, system: dict[str, Any], text: str) -> None:
        try:
            prefix = await self._check(system, text)
        except asyncio.CancelledError:
            raise
        except self._retry_on as exc:
            log.debug("prompt prefix not learned yet: %s", exc)
            return
        except Exception as exc:  # refused: never asked again for this prompt
            log.info("prompt prefix sent as text: %s", exc)
            prefix = None
        self._known[key] = prefix
        while len(self._known) > PREFIX_ENTRIES:
            self._known.popitem(last=False)

    async def _check(self, system: dict[str, Any], text: str) -> Prefix | None:
        head = await self._render(system)
        if not head or len(head) >= len(text) or not text.startswith(head):
            log.info("prompt prefix sent as text: the template does not render it first")
            return None
        ids = await self._tokenize(head, True)
        whole = await self._tokenize(text, True)
        rest = await self._tokenize(text[len(head) :], False)
        if whole[: len(ids)] != ids or whole[len(ids) :] != rest:
            log.info("prompt prefix sent as text: its tokens change where the conversation follows")
            return None
        return Prefix(head, tuple(ids), text[len(head) : len(head) + FOLLOWS_CHARS])


def _key(system: dict[str, Any] | None) -> str | None:
    if system is None or system.get("role") != "system":
        return None
    content = system.get("content")
    return content if isinstance(content, str) and content else None
