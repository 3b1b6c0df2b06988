"""The recording commands: ``callgate record``, ``serve --recordings``, ``check --drift``
and ``drift sdk``. ``cli._main`` only calls :func:`register`.

``callgate record --upstream URL --port N --out DIR`` is a reverse proxy (the ``server``
extra, with httpx as its client): each request is forwarded to its upstream and the
response streams back unbuffered, chunk by chunk, while :func:`recording_transport` tees it
into a :class:`Recorder`. One ``--upstream URL`` forwards every path; several
``--upstream PREFIX=URL`` route by path prefix as the mock does (``/openai``,
``/anthropic``, ``/gemini``), the prefix removed before forwarding.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from .._errors import CallgateError, UsageError

__all__ = ["parse_upstreams", "proxy_app", "register"]

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)


def parse_upstreams(values: list[str]) -> list[tuple[str, str]]:
    """``["URL"]`` or ``["/openai=URL", ...]`` as (path prefix, base URL), longest first."""
    routes: list[tuple[str, str]] = []
    for value in values:
        prefix, sep, url = value.partition("=")
        if not sep:
            prefix, url = "", value
        elif not prefix.startswith("/"):
            raise UsageError(f"--upstream {value!r}: the prefix must start with '/'")
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"--upstream {value!r}: the upstream must be an http(s) URL")
        routes.append((prefix.rstrip("/"), url.rstrip("/")))
    if not routes:
        raise UsageError("give at least one --upstream")
    return sorted(routes, key=lambda r: -len(r[0]))


def proxy_app(routes: list[tuple[str, str]], recorder: Any) -> Any:
    """The proxy's ASGI app: forward, stream back unbuffered, tee into ``recorder``."""
    import httpx
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse

    from ..recording import SecretFoundError, recording_transport

    client = httpx.AsyncClient(
        transport=recording_transport(httpx.AsyncHTTPTransport(), recorder),
        timeout=httpx.Timeout(600.0, connect=30.0),
    )

    def target(path: str) -> str | None:
        for prefix, base in routes:
            if not prefix:
                return base + path
            if path == prefix or path.startswith(prefix + "/"):
                return base + path[len(prefix) :]
        return None

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":  # close the upstream connections on shutdown
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await client.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        request = Request(scope, receive)
        url = target(scope["path"])
        if url is None:
            known = ", ".join(p for p, _ in routes)
            response: Response = JSONResponse(
                {"error": {"message": f"callgate record: no upstream for this path ({known})"}},
                status_code=404,
            )
            await response(scope, receive, send)
            return
        query = scope["query_string"].decode("latin-1")
        headers = [(k, v) for k, v in request.headers.items() if k not in _HOP_BY_HOP]
        upstream = client.build_request(
            request.method,
            url + (f"?{query}" if query else ""),
            headers=headers,
            content=await request.body(),
        )
        reply = await client.send(upstream, stream=True)

        async def body() -> AsyncIterator[bytes]:
            try:
                async for chunk in reply.aiter_raw():
                    yield chunk
            except SecretFoundError as exc:  # every byte was sent; only the file is refused
                print(f"callgate record: not recorded: {exc}", file=sys.stderr)
            finally:
                await reply.aclose()

        kept = {k: v for k, v in reply.headers.multi_items() if k.lower() not in _HOP_BY_HOP}
        response = StreamingResponse(body(), status_code=reply.status_code, headers=kept)
        await response(scope, receive, send)

    return app


def _record(args: argparse.Namespace) -> int:
    import uvicorn

    from ..mock._server import _bind
    from ..recording import Recorder

    if not 0 <= args.port <= 65535:
        print(f"callgate: --port must be 0-65535, got {args.port}", file=sys.stderr)
        return 2
    routes = parse_upstreams(args.upstream)
    recorder = Recorder(args.out, pseudonymize=args.pseudonymize)
    sock = _bind(args.host, args.port)  # port 0: the real one is printed
    host, port = sock.getsockname()[:2]
    print(f"callgate record: http://{host}:{port} -> recordings in {args.out}")
    for prefix, url in routes:
        print(f"  {prefix or '/'}  ->  {url}")
    sys.stdout.flush()
    config = uvicorn.Config(
        proxy_app(routes, recorder), log_level="warning", access_log=False, lifespan="on"
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0


def _serve_recordings(args: argparse.Namespace, fallback: Callable[..., int]) -> int:
    if not getattr(args, "recordings", None):
        return fallback(args)  # --script FILE, or none: registered sessions only
    from ..mock._server import serve_recordings_forever

    def ready(server: Any) -> None:
        if not args.quiet:
            from ._serve import log_requests

            log_requests(server)
        print(f"callgate replaying {args.recordings} on {server.url}")
        print(f"  OpenAI {server.openai_base_url}  Anthropic {server.anthropic_base_url}"
              f"  Gemini {server.gemini_base_url}")  # fmt: skip
        sys.stdout.flush()

    serve_recordings_forever(
        args.recordings,
        host=args.host,
        port=args.port,
        match=args.match,
        pacing=args.pacing,
        on_ready=ready,
    )
    return 0


def _check_drift(args: argparse.Namespace, fallback: Callable[..., int]) -> int:
    if not getattr(args, "drift", None):
        if args.stream is None or args.protocol is None:
            print("callgate check: give STREAM and --protocol, or --drift DIR", file=sys.stderr)
            return 2
        return fallback(args)
    from ..recording._drift import check_directory

    report = check_directory(Path(args.drift))
    if not args.no_mock:
        compare_with_mock(report)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.text())
    return 1 if report.affects_gate else 0


# What the mock needs to render "the same turn": one request per protocol, and its route.
_MOCK_REQUESTS: dict[str, tuple[str, dict[str, str], Callable[[list[str]], dict[str, Any]]]] = {
    "openai_responses": ("openai/v1/responses", {"authorization": "Bearer drift"},
        lambda names: {"model": "m", "input": "drift", "stream": True,
                       "tools": [{"type": "function", "name": n, "parameters": {}}
                                 for n in names]}),
    "anthropic_messages": ("anthropic/v1/messages",
        {"x-api-key": "drift", "anthropic-version": "2023-06-01"},
        lambda names: {"model": "m", "max_tokens": 1024, "stream": True,
                       "messages": [{"role": "user", "content": "drift"}],
                       "tools": [{"name": n, "input_schema": {"type": "object"}}
                                 for n in names]}),
    "gemini_interactions": ("gemini/v1/interactions", {"x-goog-api-key": "drift"},
        lambda names: {"model": "m", "input": "drift", "stream": True,
                       "tools": [{"type": "function", "name": n} for n in names]}),
    "openai_chat_completions": ("openai/v1/chat/completions", {"authorization": "Bearer drift"},
        lambda names: {"model": "m", "stream": True,
                       "messages": [{"role": "user", "content": "drift"}],
                       **({"tools": [{"type": "function", "function": {"name": n}}
                                     for n in names]} if names else {})}),
}  # fmt: skip


def _turn_text(turn: Any) -> str:
    text = getattr(turn, "text", None)
    if isinstance(text, str):
        return text
    parts = [b.get("text", "") for b in getattr(turn, "content", ()) if b.get("type") == "text"]
    for step in getattr(turn, "steps", ()):
        parts += [c.get("text", "") for c in step.get("content", ()) or () if isinstance(c, dict)]
    return "".join(p for p in parts if isinstance(p, str))


def compare_with_mock(report: Any) -> None:
    """Add, per streamed recording the current gate accepts, what the recording carries
    that the mock's rendering of the same turn (its text and calls) does not: wire types
    it never renders and fields its objects lack. Informational: never fails the check."""
    try:
        import httpx

        from ..mock import MockServer, ScriptBuilder
    except ImportError:  # the server extra is not installed: nothing cheap to compare with
        return
    from .._protocols import room
    from ..contracts import load_fixture
    from ..recording._drift import inventory, inventory_of
    from ..sse import SSEDecoder

    builder, todo = ScriptBuilder(), []
    for index, drift in enumerate(report.files):
        fixture = load_fixture(drift.path, allow_local_source_urls=True)
        if not fixture.streamed or drift.protocol not in _MOCK_REQUESTS:
            continue
        try:
            turn = room(drift.protocol).parse_stream(fixture.data)
        except CallgateError:  # a refused turn is reported already
            continue
        calls = [{"name": c.name, "arguments": c.arguments} for c in turn.calls]
        respond: dict[str, Any] = {"calls": calls} if calls else {"text": _turn_text(turn) or "ok"}
        builder.turn(drift.protocol, conversation=str(index), **respond)
        todo.append((index, drift, fixture, [c["name"] for c in calls]))
    if not todo:
        return
    with MockServer(builder.build()) as server, httpx.Client(timeout=30) as client:
        for index, drift, fixture, names in todo:
            path, headers, body = _MOCK_REQUESTS[drift.protocol]
            headers = {**headers, "x-callgate-conversation": str(index)}
            reply = client.post(f"{server.url}/{path}", json=body(names), headers=headers)
            events = SSEDecoder().feed(reply.content)
            objects = [json.loads(e.data) for e in events if e.data.startswith("{")]
            rendered = inventory_of(drift.protocol, objects)[0]
            drift.findings["mock"] = _mock_notes(inventory(fixture)[0], rendered)


def _mock_notes(recorded: list[Any], rendered: list[Any]) -> list[str]:
    mock_fields: dict[tuple[str, str], set[str]] = {}
    for label, wire, obj in rendered:
        mock_fields.setdefault((label, wire), set()).update(obj)
    notes = set()
    for label, wire, obj in recorded:
        fields = mock_fields.get((label, wire))
        if fields is None:
            notes.add(f"the mock renders no {label} of type {wire!r}")
        elif set(obj) - fields:
            notes.add(f"the mock's {wire!r} lacks {', '.join(sorted(set(obj) - fields))}")
    return sorted(notes)


def _drift_sdk(args: argparse.Namespace) -> int:
    from ..recording._sdkdiff import diff_sdk

    markdown, data = diff_sdk(args.package, args.old, args.new)
    if args.out:
        Path(args.out).write_text(markdown, encoding="utf-8")
    else:
        print(markdown)
    if args.data:
        Path(args.data).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return 0


def _optional(parser: argparse.ArgumentParser, *dests: str) -> None:
    for action in parser._actions:
        if action.dest in dests:
            action.required = False
            if action.dest == "stream":
                action.nargs = "?"
                action.default = None


def register(sub: Any, *, serve: argparse.ArgumentParser, check: argparse.ArgumentParser) -> None:
    """Add ``record`` and ``drift``, and ``--recordings`` / ``--drift`` to ``serve`` and
    ``check`` (call after their own arguments and defaults are set)."""
    record = sub.add_parser("record", help="reverse proxy that records provider traffic")
    record.add_argument(
        "--upstream",
        action="append",
        default=[],
        required=True,
        help="URL, or PREFIX=URL (repeat: /openai=..., /anthropic=...)",
    )
    record.add_argument("--port", type=int, default=8787, help="0 picks a free port")
    record.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    record.add_argument("--out", required=True, help="directory for the recordings")
    record.add_argument("--pseudonymize", action="store_true", help="replace provider ids")
    record.set_defaults(func=_record)

    serve_func = serve.get_default("func")
    _optional(serve, "script")
    serve.add_argument(
        "--recordings", metavar="DIR", help="replay the recorded fixtures of this directory"
    )
    serve.add_argument(
        "--match",
        choices=["position", "body"],
        default="position",
        help="with --recordings: answer in recorded order, or by request body",
    )
    serve.add_argument("--pacing", action="store_true", help="replay with recorded timing")
    serve.set_defaults(func=lambda a: _serve_recordings(a, serve_func))

    check_func = check.get_default("func")
    _optional(check, "stream", "protocol")
    check.add_argument("--drift", metavar="DIR", help="drift-check every recording in DIR")
    check.add_argument("--json", action="store_true", help="with --drift: JSON report")
    check.add_argument(
        "--no-mock", action="store_true", help="with --drift: skip the comparison with the mock"
    )
    check.set_defaults(func=lambda a: _check_drift(a, check_func))

    drift = sub.add_parser("drift", help="diff what the baselines depend on")
    drift_sub = drift.add_subparsers(dest="drift_command", required=True)
    sdk = drift_sub.add_parser("sdk", help="diff the type unions of two SDK versions")
    sdk.add_argument(
        "package", choices=["openai", "anthropic", "google-genai"], help="the SDK to compare"
    )
    sdk.add_argument("old", help="the older version, e.g. 3.56.0")
    sdk.add_argument("new", help="the newer version")
    sdk.add_argument("--out", help="write the markdown report here")
    sdk.add_argument("--data", help="write both readings as JSON here")
    sdk.set_defaults(func=_drift_sdk)
