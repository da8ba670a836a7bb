"""Guardrails for the model's choices (issue 12): loop breaking, duplicate
calls in a batch, calls cut off at max_tokens, parameter docs in the prompt,
string bounds and value exclusion in the grammar.

The model is a ScriptedBackend (or a tiny backend that reports a truncated
reply); tools run in an in-process executor that records each batch.
"""

from __future__ import annotations

import json
import re
from typing import Any

from forge_core.backends.base import (
    BackendInfo,
    BackendReply,
    ChatRequest,
    ChunkSink,
    TextResponse,
    ToolCall,
    Usage,
)
from forge_core.backends.scripted import ScriptedBackend, call, calls
from forge_core.errors import MaxIterationsError
from forge_core.grammar import MAX_IDENTIFIER, MAX_STRING, build_grammar, is_identifier_like
from forge_core.guardrails.grounding import extract_candidates, is_grounded
from forge_core.guardrails.relevance import relevant
from forge_core.loop import ToolErrorKind, ToolOutcome, run_workflow
from forge_core.messages import MessageType, ToolCallInfo
from forge_core.prompting import tool_prompt
from forge_core.workflow import RunOptions, ToolSpec, Workflow, respond_spec, validate_workflow

WF = "wf"
LOOKUP = ToolSpec(
    "get_invoice",
    "Fetch an invoice",
    {
        "type": "object",
        "properties": {"invoice_id": {"type": "string", "description": "like INV-2024-0042"}},
        "required": ["invoice_id"],
    },
)
SUBMIT = ToolSpec(
    "submit",
    "Submit the final answer",
    {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]},
)


def workflow() -> Workflow:
    wf = Workflow(name=WF, tools=[LOOKUP, SUBMIT], terminal_tools=["submit"])
    validate_workflow(wf)
    return wf


class Executor:
    """Answers get_invoice from a table: an unknown id is a resolution error
    (or a hard error with `hard`); records every executed call."""

    def __init__(self, known: dict[str, str], hard: bool = False, error: str = "") -> None:
        self.known, self.hard = known, hard
        self.error = error or "invoice ids look like INV-2024-0042"
        self.executed: list[tuple[str, dict[str, Any]]] = []

    async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        out = []
        for c in infos:
            self.executed.append((c.name, c.args))
            if c.name != "get_invoice":
                out.append(ToolOutcome(output="done"))
            elif c.args["invoice_id"] in self.known:
                out.append(ToolOutcome(output=self.known[c.args["invoice_id"]]))
            else:
                kind = ToolErrorKind.HARD if self.hard else ToolErrorKind.RESOLUTION
                out.append(ToolOutcome(error=self.error, error_kind=kind))
        return out


async def test_a_call_that_found_nothing_is_not_run_again_later() -> None:
    """Not only right after (the repeat guard covers that): any later repeat."""
    backend = ScriptedBackend(
        scripts={
            WF: [
                call("get_invoice", invoice_id="123"),
                call("get_invoice", invoice_id="9"),
                call("get_invoice", invoice_id="123"),  # loops back to the first miss
                call("get_invoice", invoice_id="INV-2024-0042"),
                call("submit", answer="paid"),
            ]
        }
    )
    executor = Executor({"INV-2024-0042": "paid"})
    result = await run_workflow(
        workflow(), "Is invoice INV-2024-0042 paid?", backend=backend, executor=executor
    )
    assert result.terminal_tool == "submit"
    assert [a["invoice_id"] for n, a in executor.executed if n == "get_invoice"] == [
        "123",
        "9",
        "INV-2024-0042",
    ]
    nudges = [m.content for m in result.transcript if m.type is MessageType.RETRY_NUDGE]
    assert len(nudges) == 1 and "This exact 'get_invoice' call already failed" in nudges[0]
    # From the turn after the first miss on, the grammar excludes what failed.
    excluded = [list(r.excluded_calls) for r in backend.requests]
    assert excluded[0] == []
    assert ("get_invoice", {"invoice_id": "123"}) in excluded[1]
    assert ("get_invoice", {"invoice_id": "9"}) in excluded[3]


async def test_an_outage_gets_one_identical_retry_then_escalating_nudges() -> None:
    """An outage can pass, so one identical retry runs; after that the same
    call is refused, each time more firmly, until the retry budget ends."""
    backend = ScriptedBackend(scripts={WF: [call("get_invoice", invoice_id="7")] * 8})
    executor = Executor({}, hard=True, error="invoice service timed out, try again")
    options = RunOptions(max_iterations=8, max_tool_errors=5, max_retries=3)
    try:
        await run_workflow(
            workflow(), "Invoice 7?", backend=backend, executor=executor, options=options
        )
        raise AssertionError("the run should fail")
    except Exception as exc:  # ToolCallError once the retry budget is spent
        transcript = exc.transcript  # type: ignore[attr-defined]
        assert type(exc).__name__ == "ToolCallError", exc
    assert len(executor.executed) == 2
    nudges = [m.content for m in transcript if m.type is MessageType.RETRY_NUDGE]
    assert nudges[0].startswith("[Repeated] This exact")
    assert nudges[1].startswith("[Repeated] Again")
    assert nudges[2].startswith("[Repeated] Final warning")


async def test_an_error_that_rejects_the_arguments_gets_no_identical_retry() -> None:
    backend = ScriptedBackend(
        scripts={
            WF: [
                call("get_invoice", invoice_id="A, B and C"),
                call("get_invoice", invoice_id="A, B and C"),
                call("get_invoice", invoice_id="A"),
                call("submit", answer="paid"),
            ]
        }
    )
    executor = Executor({"A": "paid"}, hard=True, error="names 3 invoices; ask for one per call")
    result = await run_workflow(workflow(), "A, B and C?", backend=backend, executor=executor)
    assert result.terminal_tool == "submit"
    assert [a["invoice_id"] for n, a in executor.executed if n == "get_invoice"] == [
        "A, B and C",
        "A",
    ]
    assert ("get_invoice", {"invoice_id": "A, B and C"}) in backend.requests[1].excluded_calls


def test_which_errors_reject_the_arguments() -> None:
    from forge_core.guardrails.failed_calls import looks_transient, rejects_arguments

    for text in (
        "RuntimeError: rate service timed out; please try the same request again",
        "weather service down",
        "HTTP 503 Service Unavailable",
        "the client sent no result for 'get_weather' within 0.2s",
        "ConnectionError: connection refused",
    ):
        assert looks_transient(text) and not rejects_arguments(text), text
    for text in (
        "ValueError: 'Berlin, Paris and Warsaw' names 3 offices; ask for one office per call",
        "invalid date '31/01': write it as YYYY-MM-DD",
        "KeyError: 'no entry x'",
        "TypeError: expected a string",
    ):
        assert rejects_arguments(text), text
    # A crash or an unclear failure may pass: it keeps its identical retry.
    for text in ("PanicError: weather backend exploded", "boom", "RuntimeError: disk full"):
        assert not rejects_arguments(text), text


async def test_loop_breaking_off_runs_the_same_failing_call_until_max_iterations() -> None:
    backend = ScriptedBackend(scripts={WF: [call("get_invoice", invoice_id="123")] * 5})
    executor = Executor({})
    options = RunOptions(max_iterations=5, loop_breaking=False, repeat_guard=False)
    try:
        await run_workflow(workflow(), "x", backend=backend, executor=executor, options=options)
        raise AssertionError("the run should fail")
    except MaxIterationsError:
        pass
    assert len(executor.executed) == 5
    assert all(r.excluded_calls == [] for r in backend.requests)


async def test_duplicates_in_one_batch_run_once() -> None:
    backend = ScriptedBackend(
        scripts={
            WF: [
                calls(
                    ("get_invoice", {"invoice_id": "A"}),
                    ("get_invoice", {"invoice_id": "A"}),
                    ("get_invoice", {"invoice_id": "B"}),
                    ("get_invoice", {"invoice_id": "A"}),
                ),
                call("submit", answer="ok"),
            ]
        }
    )
    executor = Executor({"A": "a", "B": "b"})
    result = await run_workflow(
        workflow(),
        "A and B",
        backend=backend,
        executor=executor,
        options=RunOptions(parallel_tool_calls=True),
    )
    assert result.terminal_tool == "submit"
    assert executor.executed[:2] == [
        ("get_invoice", {"invoice_id": "A"}),
        ("get_invoice", {"invoice_id": "B"}),
    ]
    assert len(executor.executed) == 3


class TruncatingBackend:
    """First a constrained reply cut off at max_tokens, then a good call."""

    def __init__(self) -> None:
        self.calls = 0

    def info(self) -> BackendInfo:
        return BackendInfo(name="truncating", model="m", context_budget_tokens=4096)

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        self.calls += 1
        if self.calls == 1:
            cut = '{"tool":"get_invoice","args":{"invoice_id":"900000000000'
            return BackendReply(TextResponse(cut), Usage(model_calls=1), cut, truncated=True)
        if self.calls == 2:
            return BackendReply(
                [ToolCall("get_invoice", {"invoice_id": "A"})], Usage(model_calls=1)
            )
        return BackendReply([ToolCall("submit", {"answer": "a"})], Usage(model_calls=1))

    async def aclose(self) -> None:
        return None


async def test_a_call_cut_off_at_max_tokens_is_retried_with_the_cause_named() -> None:
    result = await run_workflow(
        workflow(),
        "A?",
        backend=TruncatingBackend(),
        executor=Executor({"A": "a"}),
        options=RunOptions(max_tokens=64),
    )
    assert result.terminal_tool == "submit"
    nudges = [m.content for m in result.transcript if m.type is MessageType.RETRY_NUDGE]
    assert len(nudges) == 1
    assert nudges[0].startswith("[Truncated] Your tool call was cut off after 64 tokens")
    assert "not a tool call" not in nudges[0]


# --------------------------------------------------------------------------- prompt


UNITS = ToolSpec(
    "get_weather",
    "Current weather",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name as the user wrote it"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
            "days": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["city"],
    },
)


def test_parameter_docs_carry_enum_required_default_and_description() -> None:
    text = tool_prompt([UNITS])
    assert (
        '- get_weather(city: string, unit?: "celsius"|"fahrenheit" = "celsius", '
        "days?: integer[]): Current weather"
    ) in text
    assert "    city: City name as the user wrote it" in text
    bare = tool_prompt([UNITS], parameter_docs=False)
    assert "- get_weather(city: string, unit: string, days: array): Current weather" in bare
    assert "celsius" not in bare and "as the user wrote it" not in bare


async def test_the_switch_reaches_the_backend_request() -> None:
    backend = ScriptedBackend(scripts={WF: [call("submit", answer="x")]})
    for on in (True, False):
        await run_workflow(
            workflow(),
            "x",
            backend=backend,
            executor=Executor({}),
            options=RunOptions(parameter_docs=on),
        )
        assert backend.requests[-1].parameter_docs is on


# --------------------------------------------------------------------------- grammar


def string_bounds(grammar: str, rule: str) -> tuple[int, int]:
    """`(lead char{low-1} char-upto-K)`, optional when low is 0: low..1 + low
    - 1 + K characters (Builder.open_text)."""
    line = next(ln for ln in grammar.splitlines() if ln.startswith(f"{rule} ::="))
    match = re.search(r'"\\"" (\()?lead (?:char\{(\d+)\} )?char-upto-(\d+)\)?\?? "\\""', line)
    assert match, line
    fixed = 1 + int(match.group(2) or 0)
    return (0 if match.group(1) else fixed), fixed + int(match.group(3))


def test_identifier_like_names() -> None:
    assert all(
        is_identifier_like(n)
        for n in ("invoice_id", "id", "customerId", "sku", "order_number", "email", "zip-code")
    )
    assert not any(is_identifier_like(n) for n in ("message", "body", "summary", "reason", "idea"))


def test_identifier_fields_get_short_bounds_and_every_string_fits_max_tokens() -> None:
    report = ToolSpec(
        "report",
        "",
        {
            "type": "object",
            "properties": {
                "invoice_id": {"type": "string"},
                "summary": {"type": "string"},
                "note": {"type": "string", "maxLength": 1000},
            },
            "required": ["invoice_id", "summary", "note"],
        },
    )
    grammar = build_grammar([report], max_tokens=256)
    assert grammar is not None
    assert string_bounds(grammar, "report-args-invoice-id") == (0, MAX_IDENTIFIER)
    # (256 - 24 overhead) // 3 strings = 77: the call cannot outgrow max_tokens.
    assert string_bounds(grammar, "report-args-summary") == (0, 77)
    assert string_bounds(grammar, "report-args-note") == (0, 77)
    unbounded = build_grammar([report])
    assert unbounded is not None and string_bounds(unbounded, "report-args-summary") == (0, 200)


def accepts(grammar: str, rule: str, text: str) -> bool:
    """Interpret the small subset of GBNF the exclusion rules use."""
    rules = {}
    for line in grammar.splitlines():
        name, _, body = line.partition(" ::= ")
        rules[name] = body

    # Translate to a Python regex by inlining the (non-recursive) rules.
    def to_regex(body: str, depth: int = 0) -> str:
        assert depth < 400
        out = []
        for token in re.findall(
            r'"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|\{\d+,\d+\}|\{\d+\}|[()|?]|[A-Za-z0-9-]+', body
        ):
            if token.startswith('"'):
                out.append(re.escape(json.loads(token)))
            elif token.startswith("["):
                inner = token[1:-1]
                inner = re.sub(r"\\u([0-9A-F]{4})", lambda m: "\\x{" + m.group(1) + "}", inner)
                inner = re.sub(
                    r"\\x\{([0-9A-F]{4})\}", lambda m: re.escape(chr(int(m.group(1), 16))), inner
                )
                out.append("[" + inner + "]")
            elif token.startswith("{") or token in "()|?":
                out.append(token)
            elif chain := re.fullmatch(r"char-upto-(\d+)", token):
                # The shared chain of length bounds, as the bound it is.
                out.append(f"(?:{to_regex(rules['char'], depth + 1)}){{0,{chain.group(1)}}}")
            else:
                out.append("(?:" + to_regex(rules[token], depth + 1) + ")")
        return "".join(out)

    return re.fullmatch(to_regex(rules[rule]), text) is not None


def test_excluded_values_cannot_be_written_again() -> None:
    excluded = [
        ("get_invoice", {"invoice_id": "A-19"}),
        ("get_invoice", {"invoice_id": "A-1"}),
        ("submit", {"answer": "x"}),  # another tool: nothing to exclude here
    ]
    grammar = build_grammar([LOOKUP], max_tokens=512, excluded=excluded)
    assert grammar is not None
    rule = "get-invoice-args-invoice-id"
    for value in ("A-19", "A-1"):
        assert not accepts(grammar, rule, json.dumps(value))
    for value in ("A-190", "A-2", "A-", "", "INV-2024-0042", "B-19", "A-1x"):
        assert accepts(grammar, rule, json.dumps(value)), value
    # Without exclusions every one of them is fine.
    plain = build_grammar([LOOKUP], max_tokens=512)
    assert plain is not None and accepts(plain, rule, json.dumps("A-19"))


def test_a_free_string_never_opens_with_a_space_comma_or_brace() -> None:
    """A value made in pieces ends where its closing quote meets a space,
    "," or "}": one opening with them would end at its opening quote (the
    piece came back empty and the call fell back to the whole-call grammar)."""
    plain = build_grammar([LOOKUP], max_tokens=512)
    excluding = build_grammar(
        [LOOKUP], max_tokens=512, excluded=[("get_invoice", {"invoice_id": "A-1"})]
    )
    rule = "get-invoice-args-invoice-id"
    for grammar in (plain, excluding):
        assert grammar is not None
        for value in (" A-19", ",", "}x", " "):
            assert not accepts(grammar, rule, json.dumps(value)), value
        for value in ("A 19", "A,1}", "", "x "):
            assert accepts(grammar, rule, json.dumps(value)), value


def test_an_excluded_value_as_long_as_the_bound_is_still_excluded() -> None:
    """The trie's last node for a value of exactly the maximum length has
    nowhere to go: it must drop out, not fall back to closing the string."""
    longest = "){}}.<|im_end|>}<|im_start|>user|<|im_end|>user|"
    assert len(longest) == MAX_IDENTIFIER
    shorter = "}, "
    excluded = [("get_invoice", {"invoice_id": v}) for v in (longest, shorter)]
    grammar = build_grammar([LOOKUP], max_tokens=512, excluded=excluded)
    assert grammar is not None
    rule = "get-invoice-args-invoice-id"
    assert not accepts(grammar, rule, json.dumps(longest))
    assert not accepts(grammar, rule, json.dumps(shorter))
    for value in (longest[:-1], longest[:-1] + "x", "}, {", "A-19"):
        assert accepts(grammar, rule, json.dumps(value)), value
    assert not accepts(grammar, rule, json.dumps(longest + "x"))  # past the bound


def test_an_excluded_enum_value_is_left_out() -> None:
    grammar = build_grammar(
        [UNITS], excluded=[("get_weather", {"unit": "celsius"}), ("get_weather", {"city": "Oslo"})]
    )
    assert grammar is not None
    line = next(ln for ln in grammar.splitlines() if ln.startswith("get-weather-args-unit ::="))
    assert "celsius" not in line and "fahrenheit" in line


# --------------------------------------------------------------------------- grounding


def test_candidates_follow_the_documented_rule() -> None:
    texts = [
        "Book flight UA-1942 for dana@example.org, ticker ACME, order #771 and 'Blue Lamp'.",
        "Found: customer_id=CUS-58213, plan gold, svc-payments is up. Done.",
    ]
    assert extract_candidates(texts) == [
        "Blue Lamp",
        "dana@example.org",
        "UA-1942",
        "ACME",
        "771",
        "customer_id",  # a key name is a token too: noise the model can skip
        "CUS-58213",
        "svc-payments",
    ]
    # Ordinary words, sentence ends and lone letters are no candidates.
    assert extract_candidates(["The plan is gold. I am done."]) == []


def test_which_parameters_are_grounded() -> None:
    assert is_grounded("invoice_id", {"type": "string"})
    assert is_grounded("customerId", {"type": "string"})
    assert is_grounded("email", {"type": "string"})
    assert not is_grounded("city", {"type": "string"})
    assert not is_grounded("username", {"type": "string"})
    # The grammar keeps the seen values that match (test_grammar_keywords.py).
    assert is_grounded("invoice_id", {"type": "string", "pattern": "^INV-"})
    assert not is_grounded("invoice_id", {"type": "string", "enum": ["INV-1"]})
    assert not is_grounded("invoice_id", {"type": "integer"})
    # The schema annotation decides either way.
    assert is_grounded("city", {"type": "string", "x-forge-grounded": True})
    assert not is_grounded("invoice_id", {"type": "string", "x-forge-grounded": False})


def test_grounded_parameters_take_only_seen_values_minus_failed_ones() -> None:
    seen = ["A-19", "INV-2024-0042", "dana@example.org"]
    grammar = build_grammar([LOOKUP], max_tokens=256, grounded=seen)
    assert grammar is not None
    rule = "get-invoice-args-invoice-id"
    assert all(accepts(grammar, rule, json.dumps(v)) for v in seen)
    assert not accepts(grammar, rule, json.dumps("1234-1234"))
    failed = [("get_invoice", {"invoice_id": "A-19"})]
    narrowed = build_grammar([LOOKUP], max_tokens=256, grounded=seen, excluded=failed)
    assert narrowed is not None
    assert not accepts(narrowed, rule, json.dumps("A-19"))
    assert accepts(narrowed, rule, json.dumps("INV-2024-0042"))
    # Nothing seen (or every candidate failed): the value is free again.
    for free in (
        build_grammar([LOOKUP], grounded=[]),
        build_grammar([LOOKUP], grounded=["A-19"], excluded=failed),
    ):
        assert free is not None and accepts(free, rule, json.dumps("1234-1234"))
    # Free text next to it stays free.
    assert accepts(
        build_grammar([SUBMIT], grounded=seen) or "", "submit-args-answer", json.dumps("paid")
    )


async def test_the_loop_grounds_on_user_messages_and_tool_results_only() -> None:
    backend = ScriptedBackend(
        scripts={
            WF: [
                call("get_invoice", invoice_id="X-999"),  # invented: a miss
                call("get_invoice", invoice_id="A-19"),
                call("submit", answer="paid"),
            ]
        }
    )
    executor = Executor({"A-19": "INV A-19: paid, customer CUS-7"})
    for grounding in (True, False):
        await run_workflow(
            workflow(),
            "Is invoice A-19 paid?",
            backend=backend,
            executor=executor,
            options=RunOptions(grounding=grounding),
        )
        requests = list(backend.requests)[-3:]
        if not grounding:
            assert all(r.grounded_values is None for r in requests)
            continue
        assert requests[0].grounded_values == ["A-19"]
        # The model's invented "X-999" is never a candidate; the miss's error
        # message and the tool result are sources too.
        assert "X-999" not in (requests[1].grounded_values or [])
        assert "CUS-7" in (requests[2].grounded_values or [])


# --------------------------------------------------------------------------- tool relevance


def simple_tool(name: str, description: str, param: str = "query") -> ToolSpec:
    return ToolSpec(
        name,
        description,
        {"type": "object", "properties": {param: {"type": "string"}}, "required": [param]},
    )


MANY = [
    simple_tool("get_weather", "Get the current weather for a city.", "city"),
    simple_tool("search_news", "Search recent news articles."),
    simple_tool("get_exchange_rate", "Get the exchange rate between two currencies.", "base"),
    simple_tool("get_company_profile", "Get a company's profile and headquarters.", "company"),
    simple_tool("send_email", "Send an email.", "to"),
    simple_tool("get_stock_price", "Get the latest trade price of a stock by ticker.", "ticker"),
    simple_tool("book_table", "Book a restaurant table.", "restaurant"),
    SUBMIT,
]


def test_bm25_ranks_the_tool_the_request_is_about_first() -> None:
    ranked = relevant(MANY[:-1], "What is ACME's stock trading at? Its ticker is ACME.")
    assert ranked is not None and ranked[0] == "get_stock_price"
    assert relevant(MANY[:-1], "xyzzy plugh") is None  # no word in common: no judgement


async def test_many_tools_are_narrowed_in_the_grammar_but_not_in_the_prompt() -> None:
    wf = Workflow(name=WF, tools=MANY, terminal_tools=["submit"])
    validate_workflow(wf)
    backend = ScriptedBackend(
        scripts={WF: [call("get_stock_price", ticker="ACME"), call("submit", answer="12")]}
    )
    for on in (True, False):
        await run_workflow(
            wf,
            "What is the stock price of ACME? Ticker ACME.",
            backend=backend,
            executor=Executor({}),
            # The question keeps writes out by the destructive policy; this
            # test is about relevance alone.
            options=RunOptions(tool_relevance=on, destructive_policy=False),
        )
        first = list(backend.requests)[-2]
        if on:
            assert "get_stock_price" in first.allowed and "submit" in first.allowed
            assert len(first.allowed) <= 4 + 1
            assert "book_table" not in first.allowed
        else:
            assert set(first.allowed) == {t.name for t in MANY}
        assert [t.name for t in first.tools] == [t.name for t in MANY]  # the prompt's list


async def test_few_tools_are_never_narrowed() -> None:
    backend = ScriptedBackend(scripts={WF: [call("submit", answer="x")]})
    await run_workflow(workflow(), "stock price of ACME", backend=backend, executor=Executor({}))
    assert set(backend.requests[-1].allowed) == {"get_invoice", "submit"}


async def test_asking_again_for_what_already_succeeded_steers_to_the_terminal_tool() -> None:
    """A 2-cycle between two finished lookups (the repeat guard alone only
    sees the batch right before): refused, and the second time the next turn
    offers only the terminal tool."""
    other = simple_tool("get_rate", "Get a rate", "base")
    wf = Workflow(name=WF, tools=[LOOKUP, other, SUBMIT], terminal_tools=["submit"])
    validate_workflow(wf)
    script = [
        call("get_invoice", invoice_id="A"),
        call("get_rate", base="USD"),
        call("get_invoice", invoice_id="A"),  # refused, once
        call("get_rate", base="USD"),  # refused, twice: steer to finish
        call("submit", answer="a"),
    ]
    backend = ScriptedBackend(scripts={WF: script})
    executor = Executor({"A": "a"})
    result = await run_workflow(wf, "A?", backend=backend, executor=executor)
    assert result.terminal_tool == "submit"
    assert [n for n, _ in executor.executed] == ["get_invoice", "get_rate", "submit"]
    assert list(backend.requests)[-1].allowed == ["submit"]
    nudges = [m.content for m in result.transcript if m.type is MessageType.RETRY_NUDGE]
    assert len(nudges) == 2 and all("use its result" in n for n in nudges)


def test_quantities_caps_words_and_names_are_no_candidates() -> None:
    found = extract_candidates(
        [
            "Price 14.99 USD, rate 0.92, status DELAYED, sku SKU-4410, see search_products, "
            "at 14:00 on 2025-03-14."
        ],
        names={"search_products", "sku"},
    )
    assert found == ["USD", "SKU-4410"]


def test_placeholders_from_the_schema_are_not_values_under_grounding() -> None:
    service = simple_tool("check_service_status", "Status of a service", "service")
    grammar = build_grammar([service], grounded=[])
    assert grammar is not None
    rule = "check-service-status-args-service"
    for junk in (
        "service",
        "service_name",
        "service name",
        "check_service_status",
        "string",
        "string: 1",
        "string (100% of the fridge)",
        # A description's format, copied whole or in parts.
        "YYYY-MM-DD",
        "YYYY",
        "DD",
        "HH:MM",
        "YYYY-05-01",
        "dd/mm/yyyy",
        # The name and a list's punctuation ("service, ").
        "service, ",
        "service/api",
        "service}, ",
        "string, name: ",
        # A type's name in a structure the model makes up.
        "string}, 'string': 'string'}",
        "string'",
        "integer]",
    ):
        assert not accepts(grammar, rule, json.dumps(junk)), junk
    assert accepts(grammar, rule, json.dumps("payments-api"))
    assert accepts(grammar, rule, json.dumps("DDX-204"))
    assert accepts(grammar, rule, json.dumps("stringer-api"))
    off = build_grammar([service])  # grounding off: anything goes
    assert off is not None and accepts(off, rule, json.dumps("service_name"))


def test_a_message_for_a_person_is_no_bare_id() -> None:
    """A report's `message` of only an id the conversation wrote
    ("EST-26-0447") tells the customer nothing; the respond path may
    answer "what is my id?" with the id alone."""
    send = simple_tool("send_estimate", "Send the customer the estimate", "message")
    grammar = build_grammar([send, respond_spec()], grounded=["EST-26-0447", "438.00"])
    assert grammar is not None
    rule = "send-estimate-args-message"
    for junk in ("EST-26-0447", "438.00", "EST-26-0447."):
        assert not accepts(grammar, rule, json.dumps(junk)), junk
    for fine in ("Estimate EST-26-0447: 438.00 GBP.", "EST-26-0447 is ready"):
        assert accepts(grammar, rule, json.dumps(fine)), fine
    assert accepts(grammar, "respond-args-message", json.dumps("EST-26-0447"))


def test_a_result_label_narrows_the_evidence_for_a_report() -> None:
    """Every EUR amount the results write is evidence for `balance_eur`;
    the one the result labels "balance" is the answer, where it is one."""
    reply = ToolSpec(
        "reply",
        "Reply with the balance",
        {"type": "object", "properties": {"balance_eur": {"type": "number"}}},
    )
    preferred = {"reply.balance_eur": [640, 160, 480]}
    grammar = build_grammar(
        [reply], preferred_values=preferred, bound={"reply.balance_eur": [480.0]}
    )
    assert grammar is not None
    rule = "reply-args-balance-eur"
    assert accepts(grammar, rule, "480") and not accepts(grammar, rule, "160")
    # A label that gives none of them narrows nothing.
    other = build_grammar([reply], preferred_values=preferred, bound={"reply.balance_eur": [7.0]})
    assert other is not None and accepts(other, rule, "160")


def test_the_workflow_name_joined_to_a_name_is_not_an_answer() -> None:
    """`chat_message`: the OpenAI endpoint's ad-hoc workflow name and the
    respond tool's parameter, which the 270M model wrote as its answer."""
    grammar = build_grammar([respond_spec()], grounded=[], workflow_name="chat")
    assert grammar is not None
    rule = "respond-args-message"
    for junk in ("chat_message", "chat.message", "chat", "message"):
        assert not accepts(grammar, rule, json.dumps(junk)), junk
    for fine in ("Hello there.", "chat with me", "chatbot", "Chat_message"):
        assert accepts(grammar, rule, json.dumps(fine)), fine
    seen = build_grammar([respond_spec()], grounded=["chat_42"], workflow_name="chat")
    assert seen is not None and accepts(seen, rule, json.dumps("chat_42"))


def test_values_built_from_schema_names_are_not_values_either() -> None:
    service = simple_tool("check_service_status", "Status of a service", "service")
    grammar = build_grammar([service], grounded=[])
    assert grammar is not None
    rule = "check-service-status-args-service"
    for junk in (
        "service_name_service_id",
        "service.id",
        "service type",
        "check_service_status.service",
        "check_service_status_1",
        "check_service_status1",
    ):
        assert not accepts(grammar, rule, json.dumps(junk)), junk
    for fine in ("services-api", "service", "serviceA", "payments", "checkout"):
        assert accepts(grammar, rule, json.dumps(fine)) is (fine != "service"), fine
    # Seen in the conversation: then it is a value like any other.
    seen = build_grammar([service], grounded=["service_payments"])
    assert seen is not None and accepts(seen, rule, json.dumps("service_payments"))


# --------------------------------------------------------------------------- format repair


def test_a_failed_value_is_reshaped_like_the_ids_an_error_shows() -> None:
    from forge_core.guardrails.grounding import reshaped

    error = "malformed id '123': ids are 'INV-' and six digits, e.g. invoice 42 is INV-000042"
    assert reshaped("123", error) == ["INV-000123"]
    assert reshaped("2024-0042", "ids look like INV-2023-0107 (year, number)") == ["INV-2024-0042"]
    # Not zero-padded in the example: the digits stay as written.
    assert reshaped("77", "use an order number like ORD-1234") == ["ORD-77"]
    # Nothing to go on: no digits, no example of the same shape, or the value itself.
    assert reshaped("abc", "ids look like X-1") == []
    assert reshaped("12-34", "ids look like INV-000042") == []
    assert reshaped("O-771", "no product 'O-771'") == []
    assert reshaped("5", "retry in 2.5 seconds") == []


async def test_an_error_that_shows_the_format_offers_the_repaired_value_at_once() -> None:
    class Invoices:
        executed: list[str] = []

        async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            out = []
            for c in infos:
                self.executed.append(str(c.args))
                value = c.args.get("invoice_id", "")
                if c.name == "submit":
                    out.append(ToolOutcome(output="done"))
                elif value.startswith("INV-"):
                    out.append(ToolOutcome(output=f"{value}: paid"))
                else:
                    out.append(
                        ToolOutcome(
                            error=f"malformed invoice id {value!r}: ids look like INV-000042",
                            error_kind=ToolErrorKind.HARD,
                        )
                    )
            return out

    backend = ScriptedBackend(
        scripts={
            WF: [
                call("get_invoice", invoice_id="123"),
                call("get_invoice", invoice_id="INV-000123"),
                call("submit", answer="paid"),
            ]
        }
    )
    result = await run_workflow(
        workflow(), "Is invoice 123 paid?", backend=backend, executor=Invoices()
    )
    assert result.terminal_tool == "submit"
    second = backend.requests[1]
    assert second.grounded_values is not None and second.grounded_values[0] == "INV-000123"
    # That parameter of that tool now takes only the repaired value...
    assert second.grounded_formats == {"get_invoice.invoice_id": ["INV-000123"]}
    narrowed = build_grammar(
        [LOOKUP],
        grounded=second.grounded_values,
        grounded_formats=second.grounded_formats,
        excluded=second.excluded_calls,
    )
    assert narrowed is not None
    rule = "get-invoice-args-invoice-id"
    assert accepts(narrowed, rule, json.dumps("INV-000123"))
    assert not accepts(narrowed, rule, json.dumps("INV-000042"))
    # ...until it failed too: then every seen value is back.
    widened = build_grammar(
        [LOOKUP],
        grounded=second.grounded_values,
        grounded_formats=second.grounded_formats,
        excluded=[*second.excluded_calls, ("get_invoice", {"invoice_id": "INV-000123"})],
    )
    assert widened is not None and accepts(widened, rule, json.dumps("INV-000042"))
    # A format error is not an outage: the same value is out at once, with
    # no identical retry first.
    assert ("get_invoice", {"invoice_id": "123"}) in second.excluded_calls


def test_a_failed_value_with_punctuation_added_is_excluded_too() -> None:
    failed = [("get_invoice", {"invoice_id": "A, B and C"})]
    grammar = build_grammar([LOOKUP], max_tokens=512, excluded=failed)
    assert grammar is not None
    rule = "get-invoice-args-invoice-id"
    for same in ("A, B and C", "A, B and C,", "A, B and C, ", "A, B and C."):
        assert not accepts(grammar, rule, json.dumps(same)), same
    for other in ("A", "A, B", "A, B and C and D"):
        assert accepts(grammar, rule, json.dumps(other)), other


def test_an_email_parameter_takes_only_the_email_addresses_seen() -> None:
    from forge_core.guardrails.grounding import is_email

    described = {"type": "string", "description": "The supplier's email address."}
    assert is_email("to", described) and is_grounded("to", described)
    assert is_email("contact_email", {"type": "string"})
    assert is_email("contactEmail", {"type": "string"})
    assert not is_email("to", {"type": "string"})
    assert not is_email("gmail_label", {"type": "string"})
    assert not is_email("message", {"type": "string", "description": "The email text."})

    mail = ToolSpec(
        "email_supplier",
        "Email a supplier",
        {
            "type": "object",
            "properties": {"to": described, "order_id": {"type": "string"}},
            "required": ["to", "order_id"],
        },
    )
    seen = ["O-771", "SUP-88", "orders@northwind.example"]
    grammar = build_grammar([mail], max_tokens=512, grounded=seen)
    assert grammar is not None
    assert accepts(grammar, "email-supplier-args-to", json.dumps("orders@northwind.example"))
    assert not accepts(grammar, "email-supplier-args-to", json.dumps("SUP-88"))
    # An id-like parameter still takes any seen identifier.
    assert accepts(grammar, "email-supplier-args-order-id", json.dumps("O-771"))


def test_candidates_the_conversation_labels_as_the_parameters_kind() -> None:
    from forge_core.guardrails.grounding import key_words, labelled

    assert key_words("order_id") == {"order"}
    assert key_words("supplierId") == {"supplier"}
    assert key_words("sku") == {"sku"}
    assert key_words("id") == {"id"}
    texts = [
        "Order O-771 is delayed. Email the supplier.",
        "Order O-771: 1 x product SKU-4410, status DELAYED.",
        "SKU-4410: standing desk, supplied by supplier_id=SUP-88.",
        "Your confirmation code is K7XQ2M; booking B-1 is held.",
    ]
    candidates = extract_candidates(texts, {"supplier_id"})  # names are never candidates
    assert labelled(candidates, texts, "order_id") == ["O-771"]
    assert labelled(candidates, texts, "sku") == ["SKU-4410"]  # its own letters
    assert labelled(candidates, texts, "supplier_id") == ["SUP-88"]
    assert labelled(candidates, texts, "confirmation_code") == ["K7XQ2M"]
    assert labelled(candidates, texts, "customer_id") == []


def test_a_labelled_candidate_is_preferred_until_it_failed() -> None:
    seen = ["O-771", "SKU-4410", "SUP-88"]
    labels = {"invoice_id": ["SUP-88"]}
    grammar = build_grammar([LOOKUP], max_tokens=512, grounded=seen, grounded_labels=labels)
    assert grammar is not None
    rule = "get-invoice-args-invoice-id"
    assert accepts(grammar, rule, json.dumps("SUP-88"))
    assert not accepts(grammar, rule, json.dumps("O-771"))
    failed = [("get_invoice", {"invoice_id": "SUP-88"})]
    after = build_grammar(
        [LOOKUP], max_tokens=512, grounded=seen, grounded_labels=labels, excluded=failed
    )
    assert after is not None and accepts(after, rule, json.dumps("O-771"))


async def test_a_value_that_failed_is_no_label_for_any_tool() -> None:
    booking = ToolSpec(
        "lookup_booking",
        "Look up a booking",
        {
            "type": "object",
            "properties": {"confirmation_code": {"type": "string"}},
            "required": ["confirmation_code"],
        },
    )
    report = ToolSpec(
        "report_booking",
        "Report the booking. Ends the task.",
        {
            "type": "object",
            "properties": {"confirmation_code": {"type": "string"}},
            "required": ["confirmation_code"],
        },
    )
    wf = Workflow(name="bookings", tools=[booking, report], terminal_tools=["report_booking"])
    validate_workflow(wf)

    class Bookings:
        async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            out = []
            for c in infos:
                code = c.args["confirmation_code"]
                if c.name == "lookup_booking" and code == "K7XQ2M":
                    out.append(
                        ToolOutcome(
                            error=f"no booking with confirmation code {code!r}",
                            error_kind=ToolErrorKind.RESOLUTION,
                        )
                    )
                else:
                    out.append(ToolOutcome(output=f"{code}: CONFIRMED"))
            return out

    backend = ScriptedBackend(
        scripts={
            "bookings": [
                call("lookup_booking", confirmation_code="K7XQ2M"),
                call("lookup_booking", confirmation_code="K7XQ2N"),
                call("report_booking", confirmation_code="K7XQ2N"),
            ]
        }
    )
    await run_workflow(
        wf,
        "My confirmation code is K7XQ2M, or maybe K7XQ2N.",
        backend=backend,
        executor=Bookings(),
    )
    assert backend.requests[0].grounded_labels["confirmation_code"] == ["K7XQ2M"]
    # After the miss the failed code labels nothing, so report_booking's
    # grammar is not narrowed to it (lookup_booking's excludes it anyway).
    assert "K7XQ2M" not in backend.requests[2].grounded_labels.get("confirmation_code", [])


def test_an_email_after_a_long_run_of_id_characters_is_still_found() -> None:
    # The e-mail pattern only starts at a word boundary, so a 30,000-character
    # run without '@' in a tool result costs one scan, not one per position.
    text = "ref " + "0123456789" * 3000 + " mail ops-lead@example.com, cc a.b+c@x.io"
    found = extract_candidates([text])
    assert "ops-lead@example.com" in found
    assert "a.b+c@x.io" in found


def test_string_bounds_share_one_chain_of_rules() -> None:
    """`char{m,n}` costs llama.cpp n - m rules per use; the grammar writes
    each bound as a reference into one chain instead, whatever the number of
    strings and trie nodes, and the chain admits exactly the same lengths."""
    tool = ToolSpec(
        "note",
        "",
        {
            "type": "object",
            "properties": {
                "code": {"type": "string", "minLength": 2, "maxLength": 5},
                "body": {"type": "string"},
                "title": {"type": "string", "maxLength": 30},
            },
            "required": ["code", "body", "title"],
        },
    )
    failed = [("note", {"body": v}) for v in ("stuck", "stalled", "status", "same again")]
    grammar = build_grammar([tool], excluded=failed)
    assert grammar is not None
    assert not re.search(r"char\{\d+,\d+\}", grammar)  # no expansion left to llama.cpp
    chain = [ln for ln in grammar.splitlines() if ln.startswith("char-upto-")]
    # Shared: one chain as long as the longest optional run (the trie's first
    # character of a free string leaves 199), not one per string or node.
    assert len(chain) == MAX_STRING - 1
    code = "note-args-code"
    for n in range(8):
        assert accepts(grammar, code, json.dumps("x" * n)) == (2 <= n <= 5), n
    body = "note-args-body"
    assert not accepts(grammar, body, json.dumps("stuck"))
    assert accepts(grammar, body, json.dumps("stuckz" + "y" * (MAX_STRING - 6)))
    assert not accepts(grammar, body, json.dumps("stuckz" + "y" * (MAX_STRING - 5)))
    assert accepts(grammar, body, json.dumps("s" * MAX_STRING))
    assert not accepts(grammar, body, json.dumps("s" * (MAX_STRING + 1)))
