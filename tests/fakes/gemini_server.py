"""A loopback Gemini API for embeddings: `models/{model}:batchEmbedContents` and `:embedContent`.

Real limits and shapes: at most 100 requests per batch, no empty content, a title only with
RETRIEVAL_DOCUMENT, output_dimensionality 768/1536/3072; reduced-size vectors come back
un-normalized, as the real API's do. usageMetadata.promptTokenCount reports what it counted.

    .venv/bin/python -m tests.fakes.gemini_server --port 8090
    GEMINI_BASE_URL=http://127.0.0.1:8090 GEMINI_API_KEY=test-key index run --provider gemini ...
"""

from __future__ import annotations

import re

from tests.fakes.service import Call, FakeService, count_tokens, word_vector

MODELS = {"gemini-embedding-001": 3072}
DIMENSIONS = (768, 1536, 3072)
MAX_BATCH = 100
PATH = re.compile(r"^/(v1|v1beta)/models/([\w.-]+):(batchEmbedContents|embedContent)$")
STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


class FakeGemini(FakeService):
    vector = staticmethod(word_vector)  # text, dimensions → vector; swap for other behaviour (another model under the same name)

    def error_body(self, status: int, message: str) -> dict:
        return {"error": {"code": status, "message": message, "status": STATUS_NAMES.get(status, "UNKNOWN")}}

    def handle(self, path, body, headers, call: Call, wrong_dimensions):
        def bad(message: str, status: int = 400):
            return status, self.error_body(status, message), {}

        match = PATH.match(path.split("?")[0])
        if not match:
            return bad(f"Invalid path {path}", 404)
        _, model, method = match.groups()
        if headers.get("x-goog-api-key") != self.api_key:
            return bad("API key not valid. Please pass a valid API key.")
        if model not in MODELS:
            return bad(f"models/{model} is not found for API version v1, or is not supported for embedContent.", 404)
        requests = body.get("requests") if method == "batchEmbedContents" else [body]
        if not isinstance(requests, list) or not requests:
            return bad("requests must be a non-empty list")
        if len(requests) > MAX_BATCH:
            return bad(f"* BatchEmbedContentsRequest.requests: at most {MAX_BATCH} requests can be in one batch")
        vectors, total = [], 0
        for i, request in enumerate(requests):
            parts = (request.get("content") or {}).get("parts") or []
            text = "".join(p.get("text", "") for p in parts)
            if not text.strip():
                return bad(f"* BatchEmbedContentsRequest.requests[{i}].content.parts: contents must not be empty")
            if method == "batchEmbedContents" and request.get("model") != f"models/{model}":
                return bad(f"requests[{i}].model must be models/{model}; got {request.get('model')}")
            task = request.get("taskType")
            if request.get("title") and task != "RETRIEVAL_DOCUMENT":
                return bad("Title is only applicable when task_type is RETRIEVAL_DOCUMENT")
            size = request.get("outputDimensionality", MODELS[model])
            if size not in DIMENSIONS:
                return bad(f"outputDimensionality must be one of {DIMENSIONS}; got {size}")
            vector = self.vector(text, wrong_dimensions or size)
            if size == MODELS[model]:
                vector = vector / (vector**2).sum() ** 0.5  # only full-size vectors come back normalized
            else:
                vector = vector * 0.37
            vectors.append([float(x) for x in vector])
            total += count_tokens(text)
        call.inputs, call.tokens = len(requests), total
        usage = {"promptTokenCount": total, "totalTokenCount": total}
        if method == "embedContent":
            return 200, {"embedding": {"values": vectors[0]}, "usageMetadata": usage}, {}
        return 200, {"embeddings": [{"values": v} for v in vectors], "usageMetadata": usage}, {}

    def task_types(self) -> list[tuple[str | None, str | None]]:
        """(taskType, title) of every successfully embedded content, in order: what the API saw."""
        seen = []
        for call in self.ok_calls:
            for request in call.body.get("requests", [call.body]):
                seen.append((request.get("taskType"), request.get("title")))
        return seen


if __name__ == "__main__":
    FakeGemini.main("fake Gemini API", default_port=8090, base_path="")
