"""Step validation, the per-step accumulation of streamed deltas, and event-id dedup.

One :class:`StepAccumulator` exists per open ``index`` (never a "current call" variable,
so interleaved parallel calls cannot bleed into each other). Deltas are routed through a
per-step-type table ``delta type -> function``; argument fragments go to a list that is
joined and parsed with :func:`callgate.loads_strict` exactly once, at ``step.stop``.

Assembly callgate implements exactly (the step stays *provably complete*):

- ``function_call`` + ``arguments_delta``: fragments concatenated; a non-empty
  ``arguments`` object in ``step.start`` together with argument text is a conflict.
- ``thought`` + ``thought_summary`` (each ``content`` appended to ``summary``) and
  ``thought_signature`` (fragments concatenated into ``signature``).
- ``model_output`` + ``text`` (consecutive texts form one text block) and
  ``image``/``audio``/``video``/``document`` (appended as content blocks).

Anything else that a baseline allows (annotations, hosted tool deltas, deltas onto a
``model_output`` whose ``step.start`` already held content) is merged best-effort and the
step is marked *opaque*: it is kept for inspection but never replayed by a builder.

Event-id dedup (:class:`EventIds`): ``event_id`` is a resume token, so a client that
resumes may see an event twice. The same id with an equal decoded payload (key order and
spacing ignored) is skipped; with another payload it is a :class:`~callgate.SequenceError`.
Each seen id keeps the 16-byte BLAKE2b digest of its event's canonical JSON (the bytes of
:func:`callgate.canonical_bytes`), never the text; an id longer than
:data:`MAX_KEPT_ID_CHARS` is keyed by its own digest, so memory per id is constant. A
digest collision cannot release anything the stream did not carry: a false "same payload"
drops an event (which the sender could simply not have sent), a false "another payload"
fails closed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from hashlib import blake2b
from typing import Any

from .._errors import LimitExceededError, SchemaError, SequenceError, UnsupportedProviderState
from .._json import loads_strict
from .._limits import Limits
from ._events import DELTA_TARGETS, STEP_ID_KEY, baseline_deltas, baseline_steps

__all__ = ["MAX_KEPT_ID_CHARS", "EventIds", "StepAccumulator", "check_step", "delta_routes"]


def check_step(step: Any, known: frozenset[str], baseline: str) -> str:
    """Validate a step's discriminator and identity fields; return its type.

    Raises :class:`SchemaError` for a non-object, a missing/ill-typed ``type`` or identity
    field, and :class:`UnsupportedProviderState` for a type unknown to the baseline.
    """
    if type(step) is not dict:
        raise SchemaError("a step must be a JSON object")
    kind = step.get("type")
    if type(kind) is not str:
        raise SchemaError("a step has no string 'type'")
    if kind not in known:
        raise UnsupportedProviderState(
            f"step type {kind!r} is unknown to contract revision {baseline}; it could change "
            "what executes, so it fails closed",
            wire_type=kind,
        )
    key = STEP_ID_KEY.get(kind)
    if key is not None:
        ident = step.get(key)
        if type(ident) is not str or not ident:
            raise SchemaError(f"{kind} step needs a non-empty string {key!r}", wire_type=kind)
    if kind == "function_call":
        name = step.get("name")
        if type(name) is not str or not name:
            raise SchemaError("function_call step needs a non-empty string 'name'")
    elif kind == "function_result" and "result" not in step:
        raise SchemaError("function_result step needs a 'result'")
    return kind


class _Text:
    """A text block being built from ``text`` deltas."""

    __slots__ = ("annotations", "parts")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.annotations: list[Any] | None = None


class StepAccumulator:
    """The assembly state of one open step (one stream ``index``)."""

    __slots__ = (
        "args_parts",
        "content",
        "kind",
        "limits",
        "nbytes",
        "opaque",
        "position",
        "routes",
        "sig_parts",
        "start_args",
        "step",
        "text_chars",
    )

    def __init__(
        self,
        step: dict[str, Any],
        kind: str,
        position: int,
        routes: dict[str, _Apply],
        limits: Limits,
    ) -> None:
        self.step = step
        self.kind = kind
        self.position = position
        self.routes = routes
        self.limits = limits
        self.opaque = False
        self.args_parts: list[str] = []
        self.nbytes = 0
        self.sig_parts: list[str] = []
        self.text_chars = 0
        self.content: list[Any] | None = None
        self.start_args: Any = None
        if kind == "function_call":
            args = step.get("arguments")
            if args is not None and type(args) is not dict:
                raise SchemaError("function_call 'arguments' must be a JSON object")
            self.start_args = args

    # -- delta application (one call per step.delta; keep them lean) ----------------

    def apply_arguments(self, delta: dict[str, Any]) -> None:
        fragment = delta.get("arguments")
        if fragment is None:  # optional: an absent field adds nothing
            return
        if type(fragment) is not str:
            raise SchemaError("arguments_delta.arguments must be a string")
        if self.start_args:
            raise SequenceError(
                "function_call has arguments in step.start and argument deltas: conflict"
            )
        parts = self.args_parts
        limits = self.limits
        if len(parts) >= limits.max_fragments_per_call:
            raise LimitExceededError(
                "too many argument fragments for one call",
                limit="max_fragments_per_call",
                bound=limits.max_fragments_per_call,
                observed=len(parts) + 1,
            )
        size = self.nbytes + (
            len(fragment) if fragment.isascii() else len(fragment.encode("utf-8", "replace"))
        )
        if size > limits.max_argument_bytes:
            raise LimitExceededError(
                "function_call arguments are too large",
                limit="max_argument_bytes",
                bound=limits.max_argument_bytes,
                observed=size,
            )
        self.nbytes = size
        parts.append(fragment)

    def _count_text(self, text: str) -> None:
        total = self.text_chars + len(text)
        if total > self.limits.max_text_chars:
            raise LimitExceededError(
                "step text is too long",
                limit="max_text_chars",
                bound=self.limits.max_text_chars,
                observed=total,
            )
        self.text_chars = total

    def apply_summary(self, delta: dict[str, Any]) -> None:
        content = delta.get("content")
        if content is None:
            return
        if type(content) is not dict:
            raise SchemaError("thought_summary.content must be a JSON object")
        text = content.get("text")
        if type(text) is str:
            self._count_text(text)
        if self.content is None:
            self.content = []
        self.content.append(content)

    def apply_signature(self, delta: dict[str, Any]) -> None:
        signature = delta.get("signature")
        if signature is None:
            return
        if type(signature) is not str:
            raise SchemaError("thought_signature.signature must be a string")
        if self.step.get("signature"):
            raise SequenceError("thought has a signature in step.start and in deltas: conflict")
        self._count_text(signature)
        self.sig_parts.append(signature)

    def _blocks(self) -> list[Any]:
        if self.content is None:
            self.content = []
            if self.step.get("content"):
                self.opaque = True  # how deltas extend a non-empty start is not pinned
        return self.content

    def apply_text(self, delta: dict[str, Any]) -> None:
        text = delta.get("text")
        if type(text) is not str:
            raise SchemaError("text delta needs a string 'text'")
        self._count_text(text)
        blocks = self._blocks()
        if not blocks or type(blocks[-1]) is not _Text:
            blocks.append(_Text())
        blocks[-1].parts.append(text)

    def apply_block(self, delta: dict[str, Any]) -> None:
        self._blocks().append(delta)

    def apply_annotation(self, delta: dict[str, Any]) -> None:
        self.opaque = True  # which text span an annotation belongs to is not pinned
        annotations = delta.get("annotations")
        if annotations is None:
            return
        if type(annotations) is not list:
            raise SchemaError("text_annotation_delta.annotations must be a list")
        blocks = self._blocks()
        if not blocks or type(blocks[-1]) is not _Text:
            blocks.append(_Text())
        block = blocks[-1]
        if block.annotations is None:
            block.annotations = []
        block.annotations.extend(annotations)

    def apply_merge(self, delta: dict[str, Any]) -> None:
        self.opaque = True  # hosted-tool delta semantics are not pinned: keep, never replay
        for key, value in delta.items():
            if key != "type":
                self.step[key] = value

    # -- completion ------------------------------------------------------------------

    def finish(self) -> dict[str, Any]:
        """The assembled step (at ``step.stop``). Raises on bad or missing arguments."""
        step = self.step
        kind = self.kind
        if kind == "function_call":
            text = "".join(self.args_parts)
            if text:  # empty fragments add nothing, exactly like an absent field
                args = loads_strict(text, limits=self.limits)
                if type(args) is not dict:
                    raise SchemaError("function_call arguments are not a JSON object")
                step["arguments"] = args
            elif self.start_args is None:
                raise SchemaError("function_call has no arguments (none in start, no deltas)")
        elif kind == "thought":
            if self.sig_parts:
                step["signature"] = "".join(self.sig_parts)
            if self.content is not None:
                summary = step.get("summary")
                if summary is not None and type(summary) is not list:
                    raise SchemaError("thought 'summary' must be a list")
                step["summary"] = (summary or []) + self.content
        elif self.content is not None:
            blocks: list[Any] = []
            for block in self.content:
                if type(block) is _Text:
                    built: dict[str, Any] = {"type": "text", "text": "".join(block.parts)}
                    if block.annotations is not None:
                        built["annotations"] = block.annotations
                    blocks.append(built)
                else:
                    blocks.append(block)
            existing = step.get("content")
            if existing is not None and type(existing) is not list:
                raise SchemaError("model_output 'content' must be a list")
            step["content"] = (existing or []) + blocks
        return step


_Apply = Callable[[StepAccumulator, dict[str, Any]], None]
_BY_DELTA: dict[str, _Apply] = {
    "arguments_delta": StepAccumulator.apply_arguments,
    "thought_summary": StepAccumulator.apply_summary,
    "thought_signature": StepAccumulator.apply_signature,
    "text": StepAccumulator.apply_text,
    "image": StepAccumulator.apply_block,
    "audio": StepAccumulator.apply_block,
    "video": StepAccumulator.apply_block,
    "document": StepAccumulator.apply_block,
    "text_annotation_delta": StepAccumulator.apply_annotation,
}


def delta_routes(baseline: str) -> dict[str, dict[str, _Apply]]:
    """``step type -> {delta type -> apply function}`` for ``baseline``."""
    steps = baseline_steps(baseline)
    routes: dict[str, dict[str, _Apply]] = {kind: {} for kind in steps}
    for delta_type in baseline_deltas(baseline):
        for target in DELTA_TARGETS[delta_type] & steps:
            routes[target][delta_type] = _BY_DELTA.get(delta_type, StepAccumulator.apply_merge)
    return routes


# -- event-id dedup ------------------------------------------------------------------

MAX_KEPT_ID_CHARS = 64
_DIGEST_BYTES = 16
# The canonical encoder's settings (callgate._digest). A decoded event is already strict
# JSON (loads_strict checked its keys, numbers, strings and depth), so the canonical
# validation walk, most of canonical_bytes' cost on a small event, is not repeated.
_CANONICAL = json.JSONEncoder(
    ensure_ascii=False,
    allow_nan=False,
    sort_keys=True,
    separators=(",", ":"),
    check_circular=False,
)


def _unencodable(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _make_encode() -> Callable[[Any], str]:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - interpreters without the C accelerator
        return _CANONICAL.encode
    # The accelerator JSONEncoder.encode builds on every call, made once (about a third
    # of the time of an encode of a small event). The same arguments as _CANONICAL's.
    chunks = make(
        None, _unencodable, json.encoder.encode_basestring, None, ":", ",", True, False, False
    )
    join = "".join
    return lambda value: join(chunks(value, 0))


_encode = _make_encode()
_quote = json.encoder.encode_basestring  # the canonical encoder's string writer


def _canonical_text(obj: dict[str, Any]) -> str:
    """``_encode(obj)``; the hot shape (exactly ``event_type``, ``event_id``, ``index`` and a
    two-string ``delta``) as one f-string, which costs half the C encoder's per-call setup
    and key sort. Any other shape, extra keys included, goes through the encoder."""
    if len(obj) == 4:
        delta, index = obj.get("delta"), obj.get("index")
        event_type, event_id = obj.get("event_type"), obj.get("event_id")
        if (
            type(delta) is dict
            and len(delta) == 2
            and type(index) is int
            and type(event_type) is str
            and type(event_id) is str
        ):
            (k1, v1), (k2, v2) = delta.items()
            if type(k1) is str and type(k2) is str and type(v1) is str and type(v2) is str:
                if k2 < k1:
                    k1, v1, k2, v2 = k2, v2, k1, v1
                return (
                    f'{{"delta":{{{_quote(k1)}:{_quote(v1)},{_quote(k2)}:{_quote(v2)}}},'
                    f'"event_id":{_quote(event_id)},"event_type":{_quote(event_type)},'
                    f'"index":{int.__repr__(index)}}}'
                )
    return _encode(obj)


def _digest(data: bytes) -> bytes:
    return blake2b(data, digest_size=_DIGEST_BYTES).digest()


class EventIds:
    """The ids seen in one stream, each with the digest of its event's payload."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str | bytes, bytes] = {}

    def __len__(self) -> int:
        return len(self._seen)

    def is_replay(self, event_id: str, obj: dict[str, Any], canonical: bytes | None) -> bool:
        """Record ``event_id`` for the event ``obj``; True when it is a re-delivery.

        ``canonical`` is the event's canonical JSON when the caller already has it (decoded
        events), else ``None`` and it is computed here. Raises :class:`SequenceError` when
        the id was seen with another payload.
        """
        if canonical is None:
            try:
                canonical = _canonical_text(obj).encode("utf-8")
            except (
                TypeError,
                ValueError,
                RecursionError,
            ) as exc:  # only past the interpreter's bounds
                raise SchemaError(f"event cannot be canonicalised: {exc}") from None
        digest = _digest(canonical)
        key: str | bytes = event_id
        if len(event_id) > MAX_KEPT_ID_CHARS:
            # str keys and bytes keys never compare equal, so the two kinds cannot clash.
            key = _digest(event_id.encode("utf-8", "surrogatepass"))
        seen = self._seen.setdefault(key, digest)
        if seen is digest:
            return False
        if seen == digest:
            return True
        raise SequenceError(f"event_id {event_id[:100]!r} replayed with another payload")
