"""What the SDK clients of one pytest session share: one connection pool, one SSL context.

An official SDK client made the default way builds an HTTP client of its own, and with it
an SSL context that loads the system's CA bundle: about 20 ms each, and a new TCP
connection per test. The mock is plain HTTP on loopback, so the helpers hand every SDK
client an HTTP client of its own over what the session shares instead:

- synchronous ``openai`` / ``anthropic`` clients: the SDK's ``DefaultHttpxClient`` (its
  own defaults: timeout, limits, redirects) over one connection pool per pytest session,
  through a transport whose ``close()`` leaves the pool open. Closing the SDK client a
  test got (``client.close()``, ``with client:``) closes that client as usual (using it
  afterwards raises, as it would without the plugin) and never the shared pool, which
  :meth:`SharedHttp.close` closes when the session ends;
- asynchronous clients: a ``DefaultAsyncHttpxClient`` of their own (a pool's connections
  belong to the event loop that opened them, and pytest-asyncio gives each test its own
  loop), over the session's one SSL context;
- ``google.genai`` clients: its sync and async HTTP clients built over the session's SSL
  context (``client_args`` / ``async_client_args``); the SDK owns and closes them.

``trust_env=False`` throughout: the mock is on loopback, and a proxy from the
environment (``HTTP_PROXY``) would only stand between the test and it.
"""

from __future__ import annotations

import ssl
import sys
import threading
from types import ModuleType
from typing import Any

__all__ = ["SharedHttp"]

_LIMITS = {"max_connections": 1000, "max_keepalive_connections": 100}  # the SDKs' defaults


class SharedHttp:
    """The pytest session's pools (one per HTTP package: ``httpx2``, legacy ``httpx``)
    and SSL context, each made when first needed. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None
        self._pools: dict[str, Any] = {}
        self._closed = False

    def ssl_context(self) -> ssl.SSLContext:
        with self._lock:
            if self._context is None:
                self._context = ssl.create_default_context()
            return self._context

    def sync_client(self, sdk: ModuleType) -> Any:
        """``sdk.DefaultHttpxClient`` over the session's pool for its HTTP package."""
        http = _http_package(sdk.DefaultHttpxClient)
        return sdk.DefaultHttpxClient(transport=self._kept(http), trust_env=False)

    def async_client(self, sdk: ModuleType) -> Any:
        """``sdk.DefaultAsyncHttpxClient`` of its own, over the session's SSL context."""
        return sdk.DefaultAsyncHttpxClient(verify=self.ssl_context(), trust_env=False)

    def _kept(self, http: ModuleType) -> Any:
        with self._lock:
            if self._closed:
                raise RuntimeError("the pytest session's HTTP pool is closed")
            pool = self._pools.get(http.__name__)
            if pool is None:
                context = self._context = self._context or ssl.create_default_context()
                limits = http.Limits(**_LIMITS)
                pool = self._pools[http.__name__] = http.HTTPTransport(
                    verify=context, limits=limits, trust_env=False
                )
        return _kept_transport(http)(pool)

    def close(self) -> None:
        """Close every pool (the end of the pytest session)."""
        with self._lock:
            pools, self._pools, self._closed = list(self._pools.values()), {}, True
        for pool in pools:
            pool.close()


def _http_package(client_class: type) -> ModuleType:
    """The HTTP package (``httpx2`` or ``httpx``) an SDK's client class derives from."""
    for cls in client_class.__mro__:
        name = cls.__module__.partition(".")[0]
        if name in ("httpx", "httpx2") and name in sys.modules:
            return sys.modules[name]
    raise TypeError(f"{client_class!r} is not an httpx or httpx2 client")  # pragma: no cover


_KEPT: dict[str, type] = {}


def _kept_transport(http: ModuleType) -> type:
    """A transport of ``http`` that sends through a shared pool and does not close it."""
    found = _KEPT.get(http.__name__)
    if found is None:

        class KeptTransport(http.BaseTransport):  # type: ignore[name-defined,misc]
            def __init__(self, pool: Any) -> None:
                self._pool = pool

            def handle_request(self, request: Any) -> Any:
                return self._pool.handle_request(request)

            def close(self) -> None:
                """The pool is the pytest session's: :meth:`SharedHttp.close` closes it."""

        found = _KEPT[http.__name__] = KeptTransport
    return found
