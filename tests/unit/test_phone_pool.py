"""A number the request calls a phone is only a phone's value in the grammar.

"my mobile is 07700 900274" offered `course_code` the phone (and its two
halves) from the grounded pool: the preference had already left it out
(provenance.py), the grammar had not.
"""

from __future__ import annotations

import json

from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.grammar import build_grammar
from forge_core.loop import run_workflow
from forge_core.workflow import ToolSpec, Workflow
from tests.unit.test_choice_guardrails import Executor, accepts

REQUEST = "Two places on the DL1 course please, my mobile is 07700 900274."
BOOK = ToolSpec(
    "book_course",
    "Book places on a course",
    {
        "type": "object",
        "properties": {
            "course_code": {"type": "string"},
            "contact_phone": {"type": "string"},
        },
        "required": ["course_code", "contact_phone"],
    },
)
GROUNDED = ["DL1", "07700 900274", "07700", "900274"]
PHONES = ["07700 900274", "07700", "900274", "07700900274"]


def test_a_labelled_phone_is_no_other_grounded_parameters_value() -> None:
    grammar = build_grammar([BOOK], grounded=GROUNDED, phones=PHONES)
    assert grammar is not None
    code, phone = "book-course-args-course-code", "book-course-args-contact-phone"
    assert accepts(grammar, code, json.dumps("DL1"))
    for value in ("07700 900274", "07700", "900274"):
        assert not accepts(grammar, code, json.dumps(value)), value
    assert accepts(grammar, phone, json.dumps("07700 900274"))
    # Without the request's label the phone is a candidate like any other.
    unlabelled = build_grammar([BOOK], grounded=GROUNDED)
    assert unlabelled is not None and accepts(unlabelled, code, json.dumps("07700"))


async def test_the_turn_carries_the_phones_the_request_labels() -> None:
    wf = Workflow(name="wf", tools=[BOOK], terminal_tools=["book_course"])
    backend = ScriptedBackend(
        scripts={"wf": [call("book_course", course_code="DL1", contact_phone="07700 900274")]}
    )
    result = await run_workflow(wf, REQUEST, backend=backend, executor=Executor({}))
    assert result.terminal_tool == "book_course"
    assert set(backend.requests[0].phone_values) >= {"07700 900274", "07700", "900274"}
    assert "DL1" not in backend.requests[0].phone_values
