"""Gemini embeddings through `google-genai` (`GEMINI_API_KEY` or `GOOGLE_API_KEY`, `GEMINI_BASE_URL`).

The client sends every call as `POST /v1/models/<model>:batchEmbedContents` with one task
type and one title for the whole batch, so document batches are grouped by title.
Reduced `output_dimensionality` vectors come back un-normalized; RemoteEmbedder normalizes.
"""

from __future__ import annotations


from indexer.config import SpaceConfig, env_url
from indexer.embedders.remote import Budget, ProviderError, RemoteEmbedder, Reply, env_key
from indexer.retrying import retry_after_seconds
from indexer.errors import MissingDependency

API_VERSION = "v1"


KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
BASE_URL_VARIABLE = "GEMINI_BASE_URL"


def gemini_embedder(space: SpaceConfig, budget: Budget | None = None) -> RemoteEmbedder:
    key = env_key("gemini", *KEY_VARIABLES)
    try:
        from google import genai
        from google.genai import errors, types
    except ImportError:
        raise MissingDependency("the gemini embedding space needs google-genai: pip install google-genai") from None
    options = types.HttpOptions(
        base_url=env_url(BASE_URL_VARIABLE),
        api_version=API_VERSION,
        timeout=int(space.timeout_seconds * 1000),  # milliseconds
    )
    client = genai.Client(api_key=key, http_options=options)

    def send(texts: list[str], task: str | None, title: str | None) -> Reply:
        config = types.EmbedContentConfig(task_type=task, title=title, output_dimensionality=space.dimensions)
        try:
            response = client.models.embed_content(model=space.model, contents=texts, config=config)
        except errors.APIError as exc:
            headers = getattr(exc.response, "headers", None)
            raise ProviderError(exc.message or str(exc), exc.code, retry_after_seconds(headers)) from None
        except Exception as exc:
            if _is_transport_error(exc):
                raise ProviderError(f"{type(exc).__name__}: {exc}") from None
            raise
        usage = response.usage_metadata
        return Reply([e.values for e in response.embeddings or []], usage.prompt_token_count if usage else None)

    return RemoteEmbedder(space, send, budget)


def _is_transport_error(exc: Exception) -> bool:
    """httpx or httpx2 timeouts and connection errors (google-genai may use either)."""
    return any(cls.__name__ in ("TransportError", "TimeoutException") for cls in type(exc).__mro__)
