"""The test's view of the mock (``callgate_server``): SDK clients, problems, status.

Only the standard library is imported here; each SDK and the mock when first needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ._http import SharedHttp

if TYPE_CHECKING:
    from ..mock import Journal, Mismatch, MockServer, Script

__all__ = ["CallgateServer", "script_problems"]

_API_KEY = "callgate-test-key"


class CallgateServer:
    """One test's view of the running mock, with official SDK clients pointed at it.

    On the shared server (the default) the test is the registered session ``test_id``;
    on a server of its own (``registered=False``) it is the server's ``"default"``.

    Every ``*_client`` helper imports its SDK lazily, passes a dummy API key, turns the
    SDK's own retries off (``max_retries=0``; Gemini ``retry_options.attempts=1``) unless
    given, and sends the ``x-callgate-test-id`` header (the test's own id on the shared
    server, else only when ``test_id`` is given) and ``x-callgate-conversation`` when
    ``conversation`` is given. Other keyword arguments go to the SDK's constructor. Raises
    ``ImportError`` when the SDK is not installed. Synchronous clients are closed when the
    test ends (:meth:`close_clients`); close async clients yourself (``async with``),
    inside the event loop that used them.

    Unless ``http_client`` (or Gemini's ``http_options`` client settings) is given, the
    clients share the pytest session's connection pool and SSL context (``http``; see
    ``_http``): a helper call costs well under a millisecond instead of ~20 ms, and
    closing a client never closes what the others share.
    """

    def __init__(
        self,
        mock: MockServer,
        script: Script | None = None,
        *,
        test_id: str = "default",
        registered: bool = False,
        retired: Set[str] = frozenset(),
        http: SharedHttp | None = None,
    ) -> None:
        self.mock = mock
        self._own_http = http is None
        self._http = SharedHttp() if http is None else http
        self._retired = retired
        self.test_id = test_id
        self._script = script if script is not None else mock.script
        self._registered = registered
        # The test ids this test serves from its script (registered ones on a shared server).
        self.test_ids: list[str] = [test_id]
        self._sync_clients: list[Any] = []

    # -- what MockServer offers -----------------------------------------------------------

    @property
    def script(self) -> Script:
        return self._script

    def session(self, test_id: str) -> str:
        """Make ``test_id`` a session of this test over its script (registered on the
        shared server until the test ends) and return it."""
        if test_id not in self.test_ids:
            if self._registered:
                self.mock.register(test_id, self._script)
            self.test_ids.append(test_id)
        return test_id

    def status(self) -> dict[str, Any]:
        """``GET /_callgate/status`` narrowed to this test's sessions."""
        sessions = [self.mock.status(t)["sessions"][0] for t in self.test_ids]
        return {"done": all(s["done"] for s in sessions), "sessions": sessions}

    @property
    def url(self) -> str:
        return self.mock.url

    @property
    def openai_base_url(self) -> str:
        return self.mock.openai_base_url

    @property
    def azure_openai_base_url(self) -> str:
        return self.mock.azure_openai_base_url

    @property
    def anthropic_base_url(self) -> str:
        return self.mock.anthropic_base_url

    @property
    def gemini_base_url(self) -> str:
        return self.mock.gemini_base_url

    @property
    def journal(self) -> Journal:
        return self.mock.journal

    @property
    def mismatches(self) -> list[Mismatch]:
        """The mismatches of this test's sessions (and of test ids nobody registered)."""
        if not self._registered:
            return self.mock.mismatches
        own, held = set(self.test_ids), self.mock.state.registered
        return [
            m
            for m in self.mock.mismatches
            if m.test_id in own or (m.test_id not in self._retired and m.test_id not in held)
        ]

    def remaining(self, test_id: str | None = None) -> dict[str, int]:
        """Turns not yet served, per conversation, in one session (the test's own)."""
        return self.mock.state.remaining(self.test_id if test_id is None else test_id)

    def problems(self) -> list[str]:
        """What the end-of-test check would report; empty when the script is done."""
        if not self._registered:
            return script_problems(self.mock)
        mismatched = self.mismatches
        problems = script_problems(self.mock, self.test_ids, mismatched)
        for stray in sorted({m.test_id for m in mismatched} - set(self.test_ids)):
            problems.append(
                f"requests with test id {stray!r} reached no session of this test: send the "
                f"headers of callgate_server.headers(test_id={stray!r})"
            )
        return problems

    def verdicts(self) -> list[dict[str, Any]]:
        """The verdicts on what this test's clients did (docs/verdicts.md), oldest first:
        of its sessions on the shared server, of every session on a server of its own."""
        if not self._registered:
            return self.mock.verdicts()
        return [v for t in self.test_ids for v in self.mock.verdicts(t)]

    def assert_script_done(self) -> None:
        """Raise ``AssertionError`` naming every problem unless the script is done."""
        problems = self.problems()
        if problems:
            raise AssertionError("callgate mock script not done:\n  " + "\n  ".join(problems))

    # -- official SDK clients -------------------------------------------------------------

    def headers(
        self, test_id: str | None = None, conversation: str | None = None
    ) -> dict[str, str]:
        """The routing headers for a session of this test and a conversation: the test id
        (on the shared server always, else when given) and the conversation when given.
        A ``test_id`` given becomes a session of this test (:meth:`session`)."""
        from ..mock import CONVERSATION_HEADER, TEST_ID_HEADER

        if test_id is not None:
            self.session(test_id)
        elif self._registered:
            test_id = self.test_id
        found = {TEST_ID_HEADER: test_id, CONVERSATION_HEADER: conversation}
        return {name: value for name, value in found.items() if value is not None}

    def _share(self, sdk: Any, kwargs: dict[str, Any], *, sync: bool) -> None:
        """Give the SDK client the session's HTTP client unless one was given."""
        if "http_client" not in kwargs:
            http = self._http
            kwargs["http_client"] = http.sync_client(sdk) if sync else http.async_client(sdk)

    def _openai_kwargs(
        self,
        test_id: str | None,
        conversation: str | None,
        azure: bool,
        kwargs: dict[str, Any],
        *,
        sync: bool,
    ) -> dict[str, Any]:
        base = self.azure_openai_base_url if azure else self.openai_base_url
        self._share(openai_sdk(), kwargs, sync=sync)
        return _sdk_kwargs(
            {"base_url": base, "api_key": _API_KEY, "max_retries": 0},
            self.headers(test_id, conversation),
            kwargs,
        )

    def openai_client(
        self,
        *,
        test_id: str | None = None,
        conversation: str | None = None,
        azure: bool = False,
        **kwargs: Any,
    ) -> Any:
        """An ``openai.OpenAI`` on the mock (``azure=True``: the Azure v1 route)."""
        import openai

        client = openai.OpenAI(
            **self._openai_kwargs(test_id, conversation, azure, kwargs, sync=True)
        )
        self._sync_clients.append(client)
        return client

    def async_openai_client(
        self,
        *,
        test_id: str | None = None,
        conversation: str | None = None,
        azure: bool = False,
        **kwargs: Any,
    ) -> Any:
        """An ``openai.AsyncOpenAI`` on the mock."""
        import openai

        return openai.AsyncOpenAI(
            **self._openai_kwargs(test_id, conversation, azure, kwargs, sync=False)
        )

    def anthropic_client(
        self, *, test_id: str | None = None, conversation: str | None = None, **kwargs: Any
    ) -> Any:
        """An ``anthropic.Anthropic`` on the mock."""
        import anthropic

        self._share(anthropic, kwargs, sync=True)
        defaults = {"base_url": self.anthropic_base_url, "api_key": _API_KEY, "max_retries": 0}
        client = anthropic.Anthropic(
            **_sdk_kwargs(defaults, self.headers(test_id, conversation), kwargs)
        )
        self._sync_clients.append(client)
        return client

    def async_anthropic_client(
        self, *, test_id: str | None = None, conversation: str | None = None, **kwargs: Any
    ) -> Any:
        """An ``anthropic.AsyncAnthropic`` on the mock."""
        import anthropic

        self._share(anthropic, kwargs, sync=False)
        defaults = {"base_url": self.anthropic_base_url, "api_key": _API_KEY, "max_retries": 0}
        return anthropic.AsyncAnthropic(
            **_sdk_kwargs(defaults, self.headers(test_id, conversation), kwargs)
        )

    def gemini_client(
        self, *, test_id: str | None = None, conversation: str | None = None, **kwargs: Any
    ) -> Any:
        """A ``google.genai.Client`` on the mock's stable ``v1`` route (``.aio`` for async).

        ``http_options`` given as a dict is merged over the defaults (headers are merged).
        """
        from google import genai

        given = kwargs.pop("http_options", None) or {}
        if not isinstance(given, Mapping):
            raise TypeError("gemini_client: pass http_options as a dict")
        options: Any = {  # an HttpOptionsDict; Any keeps mypy off the SDK's TypedDict
            "base_url": self.gemini_base_url,
            "api_version": "v1",
            "retry_options": {"attempts": 1},
            **given,
        }
        if not {"client_args", "async_client_args", "httpx_client", "httpx_async_client"} & set(
            given
        ):  # the SDK builds its two HTTP clients over the session's SSL context
            context = self._http.ssl_context()
            options["client_args"] = {"verify": context, "trust_env": False}
            # "ssl": what its WebSocket (Live API) context is built from, else a new one.
            options["async_client_args"] = {"verify": context, "trust_env": False, "ssl": context}
        options["headers"] = {**self.headers(test_id, conversation), **given.get("headers", {})}
        kwargs.setdefault("api_key", _API_KEY)
        client = genai.Client(http_options=options, **kwargs)
        self._sync_clients.append(client)
        return client

    def close_clients(self) -> None:
        """Close every synchronous client the helpers made (safe to call twice)."""
        clients, self._sync_clients = self._sync_clients, []
        for client in clients:
            client.close()
        if self._own_http:
            self._http.close()


def openai_sdk() -> ModuleType:
    import openai

    return openai


def _sdk_kwargs(
    defaults: dict[str, Any], headers: dict[str, str], given: dict[str, Any]
) -> dict[str, Any]:
    merged = {**defaults, **given}
    merged["default_headers"] = {**headers, **(given.get("default_headers") or {})}
    return merged


def script_problems(
    mock: MockServer,
    test_ids: Sequence[str] | None = None,
    mismatched: Sequence[Mismatch] | None = None,
) -> list[str]:
    """Every mismatch (of ``mismatched``, else the server's), then every unserved turn of
    each session that sent a provider request (the first of ``test_ids``, else
    ``"default"``, when none did), among ``test_ids`` when given. Empty when the script
    was fully and cleanly served."""
    problems = []
    for m in mock.mismatches if mismatched is None else mismatched:
        where = f" at {m.location}" if m.location else ""
        problems.append(
            f"mismatch{where} (test id {m.test_id!r}, conversation {m.conversation!r}, "
            f"{m.protocol}): {'; '.join(m.problems)}"
        )
    # Sessions that sent a provider request (journal and control routes carry no protocol).
    sessions = {e.test_id for e in mock.journal.entries() if e.protocol is not None}
    if test_ids is not None:
        sessions &= set(test_ids)
    for test_id in sorted(sessions) or [test_ids[0] if test_ids else "default"]:
        for conversation, left in mock.state.remaining(test_id).items():
            if left:
                problems.append(
                    f"{left} turn(s) of conversation {conversation!r} never requested "
                    f"(test id {test_id!r})"
                )
    return problems
