"""Per call shape: a constrained call's time against the model writing the
same tokens unconstrained, and how many calls are schema-valid.

Three shapes, each on invented tools and a few user requests, on a managed
llama-server (bundled Gemma 3 270M, one slot):

- `single`: one call of a flat tool (keys Forge's, values the model's);
- `parallel`: a parallel batch over two tools (each call in pieces, the
  model's `,` or `]` deciding whether another follows);
- `nested`: one call whose arguments hold a nested object (with an optional
  key) and an array of objects.

Each request is made, interleaved and on the same slot with the prompt in
its cache, three ways: `pieces` (the default), `whole grammar` (one grammar
for the whole call, the fallback) and `unconstrained` (the same prompt, no
grammar, exactly as many tokens as the pieces call wrote, `ignore_eos`).
The ratio is pieces' seconds over unconstrained seconds, summed over the
shape's calls of one run (goal: <= 1.0). Every call is checked against its
tool's JSON Schema, at temperature 0 and 0.8.

    .venv/bin/python -m bench.call_shapes [--rounds 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass
from typing import Any

import httpx
import jsonschema

from bench._common import fmt, ratio, table, write_results
from forge_core.backends.base import BackendReply, ChatRequest
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.messages import Message, MessageRole, MessageType
from forge_core.workflow import ToolSpec

FERRY = ToolSpec(
    "book_ferry",
    "Book a ferry crossing.",
    {
        "type": "object",
        "properties": {
            "origin": {"type": "string", "maxLength": 40},
            "destination": {"type": "string", "maxLength": 40},
            "passengers": {"type": "integer"},
            "cabin": {"enum": ["seat", "berth"]},
        },
        "required": ["origin", "destination", "passengers"],
    },
)
KILN = ToolSpec(
    "check_kiln",
    "Read a kiln's temperature.",
    {
        "type": "object",
        "properties": {"kiln_id": {"type": "string", "maxLength": 20}},
        "required": ["kiln_id"],
    },
)
CRATES = ToolSpec(
    "ship_crates",
    "Ship crates to an address.",
    {
        "type": "object",
        "properties": {
            "to": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "maxLength": 30},
                    "street": {"type": "string", "maxLength": 40},
                    "floor": {"type": "integer"},
                },
                "required": ["city", "street"],
            },
            "crates": {
                "type": "array",
                "minItems": 1,
                "maxItems": 4,
                "items": {
                    "type": "object",
                    "properties": {"kg": {"type": "number"}, "label": {"type": "string"}},
                    "required": ["kg"],
                },
            },
            "express": {"type": "boolean"},
        },
        "required": ["to", "crates"],
    },
)

SHAPES: dict[str, tuple[list[ToolSpec], bool, list[str]]] = {
    "single": (
        [FERRY],
        False,
        [
            "Book a ferry for 2 from Bergen to Kirkwall.",
            "I need a berth for 3 people on the ferry from Hirtshals to Larvik.",
            "One passenger, Oban to Castlebay, please book it.",
        ],
    ),
    "parallel": (
        [FERRY, KILN],
        True,
        [
            "Check kiln K-7 and kiln K-9.",
            "Book a ferry for 2 from Bergen to Kirkwall and check kiln K-3.",
            "Read the temperature of kilns A1, A2 and B4.",
        ],
    ),
    "nested": (
        [CRATES],
        False,
        [
            "Ship two crates, 3 kg and 5 kg, to Harbour Road 4 in Tromso.",
            "Send one 12 kg crate labelled glaze to Mill Lane 9, Bodo, express.",
            "Ship a 2 kg crate to Quay Street 1 in Lerwick, 3rd floor.",
        ],
    ),
}


@dataclass
class ShapeTimes:
    pieces_s: float = 0.0
    whole_s: float = 0.0
    unconstrained_s: float = 0.0
    calls: int = 0
    tokens: int = 0
    valid: int = 0
    whole_valid: int = 0
    whole_calls: int = 0
    batch_sizes: list[int] | None = None


def request(shape: str, user: str, temperature: float, n: int) -> ChatRequest:
    tools, parallel, _ = SHAPES[shape]
    return ChatRequest(
        run_id=f"{shape}-{n}",
        workflow_name=f"bench-{shape}",
        messages=[
            Message(
                MessageRole.SYSTEM, "You book crossings and ship crates.", MessageType.SYSTEM_PROMPT
            ),
            Message(MessageRole.USER, user, MessageType.USER_INPUT),
        ],
        tools=tools,
        allowed=[t.name for t in tools],
        temperature=temperature,
        parallel=parallel,
    )


def valid(request: ChatRequest, reply: BackendReply) -> bool:
    if not isinstance(reply.response, list) or reply.truncated:
        return False
    schemas = {t.name: t.parameters for t in request.tools}
    for call in reply.response:
        if call.name not in schemas:
            return False
        try:
            jsonschema.validate(call.args, schemas[call.name])
        except jsonschema.ValidationError:
            return False
    return True


async def timed(backend: LlamaServerBackend, req: ChatRequest, pieces: bool) -> tuple[float, Any]:
    backend.call_pieces = pieces
    start = time.perf_counter()
    reply = await backend.complete(req, None)
    return time.perf_counter() - start, reply


async def unconstrained(
    http: httpx.AsyncClient, backend: LlamaServerBackend, req: ChatRequest, tokens: int
) -> float:
    body = backend.request_body(req, constrain=False)
    body.update(stream=False, max_tokens=tokens, ignore_eos=True, id_slot=0)
    start = time.perf_counter()
    resp = await http.post("/v1/chat/completions", json=body)
    resp.raise_for_status()
    return time.perf_counter() - start


async def count_tokens(http: httpx.AsyncClient, text: str) -> int:
    resp = await http.post("/tokenize", json={"content": text, "add_special": False})
    return len(resp.json().get("tokens", []))


async def one_shape(
    backend: LlamaServerBackend, http: httpx.AsyncClient, shape: str, rounds: int
) -> ShapeTimes:
    out = ShapeTimes(batch_sizes=[])
    n = 0
    for temperature in (0.0, 0.8):
        for _ in range(rounds):
            for user in SHAPES[shape][2]:
                n += 1
                req = request(shape, user, temperature, n)
                # The prompt goes into the slot's cache first, for all three.
                await unconstrained(http, backend, req, 1)
                seconds, reply = await timed(backend, req, pieces=True)
                out.calls += 1
                out.valid += valid(req, reply)
                if isinstance(reply.response, list) and out.batch_sizes is not None:
                    out.batch_sizes.append(len(reply.response))
                tokens = await count_tokens(http, reply.raw_text)
                whole_s, whole = await timed(backend, req, pieces=False)
                out.whole_calls += 1
                out.whole_valid += valid(req, whole)
                plain_s = await unconstrained(http, backend, req, max(1, tokens))
                # Times are compared at temperature 0 only: sampled calls
                # differ between the modes in length.
                if temperature == 0.0:
                    out.pieces_s += seconds
                    out.whole_s += whole_s
                    out.unconstrained_s += plain_s
                    out.tokens += tokens
    backend.call_pieces = True
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from forge_server.backend import BackendConfig, open_backend

    config = BackendConfig(backend="llama-server", ctx_size=4096, slots=1, threads=args.threads)
    rows: dict[str, Any] = {}
    async with open_backend(config) as backend:
        assert isinstance(backend, LlamaServerBackend)
        async with httpx.AsyncClient(base_url=backend.info().url, timeout=600.0) as http:
            for shape in SHAPES:
                # Untimed: the first call of a shape evaluates its system prompt.
                await backend.complete(request(shape, SHAPES[shape][2][0], 0.0, 0), None)
                t = await one_shape(backend, http, shape, args.rounds)
                rows[shape] = {
                    "calls": t.calls,
                    "tokens_t0": t.tokens,
                    "pieces_s_t0": t.pieces_s,
                    "whole_grammar_s_t0": t.whole_s,
                    "unconstrained_s_t0": t.unconstrained_s,
                    "pieces_vs_unconstrained": ratio(t.pieces_s, t.unconstrained_s),
                    "whole_vs_unconstrained": ratio(t.whole_s, t.unconstrained_s),
                    "valid_fraction": t.valid / t.calls if t.calls else 0.0,
                    "whole_grammar_valid_fraction": (
                        t.whole_valid / t.whole_calls if t.whole_calls else 0.0
                    ),
                    "batch_sizes": t.batch_sizes,
                }
    return {"rounds": args.rounds, "threads": args.threads, "shapes": rows}


def report(data: dict[str, Any]) -> str:
    rows = [
        [
            shape,
            r["calls"],
            r["tokens_t0"],
            fmt(r["pieces_s_t0"]),
            fmt(r["whole_grammar_s_t0"]),
            fmt(r["unconstrained_s_t0"]),
            fmt(r["pieces_vs_unconstrained"]),
            fmt(r["whole_vs_unconstrained"]),
            f"{fmt(100 * r['valid_fraction'], 1)}%",
            f"{fmt(100 * r['whole_grammar_valid_fraction'], 1)}%",
        ]
        for shape, r in data["shapes"].items()
    ]
    headers = [
        "shape",
        "calls",
        "tokens (T=0)",
        "pieces s",
        "whole s",
        "unconstrained s",
        "pieces/unc",
        "whole/unc",
        "valid (pieces)",
        "valid (whole)",
    ]
    return table(headers, rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rounds", type=int, default=3, help="passes over each shape's requests")
    p.add_argument("--threads", type=int, default=1, help="managed llama-server threads")
    args = p.parse_args(argv)
    data = asyncio.run(run(args))
    print(report(data))
    print(f"results: {write_results('call_shapes', data)}")


if __name__ == "__main__":
    main()
