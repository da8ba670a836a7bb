"""Saved KV caches of workflow prefixes, restored when a new run starts.

Every run of a workflow starts with the same system prompt and tools. The
scheduler sends a new run to the slot that served its workflow last, but that
slot still holds the *previous run's* cache, and llama-server often cannot use
it: a prompt that keeps less than half of a slot's tokens makes it stash the
slot in its RAM cache and look for a better entry (entries are kept only if
they share a quarter of their tokens), and with sliding-window attention a
slot whose cache was shifted by compaction no longer holds the early window
(`forcing full prompt re-processing due to lack of cache data`). Measured on
the bundled Gemma 3 270M: the first call of a second run of the same
workflow re-evaluated all 255 prompt tokens.

So after a workflow's first model call, its slot is saved to a file
(`POST /slots/{id}?action=save`, needs llama-server's `--slot-save-path` and,
for SWA models, `--swa-full`); the first call of every later run of that
workflow restores it onto its slot (`?action=restore`, ~2 ms for 270 tokens)
unless another live run still calls that slot home. The file holds the first
run's whole first prompt (prefix + its user message + the answer);
llama-server reuses the common prefix and evaluates the rest, so a mismatch
costs tokens, never correctness.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections import OrderedDict
from pathlib import Path
from typing import Any

import httpx

log = logging.getLogger(__name__)

MAX_SNAPSHOTS = 32
# A file holds the KV cache of every saved token: ~18 KB a token for the
# 270M model, ~130 KB for an 8B one. Beyond this total the oldest files go.
MAX_SNAPSHOT_BYTES = 2 << 30


def snapshot_key(body: dict[str, Any]) -> str:
    """The prefix every prompt of a workflow starts with: its first message as
    rendered for the model (system prompt plus tool descriptions)."""
    messages = body.get("messages") or [{}]
    first = messages[0]
    if first.get("role") != "system":
        return ""
    text = f"{first.get('content') or ''}\0{body.get('tools', '')}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class PrefixSnapshots:
    """Which workflow prefixes have a saved slot file, and the save/restore calls."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        directory: Path | None = None,
        limit: int = MAX_SNAPSHOTS,
        limit_bytes: int = MAX_SNAPSHOT_BYTES,
    ) -> None:
        self._http = http
        # Known only for a managed server: old files are deleted there.
        self.directory = directory
        self.limit = limit
        self.limit_bytes = limit_bytes
        # key -> (file name, bytes written), least recently used first
        self._files: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self.enabled = True
        self.restores = 0
        self.saves = 0
        # First calls whose slot held the workflow's prefix already (no restore).
        self.reused = 0

    def has(self, key: str) -> bool:
        return key in self._files

    async def restore(self, slot: int, key: str) -> bool:
        entry = self._files.get(key)
        if entry is None or not self.enabled:
            return False
        ok = await self._action(slot, "restore", entry[0]) is not None
        if ok:
            self._files.move_to_end(key)
            self.restores += 1
        else:
            self._files.pop(key, None)
        return ok

    async def save(self, slot: int, key: str) -> bool:
        if not key or key in self._files or not self.enabled:
            return False
        filename = f"forge-prefix-{key}.bin"
        answer = await self._action(slot, "save", filename)
        if answer is None:
            return False
        self._files[key] = (filename, int(answer.get("n_written", 0)))
        self.saves += 1
        while len(self._files) > 1 and (
            len(self._files) > self.limit or self.stored_bytes > self.limit_bytes
        ):
            _, (old, _) = self._files.popitem(last=False)
            if self.directory is not None:
                with contextlib.suppress(OSError):
                    (self.directory / old).unlink()
        return True

    @property
    def stored_bytes(self) -> int:
        return sum(size for _, size in self._files.values())

    async def _action(self, slot: int, action: str, filename: str) -> dict[str, Any] | None:
        try:
            resp = await self._http.post(
                f"/slots/{slot}", params={"action": action}, json={"filename": filename}
            )
        except httpx.HTTPError as exc:
            log.warning("llama-server slot %s failed: %s", action, exc)
            return None
        if resp.status_code == 200:
            try:
                answer = resp.json()
            except ValueError:
                answer = None
            return answer if isinstance(answer, dict) else {}
        if resp.status_code in (400, 501) and "slot-save-path" in resp.text.replace("_", "-"):
            # The server was started without --slot-save-path: stop trying.
            log.warning("llama-server cannot save slots (%s); prefix snapshots off", resp.text)
            self.enabled = False
        else:
            log.warning("llama-server slot %s answered %d: %s", action, resp.status_code, resp.text)
        return None
