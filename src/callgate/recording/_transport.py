"""Transport wrappers that tee each exchange into a :class:`Recorder`, for httpx and httpx2.

``recording_transport(inner, recorder)`` wraps a transport of either library (sync or
async) and returns a transport of the same library, so it plugs into each official SDK's
own ``http_client`` (openai 3.x and anthropic 2.x are built on ``httpx2``; google-genai and
older SDKs on ``httpx``). The response stream passes through chunk by chunk, unchanged and
unbuffered; the recorder appends each chunk to disk as it goes by. When the stream ends the
recording is scanned and written; a scanner hit raises :class:`SecretFoundError` at the end
of the stream (the bytes already delivered are not taken back, but nothing is written).
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any

from .._errors import UsageError
from ._recorder import Capture, Recorder

__all__ = ["recording_transport"]


def _library_of(transport: Any) -> ModuleType:
    for cls in type(transport).__mro__:
        root = cls.__module__.partition(".")[0]
        if root in ("httpx", "httpx2"):
            return importlib.import_module(root)
    raise UsageError(
        f"recording_transport() wraps an httpx or httpx2 transport, not {type(transport).__name__}"
    )


def recording_transport(inner: Any, recorder: Recorder) -> Any:
    """A transport of ``inner``'s library that records every exchange into ``recorder``."""
    if not isinstance(recorder, Recorder):
        raise UsageError("recording_transport() needs a callgate.recording.Recorder")
    lib = _library_of(inner)
    is_async = isinstance(inner, lib.AsyncBaseTransport)
    is_sync = isinstance(inner, lib.BaseTransport)
    if is_async and is_sync:  # e.g. MockTransport: keep both faces
        return _dual_class(lib)(inner, recorder)
    if is_async:
        return _async_class(lib)(inner, recorder)
    if is_sync:
        return _sync_class(lib)(inner, recorder)
    raise UsageError(f"{type(inner).__name__} is not a {lib.__name__} transport")


_CLASSES: dict[tuple[str, bool], type] = {}


def _sync_class(lib: ModuleType) -> type:
    key = (lib.__name__, False)
    if key in _CLASSES:
        return _CLASSES[key]

    class TeeStream(lib.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, capture: Capture) -> None:
            self._inner = inner
            self._capture = capture

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._inner:
                self._capture.chunk(chunk)
                yield chunk
            self._capture.finish(complete=True)

        def close(self) -> None:
            try:
                self._inner.close()
            finally:
                self._capture.finish(complete=False)

    class RecordingTransport(lib.BaseTransport):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, recorder: Recorder) -> None:
            self.inner = inner
            self.recorder = recorder

        def handle_request(self, request: Any) -> Any:
            if not self.recorder.wants(str(request.url)):  # passes through unread
                return self.inner.handle_request(request)
            capture = _begin(self.recorder, request, request.read())
            if capture is None:
                return self.inner.handle_request(request)
            try:
                response = self.inner.handle_request(request)
            except BaseException:
                capture.abort()
                raise
            capture.response(response.status_code, response.headers.multi_items())
            return lib.Response(
                status_code=response.status_code,
                headers=response.headers,
                stream=TeeStream(response.stream, capture),
                extensions=response.extensions,
                request=request,
            )

        def close(self) -> None:
            self.inner.close()

    _CLASSES[key] = RecordingTransport
    return RecordingTransport


def _async_class(lib: ModuleType) -> type:
    key = (lib.__name__, True)
    if key in _CLASSES:
        return _CLASSES[key]

    class TeeStream(lib.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, capture: Capture) -> None:
            self._inner = inner
            self._capture = capture

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._inner:
                self._capture.chunk(chunk)
                yield chunk
            self._capture.finish(complete=True)

        async def aclose(self) -> None:
            try:
                await self._inner.aclose()
            finally:
                self._capture.finish(complete=False)

    class RecordingTransport(lib.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, recorder: Recorder) -> None:
            self.inner = inner
            self.recorder = recorder

        async def handle_async_request(self, request: Any) -> Any:
            if not self.recorder.wants(str(request.url)):  # passes through unread
                return await self.inner.handle_async_request(request)
            capture = _begin(self.recorder, request, await request.aread())
            if capture is None:
                return await self.inner.handle_async_request(request)
            try:
                response = await self.inner.handle_async_request(request)
            except BaseException:
                capture.abort()
                raise
            capture.response(response.status_code, response.headers.multi_items())
            return lib.Response(
                status_code=response.status_code,
                headers=response.headers,
                stream=TeeStream(response.stream, capture),
                extensions=response.extensions,
                request=request,
            )

        async def aclose(self) -> None:
            await self.inner.aclose()

    _CLASSES[key] = RecordingTransport
    return RecordingTransport


def _dual_class(lib: ModuleType) -> type:
    key = (lib.__name__ + "/dual", True)
    if key not in _CLASSES:
        bases = (_sync_class(lib), _async_class(lib))
        _CLASSES[key] = type("RecordingTransport", bases, {})
    return _CLASSES[key]


def _begin(recorder: Recorder, request: Any, body: bytes) -> Capture | None:
    return recorder.begin(request.method, str(request.url), request.headers.multi_items(), body)
