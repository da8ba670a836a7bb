"""Declaring a workflow: its tools (plain functions), steps and terminal tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar, overload

from forge.v1 import workflow_pb2 as wpb
from forge_client.tools import Prerequisite, Tool, tool_from_function, tool_from_schema

F = TypeVar("F", bound=Callable[..., Any])


class Workflow:
    """Tools plus the rules the server enforces while the model uses them.

    >>> wf = Workflow("weather", "Look up the weather and report it.")
    >>> @wf.tool(required=True)
    ... def get_weather(city: str) -> str:
    ...     '''Get current weather for a city.'''
    ...     return "sunny"
    """

    def __init__(
        self,
        name: str,
        description: str = "",
        *,
        system_prompt: str = "",
        respond_tool: bool = False,
        tool_output_secrets: Literal["allow", "redact", "block"] | None = None,
    ) -> None:
        self.name = name
        # Tool outputs holding credentials: pass on, redact each secret, or
        # withhold the output from the model (None: the server's default).
        self.tool_output_secrets = tool_output_secrets
        self.description = description
        self.system_prompt = system_prompt
        # The server's built-in terminal `respond(message)` tool.
        self.respond_tool = respond_tool
        self.tools: dict[str, Tool] = {}
        self.required_steps: list[str] = []
        self.terminal_tools: list[str] = []

    @overload
    def tool(self, fn: F) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        required: bool = False,
        terminal: bool = False,
        prerequisites: list[str | Prerequisite] | None = None,
        destructive: bool = False,
        read_only: bool = False,
        idempotent: bool = False,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        fn: F | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        required: bool = False,
        terminal: bool = False,
        prerequisites: list[str | Prerequisite] | None = None,
        destructive: bool = False,
        read_only: bool = False,
        idempotent: bool = False,
    ) -> F | Callable[[F], F]:
        """Register a function as a tool (usable bare or with options).

        `destructive=True` marks a tool that cannot be undone (deletes,
        overwrites): the server offers it only when the user's words ask for
        it, runs it alone, and with RunOptions(approve_destructive_calls=True)
        asks the run's `approve` callback first. `read_only=True` (the tool
        only reads) or `idempotent=True` (calling it twice does what calling
        it once does) lets the server make a call once more when the tool
        raised ToolUnreachableError; any other is never made twice."""

        def register(func: F) -> F:
            self.add_tool(
                func,
                name=name,
                description=description,
                required=required,
                terminal=terminal,
                prerequisites=prerequisites,
                destructive=destructive,
                read_only=read_only,
                idempotent=idempotent,
            )
            return func

        return register(fn) if fn is not None else register

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        required: bool = False,
        terminal: bool = False,
        prerequisites: list[str | Prerequisite] | None = None,
        destructive: bool = False,
        read_only: bool = False,
        idempotent: bool = False,
    ) -> Tool:
        t = tool_from_function(fn, name=name, description=description, prerequisites=prerequisites)
        t.destructive, t.read_only, t.idempotent = destructive, read_only, idempotent
        return self._register(t, required=required, terminal=terminal)

    def add_schema_tool(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        fn: Callable[[dict[str, Any]], Any],
        *,
        required: bool = False,
        terminal: bool = False,
        prerequisites: list[str | Prerequisite] | None = None,
        destructive: bool = False,
        read_only: bool = False,
        idempotent: bool = False,
    ) -> Tool:
        """Register a tool by plain JSON Schema; `fn` receives the arguments dict."""
        t = tool_from_schema(name, description, parameters, fn, prerequisites=prerequisites)
        t.destructive, t.read_only, t.idempotent = destructive, read_only, idempotent
        return self._register(t, required=required, terminal=terminal)

    def _register(self, t: Tool, *, required: bool, terminal: bool) -> Tool:
        if t.name in self.tools:
            raise ValueError(f"workflow {self.name!r} already has a tool named {t.name!r}")
        self.tools[t.name] = t
        if required:
            self.require(t.name)
        if terminal:
            self.terminal(t.name)
        return t

    def require(self, *names: str) -> Workflow:
        """These tools must succeed before a terminal tool may run."""
        self.required_steps.extend(n for n in names if n not in self.required_steps)
        return self

    def terminal(self, *names: str) -> Workflow:
        """A successful call of any of these ends the run with its result."""
        self.terminal_tools.extend(n for n in names if n not in self.terminal_tools)
        return self

    def to_proto(self) -> wpb.Workflow:
        return wpb.Workflow(
            name=self.name,
            description=self.description,
            system_prompt=self.system_prompt,
            respond_tool=self.respond_tool,
            tool_output_secrets=_SECRETS_POLICY[self.tool_output_secrets],
            required_steps=self.required_steps,
            terminal_tools=self.terminal_tools,
            tools=[
                wpb.ToolSpec(
                    name=t.name,
                    description=t.description,
                    parameters_json_schema=t._schema_json(),
                    prerequisites=[
                        wpb.Prerequisite(tool=p.tool, match_arg=p.match_arg)
                        for p in t.prerequisites
                    ],
                    destructive=t.destructive,
                    read_only=t.read_only,
                    idempotent=t.idempotent,
                )
                for t in self.tools.values()
            ],
        )


_SECRETS_POLICY = {
    None: wpb.TOOL_OUTPUT_POLICY_UNSPECIFIED,
    "allow": wpb.TOOL_OUTPUT_POLICY_ALLOW,
    "redact": wpb.TOOL_OUTPUT_POLICY_REDACT,
    "block": wpb.TOOL_OUTPUT_POLICY_BLOCK,
}
