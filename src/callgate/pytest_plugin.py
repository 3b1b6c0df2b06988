"""pytest plugin: a scripted mock provider on a real socket for each test.

Enabled by the ``pytest11`` entry point (or ``pytest -p callgate.pytest_plugin``). It adds:

- the ``callgate_server`` fixture: a running :class:`CallgateServer` (a
  :class:`~callgate.mock.MockServer` on ``127.0.0.1``, a free port) started before the
  test and stopped after it, with helpers returning official SDK clients pointed at it;
- the ``callgate_script`` fixture: the script that server serves. By default it loads the
  file named by ``@pytest.mark.callgate_script("scripts/weather.json")``, resolved
  relative to the test file; override the fixture to return a :class:`~callgate.mock.Script`,
  a :class:`~callgate.mock.ScriptBuilder`, a script dict or a path (relative to the test
  file) instead;
- an end-of-test check: when the test body passed, every session that sent a request (or
  ``"default"`` when none did) must have consumed every turn, and no request may have
  mismatched the script; otherwise the test fails with each problem named. Turn it off
  for one test with ``@pytest.mark.callgate_unchecked`` or for a suite with the ini
  option ``callgate_check = false``. When the test fails, the same problems and the
  journal are added to its report as a "callgate" section.

Only ``pytest`` and the standard library are imported here; the mock server (the
``server`` extra) and each SDK are imported when a fixture or helper first needs them,
so installing callgate without its extras never breaks a pytest run.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .mock import Journal, Mismatch, MockServer, Script

__all__ = ["CallgateServer", "script_problems"]

_SCRIPT_MARKER = "callgate_script"
_UNCHECKED_MARKER = "callgate_unchecked"
_CHECK_INI = "callgate_check"
_SERVER_KEY = pytest.StashKey["CallgateServer"]()
_API_KEY = "callgate-test-key"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        _CHECK_INI,
        "fail a test whose callgate_server script was not fully consumed or saw a mismatch",
        type="bool",
        default=True,
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{_SCRIPT_MARKER}(path): the callgate mock script (JSON) for this test's "
        "callgate_server, relative to the test file",
    )
    config.addinivalue_line(
        "markers",
        f"{_UNCHECKED_MARKER}: do not fail the test when its callgate_server script was not "
        "fully consumed or saw a mismatch",
    )


class CallgateServer:
    """The running mock of one test, with official SDK clients pointed at it.

    Every ``*_client`` helper imports its SDK lazily, passes a dummy API key, turns the
    SDK's own retries off (``max_retries=0``; Gemini ``retry_options.attempts=1``) unless
    given, and sends the ``x-callgate-test-id`` / ``x-callgate-conversation`` headers when
    ``test_id`` / ``conversation`` are given. Other keyword arguments go to the SDK's
    constructor. Raises ``ImportError`` when the SDK is not installed. Synchronous clients
    are closed when the test ends (:meth:`close_clients`); close async clients yourself
    (``async with``), inside the event loop that used them.
    """

    def __init__(self, mock: MockServer) -> None:
        self.mock = mock
        self._sync_clients: list[Any] = []

    # -- what MockServer offers -----------------------------------------------------------

    @property
    def script(self) -> Script:
        return self.mock.script

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
        return self.mock.mismatches

    def remaining(self, test_id: str = "default") -> dict[str, int]:
        """Turns not yet served, per conversation, in one session."""
        return self.mock.state.remaining(test_id)

    def problems(self) -> list[str]:
        """What the end-of-test check would report; empty when the script is done."""
        return script_problems(self.mock)

    def assert_script_done(self) -> None:
        """Raise ``AssertionError`` naming every problem unless the script is done."""
        problems = self.problems()
        if problems:
            raise AssertionError("callgate mock script not done:\n  " + "\n  ".join(problems))

    # -- official SDK clients -------------------------------------------------------------

    def headers(
        self, test_id: str | None = None, conversation: str | None = None
    ) -> dict[str, str]:
        """The routing headers for a session and a conversation (only those given)."""
        from .mock import CONVERSATION_HEADER, TEST_ID_HEADER

        found = {TEST_ID_HEADER: test_id, CONVERSATION_HEADER: conversation}
        return {name: value for name, value in found.items() if value is not None}

    def _openai_kwargs(
        self, test_id: str | None, conversation: str | None, azure: bool, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        base = self.azure_openai_base_url if azure else self.openai_base_url
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

        client = openai.OpenAI(**self._openai_kwargs(test_id, conversation, azure, kwargs))
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

        return openai.AsyncOpenAI(**self._openai_kwargs(test_id, conversation, azure, kwargs))

    def anthropic_client(
        self, *, test_id: str | None = None, conversation: str | None = None, **kwargs: Any
    ) -> Any:
        """An ``anthropic.Anthropic`` on the mock."""
        import anthropic

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


def _sdk_kwargs(
    defaults: dict[str, Any], headers: dict[str, str], given: dict[str, Any]
) -> dict[str, Any]:
    merged = {**defaults, **given}
    merged["default_headers"] = {**headers, **(given.get("default_headers") or {})}
    return merged


def script_problems(mock: MockServer) -> list[str]:
    """Every mismatch, then every unserved turn of each session that sent a provider
    request (``"default"`` when none did). Empty when the script was fully and cleanly
    served."""
    problems = []
    for m in mock.mismatches:
        where = f" at {m.location}" if m.location else ""
        problems.append(
            f"mismatch{where} (test id {m.test_id!r}, conversation {m.conversation!r}, "
            f"{m.protocol}): {'; '.join(m.problems)}"
        )
    # Sessions that sent a provider request (journal and control routes carry no protocol).
    sessions = {e.test_id for e in mock.journal.entries() if e.protocol is not None}
    for test_id in sorted(sessions) or ["default"]:
        for conversation, left in mock.state.remaining(test_id).items():
            if left:
                problems.append(
                    f"{left} turn(s) of conversation {conversation!r} never requested "
                    f"(test id {test_id!r})"
                )
    return problems


def _coerce_script(value: Any, base: Path) -> Script:
    from .mock import Script, ScriptBuilder, load_script

    if isinstance(value, Script):
        return value
    if isinstance(value, ScriptBuilder):
        return value.build()
    if isinstance(value, Mapping):
        return Script.from_dict(dict(value))
    if isinstance(value, str | os.PathLike):
        return load_script(base / os.fspath(value))
    raise TypeError(
        "callgate_script must give a Script, a ScriptBuilder, a script dict or a path, "
        f"not {type(value).__name__}"
    )


@pytest.fixture
def callgate_script(request: pytest.FixtureRequest) -> Script:
    """The script of this test's ``callgate_server``: the ``callgate_script`` marker's file.

    Override this fixture to supply a script another way. Fails the test setup when the
    test has no marker, and raises :class:`~callgate.mock.ScriptError` (naming the file and
    the location inside it) when the file is missing or invalid.
    """
    marker = request.node.get_closest_marker(_SCRIPT_MARKER)
    if marker is None:
        pytest.fail(
            "callgate_server needs a script: mark the test with "
            '@pytest.mark.callgate_script("path/to/script.json") or override the '
            "callgate_script fixture",
            pytrace=False,
        )
    if len(marker.args) != 1 or marker.kwargs:
        pytest.fail(
            "@pytest.mark.callgate_script takes exactly one argument: the script path",
            pytrace=False,
        )
    return _coerce_script(marker.args[0], request.path.parent)


@pytest.fixture
def callgate_server(
    request: pytest.FixtureRequest, callgate_script: Any
) -> Generator[CallgateServer, None, None]:
    """A running mock serving ``callgate_script`` on a free loopback port, for one test."""
    from .mock import MockServer

    script = _coerce_script(callgate_script, request.path.parent)
    with MockServer(script) as mock:
        server = CallgateServer(mock)
        request.node.stash[_SERVER_KEY] = server
        try:
            yield server
        finally:
            del request.node.stash[_SERVER_KEY]
            server.close_clients()


def _checked(item: pytest.Item) -> bool:
    if item.get_closest_marker(_UNCHECKED_MARKER) is not None:
        return False
    return bool(item.config.getini(_CHECK_INI))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """After the test body: fail it if its script was not done; on failure, report why."""
    try:
        result = yield
    except BaseException:
        server = item.stash.get(_SERVER_KEY, None)
        if server is not None:
            _add_section(item, server)
        raise
    server = item.stash.get(_SERVER_KEY, None)
    if server is not None and _checked(item):
        problems = server.problems()
        if problems:
            _add_section(item, server)
            pytest.fail(
                "callgate mock script not done (mark the test callgate_unchecked to allow "
                "this):\n  " + "\n  ".join(problems),
                pytrace=False,
            )
    return result


def _add_section(item: pytest.Item, server: CallgateServer) -> None:
    lines = [f"script: {server.script.path or '<built in Python>'}"]
    lines += [f"problem: {p}" for p in server.problems()]
    for e in server.journal.entries():
        where = f" {e.location}" if e.location else ""
        lines.append(
            f"#{e.seq} {e.method} {e.path} test_id={e.test_id} "
            f"conversation={e.conversation} -> {e.status} {e.outcome}{where}"
        )
    item.add_report_section("call", "callgate", "\n".join(lines))
