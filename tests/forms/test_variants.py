"""Variant options are built when needed: the selected option is shown open; an
optional variant whose first option an enclosing variant is already building (a
recursive schema) starts with none chosen, so recursive schemas stay small."""

from __future__ import annotations

from typing import Any

from hitl_nb.forms import MISSING, Form, render_text

#: A JSON-e-like template: every ``else`` is again a template, or a list, or a scalar.
TEMPLATE: dict[str, Any] = {
    "$defs": {
        "value": {
            "oneOf": [
                {"$ref": "#"},
                {"type": "array", "items": {"$ref": "#"}},
                {"type": ["null", "boolean", "number", "string"]},
            ]
        }
    },
    "title": "Template",
    "type": "object",
    "properties": {
        "if": {"type": "string"},
        "then": {"$ref": "#/$defs/value"},
        "else": {"$ref": "#/$defs/value"},
        "merge": {"type": "array", "items": {"$ref": "#"}},
    },
}


def test_a_recursive_optional_variant_builds_only_what_is_shown():
    form = Form(TEMPLATE)
    # each level used to open option 1 (a template) again, to the 2,500-field cap
    assert form.ctx.fields_built < 20
    # `then` and `else` would draw the template they are in again: none chosen
    assert "Then: (none chosen)" in render_text(form.root, "", "")
    value = {"if": "x", "else": {"if": "y", "else": {"else": [{"then": 3}, {}]}}}
    form.value = value
    assert form.value == value and form.is_valid
    then = Form(TEMPLATE).root.fields["then"]
    assert then.current is None and then.children() == [] and then.get() is MISSING
    then.selector.value = 0  # the person picks "a template": it is built and shown open
    assert then.children()[0].built
    assert then.children()[0].fields["else"].current is None  # and so on, one at a time
    then.selector.value = 1  # "a list"
    assert then.children()[0].kind == "array"


def test_a_selected_variants_section_is_visible():
    cat = {"title": "Cat", "type": "object", "properties": {"lives": {"type": "integer"}}}
    dog = {"title": "Dog", "type": "object", "properties": {"good": {"type": "boolean"}}}
    form = Form({"type": "object", "properties": {"pet": {"anyOf": [cat, dog]}}})
    pet = form.root.fields["pet"]
    option = pet.children()[0]
    assert option.built and option.toggle is None  # open, under the selector
    assert form.value == {}  # shown is not sent
    pet.selector.value = 1
    assert pet.children()[0].built and form.value == {}
    form.field("/pet/good").input.value = True
    assert form.value == {"pet": {"good": True}}


def test_a_required_variant_shows_its_option_open():
    cat = {"type": "object", "properties": {"lives": {"type": "integer"}}, "required": ["lives"]}
    form = Form({"type": "object", "properties": {"pet": {"anyOf": [cat]}}, "required": ["pet"]})
    assert form.root.fields["pet"].built
    form = Form(
        {
            "type": "object",
            "properties": {"pet": {"anyOf": [cat, {"type": "string"}]}},
            "required": ["pet"],
        }
    )
    assert form.root.fields["pet"].children()[0].built


def test_a_schema_that_allows_any_value_is_a_choice_of_type():
    # SchemaStore: `"reactNative": {"description": "..."}`, `"digest": true` were JSON boxes
    schema = {"type": "object", "properties": {"a": {"description": "anything"}, "b": True}}
    form = Form(schema)
    kinds: dict[str, list[str]] = {}
    for f in form.root.walk():
        kinds.setdefault(f.pointer, []).append(f.kind)
    assert kinds["/a"] == kinds["/b"] == ["nullable", "variant", "string"]
    for value in ("x", "", 1, 1.0, -0.0, True, False, None, [], {}, {"": [1, "2", None]}):
        form.value = {"a": value, "b": value}
        back = form.value
        assert back == {"a": value, "b": value} and form.is_valid
        assert type(back["a"]) is type(value) and type(back["b"]) is type(value)
    assert form.field("/a").kind == "json"  # a list or an object of anything: JSON text
    form = Form(schema)
    option = form.field("/a")
    assert option.kind == "string"
    option.input.value = "typed"
    assert form.value == {"a": "typed"}
