"""A reply's free-text message built from the result parts that answer the
user's questions (forge_core/guardrails/reply_messages.py). Pure logic on
a hand-made workflow: no model is needed to say which part of a result
answers "how much do I still owe?"."""

from __future__ import annotations

from typing import Any

from forge_core.guardrails import TurnFacts
from forge_core.guardrails.registry import preferred_values
from forge_core.guardrails.reply_messages import answering_parts, takes_message
from forge_core.workflow import ToolSpec, Workflow

STR: dict[str, Any] = {"type": "string"}
LOOKUP = ToolSpec(
    "get_hire",
    "Look up a hire booking",
    {"type": "object", "properties": {"hire_id": STR}, "required": ["hire_id"]},
)
REPLY = ToolSpec(
    "reply_to_hirer",
    "Reply to the hirer. Ends the task.",
    {
        "type": "object",
        "properties": {"hire_id": STR, "message": STR, "channel": {"enum": ["sms", "email"]}},
        "required": ["hire_id", "message"],
    },
)
RESULT = (
    "HB-2210: marquee 6x9 m, Sat 2026-06-20. Status CONFIRMED.\n"
    "Delivery: Fri 2026-06-19, window 09:00-11:00.\n"
    "Hire 420.00 GBP; deposit paid 100.00 GBP; balance 320.00 GBP due 2026-06-12.\n"
    "Included: six trestle tables and forty chairs.\n"
    "- HB-1875: gazebo, 2025-08-02, completed"
)
REQUEST = (
    "Hi, it's Sam about the marquee for the 20th. When does it arrive, how much do I "
    "still owe, and are the tables included? Not changing anything."
)


def _facts(results: list[tuple[str, str]]) -> TurnFacts:
    wf = Workflow("wf", [LOOKUP, REPLY], terminal_tools=["reply_to_hirer"])
    return TurnFacts(wf, [REQUEST], results, [], [("get_hire", {"hire_id": "HB-2210"})])


def test_the_message_quotes_the_parts_that_answer_each_question() -> None:
    parts = answering_parts([REQUEST], [RESULT], {"HB-2210"})
    assert any("09:00-11:00" in p for p in parts)  # when it arrives
    assert any("balance 320.00 GBP" in p for p in parts)  # what is still owed
    assert any("trestle tables" in p for p in parts)  # what is included
    # Not the record the run never looked up.
    assert not any("HB-1875" in p for p in parts)


def test_a_reply_tool_takes_the_built_message_once_a_result_is_in() -> None:
    assert takes_message("message", STR) and takes_message("reply_body", STR)
    assert not takes_message("channel", {"type": "string", "enum": ["sms"]})
    assert not takes_message("notes", STR)
    got = preferred_values(_facts([("get_hire", RESULT)])).values["reply_to_hirer.message"]
    assert len(got) == 1 and "320.00 GBP" in got[0] and got[0].endswith(".")
    # Before any result there is nothing to quote: the model writes it.
    assert "reply_to_hirer.message" not in preferred_values(_facts([])).values


def test_an_answers_text_quotes_the_lookup_where_no_word_is_shared() -> None:
    from forge_core.guardrails import TurnFacts
    from forge_core.guardrails.registry import preferred_values
    from forge_core.workflow import ToolSpec, Workflow

    lookup = ToolSpec(
        "lookup_train",
        "Live status of a train",
        {"type": "object", "properties": {"code": {"type": "string"}}},
    )
    answer = ToolSpec(
        "answer",
        "Give the final answer: status and a short text",
        {
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["on_time", "delayed"]},
                "text": {"type": "string"},
            },
        },
    )
    wf = Workflow("wf", [lookup, answer], terminal_tools=["answer"])
    result = "GW-204 Bath-Exeter: delayed 12 minutes, new departure 09:42"
    f = TurnFacts(
        wf,
        ["Is GW204 running?"],
        [("lookup_train", result)],
        [],
        [("lookup_train", {"code": "GW204"})],
    )
    # Quoted as the result wrote it, nothing added.
    assert preferred_values(f).values["answer.text"] == [result]
