"""OpenAI Responses: the hosted tool declarations and ``include`` values a request sends.

Check ``openai_hosted_tools_valid``. Every declared ``web_search`` / ``web_search_preview``
/ ``file_search`` / ``code_interpreter`` tool and every ``include`` value is checked
against the shapes of the pinned SDK models (contract §3.2, §9.1, §9.5); a violation is
answered with OpenAI's 400 shape (``invalid_request_error`` with ``param`` and ``code``:
``missing_required_parameter``, ``unknown_parameter``, ``invalid_type``, ``invalid_value``,
``integer_below_min_value``, ``integer_above_max_value``). An option the contract names but
whose semantics it does not pin (``web_search_call.results``, hybrid-search weights,
network policies, ``return_token_budget``, ``blocked_domains``, ``allowed_callers``, a
``tool_choice`` forcing a hosted tool) is refused with ``code: "unsupported_parameter"``
and a message saying it is not pinned -- never accepted silently. The mock runs no tool:
an accepted option changes nothing but what the script says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from .._kit import Reply
from .._openai_common import openai_error

__all__ = ["CHECK", "tools_problem"]

CHECK: Final = "openai_hosted_tools_valid"


class _RefusedError(Exception):
    def __init__(self, message: str, param: str, code: str) -> None:
        super().__init__(message)
        self.reply = openai_error(400, message, param=param, code=code)


def _unpinned(param: str, what: str) -> _RefusedError:
    return _RefusedError(
        f"callgate mock: {what} '{param}' is not pinned by callgate's contract (its semantics "
        "are unknown), so it is refused rather than accepted silently.",
        param,
        "unsupported_parameter",
    )


def _keys(obj: Mapping[str, Any], where: str, known: set[str], unpinned: set[str]) -> None:
    for key in obj:
        if key in unpinned:
            raise _unpinned(f"{where}.{key}", "the option")
        if key not in known:
            raise _RefusedError(f"Unknown parameter: '{where}.{key}'.", f"{where}.{key}",
                           "unknown_parameter")  # fmt: skip


def _typed(value: Any, kinds: tuple[type, ...], param: str, what: str) -> Any:
    if type(value) not in kinds:
        raise _RefusedError(
            f"Invalid type for '{param}': expected {what}, but got {_json_type(value)} instead.",
            param,
            "invalid_type",
        )
    return value


def _json_type(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a decimal",
             list: "an array", dict: "an object", type(None): "null"}  # fmt: skip
    return names.get(type(value), "a value")


def _one_of(value: Any, allowed: tuple[str, ...], param: str) -> None:
    if value not in allowed:
        shown = ", ".join(f"'{a}'" for a in allowed)
        raise _RefusedError(
            f"Invalid value: {value!r}. Supported values are: {shown}.", param, "invalid_value"
        )


def _required(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise _RefusedError(f"Missing required parameter: '{where}.{key}'.", f"{where}.{key}",
                       "missing_required_parameter")  # fmt: skip
    return obj[key]


def _strings(value: Any, param: str) -> list[str]:
    _typed(value, (list,), param, "an array of strings")
    for n, entry in enumerate(value):
        _typed(entry, (str,), f"{param}[{n}]", "a string")
    return list(value)


def _int_range(value: Any, low: int, high: int, param: str) -> None:
    _typed(value, (int,), param, "an integer")
    if value < low:
        message = f"integer below minimum value. Expected a value >= {low}"
        raise _RefusedError(f"Invalid '{param}': {message}, but got {value} instead.", param,
                            "integer_below_min_value")  # fmt: skip
    if value > high:
        message = f"integer above maximum value. Expected a value <= {high}"
        raise _RefusedError(f"Invalid '{param}': {message}, but got {value} instead.", param,
                            "integer_above_max_value")  # fmt: skip


# -- web search ---------------------------------------------------------------------------

_CONTEXT = ("low", "medium", "high")
_LOCATION_KEYS = {"type", "city", "country", "region", "timezone"}


def _location(value: Any, where: str, *, type_required: bool) -> None:
    if value is None and not type_required:
        return
    _typed(value, (dict,), where, "an object")
    _keys(value, where, _LOCATION_KEYS, set())
    if type_required:
        _required(value, "type", where)
    if "type" in value:
        _one_of(value["type"], ("approximate",), f"{where}.type")
    for key in ("city", "country", "region", "timezone"):
        if value.get(key) is not None:
            _typed(value[key], (str,), f"{where}.{key}", "a string")
    country = value.get("country")
    if country is not None and not (len(country) == 2 and country.isascii() and country.isalpha()):
        raise _RefusedError(f"Invalid '{where}.country': expected a two-letter ISO country code.",
                       f"{where}.country", "invalid_value")  # fmt: skip


def _web_search(tool: Mapping[str, Any], where: str) -> None:
    _keys(tool, where, {"type", "search_context_size", "user_location", "filters",
                        "external_web_access"}, {"return_token_budget"})  # fmt: skip
    if "search_context_size" in tool:
        _one_of(tool["search_context_size"], _CONTEXT, f"{where}.search_context_size")
    if "user_location" in tool:
        _location(tool["user_location"], f"{where}.user_location", type_required=False)
    filters = tool.get("filters")
    if filters is not None:
        _typed(filters, (dict,), f"{where}.filters", "an object")
        _keys(filters, f"{where}.filters", {"allowed_domains"}, {"blocked_domains"})
        if filters.get("allowed_domains") is not None:
            _strings(filters["allowed_domains"], f"{where}.filters.allowed_domains")
    if "external_web_access" in tool:
        _typed(tool["external_web_access"], (bool,), f"{where}.external_web_access", "a boolean")


def _web_search_preview(tool: Mapping[str, Any], where: str) -> None:
    _keys(tool, where, {"type", "search_context_size", "user_location", "search_content_types"},
          set())  # fmt: skip
    if "search_context_size" in tool:
        _one_of(tool["search_context_size"], _CONTEXT, f"{where}.search_context_size")
    if tool.get("user_location") is not None:
        _location(tool["user_location"], f"{where}.user_location", type_required=True)
    if "search_content_types" in tool:
        for n, kind in enumerate(_strings(tool["search_content_types"],
                                          f"{where}.search_content_types")):  # fmt: skip
            _one_of(kind, ("text", "image"), f"{where}.search_content_types[{n}]")


# -- file search --------------------------------------------------------------------------

_COMPARISONS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin")
_MAX_FILTER_DEPTH = 8


def _filter(value: Any, where: str, depth: int = 0) -> None:
    _typed(value, (dict,), where, "an object")
    kind = _required(value, "type", where)
    _one_of(kind, (*_COMPARISONS, "and", "or"), f"{where}.type")
    if kind in ("and", "or"):
        _keys(value, where, {"type", "filters"}, set())
        filters = _typed(_required(value, "filters", where), (list,), f"{where}.filters",
                         "an array")  # fmt: skip
        if depth >= _MAX_FILTER_DEPTH:
            raise _RefusedError(
                f"Invalid '{where}': filters nest too deeply.", where, "invalid_value"
            )
        for n, inner in enumerate(filters):
            _filter(inner, f"{where}.filters[{n}]", depth + 1)
        return
    _keys(value, where, {"type", "key", "value"}, set())
    _typed(_required(value, "key", where), (str,), f"{where}.key", "a string")
    given = _required(value, "value", where)
    scalars = (str, int, float, bool)
    if type(given) is list:
        for n, entry in enumerate(given):
            _typed(entry, (str, int, float), f"{where}.value[{n}]", "a string or a number")
    else:
        _typed(given, scalars, f"{where}.value", "a string, number, boolean or array")


def _file_search(tool: Mapping[str, Any], where: str) -> None:
    _keys(tool, where, {"type", "vector_store_ids", "max_num_results", "filters",
                        "ranking_options"}, {"allowed_callers"})  # fmt: skip
    _strings(_required(tool, "vector_store_ids", where), f"{where}.vector_store_ids")
    if "max_num_results" in tool:
        _int_range(tool["max_num_results"], 1, 50, f"{where}.max_num_results")
    if tool.get("filters") is not None:
        _filter(tool["filters"], f"{where}.filters")
    ranking = tool.get("ranking_options")
    if ranking is not None:
        param = f"{where}.ranking_options"
        _typed(ranking, (dict,), param, "an object")
        _keys(ranking, param, {"ranker", "score_threshold"}, {"hybrid_search"})
        if "ranker" in ranking:
            _one_of(ranking["ranker"], ("auto", "default-2024-11-15"), f"{param}.ranker")
        if "score_threshold" in ranking:
            threshold = _typed(ranking["score_threshold"], (int, float),
                               f"{param}.score_threshold", "a number")  # fmt: skip
            if not 0 <= threshold <= 1:
                raise _RefusedError(f"Invalid '{param}.score_threshold': expected a number from 0 "
                               "to 1.", f"{param}.score_threshold", "invalid_value")  # fmt: skip


# -- code interpreter ---------------------------------------------------------------------


def _code_interpreter(tool: Mapping[str, Any], where: str) -> None:
    _keys(tool, where, {"type", "container"}, {"allowed_callers"})
    container = _required(tool, "container", where)
    param = f"{where}.container"
    if type(container) is str:
        if not container:
            raise _RefusedError(f"Invalid '{param}': empty container id.", param, "invalid_value")
        return
    _typed(container, (dict,), param, "a container id or an object")
    _keys(container, param, {"type", "file_ids", "memory_limit"}, {"network_policy"})
    _one_of(_required(container, "type", param), ("auto",), f"{param}.type")
    if "file_ids" in container:
        _strings(container["file_ids"], f"{param}.file_ids")
    if container.get("memory_limit") is not None:
        _one_of(container["memory_limit"], ("1g", "4g", "16g", "64g"), f"{param}.memory_limit")


_TOOLS: Final[dict[str, Callable[[Mapping[str, Any], str], None]]] = {
    "web_search": _web_search,
    "web_search_2025_08_26": _web_search,
    "web_search_preview": _web_search_preview,
    "web_search_preview_2025_03_11": _web_search_preview,
    "file_search": _file_search,
    "code_interpreter": _code_interpreter,
}
_INCLUDES: Final = (
    "file_search_call.results",
    "web_search_call.action.sources",
    "message.input_image.image_url",
    "computer_call_output.output.image_url",
    "code_interpreter_call.outputs",
    "reasoning.encrypted_content",
    "message.output_text.logprobs",
)
_HOSTED_CHOICES: Final = frozenset(
    {"file_search", "web_search_preview", "web_search_preview_2025_03_11", "code_interpreter"}
)


def _check(body: Mapping[str, Any]) -> None:
    tools = body.get("tools")
    if isinstance(tools, list):
        for n, tool in enumerate(tools):
            kind = tool.get("type") if isinstance(tool, dict) else None
            if kind in _TOOLS:
                _TOOLS[kind](tool, f"tools[{n}]")
    include = body.get("include")
    if isinstance(include, list):
        for n, value in enumerate(include):
            if value == "web_search_call.results":
                raise _unpinned(f"include[{n}]", "the include value 'web_search_call.results' at")
            _one_of(value, _INCLUDES, f"include[{n}]")
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in _HOSTED_CHOICES:
        raise _unpinned("tool_choice", "forcing a hosted tool through")


def tools_problem(body: Mapping[str, Any]) -> Reply | None:
    """OpenAI's 400 for the first invalid hosted declaration or include value, else ``None``."""
    try:
        _check(body)
    except _RefusedError as refused:
        return refused.reply
    return None
