"""A parallel batch is bounded by what the request lists (issue 38):
`listed_calls` counts it, NumberBounds sets ChatRequest.max_calls from it
(never below min_calls), and both the calls in pieces (scripted token
odds, as in test_call_pieces.py) and the whole-call grammar stop there.
"""

from __future__ import annotations

from forge_core.backends.base import ChatRequest
from forge_core.grammar import MAX_CALLS, build_grammar
from forge_core.guardrails.batch_size import listed_calls
from forge_core.guardrails.number_bounds import NumberBounds
from forge_core.messages import Message, MessageRole, MessageType
from forge_core.run_state import RunState
from forge_core.workflow import RunOptions, ToolSpec, Workflow

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
SIZE = {"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]}
FORECAST = ToolSpec("forecast", "The forecast for a city.", CITY)
KILN_LOAD = ToolSpec("kiln_load", "How long a load of this many pots fires.", SIZE)


def test_each_sentence_asks_for_its_parts_or_the_cross_product_of_its_lists() -> None:
    assert listed_calls(["The forecast for Oslo."], MAX_CALLS) == 1
    assert listed_calls(["The forecast for Oslo and Rome."], MAX_CALLS) == 2
    # Two lists of two: 3 parts, up to 4 calls.
    assert listed_calls(["Glaze times for stoneware and porcelain at cone 6 and 10."], 8) == 4
    assert listed_calls(["Fire kiln A. Then fire kiln B and kiln C."], MAX_CALLS) == 3
    # Parentheses keep their commas: one entry.
    assert listed_calls(["Load the kiln (bowls, cups, plates)."], MAX_CALLS) == 1
    # "or", "vs" and "/" set things side by side too.
    assert listed_calls(["The forecast for Oslo or Rome."], MAX_CALLS) == 2
    assert listed_calls(["Oslo vs Rome / Lima."], MAX_CALLS) == 4
    # Ids and numbers listed without a separator: one call each at most.
    assert listed_calls(["Read kilns K-1 K-2 K-3."], MAX_CALLS) == 3


def test_no_bound_without_clear_evidence() -> None:
    # A long list: 4 parts may be three lists of two, already the cap.
    assert listed_calls(["Oslo, Rome, Lima and Pune."], MAX_CALLS) == 0
    # Words that multiply by what came before.
    assert listed_calls(["Prices in Oslo and Rome. Stock in each city."], MAX_CALLS) == 0
    assert listed_calls(["Fire both kilns."], MAX_CALLS) == 0
    assert listed_calls([], MAX_CALLS) == 0
    # Sentences that add up to the cap set none below it.
    assert listed_calls(["A and B, C. D and E, F."], MAX_CALLS) == 0


def _shaped(tool: ToolSpec, text: str, parallel: bool = True) -> ChatRequest:
    wf = Workflow(name="studio", tools=[tool], terminal_tools=[])
    run = RunState(wf, RunOptions(), "run-1")
    run.transcript.append(Message(MessageRole.USER, text, MessageType.USER_INPUT))
    request = ChatRequest(run.run_id, wf.name, list(run.transcript), wf.tools, allowed=[])
    request.parallel = parallel
    NumberBounds().shape(run, request)
    return request


def test_number_bounds_sets_max_calls_from_the_listing_never_below_min_calls() -> None:
    assert _shaped(FORECAST, "The forecast for Oslo and Rome.").max_calls == 2
    assert _shaped(FORECAST, "The forecast for Oslo, Rome, Lima and Pune.").max_calls == 0
    # Not a parallel turn: no bound.
    assert _shaped(FORECAST, "The forecast for Oslo.", parallel=False).max_calls == 0
    # One sentence, one part, but three numbers for a one-number tool: the
    # numbers' minimum wins over the listing.
    request = _shaped(KILN_LOAD, "Fire loads of 12 pots 30 pots 45 pots.")
    assert request.min_calls == 3 and request.max_calls == 3


def test_the_whole_call_grammar_stops_at_max_calls() -> None:
    def root(min_calls: int = 1, max_calls: int = 0) -> str:
        grammar = build_grammar([FORECAST], parallel=True, min_calls=min_calls, max_calls=max_calls)
        assert grammar is not None
        return grammar.splitlines()[0]

    assert root() == 'root ::= "[" sp call (sp "," sp call){0,7} sp "]"'
    assert root(max_calls=2) == 'root ::= "[" sp call (sp "," sp call){0,1} sp "]"'
    assert root(min_calls=2, max_calls=3) == 'root ::= "[" sp call (sp "," sp call){1,2} sp "]"'
    # Never below min_calls.
    assert root(min_calls=3, max_calls=2) == 'root ::= "[" sp call (sp "," sp call){2,2} sp "]"'
