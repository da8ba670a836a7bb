"""A forge-server with some of issue 34's guardrails taken out, for ablation.

    .venv/bin/python -m bench.value_ablation --without quantities dates -- \\
        --port 50052 --threads 1 --slots 1 --ctx-size 8192 --journal none

Everything after `--` is forge-server's own command line. `--without` names
value guardrails (forge_core/guardrails/registry.py: error_values,
stated_booleans, quantities, dates, enum_mentions, identifier_provenance,
example_shapes, file_edits, proper_names, listings, written_codes,
clock_times, legend_codes, reply_messages, decline_reasons), two loop rules:
`destructive_inference` (only marked tools are destructive) and `decline`
(no decline path), `listing_entries`
(ids and id lists no longer narrowed to the listing entries the request
describes: guardrails/entries.py), and round 3's single mechanisms inside
those guardrails (`MECHANISMS`: money_routing, relative_dates,
digit_groups, requested_ids, subject_sentences, longest_member, enum_gist,
spoken_hours, move_to, route_ends, name_parts, rejected_items, list_errors,
array_objects, read_only_names, labelled_enum, excluded_entries,
date_roles, tool_dates, number_decline, runaway_stops; bench/RESULTS.md
§27; unasked_actions, sent_elsewhere, one_word_labels, report_tools,
hour_ranges, deadline_dates, latest_entry, frequencies, week_starts,
composed_formats, unit_words, only_declines, day_parts: §28; record_coherence,
stated_times, people_counts, any_noun_counts, denied_members, error_status,
street_lines, own_values, own_names, date_templates, error_abbreviations,
entry_measures: §30; null_context, spoken_digits, optional_plus,
spoken_fractions, spoken_half_hours, date_times: §31; spoken_minus,
half_hours, next_week_days, described_options, doer_counts, date_form_gap,
quarter_from, dated_weekdays, labelled_phones,
sibling_members, stated_today_base, availability, labelled_numbers,
short_bare_ids, day_month_ids, label_heads, prose_ids, numbered_nouns,
paired_range_ends, contraction_words, unit_labels,
label_narrows: §32; shunned_markup, kept_aside, bare_numbers,
error_statuses, blamed_arguments, place_prepositions, verb_asks: §33;
item_identities, entry_numbers, units_and_years, error_prefixes,
carried_ids, labelled_amounts, shared_month_days, tool_text_times: §34;
named_periods, clock_bounds, amount_bounds, refusals, differing_labels,
exact_lists, unfounded_keys: §35; named_members, item_gist, item_context,
item_segments, restated_items, postal_parts, exact_counts, day_halves,
echoed_lines: §36; ended_records, waiting_records, described_shapes,
day_part_hours, comparatives, refused_days, room_for_party, strict_bounds,
bounds_not_words, question_numbers, counting_heads, parent_labels,
parent_dates, dates_apart, spoken_counts, start_words, asked_times,
clock_questions, listed_members, request_gist, short_codes, negated_units,
dates_in_place, label_before_number, named_days, refused_choice, week_parts,
derived_days, size_words: §37; the
value guardrails
phone_numbers and addresses go by their own names).
The run's outcomes are then measured from outside, with the outside
workflows' runner or `forge-eval run --address`, against the
same server with nothing taken out (bench/RESULTS.md §22).

This is a benchmark harness, not a product switch: the guardrails are
patched out of this process before the server starts.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import Any

from forge_core.workflow import ToolSpec

LOOP_RULES = ("destructive_inference", "decline", "listing_entries")
# Round 3's mechanisms inside those guardrails (bench/RESULTS.md §27), one
# name each: the module attribute a run without it replaces, and with what.
_NEVER = re.compile(r"(?!x)x")
MECHANISMS: dict[str, tuple[str, str, Any]] = {
    "money_routing": ("destructive", "_MONEY_ROUTING", _NEVER),
    "relative_dates": ("dates", "relative_dates", lambda text, today: []),
    "digit_groups": ("grounding", "_grouped_numbers", lambda text: []),
    "requested_ids": ("provenance", "_requested", None),
    "subject_sentences": ("mentions", "_subjects", lambda requests: []),
    "longest_member": ("mentions", "_longest", lambda named, worded, text_stems: named),
    "enum_gist": ("mentions", "_partly_named", lambda members, requests: []),
    "spoken_hours": ("times", "_AT_HOUR", _NEVER),
    "move_to": ("times", "_new_sides", lambda requests: requests),
    "route_ends": ("proper_names", "route_end", lambda name, texts, names: names),
    "name_parts": ("proper_names", "name_part", lambda name, names: names),
    "rejected_items": ("listings", "_rejected_items", lambda facts, tool, param: set()),
    "list_errors": ("error_values", "_names_an_item", lambda args, error: False),
    "array_objects": ("", "parameters", None),
    "read_only_names": ("destructive", "inferred_read_only", lambda tool: tool.read_only),
    "labelled_enum": ("mentions", "_labelled", lambda member, label, text: False),
    "excluded_entries": ("entries", "_excluded_words", lambda requests: set()),
    "date_roles": ("dates", "_role", lambda name: ""),
    "tool_dates": ("dates", "takes_date_by_tool", lambda name, schema, description, *_: False),
    "number_decline": ("tool_relevance", "lacks_numbers", lambda tools, request: False),
    "runaway_stops": ("", "RUNAWAY_STOPS", None),
    # Round 3, session 4 (bench/RESULTS.md §28).
    "unasked_actions": ("destructive", "_UNASKED_ACTIONS", False),
    "sent_elsewhere": ("", "sent_elsewhere", None),
    "one_word_labels": ("provenance", "_one_word_apart", lambda topic, said: False),
    "report_tools": ("mentions", "reports", lambda facts, tool: facts.is_terminal(tool)),
    "hour_ranges": ("times", "_HOUR_RANGE", _NEVER),
    "deadline_dates": ("dates", "_DEADLINE_WORDS", frozenset()),
    "latest_entry": ("mentions", "latest_dated", lambda members, texts: None),
    "frequencies": ("mentions", "_FREQUENCIES", []),
    "week_starts": ("dates", "week_starts", lambda text, today: []),
    "composed_formats": ("error_values", "composed", lambda value, error, requests, year: []),
    "unit_words": ("quantities", "_NUMBER_WORD_HYPHEN", re.compile(r"(?!x)(x)")),
    "only_declines": ("tool_relevance", "only_declines", lambda terminals, respond: False),
    "day_parts": ("entries", "_day_parts", lambda entry: set()),
    # Round 3, session 5 (bench/RESULTS.md §30).
    "record_coherence": ("coherence", "cohere", lambda facts, out: None),
    "stated_times": ("entries", "_at_stated_times", lambda values, texts, requests: values),
    "people_counts": ("quantities", "_WE_COUNT", _NEVER),
    "any_noun_counts": ("quantities", "_ANY_COUNT", frozenset()),
    "denied_members": ("mentions", "_denied", lambda members, requests: set()),
    "error_status": ("error_values", "_STATUS", _NEVER),
    "street_lines": ("addresses", "_LINE_NAMES", ()),
    "own_values": ("provenance", "whose", lambda values, requests, someone_else: values),
    "own_names": ("proper_names", "own_names", lambda requests: set()),
    "date_templates": ("dates", "date_template", lambda text: None),
    "error_abbreviations": ("error_values", "abbreviated", lambda values, requests: values),
    "entry_measures": ("entries", "measures", lambda text: set()),
    # Round 3, session 6 (bench/RESULTS.md §31), with `--member-choice
    # likelihood`: members scored without taking off their likelihood with
    # no conversation.
    "null_context": ("", "NULL_WEIGHT", None),
    "spoken_digits": ("phones", "_SPOKEN_RUN", _NEVER),
    "spoken_fractions": ("quantities", "spoken_fractions", lambda text: text),
    "date_times": ("dates", "_on_days", lambda days, times: []),
    "spoken_half_hours": (
        "times",
        "_spoken_hour",
        lambda hour, match, evening: hour + 12 if match.group("later") and hour < 12 else hour,
    ),
    "optional_plus": (
        "phones",
        "_INTERNATIONAL",
        re.compile(r"international|e\.?164|country code|\\\+|^\^?\+", re.IGNORECASE),
    ),
    # Round 3, session 7 (bench/RESULTS.md §32).
    "spoken_minus": ("quantities", "_SPOKEN_MINUS", _NEVER),
    "half_hours": ("times", "_HALF_HOUR", _NEVER),
    "next_week_days": ("relative_dates", "_week_on", lambda m, today: None),
    "described_options": ("mentions", "described_options", lambda name, schema, description: []),
    "doer_counts": ("quantities", "_DOERS", _NEVER),
    "dated_weekdays": ("dates", "on_its_weekday", lambda span, when: when),
    "labelled_phones": ("provenance", "labelled_phones", lambda text: set()),
    "sibling_members": ("mentions", "sibling_members", lambda name, schema, tools: []),
    "stated_today_base": ("dates", "stated_today", lambda system_prompt: None),
    "availability": ("entries", "by_availability", lambda values, entries, requests: values),
    "shunned_markup": ("free_strings", "MARKUP", ""),
    "kept_aside": ("entries", "_kept_aside", lambda requests: set()),
    "bare_numbers": ("entries", "bare_numbers", lambda text: set()),
    "error_statuses": ("id_grounding", "error_statuses", lambda state: set()),
    "blamed_arguments": ("provenance", "_blamed", lambda failure: failure.args),
    "place_prepositions": ("proper_names", "_ROUTE_ENDS", None),
    "verb_asks": ("destructive", "_asking_words", None),
    # Round 3, session 9 (bench/RESULTS.md §34).
    "item_identities": ("", "identity_keys", None),
    "entry_numbers": ("id_grounding", "entry_numbers", lambda results, requests: {}),
    "units_and_years": ("provenance", "only_a_unit_or_year", lambda value, texts: False),
    "error_prefixes": ("error_values", "prefixed_ids", lambda error, facts, sent, param: []),
    "carried_ids": ("provenance", "_sent_as", lambda facts, tool, param, admissible: []),
    "labelled_amounts": ("quantities", "_in_labelled_clauses", lambda *args: []),
    "shared_month_days": ("dates", "_each_day_with_its_month", lambda text: text),
    "tool_text_times": ("times", "time_in_tool_text", lambda name, description: False),
    # Round 3, session 10 (bench/RESULTS.md §35).
    "named_periods": ("entries", "in_named_periods", lambda values, own, requests, today: values),
    "clock_bounds": ("entries", "within_clock_bounds", lambda values, own, requests: values),
    "amount_bounds": ("entries", "within_amount_bounds", lambda values, own, requests: values),
    "refusals": ("entries", "not_said_no_to", lambda values, own, requests, says: values),
    "differing_labels": ("entries", "_shared", lambda entry, said, wanted: said & wanted),
    "exact_lists": ("listings", "EXACT_LISTS", False),
    "unfounded_keys": ("values", "without_unfounded", lambda tool, texts: tool),
    # Round 3, session 11 (bench/RESULTS.md §36).
    "named_members": ("", "named_key", None),
    "item_gist": ("mentions", "_with_gist", lambda members, named, requests, tool_name: named),
    "item_context": ("id_grounding", "item_context", lambda tools, requests: {}),
    "item_segments": ("id_grounding", "request_segments", lambda requests: []),
    "restated_items": ("arguments", "drop_restated_items", lambda check, schema, args: (args, [])),
    "postal_parts": ("addresses", "prefer_postal_parts", lambda facts, out, tool, source: None),
    "exact_counts": ("values", "EXACT_COUNTS", False),
    "day_halves": ("mentions", "_day_halves", lambda text: text),
    "echoed_lines": ("arguments", "drop_echoed_lines", lambda check, schema, args: (args, [])),
    # Round 3, session 12 (bench/RESULTS.md §37).
    "ended_records": ("entries", "live_records", lambda values, entries, requests: values),
    "waiting_records": ("entries", "waiting_on_user", lambda values, entries: values),
    "described_shapes": ("provenance", "own_prefixes", lambda param, schema, nouns: set()),
    "day_part_hours": ("times", "_AT_PART_OF_DAY", _NEVER),
    "comparatives": ("entries", "compared", lambda values, entries, requests: values),
    "refused_days": ("entries", "not_on_refused_days", lambda values, own, requests: values),
    "room_for_party": ("entries", "with_room_for", lambda values, own, party: values),
    "strict_bounds": ("entry_filters", "_STRICT", frozenset()),
    "bounds_not_words": ("entries", "without_bounds", lambda text: text),
    "question_numbers": ("quantities", "_statements", lambda text: text),
    "counting_heads": ("quantities", "_counting_head", lambda name, found, results: []),
    "parent_labels": ("quantities", "parent_keys", lambda tool: {}),
    "parent_dates": ("dates", "parent_keys", lambda tool: {}),
    "dates_apart": ("dates", "_apart", lambda out, keys, reason: None),
    "spoken_counts": ("quantities", "plain_counts", lambda text: text),
    "start_words": ("times", "starts", lambda text: []),
    "asked_times": ("times", "asked_about", lambda found, results, requests, read: found),
    "clock_questions": ("reply_messages", "_ASKS_CLOCK", _NEVER),
    "listed_members": ("", "_listed_members", None),
    "short_codes": ("entries", "SHORT_CODE", 0),
    "negated_units": ("quantities", "_NOT_UNIT", _NEVER),
    "size_words": ("mentions", "sized_member", lambda member, text: False),
    "derived_days": ("dates", "derived_dates", lambda text, today: []),
    "week_parts": ("entries", "on_named_weekdays", lambda values, own, requests: values),
    "named_days": ("entry_filters", "NAMED_DAYS", False),
    "refused_choice": ("mentions", "users_choice", lambda members, named, requests, tool: named),
    "label_before_number": ("quantities", "_labelled_right_before", lambda n, found, r: []),
    "dates_in_place": ("dates", "_read_in_place", lambda text, part, read: list(read(part))),
    "request_gist": ("mentions", "gist_named", lambda members, requests, tool_name: []),
    "labelled_numbers": ("entries", "labelled_numbers", lambda text: set()),
    "short_bare_ids": ("listings", "MIN_BARE_ID", 0),
    "day_month_ids": ("listings", "_DAY_MONTH", _NEVER),
    "label_heads": ("binding", "_HEADS", frozenset()),
    "unit_labels": ("binding", "_UNITS", frozenset()),
    "label_narrows": ("", "narrowed", None),
    "prose_ids": ("", "_PROSE_NAME", None),
    "numbered_nouns": ("quantities", "_NUMBERED", _NEVER),
    "paired_range_ends": ("dates", "_paired", lambda said, siblings: False),
    "contraction_words": ("", "_FUNCTION", None),
    "date_form_gap": ("dates", "_ACROSS", re.compile(r"(?!x)x")),
    "quarter_from": (
        "times",
        "_TO",
        re.compile(
            r"(?<!from )(?<!between )\b(?:a )?(?P<q>quarter|\d{1,2}) to (?P<h>\d{1,2})"
            r"(?:(?P<later>\s*(?:pm|p\.m\.|in the (?:evening|afternoon)|at night|tonight))"
            r"|(?P<earlier>\s*(?:am|a\.m\.|in the morning)))?",
            re.I,
        ),
    ),
}


def without(names: list[str]) -> None:
    """Take the named guardrails out of this process."""
    from forge_core import run_state
    from forge_core.guardrails import registry, tool_relevance

    unknown = set(names) - set(registry.NAMES) - set(LOOP_RULES) - set(MECHANISMS)
    if unknown:
        raise SystemExit(f"--without: unknown guardrail(s) {sorted(unknown)}")
    registry.VALUE_GUARDRAILS = tuple(
        g for g in registry.VALUE_GUARDRAILS if g.name not in set(names)
    )
    # Where the engine looks the rules up: the run's state reads the
    # destructive tools, the relevance guardrail the decline paths.
    patches: list[tuple[Any, str, Callable[..., Any]]] = []
    if "destructive_inference" in names:
        patches.append((run_state, "destructive_tools", _marked_only))
    if "decline" in names:
        patches.append((tool_relevance, "decline_paths", _no_decline_path))
    for module, attribute, replacement in patches:
        setattr(module, attribute, replacement)
    if "listing_entries" in names:
        from forge_core.guardrails import listings, provenance

        setattr(listings, "described", _all_entries)  # noqa: B010 (a patch, not an API)
        setattr(provenance, "described", _all_entries)  # noqa: B010
    for name in set(names) & set(MECHANISMS):
        _take_out(name)


def _take_out(mechanism: str) -> None:
    import importlib

    from forge_core import guardrails

    module_name, attribute, replacement = MECHANISMS[mechanism]
    if mechanism == "requested_ids":
        from forge_core.guardrails import provenance

        provenance._Conversation.requested = _all_requested  # type: ignore[method-assign]
        return
    if mechanism == "labelled_phones":
        # The preference (provenance) and the grammar's grounded pool.
        from forge_core.guardrails import id_grounding, provenance

        for module in (id_grounding, provenance):
            setattr(module, "labelled_phones", lambda text: set())  # noqa: B010 (a patch)
        return
    if mechanism == "place_prepositions":
        from forge_core.guardrails import proper_names

        setattr(proper_names, "_ROUTE_ENDS", proper_names._ROUTE_ENDS[:2])  # noqa: B010 (a patch)
        return
    if mechanism == "verb_asks":
        from forge_core.guardrails import destructive

        setattr(destructive, "_asking_words", destructive._action_words)  # noqa: B010 (a patch)
        return
    if mechanism == "runaway_stops":
        from forge_core.backends.llama import pieces

        setattr(pieces, "RUNAWAY_STOPS", [])  # noqa: B010 (a patch, not an API)
        return
    if mechanism == "contraction_words":
        from forge_core.guardrails import entries

        kept = entries._FUNCTION - {"s", "d", "t", "m", "ll", "re"}
        setattr(entries, "_FUNCTION", kept)  # noqa: B010 (a patch, not an API)
        return
    if mechanism == "item_identities":
        # The writer and the taken values each took the helper by name.
        from forge_core.backends.llama import item_identities, pieces

        for module in (item_identities, pieces):
            setattr(module, "identity_keys", lambda items: [])  # noqa: B010 (a patch)
        return
    if mechanism == "listed_members":
        from forge_core.guardrails import provenance

        def _none(self: Any, facts: Any, out: Any, talk: Any) -> None:
            return None

        provenance.IdentifierProvenance._listed_members = _none  # type: ignore[method-assign]
        return
    if mechanism == "named_members":
        from forge_core.backends.llama import pieces

        setattr(pieces, "named_key", lambda items, listed: None)  # noqa: B010 (a patch)
        return
    if mechanism == "label_narrows":
        from forge_core import grammar_builder

        setattr(grammar_builder, "narrowed", lambda fits, bound: fits)  # noqa: B010 (a patch)
        return
    if mechanism == "prose_ids":
        from forge_core import grammar_builder

        setattr(grammar_builder, "_PROSE_NAME", _NEVER)  # noqa: B010 (a patch, not an API)
        return
    if mechanism == "null_context":
        from forge_core.backends.llama import piece_requests

        setattr(piece_requests, "NULL_WEIGHT", 0.0)  # noqa: B010 (a patch, not an API)
        return
    if mechanism == "sent_elsewhere":
        # provenance, dates and proper_names took the helper by name.
        original_sent = guardrails.sent_elsewhere
        for module in list(sys.modules.values()):
            if getattr(module, "sent_elsewhere", None) is original_sent:
                setattr(module, "sent_elsewhere", _nothing_sent_elsewhere)  # noqa: B010 (a patch)
        return
    if mechanism == "array_objects":
        # Every value guardrail module took `parameters` by name.
        original = guardrails.parameters
        for module in list(sys.modules.values()):
            if getattr(module, "parameters", None) is original:
                setattr(module, "parameters", _without_array_objects)  # noqa: B010 (a patch)
        return
    module = importlib.import_module(f"forge_core.guardrails.{module_name}")
    setattr(module, attribute, replacement)
    if mechanism == "digit_groups":
        module._values_in.cache_clear()


def _nothing_sent_elsewhere(facts: Any, param: str) -> set[str]:
    return set()


def _all_requested(self: Any, values: list[str], same_shape: bool = False) -> list[str]:
    return values


def _without_array_objects(tool: ToolSpec, depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """guardrails.parameters as it was before it walked into arrays."""
    out: list[tuple[str, dict[str, Any]]] = []

    def walk(schema: Any, level: int) -> None:
        if not isinstance(schema, dict) or level > 8:
            return
        for name, sub in (schema.get("properties") or {}).items():
            if isinstance(sub, dict):
                out.append((name, sub))
                walk(sub, level + 1)

    walk(tool.parameters, depth)
    return out


def _all_entries(values: list[str], *args: Any, **kwargs: Any) -> list[str]:
    return values


def _marked_only(tools: list[ToolSpec], spared: set[str]) -> set[str]:
    return {t.name for t in tools if t.destructive}


def _no_decline_path(terminals: list[ToolSpec], respond_tool: str) -> list[str]:
    return []


def main() -> None:
    argv = sys.argv[1:]
    server_argv = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--without", nargs="*", default=[])
    args = parser.parse_args(own)
    without(args.without)
    from forge_server.cli import main as serve

    serve(server_argv)


if __name__ == "__main__":
    main()
