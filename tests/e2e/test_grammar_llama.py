"""The compact GBNF grammar, compiled and sampled by the real llama-server.

At T=0.8 the 270M model explores the grammar freely; every
answer must still be a complete call of an allowed tool whose arguments
satisfy the tool's JSON Schema.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest

from forge_core.grammar import build_grammar
from forge_core.llama_host.process import ManagedLlamaServer
from forge_core.workflow import ToolSpec

pytestmark = pytest.mark.e2e

TOOLS = [
    ToolSpec(
        "search_flights",
        "Search flights",
        {
            "type": "object",
            "properties": {
                "origin": {"type": "string", "maxLength": 40},
                "destination": {"type": "string", "maxLength": 40},
                "passengers": {"type": "integer"},
                "cabin": {"enum": ["economy", "business"]},
                "flexible": {"type": "boolean"},
            },
            "required": ["origin", "destination", "passengers"],
        },
    ),
    ToolSpec(
        "add_items",
        "Add items to the cart",
        {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "maxItems": 3,
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string", "maxLength": 20},
                            "qty": {"type": "number"},
                        },
                        "required": ["sku", "qty"],
                    },
                },
                "note": {"type": ["string", "null"], "maxLength": 40},
            },
            "required": ["items"],
        },
    ),
]


async def sample(url: str, grammar: str, seed: int) -> str:
    body: dict[str, Any] = {
        "messages": [
            {"role": "system", "content": "Call search_flights or add_items as JSON."},
            {"role": "user", "content": "Book two seats from Oslo to Rome, and add a lamp."},
        ],
        "grammar": grammar,
        "temperature": 0.8,
        "seed": seed,
        # Above the longest output the grammar admits for these schemas (up to
        # 8 calls of bounded strings), so a cut-off is the grammar's fault.
        "max_tokens": 3000,
    }
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        resp = await http.post("/v1/chat/completions", json=body)
    assert resp.status_code == 200, resp.text
    content: str = resp.json()["choices"][0]["message"]["content"]
    return content


@pytest.mark.parametrize("parallel", [False, True])
async def test_every_sampled_call_is_complete_and_valid(
    llama_server: ManagedLlamaServer, parallel: bool
) -> None:
    grammar = build_grammar(TOOLS, parallel=parallel)
    assert grammar is not None
    schemas = {t.name: t.parameters for t in TOOLS}
    for seed in range(4):
        text = await sample(llama_server.url, grammar, seed)
        value = json.loads(text)  # complete JSON, never truncated
        calls = value if parallel else [value]
        assert calls and isinstance(calls, list)
        for call in calls:
            assert set(call) == {"tool", "args"}
            jsonschema.validate(call["args"], schemas[call["tool"]])


INVOICE = ToolSpec(
    "get_invoice",
    "Fetch an invoice by its id",
    {
        "type": "object",
        "properties": {"invoice_id": {"type": "string"}},
        "required": ["invoice_id"],
    },
)


async def invoice_ids(url: str, grammar: str) -> list[str]:
    out = []
    for seed in range(3):
        body: dict[str, Any] = {
            "messages": [
                {"role": "system", "content": 'Answer with {"tool": ..., "args": {...}}.'},
                {"role": "user", "content": "Fetch invoice A-19 for me."},
            ],
            "grammar": grammar,
            "temperature": 0.7,
            "seed": seed,
            "max_tokens": 128,
        }
        async with httpx.AsyncClient(base_url=url, timeout=120) as http:
            resp = await http.post("/v1/chat/completions", json=body)
        assert resp.status_code == 200, resp.text
        call = json.loads(resp.json()["choices"][0]["message"]["content"])
        out.append(call["args"]["invoice_id"])
    return out


async def test_a_failed_value_is_excluded_from_what_the_model_can_write(
    llama_server: ManagedLlamaServer,
) -> None:
    """The exclusion grammar (loop breaking) compiles in llama-server, and the
    value the model writes when nothing is excluded is then out of reach."""
    plain = build_grammar([INVOICE], max_tokens=128)
    assert plain is not None
    first = await invoice_ids(llama_server.url, plain)
    excluded = [("get_invoice", {"invoice_id": v}) for v in set(first)]
    grammar = build_grammar([INVOICE], max_tokens=128, excluded=excluded)
    assert grammar is not None
    second = await invoice_ids(llama_server.url, grammar)
    # Values that need JSON escapes are not excluded (they have several
    # encodings); the model rarely writes them.
    writable = {v for v in first if not any(c in v for c in '"\\') and v.isprintable()}
    assert not set(second) & writable, (first, second)
    assert all(len(v) <= 48 for v in second)  # identifier bound
