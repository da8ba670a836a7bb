"""The `/completion` requests of one call made in pieces (pieces.py): each
piece's prompt (the conversation's, its system prefix as token ids, then
Forge's text of the call so far), a streamed piece's deltas, the likeliest
next tokens, and the call's usage summed over its pieces."""

from __future__ import annotations

import json
import logging
from contextlib import aclosing
from typing import Any

from forge_core.backends.llama.chat_stream import add_timings, http_error
from forge_core.backends.llama.http_client import CompletionClient
from forge_core.backends.llama.pieces import Piece
from forge_core.backends.llama.prefix_ids import PrefixIds
from forge_core.backends.native import BrokenStream
from forge_core.calls import ChunkSink, ChunkType, StreamChunk, Usage

log = logging.getLogger(__name__)


class PieceRequests:
    """One call's piece requests on one slot, and what they cost."""

    def __init__(
        self,
        completions: CompletionClient,
        prefix_ids: PrefixIds,
        *,
        slot: int,
        system: dict[str, Any] | None,
        prompt: str,
        opening_tokens: int,
        temperature: float,
        on_chunk: ChunkSink | None,
        run_id: str,
    ) -> None:
        self._completions = completions
        self._prefix_ids = prefix_ids
        self._slot = slot
        self._system = system
        # The conversation as the model reads it: a call that Forge writes
        # without a request (one tool, listed values) still counts it as input.
        self.prompt = prompt
        # The first piece's prompt ends with Forge's opening of the call,
        # which is not the conversation's.
        self._opening_tokens = opening_tokens
        self._temperature = temperature
        self._on_chunk = on_chunk
        self._run_id = run_id
        self.usage = Usage(model_calls=1)
        # The conversation's prompt tokens, from the first piece's timings.
        self.first_prompt: int | None = None

    def _account(self, timings: dict[str, Any]) -> None:
        """The first piece's prompt is the call's prompt; what later pieces
        evaluate anew is Forge's text of the call, so it counts as completion
        (each piece's cached prefix is the same prompt again)."""
        if self.first_prompt is None:
            prompt_n = max(0, int(timings.get("prompt_n", 0)) - self._opening_tokens)
            first = {**timings, "prompt_n": prompt_n}
            self.first_prompt = prompt_n + int(first.get("cache_n", 0))
            add_timings(self.usage, first)
            return
        self.usage.completion_tokens += int(timings.get("prompt_n", 0))
        self.usage.completion_tokens += int(timings.get("predicted_n", 0))
        self.usage.prompt_ms += float(timings.get("prompt_ms", 0.0))
        self.usage.generation_ms += float(timings.get("predicted_ms", 0.0))

    def _body(self, call: str, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "prompt": self._prefix_ids.prompt(self._system, self.prompt, call),
            "cache_prompt": True,
            "id_slot": self._slot,
            **params,
        }

    async def completion(self, call: str, **params: Any) -> dict[str, Any]:
        out = await self._completions.post(self._body(call, params))
        self._account(out.get("timings", {}))
        return out

    async def streamed(self, call: str, **params: Any) -> dict[str, Any]:
        """A completion whose text goes to the client as it comes."""
        text: list[str] = []
        last: dict[str, Any] = {}
        async with aclosing(self._completions.events(self._body(call, params))) as events:
            async for event in events:
                if "error" in event:
                    raise http_error(500, json.dumps(event["error"]))
                if event.get("content"):
                    text.append(event["content"])
                    await self.emit(event["content"])
                if event.get("stop"):
                    last = event
        if not last:
            raise BrokenStream("piece stream ended without its last event")
        self._account(last.get("timings", {}))
        return {**last, "content": "".join(text)}

    async def generate(
        self, call: str, grammar: str, stops: list[str], n_predict: int, stream: bool
    ) -> Piece:
        """One piece the model writes under `grammar` after `call`."""
        streams = stream and self._on_chunk is not None
        ask = self.streamed if streams else self.completion
        out = await ask(
            call,
            grammar=grammar,
            stop=stops,
            n_predict=n_predict,
            temperature=self._temperature,
        )
        log.debug(
            "run %s: after %r, piece %r (%s %r)", self._run_id, call[-40:],
            out.get("content"), out.get("stop_type"), out.get("stopping_word"),
        )  # fmt: skip
        return Piece(
            text=str(out.get("content", "")),
            stop=str(out.get("stop_type", "eos")),
            stopping_word=str(out.get("stopping_word", "")),
            tokens=int(out.get("tokens_predicted", 0)),
            streamed=streams,
        )

    async def next_tokens(self, call: str, k: int) -> list[tuple[str, float]]:
        """The model's k likeliest next tokens after `call`, with their odds."""
        # Probabilities after a top-k of k: llama-server then sorts k
        # tokens, not the whole vocabulary.
        out = await self.completion(
            call,
            n_predict=1,
            n_probs=k,
            post_sampling_probs=True,
            top_k=k,
            top_p=1.0,
            min_p=0.0,
            temperature=1.0,
        )
        probs = (out.get("completion_probabilities") or [{}])[0].get("top_probs", [])
        tokens = [(str(p.get("token", "")), float(p.get("prob", 0.0))) for p in probs]
        log.debug("run %s: after %r, likeliest %s", self._run_id, call[-40:], tokens[:6])
        return tokens

    async def emit(self, piece: str) -> None:
        if self._on_chunk is not None and piece:
            await self._on_chunk(StreamChunk(ChunkType.TOOL_CALL_DELTA, piece))
