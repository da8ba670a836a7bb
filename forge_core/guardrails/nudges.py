"""The corrections the engine sends the model when it goes wrong."""

from __future__ import annotations


def retry_nudge(tool_names: list[str]) -> str:
    names = ", ".join(tool_names)
    return (
        "Your last answer was not a tool call. Answer with exactly one JSON object "
        f'{{"tool": "<name>", "args": {{...}}}} calling one of: {names}.'
    )


def unknown_tool(name: str, tool_names: list[str]) -> str:
    return f"[ToolError] Unknown tool {name!r}. Available tools: {', '.join(tool_names)}."


def invalid_arguments(name: str, problem: str) -> str:
    return f"[ToolError] Invalid arguments for {name!r}: {problem}. Call it again with fixed args."


def not_executed(name: str) -> str:
    return f"[Skipped] {name!r} was not run because another call in the same turn was invalid."


def step_nudge(terminal: str, pending: list[str], tier: int) -> str:
    steps = ", ".join(pending)
    if tier <= 1:
        return (
            f"[StepEnforcementError] {terminal!r} cannot run yet. "
            f"First call the required steps: {steps}."
        )
    if tier == 2:
        return (
            f"[StepEnforcementError] Again: {terminal!r} is blocked until these tools have "
            f"been called: {steps}. Call {pending[0]!r} now."
        )
    return (
        f"[StepEnforcementError] Final warning: the run fails if you call {terminal!r} again "
        f"before {steps}. Your next answer must call {pending[0]!r}."
    )


def prerequisite_nudge(tool: str, missing: list[str]) -> str:
    return (
        f"[PrereqError] {tool!r} requires calling {', '.join(missing)} first. "
        "Call the prerequisite, then try again."
    )


def tool_error(message: str) -> str:
    return f"[ToolError] {message}"


def repeated_call(names: list[str], pending: list[str], terminal: list[str]) -> str:
    what = ", ".join(repr(n) for n in names)
    if pending:
        nxt = f"Next, call the remaining required steps: {', '.join(pending)}."
    else:
        nxt = f"All required steps are done: call {' or '.join(terminal)} to finish."
    return f"[Repeated] You already called {what} with these arguments; use its result. {nxt}"


def compaction_summary(completed: list[str], pending: list[str], iteration: int) -> str:
    done = ", ".join(completed) if completed else "none yet"
    todo = f" Still required: {', '.join(pending)}." if pending else ""
    return (
        f"[Earlier turns were removed to fit the context (iteration {iteration}). "
        f"Tools already called successfully: {done}.{todo}]"
    )


def repeated_unresolved(names: list[str], errors: list[str]) -> str:
    what = ", ".join(repr(n) for n in names)
    why = "; ".join(e for e in errors if e) or "nothing was found"
    return (
        f"[Repeated] You already called {what} with exactly these arguments and it found "
        f"nothing ({why}). Calling it again cannot change that: use different arguments "
        "or another tool."
    )


def repeated_failure(name: str, error: str, failed: list[str], tier: int) -> str:
    """A call identical to one that already failed; firmer each time."""
    why = error or "it failed"
    tried = "; ".join(failed[-5:])
    if tier <= 1:
        return (
            f"[Repeated] This exact {name!r} call already failed: {why}. It will fail again. "
            "Look at the conversation for the right value and call it with different "
            "arguments, or call another tool."
        )
    if tier == 2:
        return (
            f"[Repeated] Again the same failed {name!r} call. Arguments that already failed: "
            f"{tried}. Use a value that appears in the user's message or a tool result."
        )
    return (
        f"[Repeated] Final warning: {name!r} with {tried} cannot work. Your next answer must "
        "use different arguments or a different tool."
    )


def truncated_call(max_tokens: int) -> str:
    return (
        f"[Truncated] Your tool call was cut off after {max_tokens} tokens, so it was not run. "
        "Call the tool again with short argument values: ids and names exactly as they "
        "appear in the conversation, no padding."
    )


def destructive_not_asked(name: str, others: list[str]) -> str:
    alternatives = f" Use one of: {', '.join(others)}." if others else ""
    return (
        f"[Refused] {name!r} is destructive (it cannot be undone) and the user did not ask "
        f"for it, so it was not run.{alternatives}"
    )


def destructive_alone(name: str) -> str:
    return (
        f"[Deferred] {name!r} is destructive and runs alone, never in one turn with other "
        "calls, so it was not run. If it is still needed after these results, call it "
        "again on its own."
    )


def unreachable(name: str, tried: int) -> str:
    times = "twice" if tried > 1 else "once"
    return (
        f"[Unknown outcome] {name!r} was tried {times} and its result never came back, so "
        "whether it took effect is unknown. Check with another tool before calling it again."
    )


def approval_denied(name: str, reason: str) -> str:
    why = f": {reason}" if reason else ""
    return (
        f"The caller did not approve this {name!r} call{why}. It was not run; do not ask "
        "for it again, and tell the user or do something else."
    )
