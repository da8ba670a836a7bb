"""Calls in pieces (backends/llama/pieces.py): what Forge writes, what it asks for,
and when it gives the call back to the whole-call grammar.

The model here is a script of pieces (a fake generator): the logic under
test is Forge's, and the real model's pieces are exercised end to end in
tests/e2e/test_call_pieces_llama.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from forge_core.backends.llama.listed_values import choose
from forge_core.backends.llama.pieces import (
    ARRAY_STOPS,
    KEY_STOPS,
    RUNAWAY_STOPS,
    SCALAR_STOPS,
    STRING_STOPS,
    Piece,
    PieceCall,
    piece_call,
)
from forge_core.grammar import piece_grammars
from forge_core.workflow import ToolSpec

WEATHER = ToolSpec(
    "get_weather",
    "",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "unit": {"enum": ["c", "f"]},
        },
        "required": ["city"],
    },
)
REPORT = ToolSpec(
    "report",
    "",
    {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]},
)
CART = ToolSpec(
    "add_items",
    "",
    {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "string"}}},
        "required": ["items"],
    },
)
PING = ToolSpec("ping", "", {"type": "object", "properties": {}})


class Script:
    """Answers each request with the next scripted piece and records what
    Forge asked: the call so far, the grammar, the stop strings."""

    def __init__(self, *pieces: Piece) -> None:
        self.pieces = list(pieces)
        self.asked: list[tuple[str, str, list[str], int]] = []

    async def __call__(
        self, call: str, grammar: str, stops: list[str], n: int, stream: bool
    ) -> Piece:
        self.asked.append((call, grammar, stops, n))
        return self.pieces.pop(0)


async def make(
    tools: list[ToolSpec], script: Script, max_tokens: int = 512, **pools: Any
) -> PieceCall | None:
    emitted: list[str] = []

    async def emit(text: str) -> None:
        emitted.append(text)

    made = await piece_call(tools, piece_grammars(**pools), script, emit, max_tokens)
    if made is not None:
        assert "".join(emitted) == made.text
    return made


async def test_forge_writes_the_keys_and_the_model_each_value() -> None:
    script = Script(
        Piece(' "get_weather', "word", '",', 4),
        Piece(' "Oslo', "word", '"\n', 3),
        Piece(" ", "word", "}", 1),
    )
    made = await make([WEATHER, REPORT], script)
    assert made is not None and not made.truncated
    assert json.loads(made.text) == {"tool": "get_weather", "args": {"city": "Oslo"}}
    assert made.requests == 3
    (call, name_grammar, stops, _), (call2, _, stops2, _), (_, key_grammar, stops3, _) = (
        script.asked
    )
    assert call == '{"tool":' and stops == STRING_STOPS
    assert '"\\"get_weather\\""' in name_grammar and '"\\"report\\""' in name_grammar
    # The prompt ends at the key's colon: the model's own ` "` token follows.
    assert call2 == '{"tool": "get_weather", "args": {"city":'
    assert stops2 == STRING_STOPS + RUNAWAY_STOPS
    assert stops3 == KEY_STOPS
    assert '"\\"days\\""' in key_grammar and '"\\"unit\\""' in key_grammar
    assert '"}"' in key_grammar


async def test_a_free_string_that_runs_away_in_one_digit_ends_where_the_run_begins() -> None:
    # llama-server leaves the stop string out of the text it returns.
    script = Script(Piece(' "string: 1', "word", "0" * 20, 40))
    made = await make([REPORT], script)
    assert made is not None and not made.truncated
    assert json.loads(made.text) == {"tool": "report", "args": {"summary": "string: 1"}}
    # So does a value the model goes on past with a chat template's marker.
    script = Script(Piece(' "Ward 4', "word", "<|im_end|>", 12))
    made = await make([REPORT], script)
    assert made is not None and json.loads(made.text)["args"] == {"summary": "Ward 4"}
    assert "<|im_start|>" in script.asked[0][2]
    # A marker after the model's own closing quote leaves the value whole.
    script = Script(Piece(' "Ward 4"', "word", "<|im_end|>", 12))
    made = await make([REPORT], script)
    assert made is not None and json.loads(made.text)["args"] == {"summary": "Ward 4"}


@pytest.mark.parametrize(("stop", "keys"), [('"}', {"city"}), ('",', {"city", "days"})])
async def test_what_the_model_wrote_after_a_value_decides_whether_a_key_follows(
    stop: str, keys: set[str]
) -> None:
    """`"}` closes the arguments without a question; after `",` the next
    piece must name a key (the whole-call grammar would hold it to that)."""
    script = Script(Piece(' "Oslo', "word", stop, 3), Piece(' , "days', "word", '":', 3))
    script.pieces.append(Piece(" 3", "word", "}", 1))
    made = await make([WEATHER], script)
    assert made is not None and set(json.loads(made.text)["args"]) == keys
    if stop == '",':
        key_grammar = script.asked[1][1]
        assert key_grammar.startswith('root ::= sp "," sp (') and '"}"' not in key_grammar


async def test_an_optional_key_the_model_names_gets_its_value_and_later_keys_only() -> None:
    script = Script(
        Piece(' "Oslo', "word", '",', 3),
        Piece(' , "days', "word", '":', 3),
        Piece(" 3", "word", ",", 1),
        Piece(' , "unit', "word", '":', 3),
        Piece(' "c', "word", '"}', 2),
    )
    made = await make([WEATHER], script)
    assert made is not None
    assert json.loads(made.text) == {
        "tool": "get_weather",
        "args": {"city": "Oslo", "days": 3, "unit": "c"},
    }
    assert script.asked[2][2] == SCALAR_STOPS
    # After "unit", the last optional key, nothing is left to ask about.
    assert len(script.asked) == 5


async def test_a_single_tool_without_arguments_needs_no_request() -> None:
    script = Script()
    made = await make([PING], script)
    assert made is not None and json.loads(made.text) == {"tool": "ping", "args": {}}
    assert made.requests == 0


async def test_an_array_of_scalars_is_one_piece_under_its_own_grammar() -> None:
    """Forge writes the key; the array is the model's, under its grammar
    followed by anything (the model's `"]}` closes the array and the
    arguments at once) and cut where the array ends."""
    script = Script(Piece(' ["lamp"', "word", "]}", 4))
    made = await make([CART], script)
    assert made is not None
    assert json.loads(made.text) == {"tool": "add_items", "args": {"items": ["lamp"]}}
    (call, grammar, stops, _) = script.asked[0]
    assert call == '{"tool": "add_items", "args": {"items":'
    assert stops == ARRAY_STOPS and "rest" in grammar and '"["' in grammar


async def test_a_scalar_array_followed_by_a_comma_asks_for_the_next_optional_key() -> None:
    tool = ToolSpec(
        "tag",
        "",
        {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "note": {"type": "string"},
            },
            "required": ["tags"],
        },
    )
    script = Script(
        Piece(' ["a", "b"', "word", "],", 5),
        Piece(' , "note', "word", '":', 3),
        Piece(' "hi', "word", '"}', 2),
    )
    made = await make([tool], script)
    assert made is not None
    assert json.loads(made.text)["args"] == {"tags": ["a", "b"], "note": "hi"}
    # After `],` a key must follow: the choice does not offer to close.
    assert '"}"' not in script.asked[1][1]


async def test_arguments_that_are_no_plain_object_come_from_the_whole_arguments_grammar() -> None:
    tool = ToolSpec(
        "pick",
        "",
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "minProperties": 1,
        },
    )
    script = Script(Piece(' {"a": "x"}}', "eos", "", 6))
    made = await make([tool], script)
    assert made is not None and json.loads(made.text) == {"tool": "pick", "args": {"a": "x"}}
    (call, grammar, stops, _) = script.asked[0]
    assert call == '{"tool": "pick", "args":' and stops == [] and "rest" not in grammar


@pytest.mark.parametrize(
    "piece",
    [
        # Cut at an escaped quote: not one whole JSON string.
        Piece(' "a \\', "word", '",', 3),
        # A number where a string was asked for.
        Piece(" 12", "eos", "", 1),
    ],
)
async def test_a_malformed_value_hands_the_call_back(piece: Piece) -> None:
    made = await make([REPORT], Script(piece))
    assert made is None


async def test_a_name_outside_the_allowed_tools_hands_the_call_back() -> None:
    made = await make([WEATHER, REPORT], Script(Piece(' "delete_all', "word", '",', 3)))
    assert made is None


async def test_a_piece_that_runs_out_of_tokens_truncates_the_call() -> None:
    script = Script(Piece(' "Oslo and on', "limit", "", 10))
    made = await make([REPORT], script, max_tokens=10)
    assert made is not None and made.truncated
    # The whole budget went to the one value; nothing more is asked.
    assert script.asked[0][3] == 10 and len(script.asked) == 1


async def test_value_grammars_keep_the_whole_call_grammars_limits() -> None:
    """A grounded parameter takes only the conversation's values, a failed
    value stays excluded, and a number only the request's numbers."""
    grammars = piece_grammars(
        grounded=["Oslo", "Rome"],
        excluded=[("report", {"summary": "stuck"})],
    )
    city = ToolSpec(
        "get_weather",
        "",
        {
            "type": "object",
            "properties": {"city_id": {"type": "string"}},
            "required": ["city_id"],
        },
    )
    grounded = grammars.value(city, "city_id", True)
    assert grounded is not None
    root = grounded.splitlines()[0]
    body = "\n".join(grounded.splitlines()[1:])
    assert root.startswith("root ::= sp ") and root.endswith(" rest")
    assert '"\\"Oslo\\""' in body and '"\\"Rome\\""' in body and "char" not in body
    excluded = grammars.value(REPORT, "summary", True)
    assert excluded is not None and '"s"' in excluded  # the trie that leaves "stuck" out
    assert "rest-scalar ::=" in (grammars.value(WEATHER, "days", False) or "")


async def test_the_backend_makes_a_malformed_call_again_with_the_whole_call_grammar() -> None:
    """LlamaServerBackend falls back to one whole-call grammar request, and
    tells the stream to drop the deltas it sent. llama-server is replaced by
    a scripted HTTP server on loopback here: the real model cannot be made to
    write a malformed piece on demand."""
    from aiohttp import web

    from forge_core.backends.base import ChatRequest
    from forge_core.backends.llama.server import LlamaServerBackend
    from forge_core.calls import ChunkType, StreamChunk
    from forge_core.messages import Message, MessageRole, MessageType

    seen: list[str] = []
    learned: list[str] = []
    whole = json.dumps({"tool": "report", "args": {"summary": "ok"}})

    def sse(events: list[dict[str, Any]], done: bool = False) -> web.Response:
        text = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
        return web.Response(
            text=text + ("data: [DONE]\n\n" if done else ""), content_type="text/event-stream"
        )

    async def answer(request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body else {}
        if body.get("add_generation_prompt") is False or "parse_special" in body:
            # The system prefix's ids, learned beside the call (prefix_ids.py).
            learned.append(request.path)
            return web.json_response({"prompt": "", "tokens": []})
        seen.append(request.path)
        if request.path == "/props":
            return web.json_response({})  # no chat template: /apply-template
        if request.path == "/apply-template":
            return web.json_response({"prompt": "<prompt>"})
        if request.path == "/tokenize":
            return web.json_response({"tokens": [1, 2, 3]})
        if request.path == "/completion":
            assert body["prompt"] == '<prompt>{"tool": "report", "args": {"summary":'
            assert body["stop"] == STRING_STOPS + RUNAWAY_STOPS and "grammar" in body
            # A value streams, as the model writes it.
            assert body["stream"] is True
            return sse(
                [
                    {"content": ' "a', "stop": False},
                    {"content": " \\", "stop": False},
                    {"content": "", "stop": True, "stop_type": "word", "stopping_word": '",'},
                ]
            )
        return sse([{"choices": [{"delta": {"content": whole}}]}], done=True)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    backend = LlamaServerBackend(
        f"http://127.0.0.1:{port}",
        model="m",
        context_budget_tokens=4096,
        slots=1,
        budget_mode="backend",
        backend_mode="external",
    )
    chunks: list[StreamChunk] = []

    async def sink(chunk: StreamChunk) -> None:
        chunks.append(chunk)

    request = ChatRequest(
        run_id="r",
        workflow_name="w",
        messages=[Message(MessageRole.USER, "Report it.", MessageType.USER_INPUT)],
        tools=[REPORT],
        allowed=["report"],
    )
    try:
        reply = await backend.complete(request, sink)
    finally:
        await backend.aclose()
        await runner.cleanup()
    assert seen == [
        "/props",
        "/apply-template",
        "/tokenize",
        "/completion",
        "/v1/chat/completions",
    ]
    assert learned == ["/apply-template"]  # an empty prefix is sent as text
    assert isinstance(reply.response, list) and reply.response[0].args == {"summary": "ok"}
    kinds = [c.type for c in chunks]
    assert ChunkType.RETRY in kinds
    after = kinds[kinds.index(ChunkType.RETRY) + 1 :]
    streamed = "".join(c.content for c in chunks[len(kinds) - len(after) :] if c.content)
    assert streamed == whole


class Tokens:
    """The model's likeliest next tokens, by what the prompt ends with."""

    def __init__(self, table: dict[str, list[tuple[str, float]]]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def __call__(self, call: str, k: int) -> list[tuple[str, float]]:
        self.asked.append(call)
        for end, tokens in self.table.items():
            if call.endswith(end):
                return tokens[:k]
        raise AssertionError(f"unexpected prompt {call!r}")


async def test_forge_chooses_a_listed_value_from_the_likeliest_allowed_token() -> None:
    """The model's favourite (`London`) is not a candidate; the likeliest
    token that continues one is `Os`, so Oslo, and Forge writes the rest."""
    tokens = Tokens(
        {
            '"city":': [(' "', 0.9), (" ", 0.05)],
            '"city": "': [("London", 0.5), ("Os", 0.2), ("Rome", 0.1)],
        }
    )
    chosen, requests, after = await choose('{"city":', ['"Oslo"', '"Rome"'], tokens)
    assert chosen == '"Oslo"' and requests == 2 and after == ""
    # Forge wrote the common `"` itself after the model's ` "`.
    assert tokens.asked == ['{"city":', '{"city": "']


async def test_a_spaced_string_choice_asks_once_where_the_values_part() -> None:
    """With `spaced`, Forge writes the ` "` that opens every string value
    (the conversation's own calls put one space after the colon) and asks
    only where the values part; values that are not all strings still let
    the model choose the space."""
    tokens = Tokens({'"city": "': [("Os", 0.6), ("Rome", 0.3)]})
    chosen, requests, _ = await choose('{"city":', ['"Oslo"', '"Rome"'], tokens, spaced=True)
    assert chosen == '"Oslo"' and requests == 1
    assert tokens.asked == ['{"city": "']
    tokens = Tokens({'"n":': [(" 7", 0.6), ("4", 0.3)]})
    chosen, requests, _ = await choose('{"n":', ["4", "7"], tokens, spaced=True)
    assert chosen == "7" and requests == 1
    assert tokens.asked == ['{"n":']


async def test_a_token_that_ends_a_value_must_end_it_where_a_value_may_end() -> None:
    """`4` is a listed number, but `42` is not `4` followed by its end."""
    tokens = Tokens({'"n":': [(" 42", 0.6), (" 4", 0.3)]})
    chosen, _, _ = await choose('{"n":', ["4", "7"], tokens)
    assert chosen == "4"
    tokens = Tokens({'"n":': [(" 4,", 0.6)]})
    chosen, _, after = await choose('{"n":', ["4", "7"], tokens)
    assert chosen == "4" and after == ","


async def test_no_allowed_token_among_the_likeliest_leaves_the_choice_to_the_grammar() -> None:
    tokens = Tokens({'"city":': [(' "London', 0.9), (' "Paris', 0.1)]})
    chosen, requests, _ = await choose('{"city":', ['"Oslo"', '"Rome"'], tokens)
    assert chosen is None and requests == 1


async def test_a_call_in_pieces_writes_the_chosen_tool_and_value_without_a_grammar() -> None:
    city = ToolSpec(
        "get_weather",
        "",
        {"type": "object", "properties": {"unit": {"enum": ["c", "f"]}}, "required": ["unit"]},
    )
    tokens = Tokens({'{"tool": "': [("get", 0.6), ("report", 0.3)], '"unit": "': [("f", 0.7)]})
    script = Script()
    emitted: list[str] = []

    async def emit(text: str) -> None:
        emitted.append(text)

    made = await piece_call([city, REPORT], piece_grammars(), script, emit, 512, tokens)
    assert made is not None
    assert json.loads(made.text) == {"tool": "get_weather", "args": {"unit": "f"}}
    assert "".join(emitted) == made.text
    # No piece went to a grammar: two requests for next-token probabilities,
    # each after Forge's ` "` (the space is not asked for).
    assert script.asked == [] and made.requests == 2
    assert tokens.asked == ['{"tool": "', '{"tool": "get_weather", "args": {"unit": "']


async def test_the_closing_quote_of_a_chosen_value_is_the_models_to_write() -> None:
    """Before a key choice, Forge holds back the closing quote of a listed
    string it wrote: the model's `",` (another key) or `"}` (the end) is
    then its own token, as under the whole-call grammar."""
    tool = ToolSpec(
        "t",
        "",
        {
            "type": "object",
            "properties": {"city": {"enum": ["Oslo", "Rome"]}, "unit": {"enum": ["c", "f"]}},
            "required": ["city"],
        },
    )
    tokens = Tokens(
        {
            '"city": "': [("Os", 0.9)],
            '"city": "Oslo': [('",', 0.8), ('"}}', 0.1)],
            '"unit": "': [("c", 0.9)],
        }
    )
    made = await piece_call([tool], piece_grammars(), Script(), _emit_nothing, 512, tokens)
    assert made is not None
    assert json.loads(made.text) == {"tool": "t", "args": {"city": "Oslo", "unit": "c"}}
    assert any(asked.endswith('"city": "Oslo') for asked in tokens.asked)
    tokens = Tokens({'"city": "': [("Os", 0.9)], '"city": "Oslo': [('"}}', 0.8), ('",', 0.1)]})
    made = await piece_call([tool], piece_grammars(), Script(), _emit_nothing, 512, tokens)
    assert made is not None and json.loads(made.text) == {"tool": "t", "args": {"city": "Oslo"}}


async def _emit_nothing(text: str) -> None:
    return None


# ── every call shape in pieces: parallel batches, nested objects, arrays ──

ADDRESS = ToolSpec(
    "ship",
    "",
    {
        "type": "object",
        "properties": {
            "to": {
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "zone": {"enum": ["north", "south"]},
                    "floor": {"type": "integer"},
                },
                "required": ["street", "zone"],
            },
            "express": {"type": "boolean"},
        },
        "required": ["to"],
    },
)
ORDER = ToolSpec(
    "order",
    "",
    {
        "type": "object",
        "properties": {
            "lines": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                    "required": ["sku", "qty"],
                },
                "minItems": 1,
                "maxItems": 3,
            }
        },
        "required": ["lines"],
    },
)
KILN = ToolSpec(
    "fire_kiln",
    "",
    {"type": "object", "properties": {"kiln": {"enum": ["east", "west"]}}, "required": ["kiln"]},
)


def schema_valid(tool: ToolSpec, call: dict[str, Any]) -> bool:
    import jsonschema

    return call["tool"] == tool.name and jsonschema.Draft202012Validator(tool.parameters).is_valid(
        call["args"]
    )


async def test_a_nested_objects_keys_are_forges_and_its_values_the_models() -> None:
    tokens = Tokens(
        {
            '"zone": "': [("south", 0.8), ("north", 0.1)],
            '"zone": "south': [('"}', 0.9)],
            '"zone": "south"}': [("}}", 0.9)],
        }
    )
    script = Script(Piece(' "Kiln Lane 4', "word", '",', 4))
    made = await piece_call([ADDRESS], piece_grammars(), script, _emit_nothing, 512, tokens)
    assert made is not None and not made.truncated
    call = json.loads(made.text)
    assert call == {"tool": "ship", "args": {"to": {"street": "Kiln Lane 4", "zone": "south"}}}
    assert schema_valid(ADDRESS, call)
    # The street was asked for inside the nested object, under its own grammar;
    # the zone, `to`'s end and the arguments' end came from the likeliest tokens.
    ((street_call, street_grammar, stops, _),) = script.asked
    assert street_call == '{"tool": "ship", "args": {"to": {"street":'
    assert stops == STRING_STOPS + RUNAWAY_STOPS
    assert "rest" in street_grammar
    assert tokens.asked[-1].endswith('"zone": "south"}')


async def test_an_optional_nested_key_the_model_names_gets_its_value() -> None:
    script = Script(
        Piece(' "Kiln Lane 4', "word", '",', 4),
        Piece(' "south', "word", '",', 2),
        Piece(' , "floor', "word", '":', 3),
        Piece(" 3", "word", "}", 1),
        Piece(' , "express', "word", '":', 3),
        Piece(" true", "word", "}", 1),
    )
    made = await make([ADDRESS], script)
    assert made is not None
    call = json.loads(made.text)
    assert call["args"] == {
        "to": {"street": "Kiln Lane 4", "zone": "south", "floor": 3},
        "express": True,
    }
    assert schema_valid(ADDRESS, call)


async def test_an_array_of_objects_goes_on_while_the_model_writes_a_comma() -> None:
    """Whether another item follows is the model's likeliest `,` or `]`;
    minItems needs no question, and each item is walked like an object."""
    tokens = Tokens(
        {
            '"qty": 2': [("},", 0.7), ("}]", 0.2)],
            '"qty": 5': [("}]}", 0.6), ("},", 0.3)],
        }
    )
    script = Script(
        Piece(' "glaze', "word", '",', 2),
        Piece(" 2", "word", "}", 1),
        Piece(' "clay', "word", '",', 2),
        Piece(" 5", "word", "}", 1),
    )
    made = await piece_call([ORDER], piece_grammars(), script, _emit_nothing, 512, tokens)
    assert made is not None
    call = json.loads(made.text)
    assert call["args"] == {"lines": [{"sku": "glaze", "qty": 2}, {"sku": "clay", "qty": 5}]}
    assert schema_valid(ORDER, call)
    # One item is the minimum: nothing was asked before the first; whether
    # another follows was read before the item's `}` (the model's `},`).
    assert tokens.asked[0].endswith('"qty": 2')
    assert script.asked[2][0].endswith('"lines": [{"sku": "glaze", "qty": 2}, {"sku":')


async def test_an_array_stops_at_max_items_without_asking() -> None:
    tokens = Tokens({" 1": [("},", 0.9)]})
    script = Script(
        *[Piece(p, "word", s, 1) for _ in range(3) for p, s in ((' "a', '",'), (" 1", "}"))]
    )
    made = await piece_call([ORDER], piece_grammars(), script, _emit_nothing, 512, tokens)
    assert made is not None
    lines = json.loads(made.text)["args"]["lines"]
    assert len(lines) == 3 and schema_valid(ORDER, json.loads(made.text))
    assert len(tokens.asked) == 2


async def test_a_parallel_batch_is_its_calls_in_pieces_until_the_model_closes_it() -> None:
    from forge_core.backends.llama.pieces import piece_batch

    tokens = Tokens(
        {
            '[{"tool": "': [("get", 0.6), ("report", 0.3)],
            '}, {"tool": "': [("report", 0.6), ("get", 0.3)],
            '"city": "Oslo': [('"}},', 0.7), ('"}}]', 0.2)],
            '"summary": "done': [('"', 0.5), ('"}}]', 0.3)],
            '"summary": "done"': [("}}]", 0.8), ("}},", 0.1)],
        }
    )
    script = Script(
        Piece(' "Oslo', "word", '"}', 3),
        Piece(' "done', "word", '"}', 2),
    )
    emitted: list[str] = []

    async def emit(text: str) -> None:
        emitted.append(text)

    made = await piece_batch([WEATHER, REPORT], piece_grammars(), script, emit, 512, tokens)
    assert made is not None and not made.truncated
    assert "".join(emitted) == made.text
    calls = json.loads(made.text)
    assert calls == [
        {"tool": "get_weather", "args": {"city": "Oslo"}},
        {"tool": "report", "args": {"summary": "done"}},
    ]
    assert schema_valid(WEATHER, calls[0]) and schema_valid(REPORT, calls[1])
    from forge_core.parsing import parse_response

    parsed = parse_response(made.text, rescue=False).calls
    assert parsed is not None and [c.name for c in parsed] == ["get_weather", "report"]


async def test_a_batch_has_at_least_min_calls_and_at_most_the_distinct_calls_listed() -> None:
    """`min_calls` second calls need no question; a tool of one listed
    argument has only as many distinct calls as values, and the batch ends
    there even when the model would go on."""
    from forge_core.backends.llama.pieces import batch_cap, piece_batch

    assert batch_cap([KILN], piece_grammars()) == 2
    assert batch_cap([WEATHER], piece_grammars()) == 8
    tokens = Tokens(
        {
            '[{"tool": "fire_kiln", "args": {"kiln": "': [("west", 0.9)],
            '}, {"tool": "fire_kiln", "args": {"kiln": "': [("east", 0.9)],
        }
    )
    made = await piece_batch(
        [KILN], piece_grammars(), Script(), _emit_nothing, 512, tokens, None, 2
    )
    assert made is not None
    assert json.loads(made.text) == [
        {"tool": "fire_kiln", "args": {"kiln": "west"}},
        {"tool": "fire_kiln", "args": {"kiln": "east"}},
    ]
    # No `,` or `]` was asked: two calls were needed and two are all there are.
    assert len(tokens.asked) == 2


async def test_without_token_odds_a_grammar_piece_decides_whether_another_call_follows() -> None:
    """The piece's grammar holds Forge's closing brackets and then `,` or
    `]`: the model's own `"}},` token passes, and its stop string decides."""
    from forge_core.backends.llama.pieces import piece_batch

    script = Script(
        Piece(' "Oslo', "word", '"}', 3),
        Piece("", "word", '"}},', 1),
        Piece(' "Rome', "word", '"}', 3),
        Piece("", "word", '"}}]', 1),
    )
    made = await piece_batch([WEATHER], piece_grammars(), script, _emit_nothing, 512)
    assert made is not None
    assert [c["args"]["city"] for c in json.loads(made.text)] == ["Oslo", "Rome"]
    more_call, more_grammar, more_stops, _ = script.asked[1]
    assert more_call.endswith('"city": "Oslo')
    assert more_stops == ['"}},', '"}}]', '"}} ,', '"}} ]']
    assert more_grammar.startswith('root ::= "\\"}}" " "? ("," | "]")')


async def test_a_malformed_piece_in_a_batch_hands_the_whole_batch_back() -> None:
    from forge_core.backends.llama.pieces import piece_batch

    script = Script(Piece(' "Oslo', "word", '"}', 3), Piece("x", "eos", "", 1))
    made = await piece_batch([WEATHER], piece_grammars(), script, _emit_nothing, 512)
    assert made is None


async def test_a_batch_closes_whole_when_max_tokens_has_no_room_for_another_call() -> None:
    """The first call took 3 of 8 tokens: another like it might not fit,
    so the batch ends there, complete, instead of being cut off."""
    from forge_core.backends.llama.pieces import piece_batch

    script = Script(Piece(' "Oslo', "word", '"}', 3))
    made = await piece_batch([WEATHER], piece_grammars(), script, _emit_nothing, 8)
    assert made is not None and not made.truncated
    assert json.loads(made.text) == [{"tool": "get_weather", "args": {"city": "Oslo"}}]
    assert len(script.asked) == 1


def test_which_objects_forge_walks_key_by_key() -> None:
    from forge_core.backends.llama.pieces import plain_object

    closed = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert plain_object({**closed, "additionalProperties": False, "title": "t"})
    assert plain_object({**closed, "$defs": {"x": {"type": "string"}}})
    assert plain_object({"type": "object", "properties": {}})
    # Free-form, bounded key counts and unions stay with their own grammar.
    assert not plain_object({"type": "object", "additionalProperties": True})
    assert not plain_object({**closed, "minProperties": 1})
    assert not plain_object({"anyOf": [closed]})


async def test_a_batch_stops_at_max_calls_even_when_the_model_would_go_on() -> None:
    """The request listed two things: after the second call the batch
    closes without asking, though the model's likeliest token is `,`."""
    from forge_core.backends.llama.pieces import piece_batch

    tokens = Tokens(
        {
            '"city": "Oslo': [('"}},', 0.9), ('"}}]', 0.05)],
            '"city": "Rome': [('"}},', 0.9), ('"}}]', 0.05)],
        }
    )
    script = Script(Piece(' "Oslo', "word", '"}', 3), Piece(' "Rome', "word", '"}', 3))
    made = await piece_batch(
        [WEATHER], piece_grammars(), script, _emit_nothing, 512, tokens, max_calls=2
    )
    assert made is not None
    assert [c["args"]["city"] for c in json.loads(made.text)] == ["Oslo", "Rome"]
    # Asked once, after the first call; the second closed the batch.
    assert len(tokens.asked) == 1 and tokens.asked[0].endswith('"city": "Oslo')


async def test_a_batch_closes_at_a_call_it_already_has() -> None:
    """The model repeats its first call: the batch closes there instead of
    repeating it to the cap (the repeat itself is dropped by repeat_guard)."""
    from forge_core.backends.llama.pieces import piece_batch

    tokens = Tokens({'"city": "Oslo': [('"}},', 0.9), ('"}}]', 0.05)]})
    script = Script(*[Piece(' "Oslo', "word", '"}', 3) for _ in range(8)])
    made = await piece_batch([WEATHER], piece_grammars(), script, _emit_nothing, 512, tokens)
    assert made is not None
    assert [c["args"]["city"] for c in json.loads(made.text)] == ["Oslo", "Oslo"]
    assert len(tokens.asked) == 1
