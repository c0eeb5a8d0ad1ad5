"""Forms read schemas as their draft wrote them (04, 06, 07, 2019-09), draw
``patternProperties`` as a key/value editor, and ignore annotations and vendor
keywords instead of turning a subtree into a JSON box."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.forms import Form
from hitl_nb.validation import validate_payload

D4 = "http://json-schema.org/draft-04/schema#"
D6 = "http://json-schema.org/draft-06/schema#"
D7 = "http://json-schema.org/draft-07/schema#"


def keywords(form: Form) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in form.errors:
        out.setdefault(e.path, []).append(e.keyword)
    return out


def kinds(form: Form) -> dict[str, str]:
    return {f.pointer: f.kind for f in form.root.walk() if f.pointer}


def fill(schema: dict[str, Any], value: Any) -> Form:
    assert validate_payload(schema, value) == []
    form = Form(schema)
    form.value = value
    assert form.value == value and form.is_valid, form.errors
    return form


@pytest.mark.parametrize("dialect", [D4, D6, D7])
def test_draft_ids_and_definitions_draw_widgets(dialect):
    key = "id" if dialect == D4 else "$id"
    schema = {
        "$schema": dialect,
        key: "https://example.com/s.json",
        "type": "object",
        "definitions": {"name": {key: "#name", "type": "string", "minLength": 1}},
        "properties": {"name": {"$ref": "#/definitions/name"}, "n": {"type": "integer"}},
    }
    form = fill(schema, {"name": "x", "n": 1})
    assert kinds(form) == {"/name": "string", "/n": "number"}


@pytest.mark.parametrize("dialect", [D4, D7])
def test_a_reference_by_the_roots_own_uri_is_local(dialect):
    # Backstage's catalog-info: `catalog-info.json#/definitions/entity` beside its `$id`
    key = "id" if dialect == D4 else "$id"
    schema = {
        "$schema": dialect,
        key: "https://example.com/schemas/s.json",
        "type": "object",
        "definitions": {"name": {"type": "string"}},
        "properties": {"name": {"$ref": "s.json#/definitions/name"}},
    }
    form = fill(schema, {"name": "x"})
    assert kinds(form) == {"/name": "string"}


def test_draft_04_boolean_exclusive_bounds_are_bounds():
    schema = {
        "$schema": D4,
        "type": "object",
        "properties": {
            "above": {"type": "number", "minimum": 5, "exclusiveMinimum": True},
            "below": {"type": "number", "maximum": 5, "exclusiveMaximum": False},
        },
    }
    form = Form(schema)
    assert form.field("/above").input.placeholder == "number > 5"
    assert form.field("/below").input.placeholder == "number ≤ 5"
    form.field("/above").input.value = "5"
    assert [(e.path, e.keyword, e.message) for e in form.errors] == [
        ("/above", "minimum", "must be greater than 5")  # draft 4 names the keyword so
    ]
    fill(schema, {"above": 5.5, "below": 5})


def test_draft_07_tuples_are_fixed_positions_and_additional_items_the_rest():
    schema = {
        "$schema": D7,
        "type": "object",
        "properties": {
            "closed": {
                "type": "array",
                "items": [{"type": "integer"}, {"type": "string"}],
                "additionalItems": False,
            },
            "open": {
                "type": "array",
                "items": [{"type": "integer"}],
                "additionalItems": {"type": "boolean"},
            },
            "ignored": {"type": "array", "items": {"type": "string"}, "additionalItems": False},
        },
    }
    form = fill(schema, {"closed": [1, "a"], "open": [1, True, False], "ignored": ["a", "b"]})
    closed, opened = form.field("/closed"), form.field("/open")
    assert closed.add is None and len(closed.rows) == 2
    assert [r.field.kind for r in opened.rows] == ["number", "boolean", "boolean"]
    with pytest.raises(ValueError, match="at most 2"):
        form.value = {"closed": [1, "a", 3]}
    fill(schema, {"closed": [1]})


def test_dependencies_in_both_forms_require_and_show_members():
    schema = {
        "$schema": D7,
        "type": "object",
        "properties": {"card": {"type": "string"}, "cvv": {"type": "string"}},
        "dependencies": {
            "card": ["cvv"],
            "cvv": {"properties": {"expiry": {"type": "string"}}, "required": ["expiry"]},
        },
    }
    form = Form(schema)
    assert form.root.visible == ["card", "cvv"]
    form.field("/card").input.value = "4111"
    assert form.field("/cvv").required
    form.field("/cvv").input.value = "123"
    assert form.root.visible == ["card", "cvv", "expiry"] and form.field("/expiry").required
    assert keywords(form) == {"/expiry": ["required"]}
    form.field("/expiry").input.value = "12/30"
    assert form.value == {"card": "4111", "cvv": "123", "expiry": "12/30"} and form.is_valid


def test_dependent_schemas_show_their_members_like_dependencies():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "dependentSchemas": {"a": {"properties": {"b": {"type": "integer"}}}},
    }
    fill(schema, {"a": "x", "b": 2})
    assert Form(schema).root.visible == ["a"]


def test_annotations_and_vendor_keywords_never_make_a_json_box():
    schema = {
        "type": "object",
        "$comment": "written for an editor",
        "properties": {
            "name": {
                "type": "string",
                "markdownDescription": "The **name** shown to people",
                "deprecationMessage": "use title",
                "x-intellij-html-description": "<b>name</b>",
                "errorMessage": "a name please",
                "contentSchema": {},
                "tsType": "string",
            },
            "size": {"type": "integer", "x-custom": {"anything": 1}, "example": 3},
        },
    }
    form = fill(schema, {"name": "n", "size": 2})
    assert kinds(form) == {"/name": "string", "/size": "number"}
    assert form.field("/name").help == "The **name** shown to people"  # as text


def test_pattern_properties_are_a_key_value_editor_checked_against_the_patterns():
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "patternProperties": {"^x-": {"type": "integer"}, "^s-": {"type": "string"}},
        "additionalProperties": False,
    }
    form = fill(schema, {"name": "n", "x-a": 1, "s-b": "t"})
    editor = form.root.map
    assert [(k.value, f.kind) for k, f, _b in editor.rows] == [("x-a", "number"), ("s-b", "string")]
    editor.add.click()
    key, value, _box = editor.rows[-1]
    key.value = "other"
    value.input.value = "3"
    assert keywords(form) == {"/other": ["input", "additionalProperties"]}
    key.value = "s-c"  # the name calls for another schema: the value is redrawn
    assert editor.rows[-1][1].kind == "string"
    editor.rows[-1][1].input.value = "3"
    assert form.value == {"name": "n", "x-a": 1, "s-b": "t", "s-c": "3"} and form.is_valid
    with pytest.raises(ValueError, match="not allowed"):
        form.value = {"other": 1}
    assert form.value == {"name": "n", "x-a": 1, "s-b": "t", "s-c": "3"}


def test_pattern_properties_beside_additional_properties_schema():
    schema = {
        "type": "object",
        "patternProperties": {"^n_": {"type": "number"}},
        "additionalProperties": {"type": "string"},
    }
    form = fill(schema, {"n_a": 1.5, "b": "x"})
    assert [f.kind for _k, f, _b in form.root.map.rows] == ["number", "string"]
