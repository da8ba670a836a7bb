"""A forge-server with some of issue 34's guardrails taken out, for ablation.

    .venv/bin/python -m bench.value_ablation --without quantities dates -- \\
        --port 50052 --threads 1 --slots 1 --ctx-size 8192 --journal none

Everything after `--` is forge-server's own command line. `--without` names
value guardrails (forge_core/guardrails/registry.py: error_values,
stated_booleans, quantities, dates, enum_mentions, identifier_provenance,
example_shapes, file_edits, proper_names, listings, written_codes,
clock_times), two loop rules: `destructive_inference` (only marked tools
are destructive) and `decline` (no decline path), and `listing_entries`
(ids and id lists no longer narrowed to the listing entries the request
describes: guardrails/entries.py). The run's outcomes are then measured from outside, with
the outside workflows' runner or `forge-eval run --address`, against the
same server with nothing taken out (bench/RESULTS.md §22).

This is a benchmark harness, not a product switch: the guardrails are
patched out of this process before the server starts.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from forge_core.workflow import ToolSpec

LOOP_RULES = ("destructive_inference", "decline", "listing_entries")


def without(names: list[str]) -> None:
    """Take the named guardrails out of this process."""
    from forge_core import run_state
    from forge_core.guardrails import registry, tool_relevance

    unknown = set(names) - set(registry.NAMES) - set(LOOP_RULES)
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
