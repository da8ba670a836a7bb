"""Listed values of a closed set (an enum, a boolean) chosen by their whole
likelihood (backends/llama/listed_values.py `likeliest`, piece_requests.py
`score`).

The model here is scripted: `Tokens` answers next-token questions and a
scorer answers whole-value ones, so which of the two decided a value is
visible. tests/e2e/test_whole_values_llama.py scores values on the real
llama-server and model.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from forge_core.backends.llama.listed_values import MAX_SCORED, closed_set
from forge_core.backends.llama.piece_requests import NullOdds, _value_log_prob
from forge_core.backends.llama.pieces import piece_call
from forge_core.piece_grammars import piece_grammars
from forge_core.workflow import ToolSpec
from tests.unit.test_call_pieces import Script, Tokens, _emit_nothing

CITY = ToolSpec(
    "get_weather",
    "",
    {
        "type": "object",
        "properties": {"city": {"enum": ["Osaka", "Oslo", "Rome"]}},
        "required": ["city"],
    },
)
# The first token where the cities part is likeliest for Osaka.
GREEDY = Tokens({'"city": "': [("Osa", 0.6), ("Osl", 0.3), ("Rome", 0.1)]})


class Scorer:
    """Whole-value log-likelihoods by value; records what it was asked."""

    def __init__(self, scores: dict[str, float] | None) -> None:
        self.scores = scores
        self.asked: list[tuple[str, list[str]]] = []

    async def __call__(self, call: str, values: list[str]) -> list[float] | None:
        self.asked.append((call, values))
        if self.scores is None:
            return None
        return [self.scores[v] for v in values]


async def city(
    score: Scorer,
    rng: random.Random | None = None,
    tool: ToolSpec = CITY,
    bound: dict[str, list[Any]] | None = None,
) -> str:
    grammars = piece_grammars(bound=bound)
    made = await piece_call(
        [tool], grammars, Script(), _emit_nothing, 512, GREEDY, rng, score=score
    )
    assert made is not None
    return str(json.loads(made.text)["args"]["city"])


async def test_a_listed_value_is_the_likeliest_whole_value_not_the_likeliest_first_token() -> None:
    """Osaka's first token is the model's favourite, but Oslo as a whole is
    likelier (its later tokens are near certain, Osaka's are not)."""
    score = Scorer({'"Osaka"': -6.0, '"Oslo"': -1.5, '"Rome"': -9.0})
    assert await city(score) == "Oslo"
    call = '{"tool": "get_weather", "args": {"city":'
    assert score.asked == [(call, ['"Osaka"', '"Oslo"', '"Rome"'])]


async def test_values_the_conversation_supplies_go_by_the_greedy_walk() -> None:
    """A free string whose listed values come from the conversation (here
    bound ones) is not scored: every one of them is in the prompt, and how
    rare a string is without it says nothing of which one is meant."""
    free = ToolSpec(
        "get_weather",
        "",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
    score = Scorer({'"Osaka"': -6.0, '"Oslo"': -1.5, '"Rome"': -9.0})
    bound: dict[str, list[Any]] = {"get_weather.city": ["Osaka", "Oslo", "Rome"]}
    assert await city(score, tool=free, bound=bound) == "Osaka" and score.asked == []


def test_a_closed_set_is_one_the_schema_names_in_full() -> None:
    assert closed_set({"enum": ["a", "b"]}) and closed_set({"const": "a"})
    assert closed_set({"type": "boolean"})
    assert not closed_set({"type": "string"}) and not closed_set({"type": "integer"})


async def test_without_scores_the_greedy_walk_decides() -> None:
    assert await city(Scorer(None)) == "Osaka"


async def test_without_a_scorer_the_greedy_walk_decides() -> None:
    """The backend passes no scorer unless --member-choice likelihood."""
    made = await piece_call([CITY], piece_grammars(), Script(), _emit_nothing, 512, GREEDY)
    assert made is not None and json.loads(made.text)["args"]["city"] == "Osaka"


async def test_a_list_too_long_to_score_goes_by_the_greedy_walk() -> None:
    names = ["Osaka", "Oslo", *(f"Town {i}" for i in range(MAX_SCORED))]
    tool = ToolSpec(
        "get_weather",
        "",
        {"type": "object", "properties": {"city": {"enum": names}}, "required": ["city"]},
    )
    score = Scorer({json.dumps(n): 0.0 for n in names})
    assert await city(score, tool=tool) == "Osaka" and score.asked == []


async def test_sampling_follows_the_scores() -> None:
    """At a temperature above 0 the choice is drawn by the values' own
    probabilities: one a million times likelier is all but always drawn."""
    score = Scorer({'"Osaka"': -20.0, '"Oslo"': -0.1, '"Rome"': -20.0})
    drawn = {await city(score, random.Random(seed)) for seed in range(20)}
    assert drawn == {"Oslo"}


def reply(tokens: list[tuple[int, float]], after: list[tuple[str, float]] | None) -> dict[str, Any]:
    """A `/completion` reply with per-token log-probabilities."""
    probs: list[dict[str, Any]] = [{"id": i, "logprob": lp} for i, lp in tokens]
    if after is not None:
        top = [{"token": t, "logprob": math.log(p)} for t, p in after]
        probs.append({"id": 0, "logprob": top[0]["logprob"], "top_logprobs": top})
    return {"completion_probabilities": probs}


def test_a_values_log_probability_is_its_tokens_and_its_end() -> None:
    out = reply([(7, -0.5), (9, -1.0)], [('",', 0.5), (" and", 0.3), ('"', 0.1)])
    # The end is every token that closes the string: `",` and `"`.
    assert _value_log_prob(out, [7, 9], '"') == pytest.approx(-1.5 + math.log(0.6))
    # A number ends at `,`, `}` or a newline; a space goes on.
    out = reply([(4, -0.2)], [("0", 0.7), ("}", 0.2), (",", 0.05)])
    assert _value_log_prob(out, [4], (",", "}", "\n")) == pytest.approx(-0.2 + math.log(0.25))


def test_a_value_with_no_end_among_the_likeliest_tokens_gets_half_the_least() -> None:
    out = reply([(4, -0.2)], [("0", 0.7), ("5", 0.2)])
    assert _value_log_prob(out, [4], (",", "}")) == pytest.approx(-0.2 + math.log(0.1))


def test_a_reply_that_did_not_write_the_values_tokens_is_not_scored() -> None:
    assert _value_log_prob(reply([(7, -0.5), (8, -1.0)], None), [7, 9], '"') is None
    assert _value_log_prob(reply([(7, -0.5)], None), [7, 9], '"') is None


def test_null_odds_keep_the_latest_entries() -> None:
    odds = NullOdds(entries=2)
    odds.put("call", '"a"', -1.0)
    odds.put("call", '"b"', -2.0)
    assert odds.get("call", ['"a"']) == {'"a"': -1.0}  # now the latest used
    odds.put("call", '"c"', -3.0)
    assert odds.get("call", ['"a"', '"b"', '"c"']) == {'"a"': -1.0, '"c"': -3.0}
    assert odds.get("other call", ['"a"']) == {}
    odds.clear()
    assert odds.get("call", ['"a"']) == {}
