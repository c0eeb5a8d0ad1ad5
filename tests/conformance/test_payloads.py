"""The harness's answers: a valid payload validates, an invalid one does not (checked)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hitl_nb.conformance._payloads import EXTRA_MEMBER, invalid_payload, valid_payload
from hitl_nb.validation import validate_payload

# These tests check verdicts, not speed: a loaded CI machine must not turn a valid
# payload into a timeout issue, so validation gets a generous budget here.
SLACK = 30.0

APPROVAL = {
    "type": "object",
    "additionalProperties": False,
    "required": ["approve"],
    "properties": {"approve": {"type": "boolean"}, "comment": {"type": "string"}},
}

SCHEMAS = [
    pytest.param(APPROVAL, id="approval"),
    pytest.param(
        {
            "type": "object",
            "required": ["when", "size", "ratio", "tags", "owner", "kind"],
            "$defs": {
                "person": {
                    "type": "object",
                    "required": ["email"],
                    "properties": {"email": {"type": "string", "format": "email"}},
                }
            },
            "properties": {
                "when": {"type": "string", "format": "date-time"},
                "size": {"type": "integer", "minimum": 3, "maximum": 9, "multipleOf": 3},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 2},
                "owner": {"$ref": "#/$defs/person"},
                "kind": {"oneOf": [{"const": "x"}, {"const": "y"}]},
            },
        },
        id="formats-bounds-refs",
    ),
    pytest.param(
        {
            "type": "object",
            "allOf": [
                {"required": ["a"], "properties": {"a": {"type": "string", "minLength": 4}}},
                {"required": ["b"], "properties": {"b": {"type": ["null", "integer"]}}},
            ],
        },
        id="allOf-nullable",
    ),
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_valid_validates_and_invalid_does_not(schema: dict[str, Any]) -> None:
    valid = valid_payload(schema)
    assert valid is not None
    assert validate_payload(schema, valid, budget=SLACK) == []
    broken = invalid_payload(schema, valid)
    assert broken is not None
    payload, how = broken
    assert validate_payload(schema, payload) != []
    assert how


def test_how_it_was_broken_is_said() -> None:
    assert invalid_payload(APPROVAL) == ({}, "required member 'approve' left out")
    closed = {"type": "object", "additionalProperties": False}
    assert invalid_payload(closed) == ({EXTRA_MEMBER: 1}, f"unknown member {EXTRA_MEMBER!r} added")


def test_a_schema_that_accepts_everything_has_no_invalid_payload() -> None:
    assert valid_payload({"type": "object"}) == {}
    assert invalid_payload({"type": "object"}) is None


def test_an_unsatisfiable_schema_has_no_valid_payload() -> None:
    impossible = {"type": "object", "required": ["a"], "properties": {"a": False}}
    assert valid_payload(impossible) is None


_leaf = st.sampled_from(
    [
        {"type": "boolean"},
        {"type": "string", "minLength": 2, "maxLength": 5},
        {"type": "integer", "minimum": -3, "maximum": 40},
        {"type": "number", "exclusiveMinimum": 1.5},
        {"enum": ["red", "green"]},
        {"type": "string", "format": "date"},
        {"type": "string", "format": "uuid"},
        {"type": "array", "items": {"type": "integer"}, "minItems": 1},
    ]
)


@st.composite
def _object_schemas(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(
        st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), min_size=1, max_size=5, unique=True)
    )
    props = {n: draw(_leaf) for n in names}
    required = draw(st.lists(st.sampled_from(names), unique=True))
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(_object_schemas())
def test_generated_schemas_get_a_valid_and_an_invalid_payload(schema: dict[str, Any]) -> None:
    valid = valid_payload(schema)
    assert valid is not None and validate_payload(schema, valid, budget=SLACK) == []
    broken = invalid_payload(schema, valid)
    assert broken is not None  # every generated schema constrains something
    assert validate_payload(schema, broken[0]) != []
