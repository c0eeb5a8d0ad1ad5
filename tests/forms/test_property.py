"""Forms, data fidelity as properties: what goes in comes out, and building never fails.

Schemas come from our own strategy (the supported subset; a wider one for "never
raises"), instances from hypothesis-jsonschema (which speaks draft-07, so the
round-trip subset avoids 2020-12-only keywords).
"""

from __future__ import annotations

import copy
import string

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from hitl_nb.forms import Form
from hitl_nb.validation import validate_payload

pytestmark = pytest.mark.property

# These tests check verdicts, not speed: a loaded CI machine must not turn a valid
# payload into a timeout issue, so validation gets a generous budget here.
SLACK = 30.0


@pytest.fixture(autouse=True, scope="module")
def _generous_budget():
    # The forms validate live with the default budget; here it must not depend on load
    # either (a timeout would change what the random clicks can do, and hypothesis
    # would see a different test on replay).
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("hitl_nb._keywords.TIME_BUDGET", SLACK)
        yield


NAMES = st.sampled_from(["a", "b", "name", "kind_2", "x y", "é"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([0.5, -1.25]),
    st.text(string.ascii_letters, max_size=4),
)


def _string() -> st.SearchStrategy[dict]:
    def build(lo: int | None, span: int | None, fmt: str | None) -> dict:
        s: dict = {"type": "string"}
        if fmt:
            return {**s, "format": fmt}
        if lo is not None:
            s["minLength"] = lo
        if span is not None:
            s["maxLength"] = (lo or 0) + span
        return s

    return st.builds(
        build,
        st.none() | st.integers(0, 3),
        st.none() | st.integers(0, 250),
        st.none() | st.sampled_from(["date", "date-time", "email", "uuid"]),
    )


def _number() -> st.SearchStrategy[dict]:
    def build(t: str, lo: int | None, span: int | None, excl: bool, mult: int | None) -> dict:
        s: dict = {"type": t}
        if lo is not None:
            s["exclusiveMinimum" if excl else "minimum"] = lo
        if lo is not None and span is not None:
            s["maximum"] = lo + span + 1
        if mult:
            s["multipleOf"] = mult
        return s

    return st.builds(
        build,
        st.sampled_from(["integer", "number"]),
        st.none() | st.integers(-10, 10),
        st.none() | st.integers(0, 100),
        st.booleans(),
        st.none() | st.integers(1, 3),
    )


def _leaf() -> st.SearchStrategy[dict]:
    return st.one_of(
        _string(),
        _number(),
        st.just({"type": "boolean"}),
        st.just({"type": "boolean", "default": False}),
        st.just({"type": "null"}),
        st.lists(SCALARS, min_size=1, max_size=4, unique_by=repr).map(lambda e: {"enum": e}),
        SCALARS.map(lambda c: {"const": c}),
    )


def _nullable(inner: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    def wrap(s: dict, style: bool) -> dict:
        if style and isinstance(s.get("type"), str) and s["type"] != "null":
            return {**s, "type": [s["type"], "null"]}
        return {"anyOf": [s, {"type": "null"}]}

    return st.builds(wrap, inner, st.booleans())


def _object(child: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    def build(props: dict, req: list[bool], extra: dict | None) -> dict:
        names = list(props)
        required = [n for n, r in zip(names, req, strict=False) if r]
        s = {
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": False if extra is None else extra,
        }
        if extra is not None:
            s["propertyNames"] = {"minLength": 1, "maxLength": 3, "pattern": "^[a-z]+$"}
        return s

    return st.builds(
        build,
        st.dictionaries(NAMES, child, max_size=4),
        st.lists(st.booleans(), min_size=4, max_size=4),
        st.none() | st.just({"type": "integer"}),
    )


def _array(child: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    def build(items: dict, lo: int, span: int | None, unique: bool) -> dict:
        s = {"type": "array", "items": items, "minItems": lo}
        if span is not None:
            s["maxItems"] = lo + span
        if unique:
            s["uniqueItems"] = True
        return s

    return st.builds(build, child, st.integers(0, 2), st.none() | st.integers(0, 3), st.booleans())


def _tagged(child: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    def build(options: list[dict]) -> dict:
        out = []
        for i, props in enumerate(options):
            props = {k: v for k, v in props.items() if k != "kind"}
            out.append(
                {
                    "type": "object",
                    "properties": {"kind": {"const": f"k{i}"}, **props},
                    "required": ["kind"],
                    "additionalProperties": False,
                }
            )
        return {"oneOf": out}

    return st.builds(
        build, st.lists(st.dictionaries(NAMES, child, max_size=2), min_size=2, max_size=3)
    )


def _mixed() -> st.SearchStrategy[dict]:
    return st.sampled_from(
        [
            {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            {"type": ["boolean", "number"]},
            {
                "anyOf": [
                    {"type": "array", "items": {"type": "integer"}},
                    {
                        "type": "object",
                        "properties": {"q": {"type": "string"}},
                        "additionalProperties": False,
                    },
                ]
            },
        ]
    )


def supported_schemas() -> st.SearchStrategy[dict]:
    """Root object schemas in the subset the forms draw as widgets."""
    base = st.one_of(_leaf(), _mixed())
    tree = st.recursive(
        base,
        lambda child: st.one_of(_object(child), _array(child), _tagged(child), _nullable(child)),
        max_leaves=8,
    )
    return _object(tree)


def wider_schemas() -> st.SearchStrategy[dict]:
    """The subset plus refs, allOf, conditionals, tuples and keywords drawn as JSON."""
    odd = st.sampled_from(
        [
            {"$ref": "#/$defs/s"},
            {"$ref": "#/$defs/node"},
            {"not": {"type": "string"}},
            {"type": "object", "patternProperties": {"^x": {"type": "integer"}}},
            {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
            {"allOf": [{"type": "integer"}, {"minimum": 2}]},
            {"allOf": [{"type": "integer"}, {"type": "string"}]},
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "if": {"properties": {"a": {"const": 1}}},
                "then": {"required": ["b"]},
                "dependentRequired": {"a": ["b"]},
            },
            {"contains": {"type": "integer"}},
            {},
            {"type": "string", "contentSchema": {}},
            {"oneOf": [{"type": "null"}]},
            {"anyOf": [{"$ref": "#/$defs/s"}, {"type": "null"}]},
        ]
    )
    tree = st.recursive(
        st.one_of(_leaf(), _mixed(), odd),
        lambda child: st.one_of(_object(child), _array(child), _tagged(child), _nullable(child)),
        max_leaves=10,
    )

    def with_defs(s: dict) -> dict:
        return {
            **s,
            "$defs": {
                "s": {"type": "string", "default": "d"},
                "node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}},
            },
        }

    return _object(tree).map(with_defs)


PROPERTY = settings(
    max_examples=100, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


@pytest.mark.slow
@PROPERTY
@given(st.data())
def test_setting_a_valid_instance_reads_back_the_same_and_validates(data):
    schema = data.draw(supported_schemas(), label="schema")
    instance = data.draw(from_schema(schema), label="instance")
    assume(validate_payload(schema, instance, budget=SLACK) == [])
    before = copy.deepcopy(schema)
    form = Form(schema)
    form.value = instance
    assert form.value == instance
    assert form.is_valid, form.errors
    assert schema == before


@pytest.mark.slow
@settings(
    max_examples=500, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
@given(wider_schemas())
def test_building_a_form_never_raises(schema):
    form = Form(schema)
    assert form.value is not None
    form.to_text()


def _act(form: Form, rnd) -> None:
    """One thing a person might do, on a random built field."""
    import datetime as dt

    import ipywidgets as W

    from hitl_nb.forms._arrays import ArrayField
    from hitl_nb.forms._objects import ObjectField
    from hitl_nb.forms._variants import NullableField, VariantField

    f = rnd.choice(list(form.root.walk()))
    if isinstance(f, ObjectField):
        if f.toggle is not None and rnd.random() < 0.5:
            f.toggle.click()
        elif f.map is not None and f.map.add is not None:
            f.map.add.click()
            f.map.rows[-1][0].value = rnd.choice(["", "a", "zz"])
    elif isinstance(f, ArrayField):
        if f.add is not None and not f.add.disabled and rnd.random() < 0.5:
            f.add.click()
        elif f.rows and f.rows[-1].remove is not None:
            row = rnd.choice([r for r in f.rows if r.remove is not None])
            (row.remove if rnd.random() < 0.5 else row.up).click()
    elif isinstance(f, VariantField):
        f.selector.value = rnd.randrange(len(f.selector.options))
    elif isinstance(f, NullableField):
        f.check.value = not f.check.value
    elif hasattr(f, "input") and not getattr(f.input, "disabled", True):
        inp = f.input
        if isinstance(inp, (W.Text, W.Textarea)):
            inp.value = rnd.choice(["", "abc", "12", "-3.5", "x@y.z", '{"a": 1}', "[1]", "null"])
        elif isinstance(inp, W.Checkbox):
            inp.value = not inp.value
        elif isinstance(inp, (W.Dropdown, W.RadioButtons)):
            inp.value = rnd.choice([v for _, v in inp.options])
        elif isinstance(inp, W.DatetimePicker):
            inp.value = dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
        elif isinstance(inp, W.DatePicker):
            inp.value = rnd.choice([None, dt.date(2020, 1, 2)])


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(wider_schemas(), st.randoms(use_true_random=False))
def test_random_clicks_and_typing_never_break_a_form_and_valid_means_valid(schema, rnd):
    form = Form(schema)
    for _ in range(20):
        _act(form, rnd)
        payload = form.value
        form.to_text()
        if form.is_valid:
            assert validate_payload(schema, payload, budget=SLACK) == []
    if form.is_valid:
        assert form.submit() == payload
