"""The neutral A2A model: states, parts, card helpers, codec choice."""

from __future__ import annotations

import json

import pytest

from hitl_nb.a2a import CODEC_V03, CODEC_V1, codec_for
from hitl_nb.a2a._model import (
    AgentCard,
    AgentExtension,
    AgentInterface,
    Message,
    Part,
    Role,
    TaskState,
)
from hitl_nb.errors import ProtocolViolation, WireDecodeError


@pytest.mark.parametrize(
    ("state", "terminal", "interrupted"),
    [
        (TaskState.SUBMITTED, False, False),
        (TaskState.WORKING, False, False),
        (TaskState.INPUT_REQUIRED, False, True),
        (TaskState.AUTH_REQUIRED, False, True),
        (TaskState.COMPLETED, True, False),
        (TaskState.FAILED, True, False),
        (TaskState.CANCELED, True, False),
        (TaskState.REJECTED, True, False),
        (TaskState.UNKNOWN, False, False),
    ],
)
def test_state_flags(state: TaskState, terminal: bool, interrupted: bool) -> None:
    assert state.is_terminal is terminal
    assert state.is_interrupted is interrupted


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({}, id="none"),
        pytest.param({"text": "a", "url": "http://x"}, id="text+url"),
        pytest.param({"data": {"a": 1}, "raw": b"x"}, id="data+raw"),
    ],
)
def test_part_needs_exactly_one_content(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Part(**kwargs)  # type: ignore[arg-type]


def test_part_kinds_and_null_data() -> None:
    assert Part(text="").kind == "text"
    assert Part(data={"a": 1}).kind == "data"
    assert Part(data=None, has_data=True).kind == "data"
    assert Part(raw=b"").kind == "raw"
    assert Part(url="file:///x").kind == "url"


def test_message_text_joins_text_parts() -> None:
    msg = Message("m", Role.AGENT, [Part(text="a"), Part(data={}), Part(text="b")])
    assert msg.text() == "a\nb"


def test_card_lookups() -> None:
    card = AgentCard(
        name="n",
        description="d",
        version="1",
        supported_interfaces=[AgentInterface("http://h/rpc", "JSONRPC")],
    )
    card.capabilities.extensions.append(AgentExtension("urn:x", required=False))
    assert card.extension("urn:x") is not None
    assert card.extension("urn:y") is None
    assert card.interface("jsonrpc") is not None
    assert card.interface("HTTP+JSON") is None


def test_codec_for() -> None:
    assert codec_for("1.0") is CODEC_V1
    assert codec_for("0.3") is CODEC_V03
    assert codec_for("0.3.0") is CODEC_V03
    with pytest.raises(ValueError, match="unsupported A2A version '2.0'"):
        codec_for("2.0")


def test_decode_error_is_a_protocol_violation_naming_the_member() -> None:
    err = WireDecodeError("/message/parts/0", "bad")
    assert isinstance(err, ProtocolViolation)
    assert str(err) == "/message/parts/0: bad"
    assert err.pointer == "/message/parts/0"


@pytest.mark.parametrize("member", [TaskState.INPUT_REQUIRED, Role.AGENT])
def test_an_enum_reads_the_same_on_every_python(member: TaskState | Role) -> None:
    # Before 3.11 an f-string of a str enum gave its value, so the words and reprs a
    # person sees (TaskEvent(...), "the task is ...") differed by interpreter.
    name = f"{type(member).__name__}.{member.name}"
    assert (str(member), f"{member}", f"{member:>30}", format(member)) == (
        name,
        name,
        name.rjust(30),
        name,
    )
    assert member == member.value and json.dumps(member) == f'"{member.value}"'  # the wire
