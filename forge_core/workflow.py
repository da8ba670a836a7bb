"""Workflow definitions and their validation.

Validation names the offending field in the contract's terms
(`workflow.tools[1].name`) so the server can hand it straight to the caller.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

from forge_core.modes import CompactionStrategy, Enforcement, ReasoningReplay

T = TypeVar("T")

RESPOND_TOOL = "respond"

TOOL_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
MAX_TOOLS = 128

# The name is shown to the model and written to every log line of the run.
MAX_WORKFLOW_NAME = 256
# A day: uint32 milliseconds reach 49.7 days, which is what a negative int32
# from a careless client turns into.
MAX_TOOL_TIMEOUT_S = 86_400.0
# Repetition bounds in a schema's regexes: Python's engine overflows past
# 2^32 and allocates per repetition below that.
MAX_PATTERN_REPEAT = 10_000
_REPEAT = re.compile(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}")


class WorkflowError(ValueError):
    """The workflow or its options cannot run as given."""

    def __init__(self, field_path: str, message: str) -> None:
        super().__init__(f"{field_path}: {message}")
        self.field = field_path
        self.description = message


@dataclass(frozen=True)
class Prerequisite:
    tool: str
    match_arg: str = ""


@dataclass
class ToolSpec:
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    prerequisites: list[Prerequisite] = field(default_factory=list)
    # Deletes, overwrites or otherwise changes what cannot be undone (MCP's
    # destructiveHint): see RunOptions.destructive_policy.
    destructive: bool = False
    # Only reads / has the same effect when repeated (MCP's readOnlyHint and
    # idempotentHint): a call whose result never came back is tried again.
    read_only: bool = False
    idempotent: bool = False
    validator: Draft202012Validator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # `format` is checked too (jsonschema's checker: date, email, ipv4,
        # uuid, ... without extra packages), not only written by the grammar.
        self.validator = Draft202012Validator(
            self.parameters,
            registry=local_registry(),
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )


# Slots: with more than 30 fields an instance dict stops sharing its keys and
# costs ~1.5 KB; the server keeps one per run.
@dataclass(frozen=True, slots=True)
class RunOptions:
    max_iterations: int = 10
    max_retries: int = 3
    max_tool_errors: int = 2
    max_premature_attempts: int = 3
    max_prereq_violations: int = 2
    temperature: float = 0.0
    max_tokens: int = 512
    tool_timeout_s: float = 300.0
    stream_chunks: bool = False
    parallel_tool_calls: bool = False
    # Guardrails (ablation switches): every one is on by default.
    constrained_decoding: bool = True
    rescue: bool = True
    retry_nudges: bool = True
    step_enforcement: bool = True
    error_recovery: bool = True
    compaction: bool = True
    coercion: bool = True
    repeat_guard: bool = True
    # A call identical to one that already failed (tool error or nothing
    # found) is not run again: it is rejected with an escalating nudge and,
    # under a grammar, left out of what the model can write.
    loop_breaking: bool = True
    # Prompt mode: each parameter's enum values, required flag, default and
    # description go into the tool list (else names and types only).
    parameter_docs: bool = True
    # Identifier-like string parameters (or ones marked x-forge-grounded)
    # only take values seen in the user's messages and tool results, under a
    # grammar (grounding.py).
    grounding: bool = True
    # With more than relevance.MAX_RELEVANT_TOOLS non-terminal tools, the
    # grammar admits only those BM25 ranks relevant to the request.
    tool_relevance: bool = True
    # Destructive tools are offered only when the user's own words ask for
    # them (relevance.asked_for), unless they are pending required steps, and
    # a destructive call runs alone, never in a batch with other calls.
    destructive_policy: bool = True
    # A terminal tool's parameter that a successful tool result answers (by
    # label or as what a tool looks up) only takes the values that result
    # gave, under a grammar (binding.py).
    result_binding: bool = True
    # Under a grammar an integer has at most one digit more than the longest
    # number in the user's messages and tool results (at least 3).
    number_bounds: bool = True
    # Each destructive call waits for the caller's approval (the run's
    # Approver) before it is executed; a denial is the call's result.
    approve_destructive_calls: bool = False
    # A CompactionStrategy; compaction=False forces NONE.
    compaction_strategy: str = CompactionStrategy.TIERED
    # 0: the backend's budget; otherwise min(this, the backend's).
    context_budget_tokens: int = 0
    # Slot scheduling: lower runs first; preempted runs resume unless
    # cancel_on_preempt.
    priority: int = 0
    cancel_on_preempt: bool = False
    # An Enforcement: constraint + nudges (BOTH), the allowed set only
    # (CONSTRAINT), or only nudges (NUDGE).
    enforcement: str = Enforcement.BOTH
    # A ReasoningReplay: which earlier reasoning goes back to the model.
    reasoning_replay: str = ReasoningReplay.KEEP_LAST

    @property
    def retry_budget(self) -> int:
        return self.max_retries if self.retry_nudges else 0

    @property
    def tool_error_budget(self) -> int:
        return self.max_tool_errors if self.error_recovery else 0

    @property
    def constrain_steps(self) -> bool:
        return self.step_enforcement and self.enforcement in (
            Enforcement.BOTH,
            Enforcement.CONSTRAINT,
        )

    @property
    def nudge_steps(self) -> bool:
        return self.step_enforcement and self.enforcement in (Enforcement.BOTH, Enforcement.NUDGE)

    def validate(self) -> None:
        limits = {
            "max_iterations": (self.max_iterations, 1, 1000),
            "max_retries": (self.max_retries, 0, 100),
            "max_tool_errors": (self.max_tool_errors, 0, 100),
            "max_tokens": (self.max_tokens, 1, 65536),
        }
        for name, (value, lo, hi) in limits.items():
            if not lo <= value <= hi:
                raise WorkflowError(
                    f"options.{name}", f"must be between {lo} and {hi}, got {value}"
                )
        if not 0.0 <= self.temperature <= 2.0:
            raise WorkflowError("options.temperature", f"must be in [0, 2], got {self.temperature}")
        if self.tool_timeout_s <= 0:
            raise WorkflowError("options.tool_timeout_ms", "must be positive")
        if self.tool_timeout_s > MAX_TOOL_TIMEOUT_S:
            raise WorkflowError(
                "options.tool_timeout_ms",
                f"must be at most {MAX_TOOL_TIMEOUT_S * 1000:.0f} (a day), "
                f"got {self.tool_timeout_s * 1000:.0f}",
            )


@dataclass
class Workflow:
    name: str
    tools: list[ToolSpec]
    required_steps: list[str] = field(default_factory=list)
    terminal_tools: list[str] = field(default_factory=list)
    description: str = ""
    system_prompt: str = ""
    # The built-in terminal respond(message) tool, run by the engine itself.
    respond_tool: bool = False
    # "allow" | "redact" | "block": tool outputs with secrets (screening.py).
    tool_output_secrets: str = "allow"

    def __post_init__(self) -> None:
        self.tools_by_name: dict[str, ToolSpec] = {t.name: t for t in self.tools}

    def with_builtins(self) -> Workflow:
        """The workflow with its built-in tools added (call after validation)."""
        if not self.respond_tool or RESPOND_TOOL in self.tools_by_name:
            return self
        return Workflow(
            name=self.name,
            tools=[*self.tools, respond_spec()],
            required_steps=list(self.required_steps),
            terminal_tools=[*self.terminal_tools, RESPOND_TOOL],
            description=self.description,
            system_prompt=self.system_prompt,
            respond_tool=True,
            tool_output_secrets=self.tool_output_secrets,
        )

    @property
    def terminal_set(self) -> frozenset[str]:
        return self.memo("terminal_set", lambda: frozenset(self.terminal_tools))

    def memo(self, key: str, make: Callable[[], T]) -> T:
        """What `make` derives from this workflow, made once: a workflow is
        not changed once runs use it, and the server shares one between the
        runs that send the same one."""
        cache: dict[str, Any] = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = make()
        return cast(T, cache[key])

    def tool(self, name: str) -> ToolSpec | None:
        return self.tools_by_name.get(name)

    def default_system_prompt(self) -> str:
        lines = [f"You are an agent that completes the task '{self.name}' by calling tools."]
        if self.description:
            lines.append(self.description)
        return "\n".join(lines)


def respond_spec() -> ToolSpec:
    return ToolSpec(
        name=RESPOND_TOOL,
        description="Reply to the user with a message. Ends the task.",
        parameters={
            "type": "object",
            "properties": {"message": {"type": "string", "description": "The reply to the user"}},
            "required": ["message"],
        },
    )


def _never_retrieve(uri: str) -> Resource[Any]:
    # A client's schema must not make the server read files or fetch URLs.
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def local_registry() -> Registry[Any]:
    """A registry that resolves references inside the schema only."""
    return Registry(retrieve=_never_retrieve)  # type: ignore[call-arg]


# Keywords whose values are instances, not schemas: a "$ref" key inside them
# is data.
_INSTANCE_KEYWORDS = {"enum", "const", "default", "examples"}


def _references(node: Any, pointer: str = "") -> list[tuple[str, str, str]]:
    """Every ($ref | $dynamicRef | $id, value, JSON pointer) in a schema."""
    found: list[tuple[str, str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef", "$id") and isinstance(value, str):
                found.append((key, value, pointer or "/"))
            elif key not in _INSTANCE_KEYWORDS:
                found += _references(value, f"{pointer}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _references(value, f"{pointer}/{i}")
    return found


def check_references(schema: dict[str, Any], field_path: str) -> None:
    """Only references into the schema itself ("#/$defs/x", "#anchor").

    Anything else would make the server read a file or fetch a URL while it
    validates the model's arguments (jsonschema's automatic retrieval).
    """
    refs = _references(schema)
    for key, value, where in refs:
        if key == "$id" and where != "/":
            raise WorkflowError(
                field_path,
                f"$id {value!r} at '{where}': embedded schema resources are not supported; "
                "use $defs and '#/$defs/...' references",
            )
        if key != "$id" and not value.startswith("#"):
            raise WorkflowError(
                field_path,
                f"{key} {value!r} at '{where}' is not a reference inside this schema; only "
                "'#...' references (e.g. '#/$defs/Item') are allowed, nothing is fetched",
            )
    resource = DRAFT202012.create_resource(schema)
    uri = resource.id() or "urn:forge:parameters"
    resolver = local_registry().with_resource(uri, resource).resolver(base_uri=uri)
    for key, value, where in refs:
        if key == "$ref":
            try:
                resolver.lookup(value)
            except Unresolvable as exc:
                raise WorkflowError(
                    field_path, f"$ref {value!r} at '{where}' does not resolve in this schema"
                ) from exc


def check_parameters_schema(schema: Any, field_path: str) -> None:
    """A tool's parameters must be a valid JSON Schema describing an object."""
    if not isinstance(schema, dict):
        raise WorkflowError(field_path, "must be a JSON object (a JSON Schema)")
    check_patterns(schema, field_path)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        suffix = f" at '{where}'" if where else ""
        raise WorkflowError(
            field_path, f"is not a valid JSON Schema{suffix}: {exc.message}"
        ) from exc
    if schema.get("type", "object") != "object":
        raise WorkflowError(field_path, f"must describe an object, not {schema.get('type')!r}")
    check_references(schema, field_path)


def check_patterns(schema: Any, field_path: str) -> None:
    """Every regex in the schema compiles, with bounded repetition counts.

    Checked before the metaschema's own regex check, which lets OverflowError
    (`a{99999999999}`) escape as an internal error.
    """
    for pattern, where in _patterns(schema):
        for match in _REPEAT.finditer(pattern):
            # Length first: int() of a 5,000-digit string is itself an error.
            counts = [n for n in match.groups() if n]
            if any(len(n) > 9 or int(n) > MAX_PATTERN_REPEAT for n in counts):
                raise WorkflowError(
                    field_path,
                    f"regex at '{where}' has a repetition count of {_clip(match.group(0))}; "
                    f"at most {MAX_PATTERN_REPEAT} is allowed",
                )
        try:
            re.compile(pattern)
        except (re.error, OverflowError, RecursionError) as exc:
            raise WorkflowError(
                field_path, f"regex at '{where}' is not a valid regex: {exc}"
            ) from exc


def _patterns(node: Any, pointer: str = "") -> list[tuple[str, str]]:
    """Every (regex, JSON pointer) of `pattern` and `patternProperties`."""
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{pointer}/{key}"
            if key == "pattern" and isinstance(value, str):
                found.append((value, where))
            elif key == "patternProperties" and isinstance(value, dict):
                found += [(regex, f"{where}/{regex}") for regex in value]
                for regex, sub in value.items():
                    found += _patterns(sub, f"{where}/{regex}")
            elif key not in _INSTANCE_KEYWORDS:
                found += _patterns(value, where)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _patterns(value, f"{pointer}/{i}")
    return found


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_workflow_name(name: str) -> None:
    if not name.strip():
        raise WorkflowError("workflow.name", "must not be empty or only whitespace")
    if len(name) > MAX_WORKFLOW_NAME:
        raise WorkflowError(
            "workflow.name", f"must be at most {MAX_WORKFLOW_NAME} characters, got {len(name)}"
        )
    bad = next((c for c in name if unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        raise WorkflowError(
            "workflow.name", f"must not contain a control character (found {bad!r})"
        )


def _properties(schema: dict[str, Any]) -> set[str] | None:
    """The top-level property names, or None when they cannot be known
    without evaluating combinators or references."""
    if any(k in schema for k in ("allOf", "anyOf", "oneOf", "$ref", "if", "patternProperties")):
        return None
    properties = schema.get("properties", {})
    return set(properties) if isinstance(properties, dict) else None


def _check_match_args(wf: Workflow) -> None:
    """A prerequisite's match_arg names an argument of both tools: otherwise
    the prerequisite can never be met (or is met by a missing value)."""
    for i, tool in enumerate(wf.tools):
        for j, prereq in enumerate(tool.prerequisites):
            if not prereq.match_arg:
                continue
            for owner in (tool, wf.tools_by_name[prereq.tool]):
                names = _properties(owner.parameters)
                if names is not None and prereq.match_arg not in names:
                    raise WorkflowError(
                        f"workflow.tools[{i}].prerequisites[{j}].match_arg",
                        f"{_clip(prereq.match_arg)!r} is not a parameter of {owner.name!r}",
                    )


def validate_workflow(wf: Workflow) -> None:
    """Raise WorkflowError naming the first field that makes `wf` unrunnable."""
    check_workflow_name(wf.name)
    if not wf.tools and not wf.respond_tool:
        raise WorkflowError("workflow.tools", "at least one tool (or respond_tool) is required")
    if len(wf.tools) > MAX_TOOLS:
        raise WorkflowError("workflow.tools", f"at most {MAX_TOOLS} tools are allowed")
    seen: set[str] = set()
    for i, tool in enumerate(wf.tools):
        if not TOOL_NAME_RE.match(tool.name):
            raise WorkflowError(
                f"workflow.tools[{i}].name",
                f"{tool.name!r} must match {TOOL_NAME_RE.pattern}",
            )
        if tool.name in seen:
            raise WorkflowError(f"workflow.tools[{i}].name", f"duplicate tool name {tool.name!r}")
        if wf.respond_tool and tool.name == RESPOND_TOOL:
            raise WorkflowError(
                f"workflow.tools[{i}].name",
                f"{RESPOND_TOOL!r} is the built-in tool enabled by workflow.respond_tool",
            )
        seen.add(tool.name)
        check_parameters_schema(tool.parameters, f"workflow.tools[{i}].parameters_json_schema")
    for i, tool in enumerate(wf.tools):
        for j, prereq in enumerate(tool.prerequisites):
            path = f"workflow.tools[{i}].prerequisites[{j}].tool"
            if prereq.tool not in seen:
                raise WorkflowError(path, f"unknown tool {prereq.tool!r}")
            if prereq.tool == tool.name:
                raise WorkflowError(path, "a tool cannot be its own prerequisite")
    _check_prerequisite_cycles(wf)
    _check_match_args(wf)
    for i, step in enumerate(wf.required_steps):
        if step not in seen:
            raise WorkflowError(f"workflow.required_steps[{i}]", f"unknown tool {step!r}")
        if step in wf.required_steps[:i]:
            raise WorkflowError(f"workflow.required_steps[{i}]", f"duplicate step {step!r}")
    if not wf.terminal_tools and not wf.respond_tool:
        raise WorkflowError("workflow.terminal_tools", "at least one terminal tool is required")
    for i, term in enumerate(wf.terminal_tools):
        if term in wf.terminal_tools[:i]:
            raise WorkflowError(f"workflow.terminal_tools[{i}]", f"duplicate tool {term!r}")
        if term not in seen:
            raise WorkflowError(
                f"workflow.terminal_tools[{i}]", f"{term!r} is not among workflow.tools"
            )
        if term in wf.required_steps:
            raise WorkflowError(
                f"workflow.terminal_tools[{i}]", f"{term!r} cannot also be a required step"
            )


def _check_prerequisite_cycles(wf: Workflow) -> None:
    """Tools that (transitively) require each other can never run."""
    index = {t.name: i for i, t in enumerate(wf.tools)}
    needs = {t.name: [p.tool for p in t.prerequisites] for t in wf.tools}
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in done:
            return
        for j, dep in enumerate(needs[name]):
            if dep in path:
                cycle = " -> ".join([*path[path.index(dep) :], dep])
                raise WorkflowError(
                    f"workflow.tools[{index[name]}].prerequisites[{j}].tool",
                    f"prerequisite cycle {cycle}: none of these tools could ever run",
                )
            visit(dep, [*path, dep])
        done.add(name)

    for tool in wf.tools:
        visit(tool.name, [tool.name])
