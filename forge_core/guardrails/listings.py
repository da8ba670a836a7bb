"""Lists that match their source: an array of ids takes whole ids from one
listing, each once, in the listing's order, and closes when it is used up.

Unconstrained, a small model repeats items to the array's cap and writes
fragments of the ids it read (`["204", "377", "204", ...]` for a crate list
of BX-10204, BX-10377, BX-10415). An array parameter of strings whose
name says it holds ids (`crate_ids`, `skus`, `order_refs`) takes items from
one listing: the ids of one shape (letters kept, digits counted: BX-#####)
that the request writes two or more of, else the newest result that does.
The grammar admits any ordered selection of that listing without repeats
(grammar_builder.py, `Builder.preferred_items`), so the list may hold some of them
and cannot run on past the last. Where the request tells some entries from
the others ("every loan that falls due this week, except Ola's": entries.py
with a `ListReading`, entry_filters.py), the list is exactly those. Items a
failed call sent that its error
names ("not in stock: SKU-2") are left out of the next one. An array of
other strings takes the ids a text lists right after its noun ("tables
T4 and T5" for `tables`), as a list of the same kind.
"""

from __future__ import annotations

import re
from typing import Any

from forge_core.guardrails import Preferred, TurnFacts, parameters, undecided
from forge_core.guardrails.entries import described, telling_words
from forge_core.guardrails.entry_filters import ListReading, withholds
from forge_core.guardrails.grounding import extract_candidates, id_shape, is_identifier_like
from forge_core.guardrails.relative_dates import stated_today
from forge_core.guardrails.text import stems, topic_stems, words
from forge_core.schema_rules import text_fits

MAX_LISTING = 16
# A list the request told apart from the rest of its listing is exactly
# those entries (bench.value_ablation's `exact_lists` turns it off).
EXACT_LISTS = True
MIN_BARE_ID = 4
_DAY_MONTH = re.compile(r"\d{1,2}[-/.]\d{1,2}")
_SUFFIX_LETTER = re.compile(r"#[Aa]$")


def listing(text: str, names: set[str]) -> list[str]:
    """The largest group (two or more) of same-shaped ids in `text`."""
    groups: dict[str, list[str]] = {}
    for value in extract_candidates([text], names):
        # "a size 9 ... to Friday 16 May": short bare numbers are no
        # list of ids.
        if (
            any(c.isdigit() for c in value)
            and not (value.isdigit() and len(value) < MIN_BARE_ID)
            # "due 05-06": a day and a month.
            and not _DAY_MONTH.fullmatch(value)
        ):
            # "PL-04" and "PL-07B" are one listing's: a letter after the
            # digits marks a part (a half plot), not another kind of id.
            groups.setdefault(_SUFFIX_LETTER.sub("#", id_shape(value)), []).append(value)
    best = max(groups.values(), key=len, default=[])
    return best[:MAX_LISTING] if len(best) >= 2 else []


def _id_array(name: str, schema: dict[str, Any]) -> bool:
    items = schema.get("items")
    return (
        schema.get("type") == "array"
        and isinstance(items, dict)
        and items.get("type") == "string"
        and not any(k in items for k in ("enum", "const"))
        and is_identifier_like(re.sub(r"s$", "", name))
    )


def _string_array(schema: dict[str, Any]) -> bool:
    items = schema.get("items")
    return (
        schema.get("type") == "array"
        and isinstance(items, dict)
        and items.get("type") == "string"
        and not any(k in items for k in ("enum", "const", "format"))
    )


# What a label's listing runs to: the end of its sentence or clause.
_LISTING_END = re.compile(r"[.;:(\n]")


def named_listing(name: str, texts: list[str], names: set[str]) -> list[str]:
    """The ids a text lists right after the array's own noun, in the
    plural: "tables by the window T4 and T5" for `tables`, "rooms 402, 407 and
    411" for `rooms`; [] where no text does."""
    said = words(name)
    if not said or not said[-1].endswith("s") or said[-1].endswith("ss"):
        return []
    label = re.compile(rf"\b{re.escape(said[-1])}\b\W{{0,2}}", re.IGNORECASE)
    for text in texts:
        for m in label.finditer(text):
            end = _LISTING_END.search(text, m.end())
            found = listing(text[m.end() : end.start() if end else len(text)], names)
            if found:
                return found
    return []


def _item_fits(schema: dict[str, Any], value: str) -> bool:
    items = schema.get("items")
    return not isinstance(items, dict) or text_fits(items, value)


def _rejected_items(facts: TurnFacts, tool: str, param: str) -> set[str]:
    """Items a failed call of `tool` sent in `param` that its error names
    ("not in stock: SKU-2"): never offered again."""
    return {
        item
        for f in facts.failures
        if f.tool == tool and isinstance(f.args.get(param), list)
        for item in f.args[param]
        if isinstance(item, str) and item in f.error
    }


class Listings:
    name = "listings"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        tools = facts.workflow.tools
        names = {t.name for t in tools} | {n for t in tools for n, _ in parameters(t)}
        sources = list(facts.requests) + [t for _, t in reversed(facts.results)]
        # Which tool wrote each result (a listing's own words are its tool's).
        writers = {t: tool_name for tool_name, t in facts.results}
        listed = {t: listing(t, names) for t in sources}
        for tool in tools:
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                if not undecided(out, key):
                    continue
                if not _id_array(name, schema):
                    # An array of things a result lists under their noun.
                    named = named_listing(name, sources, names) if _string_array(schema) else []
                    if named:
                        out.items[key] = [v for v in named if _item_fits(schema, v)] or named
                        out.reasons[key] = self.name
                    continue
                # The first source with a listing of ids this array's items
                # fit: not the digit groups of a phone number the request
                # writes when the items are "FX-" and five digits.
                text, fitting = next(
                    (
                        (t, fit)
                        for t in sources
                        if (fit := [v for v in listed[t] if _item_fits(schema, v)])
                    ),
                    ("", []),
                )
                if not fitting:
                    continue
                # The entries the request describes: "the Tuesday crates".
                # The names of this tool and of the listing's tell no entry
                # apart ("list_crates"); another tool's may ("in stock").
                topic = topic_stems(name)
                ignore = set(stems(tool.name)) | set(stems(name))
                # The listing's own tool's words tell no entry apart, unless
                # some entries say them and others not ("open" on a list of
                # open tickets whose other entries were closed since).
                ignore |= set(stems(writers.get(text, ""))) - telling_words(fitting, [text])
                today = stated_today(facts.workflow.system_prompt)
                reading = ListReading(today, refusals=not withholds(tool.name))
                chosen = described(fitting, [text], facts.requests, ignore, topic, reading)
                rejected = _rejected_items(facts, tool.name, name)
                kept = [v for v in chosen if v not in rejected] or chosen
                out.items[key] = kept
                if EXACT_LISTS and len(chosen) < len(fitting):
                    # The request told these entries from the others: the
                    # list is all of them, not whichever the model keeps
                    # (the items stay the grammar's where the schema
                    # refuses the whole list, a minItems above it).
                    out.values[key] = [kept]
                out.reasons[key] = self.name
