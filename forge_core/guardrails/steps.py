"""Which required steps and prerequisites a run has satisfied so far.

Kept outside the message history so that compaction can never make the engine
forget a completed step.
"""

from __future__ import annotations

from typing import Any

from forge_core.messages import ToolCallInfo
from forge_core.workflow import Workflow


class StepTracker:
    def __init__(self, workflow: Workflow) -> None:
        self.wf = workflow
        # Successful calls per tool name, with their arguments, in call order.
        self.completed: dict[str, list[dict[str, Any]]] = {}

    def record(self, call: ToolCallInfo) -> None:
        self.completed.setdefault(call.name, []).append(call.args)

    def completed_names(self) -> list[str]:
        return list(self.completed)

    def pending(self) -> list[str]:
        return [s for s in self.wf.required_steps if s not in self.completed]

    def missing_prerequisites(self, call: ToolCallInfo) -> list[str]:
        spec = self.wf.tool(call.name)
        if spec is None:
            return []
        missing = []
        for prereq in spec.prerequisites:
            earlier = self.completed.get(prereq.tool, [])
            if prereq.match_arg:
                wanted = call.args.get(prereq.match_arg)
                if not any(args.get(prereq.match_arg) == wanted for args in earlier):
                    missing.append(f"{prereq.tool}({prereq.match_arg}={wanted!r})")
            elif not earlier:
                missing.append(prereq.tool)
        return missing

    def allowed_tools(self) -> list[str]:
        """Tools worth offering now: the grammar then cannot produce a call that
        would only be blocked (a terminal tool before its steps, a tool whose
        name-only prerequisites are unmet)."""
        pending = bool(self.pending())
        allowed = []
        for spec in self.wf.tools:
            if pending and spec.name in self.wf.terminal_set:
                continue
            if any(not p.match_arg and p.tool not in self.completed for p in spec.prerequisites):
                continue
            allowed.append(spec.name)
        return allowed or [t.name for t in self.wf.tools]
