"""Run the mock app under uvicorn on a real loopback socket, from sync or async code."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any

import uvicorn

from .._errors import UsageError
from . import _sessions
from ._app import MAX_BODY_BYTES, MockApp, create_app, host_is_loopback
from ._http1 import PROTOCOL, WS
from ._journal import MAX_ENTRIES, MAX_PER_TEST, Journal
from ._providers import server_bases
from ._script import Script
from ._state import MAX_SESSIONS, Mismatch, MockState

if TYPE_CHECKING:
    from ._replay import Match, ReplayApp

__all__ = ["MockServer", "serve_forever", "serve_recordings_forever"]


class MockServer:
    """A scripted provider on ``http://127.0.0.1:<port>``.

    Use as a context manager (``with`` or ``async with``); ``port=0`` picks a free port.
    Base URLs for the official SDKs: ``openai_base_url`` (``OpenAI(base_url=...)``),
    ``azure_openai_base_url``, ``anthropic_base_url`` (``Anthropic(base_url=...)``) and
    ``gemini_base_url`` (``http_options={"base_url": ..., "api_version": "v1"}``).
    Raises :class:`UsageError` when started twice or when the server cannot bind.

    Bounds (keywords): ``max_body_bytes`` per request body (HTTP 413 over it),
    ``journal_max_entries`` / ``journal_max_per_test`` (oldest entries dropped and counted),
    ``max_sessions`` (least recently used test id forgotten). Requests must name a loopback
    ``Host``, the bound address or one of ``allowed_hosts`` (else HTTP 403); binding a
    non-loopback address warns. :meth:`reset` forgets everything or one test id;
    :meth:`register` / :meth:`drop` give a test id a script of its own, :meth:`status`
    says per session what was served and what is left. ``app`` (a function of the
    server's state and the script's app) gives the app to serve instead: how
    :meth:`from_recordings` serves recordings, falling back to the script.
    """

    replay: ReplayApp | None = None  # set by from_recordings

    @classmethod
    def from_recordings(cls, directory: str | os.PathLike[str], **options: Any) -> MockServer:
        """Serve the ``recorded`` fixtures in ``directory`` back byte-exact (options:
        ``match="position"|"body"``, ``pacing``, and the bounds); see ``mock._replay``."""
        from ._replay import replay_server

        return replay_server(cls, directory, **options)

    def __init__(
        self,
        script: Script,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_body_bytes: int = MAX_BODY_BYTES,
        journal_max_entries: int = MAX_ENTRIES,
        journal_max_per_test: int = MAX_PER_TEST,
        max_sessions: int = MAX_SESSIONS,
        allowed_hosts: Iterable[str] = (),
        app: Callable[[MockState, MockApp], MockApp | ReplayApp] | None = None,
    ) -> None:
        self.script = script
        journal = Journal(max_entries=journal_max_entries, max_per_test=journal_max_per_test)
        self.state = MockState(script, journal=journal, max_sessions=max_sessions)
        scripted = create_app(
            script,
            state=self.state,
            max_body_bytes=max_body_bytes,
            allowed_hosts=[host, *allowed_hosts],
        )
        # ``app``: what to serve instead, made from the state and the script's app (the
        # replay of recordings answers with them and falls back to the script's app).
        self.app: MockApp | ReplayApp = scripted if app is None else app(self.state, scripted)
        self._host = host
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> MockServer:
        if self._server is not None:
            raise UsageError("MockServer is already running")
        self._socket = sock = _bind(self._host, self._port)
        self.state.closing.clear()
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            lifespan="off",
            access_log=False,
            ws=WS,
            http=PROTOCOL,
        )
        self._server = server = _Server(config)

        def run() -> None:
            with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                self._loop = runner.get_loop()
                runner.run(server.serve(sockets=[sock]))

        self._thread = threading.Thread(target=run, name="callgate-mock", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise UsageError("MockServer did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving: open responses get a short grace period, then the ones still
        running (a paced or held stream) are cancelled; the server thread is joined.
        Idle, it returns as soon as the loop has closed the connections (milliseconds)."""
        server, thread, loop = self._server, self._thread, self._loop
        self.state.closing.set()
        if server is not None:
            server.should_exit = True
            if loop is not None:
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    loop.call_soon_threadsafe(server.wake)
        if thread is not None:
            thread.join(timeout=3 * _GRACE_S)
            if server is not None and thread.is_alive():
                server.force_exit = True
            thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = self._loop = None

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> MockServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc_info: Any) -> None:
        await asyncio.to_thread(self.stop)

    # -- addresses ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        if self._socket is None:
            raise UsageError("MockServer is not running")
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def __getattr__(self, name: str) -> str:
        """A base URL for an official SDK, by the attribute its provider names
        (``Provider.server_bases``: ``openai_base_url``, ``anthropic_base_url``, ...)."""
        path = server_bases().get(name) if name.endswith("_base_url") else None
        if path is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.url + path

    # -- what happened --------------------------------------------------------------------

    # -- registered sessions ----------------------------------------------------------------

    def register(self, test_id: str, script: Script, *, default: bool = False) -> dict[str, Any]:
        """Serve ``script`` to the requests with ``test_id`` from a fresh session of its own
        until :meth:`drop` (also ``POST /_callgate/sessions/{test_id}``); ``default=True``
        sends requests without an ``x-callgate-test-id`` header there too. Returns the
        session's status object (see :meth:`status`). Raises
        :class:`~callgate.mock.ScriptError` for a script the server cannot serve and
        :class:`UsageError` when the id is registered or ``max_sessions`` are."""
        answer = _sessions.register(self.state, test_id, script)
        if default:
            self.state.default_test_id = test_id
        return answer

    def drop(self, test_id: str) -> dict[str, Any]:
        """Unregister ``test_id``, forgetting its session, journal entries and mismatches;
        returns its final status object. Raises :class:`UsageError` if not registered."""
        return _sessions.drop(self.state, test_id)

    def status(self, test_id: str | None = None) -> dict[str, Any]:
        """``GET /_callgate/status``: ``{"done", "sessions": [...]}``, per session the turns
        served and left, the mismatches, and whether it is done."""
        return _sessions.status(self.state, test_id)

    def verdicts(self, test_id: str | None = None) -> list[dict[str, Any]]:
        """``GET /_callgate/verdicts``: what the clients did with what was served, judged
        against the rules of docs/verdicts.md, oldest first (or ``test_id``'s only)."""
        return [v.to_dict() for v in self.state.verdicts.list(test_id)]

    def reset(self, test_id: str | None = None) -> None:
        """Forget every session (cursors, stored objects, runtime faults), mismatch and
        journal entry, or only those of ``test_id``; also ``POST /_callgate/reset``."""
        self.state.reset(test_id)

    @property
    def journal(self) -> Journal:
        """The requests received and what was answered (credentials redacted), newest
        10,000 by default (see :class:`Journal`)."""
        return self.state.journal

    @property
    def mismatches(self) -> list[Mismatch]:
        return list(self.state.mismatches)

    def assert_script_done(self) -> None:
        """Raise :class:`UsageError` unless every turn was served and nothing mismatched."""
        if self.state.mismatches:
            first = self.state.mismatches[0]
            raise UsageError(f"request mismatched the script: {'; '.join(first.problems)}")
        left = {name: n for name, n in self.state.remaining().items() if n}
        if left:
            raise UsageError(f"turns left unserved: {left}")


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop when it is installed (``uvicorn[standard]``), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


_GRACE_S = 0.4


class _Server(uvicorn.Server):
    """uvicorn's server, told to stop at once rather than polled every 100 ms, with a
    shutdown that waits for open responses only as long as they take.

    A response still running after the grace period (a paced or held stream that may
    sleep for long) is cancelled: its stream ends, its journal entry closes, and uvicorn
    closes the connection.
    """

    _woken: asyncio.Event | None = None

    def wake(self) -> None:
        """Called on the server's loop once ``should_exit`` is set."""
        if self._woken is not None:
            self._woken.set()

    async def main_loop(self) -> None:
        self._woken = asyncio.Event()
        while not await self.on_tick(0):  # tick 0 refreshes the Date header
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), 1.0)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for listener in self.servers:
            listener.close()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()  # idle keep-alive connections close now
        if not await self._settled(_GRACE_S):
            for task in list(state.tasks):
                task.cancel()
            await self._settled(_GRACE_S)
        for listener in self.servers:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(listener.wait_closed(), _GRACE_S)
        if not self.force_exit:
            await self.lifespan.shutdown()

    async def _settled(self, seconds: float) -> bool:
        """Wait until every connection and request task is gone, or ``seconds`` passed."""
        state = self.server_state
        deadline = time.monotonic() + seconds
        while (state.connections or state.tasks) and not self.force_exit:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.001)
        return True


def _bind(host: str, port: int) -> socket.socket:
    if not host_is_loopback(host):
        warnings.warn(
            f"callgate mock: binding {host}, which is not a loopback address: other machines "
            "can reach the mock and read its journal",
            UserWarning,
            stacklevel=3,
        )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OverflowError as exc:
        sock.close()
        raise UsageError(f"cannot bind {host}:{port}: the port must be 0-65535") from exc
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot bind {host}:{port}: {exc.strerror or exc}") from exc
    return sock


def serve_forever(
    script: Script,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    on_ready: Callable[[MockServer], None] | None = None,
    **bounds: Any,
) -> None:
    """Serve ``script`` in the foreground until interrupted: the standalone server of
    ``callgate serve``. The socket is listening before ``on_ready`` is called.

    Tuned for a long-lived process of its own: uvloop/httptools when installed, and the
    cyclic garbage collector run less often (the journal keeps up to 10,000 entries, so
    frequent full collections would slow a long run down). Raises :class:`UsageError` if
    the address cannot be bound. Other keywords are :class:`MockServer`'s bounds.
    """
    mock = MockServer(script, host=host, port=port, **bounds)
    sock = _bind(host, port)
    mock._socket = sock
    config = uvicorn.Config(
        mock.app, log_level="warning", lifespan="off", access_log=False, ws=WS, http=PROTOCOL
    )
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(mock)
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 1_000)
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(server.serve(sockets=[sock]))
    except KeyboardInterrupt:
        pass
    finally:
        mock.state.closing.set()
        sock.close()


def serve_recordings_forever(
    directory: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    match: Match = "position",
    pacing: bool = False,
    on_ready: Callable[[MockServer], None] | None = None,
) -> None:
    """``callgate serve --recordings DIR``: replay in the foreground until interrupted."""
    from ._replay import replay_server

    mock = replay_server(MockServer, directory, match=match, pacing=pacing, host=host, port=port)
    sock = _bind(host, port)
    mock._socket = sock
    config = uvicorn.Config(
        mock.app, log_level="warning", lifespan="off", access_log=False, ws=WS, http=PROTOCOL
    )
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(mock)
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(server.serve(sockets=[sock]))
    except KeyboardInterrupt:
        pass
    finally:
        mock.state.closing.set()
        sock.close()
