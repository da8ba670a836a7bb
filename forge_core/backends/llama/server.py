"""llama-server (llama.cpp) over its HTTP API.

The model gets the tools in its system prompt and a grammar (grammar.py; a
`response_format` JSON Schema where the grammar cannot express a schema), so
every answer is a well-formed `{"tool", "args"}` object for one of the tools
allowed this turn. A call or a parallel batch is made in pieces over
`/completion` (pieces.py); calls whose pieces come back malformed (and every
call with pieces off) stream from `/v1/chat/completions` under the
whole-call grammar.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from forge_core.backends.base import BackendInfo, BackendReply, ChatRequest
from forge_core.backends.llama.chat_stream import http_error, stream_chat
from forge_core.backends.llama.chat_template import ChatTemplate, LocalPrompts
from forge_core.backends.llama.http_client import CompletionClient, Unavailable
from forge_core.backends.llama.piece_requests import NullOdds, PieceRequests
from forge_core.backends.llama.pieces import OPENING, piece_batch, piece_call
from forge_core.backends.llama.prefix_ids import PrefixIds
from forge_core.backends.llama.prefix_snapshots import PrefixSnapshots, snapshot_key
from forge_core.backends.llama.props import (
    choose_tool_call_mode,
    parse_props,
    read_props,
    resolve_budget,
)
from forge_core.backends.llama.slots import Lease, SlotScheduler
from forge_core.backends.llama.token_guess import guess_tokens
from forge_core.backends.native import STREAM_ATTEMPTS, BrokenStream, with_retries
from forge_core.backends.openai_compat import OpenAICompatBackend
from forge_core.calls import ChunkSink, ChunkType, LLMResponse, StreamChunk, TextResponse, Usage
from forge_core.constraint import tool_call_schema
from forge_core.errors import BackendError, WorkflowCancelledError
from forge_core.grammar import build_grammar, piece_grammars
from forge_core.modes import BudgetMode, ToolCallMode
from forge_core.parsing import parse_response
from forge_core.prompting import to_chat_messages
from forge_core.workflow import ToolSpec

log = logging.getLogger(__name__)

TOKEN_CACHE_ENTRIES = 4096

# Below this share of the context budget, a message's tokens are estimated
# from its length (scaled by what llama-server counted for earlier prompts)
# instead of asked of llama-server: a /tokenize round trip per new message
# costs more than the rest of Forge's work on a model call, and a count far
# from the budget decides nothing. Near it, counts are exact again: at half
# the budget even an estimate a third too low leaves the real count under
# compaction's trigger (context.TRIGGER, 0.75).
EXACT_COUNT_FROM = 0.5
# A supervised server may need a restart: allow a few more tries than
# native.STREAM_ATTEMPTS.
SUPERVISED_EXTRA_ATTEMPTS = 2
# A later call of a run that reused all but this many tokens of the previous
# call's prompt only appended to the conversation: the few it did not reuse
# are where the new text meets the old (the tokenizer may merge across it).
PREFIX_SLACK_TOKENS = 8

# Waits until a restarted llama-server answers health checks again
# (ManagedLlamaServer.wait_ready); TimeoutError when it does not.
WaitReady = Callable[[], Awaitable[None]]


class LlamaServerBackend:
    name = "llama-server"

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        context_budget_tokens: int,
        slots: int,
        budget_mode: str,
        backend_mode: str,
        tool_call_mode: str = ToolCallMode.CONSTRAINED,
        timeout_s: float = 600.0,
        budget_source: str = "",
        kv_cache_type: str = "",
        call_pieces: bool = True,
    ) -> None:
        supported = (ToolCallMode.CONSTRAINED, ToolCallMode.PROMPT, ToolCallMode.NATIVE)
        if tool_call_mode not in supported:
            raise ValueError(f"llama-server tool-call mode {tool_call_mode!r} is not supported")
        tool_call_mode = ToolCallMode(tool_call_mode)
        self._native = _native_backend(
            tool_call_mode, base_url, model, context_budget_tokens, budget_mode, timeout_s
        )
        self.base_url = base_url.rstrip("/")
        self._info = BackendInfo(
            name=self.name,
            model=model,
            context_budget_tokens=context_budget_tokens,
            slots=slots,
            budget_mode=budget_mode,
            backend_mode=backend_mode,
            url=self.base_url,
            tool_call_mode=tool_call_mode,
            budget_source=budget_source,
            kv_cache_type=kv_cache_type,
        )
        self._token_cache: dict[str, int] = {}
        self._framing: tuple[int, int] | None = None
        # Prompt key -> (Forge's exact count, its estimated part), until the
        # server's own count of that prompt arrives (_calibrate).
        self._counted: dict[int, tuple[int, int]] = {}
        # The server's count over Forge's, for exact counts and for estimates.
        self._calibration = 1.0
        self._estimate_scale = 1.0
        # Set for a managed server (supervise): waits until a restarted process
        # is healthy, so in-flight inference retries instead of failing the run.
        self._wait_ready: WaitReady | None = None
        self.scheduler = SlotScheduler(slots)
        # Runs that have had a model call answered (their first call may
        # restore a saved workflow prefix first).
        self._started: set[str] = set()
        self.snapshots: PrefixSnapshots | None = None
        # Whether the server can serve a prompt from the part of a slot's
        # cache it shares (a managed server with --swa-full): then a run whose
        # slot still holds its workflow's prefix needs no snapshot restore.
        self.reuses_prefixes = False
        # Slot -> (the workflow prefix its cache starts with, the prompt tokens
        # of its last call), while its cache has only grown since that prefix
        # was put there; dropped while a call runs on the slot and after any
        # call that failed or was preempted.
        self._slot_prefix: dict[int, tuple[str, int]] = {}
        # Listed values' odds without a conversation, by call text (pieces).
        self.null_odds = NullOdds()
        # Run -> its workflow prefix key (snapshot_key).
        self._run_prefix: dict[str, str] = {}
        # Constrained calls and parallel batches in pieces (pieces.py); off: one
        # grammar for the whole call.
        self.call_pieces = call_pieces
        # A call in pieces chooses an enum's or a boolean's member by its whole
        # likelihood (listed_values.py `likeliest`) rather than by the walk.
        self.member_likelihood = False
        self._open_clients(timeout_s, slots)

    def _open_clients(self, timeout_s: float, slots: int) -> None:
        # One pooled client per backend: a connection per run would cost a
        # TCP handshake on every model call.
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            limits=httpx.Limits(max_connections=max(4, slots * 2)),
        )
        # A call's pieces, the hot path, on a leaner HTTP client (http_client.py).
        self._completions = CompletionClient(
            self.base_url,
            timeout_s=timeout_s,
            connections=max(4, slots * 2),
            refused=http_error,
        )
        # A call in pieces needs the conversation's prompt text: rendered
        # here (chat_template.py) rather than asked of /apply-template per call.
        self.prompts = LocalPrompts(self._load_template, self.server_prompt)
        # The workflow's system prefix of that prompt goes as token ids
        # (prefix_ids.py): llama-server then tokenizes only the rest.
        self.prefix_ids = PrefixIds(
            self._render_prefix, self._tokenize_ids, retry_on=(httpx.TransportError,)
        )

    @classmethod
    async def connect(
        cls,
        base_url: str,
        *,
        budget_mode: str = BudgetMode.BACKEND,
        manual_budget_tokens: int = 0,
        backend_mode: str = "external",
        tool_call_mode: str = ToolCallMode.AUTO,
        kv_cache_type: str = "",
    ) -> LlamaServerBackend:
        """Read the context size, slot count and template caps from /props.

        `kv_cache_type` is only reported (GetServerInfo): what a managed
        server was started with.
        """
        props = await read_props(base_url)
        if tool_call_mode == ToolCallMode.AUTO:
            tool_call_mode = choose_tool_call_mode(props)
        n_ctx, slots, model = parse_props(props)
        budget, source = resolve_budget(n_ctx, budget_mode, manual_budget_tokens, backend_mode)
        return cls(
            base_url,
            model=model,
            context_budget_tokens=budget,
            slots=slots,
            budget_mode=budget_mode,
            backend_mode=backend_mode,
            tool_call_mode=tool_call_mode,
            budget_source=source,
            kv_cache_type=kv_cache_type,
        )

    def info(self) -> BackendInfo:
        return self._info

    def supervise(self, wait_ready: WaitReady) -> None:
        """Run against a supervised server (ManagedLlamaServer.attach): a
        failed call waits for `wait_ready` and is tried a few more times."""
        self._wait_ready = wait_ready

    def queued_runs(self) -> int:
        """Runs waiting for a slot (QueueReporting)."""
        return self.scheduler.waiting

    async def count_tokens(self, request: ChatRequest, retry: bool = True) -> int:
        """Prompt tokens of `request` as llama-server will see them.

        Each rendered message is tokenized by llama-server itself once and
        cached by its text; the chat template's framing per message (and the
        generation prompt) is measured once with /apply-template. In prompt
        and constrained modes the tool descriptions are part of the system
        message, so they are counted too.
        """
        body = {"messages": self._chat_messages(request)}
        try:
            if self._framing is None:
                self._framing = await self._measure_framing()
            per_message, fixed = self._framing
            # System prompts (the workflow's, the same every turn and run)
            # are tokenized once and then known; the turns' messages are
            # estimated unless the count nears the budget.
            known = fixed + per_message * len(body["messages"])
            guessed = 0
            for msg in body["messages"]:
                text = str(msg.get("content") or "")
                if msg.get("role") == "system" or text in self._token_cache:
                    known += await self._tokens(text)
                else:
                    guessed += self._estimate(text)
            budget = self._info.context_budget_tokens
            total = known + guessed * self._estimate_scale
            exact = not budget or total > EXACT_COUNT_FROM * budget
            if exact:
                for msg in body["messages"]:
                    text = str(msg.get("content") or "")
                    if msg.get("role") != "system" and text not in self._token_cache:
                        known += await self._tokens(text)
                guessed = 0
        except httpx.TransportError as exc:
            if self._wait_ready is None or not retry:
                raise BackendError(
                    f"llama-server at {self.base_url} failed: {exc}", retriable=True
                ) from exc
            await self._await_server()
            return await self.count_tokens(request, retry=False)
        self._counted[_prompt_key(body)] = (known, guessed)
        # Tokenizing messages one by one misses merges across their borders,
        # and an estimate is only an estimate: the server's own count of
        # earlier prompts calibrates both away.
        return round(known * self._calibration + guessed * self._estimate_scale)

    def _calibrate(self, body: dict[str, Any], prompt_tokens: int) -> None:
        known, guessed = self._counted.pop(_prompt_key(body), (0, 0))
        if known and prompt_tokens:
            if not guessed:
                self._calibration = prompt_tokens / known
            elif prompt_tokens > known * self._calibration:
                # What the exact part leaves is what the estimate was for.
                self._estimate_scale = (prompt_tokens - known * self._calibration) / guessed
        if len(self._counted) > 64:
            self._counted.clear()

    def _estimate(self, text: str) -> int:
        """`text`'s tokens: exact when llama-server tokenized it before, else
        guessed from its words, digits and symbols (_estimate_scale fits the
        guess to the model's tokenizer)."""
        cached = self._token_cache.get(text)
        if cached is not None:
            return cached
        return guess_tokens(text)

    async def _tokens(self, text: str) -> int:
        cached = self._token_cache.get(text)
        if cached is not None:
            return cached
        resp = await self._http.post("/tokenize", json={"content": text, "add_special": False})
        if resp.status_code == 503:
            raise Unavailable(f"HTTP 503 from /tokenize: {resp.text[:200]}")
        if resp.status_code != 200:
            raise BackendError(
                f"llama-server /tokenize answered HTTP {resp.status_code}",
                status=resp.status_code,
            )
        count = len(resp.json().get("tokens", []))
        if len(self._token_cache) > TOKEN_CACHE_ENTRIES:
            self._token_cache.clear()
        self._token_cache[text] = count
        return count

    async def _measure_framing(self) -> tuple[int, int]:
        """(tokens the template adds per message, tokens added once per prompt)."""
        probe = [{"role": "user", "content": "x"}]
        resp = await self._http.post("/apply-template", json={"messages": probe * 2})
        if resp.status_code == 503:
            raise Unavailable("HTTP 503 from /apply-template")
        two = resp.json().get("prompt", "") if resp.status_code == 200 else ""
        resp = await self._http.post("/apply-template", json={"messages": probe})
        one = resp.json().get("prompt", "") if resp.status_code == 200 else ""
        if not one or not two:
            return 4, 1
        content = await self._tokens("x")
        one_n, two_n = await self._tokens(one), await self._tokens(two)
        per_message = two_n - one_n
        # +1: the BOS token llama-server adds in front of every prompt.
        fixed = one_n - per_message + 1
        return per_message - content, fixed

    async def _load_template(self) -> ChatTemplate | None:
        """The model's template from /props; None (prompts from llama-server)
        where the server gives none. Not answering (503, no connection) raises."""
        resp = await self._http.get("/props")
        if resp.status_code == 503:
            raise Unavailable(f"HTTP 503 from /props: {resp.text[:200]}")
        try:
            props = resp.json() if resp.status_code == 200 else {}
        except ValueError:
            props = {}
        source = props.get("chat_template") if isinstance(props, dict) else None
        if not isinstance(source, str) or not source:
            return None
        return ChatTemplate(
            source, str(props.get("bos_token") or ""), str(props.get("eos_token") or "")
        )

    async def server_prompt(self, messages: list[dict[str, Any]]) -> str:
        resp = await self._http.post("/apply-template", json={"messages": messages})
        if resp.status_code == 503:
            raise Unavailable(f"HTTP 503 from /apply-template: {resp.text[:200]}")
        if resp.status_code != 200:
            raise http_error(resp.status_code, resp.text)
        return str(resp.json()["prompt"])

    async def _render_prefix(self, system: dict[str, Any]) -> str:
        """The prompt's start that holds only the system message."""
        local = self.prompts.head([system])
        if local is not None:
            return local
        resp = await self._http.post(
            "/apply-template", json={"messages": [system], "add_generation_prompt": False}
        )
        if resp.status_code == 503:
            raise Unavailable(f"HTTP 503 from /apply-template: {resp.text[:200]}")
        if resp.status_code != 200:
            raise http_error(resp.status_code, resp.text)
        return str(resp.json()["prompt"])

    async def _tokenize_ids(self, text: str, add_special: bool) -> list[int]:
        resp = await self._http.post(
            "/tokenize", json={"content": text, "add_special": add_special, "parse_special": True}
        )
        if resp.status_code == 503:
            raise Unavailable(f"HTTP 503 from /tokenize: {resp.text[:200]}")
        if resp.status_code != 200:
            raise http_error(resp.status_code, resp.text)
        return [int(t) for t in resp.json().get("tokens", [])]

    async def aclose(self) -> None:
        await self.prefix_ids.aclose()
        await self.prompts.aclose()
        await self._http.aclose()
        await self._completions.aclose()
        if self._native is not None:
            await self._native.aclose()

    def _chat_messages(self, request: ChatRequest) -> list[dict[str, Any]]:
        return to_chat_messages(
            request.messages,
            request.tools,
            parallel=request.parallel,
            reasoning_replay=request.reasoning_replay,
            parameter_docs=request.parameter_docs,
        )

    def request_body(self, request: ChatRequest, constrain: bool = True) -> dict[str, Any]:
        """The `/v1/chat/completions` body; without the whole-call grammar
        when not `constrain` (a call in pieces builds it only if it falls back
        to the whole call: `constrain_body`)."""
        body: dict[str, Any] = {
            "messages": self._chat_messages(request),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "stream": True,
            "cache_prompt": True,
        }
        if constrain:
            self.constrain_body(body, request)
        return body

    def constrain_body(self, body: dict[str, Any], request: ChatRequest) -> None:
        if not self.constrains(request) or "grammar" in body or "response_format" in body:
            return
        allowed = allowed_tools(request)
        grammar = build_grammar(
            allowed,
            parallel=request.parallel,
            min_calls=request.min_calls,
            max_calls=request.max_calls,
            **_value_pools(request),
        )
        if grammar is not None:
            body["grammar"] = grammar
        else:
            # A schema the compact grammar cannot express: let llama-server
            # derive the grammar from the JSON Schema instead.
            schema = tool_call_schema(allowed, parallel=request.parallel)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "tool_call", "schema": schema},
            }

    def constrains(self, request: ChatRequest) -> bool:
        return request.constrained and self._info.tool_call_mode == ToolCallMode.CONSTRAINED

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        """One model call on a slot of the server, rescheduled if preempted."""
        preempted = False
        while True:
            lease = await self.scheduler.acquire(
                request.run_id, request.priority, request.on_queue, preempted, _prefix_key(request)
            )
            work = asyncio.ensure_future(self._complete_on(lease.slot, request, on_chunk))
            stop = asyncio.ensure_future(lease.preempted.wait())
            try:
                await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
                if work.done():
                    return work.result()
                # Preempted: closing the stream makes llama-server stop generating.
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
            finally:
                stop.cancel()
                if work.done():
                    self.scheduler.release(lease)
                else:
                    work.cancel()
                    # Released once the call has stopped, even when this wait
                    # is cancelled again (an ASGI server's cancel scope does
                    # that to a streamed answer's task): a lease never leaks.
                    work.add_done_callback(partial(_release_after, self.scheduler, lease))
                    await asyncio.gather(work, return_exceptions=True)
            log.info("run %s preempted on slot %d", request.run_id, lease.slot)
            if on_chunk is not None:
                await on_chunk(StreamChunk(ChunkType.RETRY))
            if request.cancel_on_preempt:
                raise WorkflowCancelledError(
                    "preempted by higher-priority work (cancel_on_preempt)", preempted=True
                )
            preempted = True

    def forget_run(self, run_id: str) -> None:
        self.scheduler.forget(run_id)
        self._started.discard(run_id)
        self._run_prefix.pop(run_id, None)

    def enable_prefix_snapshots(self, directory: Path | None = None) -> None:
        """Save each workflow's first prompt and restore it for later runs
        (the server needs --slot-save-path; `directory` is it, if local)."""
        self.snapshots = PrefixSnapshots(self._http, directory)

    async def _restore_prefix(self, slot: int, request: ChatRequest, key: str) -> None:
        """Before a run's first call: put its workflow's saved prefix on the slot,
        unless another live run keeps its own conversation there."""
        if self.snapshots is None or not key or not self.snapshots.has(key):
            return
        others = [r for r, s in self.scheduler.affinity.items() if s == slot]
        if any(r != request.run_id for r in others):
            return
        await self.snapshots.restore(slot, key)

    async def _complete_on(
        self, slot: int, request: ChatRequest, on_chunk: ChunkSink | None
    ) -> BackendReply:
        if self._native is not None:
            reply = await self._native.complete(request, on_chunk)
            reply.usage.slot = slot
            return reply
        # In pieces the whole-call grammar is built only if the call falls back
        # to it: it costs more Python than the rest of the call's preparation.
        pieces = self.call_pieces and self.constrains(request)
        body = self.request_body(request, constrain=not pieces)
        # Pinning keeps the run on the slot that holds its KV cache.
        body["id_slot"] = slot
        first = request.run_id not in self._started
        key = snapshot_key(body) if first and self.snapshots is not None else ""
        # Unknown while this call runs; put back only once it has answered.
        held = self._slot_prefix.pop(slot, None)
        if key:
            self._run_prefix[request.run_id] = key
            if self.reuses_prefixes and held is not None and held[0] == key:
                # The slot's cache starts with this workflow's prefix already
                # (the last run there was of this workflow and only appended):
                # llama-server serves the prefix from it, as from a restore.
                assert self.snapshots is not None
                self.snapshots.reused += 1
            else:
                await self._restore_prefix(slot, request, key)
        delta_type = ChunkType.TOOL_CALL_DELTA if self.constrains(request) else ChunkType.TEXT_DELTA
        attempts = STREAM_ATTEMPTS + (SUPERVISED_EXTRA_ATTEMPTS if self._wait_ready else 0)

        async def attempt() -> BackendReply:
            reply = await self._pieces(slot, request, body, on_chunk) if pieces else None
            if reply is None:
                self.constrain_body(body, request)
                reply = await stream_chat(
                    self._http, body, delta_type, on_chunk, self.constrains(request)
                )
            self._calibrate(body, reply.usage.prompt_tokens)
            reply.usage.slot = slot
            if first:
                self._started.add(request.run_id)
                if key and self.snapshots is not None:
                    await self.snapshots.save(slot, key)
            self._note_slot(slot, request.run_id, held, first, reply.usage)
            return reply

        return await with_retries(
            attempt,
            on_chunk,
            retry_on=(httpx.TransportError, BrokenStream),
            fail=lambda exc: BackendError(
                f"llama-server at {self.base_url} failed: {exc}", retriable=True, url=self.base_url
            ),
            log=log,
            what="llama-server stream",
            attempts=attempts,
            before_retry=self._await_server,
        )

    def _note_slot(
        self,
        slot: int,
        run_id: str,
        held: tuple[str, int] | None,
        first: bool,
        usage: Usage,
    ) -> None:
        """After an answered call: whether the slot's cache still starts with
        the run's workflow prefix and has only grown. A run's first call put
        the prefix there (restored, reused or evaluated); a later one keeps it
        when it reused the whole previous prompt of the same run, i.e. nothing
        before it was rewritten (a compaction) or shifted in the cache."""
        key = self._run_prefix.get(run_id, "")
        if not key:
            return
        if first or (
            held is not None
            and held[0] == key
            and usage.cached_prompt_tokens >= held[1] - PREFIX_SLACK_TOKENS
        ):
            self._slot_prefix[slot] = (key, usage.prompt_tokens)

    async def _pieces(
        self, slot: int, request: ChatRequest, body: dict[str, Any], on_chunk: ChunkSink | None
    ) -> BackendReply | None:
        """The call in pieces (pieces.py); None when a piece came back
        malformed and the whole-call grammar must make it."""
        requests = PieceRequests(
            self._completions,
            self.prefix_ids,
            slot=slot,
            system=body["messages"][0] if body["messages"] else None,
            prompt=await self.prompts.prompt(body["messages"]),
            opening_tokens=await self._tokens("[" + OPENING if request.parallel else OPENING),
            temperature=request.temperature,
            on_chunk=on_chunk,
            run_id=request.run_id,
            tokenize=self._tokenize_ids,
            null_odds=self.null_odds,
        )
        grammars = piece_grammars(**_value_pools(request))
        grammars.parallel, grammars.entry_numbers = request.parallel, request.entry_numbers
        grammars.item_context = request.item_context
        grammars.item_segments = request.item_segments
        rng = random.Random() if request.temperature > 0 else None
        tools = allowed_tools(request)
        write = requests.generate, requests.emit, request.max_tokens, requests.next_tokens, rng
        score = requests.score if self.member_likelihood else None
        made = (
            await piece_batch(
                tools,
                grammars,
                *write,
                min_calls=request.min_calls,
                max_calls=request.max_calls,
                score=score,
            )
            if request.parallel
            else await piece_call(tools, grammars, *write, score=score)
        )
        calls = parse_response(made.text, rescue=False).calls if made is not None else None
        if made is None or (not calls and not made.truncated):
            log.info("run %s: a call piece came back malformed; whole-call grammar", request.run_id)
            if on_chunk is not None:
                await on_chunk(StreamChunk(ChunkType.RETRY))
            return None
        if on_chunk is not None:
            await on_chunk(StreamChunk(ChunkType.FINAL))
        self._calibrate(body, requests.first_prompt or 0)
        if requests.first_prompt is None:  # Forge wrote it all: the prompt is still the input.
            requests.usage.prompt_tokens = await self._tokens(requests.prompt)
        response: LLMResponse = calls if calls else TextResponse(made.text)
        return BackendReply(
            response=response, usage=requests.usage, raw_text=made.text, truncated=made.truncated
        )

    async def _await_server(self) -> None:
        """After a failure: wait for a supervised server to come back."""
        # A restarted server holds nothing in its slots.
        self._slot_prefix.clear()
        self.prefix_ids.forget()
        self.null_odds.clear()
        if self._wait_ready is None:
            return
        try:
            await self._wait_ready()
        except TimeoutError as exc:
            # A managed server that died and was not restarted in time.
            raise BackendError(
                f"llama-server at {self.base_url} did not come back", retriable=True
            ) from exc


def _native_backend(
    mode: ToolCallMode,
    base_url: str,
    model: str,
    context_budget_tokens: int,
    budget_mode: str,
    timeout_s: float,
) -> OpenAICompatBackend | None:
    # Native mode is llama-server's OpenAI-compatible tool calling (--jinja
    # templates): the same wire protocol as any OpenAI-compatible server.
    if mode is not ToolCallMode.NATIVE:
        return None
    return OpenAICompatBackend(
        f"{base_url.rstrip('/')}/v1",
        model=model,
        context_budget_tokens=context_budget_tokens,
        budget_mode=budget_mode,
        timeout_s=timeout_s,
    )


def _release_after(scheduler: SlotScheduler, lease: Lease, _: object) -> None:
    scheduler.release(lease)


def _value_pools(request: ChatRequest) -> dict[str, Any]:
    """What a request's grammar bounds values with (build_grammar's and
    piece_grammars' keyword arguments)."""
    return {
        "max_tokens": request.max_tokens,
        "excluded": request.excluded_calls,
        "grounded": request.grounded_values,
        "grounded_formats": request.grounded_formats,
        "grounded_labels": request.grounded_labels,
        "bound": request.bound_values,
        "number_digits": request.number_digits,
        "number_values": request.number_values,
        "unseen_examples": request.unseen_examples,
        "named_values": request.named_values,
        "shaped_values": request.shaped_values,
        "preferred_values": request.preferred_values,
        "preferred_items": request.preferred_items,
        "workflow_name": request.workflow_name,
        "shunned_chars": request.shunned_chars,
        "phones": request.phone_values,
    }


def allowed_tools(request: ChatRequest) -> list[ToolSpec]:
    """The tools this turn may call (all of them when none is singled out)."""
    return [t for t in request.tools if t.name in set(request.allowed)] or request.tools


def _prefix_key(request: ChatRequest) -> str:
    """What every prompt of a workflow starts with: its system prompt and tools."""
    system = request.messages[0].content if request.messages else ""
    return f"{request.workflow_name}\0{system}\0{','.join(t.name for t in request.tools)}"


def _prompt_key(body: dict[str, Any]) -> int:
    return hash(json.dumps(body["messages"], sort_keys=True))
