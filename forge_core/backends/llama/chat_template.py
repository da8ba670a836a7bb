"""The model's chat template, rendered in Forge instead of asked of llama-server per call.

A call made in pieces (pieces.py) sends `/completion` requests whose
prompt is the conversation's text, so each call first asked llama-server's
`/apply-template` for that text: one more HTTP request in series per model
call, 2-5 ms on a CPU host (bench/RESULTS.md §15). The template is a Jinja
template from the model file (`/props` gives it), and Jinja is what such
templates are written for: Hugging Face's transformers renders them with
jinja2 in a sandbox with `raise_exception`, `strftime_now` and a `tojson`
that keeps non-ASCII text; llama.cpp's own engine follows the same language.
So Forge renders it here the same way.

Two engines can still differ (whitespace control, a filter one lacks,
llama.cpp's polyfills for templates without a system or tool role), so the
local text is used only where it agrees with llama-server's byte for byte:
probe conversations with every role Forge sends and awkward content are
rendered both ways before the first use (`LocalPrompts.ready`), and later
renders are audited in the background, every one until `AUDITED` agreed,
then one in `AUDIT_EVERY`. One disagreement and the backend asks llama-server
again for good (logged with where the texts part).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import httpx
import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

log = logging.getLogger(__name__)

# Renders audited against llama-server one by one before sampling starts.
AUDITED = 8
# After that, one render in this many is audited.
AUDIT_EVERY = 32

# Content that trips up a renderer: quotes and braces as Forge writes calls,
# Jinja's own delimiters as data, leading and trailing whitespace, newlines,
# non-ASCII text, a reasoning block.
_AWKWARD = (
    ' lead  \n{"tool": "x", "args": {"q": "a\\"b"}}\n{{ x }} {% raw %} <b>ünï 🙂</b>\t trail '
)
PROBES: list[list[dict[str, Any]]] = [
    [
        {"role": "system", "content": "You call tools." + _AWKWARD},
        {"role": "user", "content": "Do the task." + _AWKWARD},
        {"role": "assistant", "content": '{"tool": "a", "args": {}}'},
        {"role": "tool", "content": "result one" + _AWKWARD},
        {"role": "tool", "content": "result two"},
        {"role": "user", "content": "[nudge] call a tool"},
        {"role": "assistant", "content": "<think>\nwhy\n</think>\n" + '{"tool": "b", "args": {}}'},
        {"role": "tool", "content": ""},
    ],
    [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
    ],
]

# Asks llama-server for a conversation's prompt text (/apply-template).
ServerRender = Callable[[list[dict[str, Any]]], Awaitable[str]]


class TemplateError(Exception):
    """The template does not compile or render here."""


def _raise_exception(message: str) -> None:
    raise TemplateError(message)


def _tojson(value: Any, indent: int | None = None, **_: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


class ChatTemplate:
    """One model's chat template, compiled once."""

    def __init__(self, source: str, bos_token: str = "", eos_token: str = "") -> None:
        env = ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
        )
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise_exception
        env.globals["strftime_now"] = _strftime_now
        try:
            self._template = env.from_string(source)
        except jinja2.TemplateError as exc:
            raise TemplateError(f"the chat template does not compile: {exc}") from exc
        self._tokens = {"bos_token": bos_token, "eos_token": eos_token}
        # llama.cpp drops a BOS token the template writes when the model's
        # tokenizer adds one itself; `LocalPrompts` learns which from a probe.
        self.strip_bos = False

    def without_bos(self, text: str) -> str | None:
        """`text` less the BOS token it starts with; None when it does not."""
        bos = self._tokens["bos_token"]
        return text[len(bos) :] if bos and text.startswith(bos) else None

    def render(self, messages: list[dict[str, Any]], add_generation_prompt: bool = True) -> str:
        """The prompt for `messages`, ending with the assistant's opening
        unless not `add_generation_prompt`."""
        try:
            text = self._template.render(
                messages=messages, add_generation_prompt=add_generation_prompt, **self._tokens
            )
        except TemplateError:
            raise
        except Exception as exc:  # a template's own error, whatever its type
            raise TemplateError(f"the chat template failed: {exc}") from exc
        if self.strip_bos:
            text = self.without_bos(text) or text
        return text


def parting(local: str, server: str) -> str:
    """Where two renders part, for the log."""
    at = next(
        (i for i, (a, b) in enumerate(zip(local, server, strict=False)) if a != b),
        min(len(local), len(server)),
    )
    return f"at character {at}: here {local[at : at + 40]!r}, llama-server {server[at : at + 40]!r}"


# Reads the model's template from the server: None when it has none.
LoadTemplate = Callable[[], Awaitable["ChatTemplate | None"]]


class LocalPrompts:
    """A conversation's prompt text: rendered here while that agrees with
    llama-server, asked of llama-server otherwise."""

    def __init__(self, load: LoadTemplate, server: ServerRender) -> None:
        self._load = load
        self._server = server
        self._template: ChatTemplate | None = None
        self._checked = False
        self._check_lock = asyncio.Lock()
        self._renders = 0
        self._audits: set[asyncio.Task[None]] = set()

    @property
    def local(self) -> bool:
        """Whether prompts are rendered here (known after the first prompt)."""
        return self._template is not None

    async def ready(self) -> None:
        """Load the template and compare the probes once; on any difference,
        or a probe either side refuses, prompts come from llama-server. A
        server that does not answer raises, and the next prompt checks again."""
        if self._checked:
            return
        async with self._check_lock:
            if self._checked:
                return
            try:
                template = await self._load()
            except TemplateError as exc:
                log.info("chat template not rendered in Forge: %s", exc)
                template = None
            if template is not None and not await self._agrees(template):
                template = None
            self._template = template
            self._checked = True
            if template is not None:
                log.info("chat template rendered in Forge (agrees with llama-server)")

    async def _agrees(self, template: ChatTemplate) -> bool:
        for probe in PROBES:
            try:
                server = await self._server(probe)
            except httpx.TransportError:
                raise  # not serving now: the next prompt checks again
            except Exception as exc:  # the template refused a probe there
                log.info("chat template not rendered in Forge: llama-server: %s", exc)
                return False
            try:
                local = template.render(probe)
            except TemplateError as exc:
                log.info("chat template not rendered in Forge: %s", exc)
                return False
            if local != server and not template.strip_bos and template.without_bos(local) == server:
                template.strip_bos = True
                local = server
            if local != server:
                log.warning(
                    "chat template: Forge's render differs from llama-server's %s; "
                    "asking llama-server for every prompt",
                    parting(local, server),
                )
                return False
        return True

    async def prompt(self, messages: list[dict[str, Any]]) -> str:
        await self.ready()
        template = self._template
        if template is None:
            return await self._server(messages)
        try:
            text = template.render(messages)
        except TemplateError as exc:
            log.info("chat template not rendered here for this call: %s", exc)
            return await self._server(messages)
        self._renders += 1
        if self._renders <= AUDITED or self._renders % AUDIT_EVERY == 0:
            task = asyncio.create_task(self._audit(messages, text))
            self._audits.add(task)
            task.add_done_callback(self._audits.discard)
        return text

    def head(self, messages: list[dict[str, Any]]) -> str | None:
        """`messages` rendered here without the assistant's opening; None
        where prompts are not rendered here or the template refuses them."""
        if self._template is None:
            return None
        try:
            return self._template.render(messages, add_generation_prompt=False)
        except TemplateError:
            return None

    async def _audit(self, messages: list[dict[str, Any]], local: str) -> None:
        try:
            server = await self._server(messages)
        except Exception as exc:  # no verdict on the template
            log.debug("chat template audit skipped: %s", exc)
            return
        if local != server and self._template is not None:
            log.warning(
                "chat template: Forge's render differs from llama-server's %s; "
                "asking llama-server from now on",
                parting(local, server),
            )
            self._template = None

    async def audited(self) -> None:
        """Wait for the audits in flight."""
        await asyncio.gather(*self._audits, return_exceptions=True)

    async def aclose(self) -> None:
        for task in list(self._audits):
            task.cancel()
        await asyncio.gather(*self._audits, return_exceptions=True)
