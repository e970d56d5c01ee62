"""A loopback OpenAI embeddings API: `POST /v1/embeddings`, with the real limits and error shapes.

Usable on its own as a zero-latency embedder for benchmarks:

    .venv/bin/python -m tests.fakes.openai_server --port 8089
    OPENAI_BASE_URL=http://127.0.0.1:8089/v1 OPENAI_API_KEY=test-key index run --provider openai ...
"""

from __future__ import annotations

import base64

import numpy as np

from tests.fakes.service import Call, FakeService, count_tokens, word_vector

MODELS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072}
MAX_INPUTS = 2048
MAX_INPUT_TOKENS = 8192
MAX_REQUEST_TOKENS = 300_000


class FakeOpenAI(FakeService):
    vector = staticmethod(word_vector)  # text, dimensions → vector; swap for other behaviour

    def error_body(self, status: int, message: str) -> dict:
        kind = {401: "invalid_request_error", 429: "rate_limit_exceeded"}.get(status, "invalid_request_error" if status < 500 else "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}

    def handle(self, path, body, headers, call: Call, wrong_dimensions):
        def bad(message: str, status: int = 400):
            return status, self.error_body(status, message), {}

        if path.rstrip("/") != "/v1/embeddings":
            return bad(f"Invalid URL (POST {path})", 404)
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return bad("Incorrect API key provided.", 401)
        model = body.get("model")
        if model not in MODELS:
            return bad(f"The model `{model}` does not exist or you do not have access to it.", 404)
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs or not all(isinstance(t, str) for t in inputs):
            return bad("'input' must be a string or a non-empty array of strings")
        if len(inputs) > MAX_INPUTS:
            return bad(f"'input' : maximum {MAX_INPUTS} inputs per request; got {len(inputs)}")
        if any(t == "" for t in inputs):
            return bad("'input' : input cannot be an empty string")
        tokens = [count_tokens(t) for t in inputs]
        if max(tokens) > MAX_INPUT_TOKENS:
            return bad(f"This model's maximum context length is {MAX_INPUT_TOKENS} tokens, however you requested {max(tokens)} tokens in an input")
        if sum(tokens) > MAX_REQUEST_TOKENS:
            return bad(f"Requested {sum(tokens)} tokens, max {MAX_REQUEST_TOKENS} tokens per request")
        dimensions = body.get("dimensions", MODELS[model])
        if not isinstance(dimensions, int) or not 1 <= dimensions <= MODELS[model]:
            return bad(f"This model does not support specifying dimensions={dimensions}.")
        size = wrong_dimensions or dimensions
        data = []
        for i, text in enumerate(inputs):
            vector = self.vector(text, size)
            vector = (vector / np.linalg.norm(vector)).astype(np.float32)  # OpenAI returns unit vectors
            encoded = base64.b64encode(vector.tobytes()).decode() if body.get("encoding_format") == "base64" else vector.tolist()
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        call.inputs, call.tokens = len(inputs), sum(tokens)
        usage = {"prompt_tokens": sum(tokens), "total_tokens": sum(tokens)}
        return 200, {"object": "list", "data": data, "model": model, "usage": usage}, {"x-ratelimit-remaining-requests": "9999"}


if __name__ == "__main__":
    FakeOpenAI.main("fake OpenAI embeddings", default_port=8089, base_path="/v1")
