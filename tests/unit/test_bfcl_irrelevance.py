"""The BFCL irrelevance bench's case reader and decline classification.

A tiny synthetic wheel-shaped zip stands in for the bfcl-eval wheel (no
network here); no model runs."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from bench.bfcl import DATA, Call, Outcome
from bench.bfcl_irrelevance import declined, irrelevance_record, load_irrelevance, summarize

FUNCTION = {
    "name": "determine_body_mass_index",
    "description": "Calculate body mass index given weight and height.",
    "parameters": {"type": "dict", "properties": {"weight": {"type": "float"}}},
}


def _wheel(tmp_path: Path) -> zipfile.ZipFile:
    rows = [
        {
            "id": "irrelevance_0",
            "question": [[{"role": "user", "content": "Area of a triangle, base 10?"}]],
            "function": [FUNCTION],
        },
        {
            "id": "irrelevance_1",
            "question": [
                [
                    {"role": "system", "content": "You are helpful."},
                    {"role": "user", "content": "Solve x^2 + 2x + 3 = 0."},
                ]
            ],
            "function": [FUNCTION],
        },
    ]
    path = tmp_path / "bfcl.whl"
    with zipfile.ZipFile(path, "w") as z:
        text = "\n".join(json.dumps(r) for r in rows) + "\n"
        z.writestr(f"{DATA}/BFCL_v4_irrelevance.json", text)
    return zipfile.ZipFile(path)


def test_reads_irrelevance_cases_without_answers(tmp_path: Path) -> None:
    with _wheel(tmp_path) as archive:
        cases = load_irrelevance(archive, "irrelevance")
        # A file the wheel lacks is no cases, not an error.
        assert load_irrelevance(archive, "live_irrelevance") == []
    assert [c.id for c in cases] == ["irrelevance_0", "irrelevance_1"]
    assert cases[0].category == "irrelevance"
    assert cases[0].answers == []
    assert cases[0].functions[0]["name"] == "determine_body_mass_index"
    # Only the user's words are the request, not the system message.
    assert cases[1].question == "Solve x^2 + 2x + 3 = 0."


def test_a_respond_ending_without_a_call_is_a_decline() -> None:
    assert declined(Outcome(terminal_tool="respond"))
    # The respond call itself is not a function call.
    assert declined(Outcome(terminal_tool="respond", calls=[Call("respond", {"message": "no"})]))


def test_a_function_call_or_another_ending_is_not_a_decline() -> None:
    call = Call("determine_body_mass_index", {"weight": 70.0})
    assert not declined(Outcome(terminal_tool="determine_body_mass_index", calls=[call]))
    assert not declined(Outcome(terminal_tool="respond", calls=[call]))
    # A failed run (no terminal tool) declined nothing.
    assert not declined(Outcome(failure="max_iterations: ran out"))


def test_summary_counts_declines_per_file(tmp_path: Path) -> None:
    with _wheel(tmp_path) as archive:
        first, second = load_irrelevance(archive, "irrelevance")
    call = Call("determine_body_mass_index", {"weight": 70.0})
    records = [
        irrelevance_record(first, Outcome(terminal_tool="respond")),
        irrelevance_record(second, Outcome(terminal_tool=call.name, calls=[call])),
    ]
    assert [r["declined"] for r in records] == [True, False]
    assert summarize(records)["irrelevance"] == {
        "irrelevance": {"cases": 2, "declined": 1, "failed": 0}
    }
