"""Step validation and the per-step accumulation of streamed deltas.

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

- ``model_output`` + ``text_annotation_delta``: the annotations join the text block being
  streamed (the projection checks their byte offsets against that block's final text).
- hosted call/result steps + one delta of their own type: the fields the step declares
  are merged (:func:`._hosted.merge_delta`).

Anything else that a baseline allows (an annotation before any text, a hosted delta field
with no place on the step, deltas onto a ``model_output`` whose ``step.start`` already held
content) is merged best-effort and the step is marked *opaque*, with the reason
(``Turn.opaque_reasons``): it is kept for inspection but never replayed by a builder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import LimitExceededError, SchemaError, SequenceError, UnsupportedProviderState
from .._json import loads_strict
from .._limits import Limits
from ._events import DELTA_TARGETS, HOSTED_STEPS, STEP_ID_KEY, baseline_deltas, baseline_steps
from ._hosted import check_hosted_fields, merge_delta, report

__all__ = ["StepAccumulator", "check_step", "delta_routes"]

# The steps whose identity the gate binds: a call and the result that answers it.
_CLIENT_STEPS = frozenset({"function_call", "function_result"})


def check_step(
    step: Any, known: frozenset[str], baseline: str, warnings: list[str] | None = None
) -> str:
    """Validate a step's discriminator and the fields the gate needs; return its type.

    Required (docs/required-fields.md): a ``function_call``'s ``id`` and ``name`` (release,
    binding) and a ``function_result``'s ``call_id`` (which call of the history it
    answers). A hosted step's identity and payload are telemetry: a problem with them goes
    to ``warnings`` (with ``warnings=None``, the builder checking a caller's history, it is
    a :class:`SchemaError`). Raises :class:`SchemaError` for a non-object, a missing or
    ill-typed ``type`` or required field, and :class:`UnsupportedProviderState` for a type
    unknown to the baseline.
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
            problem = f"{kind} step needs a non-empty string {key!r}"
            if kind in _CLIENT_STEPS:
                raise SchemaError(problem, wire_type=kind)
            report(problem, warnings, kind)
    if kind == "function_call":
        name = step.get("name")
        if type(name) is not str or not name:
            raise SchemaError("function_call step needs a non-empty string 'name'")
    check_hosted_fields(step, kind, warnings)
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
        "merged",
        "nbytes",
        "opaque",
        "position",
        "routes",
        "sig_parts",
        "start_args",
        "step",
        "text_chars",
        "why",
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
        self.why = ""
        self.merged: set[str] = set()
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

    def _mark(self, why: str) -> None:
        if not self.opaque:
            self.opaque, self.why = True, why

    def _blocks(self) -> list[Any]:
        if self.content is None:
            self.content = []
            if self.step.get("content"):
                self._mark(
                    "deltas extend a model_output whose step.start already held content: "
                    "how they combine is not pinned"
                )
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
        # Citations are telemetry: the projection checks them (turn.warnings).
        annotations = delta.get("annotations")
        if annotations is None:
            return
        if type(annotations) is not list:
            self._mark("a text_annotation_delta whose 'annotations' is not a list")
            return
        blocks = self._blocks()
        if not blocks or type(blocks[-1]) is not _Text:
            self._mark(
                "a text_annotation_delta before any text: the block it annotates is not pinned"
            )
            blocks.append(_Text())
        block = blocks[-1]
        if block.annotations is None:
            block.annotations = []
        block.annotations.extend(annotations)

    def apply_hosted(self, delta: dict[str, Any]) -> None:
        why = merge_delta(self.step, self.kind, delta, self.merged)
        if why is not None:
            self._mark(why)

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


_HOSTED = frozenset(HOSTED_STEPS)


def delta_routes(baseline: str) -> dict[str, dict[str, _Apply]]:
    """``step type -> {delta type -> apply function}`` for ``baseline``."""
    steps = baseline_steps(baseline)
    routes: dict[str, dict[str, _Apply]] = {kind: {} for kind in steps}
    for delta_type in baseline_deltas(baseline):
        for target in DELTA_TARGETS[delta_type] & steps:
            if target in _HOSTED:
                routes[target][delta_type] = StepAccumulator.apply_hosted
            elif delta_type in _BY_DELTA:  # function_result: an input step, never streamed
                routes[target][delta_type] = _BY_DELTA[delta_type]
    return routes
