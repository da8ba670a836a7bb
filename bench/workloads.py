"""The 10-iteration workflows the prompt-cache benchmark and e2e test run.

Both are nine required steps and a terminal tool, with tools that return
deterministic text, so every variant of a measurement makes the same calls.
`case` picks the customer / machine a run is about: two runs of one workload
with different cases share the workflow prefix (system prompt and tools) and
nothing else.

- inspection: the worst case for a prompt cache. A two-line system prompt and
  argument-less tools (~260 prompt tokens) and tool results of 170-300 tokens,
  so every iteration adds about as much as a fifth of the prompt.
- triage: shaped like a production agent. A support runbook as system prompt
  and ten tools with described parameters (~880 prompt tokens before the
  first call), tool results of 50-110 tokens.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from forge_core.backends.base import BackendInfo, BackendReply, ChatRequest, ChunkSink
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.loop import ToolOutcome
from forge_core.messages import ToolCallInfo
from forge_core.workflow import Prerequisite, ToolSpec, Workflow, validate_workflow


@dataclass(frozen=True)
class Workload:
    name: str
    steps: list[str]
    terminal: str
    build: Callable[[str], Workflow]  # session id -> workflow
    output: Callable[[str, int], str]  # (step, case) -> tool result
    user_message: Callable[[int], str]
    budget: int  # context budget that makes tiered compaction fire in 10 iterations


def _chain(specs: list[ToolSpec]) -> list[ToolSpec]:
    """Each step requires the one before it."""
    return [
        ToolSpec(
            s.name,
            s.description,
            s.parameters,
            prerequisites=[Prerequisite(specs[i - 1].name)] if i else [],
        )
        for i, s in enumerate(specs)
    ]


# --------------------------------------------------------------------------- inspection

INSPECTION_STEPS = [f"step_{k}" for k in range(1, 10)]


def inspection_output(step: str, case: int) -> str:
    """170-300 tokens for the bundled model."""
    k = int(step.removeprefix("step_"))
    lines = 4 + (k * 3) % 4
    return "\n".join(
        f"Part {k}, reading {j}: sensor S{k}{j:02d} at "
        f"{20 + (k * j + case) % 13}.{(k + j) % 10} C, "
        f"pressure {990 + (k * 7 + j * 3 + case) % 40} hPa, vibration {(k * j) % 9}.{j} mm/s, "
        f"status {'nominal' if (k + j + case) % 4 else 'check'}."
        for j in range(1, lines + 1)
    )


def inspection_workflow(session: str) -> Workflow:
    tools = _chain(
        [
            ToolSpec(
                step,
                f"Read part {step[5:]} of the inspection log.",
                {"type": "object", "properties": {}},
            )
            for step in INSPECTION_STEPS
        ]
    )
    tools.append(
        ToolSpec(
            "finish",
            "Report the inspection result. Ends the task.",
            {
                "type": "object",
                "properties": {"status": {"type": "string", "enum": ["ok", "check"]}},
                "required": ["status"],
            },
        )
    )
    wf = Workflow(
        "inspection",
        tools,
        required_steps=list(INSPECTION_STEPS),
        terminal_tools=["finish"],
        system_prompt=f"Session {session}. You are an inspection agent that calls tools.\n"
        "Read every part of the inspection log in order, then report the result.",
    )
    validate_workflow(wf)
    return wf


INSPECTION = Workload(
    "inspection",
    INSPECTION_STEPS,
    "finish",
    inspection_workflow,
    inspection_output,
    lambda case: "Inspect the machine and report." if case == 0 else f"Inspect machine M-{case}.",
    2600,
)

# --------------------------------------------------------------------------- triage

TRIAGE_RUNBOOK = """\
You are the first-line support triage agent of Nimbus Cloud, a hosting provider \
for small businesses. Your job is to collect the facts about a customer's \
problem with the tools you have and then file one triage decision. You never \
talk to the customer directly and you never promise refunds or dates.

How to work:
1. Identify the customer from the e-mail address in the request.
2. Read their open tickets and the ticket the request is about.
3. Check the health of the affected service and the deployments of the last \
24 hours; most incidents follow a deployment.
4. Search the error logs of the service for the symptom the customer reports.
5. Check the customer's billing state: suspended accounts look like outages.
6. Read the service level agreement of the customer's plan to know how urgent \
the case is.
7. Check the list of known incidents before you declare a new one.
8. File the triage decision with the resolve tool.

Priorities:
- P1: a production outage for a customer on the Business or Enterprise plan, or \
data loss for anybody. The on-call engineer is paged.
- P2: degraded service (errors above 1%, latency above the SLA) or an outage on \
the Starter plan.
- P3: a single broken feature with a workaround, billing questions, questions \
about how to use the product.
- P4: feature requests and feedback.

Categories: outage, performance, billing, account, bug, question.

Rules:
- Base the decision only on what the tools returned; if the tools disagree, \
trust the error logs and the deploy list over the ticket text.
- A customer whose account is suspended for non-payment is a billing case, \
whatever the ticket says.
- If a known incident covers the symptom, link it and do not raise the priority \
above the incident's.
- Keep the summary under three sentences; the engineer reads it on a phone.
"""


def _string(description: str, max_length: int = 40) -> dict[str, Any]:
    return {"type": "string", "description": description, "maxLength": max_length}


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


SERVICE = {
    "type": "string",
    "description": "The service to check.",
    "enum": ["web-hosting", "mail", "database", "object-storage", "dns"],
}

TRIAGE_TOOLS = _chain(
    [
        ToolSpec(
            "lookup_customer",
            "Find a customer account by the e-mail address of one of its users. Returns the "
            "customer id, company name, plan and account state.",
            _object({"email": _string("E-mail address from the request.", 60)}),
        ),
        ToolSpec(
            "list_open_tickets",
            "List the customer's open support tickets, newest first, with id, subject and age.",
            _object(
                {
                    "customer_id": _string("Customer id from lookup_customer."),
                    "limit": {"type": "integer", "description": "At most this many tickets."},
                }
            ),
        ),
        ToolSpec(
            "get_ticket",
            "Read one ticket: the customer's description, the affected service and the "
            "messages exchanged so far.",
            _object({"ticket_id": _string("Ticket id, e.g. T-1042.")}),
        ),
        ToolSpec(
            "check_service_status",
            "Current health of a service in the customer's region: availability, error "
            "rate and p95 latency over the last hour.",
            _object({"service": SERVICE, "region": _string("Region code, e.g. eu-west.")}),
        ),
        ToolSpec(
            "recent_deploys",
            "Deployments to a service in the last hours, with version, time and owner team.",
            _object(
                {
                    "service": SERVICE,
                    "hours": {"type": "integer", "description": "How far back to look."},
                }
            ),
        ),
        ToolSpec(
            "search_error_logs",
            "Search a service's error logs for a phrase; returns the count and the most "
            "frequent matching errors of the last 24 hours.",
            _object({"service": SERVICE, "query": _string("Words to search for.")}),
        ),
        ToolSpec(
            "check_billing",
            "The customer's billing state: balance, last payment, overdue invoices and "
            "whether the account is suspended.",
            _object({"customer_id": _string("Customer id from lookup_customer.")}),
        ),
        ToolSpec(
            "get_sla",
            "The service level agreement of a plan: availability target, response time per "
            "priority and the support hours.",
            _object(
                {
                    "plan": {
                        "type": "string",
                        "description": "Plan name.",
                        "enum": ["starter", "business", "enterprise"],
                    }
                }
            ),
        ),
        ToolSpec(
            "known_incidents",
            "Incidents already declared for a service, with id, status and the symptoms "
            "they cover.",
            _object({"service": SERVICE}),
        ),
    ]
)

TRIAGE_STEPS = [t.name for t in TRIAGE_TOOLS]

RESOLVE = ToolSpec(
    "resolve",
    "File the triage decision. Ends the task.",
    _object(
        {
            "priority": {"type": "string", "enum": ["P1", "P2", "P3", "P4"]},
            "category": {
                "type": "string",
                "enum": ["outage", "performance", "billing", "account", "bug", "question"],
            },
            "incident": _string("Id of a known incident that covers this, if any.", 12),
            "summary": _string("At most three sentences for the engineer.", 120),
        },
        ["priority", "category"],
    ),
)

COMPANIES = ["Bakery Lund", "Atelier Noor", "Hof & Söhne", "Quay Books", "Vela Dental"]


def triage_output(step: str, case: int) -> str:
    """50-110 tokens for the bundled model, different per case."""
    company = COMPANIES[case % len(COMPANIES)]
    cid = f"C-{4100 + case * 17}"
    ticket = f"T-{1040 + case * 3}"
    results: dict[str, Any] = {
        "lookup_customer": {
            "customer_id": cid,
            "company": company,
            "plan": ["business", "starter", "enterprise"][case % 3],
            "state": "active",
            "users": 3 + case % 5,
        },
        "list_open_tickets": [
            {"id": ticket, "subject": "Website shows 502 errors", "age_hours": 2 + case},
            {"id": f"T-{990 + case}", "subject": "Invoice address change", "age_hours": 70},
        ],
        "get_ticket": {
            "id": ticket,
            "service": "web-hosting",
            "text": f"Since this morning our shop at {company.lower().replace(' ', '')}.example "
            "answers 502 Bad Gateway for about half of the requests.",
            "messages": 1,
        },
        "check_service_status": {
            "service": "web-hosting",
            "region": "eu-west",
            "availability": f"{97.1 + case * 0.3:.1f}%",
            "error_rate": f"{2.9 - case * 0.3:.1f}%",
            "p95_ms": 840 + case * 25,
        },
        "recent_deploys": [
            {"version": f"proxy 2.14.{case}", "at": "07:42 UTC", "team": "edge"},
            {"version": "panel 9.3.0", "at": "02:10 UTC", "team": "console"},
        ],
        "search_error_logs": {
            "query": "502",
            "count": 18230 + case * 911,
            "top": ["upstream prematurely closed connection", "no live upstreams"],
        },
        "check_billing": {"balance": 0, "last_payment": "2026-11-01", "overdue": 0},
        "get_sla": {"availability": "99.9%", "response": {"P1": "30 min", "P2": "4 h"}},
        "known_incidents": [
            {
                "id": f"INC-{310 + case}",
                "status": "investigating",
                "covers": "502 errors on web-hosting in eu-west after proxy deploy",
            }
        ],
    }
    return json.dumps(results[step], ensure_ascii=False)


def triage_workflow(session: str) -> Workflow:
    wf = Workflow(
        "triage",
        [*TRIAGE_TOOLS, RESOLVE],
        required_steps=list(TRIAGE_STEPS),
        terminal_tools=["resolve"],
        system_prompt=f"Session {session}.\n{TRIAGE_RUNBOOK}",
    )
    validate_workflow(wf)
    return wf


def triage_request(case: int) -> str:
    company = COMPANIES[case % len(COMPANIES)]
    return (
        f"New request from it@{company.lower().replace(' ', '').replace('&', '')}.example: "
        f'"Our website has been down or very slow since this morning, please help!"'
    )


# 2600: the 10th turn's ~2,020 tokens pass the trigger (0.75 x 2600 = 1950) with room to
# spare; at 2700 a run whose calls carry a few tokens less (no invented optional
# values) stayed one token under it.
TRIAGE = Workload(
    "triage", TRIAGE_STEPS, "resolve", triage_workflow, triage_output, triage_request, 2600
)

WORKLOADS = {w.name: w for w in (INSPECTION, TRIAGE)}

# --------------------------------------------------------------------------- running


@dataclass
class ScriptedTools:
    """Executes a workload's tools: deterministic results for `case`."""

    workload: Workload
    case: int = 0
    done: list[str] = field(default_factory=list)

    async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        outcomes = []
        for c in calls:
            self.done.append(c.name)
            if c.name in self.workload.steps:
                outcomes.append(ToolOutcome(output=self.workload.output(c.name, self.case)))
            else:
                outcomes.append(ToolOutcome(output=json.dumps(c.args)))
        return outcomes


class NextStepOnly:
    """The real backend with each turn's grammar narrowed to the next tool (the
    prompt is unchanged: it always lists every tool), so every run makes the
    same calls in the same order."""

    def __init__(self, inner: LlamaServerBackend, tools: ScriptedTools) -> None:
        self.inner = inner
        self.tools = tools

    def info(self) -> BackendInfo:
        return self.inner.info()

    async def count_tokens(self, request: ChatRequest) -> int:
        return await self.inner.count_tokens(request)

    def forget_run(self, run_id: str) -> None:
        self.inner.forget_run(run_id)

    async def aclose(self) -> None:
        return None

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        steps = self.tools.workload.steps
        pending = [s for s in steps if s not in self.tools.done]
        request.allowed = pending[:1] or [self.tools.workload.terminal]
        return await self.inner.complete(request, on_chunk)
