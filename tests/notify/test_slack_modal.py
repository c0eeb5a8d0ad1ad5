"""A Slack modal made from a flat form, and a submission read back into the payload
exactly (no I/O): which schemas fit, the inputs each kind of member gets, the payload's
types, absent optional fields absent, wrong-typed and extra fields refused."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify._slack_modal import (
    MODAL_CALLBACK,
    modal_action_id,
    modal_action_value,
    modal_fields,
    modal_view,
    read_modal,
    read_modal_action,
    read_modal_metadata,
)

FORM: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["title", "replicas", "env"],
    "properties": {
        "title": {"type": "string", "maxLength": 40, "description": "Shown <@U1> in the log"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
        "ratio": {"type": "number"},
        "env": {"enum": ["eu", "us"], "title": "Region"},
        "ship_it": {"type": "boolean"},
        "on": {"type": "string", "format": "date"},
        "tier": {"oneOf": [{"const": 1, "title": "Gold"}, {"const": 2, "title": "Silver"}]},
    },
}


def _blocks() -> dict[str, dict[str, Any]]:
    view = modal_view("r1", "p1", "Deploy <!channel>?", modal_fields(FORM), "https://h/r")
    return {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}


def test_a_flat_form_becomes_the_modal_s_inputs() -> None:
    view = modal_view("r1", "p1", "Deploy <!channel>?", modal_fields(FORM), "https://h/r")
    assert view["type"] == "modal" and view["callback_id"] == MODAL_CALLBACK
    assert "<!channel>" not in view["blocks"][0]["text"]["text"]  # S-1: no mention
    assert read_modal_metadata(view) == ("r1", "p1", "https://h/r")
    b = _blocks()
    assert [b[k]["element"]["type"] for k in sorted(b)] == [
        "plain_text_input",
        "number_input",
        "number_input",
        "static_select",
        "radio_buttons",
        "datepicker",
        "static_select",
    ]
    assert b["f0"]["element"]["max_length"] == 40 and not b["f0"]["optional"]
    assert "<@U1>" not in b["f0"]["hint"]["text"]
    assert b["f1"]["element"]["is_decimal_allowed"] is False
    assert b["f2"]["element"]["is_decimal_allowed"] is True and b["f2"]["optional"]
    assert b["f3"]["label"]["text"] == "Region"
    assert [o["text"]["text"] for o in b["f3"]["element"]["options"]] == ["eu", "us"]
    assert b["f4"]["label"]["text"] == "Ship it"  # the name in words
    assert [o["text"]["text"] for o in b["f6"]["element"]["options"]] == ["Gold", "Silver"]
    assert all(len(o["value"]) <= 3 for o in b["f6"]["element"]["options"])  # an index


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({"type": "object", "properties": {"a": {"type": "object"}}}, id="nested"),
        pytest.param({"type": "object", "properties": {"a": {"type": "array"}}}, id="array"),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string", "format": "email"}}},
            id="format",
        ),
        pytest.param({"type": "object", "properties": {}}, id="empty"),
        pytest.param(
            {"type": "object", "properties": {f"a{i}": {"type": "string"} for i in range(21)}},
            id="too-many",
        ),
        pytest.param({"type": "object", "required": ["b"], "properties": {"a": {}}}, id="odd"),
        pytest.param(None, id="none"),
    ],
)
def test_what_does_not_fit_a_modal(schema: Any) -> None:
    assert modal_fields(schema) == ()


def _text(v: str) -> dict[str, Any]:
    return {"value": {"type": "plain_text_input", "value": v}}


def _number(v: str | None) -> dict[str, Any]:
    return {"value": {"type": "number_input", "value": v}}


def _pick(kind: str, index: str | None) -> dict[str, Any]:
    chosen = None if index is None else {"value": index}
    return {"value": {"type": kind, "selected_option": chosen}}


def test_a_submission_is_the_payload_exactly() -> None:
    values = {
        "f0": _text("Build 41"),
        "f1": _number("3"),
        "f2": _number("0.25"),
        "f3": _pick("static_select", "1"),
        "f4": _pick("radio_buttons", "1"),
        "f5": {"value": {"type": "datepicker", "selected_date": "2026-03-01"}},
        "f6": _pick("static_select", "0"),
    }
    payload, errors = read_modal(modal_fields(FORM), values)
    assert errors == {}
    assert payload == {
        "title": "Build 41",
        "replicas": 3,
        "ratio": 0.25,
        "env": "us",
        "ship_it": False,
        "on": "2026-03-01",
        "tier": 1,
    }
    assert type(payload["replicas"]) is int and type(payload["tier"]) is int
    # the optional ones left empty are absent
    empty = {
        "f0": _text("x"),
        "f1": _number("3"),
        "f2": _number(None),
        "f3": _pick("static_select", "0"),
        "f4": _pick("radio_buttons", None),
        "f5": {"value": {"type": "datepicker", "selected_date": None}},
    }
    assert read_modal(modal_fields(FORM), empty) == (
        {"title": "x", "replicas": 3, "env": "eu"},
        {},
    )


def test_wrong_typed_and_extra_fields_are_refused() -> None:
    fields = modal_fields(FORM)
    values = {
        "f0": {"value": {"type": "number_input", "value": "3"}},  # not the form's input
        "f1": _number("2.5"),
        "f2": _number("lots"),
        "f3": _pick("static_select", "7"),
        "f5": {"value": {"type": "datepicker", "selected_date": "2026-02-30"}},
    }
    payload, errors = read_modal(fields, values)
    assert set(errors) == {"f0", "f1", "f2", "f3", "f5"}
    assert errors["f1"] == "Enter a whole number."
    with pytest.raises(NotifyRefused, match="fields the form does not"):
        read_modal(fields, {**values, "f99": _text("x")})
    with pytest.raises(NotifyRefused):
        read_modal(fields, {"f0": {"value": {}, "other": {}}})
    _, missing = read_modal(fields, {})
    assert missing == {
        "f0": "This is required.",
        "f1": "This is required.",
        "f3": "This is required.",
    }


def test_the_answer_button_names_the_prompt_and_nothing_else_passes() -> None:
    action = {"action_id": modal_action_id("r1", "p1"), "value": modal_action_value("r1", "p1")}
    assert read_modal_action(action) == ("r1", "p1")
    forged = {**action, "value": modal_action_value("r1", "p2")}
    with pytest.raises(NotifyRefused):
        read_modal_action(forged)
    with pytest.raises(NotifyRefused):
        read_modal_metadata({"callback_id": "other", "private_metadata": "[]"})
