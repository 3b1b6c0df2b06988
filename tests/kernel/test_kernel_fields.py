"""The kernel helpers every room shares: typed getters, json_copy, the boundary, the registry."""

from __future__ import annotations

import pytest

from callgate import Limits, SchemaError, SequenceError, UsageError
from callgate._errors import STRAY_ERRORS, at_boundary
from callgate._fields import check_limits_and_baseline, need, need_str, opt, opt_str
from callgate._json import json_copy
from callgate._protocols import PROTOCOLS, room


def test_need_names_a_missing_field_and_a_wrong_type():
    with pytest.raises(SchemaError, match="item lacks required field 'id'"):
        need({}, "id", (str,), "item")
    with pytest.raises(SchemaError, match="item field 'id' has type list"):
        need({"id": []}, "id", (str,), "item")
    assert need({"n": 3}, "n", (int,), "x") == 3


def test_need_uses_exact_types_so_a_bool_is_not_an_int():
    with pytest.raises(SchemaError, match="has type bool"):
        need({"n": True}, "n", (int,), "x")


def test_opt_allows_absent_and_null_but_not_a_wrong_type():
    assert opt({}, "k", (str,), "x") is None
    assert opt({"k": None}, "k", (str,), "x") is None
    assert opt_str({"k": "v"}, "k", "x") == "v"
    with pytest.raises(SchemaError, match="field 'k' has type dict"):
        opt({"k": {}}, "k", (str,), "x")


def test_need_str_can_refuse_the_empty_string():
    assert need_str({"id": ""}, "id", "x") == ""
    with pytest.raises(SchemaError, match="must be a non-empty string"):
        need_str({"id": ""}, "id", "x", empty=False)


def test_limits_and_baseline_check_is_a_usage_error():
    check_limits_and_baseline(Limits(), "2026-11", ("2026-07-21", "2026-11"))
    with pytest.raises(UsageError, match=r"limits must be a callgate\.Limits"):
        check_limits_and_baseline({}, "2026-11", ("2026-11",))
    with pytest.raises(UsageError, match="baseline must be one of"):
        check_limits_and_baseline(Limits(), ["2026-11"], ("2026-11",))
    with pytest.raises(UsageError, match="baseline must be one of"):
        check_limits_and_baseline(Limits(), "2099", ("2026-11",))


def test_json_copy_is_deep_and_validated():
    original = {"a": [1, {"b": "c"}], "t": (1, 2)}
    copied = json_copy(original)
    assert copied == {"a": [1, {"b": "c"}], "t": [1, 2]}
    copied["a"][1]["b"] = "changed"
    assert original["a"][1]["b"] == "c"
    with pytest.raises(UsageError, match="tools is not a JSON value"):
        json_copy({"x": object()}, what="tools")
    with pytest.raises(UsageError, match="not a JSON value"):
        json_copy({"x": float("nan")})


def test_json_copy_applies_the_limits():
    with pytest.raises(UsageError, match="not a JSON value"):
        json_copy([[[[1]]]], limits=Limits(max_json_depth=2))


def test_at_boundary_converts_a_stray_error_once_and_fills_context():
    calls = []

    def partial():
        calls.append(1)
        return "partial"

    err = at_boundary(
        KeyError("x"), provider="p", event_index=3, wire_type="t", partial_turn=partial
    )
    assert isinstance(err, SchemaError)
    assert "KeyError" in err.message
    assert (err.provider, err.event_index, err.wire_type, err.turn) == ("p", 3, "t", "partial")
    assert isinstance(err.__cause__, KeyError)
    assert calls == [1]


def test_at_boundary_keeps_a_callgate_error_and_its_own_context():
    original = SequenceError("late", provider="q", event_index=1)
    err = at_boundary(original, provider="p", event_index=9, partial_turn=lambda: "t")
    assert err is original
    assert (err.provider, err.event_index, err.turn) == ("q", 1, "t")


def test_at_boundary_refuses_to_hide_an_unexpected_exception():
    with pytest.raises(TypeError, match="cannot convert"):
        at_boundary(KeyboardInterrupt(), provider="p")
    assert ValueError in STRAY_ERRORS


def test_protocol_registry_imports_each_room_lazily():
    for name in PROTOCOLS:
        module = room(name)
        assert module.__name__ == f"callgate.{name}"
        assert hasattr(module, "Parser")
    with pytest.raises(UsageError, match="unknown protocol"):
        room("nope")
    with pytest.raises(UsageError, match="unknown protocol"):
        room(["openai_responses"])  # type: ignore[arg-type]
