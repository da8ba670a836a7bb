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
ask for the piece under a grammar at all: it reads the model's likeliest next
tokens (`choose`), takes the likeliest one that continues a listed value --
the token the grammar would have let through -- and writes the rest of that
value itself. A grammar then only ever corrects the model inside open
values, where it must.

Tools whose arguments nest (objects, arrays, unions) get their name as a
piece and all their arguments from the whole-arguments grammar. A piece that
does not come back as the JSON it must be (a value cut at an escaped quote)
returns None: the caller makes the call with the whole-call grammar instead.
"""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from forge_core.grammar import PieceGrammars
from forge_core.workflow import ToolSpec

# What Forge writes first.
OPENING = '{"tool":'
# Where a string value ends: its closing quote and what the model writes
# after it. The opening quote is followed by the value, never by these.
STRING_STOPS = ['",', '"}', '"\n', '" ']
# Where a number, boolean or null ends.
SCALAR_STOPS = [",", "}", "\n"]
# A key choice ends with the key's colon, or closes the arguments.
KEY_STOPS = ['":', "}"]
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
# (call so far, k) -> the model's k likeliest next tokens, (text, probability),
# likeliest first.
NextTokens = Callable[[str, int], Awaitable[list[tuple[str, float]]]]
# Tokens looked at when Forge chooses among listed values itself.
TOP_K = 20
# What may follow a value: the grammar's `rest` (a string, a name) and
# `rest-scalar` (a number) start with one of these.
AFTER_STRING = ',}\n "'
AFTER_SCALAR = ",}\n"
# Text of the call as it grows, for TOOL_CALL_DELTA chunks.
Emit = Callable[[str], Awaitable[None]]


@dataclass
class PieceCall:
    text: str
    truncated: bool = False
    requests: int = 0


def _string_valued(schema: dict[str, Any]) -> bool | None:
    """True for a string, False for another scalar, None when not flat."""
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


def flat(tool: ToolSpec) -> bool:
    """Whether every argument of `tool` is a scalar Forge can ask for alone."""
    props = tool.parameters.get("properties", {})
    return isinstance(props, dict) and all(
        isinstance(s, dict) and _string_valued(s) is not None for s in props.values()
    )


class _Budget:
    def __init__(self, max_tokens: int) -> None:
        self.left = max_tokens if max_tokens > 0 else 1 << 20
        self.requests = 0

    def take(self, piece: Piece) -> None:
        self.left -= piece.tokens
        self.requests += 1


async def choose(
    call: str,
    values: list[str],
    next_tokens: NextTokens,
    rng: random.Random | None = None,
    spaced: bool = False,
) -> tuple[str | None, int, str]:
    """Which of `values` (compact JSON texts) the model writes after `call`,
    found from its likeliest next tokens instead of under a grammar, and the
    requests that took. Forge writes the values' common start itself and asks
    only where they part; a token is allowed when it continues some value,
    or ends one where a value may end, exactly what the grammar would
    allow, so the greedy choice is the grammar's own. None when no allowed
    token is among the TOP_K: the grammar must decide. `rng` samples among
    the allowed tokens (temperature > 0) instead of taking the likeliest.
    The third item is what the chosen token wrote after the value (`,` when
    the model went on to another key, `}` when it closed), else "".

    `spaced`: the value follows a key's colon the way the conversation's own
    calls write it, after one space. Where every value is a string, Forge
    then writes ` "` itself instead of asking whether the model puts the
    space there: one request less per choice (the model's ` "` came at
    94-98% in the real-model runs, and its alternatives were tokens no value
    allows).
    """
    # The value follows the key's colon after an optional space, as `sp` allows.
    remaining = [(f" {v}", v) for v in values]
    if not (spaced and all(v.startswith('"') for v in values)):
        remaining += [(v, v) for v in values]
    written = ""
    requests = 0
    while len({v for _, v in remaining}) > 1:
        common = _common_prefix([t for t, _ in remaining])
        # What every value has next, Forge writes; but not a trailing space:
        # a prompt that ends in one puts a small model off its tokens.
        written += common[len(written) :].rstrip(" ")
        tokens = await next_tokens(call + written, TOP_K)
        requests += 1
        allowed = []
        for piece, prob in tokens:
            text = written + piece
            going = [(t, v) for t, v in remaining if t.startswith(text)]
            ending = [
                (t, v)
                for t, v in remaining
                if text.startswith(t)
                and len(text) > len(t)
                and text[len(t)] in (AFTER_STRING if v.startswith('"') else AFTER_SCALAR)
            ]
            if piece and (going or ending):
                allowed.append((prob, text, going, ending))
        if not allowed:
            return None, requests, ""
        if rng is None:
            _, text, going, ending = allowed[0]
        else:
            weights = [max(prob, 1e-9) for prob, *_ in allowed]
            _, text, going, ending = rng.choices(allowed, weights)[0]
        if ending and not going:
            t, v = max(ending, key=lambda tv: len(tv[0]))
            return v, requests, text[len(t) :].strip()[:1]
        remaining = going
        written = text
    return remaining[0][1], requests, ""


async def piece_call(
    tools: list[ToolSpec],
    grammars: PieceGrammars,
    generate: GeneratePiece,
    emit: Emit,
    max_tokens: int,
    next_tokens: NextTokens | None = None,
    rng: random.Random | None = None,
) -> PieceCall | None:
    """One `{"tool": ..., "args": {...}}` call among `tools`, or None when a
    piece came back malformed (make the call with the whole-call grammar).
    With `next_tokens`, Forge chooses the tool and every listed value itself
    (`choose`); `rng` samples those choices."""
    budget = _Budget(max_tokens)
    text = OPENING
    await emit(text)

    async def pick(values: list[str], spaced: bool = True) -> tuple[str | None, str]:
        if next_tokens is None:
            return None, ""
        chosen, requests, after = await choose(text, values, next_tokens, rng, spaced)
        budget.requests += requests
        return chosen, after

    async def ask(grammar: str, stops: list[str], limit: int, stream: bool = False) -> Piece | None:
        if budget.left <= 0:
            return None
        piece = await generate(text, grammar, stops, min(limit, budget.left), stream)
        budget.take(piece)
        return piece

    names = [t.name for t in tools]
    chosen, _ = (None, "") if len(tools) == 1 else await pick([json.dumps(n) for n in names])
    if len(tools) == 1:
        name = names[0]
    elif chosen is not None:
        name = json.loads(chosen)
    else:
        piece = await ask(grammars.tool_name(names), STRING_STOPS, budget.left)
        if piece is None or piece.stop == "limit":
            return PieceCall(text, truncated=True, requests=budget.requests)
        found = _string(piece)
        if found not in names:
            return None
        name = found
    tool = tools[names.index(name)]
    part = f" {json.dumps(name)}, " + '"args":'
    text += part
    await emit(part)

    if not flat(tool):
        args = grammars.args(tool)
        if args is None:
            return None
        piece = await ask(args, [], budget.left, stream=True)
        if piece is None or piece.stop == "limit":
            return PieceCall(text, truncated=True, requests=budget.requests)
        text += piece.text
        if not piece.streamed:
            await emit(piece.text)
        return PieceCall(text, requests=budget.requests)

    props: dict[str, Any] = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    optional = [k for k in props if k not in required]
    keys = [k for k in props if k in required]
    first = True
    part = " {"
    # What the model wrote right after the last value: "," (another key),
    # "}" (the end) or "" (neither, or not seen). The whole-call grammar
    # would hold it to that: after `",` only a key may follow.
    after = ""
    # The closing quote of a listed string Forge wrote, held back when a key
    # choice follows: the model decides with its own `",` or `"}` token, as
    # it would have written the value's end itself.
    quote = ""
    while True:
        if not keys:
            if not optional or after == "}":
                part += quote
                break
            # Forge's text so far ends in `{` or a value; the choice starts there.
            text += part
            await emit(part)
            part = ""
            comma = "" if first else ", "
            options = {f"{quote}{comma}{json.dumps(k)}:": k for k in optional}
            if after != ",":
                options[quote + "}"] = "}"
            named, _ = await pick(list(options), spaced=False)
            if named is not None:
                chosen = options[named]
                part, quote = quote, ""
            else:
                text += quote
                await emit(quote)
                quote = ""
                choice = grammars.next_key(optional, first, closable=after != ",")
                piece = await ask(choice, KEY_STOPS, KEY_TOKENS)
                if piece is None or piece.stop == "limit":
                    return PieceCall(text, truncated=True, requests=budget.requests)
                chosen = _key(piece, optional)
                if chosen is None:
                    return None
            if chosen == "}":
                break
            keys = [chosen]
            optional = optional[optional.index(chosen) + 1 :]
        key = keys.pop(0)
        part += ("" if first else ", ") + json.dumps(key) + ":"
        first = False
        text += part
        await emit(part)
        part = ""
        stringy = _string_valued(props[key])
        listed = grammars.choices(tool, key)
        chosen, after = await pick(listed) if listed else (None, "")
        if chosen is not None:
            if chosen.startswith('"') and not keys and optional and not after:
                chosen, quote = chosen[:-1], '"'
            part = " " + chosen
            continue
        grammar = grammars.value(tool, key, bool(stringy))
        if grammar is None:
            return None
        stops = STRING_STOPS if stringy else SCALAR_STOPS
        piece = await ask(grammar, stops, budget.left, stream=True)
        if piece is None or piece.stop == "limit":
            return PieceCall(text, truncated=True, requests=budget.requests)
        if _value(piece, bool(stringy)) is None:
            return None
        after = piece.stopping_word.strip().removeprefix('"')[:1]
        # The value as the model wrote it (the client may have it already),
        # and the closing quote the stop string took.
        closing = '"' if stringy and piece.stop == "word" else ""
        if piece.streamed:
            text += piece.text
            part = closing
        else:
            part = piece.text + closing
    part += "}}"
    text += part
    await emit(part)
    return PieceCall(text, requests=budget.requests)


def _common_prefix(texts: list[str]) -> str:
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _value(piece: Piece, stringy: bool) -> str | None:
    """The piece as compact JSON, or None when it is not one whole value."""
    raw = piece.text.strip()
    if stringy and piece.stop == "word":
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
