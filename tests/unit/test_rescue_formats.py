"""Unit tests for the rescue path of forge_core.parsing: every tool-call shape
small models produce outside a grammar, and splitting reasoning off first."""

from __future__ import annotations

import json

import pytest

from forge_core.backends.base import ToolCall
from forge_core.parsing import parse_response, parse_tool_calls, split_reasoning

PING = '{"tool": "ping", "args": {}}'


# --------------------------------------------------------------------------- rehearsal form


def test_rehearsal_form() -> None:
    assert parse_tool_calls('fetch[ARGS]{"id": "42"}') == [ToolCall("fetch", {"id": "42"})]


def test_rehearsal_form_inside_prose() -> None:
    reply = 'Let me look it up.\nfetch[ARGS] {"id": "42"}\nThen I will report.'
    assert parse_tool_calls(reply) == [ToolCall("fetch", {"id": "42"})]


def test_two_rehearsed_calls_in_one_message() -> None:
    reply = 'fetch[ARGS]{"id": "1"}\nsubmit[ARGS]{"answer": "done"}'
    assert parse_tool_calls(reply) == [
        ToolCall("fetch", {"id": "1"}),
        ToolCall("submit", {"answer": "done"}),
    ]


def test_rehearsal_braces_inside_json_strings() -> None:
    reply = 'submit[ARGS]{"answer": "a } b { c"} and check[ARGS]{"q": "}{"}'
    assert parse_tool_calls(reply) == [
        ToolCall("submit", {"answer": "a } b { c"}),
        ToolCall("check", {"q": "}{"}),
    ]


def test_rehearsal_with_nested_arguments() -> None:
    reply = 'search[ARGS]{"filters": {"city": "Oslo", "tags": ["a", "b"]}, "limit": 3}'
    assert parse_tool_calls(reply) == [
        ToolCall("search", {"filters": {"city": "Oslo", "tags": ["a", "b"]}, "limit": 3})
    ]


def test_rehearsal_with_non_object_args_is_no_call() -> None:
    assert parse_tool_calls("fetch[ARGS][1, 2]") is None
    assert parse_tool_calls("fetch[ARGS] nothing here") is None


# --------------------------------------------------------------------------- Qwen XML


QWEN_ONE = (
    "<tool_call>\n"
    "<function=search>\n"
    "<parameter=city>\nParis\n</parameter>\n"
    "<parameter=limit>\n5\n</parameter>\n"
    "<parameter=exact>\ntrue\n</parameter>\n"
    '<parameter=filters>\n{"min": 1.5, "tags": ["x"]}\n</parameter>\n'
    '<parameter=quoted>\n"10"\n</parameter>\n'
    "</function>\n"
    "</tool_call>"
)


def test_qwen_xml_inside_tool_call_wrapper() -> None:
    assert parse_tool_calls(QWEN_ONE) == [
        ToolCall(
            "search",
            {
                # Not valid JSON: kept as the (stripped) string.
                "city": "Paris",
                # JSON-decoded where possible.
                "limit": 5,
                "exact": True,
                "filters": {"min": 1.5, "tags": ["x"]},
                "quoted": "10",
            },
        )
    ]


def test_qwen_xml_multiple_functions_in_order() -> None:
    reply = (
        "I'll do both.\n"
        "<tool_call>\n<function=fetch>\n<parameter=id>\nabc\n</parameter>\n</function>\n"
        "</tool_call>\n"
        "<tool_call>\n<function=ping>\n</function>\n</tool_call>"
    )
    assert parse_tool_calls(reply) == [ToolCall("fetch", {"id": "abc"}), ToolCall("ping", {})]


def test_qwen_xml_multiline_string_value() -> None:
    reply = "<function=note><parameter=text>line one\nline two</parameter></function>"
    assert parse_tool_calls(reply) == [ToolCall("note", {"text": "line one\nline two"})]


def test_qwen_xml_null_value_is_json_decoded() -> None:
    reply = "<function=fetch><parameter=cursor>null</parameter></function>"
    assert parse_tool_calls(reply) == [ToolCall("fetch", {"cursor": None})]


# --------------------------------------------------------------------------- Mistral


def test_mistral_named_form() -> None:
    assert parse_tool_calls('[TOOL_CALLS]fetch{"id": "7"}') == [ToolCall("fetch", {"id": "7"})]


def test_mistral_named_form_with_args_marker() -> None:
    assert parse_tool_calls('[TOOL_CALLS]fetch[ARGS]{"id": "7"}') == [
        ToolCall("fetch", {"id": "7"})
    ]


def test_mistral_array_form() -> None:
    reply = (
        '[TOOL_CALLS][{"name": "fetch", "arguments": {"id": "1"}}, '
        '{"name": "submit", "arguments": {"answer": "ok"}}]'
    )
    assert parse_tool_calls(reply) == [
        ToolCall("fetch", {"id": "1"}),
        ToolCall("submit", {"answer": "ok"}),
    ]


def test_mistral_array_form_after_prose() -> None:
    reply = 'Sure.\n[TOOL_CALLS] [{"name": "ping", "arguments": {}}]'
    assert parse_tool_calls(reply) == [ToolCall("ping", {})]


def test_two_mistral_markers() -> None:
    reply = '[TOOL_CALLS]fetch{"id": "1"}[TOOL_CALLS]fetch{"id": "2"}'
    assert parse_tool_calls(reply) == [
        ToolCall("fetch", {"id": "1"}),
        ToolCall("fetch", {"id": "2"}),
    ]


# --------------------------------------------------------------------------- OpenAI wire shape


def test_openai_wire_shape_with_string_arguments() -> None:
    wire = {
        "id": "call_abc",
        "type": "function",
        "function": {"name": "fetch", "arguments": json.dumps({"id": "9"})},
    }
    assert parse_tool_calls(json.dumps(wire)) == [ToolCall("fetch", {"id": "9"})]


def test_openai_wire_shape_list_and_empty_arguments() -> None:
    wire = [
        {"type": "function", "function": {"name": "fetch", "arguments": '{"id": "1"}'}},
        {"type": "function", "function": {"name": "ping", "arguments": ""}},
    ]
    assert parse_tool_calls(json.dumps(wire)) == [
        ToolCall("fetch", {"id": "1"}),
        ToolCall("ping", {}),
    ]


def test_openai_wire_shape_embedded_in_prose() -> None:
    wire = json.dumps({"function": {"name": "fetch", "arguments": '{"id": "3"}'}})
    assert parse_tool_calls(f"Calling now: {wire} - done") == [ToolCall("fetch", {"id": "3"})]


# --------------------------------------------------------------------------- not calls


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "Bob", "age": 3}',
        'The user is {"name": "Bob", "age": 3}.',
        '[{"name": "Bob"}, {"name": "Alice"}]',
        '{"function": {"name": "fetch", "arguments": "not json"}}',
    ],
)
def test_ordinary_json_is_not_a_call(reply: str) -> None:
    assert parse_tool_calls(reply) is None


# --------------------------------------------------------------------------- reasoning


def test_think_block_is_split_off() -> None:
    parsed = parse_response(f"<think>\nI should ping.\n</think>\n{PING}")
    assert parsed.reasoning == "I should ping."
    assert parsed.text == PING
    assert parsed.calls == [ToolCall("ping", {})]


def test_bracket_think_block_is_split_off() -> None:
    parsed = parse_response(f"[THINK]Pinging is right.[/THINK]{PING}")
    assert parsed.reasoning == "Pinging is right."
    assert parsed.text == PING
    assert parsed.calls == [ToolCall("ping", {})]


def test_unpaired_closing_tag_makes_everything_before_it_reasoning() -> None:
    # The opening <think> was part of the prompt (e.g. a template prefill).
    parsed = parse_response(f"I will ping the server first.\n</think>\n{PING}")
    assert parsed.reasoning == "I will ping the server first."
    assert parsed.text == PING
    assert parsed.calls == [ToolCall("ping", {})]


def test_unpaired_closing_tag_hides_a_call_written_before_it() -> None:
    parsed = parse_response('maybe fetch[ARGS]{"id": "1"}? </think>The answer is 4.')
    assert parsed.calls is None
    assert parsed.text == "The answer is 4."
    assert "fetch[ARGS]" in parsed.reasoning


def test_unclosed_think_makes_everything_after_it_reasoning() -> None:
    parsed = parse_response(f"Okay. <think>Let me call {PING} now")
    assert parsed.calls is None
    assert parsed.text == "Okay."
    assert parsed.reasoning == f"Let me call {PING} now"


def test_call_rehearsed_inside_think_block_is_not_returned() -> None:
    reply = (
        '<think>Maybe delete[ARGS]{"all": true}? Or {"tool": "fetch", "args": {"id": "1"}}.'
        f"</think>\n{PING}"
    )
    parsed = parse_response(reply)
    assert parsed.calls == [ToolCall("ping", {})]
    assert "delete[ARGS]" in parsed.reasoning
    assert parse_tool_calls(reply) == [ToolCall("ping", {})]


def test_think_only_reply_has_no_call() -> None:
    parsed = parse_response(f"<think>{PING}</think>")
    assert parsed.calls is None
    assert parsed.text == ""
    assert parsed.reasoning == PING


def test_several_think_blocks_are_all_collected() -> None:
    reasoning, rest = split_reasoning(
        "<think>one</think> a [THINK]two[/THINK] b <think>three</think>"
    )
    assert sorted(reasoning.split("\n")) == ["one", "three", "two"]
    assert "think" not in rest.lower()
    assert rest.replace(" ", "") == "ab"


def test_split_reasoning_without_tags() -> None:
    assert split_reasoning("  plain text  ") == ("", "plain text")


# --------------------------------------------------------------------------- rescue off


def test_rescue_off_accepts_an_exact_json_call() -> None:
    assert parse_response(PING, rescue=False).calls == [ToolCall("ping", {})]
    array = '[{"tool": "fetch", "args": {"id": "1"}}, {"tool": "ping", "args": {}}]'
    assert parse_response(array, rescue=False).calls == [
        ToolCall("fetch", {"id": "1"}),
        ToolCall("ping", {}),
    ]


@pytest.mark.parametrize(
    "reply",
    [
        f"Here you go: {PING}",
        f"```json\n{PING}\n```",
        'fetch[ARGS]{"id": "1"}',
        "<function=ping></function>",
        '[TOOL_CALLS]fetch{"id": "1"}',
        f"{PING}\n{PING}",
    ],
)
def test_rescue_off_rejects_anything_but_exact_json(reply: str) -> None:
    parsed = parse_response(reply, rescue=False)
    assert parsed.calls is None
    assert parsed.text == reply.strip()
    # The same reply is rescued when rescue is on.
    assert parse_response(reply).calls


def test_rescue_off_still_splits_reasoning_first() -> None:
    parsed = parse_response(f"<think>hm</think>{PING}", rescue=False)
    assert parsed.calls == [ToolCall("ping", {})]
    assert parsed.reasoning == "hm"


def test_rescue_off_non_call_json_is_no_call() -> None:
    assert parse_response('{"name": "Bob", "age": 3}', rescue=False).calls is None
