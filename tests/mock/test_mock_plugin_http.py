"""The plugin's SDK clients share the pytest session's connection pool and SSL context.

A client made the SDK's default way loads the CA bundle into a new SSL context (about
20 ms) and opens a new connection; the helpers' clients do neither after the first, and
closing the client a test got closes that client only, never what the others share.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator

import anthropic
import openai
import pytest
from google import genai

from callgate.mock import MockServer, ScriptBuilder
from callgate.pytest_plugin import CallgateServer
from callgate.pytest_plugin._http import SharedHttp

from .test_mock_plugin import _write_weather, run

pytest_plugins = ["pytester"]


def _script() -> ScriptBuilder:
    builder = ScriptBuilder()
    for conversation in ("a", "b", "c", "d"):
        builder.turn("openai_responses", text=f"hi {conversation}", conversation=conversation)
    builder.turn("anthropic_messages", text="hi claude", conversation="claude")
    builder.turn("gemini_generate_content", text="hi gemini", conversation="gemini")
    return builder


@pytest.fixture
def served() -> Iterator[tuple[CallgateServer, SharedHttp]]:
    http = SharedHttp()
    with MockServer(_script().build()) as mock:
        server = CallgateServer(mock, http=http)
        yield server, http
        server.close_clients()
    http.close()


@pytest.fixture
def ca_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every CA bundle load into an SSL context from now on."""
    loads: list[str] = []
    for name in ("load_verify_locations", "load_default_certs", "set_default_verify_paths"):
        original = getattr(ssl.SSLContext, name)

        def counted(self: ssl.SSLContext, *args: object, _o: object = original, _n: str = name,
                    **kwargs: object) -> object:  # fmt: skip
            loads.append(_n)
            return _o(self, *args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(ssl.SSLContext, name, counted)
    return loads


def _ask(client: openai.OpenAI, conversation: str) -> str:
    answer = client.responses.create(
        model="m", input="hi", extra_headers={"x-callgate-conversation": conversation}
    )
    return answer.output_text


def test_sdk_clients_after_the_first_load_no_ca_bundle(
    served: tuple[CallgateServer, SharedHttp], ca_loads: list[str]
) -> None:
    server, http = served
    http.ssl_context()  # the session's one context
    assert ca_loads != []
    ca_loads.clear()
    assert _ask(server.openai_client(), "a") == "hi a"
    assert _ask(server.openai_client(azure=False), "b") == "hi b"
    claude = server.anthropic_client(default_headers={"x-callgate-conversation": "claude"})
    message = claude.messages.create(
        model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
    )
    assert message.content[0].text == "hi claude"  # type: ignore[union-attr]
    gemini = server.gemini_client(conversation="gemini")
    assert gemini.models.generate_content(model="m", contents="hi").text == "hi gemini"
    server.async_openai_client()  # built, never used
    server.async_anthropic_client()
    assert ca_loads == []  # the default way, each of these loads the bundle at least once


def test_closing_a_client_closes_it_and_not_the_shared_pool(
    served: tuple[CallgateServer, SharedHttp],
) -> None:
    server, _ = served
    first, second = server.openai_client(), server.openai_client()
    pool = first._client._transport._pool
    assert second._client._transport._pool is pool  # one pool under both
    assert _ask(first, "a") == "hi a"
    with first:
        pass  # a test closing the client it got
    assert first.is_closed()
    # What a closed client made the SDK's default way raises (it varies by SDK version):
    default = openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0)
    default.close()
    with pytest.raises((RuntimeError, openai.APIConnectionError)) as expected:
        _ask(default, "b")
    with pytest.raises(type(expected.value)):
        _ask(first, "b")
    assert _ask(second, "c") == "hi c"  # the pool is still open
    assert server.openai_client()._client._transport._pool is pool


def test_an_async_client_has_its_own_pool_over_the_shared_context(
    served: tuple[CallgateServer, SharedHttp],
) -> None:
    server, http = served

    async def ask() -> str:
        async with server.async_openai_client() as client:
            assert client._client._transport._pool._ssl_context is http.ssl_context()
            answer = await client.responses.create(
                model="m", input="hi", extra_headers={"x-callgate-conversation": "d"}
            )
            return answer.output_text

    assert asyncio.run(ask()) == "hi d"


def test_the_session_pool_closes_with_the_session(
    served: tuple[CallgateServer, SharedHttp],
) -> None:
    server, http = served
    client = server.openai_client()
    assert _ask(client, "a") == "hi a"
    pool = client._client._transport._pool
    assert len(pool._pool.connections) == 1  # kept alive for the next client
    http.close()
    assert pool._pool.connections == []
    with pytest.raises(RuntimeError, match="HTTP pool is closed"):
        server.openai_client()


def test_a_client_given_its_own_http_client_keeps_it(
    served: tuple[CallgateServer, SharedHttp],
) -> None:
    server, _ = served
    own = anthropic.DefaultHttpxClient()
    client = server.anthropic_client(http_client=own)
    assert client._client is own
    options = {"client_args": {"trust_env": True}}
    gemini = server.gemini_client(http_options=options)
    assert isinstance(gemini, genai.Client)


def test_a_suite_that_closes_its_clients_keeps_working(pytester: pytest.Pytester) -> None:
    _write_weather(
        pytester,
        """
import pytest


@pytest.mark.callgate_script("scripts/weather.json")
@pytest.mark.parametrize("n", range(3))
def test_loop(callgate_server, n):
    with callgate_server.openai_client() as client:
        assert ask(client, n == 1) == "It is sunny in Paris."
    assert client.is_closed()
""",
    )
    run(pytester).assert_outcomes(passed=3)
