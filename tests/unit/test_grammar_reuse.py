"""Grammar work a turn shares with the turn before and within a call: the
trie of excluded strings is kept by its arguments, and a call's piece
grammars make each argument's rule once."""

from __future__ import annotations

from typing import Any

import pytest

from forge_core import grammar_builder
from forge_core.grammar import PieceGrammars, piece_grammars
from forge_core.workflow import ToolSpec

REPORT = ToolSpec(
    "report",
    "",
    {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]},
)
STUCK = [("report", {"summary": "stuck"}), ("report", {"summary": "stalled"})]


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    grammar_builder._EXCLUDING.clear()


def _count(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[int]:
    calls = [0]
    real = getattr(cls, name)

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, counted)
    return calls


def test_the_next_turn_reuses_the_trie_and_gets_the_same_grammar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = _count(monkeypatch, grammar_builder.Builder, "_string_excluding")
    first = piece_grammars(excluded=STUCK).value(REPORT, "summary", True)
    second = piece_grammars(excluded=STUCK).value(REPORT, "summary", True)
    assert made[0] == 1
    assert first is not None and first == second
    # Other excluded values are another trie.
    other = piece_grammars(excluded=[("report", {"summary": "done"})]).value(
        REPORT, "summary", True
    )
    assert made[0] == 2 and other != first


def test_a_name_that_holds_another_rule_makes_the_trie_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = _count(monkeypatch, grammar_builder.Builder, "_string_excluding")
    builder = grammar_builder.Builder()
    name = builder.string_excluding({"stuck"}, 1, 40, "t-args-a")
    kept = dict(builder.rules)
    taken = grammar_builder.Builder()
    clash = next(n for n in kept if n.startswith("t-args-a-x"))
    taken.rules[clash] = '"something else"'
    again = taken.string_excluding({"stuck"}, 1, 40, "t-args-a")
    assert made[0] == 2
    # The other rule is left as it was; the trie lives under other names.
    assert taken.rules[clash] == '"something else"'
    grammar_text = PieceGrammars(taken, 0, [])._root(again)
    referenced = {word.strip("()") for word in grammar_text.split()}
    assert clash not in referenced and f"{clash}-2" in referenced
    assert name in kept


def test_the_cache_forgets_the_least_recently_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grammar_builder, "EXCLUDING_KEPT", 2)
    for value in ("a", "b", "a", "c"):
        grammar_builder.Builder().string_excluding({value}, 0, 8, "t")
    assert [sorted(k[0]) for k in grammar_builder._EXCLUDING] == [["a"], ["c"]]


def test_choices_then_value_make_the_arguments_rule_once(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _count(monkeypatch, PieceGrammars, "_make_value_rule")
    grammars = piece_grammars(excluded=STUCK)
    assert grammars.choices(REPORT, "summary") is None
    value = grammars.value(REPORT, "summary", True)
    assert made[0] == 1 and value is not None and '"s"' in value
