"""Forms give back exactly what was put in: minimal reproducers of silent data loss.

Each test is a case found on schemas written by others (the JSON Schema Test Suite,
SchemaStore), cut down to its smallest form: a value the validator accepts must come
back from ``form.value`` unchanged (types included) and be called valid, and a value
it refuses must never be "repaired" by the form.
"""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.forms import Form
from hitl_nb.validation import validate_payload

D7 = "http://json-schema.org/draft-07/schema#"


def same(a: Any, b: Any) -> bool:
    """Equality that tells 1 from 1.0 and true from 1."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def round_trip(schema: dict[str, Any], value: Any) -> Form:
    assert validate_payload(schema, value) == []
    form = Form(schema)
    form.value = value
    assert same(form.value, value), form.value
    assert form.is_valid, form.errors
    return form


def test_all_of_with_two_if_then_pairs_keeps_the_active_branchs_members():
    schema = {
        "type": "object",
        "properties": {"kind": {"enum": ["a", "b"]}},
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": "a"}}},
                "then": {"properties": {"x": {"type": "string"}}},
            },
            {
                "if": {"properties": {"kind": {"const": "b"}}},
                "then": {"properties": {"y": {"type": "string"}}},
            },
        ],
    }
    form = round_trip(schema, {"kind": "a", "x": "s"})
    assert form.root.visible == ["kind", "x"]
    round_trip(schema, {"kind": "b", "y": "t"})
    form.field("/kind").input.value = 1  # the person picks "b": x is hidden, y shown
    assert form.root.visible == ["kind", "y"]


def test_a_member_only_an_inactive_branch_declares_is_kept_when_set():
    # valid: without additionalProperties false, x is allowed whatever the kind
    schema = {
        "type": "object",
        "properties": {"kind": {"enum": ["a", "b"]}},
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"properties": {"x": {"type": "string"}}},
    }
    round_trip(schema, {"kind": "b", "x": "s"})


def test_a_draft_07_tuple_under_any_of_is_matched_in_the_roots_dialect():
    schema = {
        "$schema": D7,
        "type": "object",
        "properties": {
            "t": {
                "anyOf": [
                    {"type": "string"},
                    {
                        "type": "array",
                        "items": [{"type": "integer"}, {"type": "string"}],
                        "additionalItems": False,
                    },
                ]
            }
        },
    }
    round_trip(schema, {"t": [1, "a"]})


def test_variant_options_match_without_copying_the_roots_definitions():
    # An option used to be compiled on its own, its $ref inlined and every root
    # definition copied in: past 64 KiB it matched nothing.
    big = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "x" * 300} for i in range(100)},
    }
    schema = {
        "type": "object",
        "$defs": {"big": big},
        "properties": {
            "v": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"z": {"type": "integer"}},
                        "required": ["z"],
                        "additionalProperties": False,
                    },
                    {"$ref": "#/$defs/big"},
                ]
            }
        },
    }
    round_trip(schema, {"v": {"p0": "s"}})
    round_trip(schema, {"v": {"z": 1}})


def test_no_type_is_guessed_for_a_subschema_that_declares_none():
    schema = {"type": "object", "properties": {"x": {"maximum": 3}}}
    round_trip(schema, {"x": "a"})
    round_trip(schema, {"x": 2})
    form = round_trip(schema, {"x": {"deep": [1]}})
    form.value = {"x": 2.5}
    assert same(form.value, {"x": 2.5})


def test_an_empty_string_map_key_is_kept():
    schema = {
        "type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}},
    }
    round_trip(schema, {"m": {"": "v", "k": "w"}})


def test_prefix_items_do_not_pad_a_short_array():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "array", "prefixItems": [{"type": "object"}, {"type": "object"}]}
        },
    }
    round_trip(schema, {"a": [{}]})
    round_trip(schema, {"a": []})
    round_trip(schema, {"a": [{}, {"k": 1}]})


@pytest.mark.parametrize(
    ("sub", "value"),
    [
        ({"const": -2.0}, -2),
        ({"const": 2}, 2.0),
        ({"enum": [0, 1]}, 0.0),
        ({"enum": [0.0, 1]}, 0),
        ({"type": "array", "items": {"enum": [1, 2]}, "x-ui-widget": "checkboxes"}, [1.0]),
    ],
)
def test_numbers_keep_their_representation(sub, value):
    round_trip({"type": "object", "properties": {"c": sub}}, {"c": value})
    round_trip({"type": "object", "properties": {"c": sub}, "required": ["c"]}, {"c": value})


def test_an_invalid_value_is_never_completed_with_invented_members():
    inner = {
        "type": "object",
        "properties": {
            "c": {"const": 1},
            "n": {"type": "null"},
            "a": {"type": "array"},
            "b": {"type": "object"},
        },
        "required": ["c", "n", "a", "b"],
    }
    schema = {"type": "object", "properties": {"o": inner}, "required": ["o"]}
    form = Form(schema)
    form.value = {"o": {}}
    assert form.value == {"o": {}}
    assert not form.is_valid
    missing = {(e.path, e.keyword) for e in form.errors}
    assert missing == {(f"/o/{k}", "required") for k in "cnab"}
    form.value = {}
    assert form.value == {}
    assert {(e.path, e.keyword) for e in form.errors} == {("/o", "required")}


def test_a_missing_required_const_can_be_put_back_by_the_person():
    schema = {
        "type": "object",
        "properties": {"kind": {"const": "approval"}, "a": {"type": "array"}},
        "required": ["kind", "a"],
    }
    form = Form(schema)
    assert form.value == {"kind": "approval", "a": []}  # a fresh form proposes them
    form.value = {}
    assert form.value == {}
    form.field("/kind").include.click()  # the person puts it back
    form.field("/a").add.click()
    form.field("/a/0").input.value = "1"  # an entry of any type: text first
    assert form.value == {"kind": "approval", "a": ["1"]}


def test_a_member_each_branch_declares_differently_is_drawn_by_the_active_branch():
    # GitHub issue forms: `attributes` is closed and different for every `type`
    def branch(kind: str, attribute: str) -> dict[str, Any]:
        return {
            "if": {"properties": {"type": {"const": kind}}},
            "then": {
                "properties": {
                    "attributes": {
                        "type": "object",
                        "properties": {attribute: {"type": "string"}},
                        "additionalProperties": False,
                    }
                }
            },
        }

    schema = {
        "type": "object",
        "properties": {"type": {"enum": ["markdown", "input"]}},
        "required": ["type"],
        "allOf": [branch("markdown", "value"), branch("input", "label")],
    }
    round_trip(schema, {"type": "markdown", "attributes": {"value": "v"}})
    form = round_trip(schema, {"type": "input", "attributes": {"label": "l"}})
    form.field("/type").input.value = 0  # the person picks markdown: its attributes
    assert form.field("/attributes/value").kind == "string"
    form.field("/attributes/value").input.value = "v"
    assert form.value == {"type": "markdown", "attributes": {"value": "v"}} and form.is_valid


def test_a_member_the_branches_fix_to_different_consts_takes_the_values_own():
    # Cloud Run: every `kind` has its own branch, each fixing `kind` to its name; the
    # `if` holds for a section without `kind`, so the first branch drew it
    def branch(kind: str) -> dict[str, Any]:
        return {
            "if": {"properties": {"kind": {"const": kind}}},
            "then": {"properties": {"kind": {"const": kind}, kind: {"type": "string"}}},
        }

    schema = {"type": "object", "allOf": [branch("Revision"), branch("Service")]}
    round_trip(schema, {"kind": "Service", "Service": "s"})
    round_trip(schema, {"kind": "Revision", "Revision": "r"})
    # specmatic: if `type` is "test" then one schema, else another
    options = {
        "type": "object",
        "required": ["type"],
        "if": {"properties": {"type": {"const": "test"}}},
        "then": {"properties": {"type": {"const": "test"}, "t": {"type": "integer"}}},
        "else": {"properties": {"type": {"enum": ["mock", "stub"]}, "m": {"type": "integer"}}},
    }
    round_trip(options, {"type": "mock", "m": 1})
    round_trip(options, {"type": "test", "t": 2})
