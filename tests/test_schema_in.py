"""hitl_nb._schema_in and the client's one place that applies it: numbers and key order
of a response_schema that went through a protobuf Struct (SDK-built agents)."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hitl_nb._schema_in import integral_numbers, stable_property_order
from hitl_nb.client import HitlClient, PromptEvent
from hitl_nb.client._inbound import order_is_trusted
from hitl_nb.validation import validate_payload
from tests.helpers.sdk_agent import SdkAgent


def test_integral_floats_become_ints_where_json_schema_means_an_integer() -> None:
    schema = {
        "type": "object",
        "minProperties": 1.0,
        "properties": {
            "comment": {"type": "string", "maxLength": 1024.0, "minLength": 0.0},
            "tags": {"type": "array", "minItems": 2.0, "items": {"type": "string"}},
            "copies": {
                "type": "integer",
                "minimum": 1.0,
                "maximum": 3.0,
                "default": 2.0,
                "enum": [1.0, 2.0, 3.0],
                "multipleOf": 1.0,
            },
            "maybe": {"type": ["integer", "null"], "const": 4.0},
            "ratio": {"type": "number", "minimum": 0.0, "maximum": 1.0, "default": 1.0},
            "odd": {"type": "integer", "maximum": 2.5},
        },
        "$defs": {"n": {"type": "integer", "examples": [7.0]}},
    }
    out = integral_numbers(copy.deepcopy(schema))
    props = out["properties"]
    assert json.dumps(out).count(".0") == 3  # only the number field's three floats stay
    assert type(props["comment"]["maxLength"]) is int and type(out["minProperties"]) is int
    assert type(props["tags"]["minItems"]) is int
    assert [type(v) for v in props["copies"]["enum"]] == [int, int, int]
    assert type(props["copies"]["default"]) is int and type(props["maybe"]["const"]) is int
    assert type(props["ratio"]["maximum"]) is float  # a number field keeps its floats
    assert props["odd"]["maximum"] == 2.5  # not integral: left alone
    assert type(out["$defs"]["n"]["examples"][0]) is int


def test_validation_messages_say_integers() -> None:
    schema = integral_numbers(
        {"type": "object", "properties": {"comment": {"type": "string", "maxLength": 3.0}}}
    )
    (issue,) = validate_payload(schema, {"comment": "long"})
    assert "3.0" not in issue.message and "3" in issue.message


def test_stable_order_required_first_then_alphabetical() -> None:
    schema = {
        "type": "object",
        "required": ["zeta", "approve"],
        "properties": {
            "comment": {},
            "approve": {},
            "beta": {"type": "object", "properties": {"y": {}, "x": {}}},
            "zeta": {},
        },
    }
    out = stable_property_order(schema)
    assert list(out["properties"]) == ["zeta", "approve", "beta", "comment"]
    assert list(out["properties"]["beta"]["properties"]) == ["x", "y"]


names = st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=1, max_size=8, unique=True)


@pytest.mark.property
@settings(max_examples=100, deadline=None)
@given(names=names, data=st.data())
def test_stable_order_does_not_depend_on_the_order_received(names: list[str], data: Any) -> None:
    required = data.draw(st.lists(st.sampled_from(names), unique=True))
    shuffled = data.draw(st.permutations(names))
    one = {"type": "object", "required": required, "properties": {n: {} for n in names}}
    two = {"type": "object", "required": required, "properties": {n: {} for n in shuffled}}
    assert list(stable_property_order(one)["properties"]) == list(
        stable_property_order(two)["properties"]
    )


@pytest.mark.property
@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.floats(allow_nan=False, allow_infinity=False) | st.integers() | st.text(max_size=3),
        lambda kids: (
            st.lists(kids, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    ["type", "maxLength", "minimum", "items", "properties", "enum", "x"]
                ),
                kids,
                max_size=4,
            )
        ),
        max_leaves=20,
    )
)
def test_any_json_is_taken_without_error_and_stays_equal(value: Any) -> None:
    before = copy.deepcopy(value)
    after = integral_numbers(stable_property_order(value))
    assert json.loads(json.dumps(after)) == json.loads(json.dumps(before))  # 2.0 == 2


# -- end to end, against an agent built on a2a-sdk (metadata through a Struct) -----------


@pytest.fixture(scope="module")
def agent() -> Iterator[SdkAgent]:
    with SdkAgent() as running:
        yield running


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_an_sdk_agents_schema_arrives_with_ints_in_a_stable_order(
    agent: SdkAgent, binding: str
) -> None:
    async def go() -> PromptEvent:
        async with HitlClient(agent.url, binding=binding) as client:
            events = [e async for e in client.stream("release")]
            assert client.card is not None and not order_is_trusted(client.card, "auto")
            prompt = events[-1]
            assert isinstance(prompt, PromptEvent)
            again = await client.get_task(prompt.task_id)  # the same on every way in
            schema = again.status.message.metadata  # type: ignore[union-attr]
            assert list(next(iter(schema.values()))["response_schema"]["properties"]) == [
                "approved",
                "comment",
                "copies",
            ]
            return prompt

    prompt = asyncio.run(asyncio.wait_for(go(), 30))
    props = prompt.response_schema["properties"]
    assert list(props) == ["approved", "comment", "copies"]  # required first, then a-z
    assert type(props["comment"]["maxLength"]) is int  # before: 1024.0
    assert [type(props["copies"][k]) for k in ("minimum", "maximum", "default")] == [int] * 3
    (issue,) = prompt.envelope.validate({"approved": True, "comment": "x" * 1025})
    assert "1024.0" not in issue.message


def test_property_order_choices() -> None:
    with pytest.raises(ValueError, match="property_order"):
        HitlClient("http://127.0.0.1:1", property_order="random")
