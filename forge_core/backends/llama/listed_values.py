"""Which of the values a grammar lists the model writes, found without a
grammar: from its likeliest next tokens where the values part (`choose`),
or from each whole value's likelihood (`likeliest`, with a scorer such as
piece_requests.py `PieceRequests.score`). pieces.py asks these for a tool's
name, an enum, grounded candidates, bound values and the request's numbers.
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable
from typing import Any

# (call so far, k) -> the model's k likeliest next tokens, (text, probability),
# likeliest first.
NextTokens = Callable[[str, int], Awaitable[list[tuple[str, float]]]]
# Tokens looked at when Forge chooses among listed values itself.
TOP_K = 20
# (call so far, values) -> how likely the model is to write each value
# there (log-probabilities), or None when they cannot be scored.
ScoreValues = Callable[[str, list[str]], Awaitable[list[float] | None]]
# Listed values are chosen by their whole likelihood (`_Writer.likeliest`)
# up to this many; a longer list by the greedy walk of `choose`.
MAX_SCORED = 12
# What may follow a value: the grammar's `rest` (a string, a name) and
# `rest-scalar` (a number) start with one of these.
AFTER_STRING = ',}\n "'
AFTER_SCALAR = ",}\n"


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


def closed_set(schema: dict[str, Any]) -> bool:
    """Whether a value's schema itself names every value it may take (an
    enum, a const, a boolean), rather than the conversation supplying them."""
    return "enum" in schema or "const" in schema or schema.get("type") == "boolean"


async def likeliest(
    call: str, values: list[str], score: ScoreValues, rng: random.Random | None
) -> tuple[str | None, int]:
    """Which of `values` the model is likeliest to write after `call`,
    judged on each whole value (every token, and its end) rather than on
    the first token where they part: "Osaka" and "Oslo" part after "Os",
    and a value whose first token is likely may still be unlikely as a
    whole. `rng` draws by the scores instead (temperature > 0). Returns the
    choice, None when the scores did not come back, and the requests taken."""
    scores = await score(call, values)
    if scores is None:
        return None, len(values)
    if rng is not None:
        top = max(scores)
        return rng.choices(values, [math.exp(s - top) for s in scores])[0], len(values)
    return values[max(range(len(values)), key=scores.__getitem__)], len(values)


def _common_prefix(texts: list[str]) -> str:
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]
