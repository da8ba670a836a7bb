"""Context compaction (forge_core.context) and how the loop uses it.

The Compactor is driven with a deterministic counter (characters plus a fixed
framing per message), so every threshold below is exact. The property-based
tests generate random but valid histories — the shapes the loop produces:
paired tool rounds, blocked (transient) rounds, text answers with their retry
nudges, reasoning, earlier user turns — and check the invariants every backend
relies on after compaction.
"""

from __future__ import annotations

import math
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge_core.backends.base import ChatRequest
from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.context import (
    KEEP_RECENT,
    LOW_WATER,
    TRIGGER,
    TRUNCATE_CHARS,
    CompactionResult,
    Compactor,
    estimate_tokens,
    units_of,
)
from forge_core.errors import ContextBudgetExceededError
from forge_core.hooks import RunHooks
from forge_core.loop import ToolOutcome, run_workflow
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.workflow import RunOptions, ToolSpec, Workflow, validate_workflow

T = TypeVar("T")

FRAMING = 10
SUMMARY_TEXT = "[Earlier turns were removed. Tools already called: a, b.]"


def size(messages: list[Message]) -> int:
    return sum(
        len(m.content) + sum(len(c.name) + len(c.arguments_json()) for c in m.tool_calls) + FRAMING
        for m in messages
    )


async def char_count(messages: list[Message]) -> int:
    return size(messages)


def drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (the Compactor with `char_count`)
    without an event loop: hypothesis examples stay cheap and loop-free."""
    try:
        coro.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    coro.close()
    raise AssertionError("the coroutine suspended; drive() only runs non-suspending ones")


# --------------------------------------------------------------------------- builders


class History:
    """Builds message lists the way the loop appends them, with unique call ids."""

    def __init__(self, system: str = "You are an agent that completes the task 'wf'.") -> None:
        self.messages: list[Message] = [
            Message(MessageRole.SYSTEM, system, MessageType.SYSTEM_PROMPT)
        ]
        self.seq = 0

    def user(self, text: str) -> Message:
        msg = Message(MessageRole.USER, text, MessageType.USER_INPUT)
        self.messages.append(msg)
        return msg

    def _infos(self, names: list[str]) -> list[ToolCallInfo]:
        infos = []
        for name in names:
            self.seq += 1
            infos.append(ToolCallInfo(f"call_{self.seq}", name, {"n": self.seq}))
        return infos

    def round(self, *results: str, names: list[str] | None = None) -> list[Message]:
        infos = self._infos(names or [f"tool_{i}" for i in range(len(results))])
        group = [Message(MessageRole.ASSISTANT, "", MessageType.TOOL_CALL, tool_calls=infos)]
        group += [
            Message(
                MessageRole.TOOL,
                result,
                MessageType.TOOL_RESULT,
                tool_call_id=info.call_id,
                tool_name=info.name,
            )
            for info, result in zip(infos, results, strict=True)
        ]
        self.messages += group
        return group

    def blocked(
        self, *nudge_texts: str, kind: MessageType = MessageType.STEP_NUDGE
    ) -> list[Message]:
        infos = self._infos([f"tool_{i}" for i in range(len(nudge_texts))])
        group = [
            Message(
                MessageRole.ASSISTANT,
                "",
                MessageType.TOOL_CALL,
                tool_calls=infos,
                transient=True,
            )
        ]
        group += [
            Message(MessageRole.TOOL, text, kind, tool_call_id=i.call_id, tool_name=i.name)
            for i, text in zip(infos, nudge_texts, strict=True)
        ]
        self.messages += group
        return group

    def failed(self, answer: str = "I think it is fine.") -> list[Message]:
        group = [
            Message(MessageRole.ASSISTANT, answer, MessageType.TEXT_RESPONSE),
            Message(MessageRole.USER, "[Retry] Call one of the tools.", MessageType.RETRY_NUDGE),
        ]
        self.messages += group
        return group

    def reasoning(self, text: str) -> Message:
        msg = Message(MessageRole.ASSISTANT, text, MessageType.REASONING)
        self.messages.append(msg)
        return msg


def compact(
    strategy: str, messages: list[Message], budget: int, summary: str = SUMMARY_TEXT
) -> tuple[list[Message], CompactionResult | None, int]:
    return drive(Compactor(strategy, budget, char_count).maybe_compact(messages, summary))


def budget_for(fits: list[Message], full: list[Message]) -> int:
    """A budget at which `fits` is at LOW_WATER and `full` is over TRIGGER."""
    budget = math.ceil(size(fits) / LOW_WATER) + 1
    assert size(full) > budget * TRIGGER, "the fixture is too small for this budget"
    return budget


def types_of(messages: list[Message]) -> list[MessageType]:
    return [m.type for m in messages]


def is_truncation_of(short: Message, original: Message) -> bool:
    return (
        short.type is MessageType.TOOL_RESULT
        and short.tool_call_id == original.tool_call_id
        and short.content == original.content[:TRUNCATE_CHARS] + " …[truncated]"
    )


def shortened(m: Message) -> Message:
    """What phase 3's last resort makes of a message of the protected tail."""
    if m.type is MessageType.TOOL_RESULT and len(m.content) > TRUNCATE_CHARS + 20:
        return replace(m, content=m.content[:TRUNCATE_CHARS] + " …[truncated]")
    return m


def summary_of(text: str = SUMMARY_TEXT) -> Message:
    return Message(MessageRole.USER, text, MessageType.SUMMARY)


def contains(messages: list[Message], msg: Message) -> bool:
    return any(m is msg for m in messages)


def assert_only_deletions(out: list[Message], original: list[Message]) -> None:
    """`out` is `original` with messages deleted: every message is the very same
    object as before, and they are in the same order."""
    at = []
    for msg in out:
        found = [j for j, o in enumerate(original) if o is msg]
        assert found, f"{msg} is not one of the original messages"
        at.append(found[0])
    assert at == sorted(set(at)), "kept messages changed order"


BIG = "x" * 2000


# --------------------------------------------------------------------------- when


def test_nothing_happens_at_or_under_the_trigger() -> None:
    h = History()
    h.user("Report on record 42.")
    h.round(BIG)
    h.round(BIG)
    total = size(h.messages)
    budget = math.ceil(total / TRIGGER)  # total <= 75% of the budget
    for strategy in ("tiered", "sliding_window"):
        out, result, tokens = compact(strategy, h.messages, budget)
        assert result is None
        assert out is h.messages
        assert tokens == total
    # One token over the trigger compacts, when there is something outside the
    # protected recent rounds to remove.
    h.round(BIG)
    total = size(h.messages)
    out, result, _ = compact("tiered", h.messages, math.floor(total / TRIGGER) - 1)
    assert result is not None


def test_compaction_that_cannot_gain_anything_leaves_the_context_alone() -> None:
    short = "x" * (TRUNCATE_CHARS + 20)  # too short to be worth shortening
    for droppable in ([], ["ok"]):
        h = History()
        h.user("Report on record 42.")
        for text in droppable:
            h.round(text)  # dropping it saves less than the summary costs
        h.round(short)
        h.round(short)  # the last two rounds are protected (KEEP_RECENT)
        total = size(h.messages)
        budget = math.floor(total / TRIGGER) - 1
        out, result, tokens = compact("tiered", h.messages, budget)
        assert result is None, droppable
        assert out is h.messages and tokens == total


def test_none_never_changes_anything() -> None:
    h = History()
    h.user("Report on record 42.")
    for _ in range(6):
        h.round(BIG, BIG)
        h.blocked("wrong order")
        h.failed()
    before = list(h.messages)
    out, result, tokens = compact("none", h.messages, 50)
    assert result is None
    assert out is h.messages
    assert h.messages == before
    assert tokens == size(before)


def test_unknown_strategy_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown compaction strategy"):
        Compactor("lru", 1000, char_count)


# --------------------------------------------------------------------------- tiered


def tiered_fixture() -> tuple[History, dict[str, Any]]:
    h = History()
    parts: dict[str, Any] = {}
    parts["user"] = h.user("Report on record 42.")
    parts["r1"] = h.round("a" * 400, "short result")
    parts["blocked"] = h.blocked("[Step] call fetch first", "[Step] not executed")
    parts["failed"] = h.failed("I think it is fine. " * 60)
    parts["r2"] = h.round("b" * 400)
    parts["reasoning"] = h.reasoning("Now I check the last two.")
    parts["r3"] = h.round("c" * 400)
    parts["r4"] = h.round("d" * 400)
    return h, parts


def test_tiered_phase_1_drops_corrections_and_failed_attempts_only() -> None:
    h, p = tiered_fixture()
    expected = [h.messages[0], p["user"], *p["r1"], *p["r2"], p["reasoning"]]
    expected += [*p["r3"], *p["r4"]]
    budget = budget_for(expected, h.messages)

    out, result, tokens = compact("tiered", h.messages, budget)

    assert result is not None and result.phase == 1 and result.strategy == "tiered"
    assert out == expected
    assert tokens == size(out) == result.tokens_after <= int(budget * LOW_WATER)
    assert result.tokens_before == size(h.messages)
    assert result.messages_before == len(h.messages)
    # No correction survives; everything else is the very same object, old
    # results included (phase 1 no longer shortens them).
    assert not any(m.transient for m in out)
    assert all(a is b for a, b in zip(out, expected, strict=True))
    assert out[3].content == "a" * 400
    assert MessageType.SUMMARY not in types_of(out)


def test_tiered_phase_1_only_deletes_messages() -> None:
    """Phase 1 keeps every other message as the very object it was, in the same
    order, and an earlier summary stays where it is: the prompt up to the first
    deleted message is unchanged."""
    h = History()
    h.user("An earlier question.")
    h.round("p" * 300)
    failed_before = h.failed("t" * 1200)
    old_summary = summary_of("[summary one]")
    h.messages.append(old_summary)
    user = h.user("Report on record 42.")
    h.reasoning("Let me look.")
    blocked = h.blocked("[Step] call fetch first " * 20, "[Step] not executed")
    h.round("a" * 300, "short")
    failed_after = h.failed("u" * 1200)
    h.round("b" * 300)
    tail_start = len(h.messages)
    h.blocked("[Prerequisite] fetch first")  # inside the protected tail: it stays
    h.round("c" * 300)
    h.round("d" * 300)
    tail = h.messages[tail_start:]
    removed = [*failed_before, *blocked, *failed_after]
    expected = [m for m in h.messages if not contains(removed, m)]
    budget = budget_for(expected, h.messages)

    out, result, tokens = compact("tiered", h.messages, budget, summary="[summary two]")

    assert result is not None and result.phase == 1
    assert out == expected
    assert_only_deletions(out, h.messages)
    assert [m for m in h.messages if not contains(out, m)] == removed
    assert all(m.transient for m in removed)
    # The earlier summary is neither replaced nor moved.
    assert [m.content for m in out if m.type is MessageType.SUMMARY] == ["[summary one]"]
    summary_at = next(i for i, m in enumerate(out) if m is old_summary)
    assert out[summary_at + 1] is user
    assert all(a is b for a, b in zip(out[-len(tail) :], tail, strict=True))
    assert tokens == size(out) <= int(budget * LOW_WATER)


def test_tiered_keeps_keep_recent_rounds_whatever_their_size() -> None:
    h = History()
    user = h.user("go")
    rounds = [h.round(ch * 3000) for ch in "abcde"]
    tail = [m for r in rounds[-KEEP_RECENT:] for m in r]
    # With room for them, the protected rounds stay exactly as they were.
    expected = [h.messages[0], user, *tail, summary_of()]
    budget = budget_for(expected, h.messages)
    out, result, _ = compact("tiered", h.messages, budget)
    assert result is not None and result.phase == 2
    assert out == expected
    assert all(a is b for a, b in zip(out[2:-1], tail, strict=True))
    # Without room even for them, they still stay: only their results shrink.
    out, result, tokens = compact("tiered", h.messages, 4000)
    assert result is not None and result.phase == 3
    assert out == [h.messages[0], user, *[shortened(m) for m in tail], summary_of()]
    for short, original in zip(out[2:-1], tail, strict=True):
        if original.type is MessageType.TOOL_CALL:
            assert short is original
        else:
            assert is_truncation_of(short, original)
    assert tokens == size(out) <= int(4000 * LOW_WATER)


def test_tiered_phase_2_drops_old_rounds_oldest_first_and_appends_one_summary() -> None:
    h = History()
    user = h.user("Report on record 42.")
    rounds = [h.round(ch * 150) for ch in "abcdefgh"]
    # Rounds a..c go; d..h stay as they were, and the summary comes after them.
    expected = [h.messages[0], user, *[m for r in rounds[3:] for m in r], summary_of()]
    budget = budget_for(expected, h.messages)
    assert size([*expected, *rounds[2]]) > budget * LOW_WATER  # c must go too

    out, result, tokens = compact("tiered", h.messages, budget)

    assert result is not None and result.phase == 2
    assert out == expected
    assert tokens == size(out) == result.tokens_after <= int(budget * LOW_WATER)
    summaries = [i for i, m in enumerate(out) if m.type is MessageType.SUMMARY]
    assert summaries == [len(out) - 1]
    assert out[-1].role is MessageRole.USER and out[-1].content == SUMMARY_TEXT
    assert_only_deletions(out[:-1], h.messages)


def test_tiered_phase_2_only_deletes_before_the_summary() -> None:
    """Everything before the appended summary is an original message object, in
    the original order: phase 2 only deletes (rounds, corrections, the old
    summary) and appends."""
    h = History()
    earlier = h.user("An earlier question.")
    old_round = h.round("p" * 300)
    thinking = h.reasoning("thinking " * 10)
    old_summary = summary_of("[summary one]")
    h.messages.append(old_summary)
    user = h.user("Report on record 42.")
    blocked = h.blocked("[Step] call fetch first")
    rounds = [h.round(ch * 300) for ch in "abcdef"]
    tail_start = len(h.messages)
    h.failed()
    h.reasoning("Almost there.")
    h.round("g" * 300)
    h.blocked("[Step] not yet")
    h.round("h" * 300)
    tail = h.messages[tail_start:]
    # The old round and rounds a, b go, with the correction and the old summary.
    expected = [h.messages[0], earlier, thinking, user]
    expected += [*[m for r in rounds[2:] for m in r], *tail, summary_of("[summary two]")]
    budget = budget_for(expected, h.messages)
    assert size([*expected, *rounds[1]]) > budget * LOW_WATER  # b must go too

    out, result, tokens = compact("tiered", h.messages, budget, summary="[summary two]")

    assert result is not None and result.phase == 2
    assert out == expected
    assert out[-1] == summary_of("[summary two]")
    assert_only_deletions(out[:-1], h.messages)
    gone = [m for m in h.messages if not contains(out, m)]
    assert gone == [*old_round, old_summary, *blocked, *rounds[0], *rounds[1]]
    assert all(a is b for a, b in zip(out[-1 - len(tail) : -1], tail, strict=True))
    assert tokens == size(out) <= int(budget * LOW_WATER)


def test_a_second_compaction_moves_the_summary_to_the_end() -> None:
    h = History()
    user = h.user("Report on record 42.")
    for ch in "abcdefgh":
        h.round(ch * 150)
    budget = 1500
    first, r1, _ = compact("tiered", h.messages, budget, summary="[summary one]")
    assert r1 is not None and r1.phase == 2
    assert first[-1] == summary_of("[summary one]")
    h.messages = list(first)
    for ch in "ijklmn":
        h.round(ch * 150)
    grown = list(h.messages)
    second, r2, tokens = compact("tiered", h.messages, budget, summary="[summary two]")

    assert r2 is not None and r2.phase == 2
    # The first summary is deleted from where it was; the new one comes last.
    assert [m.content for m in second if m.type is MessageType.SUMMARY] == ["[summary two]"]
    assert second[-1] == summary_of("[summary two]")
    assert not contains(second, first[-1])
    assert second[1] is user
    assert tokens == size(second) <= int(budget * LOW_WATER)
    # What the first compaction kept and the second did not drop is untouched,
    # in the same order; the rounds that stayed are the newest ones.
    assert_only_deletions(second[:-1], grown)
    calls = [m for m in grown if m.type is MessageType.TOOL_CALL]
    kept_calls = [m for m in second if m.type is MessageType.TOOL_CALL]
    assert kept_calls and all(
        a is b for a, b in zip(kept_calls, calls[-len(kept_calls) :], strict=True)
    )


def test_a_summary_in_the_protected_tail_is_replaced_not_duplicated() -> None:
    h = History()
    earlier = h.user("An earlier question.")
    for ch in "pqrstu":
        h.round(ch * 150)
    user = h.user("A follow-up question.")
    # Iteration 1 of the new turn: the earlier turn's oldest rounds go, and the
    # summary is appended right after the new input (the end of the prompt).
    first, r1, _ = compact("tiered", h.messages, 1400, summary="[summary one]")
    assert r1 is not None and r1.phase == 2
    assert types_of(first).count(MessageType.SUMMARY) == 1
    assert first[-2] is user and first[-1] == summary_of("[summary one]")
    # Iteration 2: one new round, a large one, after the summary, which is now
    # in the protected tail; the earlier turn must shrink again.
    h.messages = list(first)
    big = h.round("n" * 600)
    grown = list(h.messages)
    second, r2, tokens = compact("tiered", h.messages, 1400, summary="[summary two]")
    assert r2 is not None and r2.phase == 2
    # All of the earlier turn's rounds go; its input stays (phase 2 drops rounds).
    assert second == [h.messages[0], earlier, user, *big, summary_of("[summary two]")]
    assert [m.content for m in second if m.type is MessageType.SUMMARY] == ["[summary two]"]
    assert second[-1] == summary_of("[summary two]")
    assert all(a is b for a, b in zip(second[-1 - len(big) : -1], big, strict=True))
    assert_only_deletions(second[:-1], grown)
    assert tokens == size(second) <= int(1400 * LOW_WATER)


def test_tiered_never_makes_the_context_bigger() -> None:
    h = History()
    user = h.user("Report on record 42.")
    h.round("ok")
    tail = [*h.round("a" * 3000), *h.round("b" * 3000)]
    summary = "[Earlier turns were removed to fit the context (iteration 4). " + (
        "Tools already called successfully: read. Still required: check.]"
    )
    budget = size(h.messages) + 20
    out, result, tokens = compact("tiered", h.messages, budget, summary=summary)
    assert result is not None
    assert tokens <= size(h.messages)
    # Dropping the small round does not pay for the summary; shortening the
    # protected results does.
    assert result.phase == 3
    assert out == [h.messages[0], user, *[shortened(m) for m in tail], summary_of(summary)]
    assert tokens == size(out) < size(h.messages)


def test_tiered_never_ends_bigger_than_its_phase_1() -> None:
    h = History()
    h.user("Report on record 42.")
    h.failed("t" * 2000)  # a long wrong answer: phase 1 drops it
    h.round("z")  # dropping this one saves less than the summary costs
    h.round("x" * 100)
    h.round("y" * 100)  # nothing in the protected rounds is long enough to shorten
    phase1 = [m for m in h.messages if not m.transient]
    budget = 400
    assert int(budget * LOW_WATER) < size(phase1) <= budget < size(h.messages)

    out, result, tokens = compact("tiered", h.messages, budget)

    assert result is not None
    assert tokens <= size(phase1)
    assert out == phase1  # "phase 1's result is used"


def phase_3_fixture(results: int) -> tuple[History, Message, list[Message]]:
    h = History()
    h.user("An earlier question.")
    h.round("old answer " * 10)
    h.reasoning("thinking " * 20)
    user = h.user("Report on record 42.")
    h.reasoning("more thinking " * 20)
    h.failed()
    h.round("e" * 150)
    tail = [*h.round("f" * results), *h.round("g" * results)]
    return h, user, tail


def test_tiered_phase_3_keeps_system_user_the_protected_tail_and_the_summary() -> None:
    h, user, tail = phase_3_fixture(300)
    expected = [h.messages[0], user, *tail, summary_of()]
    budget = budget_for(expected, h.messages)

    out, result, tokens = compact("tiered", h.messages, budget)

    assert result is not None and result.phase == 3
    assert out == expected
    assert out[0] is h.messages[0]
    assert out[1] is user
    # The protected tail fits as it is: nothing is shortened.
    assert all(a is b for a, b in zip(out[2:-1], tail, strict=True))
    assert out[-1] == summary_of()
    assert tokens == size(out) <= int(budget * LOW_WATER)


def test_tiered_phase_3_shortens_protected_results_only_as_a_last_resort() -> None:
    h, user, tail = phase_3_fixture(3000)
    budget = 4000
    assert size([h.messages[0], user, *tail, summary_of()]) > budget * LOW_WATER

    out, result, tokens = compact("tiered", h.messages, budget)

    assert result is not None and result.phase == 3
    assert out == [h.messages[0], user, *[shortened(m) for m in tail], summary_of()]
    assert out[0] is h.messages[0] and out[1] is user
    for short, original in zip(out[2:-1], tail, strict=True):
        if original.type is MessageType.TOOL_CALL:
            assert short is original
        else:
            assert is_truncation_of(short, original)
    assert tokens == size(out) <= int(budget * LOW_WATER)


def test_tiered_phase_3_keeps_only_the_current_input_when_a_question_repeats() -> None:
    h = History()
    h.user("continue")
    h.round("old answer " * 10)
    user = h.user("continue")
    h.round("e" * 150)
    tail = [*h.round("f" * 300), *h.round("g" * 300)]
    expected = [h.messages[0], user, *tail, summary_of()]
    budget = budget_for(expected, h.messages)

    out, result, _ = compact("tiered", h.messages, budget)

    assert result is not None and result.phase == 3
    assert out == expected
    assert types_of(out) == [
        MessageType.SYSTEM_PROMPT,
        MessageType.USER_INPUT,
        *types_of(tail),
        MessageType.SUMMARY,
    ]
    assert out[1] is user
    assert all(a is b for a, b in zip(out[2:-1], tail, strict=True))


def test_tiered_lands_at_or_under_low_water_when_possible() -> None:
    phases = set()
    for budget in range(2000, 20000, 997):
        h = History()
        user = h.user("Report on record 42.")
        for i in range(12):
            h.round(chr(97 + i) * (100 + 300 * (i % 4)), "ok")
            if i % 3 == 0:
                h.blocked("[Prerequisite] fetch first")
        out, result, tokens = compact("tiered", h.messages, budget)
        if result is None:
            assert size(h.messages) <= budget * TRIGGER
            continue
        phases.add(result.phase)
        assert tokens == size(out)
        target = int(budget * LOW_WATER)
        if result.phase == 1:
            assert tokens <= target, (budget, result)
            assert_only_deletions(out, h.messages)
        elif result.phase == 2:
            assert tokens <= target, (budget, result)
            assert out[-1] == summary_of()
            assert_only_deletions(out[:-1], h.messages)
        else:
            # Over LOW_WATER only when nothing else is left to remove or shorten.
            tail = h.messages[-8:]  # the last two rounds and a nudge before
            assert out[0] is h.messages[0] and out[1] is user
            assert out[-1] == summary_of()
            untouched = [h.messages[0], user, *tail, summary_of()]
            if all(a is b for a, b in zip(out[2:-1], tail, strict=True)):
                assert tokens <= target, (budget, result)
            else:
                assert size(untouched) > target
                assert out[2:-1] == [shortened(m) for m in tail]
    assert phases == {2, 3}


# --------------------------------------------------------------------------- sliding window


def test_sliding_window_drops_oldest_units_first() -> None:
    h = History()
    h.user("An earlier question.")
    old = h.round("o" * 800)
    user = h.user("Report on record 42.")
    rounds = [h.round(ch * 800) for ch in "abcdef"]

    budget = 5000
    out, result, tokens = compact("sliding_window", h.messages, budget)

    assert result is not None and result.strategy == "sliding_window" and result.phase == 0
    assert tokens == size(out) <= int(budget * LOW_WATER)
    assert out[0] is h.messages[0]
    assert user in out
    # What is left of the droppable units is a suffix: the oldest went first.
    kept = [m for m in h.messages if any(m is o for o in out)]
    assert kept == out
    assert not any(m in out for m in old)
    dropped_rounds = [r for r in rounds if r[0] not in out]
    assert dropped_rounds == rounds[: len(dropped_rounds)]
    assert len(dropped_rounds) >= 1
    # Nothing was rewritten.
    assert MessageType.SUMMARY not in types_of(out)
    assert all(any(m is o for o in h.messages) for m in out)


def test_sliding_window_never_drops_system_or_current_input() -> None:
    h = History()
    user = h.user("Report on record 42.")
    for ch in "abcdef":
        h.round(ch * 3000)
    out, result, _ = compact("sliding_window", h.messages, 100)
    assert result is not None
    assert out[0] is h.messages[0]
    assert out[1] is user
    # Only the protected tail is left besides them.
    assert len(out) == 2 + 2 * KEEP_RECENT


def test_sliding_window_drops_an_old_input_equal_to_the_current_one() -> None:
    h = History()
    h.user("continue")
    h.round("o" * 800)
    user = h.user("continue")
    for ch in "abcd":
        h.round(ch * 800)
    out, result, _ = compact("sliding_window", h.messages, 100)
    assert result is not None
    assert [m for m in out if m.type is MessageType.USER_INPUT] == [user]
    assert out[1] is user


# --------------------------------------------------------------------------- properties


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    h = History(system=draw(st.text(min_size=1, max_size=300)))
    sizes = st.one_of(st.integers(0, 40), st.integers(41, 400), st.integers(401, 6000))

    def add(kind: str) -> None:
        if kind == "user":
            h.user(draw(st.text(min_size=1, max_size=200)))
        elif kind == "round":
            n = draw(st.integers(1, 3))
            h.round(*[draw(st.sampled_from("abc")) * draw(sizes) for _ in range(n)])
        elif kind == "blocked":
            n = draw(st.integers(1, 3))
            nudge = draw(
                st.sampled_from(
                    [
                        MessageType.STEP_NUDGE,
                        MessageType.PREREQUISITE_NUDGE,
                        MessageType.RETRY_NUDGE,
                    ]
                )
            )
            h.blocked(*["[nudge] " + "n" * draw(st.integers(0, 300)) for _ in range(n)], kind=nudge)
        elif kind == "failed":
            h.failed("t" * draw(sizes))
        elif kind == "reasoning":
            h.reasoning("r" * draw(sizes))

    kinds = st.sampled_from(["round", "round", "round", "blocked", "failed", "reasoning", "user"])
    for kind in draw(st.lists(kinds, max_size=6)):  # earlier turns
        add(kind)
    h.user(draw(st.text(min_size=1, max_size=200)))  # the current input
    for kind in draw(st.lists(kinds.filter(lambda k: k != "user"), max_size=25)):
        add(kind)
    return h.messages


def assert_valid_pairing(messages: list[Message]) -> None:
    """Each TOOL message answers a call of the nearest assistant TOOL_CALL message
    before it, with nothing else in between; each call is answered exactly once."""
    i = 0
    while i < len(messages):
        msg = messages[i]
        if msg.type is MessageType.TOOL_CALL:
            ids = [c.call_id for c in msg.tool_calls]
            j = i + 1
            answered: list[str] = []
            while j < len(messages) and messages[j].role is MessageRole.TOOL:
                assert messages[j].tool_call_id in ids, (i, j, messages[j])
                answered.append(messages[j].tool_call_id)
                j += 1
            assert sorted(answered) == sorted(ids), (i, ids, answered)
            i = j
            continue
        assert msg.role is not MessageRole.TOOL, f"tool message without its call at {i}"
        i += 1


def assert_subsequence(out: list[Message], original: list[Message]) -> None:
    """Every message is one of the original's, in the same order — the very
    object, or a shortened tool result — except a new summary, which can only
    be the last message."""
    pos = -1
    for k, msg in enumerate(out):
        if msg.type is MessageType.SUMMARY and not contains(original, msg):
            assert k == len(out) - 1, f"a new summary at {k} of {len(out)}, not at the end"
            continue
        for j in range(pos + 1, len(original)):
            if msg is original[j] or is_truncation_of(msg, original[j]):
                pos = j
                break
        else:
            raise AssertionError(f"{msg} is not in the original after position {pos}")


def protected_suffix(before: list[Message]) -> list[Message]:
    """Messages every strategy keeps: everything from the KEEP_RECENT-th last
    (unblocked) round after the current input on, summaries aside."""
    last_user = max(i for i, m in enumerate(before) if m.type is MessageType.USER_INPUT)
    calls = [
        i
        for i, m in enumerate(before)
        if i > last_user and m.type is MessageType.TOOL_CALL and not m.transient
    ]
    start = calls[-KEEP_RECENT] if len(calls) >= KEEP_RECENT else last_user + 1
    return [m for m in before[start:] if m.type is not MessageType.SUMMARY]


def check_tiered_phases(
    before: list[Message],
    out: list[Message],
    result: CompactionResult | None,
    budget: int,
    summary: str,
) -> None:
    """What each phase may do, and nothing more."""
    if result is None:
        return
    new = [m for m in out if not contains(before, m)]
    removed = [m for m in before if not contains(out, m)]
    if result.phase == 1:
        # Only deletions, and only of corrections and failed attempts.
        assert new == []
        assert all(m.transient for m in removed), removed
    elif result.phase == 2:
        # Only deletions (rounds, corrections, the old summary) and one summary
        # appended at the very end.
        assert len(new) == 1 and new[0] is out[-1] and out[-1] == summary_of(summary)
        assert not any(
            m.type in (MessageType.SYSTEM_PROMPT, MessageType.USER_INPUT, MessageType.REASONING)
            for m in removed
        ), removed
    else:
        assert result.phase == 3
        # System, current input, the protected tail (without old summaries;
        # shortened only if it did not fit as it is), the new summary.
        current = [m for m in before if m.type is MessageType.USER_INPUT][-1]
        assert out[0] is before[0] and out[1] is current and out[-1] == summary_of(summary)
        kept = out[2:-1]
        originals = [m for m in before if m.type is not MessageType.SUMMARY]
        tail = originals[len(originals) - len(kept) :]
        assert MessageType.USER_INPUT not in types_of(tail)
        if not all(a is b for a, b in zip(kept, tail, strict=True)):
            assert kept == [shortened(m) for m in tail]
            untouched = [out[0], current, *tail, out[-1]]
            assert size(untouched) > int(budget * LOW_WATER)


def check_invariants(
    before: list[Message],
    out: list[Message],
    result: CompactionResult | None = None,
    strategy: str = "none",
    budget: int = 0,
    summary: str = SUMMARY_TEXT,
) -> None:
    assert out[0] is before[0]
    assert out[0].type is MessageType.SYSTEM_PROMPT
    last_user = [m for m in before if m.type is MessageType.USER_INPUT][-1]
    assert any(m is last_user for m in out)
    assert_valid_pairing(out)
    assert_subsequence(out, before)
    assert sum(m.type is MessageType.SUMMARY for m in out) <= 1
    # The protected recent rounds (and whatever follows them) are never dropped;
    # only phase 3's last resort may shorten their results.
    survivors = [m for m in out if m.type is not MessageType.SUMMARY]
    protected = protected_suffix(before)
    assert len(survivors) >= len(protected)
    for kept, original in zip(survivors[len(survivors) - len(protected) :], protected, strict=True):
        assert kept is original or is_truncation_of(kept, original), (kept, original)
    if strategy == "tiered":
        check_tiered_phases(before, out, result, budget, summary)
    else:
        # Nothing new: no summary, nothing shortened.
        assert all(contains(before, m) for m in out)


strategies = st.sampled_from(["none", "sliding_window", "tiered"])
PROPERTY_SETTINGS = settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@PROPERTY_SETTINGS
@given(history=histories(), budget=st.integers(50, 60000), strategy=strategies)
def test_compaction_keeps_histories_valid(
    history: list[Message], budget: int, strategy: str
) -> None:
    assert_valid_pairing(history)  # the generator's own contract
    out, result, tokens = compact(strategy, history, budget)
    check_invariants(history, out, result, strategy, budget)
    assert tokens == size(out)
    if result is not None:
        assert result.tokens_before == size(history)
        assert result.tokens_after == tokens
        assert result.messages_before == len(history)
        assert result.messages == out
    else:
        assert out is history


@PROPERTY_SETTINGS
@given(history=histories(), budget=st.integers(50, 60000), strategy=strategies)
def test_compaction_never_adds_tokens(history: list[Message], budget: int, strategy: str) -> None:
    out, result, tokens = compact(strategy, history, budget)
    # Compaction never makes the model's view bigger, summary included; when it
    # would not make it smaller, it does not happen.
    assert tokens == size(out) <= size(history)
    if result is not None:
        assert tokens < size(history)
    else:
        assert out is history


@PROPERTY_SETTINGS
@given(
    history=histories(),
    more=histories(),
    budget=st.integers(200, 30000),
    strategy=strategies,
)
def test_repeated_compaction_keeps_histories_valid(
    history: list[Message], more: list[Message], budget: int, strategy: str
) -> None:
    """Compact, go on appending (the loop's way), compact again."""
    first, _, _ = compact(strategy, history, budget, summary="[first summary]")
    # The later rounds, with call ids made unique, as the loop would number them.
    rest = [m for m in more[1:] if m.type is not MessageType.USER_INPUT]
    renumbered: list[Message] = []
    for m in rest:
        if m.tool_calls:
            infos = [ToolCallInfo("late_" + c.call_id, c.name, c.args) for c in m.tool_calls]
            renumbered.append(
                Message(m.role, m.content, m.type, tool_calls=infos, transient=m.transient)
            )
        elif m.role is MessageRole.TOOL:
            renumbered.append(
                Message(
                    m.role, m.content, m.type,
                    tool_call_id="late_" + m.tool_call_id, tool_name=m.tool_name,
                )
            )  # fmt: skip
        else:
            renumbered.append(m)
    grown = [*first, *renumbered]
    second, result, tokens = compact(strategy, grown, budget, summary="[second summary]")
    assert second[0] is history[0]
    last_user = [m for m in history if m.type is MessageType.USER_INPUT][-1]
    assert any(m is last_user for m in second)
    # Valid pairing, only deletions (and phase 3's shortening), the protected
    # tail kept, a new summary only at the end, what each phase may do.
    check_invariants(grown, second, result, strategy, budget, summary="[second summary]")
    assert tokens == size(second)
    # A second compaction replaces the summary; it never adds another one.
    assert sum(m.type is MessageType.SUMMARY for m in second) <= 1
    if result is not None and result.phase >= 2:
        assert "[first summary]" not in [m.content for m in second]
    assert tokens <= size(grown)


def test_units_of_keeps_rounds_whole() -> None:
    h = History()
    h.user("go")
    r = h.round("a", "b", "c")
    b = h.blocked("no")
    units = units_of(h.messages)
    assert [u.kind for u in units] == ["system", "user", "round", "blocked"]
    assert units[2].messages == r and units[3].messages == b


def test_estimate_tokens_counts_calls_and_framing() -> None:
    h = History(system="s" * 40)
    h.round("r" * 8)
    tool_call = h.messages[1]
    args = tool_call.tool_calls[0]
    assert estimate_tokens([h.messages[0]]) == 10 + 4
    assert estimate_tokens([tool_call]) == len(args.name + args.arguments_json()) // 4 + 4
    assert estimate_tokens(h.messages) == 14 + estimate_tokens([tool_call]) + 2 + 4


# --------------------------------------------------------------------------- in the loop

WF = "ctx"
LONG_OUTPUT = "row " * 500  # 2000 characters, ~504 estimated tokens


def context_workflow() -> Workflow:
    wf = Workflow(
        name=WF,
        tools=[
            ToolSpec(
                "read",
                "Read a page",
                {"type": "object", "properties": {"page": {"type": "integer"}}},
            ),
            ToolSpec(
                "submit",
                "Submit the answer",
                {"type": "object", "properties": {"answer": {"type": "string"}}},
            ),
        ],
        required_steps=["read"],
        terminal_tools=["submit"],
    )
    validate_workflow(wf)
    return wf


class LongOutputs:
    async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        return [
            ToolOutcome(output=f"page {c.args.get('page')}: {LONG_OUTPUT}")
            if c.name == "read"
            else ToolOutcome(output="submitted")
            for c in calls
        ]


def reading_script(pages: int) -> ScriptedBackend:
    turns = [call("read", page=i) for i in range(1, pages + 1)] + [call("submit", answer="ok")]
    return ScriptedBackend(scripts={WF: turns}, context_budget_tokens=2000)


async def test_the_loop_compacts_what_the_model_sees_but_not_the_transcript() -> None:
    backend = reading_script(8)
    compactions: list[tuple[CompactionResult, int]] = []
    views: list[list[Message]] = []

    async def on_compact(result: CompactionResult, iteration: int) -> None:
        compactions.append((result, iteration))
        views.append(list(result.messages))  # the loop goes on appending to it

    result = await run_workflow(
        context_workflow(),
        "Read the pages, then submit.",
        backend=backend,
        executor=LongOutputs(),
        hooks=RunHooks(on_compact=on_compact),
    )

    assert result.terminal_tool == "submit"
    assert compactions, "a 2000-token budget cannot hold eight 500-token results"
    # The transcript is the whole conversation: every result at full length.
    t = result.transcript
    results = [m for m in t if m.type is MessageType.TOOL_RESULT]
    assert len(results) == 9
    assert all(LONG_OUTPUT in m.content for m in results[:8])
    assert MessageType.SUMMARY not in types_of(t)
    requests: list[ChatRequest] = list(backend.requests)
    assert len(requests) == 9
    for (event, iteration), view in zip(compactions, views, strict=True):
        assert event.strategy == "tiered"
        assert event.tokens_before > 2000 * TRIGGER
        assert event.tokens_after <= 2000 * LOW_WATER
        assert 1 <= iteration <= result.iterations
        # Old rounds go behind a summary at the very end of what the model sees:
        # exactly what the backend received at that iteration.
        assert event.phase == 2
        sent = requests[iteration - 1].messages
        assert sent == view
        assert sent[-1].type is MessageType.SUMMARY
        assert_only_deletions(sent[:-1], t)
    # What the backend received after the first compaction is the compacted view:
    # transcript messages, unchanged and in order, and one summary.
    first = compactions[0][1]
    for req in requests[first - 1 :]:
        assert estimate_tokens(req.messages) <= 2000
        assert len(req.messages) < len(t)
        assert types_of(req.messages).count(MessageType.SUMMARY) == 1
        assert_only_deletions([m for m in req.messages if m.type is not MessageType.SUMMARY], t)
        assert req.messages[0] is t[0] and req.messages[1] is t[1]
        assert_valid_pairing(req.messages)
    for req in requests[: first - 1]:
        assert req.messages == t[: len(req.messages)]


async def test_run_options_budget_caps_the_backends_budget() -> None:
    backend = reading_script(8)
    backend.context_budget_tokens = 100_000
    seen: list[CompactionResult] = []

    async def on_compact(result: CompactionResult, iteration: int) -> None:
        seen.append(result)

    await run_workflow(
        context_workflow(),
        "Read the pages, then submit.",
        backend=backend,
        executor=LongOutputs(),
        options=RunOptions(context_budget_tokens=2000),
        hooks=RunHooks(on_compact=on_compact),
    )
    assert seen
    assert all(r.tokens_after <= 2000 * LOW_WATER or r.phase == 3 for r in seen)


async def test_sliding_window_in_the_loop() -> None:
    backend = reading_script(8)
    seen: list[CompactionResult] = []

    async def on_compact(result: CompactionResult, iteration: int) -> None:
        seen.append(result)

    result = await run_workflow(
        context_workflow(),
        "Read the pages, then submit.",
        backend=backend,
        executor=LongOutputs(),
        options=RunOptions(compaction_strategy="sliding_window"),
        hooks=RunHooks(on_compact=on_compact),
    )
    assert result.terminal_tool == "submit"
    assert seen and all(r.strategy == "sliding_window" for r in seen)
    for req in list(backend.requests)[1:]:
        assert MessageType.SUMMARY not in types_of(req.messages)
        assert_valid_pairing(req.messages)


async def test_without_compaction_the_context_is_never_shortened() -> None:
    # 3 results of ~500 tokens fit a 2000-token budget (over its 75% trigger).
    backend = reading_script(3)
    seen: list[CompactionResult] = []

    async def on_compact(result: CompactionResult, iteration: int) -> None:
        seen.append(result)

    result = await run_workflow(
        context_workflow(),
        "Read the pages, then submit.",
        backend=backend,
        executor=LongOutputs(),
        options=RunOptions(compaction=False),
        hooks=RunHooks(on_compact=on_compact),
    )
    assert result.terminal_tool == "submit"
    assert seen == []
    last = list(backend.requests)[-1]
    assert 2000 * TRIGGER < estimate_tokens(last.messages) <= 2000
    assert last.messages == result.transcript[: len(last.messages)]


async def test_without_compaction_an_overfull_context_fails_the_run() -> None:
    backend = reading_script(8)
    seen: list[CompactionResult] = []

    async def on_compact(result: CompactionResult, iteration: int) -> None:
        seen.append(result)

    with pytest.raises(ContextBudgetExceededError) as info:
        await run_workflow(
            context_workflow(),
            "Read the pages, then submit.",
            backend=backend,
            executor=LongOutputs(),
            options=RunOptions(compaction=False),
            hooks=RunHooks(on_compact=on_compact),
        )
    err = info.value
    assert seen == []
    assert int(err.details["estimated_tokens"]) > 2000
    assert err.details["budget_tokens"] == "2000"
    # It fails before the model call that would not fit: 4 results are too many.
    assert len(backend.requests) == 4
    assert err.iterations == 5
    assert err.usage is not None and err.usage.model_calls == 4
    assert sum(m.type is MessageType.TOOL_RESULT for m in err.transcript) == 4


async def test_compaction_never_fails_a_run_that_fits_without_it() -> None:
    class ShortFirst:
        async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            return [
                ToolOutcome(output="ok" if c.args.get("page") == 1 else LONG_OUTPUT) for c in calls
            ]

    def script() -> ScriptedBackend:
        turns = [call("read", page=1), call("read", page=2), call("read", page=3)]
        return ScriptedBackend(scripts={WF: [*turns, call("submit", answer="ok")]})

    probe = script()
    plain = await run_workflow(
        context_workflow(),
        "Read the pages, then submit.",
        backend=probe,
        executor=ShortFirst(),
        options=RunOptions(compaction=False),
    )
    largest = max(estimate_tokens(r.messages) for r in probe.requests)
    budget = largest + 5
    # Without compaction the run fits this budget...
    again = await run_workflow(
        context_workflow(),
        "Read the pages, then submit.",
        backend=script(),
        executor=ShortFirst(),
        options=RunOptions(compaction=False, context_budget_tokens=budget),
    )
    assert again.terminal_tool == plain.terminal_tool == "submit"
    # ...and with it, it must too.
    result = await run_workflow(
        context_workflow(),
        "Read the pages, then submit.",
        backend=script(),
        executor=ShortFirst(),
        options=RunOptions(context_budget_tokens=budget),
    )
    assert result.terminal_tool == "submit"


async def test_with_compaction_a_context_that_cannot_fit_fails_the_run() -> None:
    # Even phase 3's last resort — the system prompt, the input, the two
    # protected rounds with their results shortened and the summary — needs
    # more than a 150-token budget once there are two rounds.
    backend = reading_script(8)
    backend.context_budget_tokens = 150
    seen: list[CompactionResult] = []

    async def on_compact(result: CompactionResult, iteration: int) -> None:
        seen.append(result)

    with pytest.raises(ContextBudgetExceededError) as info:
        await run_workflow(
            context_workflow(),
            "Read the pages, then submit.",
            backend=backend,
            executor=LongOutputs(),
            hooks=RunHooks(on_compact=on_compact),
        )
    err = info.value
    assert seen and all(r.phase == 3 for r in seen)
    last = seen[-1]
    assert types_of(last.messages) == [
        MessageType.SYSTEM_PROMPT,
        MessageType.USER_INPUT,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
        MessageType.SUMMARY,
    ]
    assert all(
        m.content.endswith(" …[truncated]")
        for m in last.messages
        if m.type is MessageType.TOOL_RESULT
    )
    assert int(err.details["estimated_tokens"]) == last.tokens_after > 150
    assert err.details["budget_tokens"] == "150"
    # It fails before sending a context that does not fit; what was sent did.
    requests = list(backend.requests)
    assert requests and all(estimate_tokens(r.messages) <= 150 for r in requests)
    assert len(requests) == err.iterations - 1
    # The transcript still has every result at full length.
    results = [m for m in err.transcript if m.type is MessageType.TOOL_RESULT]
    assert len(results) == len(requests)
    assert all(LONG_OUTPUT in m.content for m in results)
