"""Whole values scored on the real llama-server and bundled model
(piece_requests.py `score`): each value's own tokens, held by a grammar of
their ids, read with the model's probabilities before the grammar.
"""

from __future__ import annotations

from typing import Any

import pytest

from forge_core.backends.base import ChatRequest
from forge_core.backends.llama.piece_requests import NullOdds, PieceRequests
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.messages import Message, MessageRole, MessageType
from forge_core.workflow import ToolSpec

pytestmark = pytest.mark.e2e

CALL = '{"tool": "get_weather", "args": {"city":'


def requests_on(
    backend: LlamaServerBackend, city: str, null_odds: NullOdds | None = None
) -> PieceRequests:
    prompt = (
        "You call tools by writing one JSON object.\n"
        f"User: What's the weather in {city} tomorrow?\nAssistant: "
    )
    return PieceRequests(
        backend._completions,
        backend.prefix_ids,
        slot=0,
        system=None,
        prompt=prompt,
        opening_tokens=0,
        temperature=0.0,
        on_chunk=None,
        run_id="whole-values",
        tokenize=backend._tokenize_ids,
        null_odds=null_odds,
    )


async def test_the_city_the_user_named_is_the_likeliest_whole_value(
    llama_backend: LlamaServerBackend,
) -> None:
    """The same three values, scored after three requests: each time the
    city the user named scores best, so the score follows the conversation
    rather than a value the model favours anyway."""
    values = ['"Oslo"', '"Paris"', '"Osaka"']
    for city in ("Oslo", "Paris", "Osaka"):
        scores = await requests_on(llama_backend, city).score(CALL, values)
        assert scores is not None
        best = values[scores.index(max(scores))]
        assert best == f'"{city}"', (city, scores)


async def test_a_values_score_does_not_depend_on_the_others_listed(
    llama_backend: LlamaServerBackend,
) -> None:
    requests = requests_on(llama_backend, "Oslo")
    alone = await requests.score(CALL, ['"Oslo"'])
    among = await requests.score(CALL, ['"Paris"', '"Oslo"', "12"])
    assert alone is not None and among is not None
    # Up to the numerics of a prompt evaluated in other batches (hundredths
    # of a nat); the values part by whole nats.
    assert among[1] == pytest.approx(alone[0], abs=0.1)
    # Every piece of scoring was one `/completion` request, counted as such.
    assert requests.usage.completion_tokens > 0


async def test_odds_without_the_conversation_are_asked_once_per_call_text(
    llama_backend: LlamaServerBackend,
) -> None:
    """The second scoring of the same values after the same call takes
    their odds without a conversation from NullOdds: fewer requests, and
    the same scores."""
    odds = NullOdds()
    values = ['"Oslo"', '"Paris"']
    cold = requests_on(llama_backend, "Oslo", odds)
    first = await cold.score(CALL, values)
    warm = requests_on(llama_backend, "Oslo", odds)
    again = await warm.score(CALL, values)
    assert first is not None and again is not None
    assert again == pytest.approx(first, abs=0.1)
    assert set(odds.get(CALL, values)) == set(values)
    # Only the two requests with the conversation were made the second time.
    assert warm.usage.completion_tokens < cold.usage.completion_tokens


SEATING = ToolSpec(
    "reserve_table",
    "Reserve a table",
    {
        "type": "object",
        "properties": {"area": {"enum": ["inside", "terrace", "bar"]}},
        "required": ["area"],
    },
)


@pytest.mark.parametrize("likelihood", [False, True])
async def test_member_choice_likelihood_scores_each_member_of_an_enum(
    llama_backend: LlamaServerBackend, likelihood: bool
) -> None:
    """With `--member-choice likelihood` the backend scores every member of
    the enum, with and without the conversation: requests whose grammar is
    a member's token ids, and some whose prompt is the call's text alone.
    By default (walk) there are none."""
    llama_backend.member_likelihood = likelihood
    grammars: list[str] = []
    prompts: list[Any] = []
    completions = llama_backend._completions
    post = completions.post

    async def posting(body: dict[str, Any]) -> dict[str, Any]:
        grammars.append(str(body.get("grammar", "")))
        prompts.append(body.get("prompt"))
        return await post(body)

    completions.post = posting  # type: ignore[method-assign]
    reply = await llama_backend.complete(
        ChatRequest(
            run_id=f"member-choice-{likelihood}",
            workflow_name="tables",
            messages=[
                Message(MessageRole.SYSTEM, "Reserve tables.", MessageType.SYSTEM_PROMPT),
                Message(
                    MessageRole.USER, "A table on the terrace, please.", MessageType.USER_INPUT
                ),
            ],
            tools=[SEATING],
            allowed=["reserve_table"],
            temperature=0.0,
        ),
        None,
    )
    assert isinstance(reply.response, list)
    (call,) = reply.response
    assert call.args["area"] in ("inside", "terrace", "bar")
    scoring = [g for g in grammars if "<[" in g]
    alone = [p for p in prompts if isinstance(p, str) and p.startswith('{"tool":')]
    if likelihood:
        # Three members, each with and without the conversation.
        assert len(scoring) == 6 and len(alone) == 3
    else:
        assert scoring == [] and alone == []
