"""Forms: errors (live, agent's 422, summary, submit gating), the Form API, display,
plain text, CSS classes, widget model budget and hostile schemas."""

from __future__ import annotations

import asyncio
import copy
import json
import threading

import pytest
from ipywidgets.widgets.widget import _instances

from hitl_nb._pointer import join
from hitl_nb.errors import ResponseInvalid, SchemaRejected, WaitTimedOut
from hitl_nb.forms import Form, FormClosed, FormInvalid, FormValueError, css_class
from hitl_nb.validation import ValidationIssue

SCHEMA = {
    "type": "object",
    "title": "Deploy",
    "properties": {
        "approved": {"type": "boolean", "title": "Approved"},
        "reason": {"type": "string", "minLength": 3},
        "replicas": {"type": "integer", "minimum": 1},
    },
    "required": ["approved"],
    "additionalProperties": False,
}


def test_messages_wait_until_touched_or_submit_and_the_summary_until_submit():
    form = Form(SCHEMA)
    assert [(e.path, e.keyword) for e in form.errors] == [("/approved", "required")]
    assert form.field("/approved").messages == []  # a pristine form shows no error
    assert form.summary_text() == "" and form.summary.layout.display == "none"
    assert not form.submit_button.disabled  # clicking it is how a person finds what is missing
    with pytest.raises(FormInvalid, match="Approved"):
        form.submit()
    assert form.field("/approved").messages == ["Choose Yes or No"]  # one message, not two
    assert form.summary_text() == "1 problem to fix before submitting\nApproved: Choose Yes or No"
    assert "hitl-summary" in form.summary._dom_classes
    assert not form.submitted.done()


def test_live_messages_follow_edits():
    form = Form(SCHEMA)
    reason = form.field("/reason")
    reason.input.value = "no"
    assert reason.messages == ["Use at least 3 characters"]
    reason.input.value = "because"
    assert reason.messages == []


def test_agent_validation_errors_are_shown_on_the_same_fields():
    form = Form(SCHEMA, value={"approved": True, "reason": "fine"})
    done = []
    form.on_submit(done.append)
    assert form.submit() == {"approved": True, "reason": "fine"}
    assert form.disabled and done == [{"approved": True, "reason": "fine"}]
    first = form.submitted
    error = ResponseInvalid(
        validation_errors=[
            {"path": "/reason", "keyword": "pattern", "message": "must name a ticket"},
            {
                "path": "/extra_unknown_field",
                "keyword": "additionalProperties",
                "message": "additional property 'extra_unknown_field' is not permitted",
            },
        ]
    )
    form.set_errors(error)
    assert not form.disabled and form.submitted is not first and first.done()
    assert form.field("/reason").messages == ["Must name a ticket"]  # the agent's words
    assert "extra_unknown_field" in form.root.label.value  # no field: shown on the form
    assert "Reason: Must name a ticket" in form.summary_text()  # the agent's words, as written
    form.field("/reason").input.value = "fine, see T-1"
    assert form.field("/reason").messages == []  # a change clears the agent's verdict
    assert form.submit() == {"approved": True, "reason": "fine, see T-1"}
    assert form.submitted.result() == {"approved": True, "reason": "fine, see T-1"}
    assert len(done) == 2


def test_set_errors_accepts_issues_and_dicts():
    form = Form(SCHEMA)
    form.set_errors(
        [
            ValidationIssue("/replicas", "minimum", "too few"),
            {"path": "/approved", "keyword": "type", "message": "boolean!"},
        ]
    )
    assert form.field("/replicas").messages == ["Too few"]  # the agent's words, as a sentence
    # the form's own finding on a field stands for the agent's: one message, not two
    assert form.field("/approved").messages == ["Choose Yes or No"]
    assert [e.message for e in form.errors] == [
        "required property 'approved' is missing",
        "too few",
    ]


def test_submit_button_click_submits_and_closes():
    form = Form(SCHEMA)
    form.field("/approved").input.value = 0  # "Yes"
    assert not form.submit_button.disabled
    form.submit_button.click()
    assert form.submitted.result() == {"approved": True}
    assert form.submit_button.disabled and form.field("/reason").input.disabled
    with pytest.raises(FormClosed):
        form.submit()
    form.submit_button.click()  # a second click does nothing
    assert "submitted" in form.to_text()


def test_disabled_form_cannot_submit():
    form = Form(SCHEMA, value={"approved": False})
    form.disabled = True
    assert form.field("/approved").input.disabled
    with pytest.raises(FormClosed):
        form.submit()
    form.disabled = False
    assert form.submit() == {"approved": False}


def test_a_failing_callback_is_reported_and_raised():
    form = Form(SCHEMA, value={"approved": True})

    def boom(_payload):
        raise RuntimeError("agent down")

    form.on_submit(boom)
    with pytest.raises(RuntimeError):
        form.submit()
    assert "agent down" in form.status.value
    form.on_submit(boom, remove=True)


def test_wait_async_resolves_with_the_payload_and_times_out():
    async def scenario():
        form = Form(SCHEMA, value={"approved": True})
        with pytest.raises(WaitTimedOut):
            await form.wait_async(timeout=0.01)
        asyncio.get_running_loop().call_soon(form.submit)
        return await form.wait_async(timeout=5)

    assert asyncio.run(scenario()) == {"approved": True}


def test_wait_blocks_until_submitted_and_times_out_the_same_way():
    form = Form(SCHEMA, value={"approved": True})
    with pytest.raises(TimeoutError):  # WaitTimedOut is one
        form.wait(timeout=0.01)
    threading.Timer(0.05, form.submit).start()  # another thread clicks
    assert form.wait(timeout=5) == {"approved": True}
    assert form.wait(timeout=0) == {"approved": True}  # what is there, at once


def test_bad_values_are_refused_and_leave_the_form_as_it_was():
    form = Form(SCHEMA, value={"approved": True, "replicas": 2})
    for bad, where in [
        ({"approved": "yes"}, "/approved"),
        ({"replicas": "2"}, "/replicas"),
        ({"nope": 1}, "/nope"),
        ([1], "/"),
    ]:
        with pytest.raises(ValueError, match=where):
            form.value = bad
        assert form.value == {"approved": True, "replicas": 2}


def test_display_bundle_has_the_widget_and_plain_text():
    form = Form(SCHEMA, value={"approved": True, "reason": "<script>x</script>"})
    bundle = form._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    text = bundle["text/plain"]
    assert text.splitlines()[0] == "Form: Deploy"
    assert 'Reason: "<script>x</script>"' in text
    assert text.endswith("state: ready to submit")
    assert repr(form) == "<Form 'Deploy': 3 fields (1 required), valid>"


def test_plain_text_lists_problems():
    form = Form(SCHEMA, value={"approved": True, "replicas": 0})
    assert "Replicas: 0  ! Must be 1 or more" in str(form)
    assert "1 problem to fix" in str(form)


def test_plain_text_of_a_pristine_form_reports_no_problem():
    # As in the browser: before the person has done anything, nothing is wrong; the
    # text says what is left to do. A Submit attempt shows the problem, in both.
    form = Form(SCHEMA)
    assert form.field("/approved").messages == []
    assert form.to_text().splitlines()[-1] == (
        "state: waiting for an answer (1 required field to fill in)"
    )
    assert "problem" not in form.to_text() and "!" not in form.to_text()
    with pytest.raises(FormInvalid):
        form.submit()
    text = form.to_text()
    assert "  Approved *: (empty)  ! Choose Yes or No\n" in text
    assert text.endswith("\nstate: 1 problem to fix")


def test_plain_text_counts_what_is_left_once_some_fields_are_filled():
    schema = {
        "type": "object",
        "required": ["a", "b", "c"],
        "properties": {k: {"type": "string", "minLength": 2} for k in "abc"},
    }
    form = Form(schema)
    assert form.to_text().endswith("(3 required fields to fill in)")
    form.field("/a").value = "ok"
    assert form.to_text().endswith("state: waiting for an answer (2 required fields to fill in)")
    form.field("/b").value = "x"  # a message now shows on B: the text says so too
    assert form.to_text().endswith(
        'B *: "x"  ! Use at least 2 characters\n  C *: (empty)\nstate: 2 problems to fix'
    )


def test_state_text_and_problems_say_what_the_browser_shows():
    # A card's text summary reads these: one line of state, then the messages the
    # fields show, by the labels a person reads (nothing before anything was done).
    form = Form(SCHEMA)
    assert form.state_text() == "waiting for an answer (1 required field to fill in)"
    assert form.problems() == []
    form.value = {"approved": True, "reason": "no"}
    assert form.state_text() == "1 problem to fix"
    assert form.problems() == ["Reason: Use at least 3 characters"]
    form.set_errors(
        [
            {
                "path": "/extra",
                "keyword": "additionalProperties",
                "message": "additional property 'extra' is not permitted",
            }
        ]
    )
    assert form.problems()[-1] == "Reason: Use at least 3 characters"
    assert "Extra: additional property 'extra' is not permitted" in form.problems()
    assert form.where("/build_id") == "Build id"  # a member without a field: readable too
    form.value = {"approved": True}
    form.submit()
    assert form.state_text() == 'submitted {"approved": true}' and form.problems() == []


def test_widgets_carry_stable_css_classes():
    schema = {
        "type": "object",
        "properties": {
            "zip_code": {"type": "string"},
            "a/b": {"type": "object", "properties": {"c": {"type": "integer"}}, "required": ["c"]},
        },
        "required": ["a/b"],
    }
    form = Form(schema)
    assert css_class("/zip_code") == "hitl-field-zip_5fcode"
    assert css_class("/a~1b/c") == "hitl-field-a_2fb__c"
    assert css_class("") == "hitl-field-root"
    zip_input = form.field("/zip_code").input
    assert {"hitl-field", "hitl-input", "hitl-field-zip_5fcode"} <= set(zip_input._dom_classes)
    assert "hitl-field-a_2fb__c" in form.field("/a~1b/c").input._dom_classes
    assert "hitl-submit" in form.submit_button._dom_classes
    assert "hitl-errors" in form.summary._dom_classes
    assert "hitl-form" in form.widget._dom_classes


def test_at_most_four_widget_models_per_leaf_field():
    props = {
        f"f{i}": {"type": t} for i, t in enumerate(["string", "integer", "number", "boolean"] * 25)
    }
    schema = {"type": "object", "properties": props, "required": list(props)[:50]}
    Form({"type": "object"})  # shared Layout and Style objects exist from here on
    before = len(_instances)
    form = Form(schema)
    form.value = {f"f{i}": "x" for i in range(0, 100, 4)}  # strings: valid values
    made = len(_instances) - before
    assert made <= 4 * 100 + 10, made
    assert made <= 2 * 100, made  # in fact: one input each, plus notes for messages


@pytest.mark.parametrize(
    ("schema", "match"),
    [
        pytest.param([1], "object", id="not-an-object"),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    f"p{i}": {"type": "string", "description": "x" * 200} for i in range(400)
                },
            },
            "65536-byte limit",
            id="over-64-KiB",
        ),
        pytest.param({"$ref": "https://evil.example/s.json"}, "remote", id="remote-ref"),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": 5}}}, "valid", id="invalid-schema"
        ),
    ],
)
def test_unusable_schemas_are_refused_with_a_clear_error(schema, match):
    with pytest.raises(SchemaRejected, match=match):
        Form(schema)


def test_hostile_text_stays_data():
    schema = {
        "type": "object",
        "title": "<img src=x onerror=alert(1)>",
        "description": "<script>alert(1)</script>",
        "properties": {"a": {"type": "string", "title": "<b>bold</b>" * 10}},
    }
    form = Form(schema)
    html = form.root.label.value + form.field("/a").note.value
    assert "<script>" not in html and "<img" not in html and "<b>bold" not in html
    assert "&lt;script&gt;" in html


def test_deep_and_self_referencing_schemas_build():
    deep: dict = {"type": "string"}
    for _ in range(30):
        deep = {"type": "object", "properties": {"x": deep}, "required": ["x"]}
    form = Form(deep)
    assert json.dumps(form.value).count("{") >= 30
    loop = {
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/a"}},
    }
    form = Form(loop)
    assert form.field("/x").kind == "json"


def test_a_one_option_variant_that_refers_back_is_json_not_a_recursion_error():
    # Form() raised RecursionError: the single option is classified as itself, forever.
    form = Form({"type": "object", "oneOf": [{"$ref": "#"}]})
    assert form.root.kind == "json" and "refers back to itself" in form.root.note.value
    a = {"anyOf": [{"$ref": "#/$defs/x"}, {"type": "null"}]}
    loop = {
        "type": "object",
        "properties": {"a": a},
        "$defs": {"x": {"oneOf": [{"$ref": "#/$defs/x"}]}},
    }
    assert Form(loop).field("/a").kind == "json"


@pytest.mark.slow
@pytest.mark.parametrize(
    "schema",
    [
        # Required sections are built at once: 2**32 fields, it never returned.
        {
            "type": "object",
            "required": ["a", "b"],
            "properties": {"a": {"$ref": "#"}, "b": {"$ref": "#"}},
        },
        # The same through arrays whose entries are all there from the start.
        {
            "type": "object",
            "required": ["t"],
            "properties": {"t": {"$ref": "#/$defs/t"}},
            "$defs": {"t": {"type": "array", "prefixItems": [{"$ref": "#/$defs/t"}] * 2}},
        },
        {
            "type": "object",
            "required": ["k"],
            "$defs": {
                "n": {
                    "type": "object",
                    "required": ["k"],
                    "properties": {
                        "k": {"type": "array", "minItems": 3, "items": {"$ref": "#/$defs/n"}}
                    },
                }
            },
            "properties": {"k": {"type": "array", "minItems": 3, "items": {"$ref": "#/$defs/n"}}},
        },
    ],
)
def test_self_referencing_required_parts_stop_at_a_field_count(schema):
    from hitl_nb.forms._base import MAX_FIELDS

    before = len(_instances)
    form = Form(schema)
    fields = list(form.root.walk())
    assert MAX_FIELDS <= len(fields) <= MAX_FIELDS * 2
    assert any(
        f.kind == "json" and f"already has {MAX_FIELDS} fields" in f.note.value for f in fields
    )
    assert len(_instances) - before < 10 * MAX_FIELDS
    assert isinstance(form.value, dict)


def test_every_test_named_in_the_coverage_table_exists():
    import re
    from pathlib import Path

    here = Path(__file__).resolve().parent
    doc = (here.parents[1] / "docs" / "forms.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(test_\w+)`", doc))
    defined = set()
    for path in here.glob("test_*.py"):  # tests/forms/, where the forms tests live
        defined |= set(re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.M))
    assert len(named) >= 35
    assert named <= defined, sorted(named - defined)


def test_a_field_that_fails_to_build_becomes_json_not_a_broken_form():
    from hitl_nb.forms import default_registry

    def broken(*_args):
        raise RuntimeError("widget factory bug")

    registry = default_registry().copy()
    registry.register("string", broken, format="color")
    schema = {
        "type": "object",
        "properties": {
            "c": {"type": "string", "format": "color"},
            "bad_if": {"type": "object", "if": {"type": "object"}, "then": {"$ref": "#/$defs/n"}},
        },
        "$defs": {"n": {"type": "object"}},
    }
    # A dangling reference never reaches the form: compiling the schema refuses it.
    dangling = copy.deepcopy(schema)
    dangling["properties"]["bad_if"]["then"]["$ref"] = "#/nowhere"
    with pytest.raises(SchemaRejected, match="'#/nowhere' points at nothing"):
        Form(dangling, registry=registry)
    form = Form(schema, registry=registry)
    c = form.field("/c")
    assert c.kind == "json" and "RuntimeError" in c.note.value
    c.input.value = '"#ff0000"'
    assert form.value == {"c": "#ff0000"}
    from hitl_nb.forms._hints import Hints
    from hitl_nb.forms._normalize import Node

    color = Node("string", {"type": "string", "format": "color"})
    assert registry.lookup(color, Hints()) is broken
    assert default_registry().lookup(color, Hints()) is not broken  # the copy only


def test_a_prefilled_form_is_quiet_until_touched_but_lists_problems():
    form = Form(SCHEMA, value={"reason": "because"})
    assert form.field("/approved").messages == []
    assert [e.path for e in form.errors] == ["/approved"]
    form.value = {"reason": "because"}  # set by code later: everything is shown
    assert form.field("/approved").messages


def test_odd_member_names_route_errors_to_their_own_fields():
    names = ["", "~", "/", "a b", "ü", "~1", "0"]
    schema = {
        "type": "object",
        "required": names,
        "properties": {n: {"type": "string", "minLength": 2} for n in names},
    }
    form = Form(schema, value={n: "x" for n in names})
    assert form.value == {n: "x" for n in names}
    for n in names:
        assert form.field(join("", n)).messages == ["Use at least 2 characters"], n
    assert len({css_class(join("", n)) for n in names}) == 7


def test_plain_text_of_a_compound_form():
    cat = {
        "type": "object",
        "title": "Cat",
        "required": ["kind"],
        "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer"}},
    }
    item = {
        "type": "object",
        "required": ["sku"],
        "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}},
    }
    schema = {
        "type": "object",
        "title": "Order",
        "required": ["who"],
        "properties": {
            "who": {"type": "string", "title": "Name"},
            "items": {"type": "array", "items": item},
            "pet": {"oneOf": [cat, {"type": "null"}]},
            "note": {"type": ["string", "null"]},
            "tags": {"type": "object", "additionalProperties": {"type": "integer"}},
            "later": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
    }
    value = {
        "who": "Ada",
        "items": [{"sku": "A1", "qty": 0}],
        "pet": {"kind": "cat"},
        "note": None,
        "tags": {"t": 1},
    }
    assert Form(schema, value=value).to_text() == "\n".join(
        [
            "Form: Order",
            '  Name *: "Ada"',
            "  Items: 1 entry",
            "    - #1 *:",
            '        Sku *: "A1"',
            "        Qty: 0  ! Must be 1 or more",
            "  Cat:",
            '    Kind *: "cat"',
            "    Lives: (empty)",
            "  Note: None",
            "  Tags:",
            "    t: 1",
            "  Later: (not added)",
            "state: 1 problem to fix",
        ]
    )


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        # Defaults of this size built 72,000 widgets in 15 s / took 63 s / 9.5 s.
        ({"type": "array", "items": {"type": "integer"}}, [0] * 15_000),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            {f"k{i}": 0 for i in range(6000)},
        ),
        (
            {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
            [[0] * 100] * 100,
        ),
    ],
)
def test_huge_defaults_and_values_are_one_json_field_not_rows(schema, value):
    # Rows for these built 72,000 widgets in 15 s / took 63 s; then they were refused,
    # which lost valid data (SchemaStore samples of 3,000 entries): now one JSON field.
    before = len(_instances)
    form = Form({"type": "object", "properties": {"a": {**schema, "default": value}}})
    assert form.value == {"a": value}  # the default, whole
    assert len(_instances) - before < 100
    form.value = {}
    form.value = {"a": value}
    assert form.value == {"a": value}  # (validating 15,000 entries may outrun 250 ms)
    assert form.field("/a").kind == "json"
    assert "more than the form draws as fields" in form.field("/a").help
    assert len(_instances) - before < 100
    small = value[:3] if isinstance(value, list) else dict(list(value.items())[:3])
    form.value = {"a": small}
    assert form.value == {"a": small}
    assert form.field("/a").kind != "json"  # rows again


def test_the_forms_own_parts_have_layouts_of_their_own():
    form = Form(SCHEMA)
    form.status.layout.display = "none"  # as a card hiding the form's status line does
    assert form.submit_button.layout.display is None
    assert form.field("/reason").input.layout is None  # sized by the stylesheet
    assert all(w.layout.display is None for w in form.root.widgets)  # shared layouts untouched
    layouts = {id(form.status.layout), id(form.summary.layout), id(form.submit_button.layout)}
    assert len(layouts) == 3


def test_field_values_are_typed_for_code():
    schema = {
        "type": "object",
        "required": ["approve"],
        "properties": {
            "approve": {"type": "boolean"},
            "level": {"enum": ["low", "high", 0]},
            "n": {"type": "integer"},
        },
    }
    form = Form(schema)
    form.field("/approve").value = True  # selects Yes (the widget holds an index)
    assert form.field("/approve").input.value == 0 and form.value == {"approve": True}
    form.field("/level").value = "high"
    form.field("/n").value = 3
    assert form.value == {"approve": True, "level": "high", "n": 3}
    form.field("/level").value = 0  # the value 0, not the first option
    assert form.value["level"] == 0
    with pytest.raises(FormValueError, match="not one of the choices"):
        form.field("/level").value = "medium"
    assert form.value["level"] == 0  # unchanged


def test_form_is_a_widget_in_layouts_and_observable():
    import ipywidgets as W

    form = Form(SCHEMA)
    box = W.VBox([W.HTML("before"), form])  # raised TraitError when Form was not a widget
    assert box.children[1] is form and form.widget is form
    seen = []
    form.observe(lambda change: seen.append(change["new"]), names="value")
    form.field("/approved").value = False
    form.value = {"approved": True, "replicas": 2}
    assert seen == [{"approved": False}, {"approved": True, "replicas": 2}]
    with pytest.raises(FormValueError):
        form.value = {"approved": "yes"}
    assert form.value == {"approved": True, "replicas": 2} and len(seen) == 2


def test_repr_says_what_the_form_holds():
    form = Form(SCHEMA)
    assert repr(form) == "<Form 'Deploy': 3 fields (1 required), 1 problem>"
    form.field("/approved").value = True
    assert repr(form) == "<Form 'Deploy': 3 fields (1 required), valid>"
    form.submit()
    assert repr(form) == "<Form 'Deploy': 3 fields (1 required), submitted>"


def test_the_garbage_collector_runs_again_after_a_build():
    """Forms pause the cyclic collector while they build (speed) and always resume it,
    also when the schema is refused; a collector the caller turned off stays off."""
    import gc

    assert gc.isenabled()
    Form({"type": "object", "properties": {"a": {"type": "string"}}})
    assert gc.isenabled()
    with pytest.raises(SchemaRejected):
        Form({"type": "object", "properties": {"a": {"type": 5}}})
    assert gc.isenabled()
    gc.disable()
    try:
        Form({"type": "object"})
        assert not gc.isenabled()
    finally:
        gc.enable()


def _as_protobuf_sends_it(value):
    """``value`` after a protobuf ``Struct``: every number a double (SDK-built agents)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {k: _as_protobuf_sends_it(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_protobuf_sends_it(v) for v in value]
    return value


def _drawn(widget):
    """What a person sees of ``widget`` and everything in it, in order."""
    keys = ("value", "placeholder", "description", "options", "min", "max", "step", "tooltip")
    here = [(type(widget).__name__, tuple(widget._dom_classes))]
    here += [(k, repr(getattr(widget, k))) for k in keys if hasattr(widget, k)]
    return [here] + [row for child in getattr(widget, "children", ()) for row in _drawn(child)]


DOUBLES_SCHEMA = {
    "type": "object",
    "required": ["copies"],
    "minProperties": 1,
    "properties": {
        "comment": {"type": "string", "maxLength": 1024, "minLength": 2},  # a Textarea
        "copies": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        "ratio": {"type": "number", "minimum": 0, "maximum": 10, "multipleOf": 2},
        "level": {"type": "integer", "enum": [1, 2, 3]},
        "tags": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "integer"}},
        "limits": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
}


def test_a_schema_sent_as_doubles_draws_the_same_form_as_with_integers():
    # maxLength 1024.0 from a protobuf agent is 1024: a Textarea, "1024 characters".
    ints, doubles = Form(DOUBLES_SCHEMA), Form(_as_protobuf_sends_it(DOUBLES_SCHEMA))
    assert type(doubles.schema["properties"]["comment"]["maxLength"]) is int
    assert "1024.0" in json.dumps(_as_protobuf_sends_it(DOUBLES_SCHEMA))
    assert type(doubles.field("/comment").input).__name__ == "Textarea"
    assert _drawn(doubles) == _drawn(ints)
    assert doubles.to_text() == ints.to_text()
    bad = {"comment": "x" * 1025, "copies": 11, "ratio": 11, "tags": []}
    for form in (ints, doubles):
        form.value = bad
    with pytest.raises(FormInvalid) as from_ints:
        ints.submit()
    with pytest.raises(FormInvalid) as from_doubles:
        doubles.submit()
    assert str(from_doubles.value) == str(from_ints.value)
    assert ".0" not in str(from_doubles.value) and "1024 characters" in str(from_ints.value)
    assert doubles.summary_text() == ints.summary_text()
    assert [e.message for e in doubles.errors] == [e.message for e in ints.errors]
    good = {"comment": "fine", "copies": 2, "level": 3, "tags": [1]}
    for form in (ints, doubles):
        form.value = good
    assert json.dumps(doubles.submit()) == json.dumps(ints.submit()) == json.dumps(good)


def test_a_submitted_form_adds_and_removes_nothing():
    # Every control that would change the answer is off once it was sent: the section
    # toggles ("Add owner", "Remove labels") as well as the entries' buttons.
    schema = {
        "type": "object",
        "properties": {
            "owner": {"type": "object", "properties": {"name": {"type": "string"}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    form = Form(schema, value={"labels": {"team": "web"}, "tags": ["a"]})
    form.submit()
    owner, labels, tags = (form.field(p) for p in ("/owner", "/labels", "/tags"))
    assert owner.collapsed  # opening it to look is not answering: it stayed closed
    assert owner.toggle.disabled and labels.toggle.disabled
    buttons = [w for w in _widgets(form) if type(w).__name__ == "Button"]
    assert buttons and all(b.disabled for b in buttons), [b.description for b in buttons]
    assert tags.add.disabled


def _widgets(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _widgets(child)


def test_touched_counts_what_was_put_in_not_the_defaults() -> None:
    schema = {
        "type": "object",
        "properties": {
            "approve": {"type": "boolean"},
            "level": {"type": "string", "enum": ["low", "high"], "default": "low"},
        },
    }
    form = Form(schema)
    assert not form.touched  # a default shown is not an answer given
    form.value = {"approve": False}
    assert form.touched
    assert Form(schema, value={"level": "high"}).touched  # pre-filled by the caller
