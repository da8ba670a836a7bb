"""Constrained calls at the model's own speed: Forge writes the fixed parts.

A grammar costs llama-server little while the model's favourite next token
is allowed (one check), and a pass over the whole vocabulary (262,144
tokens for Gemma 3, 10-50 ms on one CPU thread) whenever it is not. With one
grammar for the whole call that happens 3-7 times per call: the model wants
to start with prose, writes a newline where the grammar has a space, invents
a key, or wants another `",` after the last value (bench/RESULTS.md §14).

So a call is built in pieces. Forge writes what the schema fixes -- the
`{"tool":` opening, `"args"`, each key and the punctuation -- and asks the
model only for what it chooses: the tool's name, each value, and whether
another optional key follows. Each piece is one `/completion` request on the
run's slot whose prompt is the conversation plus the call so far (cached, so
only Forge's few new tokens are evaluated), with a grammar that admits
exactly what the whole-call grammar admits at that point followed by
anything (`PieceGrammars`); a stop string ends the piece where the value
does. The model's `",` after a value then passes on the fast path, and the
text after the stop is never part of the call.

Where the grammar lists what a piece may be (the tool names, an enum, the
grounded candidates, bound values, the request's numbers), Forge does not
ask for the piece under a grammar at all (listed_values.py): for the tool's
name it reads the model's likeliest next tokens (`choose`), takes the
likeliest one that continues a listed name -- the token the grammar would
have let through -- and writes the rest itself, and so for a value the
conversation supplies (grounded or bound values, the request's numbers).
With the backend's scorer (`forge-server --member-choice likelihood`), a
value of a set the schema names in full (an enum, a boolean) is the member
whose whole text the conversation makes likeliest, against its likelihood
with no conversation (`likeliest`, with the scorer the backend passes): a
member the model favours anyway ("standard", false) gains nothing from
that. A grammar then only ever corrects the model inside open values, where
it must.

Nested arguments are walked the same way: an object's keys are Forge's at
every depth, an array of objects is written item by item (whether another
item follows is the model's likeliest `,` or `]`, within minItems..maxItems),
and only a value Forge does not walk (an array of scalars, a union, a
`$ref`) is one piece under its own grammar. A parallel batch is its calls in
pieces between Forge's `[`, `, ` and `]` (`piece_batch`); tools whose
arguments are no plain object get their name as a piece and all their
arguments from the whole-arguments grammar. A piece that does not come back
as the JSON it must be (a value cut at an escaped quote) returns None: the
caller makes the call with the whole-call grammar instead.
"""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from forge_core.backends.llama import listed_values
from forge_core.backends.llama.item_identities import TakenValues, identity_keys, named_key
from forge_core.backends.llama.listed_values import (
    TOP_K,
    NextTokens,
    ScoreValues,
    choose,
    closed_set,
    likeliest,
)
from forge_core.grammar import MAX_CALLS, MAX_ITEMS, PieceGrammars
from forge_core.workflow import ToolSpec

# What Forge writes first.
OPENING = '{"tool":'
# Where a string value ends: its closing quote and what the model writes
# after it. The opening quote is followed by the value, never by these.
STRING_STOPS = ['",', '"}', '"\n', '" ']
# A free string that runs away repeats one digit to the token limit
# ("string: 1000000..."); twenty of one digit end it where the run begins
# (a card number has at most fifteen).
RUNAWAY_STOPS = [digit * 20 for digit in "0123456789"]
# A base model with no chat template writes the turn markers it was trained
# on into a value; a value ends where one begins.
RUNAWAY_STOPS += ["<|im_end|>", "<|im_start|>", "<end_of_turn>", "<start_of_turn>"]
# Where a number, boolean or null ends.
SCALAR_STOPS = [",", "}", "\n"]
# A key choice ends with the key's colon, or closes the arguments.
KEY_STOPS = ['":', "}"]
# Where an array of scalars ends: its bracket and what the model writes
# after it (items cannot hold these, bar a string with `],` in it, which
# then does not parse and goes to the whole-call grammar).
ARRAY_STOPS = ["],", "]}", "]\n", "] "]
# Tokens a key choice needs at most (`, "some_key":`).
KEY_TOKENS = 24

SCALAR_TYPES = {"string", "integer", "number", "boolean", "null"}


@dataclass
class Piece:
    """What one request generated (its stop string left out)."""

    text: str
    # "word" (a stop string), "eos" (the grammar or the model ended) or
    # "limit" (n_predict ran out).
    stop: str
    stopping_word: str = ""
    tokens: int = 0
    # The generator already emitted `text` as it came (a value streamed to
    # the client token by token).
    streamed: bool = False


# (call so far, grammar, stop strings, n_predict, stream) -> the piece; with
# stream, the generator may emit the piece's text as the model writes it.
GeneratePiece = Callable[[str, str, list[str], int, bool], Awaitable[Piece]]
# Text of the call as it grows, for TOOL_CALL_DELTA chunks.
Emit = Callable[[str], Awaitable[None]]


@dataclass
class PieceCall:
    text: str
    truncated: bool = False
    requests: int = 0


def _string_valued(schema: dict[str, Any]) -> bool | None:
    """True for a string, False for another scalar, None when not a scalar."""
    values = (
        [schema["const"]] if "const" in schema else schema["enum"] if "enum" in schema else None
    )
    if values is not None:
        if values and all(isinstance(v, str) for v in values):
            return True
        if all(v is None or isinstance(v, bool | int | float) for v in values):
            return False
        return None
    if any(k in schema for k in ("$ref", "anyOf", "oneOf", "allOf")):
        return None
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in SCALAR_TYPES:
        return None
    return kind == "string"


class _Truncated(Exception):
    """The call's max_tokens ran out inside a piece."""


class _Malformed(Exception):
    """A piece is not what the grammar admits there: the whole-call grammar
    makes the call instead."""


# Keys of an object schema Forge walks key by key; any other keyword
# (minProperties, $ref, anyOf...) leaves the object to its value's grammar.
# `$defs` and `$schema` only describe; additionalProperties only matters to
# the grammar for an object without properties (a free-form one).
PLAIN_OBJECT_KEYS = {
    "type",
    "properties",
    "required",
    "description",
    "title",
    "additionalProperties",
    "$defs",
    "definitions",
    "$schema",
}
# The same for an array whose items are such objects. uniqueItems is walked
# too: item by item the model decides where the list ends (under one
# grammar for the whole array it ran on to max_tokens), and a repeated item
# is for the call's validation to name.
PLAIN_ARRAY_KEYS = {"type", "items", "minItems", "maxItems", "uniqueItems", "description", "title"}
# Tokens a "another one, or the end?" piece needs at most.
MORE_TOKENS = 4


def plain_object(schema: Any) -> bool:
    """An object whose keys Forge writes itself, asking only for values."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return False
    if any(k not in PLAIN_OBJECT_KEYS and not k.startswith("x-") for k in schema):
        return False
    props = schema.get("properties", {})
    if not props and schema.get("additionalProperties", False) is not False:
        return False
    return isinstance(props, dict) and all(isinstance(s, dict) for s in props.values())


def object_array(schema: Any) -> bool:
    """An array of plain objects: Forge writes the brackets and commas, and
    asks the model whether another item follows."""
    if not isinstance(schema, dict) or schema.get("type") != "array":
        return False
    if any(k not in PLAIN_ARRAY_KEYS and not k.startswith("x-") for k in schema):
        return False
    return plain_object(schema.get("items")) and "properties" in schema["items"]


def scalar_array(schema: Any) -> bool:
    """An array whose items are scalars (its own piece, cut at ARRAY_STOPS)."""
    if not isinstance(schema, dict) or schema.get("type") != "array":
        return False
    items = schema.get("items")
    return isinstance(items, dict) and _string_valued(items) is not None


def _more_grammar(pending: str, more: str, end: str) -> str:
    """Forge's `pending` brackets, then another call or item (`more`) or the
    end (`end`), then anything."""
    text = pending.replace("\\", "\\\\").replace('"', '\\"')
    head = f'"{text}" ' if text else ""
    return f'root ::= {head}" "? ("{more}" | "{end}") [^\\x00]*\n'


def batch_cap(tools: list[ToolSpec], grammars: PieceGrammars) -> int:
    """The most calls a parallel batch of these tools can make that differ:
    a tool whose every argument is listed (an enum, the request's numbers,
    grounded candidates) has only so many; any open argument leaves it to
    MAX_CALLS."""
    total = 0
    for tool in tools:
        props = tool.parameters.get("properties", {})
        required = set(tool.parameters.get("required", []))
        combos = 1
        for key, schema in props.items() if isinstance(props, dict) else []:
            listed = grammars.choices(tool, key) if _string_valued(schema) is not None else None
            if listed is None:
                return MAX_CALLS
            combos *= len(listed) + (0 if key in required else 1)
        total += combos
    return max(1, min(MAX_CALLS, total))


class _Writer:
    """Forge's text of a call (or a batch) as it grows, and what it cost."""

    def __init__(
        self,
        grammars: PieceGrammars,
        generate: GeneratePiece,
        emit: Emit,
        max_tokens: int,
        next_tokens: NextTokens | None,
        rng: random.Random | None,
        score: ScoreValues | None = None,
    ) -> None:
        self.grammars = grammars
        self._generate = generate
        self._emit = emit
        self._next_tokens = next_tokens
        self._rng = rng
        self._score = score
        self.text = ""
        self.left = max_tokens if max_tokens > 0 else 1 << 20
        self.requests = 0
        self.identities = TakenValues()

    async def write(self, part: str) -> None:
        if part:
            self.text += part
            await self._emit(part)

    async def pick(self, values: list[str], spaced: bool = True) -> tuple[str | None, str]:
        if self._next_tokens is None:
            return None, ""
        chosen, requests, after = await choose(
            self.text, values, self._next_tokens, self._rng, spaced
        )
        self.requests += requests
        return chosen, after

    async def likeliest(self, values: list[str]) -> str | None:
        """The listed value with the best whole-value score (listed_values.py
        `likeliest`); None without a scorer, for a list too long to score
        each value, or when the scores did not come back."""
        if self._score is None or not 2 <= len(values) <= listed_values.MAX_SCORED:
            return None
        chosen, requests = await likeliest(self.text, values, self._score, self._rng)
        self.requests += requests
        return chosen

    async def ask(self, grammar: str, stops: list[str], limit: int, stream: bool = False) -> Piece:
        """A piece under `grammar`; _Truncated when max_tokens runs out."""
        if self.left <= 0:
            raise _Truncated
        piece = await self._generate(self.text, grammar, stops, min(limit, self.left), stream)
        self.left -= piece.tokens
        self.requests += 1
        if piece.stop == "limit":
            raise _Truncated
        return piece

    async def more(self, pending: str, more: str, end: str) -> bool:
        """Whether the model goes on with another call or item (`more`) or
        ends the list (`end`) after Forge's `pending` closing brackets.

        Read from the model's likeliest tokens before those brackets: its
        own token often closes and decides at once (`}},` rather than `}}`
        and then `,`), and after brackets Forge wrote it is off its own
        text. A token that is a start of `pending` is written and asked
        past; where no token among the likeliest fits, a piece under a
        grammar that admits `pending` and then only `more` or `end` decides."""
        while self._next_tokens is not None:
            self.requests += 1
            step = ""
            for token, _ in await self._next_tokens(self.text, TOP_K):
                if pending and token and pending.startswith(token):
                    step = token
                    break
                said = token[len(pending) :].lstrip()[:1] if token.startswith(pending) else ""
                if said in (more, end) and said:
                    await self.write(pending)
                    return said == more
            if not step:
                break
            await self.write(step)
            pending = pending[len(step) :]
        if self.left <= 0:
            raise _Truncated
        # The grammar holds the model to Forge's brackets and then one of
        # the two: its own `}},` passes on the fast path.
        stops = [f"{pending}{space}{c}" for space in ("", " ") for c in (more, end)]
        piece = await self._generate(
            self.text, _more_grammar(pending, more, end), stops, MORE_TOKENS + len(pending), False
        )
        self.left -= piece.tokens
        self.requests += 1
        said = (piece.stopping_word or piece.text)[len(pending) :].strip()[:1]
        if said not in (more, end):
            raise _Malformed
        await self.write(pending)
        return said == more

    async def call(self, tools: list[ToolSpec]) -> str:
        """One `{"tool": ..., "args": {...}}` among `tools`; returns the
        closing brackets Forge has yet to write (see `more`)."""
        await self.write(OPENING)
        tool = await self.tool(tools)
        await self.write(f" {json.dumps(tool.name)}, " + '"args":')
        if plain_object(tool.parameters):
            return await self.object(tool, tool.parameters, (), " {") + "}"
        args = self.grammars.args(tool)
        if args is None:
            raise _Malformed
        piece = await self.ask(args, [], self.left, stream=True)
        await self.take(piece)
        return ""

    async def take(self, piece: Piece) -> None:
        """A piece's text joins the call (already emitted when streamed)."""
        if piece.streamed:
            self.text += piece.text
        else:
            await self.write(piece.text)

    async def tool(self, tools: list[ToolSpec]) -> ToolSpec:
        names = [t.name for t in tools]
        if len(tools) == 1:
            return tools[0]
        chosen, _ = await self.pick([json.dumps(n) for n in names])
        if chosen is not None:
            return tools[names.index(json.loads(chosen))]
        piece = await self.ask(self.grammars.tool_name(names), STRING_STOPS, self.left)
        found = _string(piece)
        if found not in names:
            raise _Malformed
        return tools[names.index(str(found))]

    async def object(
        self, tool: ToolSpec, schema: dict[str, Any], path: tuple[str, ...], opening: str
    ) -> str:
        """A plain object: Forge writes its keys (required ones in order,
        then each optional one the model names) and asks for each value;
        returns its end (a held-back quote, `}`) that Forge has yet to write."""
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        keys = [k for k in props if k in required]
        optional = [k for k in props if k not in required]
        first = True
        part = opening
        # What the model wrote right after the last value: "," (another key),
        # "}" (the end) or "" (neither, or not seen). The whole-call grammar
        # would hold it to that: after `",` only a key may follow.
        after = ""
        # The closing quote of a listed string Forge wrote, held back when a
        # key choice follows: the model decides with its own `",` or `"}`
        # token, as it would have written the value's end itself.
        quote = ""
        while True:
            if not keys:
                if not optional or after == "}":
                    part += quote
                    break
                # Forge's text so far ends in `{` or a value; the choice starts there.
                await self.write(part)
                chosen, part = await self.key_choice(optional, first, after, quote)
                quote = ""
                if chosen == "}":
                    break
                keys = [chosen]
                optional = optional[optional.index(chosen) + 1 :]
            key = keys.pop(0)
            part += ("" if first else ", ") + json.dumps(key) + ":"
            first = False
            await self.write(part)
            part, after, quote = await self.value(tool, props[key], (*path, key), not keys)
        return part + "}"

    async def key_choice(
        self, optional: list[str], first: bool, after: str, quote: str
    ) -> tuple[str, str]:
        """The optional key the model names next, or "}" where it closes the
        object; and what Forge writes before the key."""
        comma = "" if first else ", "
        options = {f"{quote}{comma}{json.dumps(k)}:": k for k in optional}
        if after != ",":
            options[quote + "}"] = "}"
        named, _ = await self.pick(list(options), spaced=False)
        if named is not None:
            return options[named], quote
        await self.write(quote)
        choice = self.grammars.next_key(optional, first, closable=after != ",")
        chosen = _key(await self.ask(choice, KEY_STOPS, KEY_TOKENS), optional)
        if chosen is None:
            raise _Malformed
        return chosen, ""

    async def value(
        self, tool: ToolSpec, schema: dict[str, Any], path: tuple[str, ...], last: bool
    ) -> tuple[str, str, str]:
        """The value at `path`, the last of its object's keys so far when
        `last`: (its end Forge has yet to write, what the model wrote after
        it, a held-back closing quote). The closing quote of the last listed
        string is held back: the model's own token after it closes and
        decides (`",` another key, `"}}` the end)."""
        stringy = _string_valued(schema)
        if stringy is None:
            if plain_object(schema):
                return await self.object(tool, schema, path, " {"), "", ""
            if object_array(schema):
                await self.array(tool, schema, path)
                return "", "", ""
            end, after = await self.whole(tool, schema, path)
            return end, after, ""
        listed = self.grammars.choices(tool, path[-1], path, schema)
        if listed and "enum" in schema:
            # What the request says beside the item's other members.
            listed = self.identities.beside(path, listed, self.grammars.item_context)
        if listed and self.identities.tracked(path):
            listed = self.identities.free(path, listed) or listed
        # An item's numbers from its entry or the request's part about it.
        listed = self.identities.numbers(path, schema, listed, self.grammars)
        # The schema's own set (an enum, a boolean) is chosen by the whole
        # values' likelihood; values drawn from the conversation by the walk.
        chosen, after = None, ""
        if listed and closed_set(schema):
            chosen = await self.likeliest(listed)
        if listed and chosen is None:
            chosen, after = await self.pick(listed)
        if chosen is not None:
            self.identities.take(path, chosen)
            self.identities.took(path, schema, chosen)
            if chosen.startswith('"') and last and not after:
                await self.write(" " + chosen[:-1])
                return "", after, '"'
            await self.write(" " + chosen)
            return "", after, ""
        tail = "rest" if stringy else "rest-scalar"
        grammar = self.grammars.nested_value(tool, path, schema, tail)
        if grammar is None:
            raise _Malformed
        stops = STRING_STOPS + RUNAWAY_STOPS if stringy else SCALAR_STOPS
        piece = await self.ask(grammar, stops, self.left, stream=True)
        written = _value(piece, stringy)
        if written is None:
            raise _Malformed
        # The grammar's pick is the item's as much as the walk's own would be.
        self.identities.take(path, written)
        self.identities.took(path, schema, written)
        after = piece.stopping_word.strip().removeprefix('"')[:1]
        # The value as the model wrote it (the client may have it already),
        # and the closing quote the stop string took.
        closing = '"' if stringy and _open_string(piece) else ""
        await self.take(piece)
        return closing, after, ""

    async def array(self, tool: ToolSpec, schema: dict[str, Any], path: tuple[str, ...]) -> None:
        """An array of plain objects, item by item, as many as the model
        goes on to write within minItems..maxItems, and no fewer than the
        members of an item's enum key the request names (`named_key`)."""
        low = int(schema.get("minItems", 0))
        high = max(low, int(schema.get("maxItems", MAX_ITEMS)), 1)
        await self.write(" [")
        items, item_path = schema["items"], (*path, "[]")
        props = items.get("properties", {})
        named = named_key(
            items, lambda key: self.grammars.choices(tool, key, (*item_path, key), props[key])
        )
        self.identities.start(item_path, items, named[:1] if named else ())
        # Each member the request names is some item's (item_identities.py).
        least = min(high, max(low, named[1] if named else 0))
        count = 0
        # The last item's end, written once whether another follows is known.
        pending = ""
        while count < high:
            if count >= max(low, 1) and self.used_up(tool, items, item_path, named):
                break
            if count >= least:
                going = await self.more(pending, "{" if count == 0 else ",", "]")
                pending = ""
                if not going:
                    break
            await self.write(pending + (", {" if count else "{"))
            self.identities.next_item(item_path)
            pending = await self.object(tool, items, item_path, "")
            count += 1
        await self.write(pending + "]")

    def used_up(
        self,
        tool: ToolSpec,
        items: dict[str, Any],
        item_path: tuple[str, ...],
        named: tuple[str, int] | None = None,
    ) -> bool:
        """Whether earlier items took every listed value of one of the
        item's identifying keys, or of its `named` enum key (item_identities.py):
        the list's source is used up, so it ends. The grammar lists only the
        members the request names: another item could only repeat one."""
        props = items.get("properties", {})
        for key in [*identity_keys(items), *(named[:1] if named else ())]:
            path = (*item_path, key)
            listed = self.grammars.choices(tool, key, path, props[key])
            if listed and not self.identities.free(path, listed):
                return True
        return False

    async def whole(self, tool: ToolSpec, schema: Any, path: tuple[str, ...]) -> tuple[str, str]:
        """A value Forge does not walk (an array of scalars, a union): one
        piece under its own grammar; returns (its end Forge has yet to
        write, what the model wrote after it). An array of scalars is
        followed, as a string is, by anything and cut by a stop string: the
        model's `"],` (last item, another key) is then its own token, where
        a grammar that ended at `]` would hold it to `",` and more items."""
        scalars = scalar_array(schema)
        grammar = self.grammars.nested_value(tool, path, schema, "rest" if scalars else "")
        if grammar is None:
            raise _Malformed
        piece = await self.ask(grammar, ARRAY_STOPS if scalars else [], self.left, stream=True)
        end = "]" if scalars and piece.stop == "word" else ""
        try:
            json.loads(piece.text + end)
        except ValueError as exc:
            raise _Malformed from exc
        await self.take(piece)
        return end, piece.stopping_word[1:].strip()[:1] if end else ""


async def piece_call(
    tools: list[ToolSpec],
    grammars: PieceGrammars,
    generate: GeneratePiece,
    emit: Emit,
    max_tokens: int,
    next_tokens: NextTokens | None = None,
    rng: random.Random | None = None,
    score: ScoreValues | None = None,
) -> PieceCall | None:
    """One `{"tool": ..., "args": {...}}` call among `tools`, or None when a
    piece came back malformed (make the call with the whole-call grammar).
    With `next_tokens`, Forge chooses the tool and every listed value itself
    (`choose`; with `score`, a listed value by its whole likelihood); `rng`
    samples those choices."""
    writer = _Writer(grammars, generate, emit, max_tokens, next_tokens, rng, score)
    try:
        await writer.write(await writer.call(tools))
    except _Truncated:
        return PieceCall(writer.text, truncated=True, requests=writer.requests)
    except _Malformed:
        return None
    return PieceCall(writer.text, requests=writer.requests)


async def piece_batch(
    tools: list[ToolSpec],
    grammars: PieceGrammars,
    generate: GeneratePiece,
    emit: Emit,
    max_tokens: int,
    next_tokens: NextTokens | None = None,
    rng: random.Random | None = None,
    min_calls: int = 1,
    max_calls: int = 0,
    score: ScoreValues | None = None,
) -> PieceCall | None:
    """A parallel batch `[call, call, ...]`, each call in pieces. After each
    call the model's likeliest `,` or `]` decides whether another follows,
    at least `min_calls` (the request's numbers need them) and at most
    `batch_cap` (distinct calls the listed values allow, MAX_CALLS),
    `max_calls` (what the request lists; 0: no bound) and what max_tokens
    leaves room for; a call the batch already has closes it."""
    writer = _Writer(grammars, generate, emit, max_tokens, next_tokens, rng, score)
    low = max(1, min(min_calls, MAX_CALLS))
    high = max(low, min(batch_cap(tools, grammars), max_calls or MAX_CALLS))
    try:
        await writer.write("[")
        count = 0
        # The most tokens one call of the batch took: another is begun only
        # while max_tokens leaves room for one more like it, so a batch
        # closes whole instead of being cut off in its last call.
        biggest = 0
        made: set[str] = set()
        while True:
            left, start = writer.left, len(writer.text)
            pending = await writer.call(tools)
            biggest = max(biggest, left - writer.left)
            count += 1
            if count >= low and writer.left < 2 * biggest:
                high = count
            # A call the batch already has is the model stuttering: it would
            # go on repeating, and the repeat is dropped (repeat_guard.distinct).
            call = _canonical(writer.text[start:] + pending)
            if count >= low and call in made:
                high = count
            made.add(call)
            if count >= high or count < low:
                await writer.write(pending)
                if count >= high:
                    break
            elif not await writer.more(pending, ",", "]"):
                break
            await writer.write(", ")
        await writer.write("]")
    except _Truncated:
        return PieceCall(writer.text, truncated=True, requests=writer.requests)
    except _Malformed:
        return None
    return PieceCall(writer.text, requests=writer.requests)


def _canonical(call: str) -> str:
    """A call's JSON with its keys sorted; the text itself when it does not parse."""
    try:
        return json.dumps(json.loads(call), sort_keys=True)
    except ValueError:
        return call


def _open_string(piece: Piece) -> bool:
    """A string piece a stop string cut before its closing quote: one of
    STRING_STOPS (which begin with it), or a runaway stop inside the value;
    not a runaway stop the model wrote after its own closing quote."""
    if piece.stop != "word":
        return False
    if piece.stopping_word not in RUNAWAY_STOPS:
        return True
    try:
        return not isinstance(json.loads(piece.text.strip()), str)
    except ValueError:
        return True


def _value(piece: Piece, stringy: bool) -> str | None:
    """The piece as compact JSON, or None when it is not one whole value."""
    raw = piece.text.strip()
    if stringy and _open_string(piece):
        # The stop string began with the closing quote.
        raw += '"'
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if stringy != isinstance(value, str):
        return None
    return json.dumps(value, ensure_ascii=False)


def _string(piece: Piece) -> str | None:
    raw = _value(piece, True)
    return None if raw is None else str(json.loads(raw))


def _key(piece: Piece, optional: list[str]) -> str | None:
    """The optional key a choice named, "}" when it closed, None otherwise."""
    if piece.stopping_word == "}" or piece.text.strip() == "}":
        return "}"
    raw = piece.text.strip().removeprefix(",").strip()
    if piece.stopping_word == '":':
        raw += '"'
    else:
        raw = raw.removesuffix(":").strip()
    try:
        key = json.loads(raw)
    except ValueError:
        return None
    return key if key in optional else None
