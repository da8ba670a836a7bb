"""What a llama-server says about itself on /props: its context per slot,
slot count and model, the tool-call mode its chat template allows, and the
context budget Forge resolves from them."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx

from forge_core.errors import BackendError
from forge_core.modes import BudgetMode, ToolCallMode, resolvable_budget_mode

log = logging.getLogger(__name__)


async def read_props(base_url: str) -> dict[str, Any]:
    try:
        async with httpx.AsyncClient(base_url=base_url, timeout=10.0) as http:
            resp = await http.get("/props")
            resp.raise_for_status()
            props: dict[str, Any] = resp.json()
            return props
    except (httpx.HTTPError, ValueError) as exc:
        raise BackendError(f"cannot read {base_url}/props: {exc}", url=base_url) from exc


def resolve_budget(n_ctx: int, mode: str, manual_tokens: int, backend_mode: str) -> tuple[int, str]:
    """(context budget per run, how it was resolved) from the slot's n_ctx.

    backend / forge-full: the server's n_ctx (a managed server in forge-full
    mode was started with the model's full trained context). forge-fast: a
    managed server was restarted with half its maximum, so n_ctx already is
    the fast budget; an external one cannot be restarted, so the budget is
    half its n_ctx. manual: the given count, capped at n_ctx.
    """
    mode = resolvable_budget_mode(mode, manual_tokens)
    source = f"n_ctx {n_ctx} per slot from /props"
    if mode is BudgetMode.MANUAL:
        if manual_tokens > n_ctx:
            return n_ctx, f"manual {manual_tokens}, capped to the {source}"
        return manual_tokens, "manual"
    if mode is BudgetMode.FORGE_FAST and backend_mode != "managed":
        return n_ctx // 2, f"half the {source} (forge-fast, external server)"
    if mode in (BudgetMode.FORGE_FULL, BudgetMode.FORGE_FAST):
        return n_ctx, f"{source} ({mode})"
    return n_ctx, source


def choose_tool_call_mode(props: dict[str, Any]) -> ToolCallMode:
    """`auto`: native tool calling when the model's chat template supports it
    (/props chat_template_caps), otherwise the grammar-constrained mode.

    A template without tool support makes llama-server's native path fall back
    to free generation (measured with the bundled Gemma 3 270M: no call at all),
    whereas the constrained mode cannot produce anything but a valid call.
    """
    caps = props.get("chat_template_caps") or {}
    mode = (
        ToolCallMode.NATIVE
        if caps.get("supports_tool_calls") and caps.get("supports_tools")
        else ToolCallMode.CONSTRAINED
    )
    # Information, not a warning: constrained is the mode Forge is built for
    # (and the only one the bundled model calls tools in).
    if mode is ToolCallMode.NATIVE:
        log.info("tool-call mode native: the model's chat template writes tool calls")
    else:
        log.info("tool-call mode constrained: Forge's grammar writes each tool call")
    return mode


def parse_props(props: dict[str, Any]) -> tuple[int, int, str]:
    """(context tokens per slot, slot count, model name) from /props."""
    try:
        n_ctx = int(props["default_generation_settings"]["n_ctx"])
    except (KeyError, TypeError, ValueError) as exc:
        raise BackendError("llama-server /props has no default_generation_settings.n_ctx") from exc
    slots = int(props.get("total_slots", 1) or 1)
    model_path = str(props.get("model_path") or props.get("model_alias") or "unknown")
    return n_ctx, slots, Path(model_path).name
