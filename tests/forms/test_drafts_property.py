"""Forms on draft-07 schemas, as properties: what goes in comes out, types included.

Schemas are drawn from the draft-07 vocabulary (tuple ``items`` with
``additionalItems``, ``dependencies`` in both forms, ``definitions`` with ``$ref``,
numeric exclusive bounds, typeless subschemas), instances from hypothesis-jsonschema,
which speaks draft-07.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from hitl_nb.forms import Form
from hitl_nb.validation import validate_payload

D7 = "http://json-schema.org/draft-07/schema#"
# verdicts, not speed: a loaded machine must not turn a valid payload into a timeout
SLACK = 30.0


@pytest.fixture(autouse=True, scope="module")
def _generous_budget():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("hitl_nb._keywords.TIME_BUDGET", SLACK)
        yield


def same(a: Any, b: Any) -> bool:
    """Equality that tells 1 from 1.0 and true from 1."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


NAMES = st.sampled_from(["a", "b", "kind", "x y", "é"])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.just(0.5), st.text("ab", max_size=2)
)


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(
            lambda lo, pat: {
                "type": "string",
                **({"minLength": lo} if lo else {}),
                **({"pattern": "^[a-c]*$"} if pat else {}),
            },
            st.integers(0, 2),
            st.booleans(),
        ),
        st.builds(
            lambda t, lo: {"type": t, "exclusiveMinimum": lo, "maximum": lo + 10},
            st.sampled_from(["integer", "number"]),
            st.integers(-5, 5),
        ),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
        st.just({"maximum": 3}),  # no type: other types are valid too
        st.just({"$ref": "#/definitions/word"}),
        st.lists(SCALARS, min_size=1, max_size=3, unique_by=repr).map(lambda e: {"enum": e}),
        SCALARS.map(lambda c: {"const": c}),
    )


def _object(child: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    def build(props: dict[str, Any], req: list[bool], closed: bool, deps: int) -> dict[str, Any]:
        names = list(props)
        schema: dict[str, Any] = {
            "type": "object",
            "properties": props,
            "required": [n for n, r in zip(names, req, strict=False) if r],
        }
        if closed:
            schema["additionalProperties"] = False
        if len(names) >= 2 and deps == 1:
            schema["dependencies"] = {names[0]: [names[1]]}
        elif names and deps == 2 and not closed:
            schema["dependencies"] = {names[0]: {"properties": {"dep": {"type": "integer"}}}}
        return schema

    return st.builds(
        build,
        st.dictionaries(NAMES, child, max_size=3),
        st.lists(st.booleans(), min_size=3, max_size=3),
        st.booleans(),
        st.integers(0, 2),
    )


def _array(child: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    def tuple_(items: list[dict[str, Any]], rest: Any) -> dict[str, Any]:
        return {"type": "array", "items": items, "additionalItems": rest}

    return st.one_of(
        st.builds(
            lambda items, hi: {"type": "array", "items": items, "maxItems": hi},
            child,
            st.integers(0, 3),
        ),
        st.builds(
            tuple_,
            st.lists(child, min_size=1, max_size=2),
            st.sampled_from([False, True, {"type": "integer"}]),
        ),
    )


def draft_07_schemas() -> st.SearchStrategy[dict[str, Any]]:
    """Root object schemas in draft-07, with a definition to refer to."""
    tree = st.recursive(
        _leaf(),
        lambda child: st.one_of(
            _object(child),
            _array(child),
            st.lists(child, min_size=2, max_size=2).map(lambda options: {"anyOf": options}),
        ),
        max_leaves=6,
    )
    return _object(tree).map(
        lambda s: {
            "$schema": D7,
            **s,
            "definitions": {"word": {"type": "string", "maxLength": 5}},
        }
    )


@pytest.mark.property
@pytest.mark.slow
@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_valid_draft_07_instance_reads_back_exactly_and_validates(data):
    schema = data.draw(draft_07_schemas(), label="schema")
    instance = data.draw(from_schema(schema), label="instance")
    assume(validate_payload(schema, instance, budget=SLACK) == [])
    form = Form(schema)
    form.value = instance
    assert same(form.value, instance), form.value
    assert form.is_valid, form.errors


def test_the_strategy_draws_the_draft_07_keywords():
    # the property above is only as good as the vocabulary it draws from
    seen: set[str] = set()

    @settings(max_examples=200, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(draft_07_schemas())
    def collect(schema: dict[str, Any]) -> None:
        text = repr(schema)
        for word in ("additionalItems", "dependencies", "$ref", "exclusiveMinimum", "anyOf"):
            if word in text:
                seen.add(word)

    collect()
    assert seen == {"additionalItems", "dependencies", "$ref", "exclusiveMinimum", "anyOf"}
