"""pytest plugin: a scripted mock provider on a real socket for each test.

Enabled by the ``pytest11`` entry point (or ``pytest -p callgate.pytest_plugin``). It adds:

- the ``callgate_server`` fixture: a :class:`CallgateServer`, the test's view of a running
  :class:`~callgate.mock.MockServer` on ``127.0.0.1`` (a free port), with helpers returning
  official SDK clients pointed at it. One server runs per pytest session (per xdist
  worker): each test is a session *registered* on it under a test id of its own (the
  test's node id, or ``pytest-<n>``) with its own script, so it has its own cursors,
  journal, stored objects and faults, and requests without an ``x-callgate-test-id``
  header go to it while it runs; it is dropped when the test ends. ``test_id=`` given to
  a helper (or to :meth:`CallgateServer.headers`) registers one more session over the
  same script. ``@pytest.mark.callgate_own_server`` (or the ini option
  ``callgate_server_per_test = true``) gives a test a server of its own instead, started
  before it and stopped after it, whose unnamed session is ``"default"``;
- the ``callgate_script`` fixture: the script that server serves. By default it loads the
  file named by ``@pytest.mark.callgate_script("scripts/weather.json")``, resolved
  relative to the test file; override the fixture to return a :class:`~callgate.mock.Script`,
  a :class:`~callgate.mock.ScriptBuilder`, a script dict or a path (relative to the test
  file) instead;
- an end-of-test check: when the test body passed, every session of the test that sent a
  request (or the test's own when none did) must have consumed every turn, and no request
  may have mismatched the script; otherwise the test fails with each problem named. Turn it off
  for one test with ``@pytest.mark.callgate_unchecked`` or for a suite with the ini
  option ``callgate_check = false``. When the test fails, the same problems and the
  journal are added to its report as a "callgate" section;
- a verdict check (docs/verdicts.md): a test whose client committed an ``error`` verdict
  (executed a call the gate withheld, retried a request that cannot succeed...) fails with
  each verdict's rule and evidence; ``@pytest.mark.callgate_verdicts(level, allow=[ids])``
  and the ini option ``callgate_verdicts`` (``error``, ``warning``, ``off``) set which fail.

Only ``pytest`` and the standard library are imported here; the mock server (the
``server`` extra) and each SDK are imported when a fixture or helper first needs them,
so installing callgate without its extras never breaks a pytest run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import _verdicts
from ._http import SharedHttp
from ._view import CallgateServer, script_problems

if TYPE_CHECKING:
    from ..mock import MockServer, Script

__all__ = ["CallgateServer", "script_problems"]

_SCRIPT_MARKER = "callgate_script"
_UNCHECKED_MARKER = "callgate_unchecked"
_OWN_SERVER_MARKER = "callgate_own_server"
_CHECK_INI = "callgate_check"
_PER_TEST_INI = "callgate_server_per_test"
_SERVER_KEY = pytest.StashKey["CallgateServer"]()
_MAX_TEST_ID = 200


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        _CHECK_INI,
        "fail a test whose callgate_server script was not fully consumed or saw a mismatch",
        type="bool",
        default=True,
    )
    parser.addini(
        _verdicts.INI,
        "which callgate verdicts fail a test: error (the default), warning (errors and "
        "warnings) or off",
        default="error",
    )
    parser.addini(
        _PER_TEST_INI,
        "start a callgate mock server for each test instead of one per pytest session",
        type="bool",
        default=False,
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
    config.addinivalue_line(
        "markers",
        f"{_verdicts.MARKER}(level='error', allow=[ids]): which callgate verdicts fail this "
        "test (error, warning or off), and the verdict ids it accepts",
    )
    config.addinivalue_line(
        "markers",
        f"{_OWN_SERVER_MARKER}: give this test's callgate_server a server of its own, started "
        "before it and stopped after it (instead of a session on the shared one)",
    )


def _coerce_script(value: Any, base: Path) -> Script:
    from ..mock import Script, ScriptBuilder, load_script

    if isinstance(value, Script):
        return value
    if isinstance(value, ScriptBuilder):
        return value.build()
    if isinstance(value, Mapping):
        try:
            text = json.dumps(value, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):  # not JSON: let the loader say why
            return Script.from_dict(dict(value))
        return _parsed(("dict", text), lambda: Script.from_dict(dict(value)))
    if isinstance(value, str | os.PathLike):
        path = base / os.fspath(value)
        try:
            stat = path.stat()
        except OSError:
            return load_script(path)  # raises the ScriptError naming the file
        return _parsed(
            ("file", str(path), stat.st_mtime_ns, stat.st_size), lambda: load_script(path)
        )
    raise TypeError(
        "callgate_script must give a Script, a ScriptBuilder, a script dict or a path, "
        f"not {type(value).__name__}"
    )


# Scripts are immutable, so the tests of a suite that serve the same file or dict share one
# parse (each is still a session of its own): parsing and schema-checking it is most of
# the plugin's own per-test work otherwise.
_PARSED: dict[tuple[Any, ...], Script] = {}
_MAX_PARSED = 64


def _parsed(key: tuple[Any, ...], parse: Callable[[], Script]) -> Script:
    found = _PARSED.get(key)
    if found is None:
        found = parse()
        if len(_PARSED) >= _MAX_PARSED:
            _PARSED.clear()
        _PARSED[key] = found
    return found


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


class _Shared:
    """The pytest session's mock server and the test ids its tests have used."""

    def __init__(self, mock: MockServer) -> None:
        self.mock = mock
        self.retired: set[str] = set()
        self.count = 0

    def test_id(self, nodeid: str) -> str:
        """The node id when it can be a header value, else ``pytest-<n>``; never reused."""
        self.count += 1
        readable = nodeid.isascii() and nodeid.isprintable() and len(nodeid) <= _MAX_TEST_ID
        test_id = nodeid if readable else f"pytest-{self.count}"
        if test_id in self.retired or test_id in self.mock.state.registered:
            test_id = f"{test_id}#{self.count}"  # the same test run again (a rerun plugin)
        return test_id


@pytest.fixture(scope="session")
def _callgate_shared() -> Generator[_Shared, None, None]:
    """The one mock server of this pytest session (of this xdist worker), started when a
    test first needs it. Its own script has no conversation: only registered sessions
    serve turns."""
    from ..mock import MockServer, Script

    with MockServer(Script(conversations={})) as mock:
        yield _Shared(mock)


@pytest.fixture(scope="session")
def _callgate_http() -> Generator[SharedHttp, None, None]:
    """The connection pool and SSL context the SDK clients of this pytest session share
    (see ``_http``), closed when the session ends."""
    http = SharedHttp()
    yield http
    http.close()


def _per_test(request: pytest.FixtureRequest) -> bool:
    if request.node.get_closest_marker(_OWN_SERVER_MARKER) is not None:
        return True
    return bool(request.config.getini(_PER_TEST_INI))


@pytest.fixture
def callgate_server(
    request: pytest.FixtureRequest, callgate_script: Any
) -> Generator[CallgateServer, None, None]:
    """This test's session on the shared mock (registered with ``callgate_script``), or
    a mock of its own serving it when the test asks for one (``callgate_own_server``)."""
    from ..mock import MockServer

    script = _coerce_script(callgate_script, request.path.parent)
    http: SharedHttp = request.getfixturevalue("_callgate_http")
    if _per_test(request):
        with MockServer(script) as mock:
            yield from _serving(request, CallgateServer(mock, http=http))
        return
    shared: _Shared = request.getfixturevalue("_callgate_shared")
    mock = shared.mock
    mock.reset()  # what earlier tests left (late requests) is not this test's
    test_id = shared.test_id(request.node.nodeid)
    mock.register(test_id, script, default=True)
    server = CallgateServer(
        mock, script, test_id=test_id, registered=True, retired=shared.retired, http=http
    )
    try:
        yield from _serving(request, server)
    finally:
        for name in server.test_ids:
            mock.drop(name)
            shared.retired.add(name)


def _serving(
    request: pytest.FixtureRequest, server: CallgateServer
) -> Generator[CallgateServer, None, None]:
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
    if server is not None:
        failing = _verdicts.failing(item, server.verdicts())
        if failing:
            _add_section(item, server)
            pytest.fail(
                "callgate verdicts on what the client did (docs/verdicts.md; accept them with "
                "@pytest.mark.callgate_verdicts(allow=[...]) or the level 'off'):\n"
                + _verdicts.report(failing),
                pytrace=False,
            )
    return result


def _add_section(item: pytest.Item, server: CallgateServer) -> None:
    lines = [f"script: {server.script.path or '<built in Python>'}"]
    lines += [f"problem: {p}" for p in server.problems()]
    verdicts = server.verdicts()
    if verdicts:
        lines += ["verdicts:", _verdicts.report(verdicts)]
    for e in server.journal.entries():
        where = f" {e.location}" if e.location else ""
        lines.append(
            f"#{e.seq} {e.method} {e.path} test_id={e.test_id} "
            f"conversation={e.conversation} -> {e.status} {e.outcome}{where}"
        )
    item.add_report_section("call", "callgate", "\n".join(lines))
