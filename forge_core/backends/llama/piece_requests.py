"""The `/completion` requests of one call made in pieces (pieces.py): each
piece's prompt (the conversation's, its system prefix as token ids, then
Forge's text of the call so far), a streamed piece's deltas, the likeliest
next tokens, whole values scored by the model's own probabilities, and the
call's usage summed over its pieces."""

from __future__ import annotations

import json
import logging
import math
from collections import OrderedDict
from contextlib import aclosing
from typing import Any

from forge_core.backends.llama.chat_stream import add_timings, http_error
from forge_core.backends.llama.http_client import CompletionClient
from forge_core.backends.llama.pieces import OPENING, Piece
from forge_core.backends.llama.prefix_ids import PrefixIds, Tokenize
from forge_core.backends.native import BrokenStream
from forge_core.calls import ChunkSink, ChunkType, StreamChunk, Usage

log = logging.getLogger(__name__)

# Tokens looked at after a scored value for how likely it is to end there.
END_TOKENS = 20
# What a value's end is written with: a string's closing quote (alone or
# merged with what follows, `",`), a number's or boolean's next character.
STRING_END = '"'
SCALAR_END = (",", "}", "\n")
# How much of a value's likelihood without the conversation is taken off its
# likelihood with it (`score`): 1 scores what the conversation adds alone.
NULL_WEIGHT = 1.0
# Values' odds without the conversation kept per backend (NullOdds).
NULL_ODDS_ENTRIES = 4096


class NullOdds:
    """Values' log-likelihoods after a call's text alone (no conversation),
    kept for the next call that asks: the same tool and earlier arguments
    give the same text. Bounded; cleared when the server restarts."""

    def __init__(self, entries: int = NULL_ODDS_ENTRIES) -> None:
        self._entries = entries
        self._odds: OrderedDict[tuple[str, str], float] = OrderedDict()

    def get(self, alone: str, values: list[str]) -> dict[str, float]:
        found = {}
        for value in values:
            odds = self._odds.get((alone, value))
            if odds is not None:
                self._odds.move_to_end((alone, value))
                found[value] = odds
        return found

    def put(self, alone: str, value: str, odds: float) -> None:
        self._odds[(alone, value)] = odds
        while len(self._odds) > self._entries:
            self._odds.popitem(last=False)

    def clear(self) -> None:
        self._odds.clear()


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
        tokenize: Tokenize | None = None,
        null_odds: NullOdds | None = None,
    ) -> None:
        self._completions = completions
        self._tokenize = tokenize
        self._null_odds = null_odds
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

    def _account(self, timings: dict[str, Any], later: bool = False) -> None:
        """The first piece's prompt is the call's prompt; what later pieces
        evaluate anew is Forge's text of the call, so it counts as completion
        (each piece's cached prefix is the same prompt again). A request
        without the conversation (`later`) is never the first piece."""
        if self.first_prompt is None and not later:
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

    async def score(self, call: str, values: list[str]) -> list[float] | None:
        """How much likelier the conversation makes each of `values` (compact
        JSON) as the model's next text after `call` and a space: its
        log-likelihood there (`_likelihoods`) less, by NULL_WEIGHT, its
        log-likelihood after the call's own text alone. The difference is
        what the conversation adds: a value the model favours anyway (a
        common city, a short number, a schema's example) gains nothing from
        it, one the request or a result names does. None when a value
        cannot be scored (no tokenizer, a reply without probabilities)."""
        if self._tokenize is None:
            return None
        tokens = []
        for value in values:
            ids = await self._tokenize(
                " " + (value[:-1] if value.startswith('"') else value), False
            )
            if not ids:
                return None
            tokens.append(ids)
        null: list[float] | None = [0.0] * len(values)
        if NULL_WEIGHT:
            # First, so that the slot holds the conversation again after.
            null = await self._null_likelihoods(call, values, tokens)
        scores = await self._likelihoods(call, values, tokens, alone=False)
        if scores is None or null is None:
            return None
        pointwise = [s - NULL_WEIGHT * n for s, n in zip(scores, null, strict=True)]
        scored = list(zip(values, scores, null, strict=True))
        log.debug("run %s: after %r, scored %s", self._run_id, call[-40:], scored)
        return pointwise

    async def _null_likelihoods(
        self, call: str, values: list[str], tokens: list[list[int]]
    ) -> list[float] | None:
        """Each value's log-likelihood after the call's own text alone, from
        the backend's `NullOdds` where it has them: a request without the
        conversation costs the slot its cache of the conversation."""
        alone = call[call.rfind(OPENING) :] if OPENING in call else call
        known = self._null_odds.get(alone, values) if self._null_odds else {}
        missing = [i for i, v in enumerate(values) if v not in known]
        found = await self._likelihoods(
            alone, [values[i] for i in missing], [tokens[i] for i in missing], alone=True
        )
        if found is None:
            return None
        for i, odds in zip(missing, found, strict=True):
            known[values[i]] = odds
            if self._null_odds is not None:
                self._null_odds.put(alone, values[i], odds)
        return [known[v] for v in values]

    async def _likelihoods(
        self, call: str, values: list[str], tokens: list[list[int]], alone: bool
    ) -> list[float] | None:
        """Each value's log-likelihood after `call` (after the conversation
        and `call`, or after `call` alone): the log-probabilities of its
        tokens (held to them by a grammar of their ids, each read before
        the grammar) and of its end."""
        out_of: list[float] = []
        for value, ids in zip(values, tokens, strict=True):
            forced = " ".join(f"<[{i}]>" for i in ids)
            params: dict[str, Any] = {
                # The value's tokens, then any one token: its odds say
                # whether the value ends there.
                "grammar": f"root ::= {forced} [^\\x00]*",
                "n_predict": len(ids) + 1,
                "n_probs": END_TOKENS,
                "post_sampling_probs": False,
                "temperature": 0.0,
            }
            if alone:
                out = await self._completions.post(
                    {"prompt": call, "cache_prompt": True, "id_slot": self._slot, **params}
                )
                self._account(out.get("timings", {}), later=True)
            else:
                out = await self.completion(call, **params)
            score = _value_log_prob(out, ids, STRING_END if value.startswith('"') else SCALAR_END)
            if score is None:
                return None
            out_of.append(score)
        return out_of

    async def emit(self, piece: str) -> None:
        if self._on_chunk is not None and piece:
            await self._on_chunk(StreamChunk(ChunkType.TOOL_CALL_DELTA, piece))


def _value_log_prob(
    out: dict[str, Any], ids: list[int], ends: str | tuple[str, ...]
) -> float | None:
    """The log-probability of `ids` and of an end after them, from a reply
    whose first tokens were held to `ids`; None when the reply lacks them."""
    probs = out.get("completion_probabilities") or []
    if len(probs) < len(ids) or [p.get("id") for p in probs[: len(ids)]] != ids:
        return None
    total = sum(float(p.get("logprob", -math.inf)) for p in probs[: len(ids)])
    if len(probs) == len(ids):
        return total
    after = probs[len(ids)].get("top_logprobs") or []
    odds = [math.exp(float(t.get("logprob", -math.inf))) for t in after]
    ending = sum(
        odd for t, odd in zip(after, odds, strict=True) if str(t.get("token", "")).startswith(ends)
    )
    # No end among the likeliest tokens: at most half the least of them.
    return total + math.log(ending or min(odds, default=1e-6) / 2)
