"""Forms: one test per row of the coverage table in docs/forms.md (fields and hints)."""

from __future__ import annotations

import copy
import datetime as dt

import ipywidgets as W
import pytest

from hitl_nb.forms import MISSING, Form


def obj(props: dict, required: list[str] | None = None, **extra: object) -> dict:
    return {"type": "object", "properties": props, "required": required or [], **extra}


def issues(form: Form) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in form.errors:
        out.setdefault(e.path, []).append(e.keyword)
    return out


# --- strings ---------------------------------------------------------------------------


def test_string_is_a_text_input_and_left_out_until_typed():
    form = Form(obj({"name": {"type": "string"}}))
    assert isinstance(form.field("/name").input, W.Text)
    assert form.value == {}
    form.field("/name").input.value = "Ada"
    assert form.value == {"name": "Ada"}


def test_textarea_for_long_max_length_or_hint_with_rows():
    form = Form(
        obj({"a": {"type": "string", "maxLength": 201}, "b": {"type": "string"}}),
        ui={"b": {"ui:widget": "textarea", "ui:rows": 7}},
    )
    assert isinstance(form.field("/a").input, W.Textarea)
    assert isinstance(form.field("/b").input, W.Textarea)
    assert form.field("/b").input.rows == 7


def test_min_max_length_and_pattern_give_live_field_errors():
    form = Form(
        obj({"code": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^[A-Z]+$"}})
    )
    code = form.field("/code")
    code.input.value = "ab"
    assert set(issues(form)["/code"]) == {"minLength", "pattern"}
    assert len(code.messages) == 2
    code.input.value = "ABCDEFG"
    assert issues(form)["/code"] == ["maxLength"]
    code.input.value = "ABC"
    assert form.is_valid and code.messages == []


def test_date_uses_a_date_picker_and_emits_iso_dates():
    form = Form(obj({"day": {"type": "string", "format": "date"}}))
    day = form.field("/day")
    assert isinstance(day.input, W.DatePicker)
    day.input.value = dt.date(2024, 2, 29)
    assert form.value == {"day": "2024-02-29"}
    form.value = {"day": "2023-02-29"}  # not a date: kept as given, flagged by the validator
    assert form.value == {"day": "2023-02-29"} and issues(form) == {"/day": ["format"]}
    assert "kept as given" in day.note.value
    day.input.value = dt.date(2023, 3, 1)  # picking a date replaces it
    assert form.value == {"day": "2023-03-01"} and "kept" not in day.note.value


def test_date_time_keeps_its_timezone_and_emits_rfc3339():
    form = Form(obj({"at": {"type": "string", "format": "date-time"}}))
    at = form.field("/at")
    assert isinstance(at.input, W.NaiveDatetimePicker) and isinstance(at.zone, W.Dropdown)
    at.zone.value = "+02:00"
    at.input.value = dt.datetime(2024, 5, 1, 12, 30)
    assert form.value == {"at": "2024-05-01T12:30:00+02:00"}
    at.zone.value = "+00:00"
    assert form.value == {"at": "2024-05-01T12:30:00Z"}
    form.value = {"at": "2026-12-01T09:30:00+05:45"}  # shown in its own zone, not UTC
    assert at.input.value == dt.datetime(2026, 12, 1, 9, 30) and at.zone.value == "+05:45"
    at.input.value = dt.datetime(2026, 12, 1, 10, 0)  # the person changes the time only
    assert form.value == {"at": "2026-12-01T10:00:00+05:45"}
    form.value = {"at": "2024-05-01T10:00:00+01:23"}  # an offset no zone list has
    assert at.zone.value == "+01:23" and form.value == {"at": "2024-05-01T10:00:00+01:23"}
    form.value = {"at": "2024-05-01t10:00:00.123456789z"}  # kept exactly as given
    assert form.value == {"at": "2024-05-01t10:00:00.123456789z"} and form.is_valid
    form.value = {"at": "2016-12-31T23:59:60Z"}  # a leap second: no picker shows it
    assert form.value == {"at": "2016-12-31T23:59:60Z"}  # kept; the validator judges it


def test_time_gets_a_time_picker_with_its_timezone():
    form = Form(obj({"at": {"type": "string", "format": "time"}}))
    at = form.field("/at")
    assert isinstance(at.input, W.TimePicker) and at.input.step == 1
    form.value = {"at": "10:20:30+01:00"}
    assert at.input.value == dt.time(10, 20, 30) and at.zone.value == "+01:00"
    assert form.value == {"at": "10:20:30+01:00"} and form.is_valid
    at.input.value = dt.time(11, 0, 5)
    assert form.value == {"at": "11:00:05+01:00"}
    at.zone.value = "+00:00"
    assert form.value == {"at": "11:00:05Z"} and form.is_valid
    form.value = {"at": "25:00:00Z"}  # no time: kept as given, flagged by the validator
    assert form.value == {"at": "25:00:00Z"} and issues(form) == {"/at": ["format"]}


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        pytest.param("email", "o'brien+tag@例え.jp", "no-at-sign", id="email"),
        pytest.param("uri", "urn:isbn:0451450523", "not a uri", id="uri"),
        pytest.param("uuid", "f7d4b1c0-9b25-4e8c-a4ce-3d6a51e8a772", "f7d4b1c0", id="uuid"),
    ],
)
def test_formats_are_checked_by_the_validators_format_checker(fmt, good, bad):
    form = Form(obj({"x": {"type": "string", "format": fmt}}))
    form.field("/x").input.value = good
    assert form.is_valid, form.errors
    form.field("/x").input.value = bad
    assert issues(form) == {"/x": ["format"]}


# --- enums, consts -----------------------------------------------------------------------


def test_enum_is_a_dropdown_with_nothing_chosen():
    form = Form(obj({"c": {"enum": ["red", 2, None]}}, ["c"]))
    c = form.field("/c")
    assert isinstance(c.input, W.Dropdown) and c.input.value is None
    assert form.value == {}
    c.input.value = 2
    assert form.value == {"c": None}
    c.input.value = 1
    assert form.value == {"c": 2}


def test_enum_radio_and_labels_by_hint():
    schema = obj({"c": {"type": "string", "enum": ["y", "n"], "x-ui-widget": "radio"}})
    form = Form(schema, ui={"c": {"ui:enumNames": ["Yes please", "No thanks"]}})
    c = form.field("/c")
    assert isinstance(c.input, W.RadioButtons)
    assert [label for label, _ in c.input.options] == ["Yes please", "No thanks"]
    c.input.value = 1
    assert form.value == {"c": "n"}


def test_const_is_read_only_text_and_sent_as_shown():
    form = Form(obj({"kind": {"const": "approval"}, "opt": {"const": 3}}, ["kind"]))
    kind = form.field("/kind")
    assert isinstance(kind.input, W.HTML) and kind.input.description == "Kind *"
    assert ">approval<" in kind.input.value  # "Kind: approval", as text
    assert form.value == {"kind": "approval", "opt": 3}  # what is shown is sent
    with pytest.raises(ValueError, match="fixed"):
        form.value = {"kind": "other"}
    form.value = {"kind": "approval"}  # leaving the optional one out, from code
    assert form.value == {"kind": "approval"} and "left out" in form.field("/opt").input.value


# --- numbers -----------------------------------------------------------------------------


def test_number_bounds_are_field_errors_never_clamped():
    form = Form(
        obj(
            {
                "n": {"type": "number", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 0.5},
                "i": {"type": "integer", "exclusiveMinimum": 0, "maximum": 5},
            }
        )
    )
    form.field("/n").input.value = "10"
    form.field("/i").input.value = "0"
    assert form.value == {"n": 10, "i": 0}  # as typed
    assert issues(form) == {"/n": ["exclusiveMaximum"], "/i": ["exclusiveMinimum"]}
    form.field("/n").input.value = "2.25"
    form.field("/i").input.value = "2.5"
    assert issues(form) == {"/n": ["multipleOf"], "/i": ["type"]}
    form.field("/n").input.value = "abc"
    assert issues(form)["/n"] == ["input"]
    assert form.field("/n").messages == ["Enter a number (“abc” is not one)"]
    form.field("/n").input.value = "nan"
    assert issues(form)["/n"] == ["input"]
    form.field("/n").input.value = "1e3"
    form.field("/i").input.value = "5"
    assert form.value == {"n": 1000.0, "i": 5} and issues(form) == {"/n": ["exclusiveMaximum"]}


def test_slider_only_by_hint_and_unset_until_moved():
    schema = obj(
        {
            "s": {"type": "integer", "minimum": 1, "maximum": 9},
            "t": {"type": "integer", "minimum": 1, "maximum": 9},
        }
    )
    form = Form(schema, ui={"s": {"ui:widget": "range"}})
    assert isinstance(form.field("/s").input, W.IntSlider)
    assert isinstance(form.field("/t").input, W.Text)
    assert form.value == {}
    form.field("/s").input.value = 4
    assert form.value == {"s": 4}
    with pytest.raises(ValueError, match="range"):
        form.value = {"s": 12}


# --- booleans ----------------------------------------------------------------------------


def test_optional_boolean_is_a_checkbox_left_out_until_touched():
    form = Form(obj({"b": {"type": "boolean"}}))
    b = form.field("/b")
    assert isinstance(b.input, W.Checkbox)
    assert form.value == {}
    b.input.value = True
    b.input.value = False
    assert form.value == {"b": False}


def test_required_boolean_without_default_must_be_chosen():
    form = Form(obj({"ok": {"type": "boolean"}}, ["ok"]))
    ok = form.field("/ok")
    assert isinstance(ok.input, W.RadioButtons) and ok.input.value is None
    assert form.value == {} and not form.is_valid
    ok.input.value = 1  # "No"
    assert form.value == {"ok": False} and form.is_valid


def test_required_boolean_with_default_is_a_prefilled_checkbox():
    form = Form(obj({"ok": {"type": "boolean", "default": True}}, ["ok"]))
    assert isinstance(form.field("/ok").input, W.Checkbox)
    assert form.value == {"ok": True}


# --- objects -----------------------------------------------------------------------------


def test_nested_required_object_is_open_optional_one_closed_and_lazy():
    schema = obj(
        {
            "addr": obj({"city": {"type": "string"}}, ["city"]),
            "extra": obj({"note": {"type": "string"}}),
        },
        ["addr"],
    )
    form = Form(schema)
    addr, extra = form.root.fields["addr"], form.root.fields["extra"]
    assert addr.built and not addr.collapsed
    assert not extra.built and extra.collapsed
    assert form.value == {"addr": {}}
    assert issues(form) == {"/addr/city": ["required"]}
    assert addr.toggle is None  # a required section is always open, under its title
    assert extra.toggle.description == "Add extra" and extra.body.layout.display == "none"
    form.field("/extra/note")  # opening from code (to reach a field) is not answering
    assert extra.built and not extra.collapsed and form.value == {"addr": {}}
    form.field("/extra/note").input.value = "hi"
    assert form.value == {"addr": {}, "extra": {"note": "hi"}}
    assert extra.toggle.description == "Remove extra"
    extra.toggle.click()  # "Remove extra": nothing of it is sent
    assert extra.collapsed and extra.body.layout.display == "none"
    assert form.value == {"addr": {}} and extra.toggle.description == "Add extra"
    extra.toggle.click()  # "Add extra": the person answers with the section
    assert form.value == {"addr": {}, "extra": {}} and form.field("/extra/note").value is MISSING


def test_required_members_are_marked_in_text():
    form = Form(obj({"a": {"type": "string", "title": "Alpha"}, "b": {"type": "string"}}, ["a"]))
    assert form.field("/a").input.description == "Alpha *"
    assert form.field("/b").input.description == "B"  # the key made readable
    assert "Alpha *" in form.to_text()


# --- arrays ------------------------------------------------------------------------------


def test_array_of_primitives_add_remove_reorder_and_bounds():
    schema = obj(
        {"tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3}},
        ["tags"],
    )
    form = Form(schema)
    tags = form.root.fields["tags"]
    assert len(tags.rows) == 2  # minItems entries ready
    assert issues(form)["/tags"].count("input") == 2  # two empty entries
    tags.rows[0].field.input.value = "a"
    tags.rows[1].field.input.value = "b"
    tags.add.click()
    assert tags.add.disabled  # maxItems reached
    tags.rows[2].field.input.value = "c"
    assert form.value == {"tags": ["a", "b", "c"]}
    tags.rows[2].up.click()
    assert form.value == {"tags": ["a", "c", "b"]}
    tags.rows[0].remove.click()
    tags.rows[0].remove.click()
    assert form.value == {"tags": ["b"]}
    assert issues(form) == {"/tags": ["minItems"]}
    assert not tags.add.disabled


def test_array_of_objects_routes_errors_to_the_entry_fields():
    item = obj({"n": {"type": "integer"}, "s": {"type": "string"}}, ["n"])
    form = Form(obj({"rows": {"type": "array", "items": item}}))
    rows = form.root.fields["rows"]
    rows.add.click()
    rows.add.click()
    rows.rows[1].field.fields["n"].input.value = "x"
    rows.rows[0].field.fields["n"].input.value = "1"
    assert form.value == {"rows": [{"n": 1}, {}]}
    assert issues(form) == {"/rows/1/n": ["input", "required"]}
    assert any("Enter a number" in m for m in rows.rows[1].field.fields["n"].messages)


def test_prefix_items_tuple_keeps_positions():
    schema = obj(
        {
            "pt": {
                "type": "array",
                "prefixItems": [{"type": "number"}, {"type": "string"}],
                "items": False,
            }
        }
    )
    form = Form(schema)
    pt = form.root.fields["pt"]
    assert len(pt.rows) == 2 and pt.add is None
    assert form.value == {}
    pt.rows[1].field.input.value = "x"
    assert issues(form) == {"/pt": ["input"]}  # position 1 empty before a filled one
    pt.rows[0].field.input.value = "1.5"
    assert form.value == {"pt": [1.5, "x"]} and form.is_valid
    with pytest.raises(ValueError, match="at most 2"):
        form.value = {"pt": [1, "a", 3]}


def test_unique_items_keeps_order_and_flags_the_duplicate_entry():
    form = Form(obj({"u": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}}))
    form.value = {"u": [3, 1, 3]}
    assert form.value == {"u": [3, 1, 3]}
    assert issues(form) == {"/u/2": ["uniqueItems"]}
    assert form.root.fields["u"].rows[2].field.messages


# --- references, combinators ------------------------------------------------------------


def test_local_refs_and_recursive_schemas_are_built_lazily():
    schema = {
        "$defs": {
            "node": obj({"name": {"type": "string"}, "child": {"$ref": "#/$defs/node"}}, ["name"])
        },
        "$ref": "#/$defs/node",
    }
    form = Form(schema)
    child = form.root.fields["child"]
    assert not child.built
    value = {"name": "a", "child": {"name": "b", "child": {"name": "c"}}}
    form.value = value
    assert form.value == value
    assert not form.field("/child/child/child").built


def test_one_of_const_discriminator_picks_the_variant():
    cat = obj({"kind": {"const": "cat"}, "lives": {"type": "integer"}}, ["kind"], title="Cat")
    dog = obj({"kind": {"const": "dog"}, "good": {"type": "boolean"}}, ["kind"], title="Dog")
    bird = obj({"kind": {"const": "bird"}}, ["kind"])
    form = Form(obj({"pet": {"oneOf": [cat, dog, bird]}}, ["pet"]))
    pet = form.root.fields["pet"]
    assert [t for t, _ in pet.selector.options] == ["Cat", "Dog", "bird"]
    assert pet.disc == "kind"
    form.value = {"pet": {"kind": "dog", "good": True}}
    assert pet.selector.value == 1
    assert form.value == {"pet": {"kind": "dog", "good": True}}
    assert set(pet.built) == {0, 1}  # the bird variant was never built


def test_switching_variants_keeps_what_still_fits():
    a = obj(
        {"kind": {"const": "a"}, "name": {"type": "string"}, "size": {"type": "integer"}}, ["kind"]
    )
    b = obj(
        {
            "kind": {"const": "b"},
            "name": {"type": "string", "maxLength": 3},
            "size": {"type": "string"},
        },
        ["kind"],
    )
    form = Form(obj({"v": {"anyOf": [a, b]}}, ["v"]))
    form.value = {"v": {"kind": "a", "name": "abc", "size": 4}}
    form.root.fields["v"].selector.value = 1
    assert form.value == {"v": {"kind": "b", "name": "abc"}}  # size 4 does not fit b


def test_primitive_type_list_is_a_variant():
    form = Form(obj({"x": {"type": ["string", "integer"]}}))
    form.value = {"x": 5}
    assert form.root.fields["x"].selector.value == 1 and form.value == {"x": 5}
    form.root.fields["x"].selector.value = 0
    assert form.value == {}  # 5 is not a string: nothing carried over


def test_all_of_is_merged():
    schema = {
        "allOf": [
            obj({"a": {"type": "string"}}, ["a"]),
            obj({"b": {"type": "integer", "minimum": 1}}, ["b"]),
            {"properties": {"b": {"maximum": 3}}},
        ]
    }
    form = Form(schema)
    assert list(form.root.fields) == ["a", "b"]
    assert form.field("/a").required and form.field("/b").required
    form.value = {"a": "x", "b": 4}
    assert issues(form) == {"/b": ["maximum"]}


def test_if_then_else_shows_the_active_branch():
    schema = obj(
        {"mode": {"enum": ["email", "phone"]}},
        ["mode"],
        **{
            "if": {"properties": {"mode": {"const": "email"}}},
            "then": {"properties": {"email": {"type": "string"}}, "required": ["email"]},
            "else": {"properties": {"phone": {"type": "string"}}},
        },
    )
    form = Form(schema)
    form.field("/mode").input.value = 0
    assert form.root.visible == ["mode", "email"]
    assert form.field("/email").required
    form.field("/email").input.value = "a@b"
    form.field("/mode").input.value = 1
    assert form.root.visible == ["mode", "phone"]
    assert form.value == {"mode": "phone"}  # the hidden branch's member is not sent


def test_dependent_required_marks_members_required_when_triggered():
    schema = obj(
        {"card": {"type": "string"}, "cvv": {"type": "string"}}, dependentRequired={"card": ["cvv"]}
    )
    form = Form(schema)
    assert not form.field("/cvv").required
    form.field("/card").input.value = "4111"
    assert form.field("/cvv").required
    assert issues(form) == {"/cvv": ["dependentRequired"]}


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({"type": ["integer", "null"]}, id="type-list"),
        pytest.param({"anyOf": [{"type": "integer"}, {"type": "null"}]}, id="anyOf-null"),
    ],
)
def test_nullable_offers_null_apart_from_leaving_out(schema):
    form = Form(obj({"n": schema}))
    n = form.root.fields["n"]
    assert form.value == {}
    n.check.value = True
    assert form.value == {"n": None}
    n.check.value = False
    n.inner.input.value = "7"
    assert form.value == {"n": 7}


def test_additional_properties_schema_gets_a_key_value_editor():
    form = Form(obj({"fixed": {"type": "string"}}, additionalProperties={"type": "integer"}))
    editor = form.root.map
    assert editor is not None and editor.add is not None
    editor.add.click()
    key, field, _box = editor.rows[0]
    key.value = "count"
    field.input.value = "3"
    assert form.value == {"count": 3}
    key.value = "fixed"
    assert issues(form) == {"/fixed": ["input"]}
    form.value = {"fixed": "a", "x": 1, "y": 2.5}
    assert issues(form) == {"/y": ["type"]}
    assert editor.rows[1][1].messages


def test_additional_properties_false_adds_nothing():
    form = Form(obj({"a": {"type": "string"}}, additionalProperties=False))
    assert form.root.map is None
    with pytest.raises(ValueError, match="/zzz"):
        form.value = {"zzz": 1}
    assert form.value == {}


def test_default_prefills_and_examples_are_placeholders():
    schema = obj(
        {"n": {"type": "integer", "default": 3}, "s": {"type": "string", "examples": ["Ada"]}}
    )
    form = Form(schema)
    assert form.value == {"n": 3}
    assert form.field("/s").input.placeholder == "e.g. Ada"
    form2 = Form(schema, value={"s": "x"})
    assert form2.value == {"s": "x"}  # a given value replaces the defaults


def test_title_is_the_label_and_description_the_help():
    schema = obj({"r": {"type": "string", "title": "Reason", "description": "Why <b>not</b>?"}})
    form = Form(schema)
    r = form.field("/r")
    assert r.input.description == "Reason"
    assert r.input.tooltip == "Why <b>not</b>?"
    assert "Why &lt;b&gt;not&lt;/b&gt;?" in r.note.value  # data, not markup (S-1)


def test_read_only_is_disabled_and_stays_disabled():
    form = Form(obj({"id": {"type": "string", "readOnly": True, "default": "x1"}}))
    assert form.field("/id").input.disabled
    form.disabled = True
    form.disabled = False
    assert form.field("/id").input.disabled
    assert form.value == {"id": "x1"}


def test_outside_the_supported_set_degrades_to_a_json_field():
    schema = obj(
        {
            "anchored": {"$ref": "#item"},  # a plain-name fragment: not followed
            "never": False,
        },
        **{"$defs": {"item": {"$anchor": "item", "type": "object"}}},
    )
    form = Form(schema)
    anchored = form.field("/anchored")
    assert anchored.kind == "json" and "$ref" in anchored.note.value
    anchored.input.value = '{"x1": 2}'
    assert form.value == {"anchored": {"x1": 2}}
    anchored.input.value = '{"x1": 2, "x1": 3}'
    assert issues(form) == {"/anchored": ["input"]}


# --- hints -------------------------------------------------------------------------------


def test_hints_from_ui_dict_and_x_ui_keys():
    schema = obj(
        {
            "a": {"type": "string"},
            "b": {"type": "string", "x-ui-placeholder": "type b", "x-ui-help": "about b"},
            "c": {"type": "string", "x-ui-hidden": True, "default": "secret"},
            "d": {"type": "string"},
            "e": {"type": "string", "x-ui-emptyValue": ""},
            "f": {"type": "string", "default": "kept"},
            "g": {"type": "string"},
        }
    )
    ui = {
        "ui:order": ["d", "*", "a"],
        "d": {"ui:readonly": True},
        "f": {"ui:widget": "hidden"},
        "g": {"ui:disabled": True},
    }
    form = Form(schema, ui=ui)
    assert list(form.root.fields) == ["d", "b", "c", "e", "f", "g", "a"]
    assert form.field("/b").input.placeholder == "type b"
    assert "about b" in form.field("/b").note.value
    assert form.field("/c").input.layout.display == "none"
    assert form.value == {"c": "secret", "e": "", "f": "kept"}  # emptyValue: empty means ""
    assert form.field("/d").input.disabled and form.field("/g").input.disabled
    assert form.field("/f").input.layout.display == "none"


def test_emptied_text_is_left_out():
    form = Form(obj({"s": {"type": "string"}}), value={"s": ""})
    assert form.value == {"s": ""}  # an explicit empty string round-trips
    s = form.field("/s")
    s.input.value = "x"
    s.input.value = ""
    assert form.value == {}


def test_the_callers_schema_and_ui_are_never_mutated():
    schema = {
        "allOf": [obj({"a": {"$ref": "#/$defs/s"}}, ["a"])],
        "$defs": {"s": {"type": "string", "default": "q"}},
    }
    ui = {"a": {"ui:widget": "textarea"}}
    before, ui_before = copy.deepcopy(schema), copy.deepcopy(ui)
    form = Form(schema, ui=ui)
    form.value = {"a": "z"}
    form.submit()
    assert schema == before and ui == ui_before


def test_read_only_section_and_array_disable_their_members():
    schema = obj(
        {
            "sec": obj({"a": {"type": "string"}}, ["a"], readOnly=True),
            "arr": {"type": "array", "items": {"type": "string"}, "readOnly": True},
        },
        ["sec"],
    )
    form = Form(schema, value={"sec": {"a": "x"}, "arr": ["y"]})
    assert form.field("/sec/a").input.disabled
    arr = form.root.fields["arr"]
    assert arr.add.disabled and arr.rows[0].remove.disabled
    assert arr.rows[0].field.input.disabled
    assert form.value == {"sec": {"a": "x"}, "arr": ["y"]}


def test_defaults_of_checkbox_and_slider_are_sent_but_do_not_open_a_section():
    inner = obj(
        {
            "flag": {"type": "boolean", "default": True},
            "level": {
                "type": "integer",
                "minimum": 0,
                "maximum": 9,
                "default": 4,
                "x-ui-widget": "range",
            },
        }
    )
    form = Form(obj({"top": inner["properties"]["flag"], "opt": inner}))
    assert form.value == {"top": True}
    form.field("/opt/flag")  # opening the section
    assert form.value == {"top": True}  # defaults alone do not send it
    form.field("/opt/level").input.value = 5
    assert form.value == {"top": True, "opt": {"flag": True, "level": 5}}


def test_nullable_enum_and_const_without_null_get_a_null_checkbox():
    schema = obj(
        {
            "e": {"anyOf": [{"enum": [False, 1]}, {"type": "null"}]},
            "c": {"anyOf": [{"const": "x"}, {"type": "null"}]},
        }
    )
    form = Form(schema)
    for value in ({"e": None, "c": None}, {"e": False, "c": "x"}, {}):
        form.value = value
        assert form.value == value and form.is_valid


def test_removed_entries_stop_reacting():
    item = obj({"a": {"type": "string"}, "b": {"type": "string"}}, dependentRequired={"a": ["b"]})
    form = Form(obj({"l": {"type": "array", "items": item}}))
    form.value = {"l": [{"a": "x", "b": "y"}, {"b": "z"}]}
    assert len(form.ctx.reactors) == 2
    form.root.fields["l"].rows[0].remove.click()
    form.value = {"l": []}
    assert form.ctx.reactors == [] and form.value == {"l": []}


def test_checkboxes_hint_draws_an_enum_array_as_one_multi_select():
    colors = {
        "type": "array",
        "uniqueItems": True,
        "items": {"enum": ["red", "green", "blue"]},
        "x-ui-widget": "checkboxes",
    }
    form = Form(obj({"c": colors, "n": {**colors, "items": {"type": "string"}}}))
    c = form.field("/c")
    assert isinstance(c.input, W.SelectMultiple)
    assert form.root.fields["n"].kind == "array"  # not enum items: the usual list
    assert form.value == {}
    c.input.value = (2, 0)
    assert form.value == {"c": ["red", "blue"]}  # in the enum's order
    form.value = {"c": ["blue", "red", "blue"]}  # given order kept; duplicate flagged
    assert form.value == {"c": ["blue", "red", "blue"]}
    assert issues(form) == {"/c/2": ["uniqueItems"]}
    with pytest.raises(ValueError, match="not one of"):
        form.value = {"c": ["pink"]}
