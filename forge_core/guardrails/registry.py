"""The value guardrails, strongest evidence first (guardrails/__init__.py).

Phone numbers the request writes come first, in the form the schema or an
error asks for (phones.py). An error that names the value beats everything
else: the tool said what it wants. Then what the request states (booleans,
quantities with units, dates, clock times, enum members, which also read
results for reports, and codes a description defines), codes the user wrote (postcodes, plates), web
domains and countries' codes, then ids by their labels, names shaped like
the schema's example, files and their edits, the names the user wrote,
where a lookup's thing is (the words before it), then lists by their
listing, a reply's free-text message from the result parts that answer
the user's questions (reply_messages.py), and last a decline's reason from
what its tool's description says it declines (decline_reasons.py).
"""

from __future__ import annotations

from forge_core.guardrails import Preferred, TurnFacts, ValueGuardrail, coherence
from forge_core.guardrails.addresses import Addresses
from forge_core.guardrails.codes import WrittenCodes
from forge_core.guardrails.dates import Dates
from forge_core.guardrails.decline_reasons import DeclineReasons
from forge_core.guardrails.edits import FileEdits
from forge_core.guardrails.error_values import ErrorValues
from forge_core.guardrails.examples import ExampleShapes
from forge_core.guardrails.legends import LegendCodes
from forge_core.guardrails.listings import Listings
from forge_core.guardrails.mentions import EnumMentions
from forge_core.guardrails.object_modifiers import ObjectModifiers
from forge_core.guardrails.phones import PhoneNumbers
from forge_core.guardrails.proper_names import ProperNames
from forge_core.guardrails.provenance import IdentifierProvenance
from forge_core.guardrails.quantities import Quantities
from forge_core.guardrails.reply_messages import ReplyMessages
from forge_core.guardrails.times import ClockTimes
from forge_core.guardrails.yes_no import StatedBooleans

VALUE_GUARDRAILS: tuple[ValueGuardrail, ...] = (
    # A phone number read with libphonenumber beats an error's words about
    # its form: the error tells the form, the request the number.
    PhoneNumbers(),
    ErrorValues(),
    StatedBooleans(),
    Quantities(),
    Dates(),
    ClockTimes(),
    EnumMentions(),
    LegendCodes(),
    WrittenCodes(),
    Addresses(),
    IdentifierProvenance(),
    ExampleShapes(),
    FileEdits(),
    ProperNames(),
    ObjectModifiers(),
    Listings(),
    ReplyMessages(),
    DeclineReasons(),
)

NAMES = tuple(g.name for g in VALUE_GUARDRAILS)


def preferred_values(facts: TurnFacts, enabled: frozenset[str] | None = None) -> Preferred:
    """Every value guardrail's say for this turn, strongest first
    (`enabled`: the names to run; None: all)."""
    out = Preferred()
    for guardrail in VALUE_GUARDRAILS:
        if enabled is None or guardrail.name in enabled:
            guardrail.prefer(facts, out)
    if enabled is None or coherence.NAME in enabled:
        # Last: it narrows what the others offered a report.
        coherence.cohere(facts, out)
    return out
