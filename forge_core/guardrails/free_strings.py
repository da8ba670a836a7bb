"""Free strings take the values the conversation offers.

A free string parameter takes the conversation's values shaped like its
schema example, else the values the conversation calls by the parameter's
noun (value_pools.py, `ValuePools.offer`), minus failed ones and those the
tool already took; a tool with none left is not offered, and while a
refused terminal call's missing values are still offered the terminal
tools wait. And no free string writes markup the conversation never shows
(`shunned_chars`): a base model closes a decline's reason with `</h4>` or
runs on into a chat token, `<|im_end|>`. Switch: `grounding`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from forge_core.guardrails.protocol import BaseGuardrail, narrowed

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest
    from forge_core.messages import ToolCallInfo
    from forge_core.run_state import RunState
    from forge_core.tool_execution import ToolOutcome
    from forge_core.workflow import Workflow

# Characters of markup: a value has them only where the conversation does.
MARKUP = "<>"


def shunned_chars(wf: Workflow, texts: Iterable[str]) -> str:
    """The characters of MARKUP that neither the workflow (its system
    prompt, tools and schemas) nor the conversation's `texts` have."""
    # The workflow's own text, made once per workflow, not on every turn.
    own = wf.memo(
        "markup_text",
        lambda: "\n".join(
            [wf.system_prompt, *(f"{t.description} {json.dumps(t.parameters)}" for t in wf.tools)]
        ),
    )
    seen = [own, *texts]
    return "".join(c for c in MARKUP if not any(c in text for text in seen))


class FreeStrings(BaseGuardrail):
    name = "free_strings"
    switch = "grounding"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if not state.opts.grounding:
            return
        texts = state.grounding_texts()
        request.shunned_chars = shunned_chars(state.wf, texts)
        users = set(state.user_texts())
        offer = state.pools.offer(
            [t for t in texts if t in users],
            [t for t in texts if t not in users],
            state.failed_strings(),
        )
        request.named_values, request.shaped_values = offer.named, offer.shaped
        if offer.exhausted:
            # Every value the conversation offers this tool is used up.
            narrowed(state, request, offer.exhausted - set(state.steps.pending()))
        if state.opts.loop_breaking and state.finish_blockers & offer.values():
            # A terminal call was refused for what is still to do, and
            # some of it is still offered: finish after it.
            narrowed(state, request, set(state.wf.terminal_set))

    def on_result(
        self, state: RunState, call: ToolCallInfo, outcome: ToolOutcome, content: str
    ) -> None:
        if outcome.ok:
            state.pools.record(call.name, call.args)
