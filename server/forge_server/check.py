"""`forge-server --check`: open the configured backend as serving would,
say what it found, and stop.

Meant for a deploy step or a first look at a GPU host: it starts a managed
llama-server (warm-up included) or connects to the external one, prints
the device the model runs on, and exits non-zero when the backend cannot
start, before any client is turned away by a server that never came up.
"""

from __future__ import annotations

import sys
from typing import TextIO

import httpx

from forge_core.backends.llama.props import parse_props, read_props
from forge_core.errors import ForgeError
from forge_server.backend import BackendConfig, llama_device, open_backend

# The backend could not be opened (a managed llama-server that cannot start
# exits with cli.EXIT_LLAMA_STARTUP instead).
EXIT_BACKEND = 1


async def check(config: BackendConfig, out: TextIO = sys.stdout) -> int:
    """Print what serving would use; the exit status."""
    try:
        async with open_backend(config) as backend:
            info = backend.info()
            device = llama_device(backend)
            n_ctx = ""
            if info.name == "llama-server" and info.url:
                per_slot, slots, _ = parse_props(await read_props(info.url))
                n_ctx = f"{per_slot} per slot, {per_slot * slots} in all"
            lines = [
                ("backend", f"{info.name} ({info.backend_mode or 'native'}) {info.url}".strip()),
                ("device", f"{device.device} ({device.reason})" if device else "n/a"),
                ("model", info.model),
                ("context (n_ctx)", n_ctx or "n/a"),
                (
                    "budget",
                    f"{info.context_budget_tokens} tokens ({info.budget_mode}"
                    + (f": {info.budget_source}" if info.budget_source else "")
                    + ")",
                ),
                ("slots", str(info.slots)),
                ("tool_call_mode", info.tool_call_mode or "n/a"),
            ]
            if device is not None:
                lines += [
                    (f"  {d.name}", f"{d.description} ({d.total_mib} MiB, {d.free_mib} MiB free)")
                    for d in device.devices
                ]
            for key, value in lines:
                print(f"{key}: {value}", file=out)
    except (ForgeError, httpx.HTTPError, OSError) as exc:
        print(f"forge-server --check: the backend cannot be used: {exc}", file=sys.stderr)
        return EXIT_BACKEND
    return 0
