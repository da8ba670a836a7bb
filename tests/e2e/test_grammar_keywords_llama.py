"""Format, pattern and bound keywords written in the grammar, compiled and
sampled by the real llama-server with the bundled model (issue 34, item 0).

Before, these schemas fell back to llama-server's `response_format` path,
which answered HTTP 400 ("failed to parse grammar") for some patterns or
ran a call to `max_tokens`. Now the compact grammar holds them: llama-server
accepts it and every sampled call is complete and schema-valid.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import jsonschema
import pytest

from forge_core.grammar import build_grammar, unenforced_keywords
from forge_core.llama_host.process import ManagedLlamaServer
from forge_core.workflow import ToolSpec

pytestmark = pytest.mark.e2e

FREEZE = ToolSpec(
    "freeze_membership",
    "Pause a gym membership",
    {
        "type": "object",
        "properties": {
            "member_id": {"type": "string", "pattern": r"^M-\d{5}$"},
            "start_month": {"type": "string", "pattern": r"^\d{4}-\d{2}$"},
            "confirm_by": {"type": "string", "format": "date"},
            "months": {"type": "integer", "minimum": 1, "maximum": 3},
            "email": {"type": "string", "format": "email"},
        },
        "required": ["member_id", "start_month", "confirm_by", "months"],
    },
)
REJECT = ToolSpec(
    "reject_samples",
    "Reject lab samples",
    {
        "type": "object",
        "properties": {
            "sample_ids": {
                "type": "array",
                "items": {"type": "string", "pattern": r"^S-\d{4}-\d{3}$"},
                "minItems": 1,
                "uniqueItems": True,
            },
            "reason": {"enum": ["haemolysed", "clotted"]},
        },
        "required": ["sample_ids", "reason"],
    },
)
TOOLS = [FREEZE, REJECT]
MESSAGES = [
    {"role": "system", "content": "Call freeze_membership or reject_samples as JSON."},
    {
        "role": "user",
        "content": "Freeze member M-20417 from 2026-04 for two months, confirm by "
        "2026-03-20, mail ana@example.com. Also reject S-2207-014 (haemolysed).",
    },
]


async def complete(url: str, extra: dict[str, Any], seed: int) -> httpx.Response:
    body: dict[str, Any] = {
        "messages": MESSAGES,
        "temperature": 0.8,
        "seed": seed,
        "max_tokens": 400,
        **extra,
    }
    async with httpx.AsyncClient(base_url=url, timeout=300) as http:
        return await http.post("/v1/chat/completions", json=body)


async def test_format_and_pattern_grammar_compiles_and_calls_are_valid(
    llama_server: ManagedLlamaServer,
) -> None:
    for tool in TOOLS:
        # Nothing here falls back; only distinct items are validation's.
        left = unenforced_keywords(tool)
        assert left == ([("sample_ids", "uniqueItems")] if tool is REJECT else [])
    grammar = build_grammar(TOOLS)
    assert grammar is not None
    schemas = {t.name: t.parameters for t in TOOLS}
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    for seed in range(3):
        resp = await complete(llama_server.url, {"grammar": grammar}, seed)
        assert resp.status_code == 200, resp.text  # llama-server parsed the grammar
        call = json.loads(resp.json()["choices"][0]["message"]["content"])
        args = call["args"]
        schema = schemas[call["tool"]]
        if call["tool"] == REJECT.name:
            # Distinct items are validation's; the rest must hold already.
            args = {**args, "sample_ids": list(dict.fromkeys(args["sample_ids"]))}
        jsonschema.Draft202012Validator(schema, format_checker=checker).validate(args)
        if call["tool"] == FREEZE.name:
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", args["confirm_by"])
