"""A real OpenAI-compatible HTTP server on loopback that answers from a script.

Each POST /v1/chat/completions takes the next answer: an HTTP status (an
error answer with that status), CONTEXT (400: the prompt exceeds the model's
context), BROKEN (a stream that sends some text and breaks off),
SLOW (no answer before the client's timeout), or OK (a streamed tool call
chosen by `choose` from the offered tools). The last answer repeats once the
script runs out. GET /v1/models lists one model.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OK = "ok"
BROKEN = "broken"
SLOW = "slow"
CONTEXT = "context"
MODEL = "stub-model"

Answer = int | str
# (offered tool names) -> (tool to call, its arguments)
Choose = Callable[[list[str]], tuple[str, dict[str, Any]]]


def first_tool(names: list[str]) -> tuple[str, dict[str, Any]]:
    return names[0], {}


class StubOpenAI:
    def __init__(self, answers: list[Answer], choose: Choose = first_tool) -> None:
        self.answers = list(answers)
        self.choose = choose
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def next_answer(self, body: dict[str, Any]) -> Answer:
        with self._lock:
            self.requests.append(body)
            return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                answer = stub.next_answer(body)
                if answer == CONTEXT:
                    message = "This model's maximum context length is 4096 tokens"
                    self._json(400, {"error": {"message": message, "code": 400}})
                    return
                if isinstance(answer, int):
                    message = "Rate limit reached" if answer == 429 else f"stub error {answer}"
                    self._json(answer, {"error": {"message": message, "code": answer}})
                    return
                if answer == SLOW:
                    time.sleep(5)
                names = [t["function"]["name"] for t in body.get("tools", [])]
                tool, args = stub.choose(names)
                events = [
                    _delta({"role": "assistant", "content": ""}),
                    _delta({"tool_calls": [_fragment(tool, json.dumps(args))]}),
                ]
                if answer == BROKEN:
                    # Headers and a first event, then the connection drops.
                    self._stream_head()
                    self._event(_delta({"content": "partial"}))
                    self.close_connection = True
                    return
                self._stream_head()
                for event in events:
                    self._event(event)
                self._event(_delta({}, finish="tool_calls"))
                self._event("[DONE]")
                self.close_connection = True

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream_head(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()

            def _event(self, event: dict[str, Any] | str) -> None:
                data = event if isinstance(event, str) else json.dumps(event)
                self.wfile.write(f"data: {data}\n\n".encode())
                self.wfile.flush()

        return Handler

    def __enter__(self) -> StubOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _delta(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _fragment(name: str, arguments: str) -> dict[str, Any]:
    return {
        "index": 0,
        "id": "call_stub",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


@contextmanager
def stub_openai(answers: list[Answer], choose: Choose = first_tool) -> Iterator[StubOpenAI]:
    with StubOpenAI(answers, choose) as stub:
        yield stub
