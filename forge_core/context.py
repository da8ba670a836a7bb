"""Keeping the conversation inside the context budget without losing the
model server's prompt cache.

llama-server reuses its KV cache for the unchanged prefix of a prompt, and
(with `--cache-reuse`) for unchanged chunks after a removed span, by shifting
them. Rewriting old messages in place therefore costs a re-evaluation of
everything after the first edit, while removing whole messages costs almost
nothing. So compaction here:

- removes whole *rounds* (a tool-call message together with every tool
  message answering it), never half of one — the history stays valid for
  every backend's pairing rules;
- fires at 75% of the budget and compacts down to 60% ("larger, rarer
  steps"), so most iterations are pure appends;
- never edits a kept message: the one summary of removed rounds goes at the
  very end of the prompt (deleted and re-appended at the next compaction), and
  shortening tool results in place is the last resort of the last phase.

Strategies: `none`, `sliding_window` (drop the oldest rounds) and `tiered`
(three phases, as in the reference library, adapted to the above).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from forge_core.messages import Message, MessageRole, MessageType
from forge_core.modes import CompactionStrategy

TRIGGER = 0.75
LOW_WATER = 0.60
KEEP_RECENT = 2
TRUNCATE_CHARS = 200

Counter = Callable[[list[Message]], Awaitable[int]]


@dataclass(frozen=True)
class CompactionResult:
    messages: list[Message]
    strategy: str
    phase: int
    tokens_before: int
    tokens_after: int
    messages_before: int


@dataclass(eq=False)  # identity: two units with equal text are still different turns
class _Unit:
    """Messages that stay or go together."""

    kind: str  # system | user | summary | round | blocked | failed | reasoning
    messages: list[Message]


def units_of(messages: list[Message]) -> list[_Unit]:
    units: list[_Unit] = []
    i = 0
    while i < len(messages):
        msg = messages[i]
        if msg.type is MessageType.TOOL_CALL:
            ids = {c.call_id for c in msg.tool_calls}
            group = [msg]
            i += 1
            while i < len(messages) and messages[i].role is MessageRole.TOOL:
                if messages[i].tool_call_id not in ids:
                    break
                group.append(messages[i])
                i += 1
            units.append(_Unit("blocked" if msg.transient else "round", group))
            continue
        if msg.type is MessageType.SYSTEM_PROMPT:
            kind = "system"
        elif msg.type is MessageType.USER_INPUT:
            kind = "user"
        elif msg.type is MessageType.SUMMARY:
            kind = "summary"
        elif msg.type is MessageType.REASONING:
            kind = "reasoning"
        elif msg.role is MessageRole.TOOL:
            # A result whose call is not right before it (odd prior history):
            # it can only go with everything else, never alone.
            kind = "orphan"
        else:
            kind = "failed"
        units.append(_Unit(kind, [msg]))
        i += 1
    return units


def _flatten(units: list[_Unit]) -> list[Message]:
    return [m for u in units for m in u.messages]


class Compactor:
    """Decides when and how to shorten the model's view of the conversation."""

    def __init__(
        self,
        strategy: str,
        budget_tokens: int,
        count: Counter,
        keep_recent: int = KEEP_RECENT,
    ) -> None:
        if strategy not in tuple(CompactionStrategy):
            raise ValueError(f"unknown compaction strategy {strategy!r}")
        self.strategy = CompactionStrategy(strategy)
        self.budget = budget_tokens
        self.count = count
        self.keep_recent = keep_recent

    async def maybe_compact(
        self, messages: list[Message], summary: str
    ) -> tuple[list[Message], CompactionResult | None, int]:
        """(messages to send, what compaction did or None, their token count)."""
        tokens = await self.count(messages)
        if self.strategy is CompactionStrategy.NONE or tokens <= self.budget * TRIGGER:
            return messages, None, tokens
        target = int(self.budget * LOW_WATER)
        if self.strategy is CompactionStrategy.SLIDING_WINDOW:
            out, after = await self._sliding(messages, target)
            phase = 0
        else:
            out, after, phase = await self._tiered(messages, target, summary)
        if after >= tokens:
            # Nothing could be removed profitably: leave the context as it was.
            return messages, None, tokens
        # A copy: the loop keeps appending to the list it sends to the model.
        result = CompactionResult(list(out), self.strategy, phase, tokens, after, len(messages))
        return out, result, after

    def _split(self, messages: list[Message]) -> tuple[list[_Unit], list[_Unit], list[_Unit]]:
        """(head that is never cut, eligible middle, protected recent tail)."""
        units = units_of(messages)
        last_user = max((i for i, u in enumerate(units) if u.kind == "user"), default=-1)
        head_end = 0
        while head_end < len(units) and units[head_end].kind == "system":
            head_end += 1
        rounds_seen = 0
        tail_start = len(units)
        for i in range(len(units) - 1, -1, -1):
            if i <= last_user:
                break
            if units[i].kind == "round":
                rounds_seen += 1
                if rounds_seen > self.keep_recent:
                    break
            tail_start = i
        tail_start = max(tail_start, last_user + 1)
        head = units[:head_end]
        middle = units[head_end:tail_start]
        tail = units[tail_start:]
        return head, middle, tail

    async def _sliding(self, messages: list[Message], target: int) -> tuple[list[Message], int]:
        head, middle, tail = self._split(messages)
        current_user = [u for u in middle if u.kind == "user"][-1:]
        droppable = [u for u in middle if u not in current_user]
        kept = list(middle)
        tokens = await self.count(messages)
        for unit in droppable:
            if tokens <= target:
                break
            kept.remove(unit)
            tokens = await self.count(_flatten(head + kept + tail))
        return _flatten(head + kept + tail), tokens

    async def _tiered(
        self, messages: list[Message], target: int, summary: str
    ) -> tuple[list[Message], int, int]:
        """Three phases, each only *deleting* messages (llama-server shifts the
        cached KV over a deleted span but re-evaluates everything after an
        inserted or edited token), with the one summary appended at the end.
        """
        head, middle, tail = self._split(messages)

        async def measure(units: list[_Unit]) -> tuple[list[Message], int]:
            out = _flatten(units)
            return out, await self.count(out)

        # Phase 1: corrections and failed attempts go; everything else stays put.
        phase1 = head + [u for u in middle if u.kind not in ("blocked", "failed")] + tail
        out, tokens = await measure(phase1)
        if tokens <= target:
            return out, tokens, 1
        phase1_out, phase1_tokens = out, tokens
        # Phase 2: old rounds go, oldest first; the summary of what they did is
        # (re)written at the very end, so nothing before it changes.
        note = _Unit("summary", [Message(MessageRole.USER, summary, MessageType.SUMMARY)])
        kept = [u for u in middle if u.kind not in ("blocked", "failed", "summary")]
        rest = [u for u in tail if u.kind != "summary"]
        for unit in [u for u in kept if u.kind == "round"]:
            kept.remove(unit)
            out, tokens = await measure(head + kept + rest + [note])
            if tokens <= target:
                break
        if tokens >= phase1_tokens:
            # The summary outweighs the little that could be dropped.
            out, tokens = phase1_out, phase1_tokens
        if tokens <= target:
            return out, tokens, 2
        # Phase 3: reasoning, older user turns and leftovers go too; as a last
        # resort the results in the protected rounds are shortened.
        current_user = [u for u in kept if u.kind == "user"][-1:]
        out, tokens = await measure(head + current_user + rest + [note])
        if tokens > target:
            out, tokens = await measure(
                head + current_user + [_truncated(u) for u in rest] + [note]
            )
        if tokens >= phase1_tokens:
            # What phase 3 removes costs less than the summary it adds.
            return phase1_out, phase1_tokens, 1
        return out, tokens, 3


def _truncated(unit: _Unit) -> _Unit:
    messages = [
        replace(m, content=m.content[:TRUNCATE_CHARS] + " …[truncated]")
        if m.type is MessageType.TOOL_RESULT and len(m.content) > TRUNCATE_CHARS + 20
        else m
        for m in unit.messages
    ]
    return _Unit(unit.kind, messages)


def estimate_tokens(messages: list[Message]) -> int:
    """A backend-free estimate (4 characters a token, plus per-message framing)."""
    total = 0
    for m in messages:
        # Kept on the message while its content and calls stay the same
        # objects: the whole conversation is estimated every turn.
        cached = m.__dict__.get("_estimate")
        if cached is not None and cached[0] is m.content and cached[1] == len(m.tool_calls):
            total += cached[2]
            continue
        text = m.content + "".join(c.name + c.arguments_json() for c in m.tool_calls)
        tokens = len(text) // 4 + 4
        m.__dict__["_estimate"] = (m.content, len(m.tool_calls), tokens)
        total += tokens
    return total
