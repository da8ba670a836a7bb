"""Compaction: a long chain whose results outgrow a tight context budget.

An audit opens, inspects six warehouse sections in a fixed order (each result
is a verbose inventory listing that names the next section) and closes with
the code the last inspection returns. The same chain runs twice: with the
backend's full budget (the control) and under a budget far below what the
whole conversation needs, so the run only finishes if compaction keeps the
recent, relevant part of the conversation.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions, same

SECTIONS = ("S1", "S2", "S3", "S4", "S5", "S6")
AUDIT_ID = "A-19"
CLOSING_CODE = "AUD-7731"
# Budget of the tight variant. The full conversation needs ~2,500 tokens
# (prompt ~600, six ~250-token listings, calls); 1,200 holds the prompt and
# two listings.
TIGHT_BUDGET_TOKENS = 1200


def _listing(section: str) -> str:
    n = SECTIONS.index(section)
    rows = "; ".join(
        f"SKU-{4000 + 37 * n + 7 * i} bin {i + 1}: {40 + (13 * n + 7 * i) % 90} units, "
        f"last counted 2024-0{1 + (n + i) % 9}-1{i}"
        for i in range(8)
    )
    following = (
        f"Next section to inspect: {SECTIONS[n + 1]}."
        if n + 1 < len(SECTIONS)
        else f"All sections inspected. Closing code: {CLOSING_CODE}."
    )
    return f"Section {section} of audit {AUDIT_ID}: {rows}. {following}"


def _audit(name: str) -> Workflow:
    wf = Workflow(
        name,
        "Run a warehouse audit: open it, inspect every section in the order the results "
        "give, then close the audit with the closing code the last inspection returns.",
    )
    inspected: list[str] = []

    @wf.tool(required=True)
    def open_audit(warehouse: str) -> str:
        """Open an inventory audit of a warehouse."""
        return f"Audit {AUDIT_ID} opened for warehouse {warehouse}. First section to inspect: S1."

    @wf.tool(required=True, prerequisites=["open_audit"])
    def inspect_section(audit_id: str, section: str) -> str:
        """Inspect one section of an open audit and list its inventory.

        Args:
            audit_id: The audit id open_audit returned.
            section: The section to inspect, e.g. S1.
        """
        if not same(audit_id, AUDIT_ID):
            raise ToolResolutionError(f"no open audit {audit_id!r}")
        wanted = SECTIONS[len(inspected)] if len(inspected) < len(SECTIONS) else None
        key = section.strip().upper()
        if key in inspected:
            raise ToolResolutionError(
                f"section {key} was already inspected"
                + (f"; the next one is {wanted}" if wanted else "; close the audit now")
            )
        if key != wanted:
            raise ToolResolutionError(
                f"section {section!r} is not next"
                + (f"; inspect {wanted} first" if wanted else "; close the audit now")
            )
        inspected.append(key)
        return _listing(key)

    @wf.tool(terminal=True, prerequisites=["inspect_section"])
    def close_audit(audit_id: str, closing_code: str) -> str:
        """Close the audit with the closing code. Ends the task."""
        if len(inspected) < len(SECTIONS):
            raise ValueError(
                f"sections {', '.join(SECTIONS[len(inspected) :])} are not inspected yet"
            )
        return f"Audit {audit_id} closed ({closing_code})."

    return wf


def _check(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "close_audit"
        and same(args.get("audit_id"), AUDIT_ID)
        and mentions(args.get("closing_code"), CLOSING_CODE.lower())
    )


REFERENCE = (
    RefCall("open_audit", {"warehouse": "Denver"}),
    *(RefCall("inspect_section", {"audit_id": AUDIT_ID, "section": s}) for s in SECTIONS),
    RefCall("close_audit", {"audit_id": AUDIT_ID, "closing_code": CLOSING_CODE}),
)

LONG_CHAIN = Scenario(
    name="long_chain",
    description="8-step chain with verbose results under the backend's full budget (control).",
    tags=("compaction",),
    user_message="Audit the Denver warehouse.",
    build=lambda: _audit("long_chain"),
    validate=_check,
    ideal_iterations=len(REFERENCE),
    reference=REFERENCE,
    max_iterations=16,
)

LONG_CHAIN_TIGHT = Scenario(
    name="long_chain_tight",
    description=f"The same chain under a {TIGHT_BUDGET_TOKENS}-token budget: needs compaction.",
    tags=("compaction",),
    user_message="Audit the Denver warehouse.",
    build=lambda: _audit("long_chain_tight"),
    validate=_check,
    ideal_iterations=len(REFERENCE),
    reference=REFERENCE,
    max_iterations=16,
    budget_tokens=TIGHT_BUDGET_TOKENS,
)

SCENARIOS = (LONG_CHAIN, LONG_CHAIN_TIGHT)
