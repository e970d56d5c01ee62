"""OpenAI embeddings through the official `openai` client (`OPENAI_API_KEY`, `OPENAI_BASE_URL`)."""

from __future__ import annotations

import base64
import binascii
import json

import numpy as np

from indexer.config import SpaceConfig, env_url
from indexer.embedders.remote import Budget, ProviderError, RemoteEmbedder, Reply, env_key
from indexer.retrying import retry_after_seconds
from indexer.errors import MissingDependency


KEY_VARIABLES = ("OPENAI_API_KEY",)
BASE_URL_VARIABLE = "OPENAI_BASE_URL"


def openai_embedder(space: SpaceConfig, budget: Budget | None = None) -> RemoteEmbedder:
    key = env_key("openai", *KEY_VARIABLES)
    try:
        import openai
    except ImportError:
        raise MissingDependency("the openai embedding space needs the openai package: pip install openai") from None
    # Retries are ours (one policy for every provider, with accounting); the client's are off.
    client = openai.OpenAI(api_key=key, base_url=env_url(BASE_URL_VARIABLE), max_retries=0, timeout=space.timeout_seconds)

    def send(texts: list[str], task: str | None, title: str | None) -> Reply:
        try:
            raw = client.embeddings.with_raw_response.create(model=space.model, input=texts, dimensions=space.dimensions, encoding_format="base64")
            body = json.loads(raw.http_response.content)
        except openai.APIStatusError as exc:
            raise ProviderError(_message(exc), exc.status_code, retry_after_seconds(exc.response.headers)) from None
        except openai.APIConnectionError as exc:  # includes timeouts
            raise ProviderError(f"{type(exc).__name__}: {exc}") from None
        except ValueError as exc:  # a body that is not JSON
            raise ProviderError(f"the embeddings response is not JSON ({exc})") from None
        return _reply(body, space.dimensions)

    return RemoteEmbedder(space, send, budget)


def _reply(body: dict, dimensions: int) -> Reply:
    """Vectors as base64 little-endian float32, decoded straight into an array: 0.158 s per 1,000
    inputs against 0.927 s with parsed floats (5,000 inputs, bench-peers' fake server, 256 dims). A compatible
    server that ignores `encoding_format` and sends floats is read too."""
    try:
        ordered = sorted(body["data"], key=lambda d: d["index"])
        rows = [np.frombuffer(base64.b64decode(item["embedding"]), dtype="<f4") if isinstance(item["embedding"], str)
                else np.asarray(item["embedding"], dtype=np.float32) for item in ordered]
        usage = body.get("usage") or {}
        if any(row.shape != (dimensions,) for row in rows):
            return Reply([row.tolist() for row in rows], usage.get("prompt_tokens"))  # the caller names the dimensions it got
        return Reply(np.stack(rows) if rows else np.empty((0, dimensions), np.float32), usage.get("prompt_tokens"))
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise ProviderError(f"the embeddings response is not in OpenAI's shape ({type(exc).__name__}: {exc})", status=200) from None


def _message(exc) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    return str(body.get("message") or body.get("error", {}).get("message") or exc.message)
