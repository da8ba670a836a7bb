"""The engine's guardrails, and the order each phase runs them in.

One instance of each serves every run (they keep their state in the
run's RunState). The orders are the loop's: a turn's allowed tools start
from the step constraint and each later guardrail narrows what the earlier
ones left (never to nothing); the checks run cheapest and most certain
first, and the first refusal decides. To add a guardrail: its module here,
with a `switch` naming its RunOptions field (and a `disable_<switch>` field
of proto Guardrails), listed in the phases it takes part in.
"""

from __future__ import annotations

from forge_core.guardrails.arguments import Arguments
from forge_core.guardrails.destructive_policy import DestructivePolicy
from forge_core.guardrails.free_strings import FreeStrings
from forge_core.guardrails.id_grounding import Grounding
from forge_core.guardrails.loop_breaking import LoopBreaking
from forge_core.guardrails.number_bounds import NumberBounds
from forge_core.guardrails.protocol import Guardrail
from forge_core.guardrails.repeat_guard import RepeatGuard
from forge_core.guardrails.result_binding import ResultBinding
from forge_core.guardrails.step_enforcement import StepEnforcement
from forge_core.guardrails.tool_relevance import ToolRelevance
from forge_core.guardrails.values import ValueGuardrails

ARGUMENTS = Arguments()
STEPS = StepEnforcement()
REPEATS = RepeatGuard()
LOOPS = LoopBreaking()
RELEVANCE = ToolRelevance()
DESTRUCTIVE = DestructivePolicy()
GROUNDING = Grounding()
VALUES = ValueGuardrails()
FREE_STRINGS = FreeStrings()
BINDING = ResultBinding()
NUMBERS = NumberBounds()

# Before the model is asked: allowed tools, then the values they may take.
SHAPE: tuple[Guardrail, ...] = (
    STEPS,
    REPEATS,
    RELEVANCE,
    LOOPS,
    DESTRUCTIVE,
    GROUNDING,
    VALUES,
    FREE_STRINGS,
    BINDING,
    NUMBERS,
)
# The reply's calls, before they are numbered.
FILTER: tuple[Guardrail, ...] = (REPEATS, GROUNDING)
# The numbered batch: the first refusal decides.
CHECK: tuple[Guardrail, ...] = (ARGUMENTS, DESTRUCTIVE, REPEATS, LOOPS, STEPS)
# Each result that came back (not deferred), then the batch as a whole.
REACT: tuple[Guardrail, ...] = (STEPS, FREE_STRINGS, LOOPS)
BATCH: tuple[Guardrail, ...] = (REPEATS, LOOPS)
# What the summary of compacted turns keeps.
COMPACTION: tuple[Guardrail, ...] = (STEPS,)

ALL: tuple[Guardrail, ...] = tuple(
    dict.fromkeys((*SHAPE, *FILTER, *CHECK, *REACT, *BATCH, *COMPACTION))
)
