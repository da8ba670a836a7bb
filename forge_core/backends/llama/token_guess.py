"""A text's token count guessed from its characters, without asking
llama-server (server.py scales the guess by what llama-server counted for
earlier prompts)."""

from __future__ import annotations

import re
from functools import lru_cache

# A guess's units: a word, one digit, a run of ASCII punctuation, one other
# character. Tokenizers give a common word one token and a long one a few,
# every digit its own, punctuation pairs ('{"', '",') one, and a non-ASCII
# character about one.
_GUESS_UNITS = re.compile(r"[A-Za-z]+|\d|[!-/:-@\[-`{-~]+|[^\sA-Za-z\d!-/:-@\[-`{-~]")


@lru_cache(maxsize=4096)
def guess_tokens(text: str) -> int:
    total = 0
    for unit in _GUESS_UNITS.findall(text):
        if unit[0].isascii() and unit[0].isalpha():
            total += 1 + (len(unit) - 1) // 6
        elif unit[0].isascii() and not unit[0].isdigit():
            total += (len(unit) + 1) // 2
        else:
            total += 1
    return total
