"""The base URL each client family expects, per protocol, for a mock at ``root``.

Client libraries disagree on where the base URL ends: the official SDKs append the API
version themselves for Anthropic (``/v1/messages``) and Gemini (``api_version``), while
others (the Vercel AI SDK's ``createAnthropic`` / ``createGoogleGenerativeAI``) take a base
that already holds the version segment. ``callgate serve`` prints this table, and the mock's
routes (``/openai/v1/responses``, ``/azure-openai/openai/v1/responses``,
``/anthropic/v1/messages``, ``/gemini/{v1,v1beta}/interactions`` and
``/gemini/{v1,v1beta}/models/{model}:{generateContent,streamGenerateContent}``) are what
each row reaches once its client appends its own path (``create``).
"""

from __future__ import annotations

import dataclasses

__all__ = ["BaseUrl", "base_urls"]


@dataclasses.dataclass(frozen=True, slots=True)
class BaseUrl:
    """One row: the API, who takes this URL as its base, the URL, and the path such a
    client appends to it for a create request (``{model}`` where the model goes)."""

    api: str
    clients: str
    url: str
    create: str


def base_urls(root: str) -> tuple[BaseUrl, ...]:
    """Every row for a mock served at ``root`` (``http://host:port``, no trailing slash)."""
    return (
        BaseUrl(
            "OpenAI Responses",
            "openai SDKs OpenAI(base_url=...), OpenAI-compatible clients",
            f"{root}/openai/v1",
            "/responses",
        ),
        BaseUrl(
            "Azure OpenAI v1",
            "openai SDKs OpenAI(base_url=...), as Azure's v1 API is used",
            f"{root}/azure-openai/openai/v1",
            "/responses",
        ),
        BaseUrl(
            "Anthropic Messages",
            "anthropic SDKs Anthropic(base_url=...)",
            f"{root}/anthropic",
            "/v1/messages",
        ),
        BaseUrl(
            "Anthropic Messages",
            "clients wanting the version segment (Vercel AI SDK createAnthropic baseURL)",
            f"{root}/anthropic/v1",
            "/messages",
        ),
        BaseUrl(
            "Gemini Interactions",
            "google-genai http_options base_url, api_version 'v1' or 'v1beta'",
            f"{root}/gemini",
            "/v1beta/interactions",
        ),
        BaseUrl(
            "Gemini Interactions",
            "clients wanting the version segment (also .../gemini/v1)",
            f"{root}/gemini/v1beta",
            "/interactions",
        ),
        BaseUrl(
            "Gemini generateContent",
            "google-genai http_options base_url, api_version 'v1' or 'v1beta'",
            f"{root}/gemini",
            "/v1beta/models/{model}:generateContent",
        ),
        BaseUrl(
            "Gemini generateContent",
            "clients wanting the version segment (Vercel AI SDK createGoogleGenerativeAI "
            "baseURL; also .../gemini/v1)",
            f"{root}/gemini/v1beta",
            "/models/{model}:generateContent",
        ),
    )
