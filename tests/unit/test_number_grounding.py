"""Numbers the conversation gives (value_pools.number_values) and optional
values it never gave (value_pools.invented_optionals): what a numeric
parameter's grammar offers, and which optional arguments are left to the
tool's default. Guardrail logic on the scripted backend where a loop runs.
"""

from __future__ import annotations

from typing import Any

from forge_core.backends.base import ToolCall
from forge_core.backends.scripted import ScriptedBackend, Turn
from forge_core.grammar import build_grammar
from forge_core.guardrails.value_pools import (
    invented_optionals,
    min_parallel_calls,
    number_values,
    recombined_calls,
)
from forge_core.loop import ToolOutcome, run_workflow
from forge_core.messages import ToolCallInfo
from forge_core.workflow import RunOptions, ToolSpec, Workflow, validate_workflow
from tests.unit.test_choice_guardrails import accepts

INTEREST = ToolSpec(
    "compound_interest",
    "Compound interest of a deposit.",
    {
        "type": "object",
        "properties": {
            "principal": {"type": "integer", "description": "The deposit."},
            "rate": {"type": "number", "description": "The annual interest rate."},
            "yield_pct": {"type": "number", "description": "The yield as a percentage."},
            "years": {"type": "integer", "description": "How long."},
            "n": {"type": "integer", "description": "Times compounded per year.", "default": 1},
        },
        "required": ["principal", "rate", "years"],
    },
)
ATHLETE = ToolSpec(
    "find_athlete",
    "Find an athlete.",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "team": {"type": "string", "description": "The team (optional)."},
            "sport": {"type": "string", "enum": ["basketball", "tennis"]},
            "active": {"type": "boolean"},
            "year": {"type": "integer"},
        },
        "required": ["name"],
    },
)


def workflow(*tools: ToolSpec) -> Workflow:
    wf = Workflow(name="w", tools=list(tools), terminal_tools=[tools[0].name])
    validate_workflow(wf)
    return wf


def test_numbers_written_in_digits_words_and_percentages() -> None:
    text = "A deposit of $2,000 at 3% for two years, and a 5 percent yield."
    choices = number_values(workflow(INTEREST), [text])
    # Integers take the integers (percentages as written); thousands
    # separators are dropped; a default is always there.
    assert choices["compound_interest.principal"].literals == ["2000", "2", "3", "5"]
    assert choices["compound_interest.n"].literals == ["2000", "2", "3", "5", "1"]
    # A rate that is no percentage takes "3%" as 0.03.
    rate = choices["compound_interest.rate"]
    assert rate.literals == ["2000", "2", "0.03", "0.05"]
    # One that says it is a percentage takes 3 and 5 as written.
    pct = choices["compound_interest.yield_pct"]
    assert pct.literals == ["2000", "2", "3", "5"]
    assert number_values(workflow(INTEREST), ["no numbers here"]) == {}


def test_the_grammar_offers_a_numeric_parameter_only_the_numbers_given() -> None:
    choices = number_values(workflow(INTEREST), ["$5000 at 3% for 5 years"])
    grammar = build_grammar([INTEREST], number_values=choices)
    assert grammar is not None
    rate = next(
        line for line in grammar.splitlines() if line.startswith("compound-interest-args-rate ")
    )
    assert rate.split("::=")[1].split(" | ") == [' "5000"', '"5"', '"0.03"']


def test_optional_values_the_conversation_never_gave() -> None:
    text = "Find the basketball player LeBron James, active since 2003."
    numbers = number_values(workflow(ATHLETE), [text])
    args: dict[str, Any] = {
        "name": "LeBron James",
        "team": "NBA",
        "sport": "tennis",
        "active": False,
        "year": 2003,
    }
    # "NBA" is nowhere; the enum choice and the boolean are choices, 2003 was said.
    assert invented_optionals(ATHLETE, args, [text], numbers) == ["team"]
    assert invented_optionals(ATHLETE, {**args, "year": 201}, [text], numbers) == ["team", "year"]
    # A conversation without numbers leaves numbers to the model ("page" 3).
    assert invented_optionals(ATHLETE, {**args, "year": 201}, ["Find LeBron"], {}) == ["team"]
    # Words compared, not characters: "lebron-james" is what was said.
    assert invented_optionals(ATHLETE, {"name": "x", "team": "lebron-james"}, [text], numbers) == []
    # Prose is the model's own writing, not a value to copy.
    note = {"name": "x", "team": "played for three teams in twenty years"}
    assert invented_optionals(ATHLETE, note, [text], numbers) == []
    # Required values are never left out, whatever they are.
    assert invented_optionals(ATHLETE, {"name": "Michael"}, [text], numbers) == []


class Recorder:
    def __init__(self) -> None:
        self.args: list[dict[str, Any]] = []

    async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        self.args += [c.args for c in infos]
        return [ToolOutcome(output="ok") for _ in infos]


async def test_the_loop_leaves_invented_optionals_to_the_default_unless_grounding_is_off() -> None:
    wf = workflow(ATHLETE)
    turn = Turn([ToolCall("find_athlete", {"name": "LeBron James", "team": "NBA", "year": 201})])
    said = "Find LeBron James, who started in 2003."
    for grounding, expected in (
        (True, {"name": "LeBron James"}),
        (False, {"name": "LeBron James", "team": "NBA", "year": 201}),
    ):
        recorder = Recorder()
        result = await run_workflow(
            wf,
            said,
            backend=ScriptedBackend(scripts={"w": [turn]}),
            executor=recorder,
            options=RunOptions(grounding=grounding),
        )
        assert result.terminal_tool == "find_athlete"
        assert recorder.args == [expected]


def test_a_parameter_that_asks_for_a_decimal_takes_the_fraction() -> None:
    rate = ToolSpec(
        "interest",
        "Interest.",
        {
            "type": "object",
            "properties": {
                "rate": {
                    "type": "number",
                    "description": "The rate as a decimal: 5% would be 0.05.",
                }
            },
        },
    )
    assert number_values(workflow(rate), ["at 4%"])["interest.rate"].literals == ["0.04"]


def test_a_number_written_once_fills_one_argument() -> None:
    text = "An initial investment of $20000 at 8% for 5 years."
    numbers = number_values(workflow(INTEREST), [text])
    args = {"principal": 20000, "rate": 0.08, "years": 5, "n": 20000}
    assert invented_optionals(INTEREST, args, [text], numbers) == ["n"]
    twice = "Invest $20000 now and $20000 more each year, at 8% for 5 years."
    numbers = number_values(workflow(INTEREST), [twice])
    assert invented_optionals(INTEREST, args, [twice], numbers) == []


def test_a_nested_object_says_something_and_may_skip_its_first_key() -> None:
    search = ToolSpec(
        "find_homes",
        "Find homes.",
        {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "budget": {
                    "type": "object",
                    "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
                },
            },
        },
    )
    grammar = build_grammar([search])
    assert grammar is not None
    rule = "find-homes-args-budget"
    assert accepts(grammar, rule, '{"min":300000,"max":400000}')
    assert accepts(grammar, rule, '{"max":400000}')  # the first key left out
    assert not accepts(grammar, rule, "{}")  # a budget of nothing
    # The call's own arguments may all be left out.
    assert accepts(grammar, "find-homes-args", "{}")


def test_a_batch_call_that_only_recombines_used_numbers_is_dropped() -> None:
    text = "The gcd of the pairs (45, 60) and (81, 63), please."
    gcd = [
        ("gcd", {"a": 45, "b": 60}),
        ("gcd", {"a": 81, "b": 63}),
        ("gcd", {"a": 45, "b": 81}),  # both numbers already used
        ("lcm", {"a": 45, "b": 60}),  # another tool may take them again
    ]
    assert recombined_calls(gcd, [text]) == [2]
    # A number the request writes twice may fill two calls.
    twice = "Two draws with mean 5, and two more with mean 5 again."
    draws = [("draw", {"mu": 5}), ("draw", {"mu": 5})]
    assert recombined_calls(draws, [twice]) == []
    assert recombined_calls(draws, ["Draw with mean 5."]) == [1]


def test_a_parallel_batch_has_calls_enough_for_the_request_numbers() -> None:
    savings = ToolSpec(
        "savings",
        "Emission savings.",
        {
            "type": "object",
            "properties": {"energy": {"type": "string"}, "months": {"type": "integer"}},
            "required": ["energy", "months"],
        },
    )
    text = "Solar energy for 12 months and wind energy for 8 months."
    assert min_parallel_calls([savings], [text]) == 2
    assert min_parallel_calls([INTEREST], [text]) == 1  # three numbers a call
    # Numbers may be ids where a tool takes one as a string: no minimum.
    transfer = ToolSpec(
        "transfer",
        "Transfer money.",
        {
            "type": "object",
            "properties": {"amount": {"type": "number"}, "account_id": {"type": "string"}},
            "required": ["amount", "account_id"],
        },
    )
    assert min_parallel_calls([transfer], ["Send $500 from account 12345."]) == 1
    grammar = build_grammar([savings], parallel=True, min_calls=2)
    assert grammar is not None
    root = grammar.splitlines()[0]
    assert root == 'root ::= "[" sp call (sp "," sp call){1,7} sp "]"', root
