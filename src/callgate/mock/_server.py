"""Run the mock app under uvicorn on a real loopback socket, from sync or async code."""

from __future__ import annotations

import asyncio
import gc
import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import uvicorn

from .._errors import UsageError
from ._app import create_app
from ._journal import Journal
from ._script import Script
from ._state import Mismatch, MockState

__all__ = ["MockServer", "serve_forever"]


class MockServer:
    """A scripted provider on ``http://127.0.0.1:<port>``.

    Use as a context manager (``with`` or ``async with``); ``port=0`` picks a free port.
    Base URLs for the official SDKs: ``openai_base_url`` (``OpenAI(base_url=...)``),
    ``azure_openai_base_url``, ``anthropic_base_url`` (``Anthropic(base_url=...)``) and
    ``gemini_base_url`` (``http_options={"base_url": ..., "api_version": "v1"}``).
    Raises :class:`UsageError` when started twice or when the server cannot bind.
    """

    def __init__(self, script: Script, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = script
        self.state = MockState(script)
        self.app = create_app(script, state=self.state)
        self._host = host
        self._port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> MockServer:
        if self._server is not None:
            raise UsageError("MockServer is already running")
        self._socket = sock = _bind(self._host, self._port)
        self.state.closing.clear()
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="off", access_log=False, ws="none"
        )
        self._server = server = uvicorn.Server(config)

        def run() -> None:
            with asyncio.Runner(loop_factory=_loop_factory()) as runner:
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
        server, thread = self._server, self._thread
        self.state.closing.set()
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

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

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/openai/v1"

    @property
    def azure_openai_base_url(self) -> str:
        return f"{self.url}/azure-openai/openai/v1"

    @property
    def anthropic_base_url(self) -> str:
        return f"{self.url}/anthropic"

    @property
    def gemini_base_url(self) -> str:
        return f"{self.url}/gemini"

    # -- what happened --------------------------------------------------------------------

    @property
    def journal(self) -> Journal:
        """Every request received and what was answered (credentials redacted)."""
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


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot bind {host}:{port}: {exc.strerror}") from exc
    return sock


def serve_forever(
    script: Script,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    on_ready: Callable[[MockServer], None] | None = None,
) -> None:
    """Serve ``script`` in the foreground until interrupted: the standalone server of
    ``callgate serve``. The socket is listening before ``on_ready`` is called.

    Tuned for a long-lived process of its own: uvloop/httptools when installed, and the
    cyclic garbage collector run less often (every request keeps its journal entry, so
    frequent full collections would slow a long run down). Raises :class:`UsageError` if
    the address cannot be bound.
    """
    mock = MockServer(script, host=host, port=port)
    sock = _bind(host, port)
    mock._socket = sock
    config = uvicorn.Config(
        mock.app, log_level="warning", lifespan="off", access_log=False, ws="none"
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
