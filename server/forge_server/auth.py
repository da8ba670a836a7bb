"""Who may call the server: bearer tokens from a file, or an external verifier.

Clients send `authorization: Bearer <token>` (every SDK has a token option).
With neither `--auth-token-file` nor `--auth-url` the server checks nothing,
as before. Health stays open either way: probes carry no credentials.

Token file: one token per line, optionally followed by `name=NAME` (the
identity logged and counted; default: a hash prefix, never the token) and
`max_runs=N` (concurrent runs for that token) and `admin` (the run inspector
shows it every caller's runs, not only its own). `#` starts a comment. The file
is re-read when it changes, so tokens are rotated without a restart.

Verifier (`--auth-url`): the server sends `GET <url>` with the caller's
`authorization` header. 2xx admits the caller (a JSON body may give `subject`
and `max_runs`), 401 is UNAUTHENTICATED, 403 PERMISSION_DENIED. These answers
are cached per token for the TTL; anything else (a timeout, a 5xx) is
UNAVAILABLE and not cached. The token file is consulted first.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx

from forge_server.errors import RequestRejected

log = logging.getLogger(__name__)

Clock = Callable[[], float]


@dataclass(frozen=True)
class Identity:
    # Safe to log: a token's name or the verifier's subject, never the token.
    subject: str
    # Concurrent runs this caller may hold; 0: only the server's own limit.
    max_runs: int = 0
    # Sees every caller's runs in the run inspector (token file `admin`,
    # verifier `"admin": true`); others see only their own.
    admin: bool = False


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _denied(code: grpc.StatusCode, reason: str, message: str) -> RequestRejected:
    return RequestRejected(code, reason, "", message)


class TokenFileError(ValueError):
    """The token file cannot be read or has a malformed line."""


def parse_tokens(text: str, source: str) -> dict[str, Identity]:
    """{sha256(token): identity} from the token file's text."""
    tokens: dict[str, Identity] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        token, *fields = line.split()
        digest = _digest(token)
        name, max_runs, admin = f"token-{digest[:8]}", 0, False
        for item in fields:
            key, sep, value = item.partition("=")
            if key == "admin" and not sep:
                admin = True
            elif key == "name" and sep and value:
                name = value
            elif key == "max_runs" and sep and value.isdigit():
                max_runs = int(value)
            else:
                raise TokenFileError(
                    f"{source}:{number}: expected 'TOKEN [name=NAME] [max_runs=N] [admin]', "
                    f"got {key!r}"  # the field, never the token
                )
        tokens[digest] = Identity(name, max_runs, admin)
    return tokens


class TokenFile:
    """Static tokens, re-read when the file's mtime or size changes (looked
    at no more than once per `recheck_s`)."""

    def __init__(self, path: Path, recheck_s: float = 1.0, clock: Clock = time.monotonic) -> None:
        self.path = path
        self.recheck_s = recheck_s
        self._clock = clock
        self._stamp: tuple[int, int] | None = None
        self._checked = float("-inf")
        self._tokens: dict[str, Identity] = {}
        self._load(initial=True)

    def lookup(self, token: str) -> Identity | None:
        now = self._clock()
        if now - self._checked >= self.recheck_s:
            self._checked = now
            self._load(initial=False)
        return self._tokens.get(_digest(token))

    def _load(self, *, initial: bool) -> None:
        try:
            stat = os.stat(self.path)
            stamp = (stat.st_mtime_ns, stat.st_size)
            if stamp == self._stamp:
                return
            tokens = parse_tokens(self.path.read_text(), str(self.path))
        except (OSError, UnicodeDecodeError, TokenFileError) as exc:
            if initial:
                raise TokenFileError(f"cannot use the token file: {exc}") from exc
            # A half-written or deleted file must not lock everybody out.
            log.warning("token file not reloaded, keeping the previous tokens: %s", exc)
            return
        self._stamp = stamp
        self._tokens = tokens
        log.info("token file %s: %d tokens", self.path, len(tokens))


class UrlVerifier:
    """Asks an external service whether a token is valid, caching its
    answers for `ttl_s`."""

    def __init__(
        self,
        url: str,
        ttl_s: float = 60.0,
        timeout_s: float = 5.0,
        clock: Clock = time.monotonic,
    ) -> None:
        self.url = url
        self.ttl_s = ttl_s
        self._clock = clock
        self._http = httpx.AsyncClient(timeout=timeout_s)
        self._cache: dict[str, tuple[float, Identity | RequestRejected]] = {}

    async def verify(self, token: str) -> Identity:
        digest = _digest(token)
        now = self._clock()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            return _answer(cached[1])
        answer = await self._ask(token, digest)
        if len(self._cache) > 10_000:  # bounded: a flood of random tokens
            self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
        self._cache[digest] = (now + self.ttl_s, answer)
        return _answer(answer)

    async def _ask(self, token: str, digest: str) -> Identity | RequestRejected:
        try:
            response = await self._http.get(self.url, headers={"authorization": f"Bearer {token}"})
        except httpx.HTTPError as exc:
            log.warning("auth verifier %s unreachable: %s", self.url, type(exc).__name__)
            raise _denied(
                grpc.StatusCode.UNAVAILABLE,
                "AUTH_UNAVAILABLE",
                "the authentication service did not answer; retry later",
            ) from exc
        if response.status_code == 401:
            return _denied(
                grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED", "the token was not accepted"
            )
        if response.status_code == 403:
            return _denied(
                grpc.StatusCode.PERMISSION_DENIED,
                "PERMISSION_DENIED",
                "the token is valid but may not use this server",
            )
        if not response.is_success:
            log.warning("auth verifier %s answered %d", self.url, response.status_code)
            raise _denied(
                grpc.StatusCode.UNAVAILABLE,
                "AUTH_UNAVAILABLE",
                f"the authentication service answered {response.status_code}; retry later",
            )
        return _identity_from(response, digest)

    async def aclose(self) -> None:
        await self._http.aclose()


def _answer(answer: Identity | RequestRejected) -> Identity:
    if isinstance(answer, RequestRejected):
        raise answer
    return answer


def _identity_from(response: httpx.Response, digest: str) -> Identity:
    body: Any = {}
    try:
        body = response.json() if response.content else {}
    except ValueError:
        pass
    if not isinstance(body, dict):
        body = {}
    subject = body.get("subject")
    max_runs = body.get("max_runs")
    return Identity(
        subject if isinstance(subject, str) and subject else f"token-{digest[:8]}",
        max_runs if isinstance(max_runs, int) and max_runs > 0 else 0,
        body.get("admin") is True,
    )


class Authenticator:
    """Checks each call's bearer token and counts each caller's open runs."""

    def __init__(
        self,
        token_file: TokenFile | None = None,
        verifier: UrlVerifier | None = None,
        max_runs_per_token: int = 0,
    ) -> None:
        self.token_file = token_file
        self.verifier = verifier
        self.max_runs_per_token = max_runs_per_token
        self._runs: dict[str, int] = {}

    async def authenticate(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> Identity:
        token = _bearer(metadata)
        if self.token_file is not None:
            identity = self.token_file.lookup(token)
            if identity is not None:
                return identity
        if self.verifier is not None:
            return await self.verifier.verify(token)
        raise _denied(grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED", "unknown token")

    def acquire_run(self, identity: Identity) -> None:
        """Count a run against its caller; RESOURCE_EXHAUSTED past the limit."""
        limit = identity.max_runs or self.max_runs_per_token
        held = self._runs.get(identity.subject, 0)
        if limit and held >= limit:
            raise RequestRejected(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "TOKEN_RUN_LIMIT",
                "",
                f"{identity.subject!r} already has {held} open runs (limit {limit}); "
                "retry when one ends",
            )
        self._runs[identity.subject] = held + 1

    def release_run(self, identity: Identity) -> None:
        held = self._runs.get(identity.subject, 0) - 1
        if held > 0:
            self._runs[identity.subject] = held
        else:
            self._runs.pop(identity.subject, None)

    async def aclose(self) -> None:
        if self.verifier is not None:
            await self.verifier.aclose()


def _bearer(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    for key, value in metadata or ():
        if key.lower() != "authorization" or not isinstance(value, str):
            continue
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
        break
    raise _denied(
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
        "this server requires a bearer token: send 'authorization: Bearer <token>'",
    )
