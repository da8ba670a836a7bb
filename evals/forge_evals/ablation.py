"""Ablation presets: which guardrails a run keeps.

Each preset turns off one guardrail of the stack (or all of them, `bare`);
the switches go to the server in RunOptions.guardrails, so the ablation
measures the product's own guardrails, not a harness re-implementation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from forge_client import RunOptions

GUARDRAILS = (
    "constrained_decoding",
    "rescue",
    "retry_nudges",
    "step_enforcement",
    "error_recovery",
    "compaction",
    "coercion",
    "repeat_guard",
    "loop_breaking",
    "parameter_docs",
    "grounding",
    "tool_relevance",
    "destructive_policy",
    "result_binding",
    "number_bounds",
)


@dataclass(frozen=True)
class Ablation:
    name: str
    description: str
    # The guardrail switches this preset turns off.
    disabled: frozenset[str] = field(default_factory=frozenset)

    def switches(self) -> dict[str, bool]:
        return {g: g not in self.disabled for g in GUARDRAILS}

    def run_options(
        self,
        *,
        max_iterations: int,
        temperature: float | None = None,
        max_tokens: int | None = None,
        context_budget_tokens: int | None = None,
    ) -> RunOptions:
        on = self.switches()
        return RunOptions(
            max_iterations=max_iterations,
            temperature=temperature,
            max_tokens=max_tokens,
            context_budget_tokens=context_budget_tokens,
            constrained_decoding=on["constrained_decoding"],
            rescue=on["rescue"],
            retry_nudges=on["retry_nudges"],
            step_enforcement=on["step_enforcement"],
            error_recovery=on["error_recovery"],
            compaction=on["compaction"],
            coercion=on["coercion"],
            repeat_guard=on["repeat_guard"],
            loop_breaking=on["loop_breaking"],
            parameter_docs=on["parameter_docs"],
            grounding=on["grounding"],
            tool_relevance=on["tool_relevance"],
            destructive_policy=on["destructive_policy"],
            result_binding=on["result_binding"],
            number_bounds=on["number_bounds"],
        )


PRESETS: dict[str, Ablation] = {
    a.name: a
    for a in (
        Ablation("all-on", "every guardrail on (the product's default)"),
        Ablation(
            "no-constrained",
            "no grammar: the model writes free text, the engine parses it",
            frozenset({"constrained_decoding"}),
        ),
        Ablation("no-rescue", "no parsing of tool calls out of prose", frozenset({"rescue"})),
        Ablation(
            "no-nudges", "an invalid answer fails the run at once", frozenset({"retry_nudges"})
        ),
        Ablation(
            "no-steps",
            "required steps and prerequisites are not enforced",
            frozenset({"step_enforcement"}),
        ),
        Ablation(
            "no-recovery", "the first tool error fails the run", frozenset({"error_recovery"})
        ),
        Ablation("no-compaction", "the conversation is never compacted", frozenset({"compaction"})),
        Ablation(
            "no-loop-breaking",
            "a call identical to one that already failed may run again",
            frozenset({"loop_breaking"}),
        ),
        Ablation(
            "no-relevance",
            "every allowed tool is offered each turn, however many there are",
            frozenset({"tool_relevance"}),
        ),
        Ablation(
            "no-grounding",
            "identifier-like parameters may take values never seen in the conversation",
            frozenset({"grounding"}),
        ),
        Ablation(
            "no-destructive-policy",
            "destructive tools are offered and batched like any other",
            frozenset({"destructive_policy"}),
        ),
        Ablation(
            "no-result-binding",
            "a report's parameters may take values no tool result gave",
            frozenset({"result_binding"}),
        ),
        Ablation(
            "no-number-bounds",
            "integers may take 16 digits whatever the conversation holds",
            frozenset({"number_bounds"}),
        ),
        Ablation(
            "no-parameter-docs",
            "tools described by parameter names and types only",
            frozenset({"parameter_docs"}),
        ),
        Ablation("bare", "every guardrail off", frozenset(GUARDRAILS)),
    )
}


def preset(name: str) -> Ablation:
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown ablation {name!r}; choose from {', '.join(PRESETS)}") from None
