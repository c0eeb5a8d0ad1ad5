"""Both codec modules expose the same documented functions, built on one shared codec."""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest

from hitl_nb.a2a import _codec_v03, _codec_v1
from hitl_nb.a2a._model import Message, Part, Role, Task, TaskState, TaskStatus, WireDecodeError


def _functions(module: ModuleType) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(getattr(module, name))
        for name in module.__all__
        if callable(getattr(module, name))
    }


@pytest.mark.parametrize("codec", [_codec_v1, _codec_v03], ids=["v1", "v03"])
def test_every_listed_name_exists_and_is_documented(codec: ModuleType) -> None:
    for name in codec.__all__:
        value = getattr(codec, name)
        if callable(value):
            assert inspect.getdoc(value), f"{codec.__name__}.{name} has no docstring"


def test_both_versions_expose_the_same_functions_with_the_same_signatures() -> None:
    v1, v03 = _functions(_codec_v1), _functions(_codec_v03)
    assert v1 == v03
    assert str(v1["decode_message"]) == "(value: 'Any', pointer: 'str' = '') -> 'Message'"
    assert str(v1["encode_task"]) == "(task: 'Task') -> 'dict[str, Any]'"


def test_state_and_role_tables_are_inverse() -> None:
    for codec in (_codec_v1, _codec_v03):
        for state, word in codec.STATE_TO_WIRE.items():
            assert codec.STATE_FROM_WIRE[word] is state
            assert codec.state_from_wire(word) is state
            assert codec.state_to_wire(state) == word
    assert _codec_v1.ROLE_FROM_WIRE == {v: k for k, v in _codec_v1.ROLE_TO_WIRE.items()}
    assert _codec_v03.ROLE_FROM_WIRE == {"user": Role.USER, "agent": Role.AGENT}


def test_the_versions_do_not_leak_into_each_other() -> None:
    msg = Message("m", Role.USER, [Part(text="hi")])
    task = Task("t", "c", TaskStatus(TaskState.INPUT_REQUIRED, msg))
    assert "kind" not in _codec_v1.encode_task(task)
    assert "kind" not in _codec_v1.encode_task(task)["status"]["message"]
    assert _codec_v03.encode_task(task)["status"]["message"]["kind"] == "message"
    # 1.0 ignores a kind it does not know; 0.3 checks it.
    wrong_kind = dict(_codec_v1.encode_message(msg), kind="task")
    assert _codec_v1.decode_message(wrong_kind) == msg
    with pytest.raises(WireDecodeError) as info:
        _codec_v03.decode_message(dict(_codec_v03.encode_message(msg), kind="task"))
    assert info.value.pointer == "/kind"


def test_v03_event_kind_that_is_not_a_string_is_a_decode_error() -> None:
    with pytest.raises(WireDecodeError, match="expected kind task, message") as info:
        _codec_v03.decode_stream_response({"kind": ["task"]}, "/result")
    assert info.value.pointer == "/result/kind"
