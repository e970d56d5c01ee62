"""OpenAI embeddings through the official `openai` client (`OPENAI_API_KEY`, `OPENAI_BASE_URL`)."""

from __future__ import annotations

import os

from indexer.config import SpaceConfig
from indexer.embedders.remote import Budget, ProviderError, RemoteEmbedder, Reply, env_key
from indexer.retrying import retry_after_seconds
from indexer.errors import MissingDependency


def openai_embedder(space: SpaceConfig, budget: Budget | None = None) -> RemoteEmbedder:
    key = env_key("openai", "OPENAI_API_KEY")
    try:
        import openai
    except ImportError:
        raise MissingDependency("the openai embedding space needs the openai package: pip install openai") from None
    # Retries are ours (one policy for every provider, with accounting); the client's are off.
    client = openai.OpenAI(api_key=key, base_url=os.environ.get("OPENAI_BASE_URL") or None, max_retries=0, timeout=space.timeout_seconds)

    def send(texts: list[str], task: str | None, title: str | None) -> Reply:
        try:
            response = client.embeddings.create(model=space.model, input=texts, dimensions=space.dimensions, encoding_format="float")
        except openai.APIStatusError as exc:
            raise ProviderError(_message(exc), exc.status_code, retry_after_seconds(exc.response.headers)) from None
        except openai.APIConnectionError as exc:  # includes timeouts
            raise ProviderError(f"{type(exc).__name__}: {exc}") from None
        ordered = sorted(response.data, key=lambda d: d.index)
        return Reply([d.embedding for d in ordered], response.usage.prompt_tokens if response.usage else None)

    return RemoteEmbedder(space, send, budget)


def _message(exc) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    return str(body.get("message") or body.get("error", {}).get("message") or exc.message)
